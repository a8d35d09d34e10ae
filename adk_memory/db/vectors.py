"""The vector steps: the embedding column's type, its half-precision copy and the vector index.

Owns: the DDL that depends on a fact only known at run time, the embedder's dimension. These are
conditional, parameterised steps per index strategy (langgraph's vector migrations are the
model), run when a dimension is known (`migrate_vectors`), recorded with the dimension and
strategy in `vector_steps`, moved to another strategy when the dimension needs one, and resumed
after a crash mid-`CREATE INDEX CONCURRENTLY` (they cannot run in a transaction, so they are
not `migrations.py`'s append-only lists). It never runs a statement built from user input: the
only substitutions are the validated schema name and dimension.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal, overload

import asyncpg

from ..errors import EmbeddingDimensionError, InputValidationError
from .migrations import SCHEMA_CHANGE_TIMEOUT, MigrationError, SchemaVersionError

# The embedding column's type, its half-precision copy and the vector index depend on a fact
# only known at run time, the embedder's dimension: they are conditional, parameterised steps
# (langgraph's vector migrations are the model), run when a dimension is known, recorded with
# the dimension and the index strategy they were applied for, and upgraded when the strategy the
# dimension needs changes.


VECTOR_MAX_DIMENSIONS = 16000
"""pgvector's largest `vector`."""

COVERED_MAX_DIMENSIONS = 800
"""Up to this many dimensions a half-precision copy of each vector goes into the covering
index (2 bytes a dimension, next to a scope key of at most 1 kB, under PostgreSQL's ~2.7 kB
index-entry cap): exact search per scope."""

QUANTIZED_MAX_DIMENSIONS = 8000
"""Up to this many dimensions each vector's binary quantisation (1 bit a dimension: 1 kB at
8,000) goes into a covering index next to the scope key (at most 1 kB), under PostgreSQL's
~2.7 kB index-entry cap. Above it vectors are only searched exactly."""

COVERED = "covered"
"""The strategy up to `COVERED_MAX_DIMENSIONS`: a scope's search reads its vectors, in half
precision, from a covering index alone (exact, index-only; see memory/store/retrieval.py)."""

HNSW = "hnsw"
"""The strategy once used above `COVERED_MAX_DIMENSIONS`: an HNSW index on the full-precision
vectors. No dimension chooses it any more: it cannot index more than 2,000 dimensions (not
gemini-embedding-001's 3,072), and a search filtered by the scope was slower through HNSW than
an exact scan of the scope (see `QUANTIZED`). Kept so that databases indexed this way are
recognised and moved to `QUANTIZED`."""

QUANTIZED = "quantized"
"""The strategy from `COVERED_MAX_DIMENSIONS` to `QUANTIZED_MAX_DIMENSIONS`: each vector's
binary quantisation in a covering index, so a scope's search ranks the scope's bit vectors
(Hamming distance, index-only) and re-ranks the best of them by their full-precision vectors
(see memory/store/retrieval.py). Exact for scopes no bigger than the re-ranked pool. Chosen by
measurement (benchmarks/vector_sizes.py --compare, 100k memories, 2 busy cores): in scopes of
200 to 3,321 memories at 1,536 dimensions, recall@10 0.997 at p50/p95 3.5/10 ms, where an exact
scan took 10/43 ms and HNSW on half-precision vectors with iterative scans 74/95 ms (filtered by
the scope, it visits about table size / scope size vectors per result)."""

EXACT = "exact"
"""The strategy above `QUANTIZED_MAX_DIMENSIONS`: no vector index, an exact search of the
scope's rows."""


@dataclass(frozen=True)
class VectorStep:
    """One DDL step on the memories table that needs the embedding dimension.

    `sql` is formatted with the validated schema and the dimension (an int), nothing else. `kind`
    and `creates` say what the step makes (the embedding column's type, a column, an index), so
    the catalog, not only the record, tells whether it is in place: a database prepared before
    steps were recorded is adopted as it is, and an index that an interrupted build left INVALID
    is dropped and built again. A `concurrent` step runs outside any transaction (CREATE INDEX
    CONCURRENTLY: writers go on while it builds), recorded as started before it runs.
    """

    kind: Literal["type", "column", "index"]
    creates: str
    sql: str
    concurrent: bool = False

    def label(self, dimensions: int) -> str:
        """What the step makes, for messages."""
        if self.kind == "type":
            return f"{self.creates} vector({dimensions})"
        return f"{self.kind} {self.creates}"

    def undo(self, schema: str) -> str:
        """The statement that removes what the step made, when its strategy is left. A column's
        type is never undone (it is the stored vectors'): `retired` leaves such steps out."""
        if self.kind == "index":
            return f"DROP INDEX CONCURRENTLY IF EXISTS {schema}.{self.creates}"
        return f"ALTER TABLE {schema}.memories DROP COLUMN IF EXISTS {self.creates}"


_FIX_DIMENSION = VectorStep(
    "type",
    "embedding",
    "ALTER TABLE {schema}.memories ALTER COLUMN embedding TYPE vector({dimensions})",
)

VECTOR_STRATEGIES: dict[str, tuple[VectorStep, ...]] = {
    COVERED: (
        _FIX_DIMENSION,
        VectorStep(
            "column",
            "embedding_half",
            "ALTER TABLE {schema}.memories ADD COLUMN embedding_half halfvec({dimensions}) "
            "GENERATED ALWAYS AS (embedding::halfvec({dimensions})) STORED",
        ),
        VectorStep(
            "index",
            "memories_scope_vectors",
            "CREATE INDEX CONCURRENTLY memories_scope_vectors ON {schema}.memories "
            "(scope_key) INCLUDE (id, embedding_half, expire_time)",
            concurrent=True,
        ),
    ),
    HNSW: (
        _FIX_DIMENSION,
        VectorStep(
            "index",
            "memories_embedding_hnsw",
            "CREATE INDEX CONCURRENTLY memories_embedding_hnsw ON {schema}.memories "
            "USING hnsw (embedding vector_cosine_ops)",
            concurrent=True,
        ),
    ),
    QUANTIZED: (
        _FIX_DIMENSION,
        VectorStep(
            "column",
            "embedding_bits",
            "ALTER TABLE {schema}.memories ADD COLUMN embedding_bits bit({dimensions}) "
            "GENERATED ALWAYS AS (binary_quantize(embedding)::bit({dimensions})) STORED",
        ),
        VectorStep(
            "index",
            "memories_scope_bits",
            "CREATE INDEX CONCURRENTLY memories_scope_bits ON {schema}.memories "
            "(scope_key) INCLUDE (id, embedding_bits, expire_time)",
            concurrent=True,
        ),
    ),
    EXACT: (_FIX_DIMENSION,),
}
"""Each index strategy's steps. Append-only like the component lists: a step's number (its index
+ 1) is what the record names. A new way to index is a new strategy (or a step appended to one);
a database on another strategy is moved to it by the next migration."""


def vector_strategy(dimensions: int) -> str:
    """The index strategy vectors of `dimensions` are searched with."""
    if dimensions <= COVERED_MAX_DIMENSIONS:
        return COVERED
    return QUANTIZED if dimensions <= QUANTIZED_MAX_DIMENSIONS else EXACT


_VECTOR_TABLE = """
CREATE TABLE IF NOT EXISTS {schema}.vector_steps (
    strategy    text        NOT NULL,
    step        integer     NOT NULL,
    creates     text        NOT NULL,
    dimensions  integer     NOT NULL,
    state       text        NOT NULL CHECK (state IN ('started', 'done')),
    update_time timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (strategy, step)
)
"""

# What the catalog says about $1 (the memories table): whether it exists, the dimension its
# embedding column is fixed with (NULL: not yet), its columns, its valid and its INVALID indexes;
# and whether $2 (the record) exists. One round trip.
_VECTOR_CATALOG = """
SELECT t.oid IS NOT NULL,
       (SELECT nullif(atttypmod, -1) FROM pg_attribute
         WHERE attrelid = t.oid AND attname = 'embedding' AND NOT attisdropped),
       ARRAY(SELECT attname::text FROM pg_attribute
              WHERE attrelid = t.oid AND attnum > 0 AND NOT attisdropped),
       ARRAY(SELECT c.relname::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
              WHERE i.indrelid = t.oid AND i.indisvalid),
       ARRAY(SELECT c.relname::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
              WHERE i.indrelid = t.oid AND NOT i.indisvalid),
       to_regclass($2) IS NOT NULL
FROM (SELECT to_regclass($1)::oid AS oid) t
"""

_VECTOR_RECORDS = "SELECT strategy, step, state FROM {schema}.vector_steps"

_RECORD_VECTOR_STEP = """
INSERT INTO {schema}.vector_steps (strategy, step, creates, dimensions, state)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (strategy, step) DO UPDATE
    SET creates = EXCLUDED.creates, dimensions = EXCLUDED.dimensions, state = EXCLUDED.state,
        update_time = now()
"""

_FORGET_OTHER_STRATEGIES = "DELETE FROM {schema}.vector_steps WHERE strategy <> $1"

_VECTOR_LOCK_POLL = (0.01, 0.5)
"""First and longest pause (seconds) between tries for a schema's vector-migration lock."""


@dataclass(frozen=True)
class VectorState:
    """Where a schema's vector column and index stand against what one dimension needs."""

    dimensions: int
    strategy: str
    tables: bool
    """Whether the memory tables exist (the memory component is migrated)."""
    present: tuple[bool, ...]
    """Whether each of the strategy's steps is in place, as the catalog says."""
    recorded: tuple[str | None, ...]
    """Each step's record: 'started' (begun, not seen to finish), 'done', or None."""
    broken: frozenset[str]
    """Indexes of any strategy left INVALID by an interrupted build: dropped, then rebuilt."""
    retired: tuple[VectorStep, ...]
    """Steps of other strategies whose column or index is still there: removed."""
    stale: bool
    """Whether other strategies are still recorded."""

    @property
    def steps(self) -> tuple[VectorStep, ...]:
        return VECTOR_STRATEGIES[self.strategy]

    @property
    def done(self) -> int:
        """How many of the strategy's steps are in place."""
        return sum(self.present)

    @property
    def pending(self) -> bool:
        """Whether DDL is needed: a step not in place, or another strategy's leftovers."""
        return not all(self.present) or bool(self.retired)

    @property
    def recorded_in_full(self) -> bool:
        """Whether the record says what the catalog does (no step to adopt or to forget)."""
        return all(r == "done" for r in self.recorded) and not self.stale

    @property
    def missing(self) -> tuple[str, ...]:
        """What the strategy still needs, for messages."""
        return tuple(
            s.label(self.dimensions)
            for s, there in zip(self.steps, self.present, strict=True)
            if not there
        )

    @property
    def leftovers(self) -> tuple[str, ...]:
        """What other strategies left that a migration removes, for messages."""
        return tuple(s.label(self.dimensions) for s in self.retired)

    @property
    def interrupted(self) -> tuple[str, ...]:
        """Steps recorded as started and not in place (a crash mid-build): the next run
        drops what they left and runs them again."""
        return tuple(
            s.label(self.dimensions)
            for s, there, record in zip(self.steps, self.present, self.recorded, strict=True)
            if record == "started" and not there
        )


def _check_dimensions(dimensions: int) -> int:
    if (
        isinstance(dimensions, bool)
        or not isinstance(dimensions, int)
        or not 1 <= dimensions <= VECTOR_MAX_DIMENSIONS
    ):
        raise InputValidationError(
            f"An embedding dimension is a whole number from 1 to {VECTOR_MAX_DIMENSIONS}, "
            f"not {dimensions!r}."
        )
    return dimensions


@overload
async def vector_state(conn: asyncpg.Connection, schema: str, dimensions: int) -> VectorState: ...


@overload
async def vector_state(
    conn: asyncpg.Connection, schema: str, dimensions: None
) -> VectorState | None: ...


async def vector_state(
    conn: asyncpg.Connection, schema: str, dimensions: int | None
) -> VectorState | None:
    """Read, never write, where `schema`'s vectors stand against `dimensions` (None: the one the
    embedding column is fixed with). None when no dimension is known (none given, none fixed).
    A dimension other than the column's is an `EmbeddingDimensionError`."""
    if dimensions is not None:
        _check_dimensions(dimensions)
    row = await conn.fetchrow(_VECTOR_CATALOG, f"{schema}.memories", f"{schema}.vector_steps")
    tables, fixed, columns, valid, invalid, has_record = row
    if fixed is not None and dimensions is not None and fixed != dimensions:
        raise EmbeddingDimensionError(
            f"The memories in schema {schema!r} were embedded with {fixed} dimensions; this "
            f"embedder makes {dimensions}. Use an embedder with the same dimensions (or a new "
            "schema)."
        )
    size = dimensions if dimensions is not None else fixed
    if size is None:
        return None
    records: dict[tuple[str, int], str] = {}
    if has_record:
        rows = await conn.fetch(_VECTOR_RECORDS.format(schema=schema))
        records = {(r[0], r[1]): r[2] for r in rows}

    def there(step: VectorStep) -> bool:
        if step.kind == "type":
            return fixed == size
        return step.creates in (columns if step.kind == "column" else valid)

    strategy = vector_strategy(size)
    steps = VECTOR_STRATEGIES[strategy]
    ours = {(s.kind, s.creates) for s in steps}
    others = [s for name, other in VECTOR_STRATEGIES.items() if name != strategy for s in other]
    retired = {
        (s.kind, s.creates): s
        for s in others
        if (s.kind, s.creates) not in ours
        and s.kind != "type"
        and (there(s) or (s.kind == "index" and s.creates in invalid))
    }
    return VectorState(
        dimensions=size,
        strategy=strategy,
        tables=bool(tables),
        present=tuple(there(s) for s in steps),
        recorded=tuple(records.get((strategy, n)) for n in range(1, len(steps) + 1)),
        broken=frozenset(
            s.creates for s in (*steps, *others) if s.kind == "index" and s.creates in invalid
        ),
        retired=tuple(retired.values()),
        stale=any(name != strategy for name, _ in records),
    )


async def migrate_vectors(
    conn: asyncpg.Connection,
    schema: str,
    dimensions: int,
    *,
    apply: bool = True,
    in_one_transaction: bool = False,
) -> VectorState:
    """Bring `schema`'s embedding column and vector index to what `dimensions` needs; the state
    they end in.

    The strategy's missing steps run in order, after what another strategy left is removed
    (first: adding the half-precision column rewrites the table, and would rebuild an HNSW
    index with it). Each step is recorded with the dimension; a concurrent one is recorded as
    started before it runs, and a crash mid-build is resumed by the next run. A steady state
    costs two catalog reads and takes no lock. With `apply=False` nothing is written: steps
    still needed are a `SchemaVersionError` naming the command that applies them.

    `in_one_transaction` (behind a transaction-mode pooler, where each transaction may get
    another server connection, so a session-level lock or setting would stay on one other
    clients then use) runs the steps in one transaction under a transaction-level lock, the
    indexes built without CONCURRENTLY: writers to the memory table wait while they build
    (nothing to wait for on a new table; a big one is migrated over a direct connection,
    `adk-memory migrate`).
    """
    state = await vector_state(conn, schema, dimensions)
    if not state.pending and state.recorded_in_full:
        return state
    if not apply:
        if state.pending:
            raise SchemaVersionError(
                f"The vector column and index of schema {schema!r} are not ready for "
                f"{dimensions}-dimension embeddings (needed: "
                f"{', '.join(state.missing + tuple(f'removing {x}' for x in state.leftovers))}) "
                f"and automatic migration is off: run `adk-memory migrate "
                f"--embedding-dimensions {dimensions}`."
            )
        return state
    if not state.tables:
        raise SchemaVersionError(
            f"Schema {schema!r} has no memory tables yet: migrate the 'memory' component first."
        )
    lock = _vector_transaction if in_one_transaction else _vector_lock
    async with lock(conn, schema):
        # Another process may have done (some of) it while this one waited.
        state = await vector_state(conn, schema, dimensions)
        await _apply_vectors(conn, schema, state, concurrently=not in_one_transaction)
        return await vector_state(conn, schema, dimensions)


@asynccontextmanager
async def _vector_lock(conn: asyncpg.Connection, schema: str) -> AsyncIterator[None]:
    """Hold `schema`'s vector-migration lock, with no statement timeout, for the steps.

    A session-level advisory lock (the steps span several transactions, and a concurrent one
    none), of its own key: a component migration never waits for an index build. It is waited
    for by polling, never inside a statement: a waiting statement holds a snapshot, and the
    holder's CREATE INDEX CONCURRENTLY waits for every older snapshot to end, so each would wait
    for the other. Released on the way out; a connection that cannot release it is closed,
    which releases it too (a lock is never left on a pooled connection).
    """
    await _wait_for_lock(conn, schema, "pg_try_advisory_lock")
    try:
        await conn.execute("SET statement_timeout = 0")
        yield
    finally:
        try:
            await conn.execute("RESET statement_timeout")
            await conn.execute("SELECT pg_advisory_unlock(hashtext($1))", _lock_key(schema))
        except BaseException as exc:
            conn.terminate()  # closing the session releases the lock
            if not isinstance(exc, Exception):
                raise


@asynccontextmanager
async def _vector_transaction(conn: asyncpg.Connection, schema: str) -> AsyncIterator[None]:
    """Hold the same lock as `_vector_lock`, transaction-level, in one transaction without a
    statement timeout, for steps run without CONCURRENTLY (`migrate_vectors`'s
    `in_one_transaction`): the lock and the setting end with the transaction, on whichever
    server connection a pooler gave it. Waited for by polling too: an idle transaction holds
    no snapshot a concurrent index build elsewhere waits for."""
    async with conn.transaction():
        await _wait_for_lock(conn, schema, "pg_try_advisory_xact_lock")
        await conn.execute("SET LOCAL statement_timeout = 0")
        yield


def _lock_key(schema: str) -> str:
    """The text whose hash keys `schema`'s vector-migration lock."""
    return f"adk_memory:{schema}:vectors"


async def _wait_for_lock(conn: asyncpg.Connection, schema: str, function: str) -> None:
    """Take `schema`'s vector-migration lock with `function` (a pg_try_advisory_* lock),
    polling with backoff up to `SCHEMA_CHANGE_TIMEOUT`."""
    pause, longest = _VECTOR_LOCK_POLL
    deadline = time.monotonic() + SCHEMA_CHANGE_TIMEOUT
    while not await conn.fetchval(f"SELECT {function}(hashtext($1))", _lock_key(schema)):
        if time.monotonic() > deadline:
            raise MigrationError(
                f"Another process has been migrating the vectors of schema {schema!r} for over "
                f"{SCHEMA_CHANGE_TIMEOUT:.0f} s (see pg_stat_activity); try again when it is done."
            )
        await asyncio.sleep(pause)
        pause = min(pause * 2, longest)


def _without_concurrently(sql: str) -> str:
    """`sql` (a step or its undo) as it may run inside a transaction."""
    return sql.replace(" CONCURRENTLY", "")


async def _apply_vectors(
    conn: asyncpg.Connection, schema: str, state: VectorState, *, concurrently: bool
) -> None:
    """Run what `state` says is missing, under `_vector_lock` (`concurrently`), else under
    `_vector_transaction`, its index steps then built and dropped inside it."""
    plain = (lambda sql: sql) if concurrently else _without_concurrently
    await conn.execute(_VECTOR_TABLE.format(schema=schema))
    for step in reversed(state.retired):
        await _run_vector_step(conn, schema, plain(step.undo(schema)), f"removing {step.creates}")
    if state.stale:
        await conn.execute(_FORGET_OTHER_STRATEGIES.format(schema=schema), state.strategy)
    record = _RECORD_VECTOR_STEP.format(schema=schema)
    for number, (step, there, recorded) in enumerate(
        zip(state.steps, state.present, state.recorded, strict=True), start=1
    ):
        args = (state.strategy, number, step.creates, state.dimensions)
        if there:  # in place: made by a run before steps were recorded, or by a crashed one
            if recorded != "done":
                await conn.execute(record, *args, "done")
            continue
        sql = plain(step.sql.format(schema=schema, dimensions=state.dimensions))
        what = step.label(state.dimensions)
        if not step.concurrent or not concurrently:
            async with conn.transaction():
                await _run_vector_step(conn, schema, sql, what)
                await conn.execute(record, *args, "done")
            continue
        await conn.execute(record, *args, "started")
        if step.creates in state.broken:
            await _run_vector_step(conn, schema, step.undo(schema), f"dropping invalid {what}")
        await _run_vector_step(conn, schema, sql, what)
        await conn.execute(record, *args, "done")


async def _run_vector_step(conn: asyncpg.Connection, schema: str, sql: str, what: str) -> None:
    try:
        await conn.execute(sql, timeout=SCHEMA_CHANGE_TIMEOUT)
    except asyncpg.exceptions.InsufficientPrivilegeError as exc:
        raise MigrationError(
            f"The vector step {what!r} of schema {schema!r} needs a privilege this database "
            f"role lacks ({exc}): run `adk-memory migrate` as the tables' owner."
        ) from exc
    except asyncpg.exceptions.QueryCanceledError:
        raise  # a timeout or a cancellation: the connection's owner reports it
    except asyncpg.PostgresError as exc:
        raise MigrationError(
            f"The vector step {what!r} of schema {schema!r} failed ({exc}); the next migration "
            "resumes it."
        ) from exc
