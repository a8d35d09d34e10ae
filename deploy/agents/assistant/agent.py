"""The example agent the image serves: Gemini with long-term memory. What it remembers about a
user is preloaded into every turn; each finished turn is sent to memory (generation runs in the
worker). Replace this directory with your own agents (`--build-arg AGENTS=path/to/agents`)."""

from __future__ import annotations

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.preload_memory_tool import PreloadMemoryTool


async def remember_turn(callback_context: CallbackContext) -> None:
    """Queue the session for memory generation (only events not processed before are used)."""
    await callback_context.add_session_to_memory()


root_agent = LlmAgent(
    name="assistant",
    model="gemini-2.5-flash",
    instruction="You are a helpful assistant. Use what you remember about the user when relevant.",
    tools=[PreloadMemoryTool()],
    after_agent_callback=remember_turn,
)
