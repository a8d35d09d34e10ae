"""The vector steps (the embedding column's type, its half-precision copy, the vector index) as
recorded, conditional migrations: applied once a dimension is known, reported by
`adk-memory migrate --check`, moved to the index strategy the dimension needs, resumed after a
crash in the middle of `CREATE INDEX CONCURRENTLY`, and safe when processes migrate at once.

All on the real test server; a schema (or a database) of each test's own, dropped afterwards.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import asyncpg
import pytest
from click.testing import CliRunner, Result
from google.adk.errors.input_validation_error import InputValidationError
from rls_checks import all_rows
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from adk_memory import PostgresMemoryService
from adk_memory.cli import main
from adk_memory.cli.options import Overrides
from adk_memory.db.migrations import MEMORY_MIGRATIONS, MigrationError, migrate
from adk_memory.db.vectors import (
    _VECTOR_TABLE,
    COVERED,
    EXACT,
    HNSW,
    QUANTIZED,
    VECTOR_STRATEGIES,
    migrate_vectors,
    vector_state,
)
from adk_memory.errors import EmbeddingDimensionError, SchemaVersionError
from adk_memory.testing import HashEmbedder

T = TypeVar("T")
SCOPE = {"app_name": "app", "user_id": "alice"}
DEADLINE = 60.0
"""Seconds a test waits for the server to reach a state before it fails (never a threshold on
how fast anything runs)."""


def _dsn(database_url: str) -> str:
    return database_url.replace("postgresql+asyncpg://", "postgresql://")


def arun(make: Callable[[], Awaitable[T]]) -> T:
    """Set-up code for the CLI tests, in an event loop of its own (each command runs its own)."""

    async def go() -> T:
        return await make()

    return asyncio.run(go())


async def _drop(dsn: str, schema: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    finally:
        await conn.close()


@pytest.fixture
async def schema(database_url: str, request: pytest.FixtureRequest) -> AsyncIterator[str]:
    """An empty schema named after the test, dropped afterwards."""
    name = "vec_" + request.node.name.split("[")[0].removeprefix("test_")[:50]
    await _drop(_dsn(database_url), name)
    yield name
    await _drop(_dsn(database_url), name)


@pytest.fixture
async def conn(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await all_rows(database_url)
    yield connection
    await connection.close()


async def _memory_tables(conn: asyncpg.Connection, schema: str) -> None:
    """The memory component's tables, with an untyped embedding column (no vector steps)."""
    await migrate(conn, schema, "memory", MEMORY_MIGRATIONS)


async def _records(conn: asyncpg.Connection, schema: str) -> list[tuple[Any, ...]]:
    rows = await conn.fetch(
        f"SELECT strategy, step, creates, dimensions, state FROM {schema}.vector_steps "
        "ORDER BY strategy, step"
    )
    return [tuple(r) for r in rows]


async def _catalog(conn: asyncpg.Connection, schema: str) -> dict[str, Any]:
    """The embedding column's type, the table's vector columns (half-precision and binary
    copies) and its vector indexes (name: valid)."""
    table = f"{schema}.memories"
    return {
        "type": await conn.fetchval(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = $1::regclass AND attname = 'embedding'",
            table,
        ),
        **{
            key: await conn.fetchval(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = $1::regclass AND attname = $2 AND NOT attisdropped",
                table,
                column,
            )
            for key, column in (("half", "embedding_half"), ("bits", "embedding_bits"))
        },
        "indexes": {
            r[0]: r[1]
            for r in await conn.fetch(
                "SELECT c.relname, i.indisvalid FROM pg_index i "
                "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass "
                "AND c.relname IN ('memories_scope_vectors', 'memories_embedding_hnsw', "
                "'memories_scope_bits')",
                table,
            )
        },
    }


def _done(strategy: str, dimensions: int) -> list[tuple[Any, ...]]:
    """The record of a strategy applied in full."""
    return [
        (strategy, n, step.creates, dimensions, "done")
        for n, step in enumerate(VECTOR_STRATEGIES[strategy], start=1)
    ]


# --------------------------------------------------------------------------- fresh databases


@pytest.mark.parametrize(
    ("dimensions", "strategy", "half", "bits", "index"),
    [
        (64, COVERED, "halfvec(64)", None, "memories_scope_vectors"),
        # gemini-embedding-001's sizes (3,072 is more than any pgvector HNSW index takes).
        (1536, QUANTIZED, None, "bit(1536)", "memories_scope_bits"),
        (3072, QUANTIZED, None, "bit(3072)", "memories_scope_bits"),
        # Too big for an index entry: searched exactly, no index.
        (8192, EXACT, None, None, None),
    ],
)
async def test_a_service_with_an_embedder_applies_and_records_the_vector_steps(
    engine, conn, schema, dimensions, strategy, half, bits, index
):
    service = PostgresMemoryService(
        engine=engine, schema=schema, embedder=HashEmbedder(dimensions), run_worker=False
    )
    memory = await service.create_memory("the user likes jazz", SCOPE)

    assert await _records(conn, schema) == _done(strategy, dimensions)
    assert await _catalog(conn, schema) == {
        "type": f"vector({dimensions})",
        "half": half,
        "bits": bits,
        "indexes": {index: True} if index else {},
    }
    found = await service.retrieve_memories(SCOPE, search_query="jazz")
    assert [r.memory.id for r in found] == [memory.id] and found[0].distance is not None
    # A steady state is read, not written: another service changes nothing.
    before = await conn.fetch(f"SELECT update_time FROM {schema}.vector_steps ORDER BY step")
    again = PostgresMemoryService(
        engine=engine, schema=schema, embedder=HashEmbedder(dimensions), run_worker=False
    )
    assert await again.get_memory(memory.id, SCOPE) == memory
    after = await conn.fetch(f"SELECT update_time FROM {schema}.vector_steps ORDER BY step")
    assert before == after


async def test_with_auto_migrate_off_missing_vector_steps_are_an_error_that_names_the_command(
    engine, conn, schema
):
    await _memory_tables(conn, schema)
    service = PostgresMemoryService(
        engine=engine,
        schema=schema,
        embedder=HashEmbedder(64),
        auto_migrate=False,
        run_worker=False,
    )
    with pytest.raises(SchemaVersionError, match="--embedding-dimensions 64"):
        await service.create_memory("the user likes jazz", SCOPE)
    catalog = await _catalog(conn, schema)
    assert catalog == {"type": "vector", "half": None, "bits": None, "indexes": {}}  # unchanged
    assert await conn.fetchval(f"SELECT count(*) FROM {schema}.memories") == 0

    await migrate_vectors(conn, schema, 64)
    assert (await service.create_memory("the user likes jazz", SCOPE)).fact


async def test_bad_dimensions_and_a_different_dimension_are_typed_errors(conn, schema):
    await _memory_tables(conn, schema)
    for bad in (0, -3, 16001, 2.5, True):
        with pytest.raises(InputValidationError):
            await migrate_vectors(conn, schema, bad)  # type: ignore[arg-type]
    await migrate_vectors(conn, schema, 64)
    with pytest.raises(EmbeddingDimensionError, match="64 dimensions"):
        await migrate_vectors(conn, schema, 32)
    assert await _records(conn, schema) == _done(COVERED, 64)


# --------------------------------------------------------------------------- migrate --check


@pytest.fixture
def cli(database_url: str) -> Callable[..., Result]:
    env = {"ADK_MEMORY_DATABASE_URL": database_url}

    def invoke(*args: str, obj: Overrides | None = None, code: int = 0) -> Result:
        result = CliRunner(env=env).invoke(main, list(args), obj=obj)
        assert result.exit_code == code, (result.output, result.exception)
        assert "Traceback" not in result.output
        return result

    return invoke


@pytest.fixture
def cli_schema(database_url: str) -> Iterator[str]:
    """An empty schema for the (synchronous) CLI tests, dropped afterwards."""
    name = "vec_cli"
    arun(lambda: _drop(_dsn(database_url), name))
    yield name
    arun(lambda: _drop(_dsn(database_url), name))


def _row(result: Result, component: str) -> str:
    [line] = [line for line in result.stdout.splitlines() if line.startswith(component)]
    return " ".join(line.split())


def test_migrate_check_reports_pending_vector_steps_until_they_are_applied(
    cli, cli_schema, database_url
):
    schema = ("--schema", cli_schema)
    # No dimension known (none given, none stored): nothing to say about vectors.
    behind = cli("migrate", "--check", *schema, code=1)
    assert "vectors" not in behind.stdout
    assert "no embedding dimension given" in behind.stderr

    # The dimension from an option, or from the configured embedder.
    pending = cli("migrate", "--check", "--embedding-dimensions", "64", *schema, code=1)
    assert _row(pending, "vectors").startswith(
        "vectors 0 3 behind: run `adk-memory migrate --embedding-dimensions 64` (64 dims, "
        "covered index; needs embedding vector(64), column embedding_half, index "
        "memories_scope_vectors)"
    )
    hooked = cli("migrate", "--check", *schema, obj=Overrides(embedder=HashEmbedder(1024)), code=1)
    assert _row(hooked, "vectors").startswith("vectors 0 3 behind")
    assert "quantized index" in _row(hooked, "vectors")

    # Components alone bring the tables up to date but leave the vectors behind.
    cli("migrate", *schema)
    assert _row(
        cli("migrate", "--check", "--embedding-dimensions", "64", *schema, code=1), "vectors"
    ).startswith("vectors 0 3 behind")

    applied = cli("migrate", "--embedding-dimensions", "64", *schema)
    assert _row(applied, "vectors") == "vectors 3 3 migrated from 0 (64 dims, covered index)"
    # Afterwards the stored vectors say the dimension: a plain check reports them.
    current = cli("migrate", "--check", *schema)
    assert _row(current, "vectors") == "vectors 3 3 up to date (64 dims, covered index)"
    assert current.stdout.count("up to date") == 3

    mismatch = cli("migrate", "--check", "--embedding-dimensions", "32", *schema, code=1)
    assert mismatch.stderr.startswith("Error: ") and "embedded with 64 dimensions" in (
        mismatch.stderr
    )

    async def recorded() -> list[tuple[Any, ...]]:
        conn = await asyncpg.connect(_dsn(database_url))
        try:
            return await _records(conn, cli_schema)
        finally:
            await conn.close()

    assert arun(recorded) == _done(COVERED, 64)


# ------------------------------------------------------------ upgrades from today's databases


async def _legacy(conn: asyncpg.Connection, schema: str, dimensions: int, strategy: str) -> str:
    """A schema indexed the way an older version left it (`MemoryStore.prepare_embeddings` ran
    this DDL in one transaction, recording nothing), with one memory and its vector; the
    memory's id. HNSW at a small dimension is what every database got before the covering index
    existed; HNSW above 800 dimensions (up to 2,000) is what they got before quantisation."""
    await _memory_tables(conn, schema)
    await conn.execute(
        f"ALTER TABLE {schema}.memories ALTER COLUMN embedding TYPE vector({dimensions})"
    )
    if strategy == COVERED:
        await conn.execute(
            f"ALTER TABLE {schema}.memories ADD COLUMN embedding_half halfvec({dimensions}) "
            f"GENERATED ALWAYS AS (embedding::halfvec({dimensions})) STORED"
        )
        await conn.execute(
            f"CREATE INDEX memories_scope_vectors ON {schema}.memories "
            "(scope_key) INCLUDE (id, embedding_half, expire_time)"
        )
    else:
        await conn.execute(
            f"CREATE INDEX IF NOT EXISTS memories_embedding_hnsw ON {schema}.memories "
            "USING hnsw (embedding vector_cosine_ops)"
        )
    [vector] = await HashEmbedder(dimensions).embed(["the user likes jazz"])
    return str(
        await conn.fetchval(
            f"INSERT INTO {schema}.memories (id, scope_key, scope, fact, source_type, embedding, "
            "fts) VALUES (gen_random_uuid(), $1, $2::jsonb, 'the user likes jazz', "
            "'bootstrapped', $3::text::vector, to_tsvector('the user likes jazz')) RETURNING id",
            '{"app_name":"app","user_id":"alice"}',
            '{"app_name": "app", "user_id": "alice"}',
            str(vector),
        )
    )


async def _index_oid(conn: asyncpg.Connection, schema: str, name: str) -> int | None:
    return await conn.fetchval("SELECT to_regclass($1)::oid", f"{schema}.{name}")


async def test_a_database_prepared_before_steps_were_recorded_is_adopted_as_it_is(
    engine, conn, schema
):
    memory_id = await _legacy(conn, schema, 64, COVERED)
    index = await _index_oid(conn, schema, "memories_scope_vectors")
    service = PostgresMemoryService(
        engine=engine, schema=schema, embedder=HashEmbedder(64), run_worker=False
    )
    found = await service.retrieve_memories(SCOPE, search_query="jazz")
    assert [r.memory.id for r in found] == [memory_id]
    assert await _records(conn, schema) == _done(COVERED, 64)
    assert await _index_oid(conn, schema, "memories_scope_vectors") == index  # not rebuilt


COVERING = {"half": "halfvec(64)", "bits": None, "indexes": {"memories_scope_vectors": True}}


def _quantized(dimensions: int) -> dict[str, Any]:
    return {
        "half": None,
        "bits": f"bit({dimensions})",
        "indexes": {"memories_scope_bits": True},
    }


@pytest.mark.parametrize(
    ("dimensions", "old", "recorded", "strategy", "expected"),
    [
        # Before the covering index, every database had HNSW: 64 dimensions now need the
        # covering index, and the HNSW index goes.
        (64, HNSW, False, COVERED, COVERING),
        # And the other way: a covering index on vectors the strategy now quantises (the
        # half-precision column goes, its covering index with it).
        (1024, COVERED, True, QUANTIZED, _quantized(1024)),
        # gemini-embedding-001 at 1,536 dimensions on HNSW, from before quantisation, as this
        # code's steps recorded it or as an older version left it unrecorded.
        (1536, HNSW, True, QUANTIZED, _quantized(1536)),
        (1536, HNSW, False, QUANTIZED, _quantized(1536)),
    ],
)
async def test_a_change_of_index_strategy_is_applied_and_recorded(
    engine, conn, schema, dimensions, old, recorded, strategy, expected
):
    memory_id = await _legacy(conn, schema, dimensions, old)
    if recorded:  # under the strategy it had, as a run of this code would have
        await conn.execute(_VECTOR_TABLE.format(schema=schema))
        await conn.executemany(
            f"INSERT INTO {schema}.vector_steps (strategy, step, creates, dimensions, state) "
            "VALUES ($1, $2, $3, $4, $5)",
            _done(old, dimensions),
        )
    state = await vector_state(conn, schema, dimensions)
    assert state.strategy == strategy and state.pending and state.retired

    # With auto_migrate off a service refuses; `adk-memory migrate`'s entry point upgrades.
    checking = PostgresMemoryService(
        engine=engine,
        schema=schema,
        embedder=HashEmbedder(dimensions),
        auto_migrate=False,
        run_worker=False,
    )
    with pytest.raises(SchemaVersionError, match=r"removing (index|column)"):
        await checking.retrieve_memories(SCOPE, search_query="jazz")
    service = PostgresMemoryService(
        engine=engine, schema=schema, embedder=HashEmbedder(dimensions), run_worker=False
    )
    found = await service.retrieve_memories(SCOPE, search_query="jazz")
    assert [r.memory.id for r in found] == [memory_id] and found[0].distance is not None

    assert await _records(conn, schema) == _done(strategy, dimensions)
    assert await _catalog(conn, schema) == {"type": f"vector({dimensions})", **expected}
    assert not (await vector_state(conn, schema, None)).pending  # type: ignore[union-attr]
    assert [r.memory.id for r in await checking.retrieve_memories(SCOPE, search_query="jazz")] == [
        memory_id
    ]


async def test_a_3072_dimension_schema_that_hnsw_could_not_index_is_repaired(engine, conn, schema):
    """Before quantisation, 3,072-dimension vectors (gemini-embedding-001's largest) got the
    HNSW strategy, whose index pgvector refuses above 2,000 dimensions: the first embedding
    failed, leaving the column typed and the index step recorded as started. The next
    migration forgets that strategy and applies the quantised one."""
    await _memory_tables(conn, schema)
    await conn.execute(f"ALTER TABLE {schema}.memories ALTER COLUMN embedding TYPE vector(3072)")
    hnsw_index = VECTOR_STRATEGIES[HNSW][1].sql.format(schema=schema, dimensions=3072)
    with pytest.raises(asyncpg.PostgresError, match="more than 2000 dimensions"):
        await conn.execute(hnsw_index)
    await conn.execute(_VECTOR_TABLE.format(schema=schema))
    await conn.executemany(
        f"INSERT INTO {schema}.vector_steps (strategy, step, creates, dimensions, state) "
        "VALUES ($1, $2, $3, $4, $5)",
        [
            (HNSW, 1, "embedding", 3072, "done"),
            (HNSW, 2, "memories_embedding_hnsw", 3072, "started"),
        ],
    )
    service = PostgresMemoryService(
        engine=engine, schema=schema, embedder=HashEmbedder(3072), run_worker=False
    )
    memory = await service.create_memory("the user likes jazz", SCOPE)
    found = await service.retrieve_memories(SCOPE, search_query="jazz")
    assert [r.memory.id for r in found] == [memory.id]
    assert await _records(conn, schema) == _done(QUANTIZED, 3072)
    assert (await _catalog(conn, schema))["indexes"] == {"memories_scope_bits": True}


async def test_the_check_on_an_already_applied_strategy_leaves_the_catalog_alone(conn, schema):
    """`apply=False` on a database in the wrong state raises; on a current one it returns."""
    await _memory_tables(conn, schema)
    with pytest.raises(SchemaVersionError):
        await migrate_vectors(conn, schema, 1024, apply=False)
    await migrate_vectors(conn, schema, 1024)
    assert not (await migrate_vectors(conn, schema, 1024, apply=False)).pending


# -------------------------------------------------------- a crash mid-CREATE INDEX CONCURRENTLY


async def _wait_for(condition: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"Timed out waiting for {what}.")
        await asyncio.sleep(0.02)


@pytest.mark.parametrize(
    ("dimensions", "strategy", "index"),
    [(64, COVERED, "memories_scope_vectors"), (1536, QUANTIZED, "memories_scope_bits")],
)
async def test_a_build_killed_mid_create_index_concurrently_is_resumed(
    database_url, conn, schema, dimensions, strategy, index
):
    """The process building the index dies while `CREATE INDEX CONCURRENTLY` waits for a writer:
    the index is left INVALID and the step recorded as started. The next run drops the invalid
    index and builds it again."""
    await _memory_tables(conn, schema)
    await migrate_vectors(conn, schema, dimensions)
    await conn.execute(f"DROP INDEX {schema}.{index}")
    assert (await vector_state(conn, schema, dimensions)).missing == (f"index {index}",)

    writer = await asyncpg.connect(_dsn(database_url))
    builder = await asyncpg.connect(_dsn(database_url))
    try:
        # A writer's open transaction: the concurrent build commits its (invalid) index, then
        # waits for the writer to finish.
        await writer.execute(f"BEGIN; LOCK TABLE {schema}.memories IN ROW EXCLUSIVE MODE")
        build = asyncio.ensure_future(migrate_vectors(builder, schema, dimensions))
        pid = builder.get_server_pid()

        async def waiting() -> bool:
            return bool(
                await conn.fetchval(
                    "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 "
                    "AND wait_event_type = 'Lock' AND query LIKE 'CREATE INDEX CONCURRENTLY%')"
                    " AND to_regclass($2) IS NOT NULL",
                    pid,
                    f"{schema}.{index}",
                )
            )

        await _wait_for(waiting, "the concurrent build to wait for the writer")
        assert (await _records(conn, schema))[2][4] == "started"
        await conn.execute("SELECT pg_terminate_backend($1)", pid)  # the process dies
        with pytest.raises(MigrationError, match="terminating connection"):
            await build
        await writer.execute("ROLLBACK")
    finally:
        await writer.close()
        builder.terminate()

    invalid = await _index_oid(conn, schema, index)
    assert (await _catalog(conn, schema))["indexes"] == {index: False}
    state = await vector_state(conn, schema, dimensions)
    assert state.interrupted == (f"index {index}",) and state.pending

    await migrate_vectors(conn, schema, dimensions)
    assert (await _catalog(conn, schema))["indexes"] == {index: True}
    assert await _index_oid(conn, schema, index) != invalid  # rebuilt
    assert await _records(conn, schema) == _done(strategy, dimensions)


async def test_a_step_recorded_as_started_without_its_index_is_run_again(conn, schema):
    """A crash before the build made anything: only the record says it began."""
    await _memory_tables(conn, schema)
    await migrate_vectors(conn, schema, 1024)
    await conn.execute(f"DROP INDEX {schema}.memories_scope_bits")
    await conn.execute(f"UPDATE {schema}.vector_steps SET state = 'started' WHERE step = 3")
    assert (await vector_state(conn, schema, 1024)).interrupted == ("index memories_scope_bits",)
    await migrate_vectors(conn, schema, 1024)
    assert await _records(conn, schema) == _done(QUANTIZED, 1024)
    assert (await _catalog(conn, schema))["indexes"] == {"memories_scope_bits": True}


# ---------------------------------------------------------------------------- concurrency


@pytest.fixture
async def fresh_database(superuser_url: str) -> AsyncIterator[Callable[[], Awaitable[str]]]:
    """Makes new databases on the test server (no extension created in them yet: from
    template0): their URLs, as the server's superuser (only a superuser may create pgvector).
    All dropped afterwards."""
    database_url = superuser_url
    admin = await asyncpg.connect(_dsn(database_url))
    made: list[str] = []

    async def make() -> str:
        name = f"adk_memory_fresh_{len(made)}"
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {name} TEMPLATE template0")
        made.append(name)
        return make_url(database_url).set(database=name).render_as_string(hide_password=False)

    try:
        yield make
        for name in made:
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()


async def test_migrators_of_two_schemas_of_a_fresh_database_both_succeed(fresh_database):
    """Both create the extensions the memory tables need (database-wide objects) at the same
    moment: the second waits for the first, then finds them there. Several rounds, each in a
    new database."""
    for _ in range(3):
        url = await fresh_database()
        engines = [create_async_engine(url) for _ in range(2)]
        try:
            services = [
                PostgresMemoryService(
                    engine=e, schema=f"tenant_{i}", embedder=HashEmbedder(64), run_worker=False
                )
                for i, e in enumerate(engines)
            ]
            created = await asyncio.gather(
                *(s.create_memory(f"fact of tenant {i}", SCOPE) for i, s in enumerate(services))
            )
            for i, (service, memory) in enumerate(zip(services, created, strict=True)):
                found = await service.retrieve_memories(SCOPE, search_query=f"tenant {i}")
                assert [r.memory.id for r in found] == [memory.id]
        finally:
            for e in engines:
                await e.dispose()


async def test_services_preparing_one_schema_at_once_all_succeed(database_url, conn, schema):
    await _memory_tables(conn, schema)
    engines = [create_async_engine(database_url) for _ in range(4)]
    try:
        services = [
            PostgresMemoryService(
                engine=e, schema=schema, embedder=HashEmbedder(1024), run_worker=False
            )
            for e in engines
        ]
        await asyncio.gather(*(s.create_memory(f"fact {i}", SCOPE) for i, s in enumerate(services)))
    finally:
        for e in engines:
            await e.dispose()
    assert await _records(conn, schema) == _done(QUANTIZED, 1024)
    assert (await _catalog(conn, schema))["indexes"] == {"memories_scope_bits": True}
    assert await conn.fetchval(f"SELECT count(*) FROM {schema}.memories") == 4
