"""A personal assistant that remembers its user from one conversation to the next.

- Before every model call, what it remembers goes into the system instruction: the user's
  profile (personal details and preferences, always shown) and the memories relevant to the
  message (`MemoryContextConfig`).
- The model stores what the user explicitly asks it to remember at once (`create_memory`).
- When the conversation ends (the user says goodbye and the model calls `end_conversation`),
  its new events go to memory generation, which extracts and consolidates what is worth keeping
  in the background (`TriggerConfig(every_n_turns=None)`: no per-turn generation).

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
from google.adk.tools.tool_context import ToolContext

from adk_memory.adk.demo import agent_model
from adk_memory.adk.stack import MemoryContextConfig, MemoryStack, TriggerConfig, configure
from adk_memory.config import ManagedTopic

NAME = "personal_assistant"
MODEL = "gemini-2.5-flash"

INSTRUCTION = """You are a warm, concise personal assistant.
Use what you remember about the user when it helps, without reciting it.
When the user asks you to remember something, call create_memory with that one fact.
When the user says goodbye or the conversation is clearly over, call end_conversation, then
say goodbye."""


def make_stack(**options: Any) -> MemoryStack:
    """This assistant's memory: the profile topics shown on every turn, generation at the end of
    a conversation only. `options` go to `configure()` as well (the database, the memory model,
    ...); unset, they come from the `ADK_MEMORY_*` environment, else the embedded PostgreSQL in
    ./.adk/pgdata and gemini-2.5-flash."""
    return configure(
        context=MemoryContextConfig(
            profile_topics=(ManagedTopic.USER_PERSONAL_INFO, ManagedTopic.USER_PREFERENCES)
        ),
        triggers=TriggerConfig(every_n_turns=None),
        **options,
    )


def make_app(stack: MemoryStack, model: str | BaseLlm = MODEL) -> App:
    """The agent on `stack`: its memory tools, the end-of-conversation tool and its plugins."""
    generation = stack.generation
    if generation is None:
        raise ValueError("The personal assistant needs the generation trigger plugin.")

    async def end_conversation(tool_context: ToolContext) -> dict[str, str]:
        """Call when the user says goodbye or the conversation is over, so that what was said
        is remembered next time."""
        operation = await generation.end_session(tool_context.session)
        return {"status": "remembering" if operation else "nothing new to remember"}

    agent = LlmAgent(
        name=NAME,
        model=model,
        instruction=INSTRUCTION,
        tools=[stack.create_memory, end_conversation],
    )
    return App(name=NAME, root_agent=agent, plugins=stack.plugins)


stack = make_stack()
app = make_app(stack, agent_model(MODEL))
