"""A customer-support agent with memory tailored to support, whose long conversations stay
within budget.

- Memory topics of its own (`CustomTopic`: orders and issues, contact preferences) plus the
  user's explicit instructions, and few-shot examples that show the memory model what to keep
  from a support chat, and that a general question leaves nothing to keep
  (`GenerateMemoriesExample`). Memories are generated in the background after every turn.
- The customer's contact preferences and standing instructions are shown on every turn; other
  memories when they are relevant to the message.
- Compaction: tool results over 1000 tokens leave the request for artifacts (the model reads one
  back with `load_artifacts` when it needs it), older events are summarized in the background
  once 40 pile up, and every request is trimmed to 32k tokens.

Run it with `adk-memory web samples` (or `adk web samples`); it needs a Gemini key
(`GOOGLE_API_KEY`) or Vertex AI settings, which ADK reads when the model is first called.
Without one, `adk-memory web samples --demo` runs it on the keyless demo model
(`adk_memory.adk.demo`).
"""

from __future__ import annotations

from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.models.base_llm import BaseLlm
from google.adk.tools import load_artifacts

from adk_memory.adk.demo import agent_model
from adk_memory.adk.stack import CompactionConfig, MemoryContextConfig, MemoryStack, configure
from adk_memory.config import (
    CustomizationConfig,
    CustomTopic,
    GenerateMemoriesExample,
    ManagedTopic,
    MemoryBankConfig,
)

NAME = "support_agent"
MODEL = "gemini-2.5-flash"

ORDERS = CustomTopic(
    label="orders_and_issues",
    description=(
        "Orders the customer asked about, problems they reported with a product or a delivery, "
        "and how each was resolved (refund, replacement, still open)."
    ),
)
CONTACT = CustomTopic(
    label="contact_preferences",
    description=(
        "How and when the customer wants to be contacted: channel, language, hours. Never the "
        "address, phone number or e-mail address itself."
    ),
)


def _said(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


MEMORY = MemoryBankConfig(
    customization_configs=(
        CustomizationConfig(
            memory_topics=(ORDERS, CONTACT, ManagedTopic.EXPLICIT_INSTRUCTIONS),
            generate_memories_examples=(
                GenerateMemoriesExample(
                    conversation=[
                        _said("user", "The blender from order A1001 came with a cracked jar."),
                        _said("model", "Sorry about that! I've sent a replacement jar."),
                        _said("user", "Thanks. E-mail me about it please, I never pick up calls."),
                    ],
                    generated_memories=[
                        "The blender from order A1001 arrived with a cracked jar; a replacement "
                        "jar was sent.",
                        "Wants to be contacted by e-mail, not by phone.",
                    ],
                ),
                GenerateMemoriesExample(
                    conversation=[
                        _said("user", "What are your opening hours on Sunday?"),
                        _said("model", "We're open from 10:00 to 16:00 on Sundays."),
                    ],
                    generated_memories=[],
                ),
            ),
        ),
    ),
)

INSTRUCTION = """You are the support agent of an online kitchenware shop.
Look orders up with lookup_order and policies with search_help_center before answering; never
guess an order's status. Follow the customer's contact preferences and standing instructions.
An archived tool result can be read back with load_artifacts."""

_PRODUCTS = ("blender", "kettle", "toaster", "coffee grinder", "stand mixer", "rice cooker")
_HUBS = ("Leipzig", "Kassel", "Frankfurt", "Cologne", "Dortmund")
_ARTICLES = {
    "returns": (
        "Items can be returned within 30 days of delivery in their original packaging. Start a "
        "return from the order page; the label is free. Refunds reach the original payment "
        "method within 5 working days of the parcel arriving at our warehouse."
    ),
    "warranty": (
        "Electrical appliances carry a 24-month warranty from the delivery date, accessories 12 "
        "months. A damaged or faulty item is replaced or repaired; send a photo of the fault and "
        "the order number. Wear parts (blades, seals, filters) are not covered after 6 months."
    ),
    "delivery": (
        "Orders ship with DHL within two working days and arrive in 1-3 days in Germany, 3-6 "
        "days elsewhere in the EU. The tracking link is in the shipping e-mail; a parcel not "
        "delivered after 10 days is reported lost and sent again at no cost."
    ),
}


def lookup_order(order_id: str) -> dict[str, Any]:
    """Returns an order: its status, every line item and the whole tracking history."""
    order_id = order_id.strip().upper()
    if not order_id:
        return {"error": "order_id is required, e.g. A1001."}
    items = [
        {
            "sku": f"SKU-{i:04d}",
            "name": f"{_PRODUCTS[i % len(_PRODUCTS)]} accessory pack {i}",
            "quantity": 1 + i % 3,
            "unit_price_eur": round(9.5 + 1.25 * i, 2),
            "warranty_months": 24,
        }
        for i in range(40)
    ]
    tracking = [
        {
            "time": f"2025-05-{1 + step // 3:02d}T{8 + 3 * (step % 3):02d}:00:00Z",
            "hub": _HUBS[step % len(_HUBS)],
            "event": "parcel scanned at the hub and forwarded",
        }
        for step in range(24)
    ]
    return {
        "order_id": order_id,
        "status": "in transit",
        "carrier": "DHL",
        "items": items,
        "tracking": tracking,
    }


def search_help_center(query: str) -> dict[str, Any]:
    """Returns the help-center articles (returns, warranty, delivery) matching a question; all
    of them when none matches."""
    words = set(query.lower().split())
    matching = [title for title in _ARTICLES if title in words] or list(_ARTICLES)
    return {"query": query, "articles": [{"title": t, "body": _ARTICLES[t]} for t in matching]}


def make_stack(**options: Any) -> MemoryStack:
    """This agent's memory and compaction. `options` go to `configure()` as well (the database,
    the memory model, ...); unset, they come from the `ADK_MEMORY_*` environment, else the
    embedded PostgreSQL in ./.adk/pgdata and gemini-2.5-flash."""
    return configure(
        memory=MEMORY,
        context=MemoryContextConfig(profile_topics=(CONTACT, ManagedTopic.EXPLICIT_INSTRUCTIONS)),
        compaction=CompactionConfig(
            summarize=True,
            summarize_after_events=40,
            archive_tool_results=True,
            archive_threshold_tokens=1000,
            token_budget=32_000,
        ),
        **options,
    )


def make_app(stack: MemoryStack, model: str | BaseLlm = MODEL) -> App:
    """The agent on `stack`: its support tools, `load_artifacts` and the stack's plugins."""
    agent = LlmAgent(
        name=NAME,
        model=model,
        instruction=INSTRUCTION,
        tools=[lookup_order, search_help_center, load_artifacts],
    )
    return App(name=NAME, root_agent=agent, plugins=stack.plugins)


stack = make_stack()
app = make_app(stack, agent_model(MODEL))
