"""The database layer: URL spellings, migrations under concurrency, schema-version errors and
the embedded server shared between processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import asyncpg
import pytest
from google.adk.errors.input_validation_error import InputValidationError
from sqlalchemy.ext.asyncio import create_async_engine

from adk_memory import PostgresSessionService
from adk_memory.db import embedded_url, normalise_url
from adk_memory.db.embedded import (
    SETTINGS_FILE,
    machine_memory,
    server_settings,
    stop_embedded,
)
from adk_memory.db.embedded import (
    superuser_url as embedded_superuser_url,
)
from adk_memory.db.migrations import SESSION_MIGRATIONS, current_version
from adk_memory.errors import SchemaVersionError


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:p@h:5432/d", "postgresql+asyncpg://u:p@h:5432/d"),
        ("postgres://u@h/d", "postgresql+asyncpg://u@h/d"),
        ("postgresql+asyncpg://u@h/d", "postgresql+asyncpg://u@h/d"),
        ("postgresql://u@/d?host=/tmp/sock", "postgresql+asyncpg://u@/d?host=%2Ftmp%2Fsock"),
    ],
)
def test_url_spellings_normalise_to_asyncpg(url, expected):
    assert normalise_url(url) == expected


@pytest.mark.parametrize(
    "url", ["", "sqlite:///x.db", "postgresql+psycopg2://u@h/d", "mysql://u@h/d", "not a url"]
)
def test_other_urls_are_rejected_clearly(url):
    with pytest.raises(InputValidationError):
        normalise_url(url)


def test_bad_schema_name_and_url_plus_engine_are_rejected(engine):
    with pytest.raises(InputValidationError):
        PostgresSessionService(engine=engine, schema="x; drop table y")
    with pytest.raises(InputValidationError):
        PostgresSessionService("postgresql://u@h/d", engine=engine)


async def _drop_schema(dsn: str, schema: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    finally:
        await conn.close()


def _dsn(database_url: str) -> str:
    return database_url.replace("postgresql+asyncpg://", "postgresql://")


async def test_ten_instances_starting_at_once_migrate_exactly_once(database_url):
    schema = "adk_memory_race"
    await _drop_schema(_dsn(database_url), schema)
    engines = [create_async_engine(database_url) for _ in range(10)]
    try:
        services = [PostgresSessionService(engine=e, schema=schema) for e in engines]
        await asyncio.gather(
            *(
                s.create_session(app_name="a", user_id="u", session_id=f"s{i}")
                for i, s in enumerate(services)
            )
        )
        conn = await asyncpg.connect(_dsn(database_url))
        try:
            rows = await conn.fetch(f"SELECT component, version FROM {schema}.schema_versions")
            assert sorted(tuple(r) for r in rows) == [
                ("sessions", v + 1) for v in range(len(SESSION_MIGRATIONS))
            ]
            assert await current_version(conn, schema, "sessions") == len(SESSION_MIGRATIONS)
        finally:
            await conn.close()
        listed = await services[0].list_sessions(app_name="a", user_id="u")
        assert len(listed.sessions) == 10
    finally:
        for e in engines:
            await e.dispose()
        await _drop_schema(_dsn(database_url), schema)


async def test_schema_newer_than_the_code_is_a_clear_error(database_url, engine):
    schema = "adk_memory_future"
    await _drop_schema(_dsn(database_url), schema)
    try:
        await PostgresSessionService(engine=engine, schema=schema).list_sessions(app_name="a")
        conn = await asyncpg.connect(_dsn(database_url))
        try:
            await conn.execute(
                f"INSERT INTO {schema}.schema_versions (component, version) VALUES ('sessions', 99)"
            )
        finally:
            await conn.close()
        with pytest.raises(SchemaVersionError, match="newer"):
            await PostgresSessionService(engine=engine, schema=schema).list_sessions(app_name="a")
    finally:
        await _drop_schema(_dsn(database_url), schema)


async def test_auto_migrate_off_refuses_an_unmigrated_database(database_url, engine):
    schema = "adk_memory_manual"
    await _drop_schema(_dsn(database_url), schema)
    service = PostgresSessionService(engine=engine, schema=schema, auto_migrate=False)
    with pytest.raises(SchemaVersionError, match="adk-memory migrate"):
        await service.list_sessions(app_name="a")
    conn = await asyncpg.connect(_dsn(database_url))
    try:
        assert await conn.fetchval("SELECT to_regnamespace($1)", schema) is None
    finally:
        await conn.close()


async def test_service_from_a_plain_postgresql_url(database_url):
    """The URL users paste (postgresql://, Unix socket) works; the service owns its pool."""
    plain = _dsn(database_url)
    async with PostgresSessionService(plain, schema="adk_memory_url") as service:
        session = await service.create_session(app_name="a", user_id="u")
        assert (await service.get_session(app_name="a", user_id="u", session_id=session.id)).id
    await _drop_schema(plain, "adk_memory_url")


def test_two_processes_share_one_embedded_server(server_dir):
    """A second process asking for the same data directory gets the same running server."""
    data_dir = server_dir / "pgdata"
    url = embedded_url(data_dir)
    code = "import sys, adk_memory.db; print(adk_memory.db.embedded_url(sys.argv[1]))"
    other = subprocess.run(
        [sys.executable, "-c", code, str(data_dir)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert other.stdout.strip() == url
    # The other process exited; this one still holds the server, so it still answers.
    pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    os.kill(pid, 0)


@pytest.mark.parametrize(
    ("memory_mb", "buffers"),
    [(256, "128MB"), (1024, "256MB"), (4096, "1024MB"), (24 * 1024, "2048MB")],
)
def test_the_embedded_server_takes_a_quarter_of_the_memory_up_to_2_gb(memory_mb, buffers):
    assert server_settings(memory_mb * 1024 * 1024) == {"shared_buffers": buffers}


async def test_the_embedded_server_is_sized_for_the_machine_and_alter_system_wins(server_dir):
    """The chosen settings are in force from the first start; an operator's ALTER SYSTEM
    overrides them across restarts (the settings file is rewritten, not the override)."""
    data_dir = server_dir / "pgdata"
    expected = server_settings(machine_memory())["shared_buffers"]

    async def shared_buffers(statement: str | None = None) -> str:
        conn = await asyncpg.connect(_dsn(embedded_superuser_url(data_dir)))  # ALTER SYSTEM
        try:
            if statement:
                await conn.execute(statement)
            return await conn.fetchval(
                "SELECT setting::bigint * 8 / 1024 || 'MB' "
                "FROM pg_settings WHERE name = 'shared_buffers'"
            )
        finally:
            await conn.close()

    try:
        assert await shared_buffers("ALTER SYSTEM SET shared_buffers = '200MB'") == expected
        stop_embedded(data_dir)
        assert await shared_buffers() == "200MB"
        conf = (data_dir / "postgresql.conf").read_text()
        assert conf.count(f"include_if_exists = '{SETTINGS_FILE}'") == 1
    finally:
        stop_embedded(data_dir)


async def test_a_cancelled_statement_does_not_poison_the_pool(make_session_service):
    """A request cancelled mid-query (client hung up) leaves no busy connection in the pool."""
    service = make_session_service()
    await service.create_session(app_name="a", user_id="u", session_id="s")

    async def slow_query(conn):
        await conn.execute("SELECT pg_sleep(5)")

    task = asyncio.create_task(service.database.run(slow_query))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(20):  # every pooled connection is usable
        assert await service.get_session(app_name="a", user_id="u", session_id="s")


async def test_a_role_that_cannot_create_pgvector_gets_an_actionable_error(superuser_url):
    """Managed Postgres often forbids CREATE EXTENSION to app roles: say what to do."""
    database_url = superuser_url  # creating a database and a role: the server's administrator
    from adk_memory import PostgresMemoryService
    from adk_memory.errors import MigrationError

    admin = await asyncpg.connect(_dsn(database_url))
    try:
        await admin.execute("DROP DATABASE IF EXISTS no_vector")
        await admin.execute("DROP ROLE IF EXISTS app_role")
        await admin.execute("CREATE ROLE app_role LOGIN")
        await admin.execute("CREATE DATABASE no_vector OWNER app_role TEMPLATE template0")
    finally:
        await admin.close()
    url = database_url.replace("postgresql+asyncpg://postgres:@", "postgresql+asyncpg://app_role:@")
    url = url.replace("/postgres?", "/no_vector?")
    try:
        async with PostgresMemoryService(url) as memory:
            with pytest.raises(MigrationError, match="CREATE EXTENSION vector"):
                await memory.list_memories({"app_name": "a", "user_id": "u"})
    finally:
        admin = await asyncpg.connect(_dsn(database_url))
        try:
            await admin.execute("DROP DATABASE IF EXISTS no_vector")
            await admin.execute("DROP ROLE IF EXISTS app_role")
        finally:
            await admin.close()
