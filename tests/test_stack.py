"""`configure()`: the embedded server with no arguments, the environment and its precedence,
plugins merged into an app's own, and a full turn through `stack.runner()` that puts a stored
memory into the system instruction."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import TEST_SCHEMA
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App, EventsCompactionConfig
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.genai import types

from adk_memory import MemoryBankConfig, TtlConfig
from adk_memory.adk.callbacks import MemoryContextPlugin
from adk_memory.adk.compaction.summarize import RecursiveSummarizationPlugin
from adk_memory.adk.stack import (
    CompactionConfig,
    MemoryContextConfig,
    MemoryStack,
    TriggerConfig,
    configure,
)
from adk_memory.adk.triggers import MemoryGenerationPlugin
from adk_memory.config import GenerationConfig
from adk_memory.db.embedded import stop_embedded
from adk_memory.env import (
    DATA_DIR_ENV,
    DATABASE_PASSWORD_ENV,
    DATABASE_URL_ENV,
    EMBEDDING_MODEL_ENV,
    MEMORY_TTL_ENV,
    MODEL_ENV,
    SCHEMA_ENV,
    SESSION_TTL_ENV,
)
from adk_memory.memory import GeminiEmbedder
from adk_memory.testing import ScriptedLlm, function_call

APP, USER = "stack_app", "u1"


@pytest.fixture
async def stacks(
    make_memory_service: Any, database_url: str
) -> AsyncIterator[Callable[..., MemoryStack]]:
    """Build stacks on the test database (`make_memory_service` empties its tables first), with
    no environment and no worker; closed after the test."""
    built: list[MemoryStack] = []

    def make(**options: Any) -> MemoryStack:
        options = {"schema": TEST_SCHEMA, "environ": {}, "run_worker": False, **options}
        built.append(configure(database_url, **options))
        return built[-1]

    yield make
    for stack in built:
        await stack.close()


def message(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def ask(runner: Runner, session_id: str, text: str) -> list:
    return [
        event
        async for event in runner.run_async(
            user_id=USER, session_id=session_id, new_message=message(text)
        )
    ]


async def test_no_arguments_start_the_embedded_postgres_in_the_working_directory(
    server_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(server_dir)
    for name in [n for n in os.environ if n.startswith("ADK_MEMORY_")]:
        monkeypatch.delenv(name)

    stack = configure()
    assert stack.data_dir == (server_dir / ".adk" / "pgdata").resolve()
    assert not stack.data_dir.exists()  # nothing starts before the first call
    try:
        session = await stack.session_service.create_session(app_name=APP, user_id=USER)
        scope = {"app_name": APP, "user_id": USER}
        await stack.memory_service.create_memory("Prefers window seats", scope)
        found = await stack.memory_service.retrieve_memories(scope, search_query="window seat")
        assert [hit.memory.fact for hit in found] == ["Prefers window seats"]
        assert await stack.session_service.get_session(
            app_name=APP, user_id=USER, session_id=session.id
        )
        assert stack.data_dir.is_dir()
    finally:
        await stack.close()
        stop_embedded(stack.data_dir)


async def test_the_environment_fills_what_the_arguments_leave_out(tmp_path: Path) -> None:
    environ = {
        DATABASE_URL_ENV: "postgresql://agent@db.internal:5432/agents",
        DATABASE_PASSWORD_ENV: "s3cret",
        SCHEMA_ENV: "tenant_a",
        MODEL_ENV: "gemini-2.0-flash",
        EMBEDDING_MODEL_ENV: "text-embedding-005",
        SESSION_TTL_ENV: "12h",
        MEMORY_TTL_ENV: "30d",
    }
    stack = configure(environ=environ)
    engine = await stack.session_service.database.engine()  # built, not connected
    assert engine.url.render_as_string(hide_password=False) == (
        "postgresql+asyncpg://agent:s3cret@db.internal:5432/agents"
    )
    assert await stack.memory_service.database.engine() is engine  # one pool for both
    assert stack.data_dir is None
    assert stack.session_service.database.schema == "tenant_a"
    assert stack.memory_service.database.schema == "tenant_a"
    assert stack.memory_service.llm.model == "gemini-2.0-flash"
    assert isinstance(stack.memory_service.embedder, GeminiEmbedder)
    assert stack.memory_service.embedder.model == "text-embedding-005"
    assert stack.session_service.session_ttl == timedelta(hours=12)
    assert stack.memory_service.config.ttl.default_ttl == timedelta(days=30)
    await stack.close()

    embedded = configure(environ={DATA_DIR_ENV: str(tmp_path / "data")})
    assert embedded.data_dir == tmp_path / "data"
    # `none` switches off an embedding model set elsewhere (e.g. in a shell's profile).
    assert configure(environ={EMBEDDING_MODEL_ENV: "none"}).memory_service.embedder is None


async def test_what_the_caller_writes_wins_over_the_environment() -> None:
    environ = {
        DATABASE_URL_ENV: "postgresql://agent@env-host/agents",
        DATABASE_PASSWORD_ENV: "from-env",
        SCHEMA_ENV: "from_env",
        MODEL_ENV: "gemini-2.0-flash",
        SESSION_TTL_ENV: "3600",
        MEMORY_TTL_ENV: "1d",
    }
    scripted = ScriptedLlm()
    stack = configure(
        "postgresql://agent:given@arg-host/agents",
        schema="given",
        model=scripted,
        session_ttl=timedelta(days=2),
        memory=MemoryBankConfig(ttl=TtlConfig(default_ttl=None)),  # set: forever
        environ=environ,
    )
    engine = await stack.session_service.database.engine()
    assert engine.url.host == "arg-host" and engine.url.password == "given"
    assert stack.session_service.database.schema == "given"
    assert stack.memory_service.llm is scripted
    assert stack.session_service.session_ttl == timedelta(days=2)
    assert stack.memory_service.config.ttl.default_ttl is None
    await stack.close()

    # A model set on the bank's config is written too; an unset one yields to the environment.
    chosen = MemoryBankConfig(generation=GenerationConfig(model="gemini-2.5-pro"))
    stack = configure(memory=chosen, environ=environ)
    assert stack.memory_service.llm.model == "gemini-2.5-pro"
    assert configure(memory=MemoryBankConfig(), environ=environ).memory_service.llm.model == (
        "gemini-2.0-flash"
    )
    assert configure(environ={}).memory_service.llm.model == GenerationConfig().model


@pytest.mark.parametrize(
    ("options", "environ", "mentions"),
    [
        ({}, {SESSION_TTL_ENV: "soon"}, SESSION_TTL_ENV),
        ({}, {MEMORY_TTL_ENV: "-1d"}, MEMORY_TTL_ENV),
        ({"model": "no-such-model"}, {}, "no-such-model"),
        ({"schema": "Bad-Schema"}, {}, "schema"),
        ({"database_url": "mysql://u@h/db"}, {}, "mysql"),
        ({"compaction": {"summarize": True}}, {}, "CompactionConfig"),
        ({"compaction": CompactionConfig(summarize=True, summarize_after_events=5)}, {}, "keep"),
    ],
)
def test_bad_settings_fail_at_configure_with_a_clear_error(
    options: dict[str, Any], environ: dict[str, str], mentions: str
) -> None:
    with pytest.raises(InputValidationError, match=mentions):
        configure(environ=environ, **options)


class AuditPlugin(BasePlugin):
    """An app's own plugin."""

    def __init__(self, name: str = "audit") -> None:
        super().__init__(name=name)


def names(runner: Runner) -> list[str]:
    return [plugin.name for plugin in runner.plugin_manager.plugins]


@pytest.mark.filterwarnings("ignore:.*EventsCompactionConfig")
async def test_runner_merges_the_stack_plugins_into_the_apps_own(stacks: Any) -> None:
    stack = stacks(
        compaction=CompactionConfig(summarize=True, archive_tool_results=True, token_budget=8000)
    )
    agent = LlmAgent(name="helper", model=ScriptedLlm(), instruction="Help.")
    expected = [
        "memory_context",
        "memory_generation",
        "tool_result_archive",
        "token_budget",
        "recursive_summarization",
    ]

    # An agent: wrapped in an App with the stack's plugins, on the stack's services.
    runner = stack.runner(agent, app_name=APP)
    assert runner.app_name == APP and names(runner) == expected
    assert runner.session_service is stack.session_service
    assert runner.memory_service is stack.memory_service
    assert runner.artifact_service is stack.artifact_service

    # An app with its own plugins: those first, then the stack's, none twice (neither one
    # already there, nor one the app configured itself under the same name and type).
    own_context = MemoryContextPlugin()
    own = [AuditPlugin(), own_context, stack.generation]
    app = App(name=APP, root_agent=agent, plugins=own)
    runner = stack.runner(app)
    assert names(runner) == ["audit", *expected]
    assert runner.plugin_manager.get_plugin("memory_context") is own_context
    assert app.plugins == own  # the app itself is left as it was
    assert names(stack.runner(App(name=APP, root_agent=agent, plugins=stack.plugins))) == expected

    # Another kind of plugin under one of the stack's names, or two compaction writers: errors.
    clash = App(name=APP, root_agent=agent, plugins=[AuditPlugin(name="token_budget")])
    with pytest.raises(InputValidationError, match="token_budget"):
        stack.runner(clash)
    adk_compaction = EventsCompactionConfig(compaction_interval=5, overlap_size=1)
    both = App(name=APP, root_agent=agent, events_compaction_config=adk_compaction)
    with pytest.raises(InputValidationError, match="events_compaction_config"):
        stack.runner(both)
    with pytest.raises(InputValidationError, match="App or agent"):
        stack.runner("helper")


async def test_plugins_follow_the_configs(stacks: Any) -> None:
    stack = stacks(context=None, triggers=None)
    assert stack.plugins == [] and stack.memory_context is None and stack.generation is None

    every_third = stacks(
        context=MemoryContextConfig(top_k=3, profile_topics=("USER_PREFERENCES",)),
        triggers=TriggerConfig(every_n_turns=3, opt_out=lambda session: False),
        compaction=CompactionConfig(window_turns=4, filter_delegation=True, token_budget="auto"),
    )
    assert [p.name for p in every_third.plugins] == [
        "memory_context",
        "memory_generation",
        "delegation_filter",
        "sliding_window",
        "token_budget",
    ]
    assert every_third.memory_context.callback.top_k == 3
    assert every_third.memory_context.callback.profile_topics == ["USER_PREFERENCES"]
    assert every_third.memory_context.callback.memory_service is every_third.memory_service
    assert isinstance(every_third.generation, MemoryGenerationPlugin)
    assert every_third.generation.every_n_turns == 3
    assert [t.name for t in every_third.tools] == ["create_memory", "load_memory", "forget_memory"]
    assert all(t.memory_service is every_third.memory_service for t in every_third.tools)


def get_order(order_id: str) -> dict:
    """Returns an order with its many line items."""
    return {"order_id": order_id, "items": [f"item {i}: a long description" for i in range(300)]}


async def test_a_turn_through_the_runner_sees_a_stored_memory(stacks: Any) -> None:
    memory_llm = ScriptedLlm(responder=lambda request: json.dumps({"facts": []}))
    stack = stacks(
        model=memory_llm,
        context=MemoryContextConfig(profile_topics=("USER_PREFERENCES",)),
        compaction=CompactionConfig(
            summarize=True, archive_tool_results=True, window_turns=10, token_budget="auto"
        ),
    )
    scope = {"app_name": APP, "user_id": USER}
    await stack.memory_service.create_memory(
        "Prefers window seats on long flights", scope, topics=["USER_PREFERENCES"]
    )
    llm = ScriptedLlm(
        [function_call("get_order", order_id="A1"), "Your order A1 has 300 items, by the window."]
    )
    agent = LlmAgent(name="helper", model=llm, instruction="Help.", tools=[get_order])
    runner = stack.runner(agent, app_name=APP)
    session = await stack.session_service.create_session(app_name=APP, user_id=USER)

    events = await ask(runner, session.id, "What is in order A1?")
    await runner.close()

    assert events[-1].content.parts[0].text.startswith("Your order A1")
    for request in llm.requests:  # both model calls of the turn, the same memory block
        instruction = request.config.system_instruction
        assert "Help." in instruction
        assert '<USER_PROFILE>\n- "Prefers window seats on long flights" (today)' in instruction
    stored = await stack.session_service.get_session(
        app_name=APP, user_id=USER, session_id=session.id
    )
    assert len(stored.events) == len(events) + 1  # the user's message, then every event
    summarizers = [p for p in stack.plugins if isinstance(p, RecursiveSummarizationPlugin)]
    assert summarizers and summarizers[0].pending == 0  # a short session: nothing to summarize
    # The turn went to memory generation (after every turn, by default), with the stack's model.
    assert await stack.memory_service.make_worker().run_until_idle() == 1
    assert memory_llm.requests
