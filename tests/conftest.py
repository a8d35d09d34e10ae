"""Shared fixtures: one real PostgreSQL per test session, a clean schema for every test.

The server is the embedded one (started once, in a temporary data directory) unless
`ADK_MEMORY_TEST_DATABASE_URL` names another. Tests never mock the database.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from adk_memory import PostgresMemoryService, PostgresSessionService, embedded_url, normalise_url
from adk_memory.db.embedded import stop_embedded

TEST_SCHEMA = "adk_memory_test"


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    """A `postgresql+asyncpg://` URL for the test server."""
    external = os.environ.get("ADK_MEMORY_TEST_DATABASE_URL")
    if external:
        yield normalise_url(external)
        return
    with tempfile.TemporaryDirectory(prefix="adk-memory-test-") as tmp:
        data_dir = os.path.join(tmp, "pgdata")
        yield normalise_url(embedded_url(data_dir))
        stop_embedded(data_dir)  # before the directory goes, or the server outlives the run


@pytest.fixture(scope="session")
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """One engine for the whole run, shared by every service a test builds."""
    engine = create_async_engine(database_url, pool_size=10)
    yield engine
    await engine.dispose()


async def _truncate_all(database_url: str) -> None:
    """Empty every table of the test schema (keeping the schema and its version rows)."""
    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(dsn)
    try:
        tables = await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> "
            "'schema_versions'",
            TEST_SCHEMA,
        )
        if tables:
            names = ", ".join(f"{TEST_SCHEMA}.{r[0]}" for r in tables)
            await conn.execute(f"TRUNCATE {names} CASCADE")
    finally:
        await conn.close()


@pytest.fixture
async def session_service(
    engine: AsyncEngine, database_url: str
) -> AsyncIterator[PostgresSessionService]:
    """A session service on empty tables."""
    await _truncate_all(database_url)
    yield PostgresSessionService(engine=engine, schema=TEST_SCHEMA)


@pytest.fixture
async def make_session_service(
    engine: AsyncEngine, database_url: str
) -> AsyncIterator[Callable[..., PostgresSessionService]]:
    """Build session services with options on the (emptied) test tables: replicas, TTLs, ..."""
    await _truncate_all(database_url)

    def make(**options: Any) -> PostgresSessionService:
        return PostgresSessionService(engine=engine, schema=TEST_SCHEMA, **options)

    yield make


@pytest.fixture
async def make_memory_service(
    engine: AsyncEngine, database_url: str
) -> AsyncIterator[Callable[..., PostgresMemoryService]]:
    """Build memory services on emptied test tables. A service with an embedder fixes the
    store's vector dimension, so tests that use one should all use 64 dimensions (the default
    `HashEmbedder`); `schema=` gives a test its own tables when it needs another."""
    await _truncate_all(database_url)

    def make(**options: Any) -> PostgresMemoryService:
        options.setdefault("schema", TEST_SCHEMA)
        return PostgresMemoryService(engine=engine, **options)

    yield make
