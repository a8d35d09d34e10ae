"""The example agent the image serves: Gemini with long-term memory, built with adk-memory's
`configure()`. Replace this directory with your own agents (`--build-arg AGENTS=path/to/agents`).

- What it remembers about the user goes into the system instruction before each model call
  (the memory-context plugin: a profile of personal details and preferences, then the memories
  relevant to the message).
- Each finished turn is enqueued for memory generation (the trigger plugin); the deployment's
  worker extracts and consolidates it, so a turn never waits for it.
- Long conversations stay small: older events are summarized into ADK compaction events in the
  background, and a token budget trims what is sent.
- `create_memory` / `load_memory` / `forget_memory` let the model manage memories on request.

The database and the options come from the environment the deployment sets
(`python -m deploy.main` exports them before ADK imports this module): the same database as the
app's session and memory services. In the deployment the migration job changes the schema and
the worker runs generation, hence `auto_migrate=False` and `run_worker=False`; to try it
locally, run `adk-memory migrate` and `adk-memory worker` beside `adk-memory web deploy/agents`.
"""

from __future__ import annotations

from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App

from adk_memory import CompactionConfig, MemoryContextConfig, TriggerConfig, configure
from adk_memory.config import ManagedTopic

MODEL = "gemini-2.5-flash"

stack = configure(
    context=MemoryContextConfig(
        profile_topics=(ManagedTopic.USER_PERSONAL_INFO, ManagedTopic.USER_PREFERENCES)
    ),
    triggers=TriggerConfig(every_n_turns=1),
    compaction=CompactionConfig(summarize=True, token_budget="auto"),
    run_worker=False,
    auto_migrate=False,
)

root_agent = LlmAgent(
    name="assistant",
    model=MODEL,
    instruction=(
        "You are a helpful assistant. Use what you know about the user when it helps, without "
        "reciting it. When the user asks you to remember something, call create_memory."
    ),
    tools=stack.tools,
)

app = App(name="assistant", root_agent=root_agent, plugins=stack.plugins)
