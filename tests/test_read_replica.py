"""Read replicas, on a real streaming replica: an embedded primary and a hot standby made with
`pg_basebackup -R` (`adk_memory.db.standby`), started once for this module.

Replay on the standby is paused (`pg_wal_replay_pause()`) to make it lag as long as a test
needs: what a read then shows says which server answered it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import asyncpg
import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.genai import types
from rls_checks import all_rows

from adk_memory import (
    PostgresMemoryService,
    PostgresSessionService,
    memory_service_from_uri,
    session_service_from_uri,
)
from adk_memory.adk.erasure import erase_user
from adk_memory.config import DatabaseTimeouts
from adk_memory.db import make_engine
from adk_memory.db import replica as replica_rules
from adk_memory.db.embedded import temporary_server
from adk_memory.db.migrations import SchemaVersionError
from adk_memory.db.standby import temporary_standby
from adk_memory.errors import InputValidationError
from adk_memory.testing import HashEmbedder, ScriptedLlm

SCHEMA = "adk_memory_replica"
APP = "app"


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, str]]:
    """(primary URL, standby URL): a primary and a hot standby streaming from it."""
    with temporary_server("adk-memory-primary-") as primary, temporary_standby(primary) as standby:
        yield primary, standby


def _dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


async def _caught_up(primary: str, standby: str) -> None:
    """Wait (with a deadline) until the standby has replayed everything the primary wrote."""
    p, s = await asyncpg.connect(_dsn(primary)), await asyncpg.connect(_dsn(standby))
    try:
        target = await p.fetchval("SELECT pg_current_wal_lsn()")
        deadline = time.monotonic() + 30
        while await s.fetchval("SELECT pg_last_wal_replay_lsn() < $1", target):
            assert time.monotonic() < deadline, "the standby did not catch up"
            await asyncio.sleep(0.02)
    finally:
        await p.close()
        await s.close()


@asynccontextmanager
async def paused(standby: str) -> AsyncIterator[None]:
    """Replay paused on the standby for the block: it holds what it had, nothing newer."""
    conn = await asyncpg.connect(_dsn(standby))
    try:
        await conn.execute("SELECT pg_wal_replay_pause()")
        yield
    finally:
        await conn.execute("SELECT pg_wal_replay_resume()")
        await conn.close()


@pytest.fixture
async def make(servers: tuple[str, str]) -> AsyncIterator[Any]:
    """Build services on the pair (`kind(**options)`), on emptied tables; closed afterwards."""
    primary, standby = servers
    built: list[Any] = []

    def build(kind: Any, **options: Any) -> Any:
        options.setdefault("read_url", standby)
        options.setdefault("schema", SCHEMA)
        service = kind(primary, **options)
        built.append(service)
        return service

    conn = await asyncpg.connect(_dsn(primary))
    try:
        tables = await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = $1 "
            "AND tablename NOT IN ('schema_versions', 'vector_steps')",
            SCHEMA,
        )
        if tables:
            await conn.execute(f"TRUNCATE {', '.join(f'{SCHEMA}.{t[0]}' for t in tables)} CASCADE")
    finally:
        await conn.close()
    await _caught_up(primary, standby)
    yield build
    for service in built:
        await service.close()


def _event(text: str, author: str = "user", **delta: Any) -> Event:
    from google.adk.events.event_actions import EventActions

    return Event(
        author=author,
        invocation_id="inv",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=delta),
    )


async def _recovering(service: Any) -> bool:
    """Whether a read routed to the replica is answered by a server in recovery (a standby)."""
    value = await service.database.run(
        lambda conn: conn.fetchval("SELECT pg_is_in_recovery()"), replica=True
    )
    return bool(value)


async def test_reads_go_to_the_standby(make, servers):
    sessions = make(PostgresSessionService)
    writer = make(PostgresSessionService)  # another process, as far as `sessions` knows
    session = await sessions.create_session(app_name=APP, user_id="u1", session_id="s1")
    await sessions.append_event(session, _event("first"))
    await _caught_up(*servers)
    assert await _recovering(sessions)
    async with paused(servers[1]):
        theirs = await writer.get_session(app_name=APP, user_id="u1", session_id="s1")
        await writer.append_event(theirs, _event("second"))
        await writer.create_session(app_name=APP, user_id="u1", session_id="s2")
        # Another writer's changes are not on the standby yet: these reads were served there.
        listed = await sessions.list_sessions(app_name=APP, user_id="u1")
        assert [s.id for s in listed.sessions] == ["s1"]
        read = await sessions.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert [e.content.parts[0].text for e in read.events] == ["first"]
        # The writer itself sees its own writes (from the primary).
        own = await writer.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert [e.content.parts[0].text for e in own.events] == ["first", "second"]
    await _caught_up(*servers)
    listed = await sessions.list_sessions(app_name=APP, user_id="u1")
    assert sorted(s.id for s in listed.sessions) == ["s1", "s2"]


async def test_a_session_read_sees_the_callers_own_writes_while_the_standby_lags(make, servers):
    sessions = make(PostgresSessionService)
    async with paused(servers[1]):
        session = await sessions.create_session(
            app_name=APP, user_id="u1", session_id="s1", state={"user:name": "Ada"}
        )
        created = await sessions.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert created is not None and created.state["user:name"] == "Ada"
        await sessions.append_event(session, _event("hello", step=1))
        await sessions.append_event(session, _event("again", step=2))
        read = await sessions.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert [e.content.parts[0].text for e in read.events] == ["hello", "again"]
        assert read.state["step"] == 2
        # ... and a further append on what was read is no stale write.
        await sessions.append_event(read, _event("third"))
        # Listings may lag: the standby has not seen the session yet.
        assert (await sessions.list_sessions(app_name=APP, user_id="u1")).sessions == []
        await sessions.delete_session(app_name=APP, user_id="u1", session_id="s1")
        assert await sessions.get_session(app_name=APP, user_id="u1", session_id="s1") is None


async def test_an_erased_user_stays_erased_while_the_standby_lags(make, servers):
    sessions = make(PostgresSessionService)
    await sessions.create_session(app_name=APP, user_id="u1", session_id="s1")
    await sessions.create_session(app_name=APP, user_id="u2", session_id="s1")
    await _caught_up(*servers)
    async with paused(servers[1]):
        await sessions.erase_user(app_name=APP, user_id="u1")
        assert await sessions.get_session(app_name=APP, user_id="u1", session_id="s1") is None
        # Another user's session is still read (from the standby) as it is.
        assert await sessions.get_session(app_name=APP, user_id="u2", session_id="s1")


async def test_an_erased_users_reads_wait_for_the_standby_to_replay_the_erasure(make, servers):
    """Right after `erase_user`, with replay paused, searches and listings of the erased user
    (and of their app) are answered by the primary: nothing erased comes back. Other users'
    reads still go to the standby, and the user's go back to it once it has replayed."""
    sessions = make(PostgresSessionService)
    memories = make(PostgresMemoryService)
    writer = make(PostgresMemoryService)  # another process, as far as `memories` knows
    u1, u2 = {"app_name": APP, "user_id": "u1"}, {"app_name": APP, "user_id": "u2"}
    await sessions.create_session(app_name=APP, user_id="u1", session_id="s1")
    await memories.create_memory("Ada likes green tea.", u1)
    await memories.create_memory("Bo likes green tea.", u2)
    await _caught_up(*servers)
    async with paused(servers[1]):
        await erase_user(
            app_name=APP, user_id="u1", session_service=sessions, memory_service=memories
        )
        assert (
            await memories.search_memory(app_name=APP, user_id="u1", query="tea")
        ).memories == []
        assert (await memories.list_memories(u1)).memories == []
        assert await memories.retrieve_memories(u1, search_query="tea") == []
        assert (await sessions.list_sessions(app_name=APP, user_id="u1")).sessions == []
        assert (await sessions.list_sessions(app_name=APP)).sessions == []
        assert [m.fact for m in (await memories.list_memories()).memories] == [
            "Bo likes green tea."
        ]
        # Another user's reads are still the standby's: it does not show what is new.
        await writer.create_memory("Bo plays chess.", u2)
        assert [m.fact for m in (await memories.list_memories(u2)).memories] == [
            "Bo likes green tea."
        ]
    await _caught_up(*servers)
    assert (await memories.list_memories(u1)).memories == []  # the standby has replayed it
    async with paused(servers[1]):
        await writer.create_memory("Ada came back.", u1)
        # The fence went at the first read the standby could serve: the standby answers again.
        assert (await memories.list_memories(u1)).memories == []


async def test_an_adk_runner_turn_while_the_standby_lags(make, servers):
    """ADK's Runner appends events and reads the session back within a turn: with replay
    paused every read it makes would be stale, yet the turn and the next both see their own
    events and never hit the stale-writer check."""
    sessions = make(PostgresSessionService)
    llm = ScriptedLlm(["Hello Ada.", "You are Ada."])
    agent = LlmAgent(name="assistant", model=llm, instruction="Answer.", output_key="answer")
    runner = Runner(app_name=APP, agent=agent, session_service=sessions)
    async with paused(servers[1]):
        session = await sessions.create_session(app_name=APP, user_id="u1")
        for text in ("I am Ada.", "Who am I?"):
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(
                user_id="u1", session_id=session.id, new_message=message
            ):
                pass
        stored = await sessions.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert stored.state["answer"] == "You are Ada."
    assert len(stored.events) == 4
    second_request = [p.text for c in llm.requests[1].contents for p in c.parts or []]
    assert second_request[:2] == ["I am Ada.", "Hello Ada."]


async def test_writes_and_migrations_go_to_the_primary(make, servers):
    """With replay paused, every write succeeds (the standby is read-only: a write routed there
    would fail) and is on the primary only; a new schema is migrated on the primary and the
    standby is read once it has replayed the migration."""
    primary, standby = servers
    async with paused(standby):
        fresh = make(PostgresSessionService, schema="adk_memory_replica_new")
        session = await fresh.create_session(app_name=APP, user_id="u1", session_id="s1")
        await fresh.append_event(session, _event("hi", **{"user:k": "v"}))
        conn = await all_rows(primary)
        try:
            count = await conn.fetchval("SELECT count(*) FROM adk_memory_replica_new.events")
        finally:
            await conn.close()
        assert count == 1
        conn = await asyncpg.connect(_dsn(standby))
        try:
            missing = await conn.fetchval("SELECT to_regclass('adk_memory_replica_new.events')")
        finally:
            await conn.close()
        assert missing is None
        # A listing waits for the standby to have the schema: unpaused below, it then answers.
        listing = asyncio.ensure_future(fresh.list_sessions(app_name=APP, user_id="u1"))
        await asyncio.sleep(0.2)
        assert not listing.done()
    listed = await listing
    assert [s.id for s in listed.sessions] == ["s1"]
    assert await _recovering(fresh)


async def test_an_unreachable_replica_sends_reads_to_the_primary(make, servers, caplog):
    nowhere = servers[1].replace("port=5433", "port=5499")
    sessions = make(PostgresSessionService, read_url=nowhere)
    await sessions.create_session(app_name=APP, user_id="u1", session_id="s1")
    with caplog.at_level(logging.WARNING, logger="adk_memory.db.replica"):
        listed = await sessions.list_sessions(app_name=APP, user_id="u1")
        assert [s.id for s in listed.sessions] == ["s1"]
        assert not await _recovering(sessions)
    # One warning: after a failure the replica is left alone for a while, not tried per read.
    warnings = [r for r in caplog.records if "read replica is unavailable" in r.getMessage()]
    assert len(warnings) == 1


async def test_a_replica_of_another_database_fails_clearly(make, servers, monkeypatch):
    """A read URL naming a database that is not a replica of the primary (here: the standby's
    `template1`, never migrated) is a `SchemaVersionError` once the catch-up wait is over."""
    monkeypatch.setattr(replica_rules, "CATCH_UP", timedelta(seconds=0.3))
    other = servers[1].replace("/postgres?", "/template1?")
    sessions = make(PostgresSessionService, read_url=other)
    await sessions.create_session(app_name=APP, user_id="u1", session_id="s1")
    with pytest.raises(SchemaVersionError, match="replica of the primary"):
        await sessions.list_sessions(app_name=APP, user_id="u1")
    # The next reads fail at once, with the same message, instead of waiting again.
    monkeypatch.setattr(replica_rules, "CATCH_UP", timedelta(hours=1))
    with pytest.raises(SchemaVersionError, match="replica of the primary"):
        await sessions.list_sessions(app_name=APP, user_id="u1")
    # Writes and reads that never go to the replica are unaffected.
    await sessions.delete_session(app_name=APP, user_id="u1", session_id="s1")


async def test_memory_searches_and_listings_read_the_standby(make, servers):
    memories = make(PostgresMemoryService)
    scope = {"app_name": APP, "user_id": "u1"}
    await memories.create_memory("Ada likes green tea.", scope)
    await _caught_up(*servers)
    async with paused(servers[1]):
        new = await memories.create_memory("Ada plays the cello.", scope)
        found = await memories.retrieve_memories(scope, search_query="cello")
        assert found == []  # the standby has not replayed it: searches may lag
        listed = await memories.list_memories(scope)
        assert [m.fact for m in listed.memories] == ["Ada likes green tea."]
        assert await memories.list_revisions(new.id, scope) == []
        # A read by id goes to the primary.
        assert (await memories.get_memory(new.id, scope)).fact == "Ada plays the cello."
    await _caught_up(*servers)
    found = await memories.retrieve_memories(scope, search_query="cello")
    assert [r.memory.fact for r in found] == ["Ada plays the cello."]
    response = await memories.search_memory(app_name=APP, user_id="u1", query="tea")
    assert [m.content.parts[0].text for m in response.memories] == ["Ada likes green tea."]
    assert await _recovering(memories)


async def test_vector_search_reads_the_standby_once_it_has_the_vector_index(make, servers):
    """An embedder's vector column and index are made on the primary; the standby serves
    hybrid search once it has replayed them."""
    memories = make(
        PostgresMemoryService, schema="adk_memory_replica_vectors", embedder=HashEmbedder()
    )
    scope = {"app_name": APP, "user_id": "u1"}
    await memories.create_memory("Ada plays the cello on Sundays.", scope)
    await _caught_up(*servers)
    found = await memories.retrieve_memories(scope, search_query="cello Sundays")
    assert [r.memory.fact for r in found] == ["Ada plays the cello on Sundays."]
    assert found[0].distance is not None
    assert await _recovering(memories)


async def test_users_stay_apart_through_the_replica(make, servers):
    sessions = make(PostgresSessionService)
    memories = make(PostgresMemoryService)
    ada = {"app_name": APP, "user_id": "ada"}
    await memories.create_memory("Ada's door code is 4417.", ada)
    await sessions.create_session(app_name=APP, user_id="ada", session_id="shared-id")
    await _caught_up(*servers)
    async with paused(servers[1]):
        # Written while the standby lags: read from the primary for ada, never for bob.
        ada_session = await sessions.get_session(
            app_name=APP, user_id="ada", session_id="shared-id"
        )
        await sessions.append_event(ada_session, _event("secret", **{"user:code": "4417"}))
        bob = {"app_name": APP, "user_id": "bob"}
        assert (
            await sessions.get_session(app_name=APP, user_id="bob", session_id="shared-id") is None
        )
        assert (await sessions.list_sessions(app_name=APP, user_id="bob")).sessions == []
        assert await sessions.get_user_state(app_name=APP, user_id="bob") == {}
        assert await memories.retrieve_memories(bob, search_query="door code 4417") == []
        assert (await memories.list_memories(bob)).memories == []
        # bob writing a session of the same id changes nothing of ada's.
        await sessions.create_session(app_name=APP, user_id="bob", session_id="shared-id")
        again = await sessions.get_session(app_name=APP, user_id="ada", session_id="shared-id")
        assert [e.content.parts[0].text for e in again.events] == ["secret"]
    await _caught_up(*servers)
    # Caught up, the standby answers: still nothing of ada's for bob.
    bob_session = await sessions.get_session(app_name=APP, user_id="bob", session_id="shared-id")
    assert bob_session.events == [] and "user:code" not in bob_session.state
    assert await memories.retrieve_memories(bob, search_query="door code 4417") == []
    assert await memories.retrieve_memories(ada, search_query="door code 4417") != []


async def test_read_urls_from_the_uri_and_the_environment(servers):
    primary, standby = servers
    from urllib.parse import quote

    uri = f"{primary}&read_url={quote(standby, safe='')}"
    sessions = session_service_from_uri(uri, environ={})
    memories = memory_service_from_uri(primary, environ={"ADK_MEMORY_READ_DATABASE_URL": standby})
    try:
        assert sessions.database.has_replica and memories.database.has_replica
        assert await _recovering(sessions)
        assert await _recovering(memories)
    finally:
        await sessions.close()
        await memories.close()
    unreplicated = session_service_from_uri(primary, environ={})
    assert not unreplicated.database.has_replica
    with pytest.raises(InputValidationError, match="embedded server has no replicas"):
        session_service_from_uri("adk-memory://", environ={"ADK_MEMORY_READ_DATABASE_URL": standby})
    with pytest.raises(InputValidationError, match="read_url"):
        session_service_from_uri(f"{primary}&read_url=mysql%3A%2F%2Fx", environ={})


async def test_configure_reads_the_replica(servers):
    from adk_memory import configure

    primary, standby = servers
    stack = configure(
        environ={"ADK_MEMORY_DATABASE_URL": primary, "ADK_MEMORY_READ_DATABASE_URL": standby},
        schema=SCHEMA,
        run_worker=False,
    )
    try:
        assert await _recovering(stack.session_service)
        assert await _recovering(stack.memory_service)
    finally:
        await stack.close()
    with pytest.raises(InputValidationError, match="embedded server has no replicas"):
        configure(read_url=standby, environ={})


async def test_a_read_the_standby_cancels_runs_again_on_the_primary(make, servers):
    """A standby cancels a query whose table replay must lock ("conflict with recovery"):
    `Database.run` runs that read again on the primary instead of failing it."""
    primary, standby = servers
    sessions = make(PostgresSessionService)
    await sessions.create_session(app_name=APP, user_id="u1", session_id="s1")
    await _caught_up(primary, standby)
    admin = await asyncpg.connect(_dsn(standby))
    await admin.execute("ALTER SYSTEM SET max_standby_streaming_delay = 0")
    await admin.execute("SELECT pg_reload_conf()")
    try:
        read = asyncio.ensure_future(
            sessions.database.run(
                lambda conn: conn.fetchval(
                    "SELECT bool_and(pg_is_in_recovery()) FROM "
                    f"(SELECT pg_sleep(1) FROM {SCHEMA}.sessions "
                    f"WHERE {SCHEMA}.act_as('{APP}', 'u1')) slow"
                ),
                replica=True,
            )
        )
        deadline = time.monotonic() + 30
        while not await admin.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(1)%' "
            "AND pid <> pg_backend_pid()"
        ):
            assert time.monotonic() < deadline, "the slow read never started on the standby"
            await asyncio.sleep(0.02)
        conn = await asyncpg.connect(_dsn(primary))
        try:
            async with conn.transaction():
                await conn.execute(f"LOCK TABLE {SCHEMA}.sessions IN ACCESS EXCLUSIVE MODE")
        finally:
            await conn.close()
        assert await read is False  # answered by the primary
        await sessions.close()  # its standby connection ends, so its statistics are sent
        # The standby counted the cancelled read.
        while not await admin.fetchval(
            "SELECT confl_lock FROM pg_stat_database_conflicts WHERE datname = 'postgres'"
        ):
            assert time.monotonic() < deadline, "the standby reported no recovery conflict"
            await asyncio.sleep(0.1)
    finally:
        await admin.execute("ALTER SYSTEM RESET max_standby_streaming_delay")
        await admin.execute("SELECT pg_reload_conf()")
        await admin.close()


def test_bad_read_replica_arguments_are_refused(servers):
    primary, standby = servers
    engine = make_engine(primary)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"read_url": standby, "read_engine": engine}, "not both"),
        ({"read_url": "not a url"}, "Not a database URL"),
        ({"read_engine": "postgresql://x"}, "must be a PostgreSQL"),
        ({"read_engine": engine, "timeouts": DatabaseTimeouts()}, "make_engine"),
    ]
    for options, message in cases:
        for kind in (PostgresSessionService, PostgresMemoryService):
            with pytest.raises(InputValidationError, match=message):
                kind(primary, **options)
    for kind in (PostgresSessionService, PostgresMemoryService):
        with pytest.raises(InputValidationError, match="embedded server has no replicas"):
            kind(read_url=standby)
