"""No pooled connection is ever left inside a transaction, however a write is interrupted.

A connection returned to the pool inside a transaction poisons the next borrower: its
autocommit statement joins the open transaction and is never committed, and its locks block
everyone else (a CI run once hung on a TRUNCATE behind a session INSERT left uncommitted this
way). asyncpg's own transaction block cannot prevent it: a cancellation that lands while BEGIN
or ROLLBACK is in flight leaves the server in a transaction the driver has not recorded.

So every write path (sessions: create, append, delete; memory: create, update, delete; a
generation applied by the worker; erasing a user) is run as a task cancelled at its 1st,
2nd, ... k-th suspension, until one run finishes before the k-th. After each cancellation:
no connection of the pool is idle in a transaction, every connection is back in the pool, and
each write is whole or absent: every group of rows it writes together is as before the write
or as after it, never in between.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.session import Session
from google.genai import types
from rls_checks import EVERY_ROW
from sqlalchemy.ext.asyncio import AsyncEngine

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.adk.erasure import erase_user
from adk_memory.config import DatabaseTimeouts
from adk_memory.db import make_engine
from adk_memory.testing import ScriptedLlm

SCHEMA = "adk_memory_leaks"
POOL = "adk-memory-leak-test"
"""The application name the pool under test connects with: how pg_stat_activity tells its
connections from the checker's."""

APP, USER = "app", "u1"
SCOPE = {"app_name": APP, "user_id": USER}
DEADLINE = 60.0
"""Seconds a write, or the wait for its connections to settle, may take before the test fails
instead of hanging."""

Snapshot = dict[str, tuple[Any, ...]]
"""A write's rows, by group: the rows each group holds must change together."""


class _CancelAt:
    """Awaits a coroutine, cancelling the running task at the coroutine's `k`-th suspension:
    the await it is blocked on then raises CancelledError, exactly as when a client hangs up
    or a worker is stopped at that point."""

    def __init__(self, coroutine: Awaitable[object], k: int) -> None:
        self._coroutine = coroutine
        self._k = k
        self.reached = False

    def __await__(self) -> Generator[Any, Any, object]:
        inner = self._coroutine.__await__()
        sent: Any = None
        thrown: BaseException | None = None
        for suspension in itertools.count(1):
            try:
                yielded = inner.throw(thrown) if thrown is not None else inner.send(sent)
            except StopIteration as stop:
                return stop.value
            if suspension == self._k:
                self.reached = True
                task = asyncio.current_task()
                assert task is not None
                task.cancel()  # lands on the await `yielded` stands for
            try:
                sent, thrown = (yield yielded), None
            except BaseException as exc:  # handed on to the coroutine
                sent, thrown = None, exc
        raise AssertionError("unreachable")


class Outcome(enum.Enum):
    CUT_OFF = "the cancellation cut the write off"
    FINISHED = "the write finished before its k-th suspension"
    FINISHED_ANYWAY = "the write finished although cancelled"
    """Python 3.10 and 3.11's `asyncio.wait_for` returns the result of an inner task that is
    done when the cancellation arrives, instead of raising it (fixed in 3.12); the write then
    runs to its end, which is as good as whole."""


async def cancelled_at(write: Callable[[], Awaitable[object]], k: int) -> Outcome:
    """Run `write()` in a task cancelled at its k-th suspension."""
    step = _CancelAt(write(), k)

    async def drive() -> object:
        return await step

    task = asyncio.ensure_future(drive())
    done, _ = await asyncio.wait({task}, timeout=DEADLINE)
    if not done:
        task.cancel()
        pytest.fail(f"the write hung (cancelled at suspension {k})")
    if task.cancelled():
        return Outcome.CUT_OFF
    task.result()  # a failure other than the cancellation is a failure of the test
    return Outcome.FINISHED_ANYWAY if step.reached else Outcome.FINISHED


@dataclass
class World:
    """The pool under test, the services built on it, and a separate connection that checks
    the database and resets it (with a lock timeout: a leaked lock fails, never hangs)."""

    engine: AsyncEngine
    checker: asyncpg.Connection

    def sessions(self) -> PostgresSessionService:
        """A new service each run, so each run migrates (a transaction) first."""
        return PostgresSessionService(engine=self.engine, schema=SCHEMA)

    def memory(self) -> PostgresMemoryService:
        llm = ScriptedLlm(responder=lambda _: _EXTRACTION)
        return PostgresMemoryService(engine=self.engine, schema=SCHEMA, llm=llm, run_worker=False)

    async def reset(self) -> None:
        tables = await self.checker.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = $1 "
            "AND tablename NOT LIKE 'schema%'",
            SCHEMA,
        )
        # DELETE, not TRUNCATE: the tables are tiny, and hundreds of TRUNCATEs leave the
        # server hundreds of files to checkpoint and unlink at shutdown.
        await self.checker.execute("; ".join(f"DELETE FROM {SCHEMA}.{row[0]}" for row in tables))

    async def settled(self) -> None:
        """Wait (polling, with a deadline) until every connection of the pool is idle: none
        inside a transaction, none still running a statement. A connection thrown away
        mid-statement is gone once its server process has finished the statement and seen the
        socket close; one returned to the pool inside a transaction stays there, and fails the
        test. Then every connection must be back in the pool."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DEADLINE
        while True:
            busy = await self.checker.fetch(
                "SELECT state, query FROM pg_stat_activity "
                "WHERE application_name = $1 AND state IS DISTINCT FROM 'idle'",
                POOL,
            )
            if not busy:
                break
            if loop.time() > deadline:
                pytest.fail(f"connections not idle: {[tuple(r) for r in busy]}")
            await asyncio.sleep(0.02)
        assert self.engine.pool.checkedout() == 0  # type: ignore[attr-defined]

    async def count(self, table: str, where: str = "true") -> int:
        query = f"SELECT count(*) FROM {SCHEMA}.{table} WHERE {where}"
        return int(await self.checker.fetchval(query))


_EXTRACTION = json.dumps(
    {"facts": [{"fact": "The user prefers window seats.", "topic": "USER_PREFERENCES"}]}
)


def said(text: str, **actions: Any) -> Event:
    return Event(
        author="user",
        invocation_id="inv",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(**actions),
    )


@dataclass(frozen=True)
class WritePath:
    """One write: what must exist before it (`prepare`, returning what the write needs), the
    write itself, and its rows grouped by what must change together (`snapshot`).
    `resumable`: a write of several steps, each whole (erasure), which a second run completes.
    """

    prepare: Callable[[World], Awaitable[Any]]
    write: Callable[[World, Any], Awaitable[object]]
    snapshot: Callable[[World], Awaitable[Snapshot]]
    resumable: bool = False


async def _nothing(world: World) -> None:
    return None


async def _a_session(world: World) -> Session:
    sessions = world.sessions()
    session = await sessions.create_session(
        app_name=APP, user_id=USER, session_id="s1", state={"k": 0, "user:u": 0}
    )
    await sessions.append_event(session, said("I like window seats"))
    return session


async def _a_memory(world: World) -> str:
    return (await world.memory().create_memory("The user likes tea.", SCOPE)).id


async def _a_job(world: World) -> None:
    session = Session(id="s1", app_name=APP, user_id=USER, events=[said("I like window seats")])
    await world.memory().generate_memories(session=session)


async def _session_rows(world: World) -> Snapshot:
    state = await world.checker.fetchrow(
        f"SELECT (SELECT array_agg(revision || ':' || state::text) FROM {SCHEMA}.sessions), "
        f"(SELECT array_agg(state::text) FROM {SCHEMA}.app_states), "
        f"(SELECT array_agg(state::text) FROM {SCHEMA}.user_states), "
        f"(SELECT count(*) FROM {SCHEMA}.events)"
    )
    return {"session": tuple(state)}


async def _memory_rows(world: World) -> Snapshot:
    facts = await world.checker.fetchval(
        f"SELECT array_agg(fact ORDER BY fact) FROM {SCHEMA}.memories"
    )
    return {"memory": (facts, await world.count("memory_revisions"))}


async def _generation_rows(world: World) -> Snapshot:
    return {
        "generation": (
            await world.count("memories"),
            await world.count("memory_revisions"),
            await world.count("memory_watermarks"),
            await world.count("memory_jobs", "status = 'done'"),
        )
    }


async def _user_rows(world: World) -> Snapshot:
    return {
        "jobs": (await world.count("memory_jobs"),),
        "memory": (
            await world.count("memories"),
            await world.count("memory_revisions"),
            await world.count("memory_watermarks"),
        ),
        "sessions": (
            await world.count("sessions"),
            await world.count("events"),
            await world.count("user_states"),
        ),
    }


async def _erase(world: World, _: None) -> object:
    return await erase_user(
        app_name=APP, user_id=USER, session_service=world.sessions(), memory_service=world.memory()
    )


async def _everything_of_a_user(world: World) -> None:
    await _a_session(world)
    await _a_job(world)
    assert await world.memory().worker.run_once()  # a generated memory, a watermark, a done job
    await _a_memory(world)
    await _a_job(world)  # and one still pending


PATHS: Mapping[str, WritePath] = {
    "session create": WritePath(
        _nothing,
        lambda world, _: world.sessions().create_session(
            app_name=APP, user_id=USER, session_id="s1", state={"k": 1, "app:a": 1, "user:u": 1}
        ),
        _session_rows,
    ),
    "session append": WritePath(
        _a_session,
        lambda world, session: world.sessions().append_event(
            session, said("Make it an aisle", state_delta={"k": 2, "app:a": 2, "user:u": 2})
        ),
        _session_rows,
    ),
    "session delete": WritePath(
        _a_session,
        lambda world, session: world.sessions().delete_session(
            app_name=APP, user_id=USER, session_id=session.id
        ),
        _session_rows,
    ),
    "memory create": WritePath(
        _nothing,
        lambda world, _: world.memory().create_memory("The user likes tea.", SCOPE),
        _memory_rows,
    ),
    "memory update": WritePath(
        _a_memory,
        lambda world, memory_id: world.memory().update_memory(
            memory_id, SCOPE, fact="The user likes coffee."
        ),
        _memory_rows,
    ),
    "memory delete": WritePath(
        _a_memory,
        lambda world, memory_id: world.memory().delete_memory(memory_id=memory_id, scope=SCOPE),
        _memory_rows,
    ),
    "generation apply": WritePath(
        _a_job, lambda world, _: world.memory().worker.run_once(), _generation_rows
    ),
    "erase": WritePath(_everything_of_a_user, _erase, _user_rows, resumable=True),
}


@pytest.fixture
async def world(database_url: str) -> AsyncIterator[World]:
    """A pool of its own (named `POOL` in pg_stat_activity) on a schema of its own, migrated."""
    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
    checker = await asyncpg.connect(
        dsn, server_settings={"lock_timeout": "10s", "statement_timeout": "60s", **EVERY_ROW}
    )
    await checker.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    separator = "&" if "?" in database_url else "?"
    # No idle-in-transaction backstop here: it would end a leaked transaction this test must see.
    engine = make_engine(
        f"{database_url}{separator}application_name={POOL}",
        DatabaseTimeouts(idle_in_transaction=None),
        pool_size=2,
        max_overflow=2,
    )
    built = World(engine, checker)
    try:
        await built.sessions().list_sessions(app_name=APP, user_id=USER)
        await built.memory().list_memories(SCOPE)
        yield built
    finally:
        await engine.dispose()
        await checker.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        await checker.close()


@pytest.mark.parametrize("name", list(PATHS))
async def test_a_write_cancelled_at_any_await_leaves_no_transaction_and_no_half_write(
    world: World, name: str
):
    path = PATHS[name]
    await world.reset()
    context = await path.prepare(world)
    before = await path.snapshot(world)
    await path.write(world, context)
    after = await path.snapshot(world)
    assert before != after, "the write under test changed nothing"

    cut_off = 0
    for k in itertools.count(1):
        await world.reset()
        context = await path.prepare(world)
        outcome = await cancelled_at(functools.partial(path.write, world, context), k)
        await world.settled()
        state = await path.snapshot(world)
        if outcome is not Outcome.CUT_OFF:
            assert state == after
            if outcome is Outcome.FINISHED:
                break
            continue
        cut_off += 1
        for group, rows in state.items():
            assert rows in (before[group], after[group]), (
                f"{name} cancelled at suspension {k} left {group} half written: {rows}"
            )
        if path.resumable:
            await path.write(world, context)
            await world.settled()
            assert await path.snapshot(world) == after
    assert cut_off > 0
