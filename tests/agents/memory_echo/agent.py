"""The agent the HTTP tests serve: a scripted model that echoes the user and quotes whatever
memory ADK preloaded into the request; every turn is then added to memory. No network."""

from __future__ import annotations

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.preload_memory_tool import PreloadMemoryTool

from adk_memory.testing import ScriptedLlm

PAST, END = "<PAST_CONVERSATIONS>", "</PAST_CONVERSATIONS>"


def _reply(request: LlmRequest) -> str:
    """`echo: <what the user said>`, plus ` | recalled: <memories>` when memory was preloaded."""
    texts = [p.text for c in request.contents if c.role == "user" for p in c.parts or [] if p.text]
    said = [t for t in texts if PAST not in t]
    recalled = [t.split(PAST)[1].split(END)[0].strip() for t in texts if PAST in t]
    reply = f"echo: {said[-1] if said else ''}"
    return f"{reply} | recalled: {recalled[-1]}" if recalled else reply


async def _remember(callback_context: CallbackContext) -> None:
    await callback_context.add_session_to_memory()


root_agent = LlmAgent(
    name="memory_echo",
    model=ScriptedLlm(responder=_reply),
    instruction="Echo the user.",
    tools=[PreloadMemoryTool()],
    after_agent_callback=_remember,
)
