"""Every database call is bounded: a hung server, a server that never answers a connection, an
exhausted pool or a runaway statement is a `DatabaseTimeoutError` (never a raw driver error,
never a hang), and the pool serves again afterwards. Timeouts are set by constructor argument,
URI option or environment variable; migrations are exempt from the statement timeout.

The server is made to hang by stopping the backend of an established pooled connection
(SIGSTOP, always resumed in a `finally`). Each test is bounded by `asyncio.wait_for` with a
generous deadline, and asserts exception types only, never elapsed times.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import timedelta
from typing import TypeVar

import asyncpg
import pytest
from google.adk.errors.input_validation_error import InputValidationError
from pydantic import ValidationError

from adk_memory import (
    AdkMemoryError,
    DatabaseTimeoutError,
    PostgresSessionService,
    configure,
    session_service_from_uri,
)
from adk_memory.config import DatabaseTimeouts
from adk_memory.db import make_engine
from adk_memory.env import database_timeouts

T = TypeVar("T")

SCHEMA = "adk_memory_timeouts"
DEADLINE = 60.0
"""Seconds any one test may take before it fails instead of hanging (a timeout of its own
under test is at most a few seconds)."""

SHORT = DatabaseTimeouts(statement=timedelta(seconds=0.5), connect=timedelta(seconds=0.5))
SESSION = {"app_name": "a", "user_id": "u", "session_id": "s"}


def _dsn(database_url: str) -> str:
    return database_url.replace("postgresql+asyncpg://", "postgresql://")


def _bounded(awaitable: Awaitable[T]) -> Awaitable[T]:
    return asyncio.wait_for(awaitable, DEADLINE)


@pytest.fixture
async def fresh_schema(database_url: str) -> AsyncIterator[str]:
    """`SCHEMA`, dropped before and after the test."""
    admin = await asyncpg.connect(_dsn(database_url))
    try:
        await admin.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        yield SCHEMA
        await admin.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    finally:
        await admin.close()


@asynccontextmanager
async def one_connection_service(
    database_url: str, schema: str, timeouts: DatabaseTimeouts
) -> AsyncIterator[PostgresSessionService]:
    """A session service whose pool holds exactly one connection, so every call uses it."""
    service = PostgresSessionService(
        database_url,
        schema=schema,
        timeouts=timeouts,
        engine_kwargs={"pool_size": 1, "max_overflow": 0},
    )
    try:
        yield service
    finally:
        await service.close()


async def _backend_pid(service: PostgresSessionService) -> int:
    async with service.database.connection() as conn:
        return int(await conn.fetchval("SELECT pg_backend_pid()"))


@contextmanager
def stopped(pid: int) -> Iterator[None]:
    """The backend `pid` stops answering (SIGSTOP) until the block ends."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except (PermissionError, ProcessLookupError):
        pytest.skip("the database server's processes cannot be signalled from here")
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


async def test_a_hung_server_is_a_database_timeout_and_the_pool_recovers(
    database_url, fresh_schema
):
    async def scenario() -> None:
        async with one_connection_service(database_url, fresh_schema, SHORT) as service:
            await service.create_session(**SESSION)
            pid = await _backend_pid(service)
            with stopped(pid), pytest.raises(DatabaseTimeoutError) as raised:
                await service.get_session(**SESSION)
            assert isinstance(raised.value, AdkMemoryError)
            assert isinstance(raised.value, TimeoutError)
            # The client gave up (the stopped server could not cancel anything itself).
            assert isinstance(raised.value.__cause__, (TimeoutError, asyncio.TimeoutError))
            # The hung connection was thrown away; the pool's next one works.
            assert await service.get_session(**SESSION) is not None
            assert await _backend_pid(service) != pid

    await _bounded(scenario())


async def test_a_statement_over_the_statement_timeout_is_cancelled_by_the_server(
    database_url, fresh_schema
):
    async def scenario() -> None:
        async with one_connection_service(database_url, fresh_schema, SHORT) as service:
            pid = await _backend_pid(service)
            with pytest.raises(DatabaseTimeoutError) as raised:
                async with service.database.connection() as conn:
                    await conn.execute("SELECT pg_sleep(30)")
            assert isinstance(raised.value.__cause__, asyncpg.exceptions.QueryCanceledError)
            # The server answered, so the connection is healthy and kept.
            assert await _backend_pid(service) == pid

    await _bounded(scenario())


async def test_a_server_that_never_answers_a_connection_is_a_database_timeout(fresh_schema):
    held: list[asyncio.StreamWriter] = []

    async def accept_and_say_nothing(_: asyncio.StreamReader, writer: asyncio.StreamWriter):
        held.append(writer)

    listener = await asyncio.start_server(accept_and_say_nothing, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    service = PostgresSessionService(
        f"postgresql://nobody@127.0.0.1:{port}/db?sslmode=disable",
        schema=fresh_schema,
        timeouts=SHORT,
    )
    try:
        with pytest.raises(DatabaseTimeoutError):
            await _bounded(service.create_session(**SESSION))
    finally:
        await service.close()
        for writer in held:
            writer.close()
        listener.close()
        await listener.wait_closed()


async def test_an_exhausted_pool_is_a_database_timeout_and_serves_again(database_url, fresh_schema):
    timeouts = DatabaseTimeouts(pool=timedelta(seconds=0.2))

    async def scenario() -> None:
        async with one_connection_service(database_url, fresh_schema, timeouts) as service:
            await service.create_session(**SESSION)
            async with service.database.connection():  # the pool's only connection, held
                with pytest.raises(DatabaseTimeoutError):
                    await service.get_session(**SESSION)
            assert await service.get_session(**SESSION) is not None

    await _bounded(scenario())


async def test_migrations_wait_past_the_statement_timeout(database_url, fresh_schema):
    """A process waiting for another's migration (the advisory lock), or running a long step,
    is slow, not hung: the statement timeout does not apply to migrations."""
    lock_holder = await asyncpg.connect(_dsn(database_url))
    try:
        await lock_holder.execute(
            "SELECT pg_advisory_lock(hashtext($1))", f"adk_memory:{fresh_schema}"
        )
        async with one_connection_service(database_url, fresh_schema, SHORT) as service:
            creating = asyncio.ensure_future(service.create_session(**SESSION))
            try:
                await _until_a_migration_waited_longer_than(lock_holder, SHORT)
                await lock_holder.execute(
                    "SELECT pg_advisory_unlock(hashtext($1))", f"adk_memory:{fresh_schema}"
                )
                assert (await _bounded(creating)).id == "s"
            finally:
                creating.cancel()
    finally:
        await lock_holder.close()


async def _until_a_migration_waited_longer_than(
    observer: asyncpg.Connection, timeouts: DatabaseTimeouts
) -> None:
    """Poll (with a deadline) until a backend has waited for the migration lock for longer
    than the statement timeout, measured by the server's own clock."""
    assert timeouts.statement is not None
    deadline = asyncio.get_running_loop().time() + DEADLINE
    while asyncio.get_running_loop().time() < deadline:
        waited = await observer.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'advisory' "
            "AND now() - query_start > $1",
            timeouts.statement * 2,
        )
        if waited:
            return
        await asyncio.sleep(0.05)
    pytest.fail("no migration ever waited for the lock")


async def test_the_timeouts_reach_the_server_beside_the_urls_own_settings(
    database_url, fresh_schema
):
    url = database_url + ("&" if "?" in database_url else "?") + "application_name=timeouts-test"
    timeouts = DatabaseTimeouts(
        statement=timedelta(seconds=7), idle_in_transaction=timedelta(minutes=2)
    )
    async with (
        one_connection_service(url, fresh_schema, timeouts) as service,
        service.database.connection() as conn,
    ):
        row = await conn.fetchrow(
            "SELECT current_setting('statement_timeout'), "
            "current_setting('idle_in_transaction_session_timeout'), "
            "current_setting('application_name')"
        )
    assert tuple(row) == ("7s", "2min", "timeouts-test")


async def test_no_statement_timeout_leaves_the_servers_own(database_url, fresh_schema):
    async with (
        one_connection_service(
            database_url, fresh_schema, DatabaseTimeouts(statement=None)
        ) as service,
        service.database.connection() as conn,
    ):
        assert await conn.fetchval("SELECT current_setting('statement_timeout')") == "0"


async def test_a_shared_engine_carries_the_timeouts_and_refuses_a_second_set(
    database_url, fresh_schema
):
    engine = make_engine(database_url, DatabaseTimeouts(statement=timedelta(seconds=3)))
    try:
        service = PostgresSessionService(engine=engine, schema=fresh_schema)
        async with service.database.connection() as conn:
            assert await conn.fetchval("SELECT current_setting('statement_timeout')") == "3s"
        with pytest.raises(InputValidationError):
            PostgresSessionService(engine=engine, timeouts=DatabaseTimeouts())
    finally:
        await engine.dispose()


def test_timeouts_from_uri_options_and_the_environment():
    environ = {"ADK_MEMORY_STATEMENT_TIMEOUT": "2m", "ADK_MEMORY_POOL_TIMEOUT": "5"}
    service = session_service_from_uri(
        "postgresql://u@db.internal/agents?connect_timeout=0&pool_timeout=1s", environ=environ
    )
    assert service.database.timeouts == DatabaseTimeouts(
        statement=timedelta(minutes=2), connect=None, pool=timedelta(seconds=1)
    )
    off = session_service_from_uri(
        "adk-memory://", environ={"ADK_MEMORY_STATEMENT_TIMEOUT": "none"}
    )
    assert off.database.timeouts == DatabaseTimeouts(statement=None)
    assert database_timeouts({}) == DatabaseTimeouts()
    assert database_timeouts({"ADK_MEMORY_CONNECT_TIMEOUT": "3s"}).connect == timedelta(seconds=3)


async def test_configure_reads_the_timeouts_from_the_environment(database_url, tmp_path):
    embedded = configure(
        data_dir=str(tmp_path), environ={"ADK_MEMORY_POOL_TIMEOUT": "7"}
    )  # builds only: nothing starts
    for service in (embedded.session_service, embedded.memory_service):
        assert service.database.timeouts == DatabaseTimeouts(pool=timedelta(seconds=7))
    environ = {"ADK_MEMORY_STATEMENT_TIMEOUT": "4s"}
    async with (
        configure(database_url, triggers=None, context=None, environ=environ) as stack,
        stack.session_service.database.connection() as conn,
    ):
        assert await conn.fetchval("SELECT current_setting('statement_timeout')") == "4s"


@pytest.mark.parametrize(
    ("uri", "environ"),
    [
        ("adk-memory://?statement_timeout=soon", {}),
        ("adk-memory://?pool_timeout=none", {}),
        ("adk-memory://?connect_timeout=-1", {}),
        ("adk-memory://", {"ADK_MEMORY_STATEMENT_TIMEOUT": "forever"}),
        ("adk-memory://", {"ADK_MEMORY_POOL_TIMEOUT": "0"}),
    ],
)
def test_bad_timeouts_are_rejected_when_the_service_is_built(uri, environ):
    with pytest.raises(InputValidationError):
        session_service_from_uri(uri, environ=environ)


def test_bad_timeout_objects_are_rejected():
    with pytest.raises(ValidationError):
        DatabaseTimeouts(statement=timedelta(seconds=-1))
    with pytest.raises(ValidationError):
        DatabaseTimeouts(pool=None)
    with pytest.raises(InputValidationError):
        PostgresSessionService("postgresql://u@h/d", timeouts={"statement": 3})
