"""Exactly-once writes: every write of every service with its reply lost after the server
committed it (a wire proxy between asyncpg and the server drops it), and a writer that goes on
through immediate shutdowns of a server of its own.

A lost reply makes `Database.run` replay the statement on a fresh connection. Each test checks
that the call still returns the original result (no spurious error) and that nothing was
written twice, counting rows on a direct connection, and that the proxy really lost a reply
after a commit (so no test passes by never injecting its fault).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import pytest
import sqlalchemy.exc
from conftest import TEST_SCHEMA as SCHEMA
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types
from rls_checks import all_rows
from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_dbapi
from wire_proxy import WireProxy, running

from adk_memory import (
    GuardAction,
    GuardVerdict,
    MemoryBankConfig,
    PostgresMemoryService,
    PostgresSessionService,
)
from adk_memory.adk.erasure import erase_user
from adk_memory.config import GenerationConfig
from adk_memory.db import embedded
from adk_memory.memory.jobs import JobQueue
from adk_memory.testing import ScriptedLlm

T = TypeVar("T")
APP, USER = "app", "u1"
SCOPE = {"app_name": APP, "user_id": USER}
TWO_QUICK_TRIES = MemoryBankConfig(
    generation=GenerationConfig(max_attempts=2, retry_base_delay=timedelta())
)
Rows = Callable[..., Awaitable[Any]]


def said(text: str, *, ts: float = 1.0, delta: dict[str, Any] | None = None) -> Event:
    return Event(
        author="user",
        invocation_id="inv",
        timestamp=ts,
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=delta or {}),
    )


A_SESSION = Session(id="s", app_name=APP, user_id=USER, events=[said("I like tea")])


def entry(entry_id: str, text: str) -> MemoryEntry:
    return MemoryEntry(id=entry_id, content=types.Content(parts=[types.Part(text=text)]))


def extraction(*facts: str) -> str:
    return json.dumps(
        {"facts": [{"fact": f, "topic": "USER_PREFERENCES", "forget": False} for f in facts]}
    )


class QuarantineAll:
    """A guard that holds every fact for an operator."""

    async def check(self, fact: str, *, scope: Any, source: str) -> GuardVerdict:
        return GuardVerdict(GuardAction.QUARANTINE, reason="held for review", rule="test")


@pytest.fixture
async def proxy(database_url: str) -> AsyncIterator[WireProxy]:
    async with running(database_url) as started:
        yield started


@pytest.fixture
async def rows(database_url: str) -> AsyncIterator[Rows]:
    """`await rows(sql, *args)`: one value, read on a direct connection (not the proxy's);
    `{s}` in the SQL is the test schema."""
    conn = await all_rows(database_url)

    async def value(sql: str, *args: Any) -> Any:
        return await conn.fetchval(sql.format(s=SCHEMA), *args)

    yield value
    await conn.close()


@pytest.fixture
async def sessions(
    make_session_service: Any, proxy: WireProxy
) -> AsyncIterator[PostgresSessionService]:
    """A session service whose every statement goes through the proxy, on emptied tables."""
    service = PostgresSessionService(database_url=proxy.url, schema=SCHEMA)
    await service.get_session(app_name=APP, user_id=USER, session_id="warm-up")  # migrated
    yield service
    await service.close()


@pytest.fixture
async def memories(
    make_memory_service: Any, proxy: WireProxy
) -> AsyncIterator[Callable[..., Awaitable[PostgresMemoryService]]]:
    """Build memory services through the proxy, on emptied tables, migrated before any fault."""
    built: list[PostgresMemoryService] = []

    async def build(**options: Any) -> PostgresMemoryService:
        options.setdefault("run_worker", False)
        service = PostgresMemoryService(database_url=proxy.url, schema=SCHEMA, **options)
        await service.list_memories(SCOPE)
        built.append(service)
        return service

    yield build
    for service in built:
        await service.close()


async def lost_reply(proxy: WireProxy, match: str, call: Awaitable[T]) -> T:
    """Await `call` with the reply of the first committed transaction that ran a statement
    matching `match` lost."""
    before = proxy.dropped
    proxy.drop_next_commit(match)
    result = await call
    assert proxy.dropped == before + 1 and not proxy.armed, "the fault never fired"
    return result


# ------------------------------------------------------------------ sessions


async def test_create_session_with_its_id_taken_by_its_own_first_attempt(sessions, proxy, rows):
    state = {"k": 1, "app:theme": "dark", "user:lang": "fr"}
    created = await lost_reply(
        proxy,
        f"INSERT INTO {SCHEMA}.sessions",
        sessions.create_session(app_name=APP, user_id=USER, session_id="mine", state=state),
    )
    assert created.id == "mine" and created.state == state
    assert await rows("SELECT count(*) FROM {s}.sessions") == 1
    # Another call's create with the same id is still a genuine conflict.
    with pytest.raises(AlreadyExistsError):
        await sessions.create_session(app_name=APP, user_id=USER, session_id="mine")
    # The returned object carries the stored revision: appending from it just works.
    await sessions.append_event(created, said("hello"))
    assert await rows("SELECT revision FROM {s}.sessions") == 1


async def test_create_session_with_a_generated_id(sessions, proxy, rows):
    created = await lost_reply(
        proxy,
        f"INSERT INTO {SCHEMA}.sessions",
        sessions.create_session(app_name=APP, user_id=USER, state={"k": 1}),
    )
    assert await rows("SELECT id FROM {s}.sessions") == created.id
    assert await rows("SELECT count(*) FROM {s}.sessions") == 1


async def test_append_event_with_state_deltas_is_written_once(sessions, proxy, rows):
    session = await sessions.create_session(app_name=APP, user_id=USER, session_id="s")
    delta = {"k": 1, "app:seen": True, "user:visits": 2}
    event = said("hello", delta=delta)
    appended = await lost_reply(
        proxy, f"INSERT INTO {SCHEMA}.events", sessions.append_event(session, event)
    )
    assert appended.id == event.id and [e.id for e in session.events] == [event.id]
    assert await rows("SELECT count(*) FROM {s}.events") == 1
    assert await rows("SELECT revision FROM {s}.sessions") == 1
    stored = await sessions.get_session(app_name=APP, user_id=USER, session_id="s")
    assert stored is not None and [e.id for e in stored.events] == [event.id]
    assert stored.state == delta
    # No spurious stale-session error on the next append from the same object.
    await sessions.append_event(session, said("again", ts=2.0))
    assert await rows("SELECT count(*) FROM {s}.events") == 2


async def test_append_event_to_a_session_object_built_by_the_caller(sessions, proxy, rows):
    created = await sessions.create_session(app_name=APP, user_id=USER, session_id="s")
    first = await sessions.append_event(created, said("first", ts=1.0))
    # Not loaded through this service (no stored revision on it): checked against storage.
    session = Session(id="s", app_name=APP, user_id=USER, events=[first], last_update_time=1.0)
    await lost_reply(
        proxy,
        f"INSERT INTO {SCHEMA}.events",
        sessions.append_event(session, said("second", ts=2.0)),
    )
    assert session.last_update_time == 2.0 and len(session.events) == 2
    await sessions.append_event(session, said("third", ts=3.0))  # no spurious stale error
    assert await rows("SELECT count(*) FROM {s}.events") == 3


async def test_delete_session_and_erase_user(sessions, proxy, rows):
    for sid in ("a", "b", "gone"):
        session = await sessions.create_session(
            app_name=APP, user_id=USER, session_id=sid, state={"user:x": 1}
        )
        await sessions.append_event(session, said(f"in {sid}"))
    await lost_reply(
        proxy,
        f"DELETE FROM {SCHEMA}.sessions",
        sessions.delete_session(app_name=APP, user_id=USER, session_id="gone"),
    )
    assert await rows("SELECT count(*) FROM {s}.sessions WHERE id = 'gone'") == 0
    counts = await lost_reply(
        proxy, "session_replies", sessions.erase_user(app_name=APP, user_id=USER)
    )
    assert counts == {"sessions": 2, "events": 2, "compaction_summaries": 0, "user_states": 1}
    assert await rows("SELECT count(*) FROM {s}.sessions") == 0


# ------------------------------------------------------------------ memories


async def test_create_memory_returns_the_memory_it_created(memories, proxy, rows):
    service = await memories()
    memory = await lost_reply(
        proxy, f"INSERT INTO {SCHEMA}.memories", service.create_memory("Likes tea.", SCOPE)
    )
    assert await rows("SELECT id::text FROM {s}.memories") == memory.id
    assert await rows("SELECT count(*) FROM {s}.memories") == 1
    assert await rows("SELECT count(*) FROM {s}.memory_revisions") == 1


async def test_create_memories_returns_the_memories_it_created(memories, proxy, rows):
    service = await memories(guard=QuarantineAll())
    created = await lost_reply(
        proxy,
        f"INSERT INTO {SCHEMA}.memories",
        service.create_memories(["Likes tea.", "Lives in Lyon."], SCOPE),
    )
    assert [m.fact for m in created] == ["Likes tea.", "Lives in Lyon."]
    assert all(m.quarantined for m in created)
    assert await rows("SELECT count(*) FROM {s}.memories") == 2
    assert await rows("SELECT count(*) FROM {s}.memory_revisions") == 2


async def test_add_memory_stores_each_entry_once(memories, proxy, rows):
    service = await memories()
    entries = [entry("e1", "Likes tea."), entry("e2", "Lives in Lyon.")]
    await lost_reply(
        proxy,
        f"INSERT INTO {SCHEMA}.memories",
        service.add_memory(app_name=APP, user_id=USER, memories=entries),
    )
    assert await rows("SELECT count(*) FROM {s}.memories") == 2
    assert await rows("SELECT count(*) FROM {s}.memory_revisions") == 2


async def test_update_memory_writes_one_revision(memories, proxy, rows):
    service = await memories()
    memory = await service.create_memory("Likes tea.", SCOPE)
    updated = await lost_reply(
        proxy,
        f"UPDATE {SCHEMA}.memories",
        service.update_memory(memory.id, SCOPE, fact="Likes green tea.", importance=0.9),
    )
    assert updated.id == memory.id and updated.fact == "Likes green tea."
    assert [r.action.value for r in await service.list_revisions(memory.id, SCOPE)] == [
        "CREATED",
        "UPDATED",
    ]


async def test_delete_and_purge_return_what_they_did(memories, proxy, rows):
    service = await memories()
    doomed = await service.create_memory("Likes tea.", SCOPE)
    await service.create_memory("Lives in Lyon.", SCOPE)
    await lost_reply(
        proxy,
        f"DELETE FROM {SCHEMA}.memories",
        service.delete_memory(app_name=APP, user_id=USER, memory_id=doomed.id),
    )
    assert [r.action.value for r in await service.list_revisions(doomed.id, SCOPE)] == [
        "CREATED",
        "DELETED",
    ]
    # Left: one memory and three revisions (the deleted memory's two count as rows too).
    assert await lost_reply(proxy, "memory_watermarks", service.purge(SCOPE)) == 4
    assert await rows("SELECT count(*) FROM {s}.memory_revisions") == 0


async def test_quarantine_approval_and_rejection(memories, proxy, rows):
    service = await memories(guard=QuarantineAll())
    held = await service.create_memory("Likes tea.", SCOPE)
    other = await service.create_memory("Lives in Lyon.", SCOPE)
    approved = await lost_reply(
        proxy, f"UPDATE {SCHEMA}.memories", service.approve_quarantined(held.id, SCOPE)
    )
    assert approved.id == held.id and not approved.quarantined
    assert await lost_reply(
        proxy, f"DELETE FROM {SCHEMA}.memories", service.reject_quarantined(other.id, SCOPE)
    )
    assert await rows("SELECT count(*) FROM {s}.memories") == 1
    actions = "SELECT array_agg(action ORDER BY create_time) FROM {s}.memory_revisions"
    assert await rows(actions + " WHERE memory_id = $1::uuid", held.id) == ["CREATED", "UPDATED"]
    assert await rows(actions + " WHERE memory_id = $1::uuid", other.id) == ["CREATED", "DELETED"]


@pytest.mark.parametrize(
    "match",
    [
        pytest.param(f"DELETE FROM {SCHEMA}.memory_jobs", id="jobs"),
        pytest.param(f"DELETE FROM {SCHEMA}.memory_watermarks", id="memories"),
        pytest.param("session_replies", id="sessions"),
        pytest.param(f"INSERT INTO {SCHEMA}.erasures", id="erasure-record"),
        pytest.param(f"{SCHEMA}.procedure_support", id="procedure-support"),
    ],
)
async def test_erasing_a_user_counts_and_records_once(match, sessions, memories, proxy, rows):
    llm = ScriptedLlm()
    service = await memories(llm=llm)
    await service.create_memory("Likes tea.", SCOPE)
    await service.generate_memories(facts=["Lives in Lyon."], scope=SCOPE)  # a queued job
    session = await sessions.create_session(app_name=APP, user_id=USER, session_id="s")
    await sessions.append_event(session, said("hello"))
    counts = await lost_reply(
        proxy,
        match,
        erase_user(app_name=APP, user_id=USER, session_service=sessions, memory_service=service),
    )
    assert counts == {
        "generation_jobs": 1,
        "memories": 1,
        "revisions": 1,
        "watermarks": 0,
        "profile_fields": 0,
        "profile_revisions": 0,
        "procedure_support": 0,
        "procedures_withdrawn": 0,
        "procedure_revisions": 0,
        "sessions": 1,
        "events": 1,
        "compaction_summaries": 0,
        "user_states": 0,
    }
    assert await rows("SELECT count(*) FROM {s}.erasures") == 1
    assert json.loads(await rows("SELECT counts::text FROM {s}.erasures")) == counts


async def test_pruning_counts_what_it_deleted_after_a_lost_reply(memories, proxy, rows):
    """A batch of `prune_memories` replayed after its reply was lost returns what its first
    attempt deleted (it used to say 0: the replay found nothing left to delete)."""
    service = await memories()
    for n in range(5):
        await service.create_memory(f"Once liked polka, {n} times.", SCOPE, confidence=0.3)
    await service.create_memory("Is a drummer.", SCOPE, confidence=1.0)
    pruned = await lost_reply(
        proxy,
        f"DELETE FROM {SCHEMA}.memories",
        service.prune_memories(APP, user_id=USER, threshold=0.5, min_age=timedelta(0)),
    )
    assert pruned == 5
    assert await rows("SELECT count(*) FROM {s}.memories") == 1
    deleted = "SELECT count(*) FROM {s}.memory_revisions WHERE action = 'DELETED'"
    assert await rows(deleted) == 5


# ------------------------------------------------------------------ generation and its queue


async def test_enqueue_returns_the_job_it_queued(memories, proxy, rows):
    service = await memories(llm=ScriptedLlm([extraction("Likes tea.")]))
    operation = await lost_reply(
        proxy, f"INSERT INTO {SCHEMA}.memory_jobs", service.generate_memories(session=A_SESSION)
    )
    assert await rows("SELECT array_agg(id::text) FROM {s}.memory_jobs") == [operation.id]
    assert await service.worker.run_until_idle() == 1
    assert (await service.get_operation(operation.id, SCOPE)).done


async def test_a_claim_gets_back_the_job_it_claimed(memories, proxy, rows):
    service = await memories(llm=ScriptedLlm([extraction("Likes tea.")]))
    operation = await service.generate_memories(facts=["Likes tea."], scope=SCOPE)
    assert await lost_reply(proxy, "SKIP LOCKED", service.worker.run_once())
    assert await rows("SELECT attempts FROM {s}.memory_jobs") == 1
    assert (await service.get_operation(operation.id, SCOPE)).done
    assert await rows("SELECT count(*) FROM {s}.memories") == 1


async def test_a_generation_is_applied_once_with_its_watermark(memories, proxy, rows):
    llm = ScriptedLlm([extraction("Likes tea.")])
    service = await memories(llm=llm)
    operation = await service.generate_memories(session=A_SESSION)
    # The transaction that writes the memory, its revision, the watermark and completes the job.
    assert await lost_reply(proxy, "status = 'done'", service.worker.run_once())
    done = await service.get_operation(operation.id, SCOPE)
    assert done.done and done.error is None and len(done.generated_memories) == 1
    assert await rows("SELECT attempts FROM {s}.memory_jobs") == 1
    assert await rows("SELECT count(*) FROM {s}.memories") == 1
    assert await rows("SELECT count(*) FROM {s}.memory_revisions") == 1
    assert await rows("SELECT count(*) FROM {s}.memory_watermarks") == 1
    # The watermark moved: the same session again sends the model nothing.
    await service.generate_memories(session=A_SESSION)
    await service.worker.run_until_idle()
    assert len(llm.requests) == 1


async def test_a_failed_try_is_recorded_once(memories, proxy, rows, caplog):
    llm = ScriptedLlm()  # runs dry: the first try fails
    service = await memories(llm=llm, config=TWO_QUICK_TRIES)
    operation = await service.generate_memories(session=A_SESSION)
    with caplog.at_level(logging.WARNING, logger="adk_memory.memory.jobs"):
        assert await lost_reply(proxy, "THEN 'dead' ELSE 'pending'", service.worker.run_once())
    assert "(pending)" in caplog.text  # the status the try set, not "no longer owned"
    status = "SELECT status || ' ' || attempts FROM {s}.memory_jobs"
    assert await rows(status) == "pending 1"
    llm.add(extraction("Likes tea."))
    assert await service.worker.run_until_idle() == 1
    assert (await service.get_operation(operation.id, SCOPE)).done
    assert await rows(status) == "done 2"


async def test_retrying_a_dead_job_says_it_did(memories, proxy, rows):
    config = MemoryBankConfig(generation=GenerationConfig(max_attempts=1))
    service = await memories(llm=ScriptedLlm(), config=config)  # runs dry: the try fails
    operation = await service.generate_memories(session=A_SESSION)
    await service.worker.run_once()
    assert await rows("SELECT status FROM {s}.memory_jobs") == "dead"
    queue = JobQueue(service.database)
    assert await lost_reply(proxy, "attempts = 0", queue.retry_dead(operation.id))
    assert await rows("SELECT status || ' ' || attempts FROM {s}.memory_jobs") == "pending 0"


# ------------------------------------------------------------------ immediate shutdowns


OUTAGE_ERRORS = (
    OSError,  # the socket is gone or refuses (ConnectionError is one)
    asyncpg.exceptions.InterfaceError,  # ConnectionDoesNotExistError: lost mid-statement
    asyncpg.exceptions.OperatorInterventionError,  # AdminShutdown, CannotConnectNow (recovery)
    asyncpg.exceptions.PostgresConnectionError,
    sqlalchemy.exc.DBAPIError,
    AsyncAdapt_asyncpg_dbapi.Error,  # a failed connect, as SQLAlchemy's pool raises it
    TimeoutError,  # adk_memory's DatabaseTimeoutError is one
)
"""What a call may raise while the server is down: each says the database is unreachable. A
write that raised one committed once or not at all."""

SHUTDOWNS = 4


@dataclass
class Writer:
    """Writes in a loop through the public API, as an application retrying its calls would,
    and keeps what it knows: the writes confirmed, the uncertain ones, each error's type."""

    sessions: PostgresSessionService
    memories: PostgresMemoryService
    server_down: Callable[[], bool]
    rounds: int = 0
    sessions_made: list[str] = field(default_factory=list)
    facts_confirmed: list[str] = field(default_factory=list)
    facts_uncertain: list[str] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    spurious: list[str] = field(default_factory=list)

    async def call(self, make: Callable[[], Awaitable[T]], *, retry: bool) -> tuple[bool, T | None]:
        """(True, result) once a call succeeds; (False, None) after an outage error when the
        caller would not retry (its write is then uncertain). A retry is the same call again
        (same ids), as a careful application makes it."""
        while True:
            down_at_start = self.server_down()
            try:
                return True, await make()
            except OUTAGE_ERRORS as exc:
                if not (down_at_start or self.server_down()):
                    self.spurious.append(f"{type(exc).__name__}: {exc} (server up)")
                name = type(exc).__name__
                self.errors[name] = self.errors.get(name, 0) + 1
                if not retry:
                    return False, None
                await asyncio.sleep(0.05)

    async def run(self) -> None:
        while True:
            await self.write_round(self.rounds)
            self.rounds += 1

    async def write_round(self, n: int) -> None:
        """A session (its id chosen here) with two appends, a memory and a `MemoryEntry`."""
        sid = f"s{n}"
        tries = 0

        async def create() -> Session:
            nonlocal tries
            tries += 1
            try:
                return await self.sessions.create_session(
                    app_name=APP, user_id=USER, session_id=sid, state={"n": n}
                )
            except AlreadyExistsError:
                if tries == 1:
                    raise  # nobody else uses this id: a first call never finds it taken
                # A retry: this caller's own earlier call, whose reply was lost, created it.
                found = await self.sessions.get_session(app_name=APP, user_id=USER, session_id=sid)
                assert found is not None
                return found

        _, session = await self.call(create, retry=True)
        assert session is not None
        self.sessions_made.append(sid)
        for i in range(2):
            event = said(f"turn {i}", ts=float(n * 10 + i + 1), delta={"user:last": n})
            await self.call(partial(self.sessions.append_event, session, event), retry=True)
        fact = f"Fact number {n}."
        made, _ = await self.call(partial(self.memories.create_memory, fact, SCOPE), retry=False)
        (self.facts_confirmed if made else self.facts_uncertain).append(fact)
        entries = [entry(f"e{n}", f"Entry number {n}.")]
        add = partial(self.memories.add_memory, app_name=APP, user_id=USER, memories=entries)
        await self.call(add, retry=True)


async def check_exactly_once(conn: asyncpg.Connection, writer: Writer, done: int) -> None:
    """Every write of the first `done` rounds is stored exactly once (or, for a create_memory
    whose reply never came, at most once), and nothing anywhere twice."""
    schema = "adk_memory"  # the services' default schema, on the server of their own
    sessions = set(writer.sessions_made[:done])
    stored = {
        r[0]: r[1]
        for r in await conn.fetch(
            f"SELECT s.id, count(e.*) FROM {schema}.sessions s "
            f"LEFT JOIN {schema}.events e ON e.session_id = s.id GROUP BY s.id"
        )
    }
    assert all(stored.get(sid) == 2 for sid in sessions), "a confirmed append is missing"
    assert not await conn.fetch(
        f"SELECT session_id, id FROM {schema}.events GROUP BY session_id, id HAVING count(*) > 1"
    ), "an event was stored twice"
    facts = {
        r[0]: r[1]
        for r in await conn.fetch(f"SELECT fact, count(*) FROM {schema}.memories GROUP BY fact")
    }
    assert all(count == 1 for count in facts.values()), "a memory was stored twice"
    for n in range(done):
        assert facts.get(f"Entry number {n}.") == 1
    assert all(facts.get(f) == 1 for f in writer.facts_confirmed if int(f.split()[2][:-1]) < done)
    assert not await conn.fetch(
        f"SELECT memory_id FROM {schema}.memory_revisions GROUP BY memory_id HAVING count(*) > 1"
    ), "a memory got two CREATED revisions"


async def _wait_for(predicate: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def test_writes_through_immediate_shutdowns_are_stored_once(server_dir: Path):
    data_dir = embedded.resolve_data_dir(server_dir / "pgdata")
    url = await asyncio.to_thread(embedded.embedded_url, data_dir)
    server = embedded.wheel().get_server(data_dir)
    conn = await asyncpg.connect(embedded.superuser_url(data_dir))  # ALTER SYSTEM: a superuser's
    # Crash recovery starts by syncing the data directory file by file (2 s here, under load);
    # one syncfs call does the same for the test in a fraction of that.
    await conn.execute("ALTER SYSTEM SET recovery_init_sync_method = 'syncfs'")
    await conn.close()
    down = False
    sessions = PostgresSessionService(database_url=url)
    memories = PostgresMemoryService(database_url=url, run_worker=False)
    writer = Writer(sessions, memories, server_down=lambda: down)
    task = asyncio.create_task(writer.run())
    try:
        for _ in range(SHUTDOWNS):
            start = writer.rounds
            await _wait_for(lambda s=start: writer.rounds >= s + 3 or task.done(), "writes")
            down = True
            await asyncio.to_thread(
                embedded.wheel().pg_ctl,
                ["-m", "immediate", "-w", "stop"],
                pgdata=data_dir,
                user=server.system_user,
            )
            met = sum(writer.errors.values())
            await _wait_for(lambda m=met: sum(writer.errors.values()) > m, "a write to fail")
            await asyncio.to_thread(server.ensure_postgres_running)
            down = False
            done = writer.rounds
            await _wait_for(lambda d=done: writer.rounds >= d + 2 or task.done(), "recovery")
            assert not task.done(), task.exception()
            checker = await all_rows(url)
            try:
                await check_exactly_once(checker, writer, writer.rounds)
            finally:
                await checker.close()
        assert not writer.spurious, writer.spurious
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await sessions.close()
        await memories.close()
        await asyncio.to_thread(embedded.stop_embedded, data_dir)
