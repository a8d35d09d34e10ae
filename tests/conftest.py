"""Shared fixtures: one real PostgreSQL per test session, a clean schema for every test.

The server is the embedded one (started once, in a temporary data directory) unless
`ADK_MEMORY_TEST_DATABASE_URL` names another. Tests never mock the database.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import asyncpg
import pytest
from google.adk.events import Event
from google.genai import types
from sqlalchemy.ext.asyncio import AsyncEngine

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.adk import MemoryStack, shared_database
from adk_memory.db import embedded_url, make_engine, normalise_url
from adk_memory.db.embedded import stop_embedded
from adk_memory.db.embedded import superuser_url as embedded_superuser_url
from adk_memory.memory.guard import GuardAction, GuardVerdict
from adk_memory.testing import ScriptedLlm

TEST_SCHEMA = "adk_memory_test"


@pytest.fixture(autouse=True)
def one_process_per_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process would: no database recorded from ADK's services built
    by an earlier test (`adk_memory.adk.shared_database`), which a `configure()` naming none
    would otherwise adopt."""
    monkeypatch.setattr(shared_database, "_adk", None)
    monkeypatch.setattr(shared_database, "_used", [])


@contextmanager
def server_home() -> Iterator[Path]:
    """A new directory for embedded servers' data, removed afterwards, with the data in it. As
    root the server runs as another user; a data directory asked for where that user cannot
    reach (temporary directories, pytest's `tmp_path` included, are private: 700) would be kept
    in `/var/lib/adk-memory/data/` instead, which removing this directory would not remove, and
    the tests that look at the data directory would look elsewhere. So this one is made
    enterable (711) here, where it is made; `tests/test_embedded.py` covers the private case."""
    home = Path(tempfile.mkdtemp(prefix="adk-memory-test-"))
    home.chmod(0o711)
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def server_dir() -> Iterator[Path]:
    """A directory for a test that starts an embedded server of its own (instead of `tmp_path`,
    which that server's user cannot enter when the tests run as root)."""
    with server_home() as home:
        yield home


_SUPERUSER_URL: list[str] = []
"""The test server's superuser URL, recorded by `database_url` for `superuser_url`."""


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    """A `postgresql+asyncpg://` URL for the test server. The embedded server's names its
    owner role, a non-superuser, so row-level security applies to every test (an external
    server's URL should name such a role too)."""
    external = os.environ.get("ADK_MEMORY_TEST_DATABASE_URL")
    if external:
        _SUPERUSER_URL[:] = [normalise_url(external)]
        yield normalise_url(external)
        return
    with server_home() as home:
        data_dir = home / "pgdata"
        url = normalise_url(embedded_url(data_dir))
        _SUPERUSER_URL[:] = [normalise_url(embedded_superuser_url(data_dir))]
        yield url
        stop_embedded(data_dir)  # before the directory goes, or the server outlives the run


@pytest.fixture(scope="session")
def superuser_url(database_url: str) -> str:
    """The test server as a superuser, for the few tests that create roles or change the
    server itself (a superuser bypasses row-level security: never for a service under test).
    With `ADK_MEMORY_TEST_DATABASE_URL`, that URL."""
    return _SUPERUSER_URL[0]


@pytest.fixture(scope="session")
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """One engine for the whole run, shared by every service a test builds, with the default
    timeouts: a statement that hangs, or a transaction left open, fails its test instead of
    stalling the run."""
    engine = make_engine(database_url, pool_size=10)
    yield engine
    await engine.dispose()


async def generic_plan(database: Any, statement: str) -> str:
    """The plan a prepared `statement` settles on (a generic plan, where a parameter is no
    constant), every parameter NULL, as a vacuumed table of a size worth indexing gets it
    (sequential and bitmap scans off): a one-row table is best read by a sequential scan, and
    whether the planner knows the table is that small depends on when autovacuum last ran; an
    index-only scan's cost depends on the visibility map."""
    parameters = max(int(n) for n in re.findall(r"\$(\d+)", statement))
    nulls = ", ".join(["NULL"] * parameters)
    async with database.connection() as conn:
        await conn.execute(f"VACUUM ANALYZE {database.schema}.memories")
        await conn.execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        try:
            await conn.execute(f"PREPARE generic_search AS {statement}")
            rows = await conn.fetch(f"EXPLAIN (COSTS OFF) EXECUTE generic_search({nulls})")
        finally:
            await conn.execute(
                "DEALLOCATE generic_search; RESET plan_cache_mode; RESET enable_seqscan; "
                "RESET enable_bitmapscan"
            )
    return "\n".join(row[0] for row in rows)


async def _truncate_all(database_url: str) -> None:
    """Empty every table of the test schema (keeping the schema and its version rows).

    Only the tables whose file is not empty are truncated: a table any row was ever written to
    since its last TRUNCATE has a page on disk (committed or not, deleted or not), and most
    tests write to a few of the twenty-odd tables, while each table truncated costs a new file
    for it and each of its indexes (about half of this fixture's time when all were)."""
    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(dsn)
    try:
        tables = await conn.fetch(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname <> 'schema_versions' "
            "AND pg_relation_size(c.oid) > 0",
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


@pytest.fixture
async def sample_stack(
    make_memory_service: Any, database_url: str
) -> AsyncIterator[Callable[[ModuleType, ScriptedLlm], MemoryStack]]:
    """A sample's own stack (`make_stack`), on the emptied test tables (`make_memory_service`
    empties them), with a scripted memory model and no background worker; closed after."""
    built: list[MemoryStack] = []

    def make(sample: ModuleType, memory_llm: ScriptedLlm) -> MemoryStack:
        stack = sample.make_stack(
            database_url=database_url,
            schema=TEST_SCHEMA,
            model=memory_llm,
            run_worker=False,
            environ={},
        )
        built.append(stack)
        return stack

    yield make
    for stack in built:
        await stack.close()


def said(text: str, author: str = "user", ts: float = 1.0) -> Event:
    """One turn of a conversation, as a session holds it (the user's, or the model's)."""
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        invocation_id="inv",
        timestamp=ts,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


class Marked:
    """A guard for tests: rejects facts holding `reject[0]`, quarantines those holding
    `hold[0]` (each with its reason and rule id), allows the rest."""

    def __init__(self, reject: tuple[str, str, str], hold: tuple[str, str, str]) -> None:
        self.reject = reject
        self.hold = hold

    async def check(self, fact: str, *, scope: Mapping[str, str], source: str) -> GuardVerdict:
        for (word, reason, rule), action in (
            (self.reject, GuardAction.REJECT),
            (self.hold, GuardAction.QUARANTINE),
        ):
            if word in fact:
                return GuardVerdict(action, reason, rule)
        return GuardVerdict.ALLOW
