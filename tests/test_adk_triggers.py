"""Memory-generation triggers behind a real ADK Runner on a real Postgres: turn cadence, opt-out,
end of session, idle sweep, enqueue-only turns (a blocked memory model never delays one), a
failing memory database never breaks one, and a preference said once becoming that user's
memory (and nobody else's)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from datetime import timedelta

import pytest
from conftest import TEST_SCHEMA
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.tools import preload_memory
from google.genai import types
from rls_checks import for_all

from adk_memory import MemoryBankConfig, PostgresMemoryService, PostgresSessionService
from adk_memory.adk.triggers import OPT_OUT_STATE_KEY, MemoryGenerationPlugin, SweepStats
from adk_memory.config import GenerationConfig
from adk_memory.testing import ScriptedLlm

APP = "travel_app"
PREFERENCE = "I always prefer a window seat on long flights."
FACT = "The user prefers window seats."


def request_text(request: LlmRequest) -> str:
    return " ".join(p.text for c in request.contents for p in (c.parts or []) if p.text)


def memory_model(request: LlmRequest) -> str:
    """The memory service's model, extraction only: it finds the seat preference and nothing
    else. (No test gives a user a second memory, so consolidation is never asked for; if it
    were, this answer would not parse and the test would fail.)"""
    found = "window seat" in request_text(request)
    facts = [{"fact": FACT, "topic": "USER_PREFERENCES", "forget": False}] if found else []
    return json.dumps({"facts": facts})


def extraction_requests(llm: ScriptedLlm) -> list[str]:
    return [request_text(r) for r in llm.requests]


@pytest.fixture
async def memory(make_memory_service) -> PostgresMemoryService:
    """Enqueue-only: tests run the worker themselves (`worker.run_until_idle()`). Its tables
    exist from the start (a worker polling before the first enqueue needs them)."""
    service = make_memory_service(llm=ScriptedLlm(responder=memory_model), run_worker=False)
    await service.list_memories({"app_name": APP, "user_id": "nobody"})
    return service


@pytest.fixture
def sessions(make_session_service) -> PostgresSessionService:
    return make_session_service()


def make_runner(
    sessions: PostgresSessionService,
    plugin: MemoryGenerationPlugin,
    *,
    memory: PostgresMemoryService | None = None,
    tools: list | None = None,
) -> tuple[Runner, ScriptedLlm]:
    agent_llm = ScriptedLlm(responder=lambda request: "Noted.")
    agent = LlmAgent(name="assistant", model=agent_llm, instruction="Help.", tools=tools or [])
    app = App(name=APP, root_agent=agent, plugins=[plugin])
    return Runner(app=app, session_service=sessions, memory_service=memory), agent_llm


async def ask(runner: Runner, session: Session, text: str) -> None:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(
        user_id=session.user_id, session_id=session.id, new_message=message
    ):
        pass


async def facts_of(memory: PostgresMemoryService, user_id: str) -> list[str]:
    page = await memory.list_memories({"app_name": APP, "user_id": user_id})
    return [m.fact for m in page.memories]


async def job_payloads(engine) -> list[dict]:
    """Every job's payload, oldest first (read straight from the queue table)."""
    async with engine.connect() as conn:
        raw = await conn.exec_driver_sql(
            f"SELECT payload::text FROM {TEST_SCHEMA}.memory_jobs WHERE {for_all(TEST_SCHEMA)} "
            "ORDER BY create_time"
        )
        return [json.loads(row[0]) for row in raw]


def payload_texts(payload: dict) -> list[str]:
    return [p["text"] for e in payload["events"] for p in e["content"]["parts"] if "text" in p]


async def test_every_second_turn_enqueues_on_turns_2_and_4_with_only_new_events(
    memory, sessions, engine
):
    runner, _ = make_runner(sessions, MemoryGenerationPlugin(memory, every_n_turns=2))
    session = await sessions.create_session(app_name=APP, user_id="alice")
    ran = []
    queued = []  # each job's payload while it waits (a finished job keeps none)
    for turn in range(1, 6):
        await ask(runner, session, f"message {turn}")
        queued += [p for p in await job_payloads(engine) if p]
        ran.append(await memory.worker.run_until_idle())
    assert ran == [0, 1, 0, 1, 0]
    assert await job_payloads(engine) == [{}, {}]
    first, second = extraction_requests(memory.llm)
    assert "message 1" in first and "message 2" in first
    assert "message 3" in second and "message 4" in second
    assert "message 1" not in second and "message 2" not in second  # never extracted twice
    # The second job carried only what came after the watermark (turn 2's reply), not the
    # whole session: a long conversation does not make each job bigger.
    _, later = queued
    assert payload_texts(later) == ["Noted.", "message 3", "Noted.", "message 4", "Noted."]
    assert later["revision_labels"] == {"trigger": "turn"}


async def test_an_opted_out_user_gets_nothing(memory, sessions, caplog):
    def opt_out(session: Session) -> bool:
        if session.user_id == "erin":
            raise RuntimeError("consent service down")
        return session.user_id == "dave"

    plugin = MemoryGenerationPlugin(memory, opt_out=opt_out)
    runner, _ = make_runner(sessions, plugin)
    by_state = await sessions.create_session(
        app_name=APP, user_id="carol", state={OPT_OUT_STATE_KEY: True}
    )
    by_predicate = await sessions.create_session(app_name=APP, user_id="dave")
    failing_predicate = await sessions.create_session(app_name=APP, user_id="erin")
    for session in (by_state, by_predicate, failing_predicate):
        await ask(runner, session, PREFERENCE)
        await ask(runner, session, "And an aisle seat on short ones.")
    with caplog.at_level(logging.ERROR, logger="adk_memory.adk.triggers"):
        for session in (by_state, by_predicate, failing_predicate):
            stored = await sessions.get_session(
                app_name=APP, user_id=session.user_id, session_id=session.id
            )
            assert await plugin.end_session(stored) is None
    assert "consent service down" in caplog.text  # a failing predicate enqueues nothing
    assert await memory.worker.run_until_idle() == 0
    assert memory.llm.requests == []
    # The opt-out is user state: it covers the user's other sessions too.
    another = await sessions.create_session(app_name=APP, user_id="carol")
    await ask(runner, another, PREFERENCE)
    assert await memory.worker.run_until_idle() == 0
    # Opting in again: from then on the user's turns are remembered.
    allowed = await sessions.create_session(
        app_name=APP, user_id="carol", state={OPT_OUT_STATE_KEY: False}
    )
    await ask(runner, allowed, PREFERENCE)
    assert await memory.worker.run_until_idle() == 1


async def test_end_session_enqueues_the_rest_and_the_session_may_then_be_deleted(memory, sessions):
    plugin = MemoryGenerationPlugin(memory, every_n_turns=None)
    runner, _ = make_runner(sessions, plugin)
    session = await sessions.create_session(app_name=APP, user_id="alice")
    await ask(runner, session, "Hello!")
    await ask(runner, session, PREFERENCE)
    assert await memory.worker.run_until_idle() == 0  # no per-turn trigger
    stored = await sessions.get_session(app_name=APP, user_id="alice", session_id=session.id)
    operation = await plugin.end_session(stored)
    assert operation is not None and not operation.done
    await sessions.delete_session(app_name=APP, user_id="alice", session_id=session.id)
    assert await memory.worker.run_until_idle() == 1  # the job carries the events
    done = await memory.get_operation(operation.id, operation.scope)
    assert [g.memory.fact for g in done.generated_memories] == [FACT]
    assert await plugin.end_session(stored) is None  # nothing new: nothing enqueued
    with pytest.raises(InputValidationError):
        await plugin.end_session("not a session")  # type: ignore[arg-type]


IDLE = timedelta(minutes=30)
"""The sweep's idleness in the idle-sweep test: far below the hour its sessions are aged by,
far above how long the test itself may take."""


async def test_the_idle_sweep_enqueues_only_idle_sessions_with_new_events(memory, sessions):
    plugin = MemoryGenerationPlugin(memory, every_n_turns=None)
    runner, _ = make_runner(sessions, plugin)

    async def session_of(user: str, *texts: str, **state) -> Session:
        session = await sessions.create_session(app_name=APP, user_id=user, state=state or None)
        for text in texts:
            await ask(runner, session, text)
        return session

    async def end(session: Session) -> None:
        stored = await sessions.get_session(
            app_name=APP, user_id=session.user_id, session_id=session.id
        )
        assert await plugin.end_session(stored) is not None
        assert await memory.worker.run_until_idle() == 1

    await session_of("alice", PREFERENCE)
    processed = await session_of("bob", "Hi there.")
    await end(processed)
    partly = await session_of("dan", "First words.")
    await end(partly)
    await ask(runner, partly, "I like a window seat too.")
    await session_of("alice")  # no events: never a candidate
    await session_of("carol", PREFERENCE, **{OPT_OUT_STATE_KEY: True})
    await session_of("odd*user", PREFERENCE)  # no memory scope can hold this id: counted, skipped
    calls_before = len(memory.llm.requests)
    # An hour passes for everyone so far (no sleeping: a clock-based gap would make erin, who
    # speaks next, idle too on a slow enough machine).
    await sessions.database.run(
        lambda conn: conn.execute(
            f"UPDATE {sessions.database.schema}.sessions "
            "SET active_time = active_time - interval '1 hour' "
            f"WHERE {for_all(sessions.database.schema)}"
        )
    )
    await session_of("erin", PREFERENCE)  # just spoke: not idle

    seen: list[SweepStats] = []
    stats = await plugin.sweep_idle(sessions, idle_for=IDLE, batch_size=2, progress=seen.append)
    assert stats == SweepStats(scanned=5, enqueued=2, up_to_date=1, opted_out=1, failed=1)
    assert [s.scanned for s in seen] == [2, 4, 5]
    assert await memory.worker.run_until_idle() == 2
    sources = extraction_requests(memory.llm)[calls_before:]
    assert sorted("window seat" in s for s in sources) == [True, True]
    assert not any("First words." in s for s in sources)  # dan's processed turn not resent
    assert all("Hi there." not in s for s in sources)
    facts = {user: await facts_of(memory, user) for user in ("alice", "dan", "erin", "carol")}
    assert facts == {"alice": [FACT], "dan": [FACT], "erin": [], "carol": []}

    again = await plugin.sweep_idle(sessions, idle_for=IDLE, app_name=APP)
    assert again == SweepStats(scanned=5, enqueued=0, up_to_date=3, opted_out=1, failed=1)
    assert await memory.worker.run_until_idle() == 0
    other_app = await plugin.sweep_idle(sessions, idle_for=IDLE, app_name="x")
    assert other_app == SweepStats()
    with pytest.raises(InputValidationError):
        await plugin.sweep_idle(sessions, idle_for=timedelta(0))
    with pytest.raises(InputValidationError):
        await plugin.sweep_idle(sessions, idle_for=timedelta(seconds=1), batch_size=0)
    with pytest.raises(InputValidationError, match="PostgresSessionService"):
        await plugin.sweep_idle(InMemorySessionService(), idle_for=timedelta(seconds=1))  # type: ignore[arg-type]


HANG = 60.0
"""Seconds after which a wait that should end is a hang: only a guard, never a measure (on a
loaded machine a turn may take long; it must only end)."""


async def eventually(check) -> None:
    """Wait until `check()` (async) is true; fail after `HANG` seconds."""
    deadline = time.monotonic() + HANG
    while not await check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def turn_while_blocked(
    runner: Runner, session: Session, text: str, gate: asyncio.Event
) -> None:
    """Run one turn while the memory model is blocked on `gate`: the turn must end anyway (a
    turn that waited for the model would wait until the gate opens). Should it not, the gate is
    opened after `HANG` seconds so nothing hangs, and the test fails."""
    turn = asyncio.create_task(ask(runner, session, text))
    done, _ = await asyncio.wait({turn}, timeout=HANG)
    if not done:
        gate.set()
        await turn
        pytest.fail("The turn waited for the memory model.")
    await turn
    assert not gate.is_set()  # it ended with the model still blocked


async def test_a_blocked_memory_model_does_not_delay_the_turn(make_memory_service, sessions):
    gate = asyncio.Event()

    async def blocked(request: LlmRequest) -> str:
        await gate.wait()
        return memory_model(request)

    llm = ScriptedLlm(responder=blocked)
    memory = make_memory_service(llm=llm, run_worker=True)  # the worker runs in this process
    runner, _ = make_runner(sessions, MemoryGenerationPlugin(memory))
    session = await sessions.create_session(app_name=APP, user_id="alice")

    async def model_called() -> bool:
        return bool(llm.requests)

    async def remembered() -> bool:
        return bool(await facts_of(memory, "alice"))

    try:
        await turn_while_blocked(runner, session, PREFERENCE, gate)
        await eventually(model_called)  # the worker took the job and sits in the model
        await turn_while_blocked(runner, session, "Thanks!", gate)  # ...and the turn still ends
        assert len(llm.requests) == 1
        assert await facts_of(memory, "alice") == []
        gate.set()
        await eventually(remembered)
        assert await facts_of(memory, "alice") == [FACT]
    finally:
        gate.set()
        await memory.worker.stop()


async def test_enqueue_failures_never_break_the_turn_and_generation_failures_are_retried(
    make_memory_service, sessions, caplog
):
    broken = make_memory_service(  # tables never created, migrations off: every call fails
        llm=ScriptedLlm(), run_worker=False, schema="adk_memory_absent", auto_migrate=False
    )
    runner, agent_llm = make_runner(sessions, MemoryGenerationPlugin(broken))
    session = await sessions.create_session(app_name=APP, user_id="alice")
    with caplog.at_level(logging.ERROR, logger="adk_memory.adk.triggers"):
        await ask(runner, session, PREFERENCE)
    assert len(agent_llm.requests) == 1  # the turn ran to the end
    assert "Could not enqueue memory generation (turn)" in caplog.text
    assert "SchemaVersionError" in caplog.text

    flaky = ScriptedLlm([TimeoutError("model timed out")], responder=memory_model)
    memory = make_memory_service(
        llm=flaky,
        run_worker=False,
        config=MemoryBankConfig(generation=GenerationConfig(retry_base_delay=timedelta())),
    )
    runner, _ = make_runner(sessions, MemoryGenerationPlugin(memory))
    await ask(runner, session, "Also: I am vegetarian.")
    assert await memory.worker.run_until_idle() == 2  # failed once, retried by the queue
    # The retried job saw both turns: the first turn's failed enqueue lost nothing.
    assert await facts_of(memory, "alice") == [FACT]


async def test_a_preference_becomes_a_memory_of_that_user_only(memory, sessions):
    plugin = MemoryGenerationPlugin(memory)
    runner, agent_llm = make_runner(sessions, plugin, memory=memory, tools=[preload_memory])
    alice = await sessions.create_session(app_name=APP, user_id="alice")
    bob = await sessions.create_session(app_name=APP, user_id="bob")
    await ask(runner, alice, PREFERENCE)
    await ask(runner, bob, "Book me a seat to Oslo, please.")
    assert await memory.worker.run_until_idle() == 2

    [remembered] = (await memory.list_memories({"app_name": APP, "user_id": "alice"})).memories
    assert remembered.fact == FACT and remembered.source_session_id == alice.id
    [revision] = await memory.list_revisions(remembered.id, remembered.scope)
    assert revision.labels == {"trigger": "turn"}
    assert await facts_of(memory, "bob") == []

    # The next session: the memory reaches the model for Alice, and only for her.
    question = "Which seat should you book on my flight?"
    for user in ("alice", "bob"):
        later = await sessions.create_session(app_name=APP, user_id=user)
        await ask(runner, later, question)
    alice_sees, bob_sees = (request_text(r) for r in agent_llm.requests[-2:])
    assert FACT in alice_sees and FACT not in bob_sees


async def test_bad_configuration_is_rejected(make_memory_service):
    without_model = make_memory_service(run_worker=False)
    with pytest.raises(InputValidationError, match="needs a model"):
        MemoryGenerationPlugin(without_model)
    with pytest.raises(InputValidationError, match="PostgresMemoryService"):
        MemoryGenerationPlugin(object())  # type: ignore[arg-type]
    with_model = make_memory_service(llm=ScriptedLlm(), run_worker=False)
    for cadence in (0, -1, True, 1.5):
        with pytest.raises(InputValidationError, match="every_n_turns"):
            MemoryGenerationPlugin(with_model, every_n_turns=cadence)  # type: ignore[arg-type]
    with pytest.raises(InputValidationError, match="opt_out"):
        MemoryGenerationPlugin(with_model, opt_out="no")  # type: ignore[arg-type]
