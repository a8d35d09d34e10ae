"""Memory-search benchmark: `PostgresMemoryService.retrieve_memories` latency and vector recall
on a large, skewed memory bank, with ADK's `InMemoryMemoryService` for scale.

Why: retrieval runs on every agent turn that consults memory, so it has targets of its own:

  retrieve_memories(top_k=10) p95 <= 15 ms at 1M memories (on a 2-core machine), per mode
  vector recall@10            >= 0.95 against an exact scan of the same scope

Data: `--memories` memories over `--scopes` user scopes (`{"app_name": "bench", "user_id":
"u<i>"}`), sizes skewed (scope i gets a share proportional to (i + 1) ** -0.8, at least one
memory each), so a few scopes are big. Each fact is a short sentence from a small vocabulary
("Enjoys hiking on weekends; also mentioned jazz."), so full-text search has matches. Its
embedding is its main topic's random unit centroid plus Gaussian noise (about 0.7 cosine
similarity to the centroid), normalised: clustered like real embeddings, not uniform noise.

Loading: the service is created once on an empty schema with a `--dims` embedder, so the store
fixes the vector dimension itself; then the rows are generated inside PostgreSQL (INSERT ...
SELECT from generate_series, two connections in parallel) with the columns the store writes,
the secondary indexes (the vector index included: the covering index of half-precision, or
above 800 dimensions binary-quantised, vectors) dropped first and recreated afterwards from
their own definitions, then VACUUM ANALYZE and a CHECKPOINT so neither lands in the
measurements. Memory revisions are not written: retrieval never reads them.

Measuring: `--queries` searches, scopes drawn with probability proportional to their size (as
traffic would be), each a question about one topic with a query vector near that topic's
centroid. Embedding time is excluded: the embedder returns the precomputed query vector. The
configurations (hybrid, vector-only, vector-only ranked by relevance alone, text-only, and ADK's
in-memory service up to `--adk-max-memories`) run the same queries, interleaved in short rounds
of alternating order after warm-up calls. Recall@10 compares the vector-only results with the
exact nearest neighbours from a sequential scan (index and bitmap scans off, in a transaction
on a direct connection). The plan PostgreSQL runs for the vector search is shown for a
median-sized and the biggest scope (EXPLAIN ANALYZE on one of the service's own pooled
connections), with how often the server used a generic plan.

With no `--database-url` the embedded PostgreSQL is started in a temporary data directory. The
data goes to a fresh database (`adk_memory_bench_memory`, dropped and recreated at start and
dropped at the end unless `--keep`, e.g. to EXPLAIN more queries on a server given by URL).

    python benchmarks/memory_search.py [--database-url URL] [--memories 100000]
        [--scopes 10000] [--dims 64] [--queries 500]

The exit status is 0 whether or not the targets are met; PASS/MISS is printed per target.
"""

from __future__ import annotations

import asyncio
import gc
import math
import os
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata

import _common as common
import asyncpg
from _common import expect, ms, percentile, table
from google.adk.events.event import Event
from google.adk.memory import InMemoryMemoryService
from google.genai import types
from pgvector import Vector
from sqlalchemy.engine import make_url

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.config import RetrievalConfig
from adk_memory.db import DEFAULT_SCHEMA
from adk_memory.db.owner import OWNER_ROLE, SUPERUSER
from adk_memory.memory.embeddings import EmbeddingTask
from adk_memory.memory.scope import Scope, scope_key, user_scope

# The store's own retrieval statement, EXPLAINed as the service runs it (private on purpose:
# the benchmark must show the plan of the real SQL, not of a copy that could drift).

BENCH_DATABASE = "adk_memory_bench_memory"
SCHEMA = DEFAULT_SCHEMA
APP = "bench"
TOP_K = 10
SKEW = 0.8
NOISE = 1.0
WARMUP = 20
ROUND_SIZE = 10
CHUNK_ROWS = 25_000
LOADERS = 2
P95_TARGET_MS = 15.0
TARGET_SCALE = 1_000_000
RECALL_TARGET = 0.95

TOPICS = (
    "coffee", "tea", "hiking", "cycling", "jazz", "opera", "python", "rust", "sushi", "pasta",
    "football", "tennis", "chess", "gardening", "photography", "painting", "yoga", "running",
    "swimming", "skiing", "camping", "baking", "wine", "cheese", "cats", "dogs", "podcasts",
    "novels", "poetry", "movies", "theatre", "museums", "astronomy", "japan", "italy", "mexico",
    "kenya", "norway", "peru", "vietnam", "guitar", "piano", "violin", "birdwatching",
    "knitting", "pottery", "surfing", "climbing",
)  # fmt: skip
VERBS = (
    "Enjoys", "Dislikes", "Is learning", "Recently tried", "Wants to try", "Often talks about",
    "Prefers", "Gave up", "Collects books on", "Teaches", "Is allergic to", "Saves money for",
)  # fmt: skip
CONTEXTS = (
    "on weekends", "every morning", "with their family", "since childhood", "after work",
    "while travelling", "in winter", "in summer", "with friends", "at night", "on holidays",
    "before breakfast",
)  # fmt: skip
QUESTIONS = (
    "What does the user like about {topic}?",
    "Any plans for {topic} {context}?",
    "Tell me about {topic}",
    "How does the user feel about {topic} {context}?",
)

# Rows generated in SQL: $1 scope numbers, $2 memories per scope, $3 topic centroids
# (float4[topics][dims]), $4 noise per dimension, $5 topics, $6 verbs, $7 contexts.
_LOAD = f"""
INSERT INTO {SCHEMA}.memories
    (id, scope_key, scope, fact, source_type, embedding, fts, create_time, update_time)
SELECT gen_random_uuid(), k.key, k.key::jsonb, f.fact, 'bootstrapped',
       l2_normalize(ARRAY(
           SELECT ($3::float4[])[r.topic][d]
                  + $4::float8 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())
             FROM generate_series(1, array_length($3::float4[], 2)) d)::vector),
       to_tsvector('english', f.fact), r.at, r.at
FROM unnest($1::int[], $2::int[]) AS s(i, n)
CROSS JOIN LATERAL (
    SELECT format('{{"app_name":"{APP}","user_id":"u%s"}}', s.i) AS key) k
CROSS JOIN LATERAL (
    SELECT 1 + floor(random() * cardinality($5::text[]))::int AS topic,
           1 + floor(random() * cardinality($5::text[]))::int AS other,
           1 + floor(random() * cardinality($6::text[]))::int AS verb,
           1 + floor(random() * cardinality($7::text[]))::int AS context,
           now() - random() * interval '180 days' AS at
      FROM generate_series(1, s.n) g) r
CROSS JOIN LATERAL (
    SELECT format('%s %s %s; also mentioned %s.', ($6::text[])[r.verb], ($5::text[])[r.topic],
                  ($7::text[])[r.context], ($5::text[])[r.other]) AS fact) f
ORDER BY random()
"""


# ---------------------------------------------------------------------------------------------
# Plan and data shape


@dataclass(frozen=True)
class Plan:
    """What to load and how much to measure."""

    memories: int
    scopes: int
    dims: int
    queries: int
    seed: int
    adk_max_memories: int
    maintenance_work_mem: str
    keep: bool = False
    skew: float = SKEW
    """Scope sizes' skew (0: every scope the same size)."""


@dataclass(frozen=True)
class Query:
    """One search: which scope, the question, its (precomputed) embedding."""

    scope_no: int
    text: str
    vector: list[float]

    @property
    def scope(self) -> Scope:
        return user_scope(APP, f"u{self.scope_no}")


def scope_sizes(memories: int, scopes: int, skew: float = SKEW) -> list[int]:
    """Memories per scope: one each, the rest shared in proportion to (i + 1) ** -skew (largest
    remainder), so scope 0 is the biggest."""
    if not 1 <= scopes <= memories:
        raise SystemExit("--scopes must be between 1 and --memories")
    weights = [(i + 1) ** -skew for i in range(scopes)]
    total = sum(weights)
    extra = memories - scopes
    shares = [extra * w / total for w in weights]
    sizes = [1 + math.floor(s) for s in shares]
    by_remainder = sorted(range(scopes), key=lambda i: shares[i] - math.floor(shares[i]))
    for i in by_remainder[::-1][: memories - sum(sizes)]:
        sizes[i] += 1
    return sizes


def unit(vector: Sequence[float]) -> list[float]:
    """`vector` scaled to length 1."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def centroids(dims: int, rng: random.Random) -> list[list[float]]:
    """One random unit vector per topic."""
    return [unit([rng.gauss(0, 1) for _ in range(dims)]) for _ in TOPICS]


def noise_sigma(dims: int) -> float:
    """Per-dimension noise so the noise vector's length is about `NOISE`."""
    return NOISE / math.sqrt(dims)


def make_queries(
    sizes: list[int], centres: list[list[float]], count: int, rng: random.Random
) -> list[Query]:
    """`count` searches; scopes weighted by their size, topics and questions uniform."""
    sigma = noise_sigma(len(centres[0]))
    scopes = rng.choices(range(len(sizes)), weights=sizes, k=count)
    queries = []
    for scope_no in scopes:
        topic = rng.randrange(len(TOPICS))
        text = rng.choice(QUESTIONS).format(topic=TOPICS[topic], context=rng.choice(CONTEXTS))
        vector = unit([c + rng.gauss(0, sigma) for c in centres[topic]])
        queries.append(Query(scope_no, text, vector))
    return queries


class QueryEmbedder:
    """An embedder that returns the vector set for the next query at once (embedding time is
    not what is measured). Documents are never embedded here: the rows are loaded in SQL."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.next_vector: list[float] = [1.0] + [0.0] * (dimensions - 1)

    async def embed(
        self, texts: Sequence[str], *, task: EmbeddingTask = "document"
    ) -> list[list[float]]:
        """The preset vector, once per text."""
        return [self.next_vector for _ in texts]


# ---------------------------------------------------------------------------------------------
# Progress


def progress(message: str, *, end: str = "\n") -> None:
    """A progress line on stderr, over the previous one (`end="\\r"` for one to overwrite)."""
    print(f"\r  {message:<90}", file=sys.stderr, end=end, flush=True)


# ---------------------------------------------------------------------------------------------
# Loading


@dataclass
class LoadReport:
    """How long each loading step took (seconds), in order."""

    steps: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return sum(self.steps.values())


def chunks(
    sizes: list[int], rng: random.Random, rows: int = CHUNK_ROWS
) -> list[tuple[list[int], list[int]]]:
    """INSERTs of about `rows` rows each, every scope's memories spread evenly over all of them
    (remainders at random), so a scope's rows end up all over the table as they would after
    months of traffic: per INSERT, (scope numbers, memories of each)."""
    count = max(1, math.ceil(sum(sizes) / rows))
    parts: list[dict[int, int]] = [{} for _ in range(count)]
    for scope_no, size in enumerate(sizes):
        base, extra = divmod(size, count)
        if base:
            for part in parts:
                part[scope_no] = base
        for n in rng.sample(range(count), extra):
            parts[n][scope_no] = parts[n].get(scope_no, 0) + 1
    return [(list(part), list(part.values())) for part in parts]


async def prepare_schema(bench_url: str, dims: int) -> None:
    """Migrate the empty schema and let the store fix the vector dimension (and create its
    vector index), through the service, as a first real call would."""
    service = PostgresMemoryService(bench_url, embedder=QueryEmbedder(dims))
    try:
        await service.retrieve_memories(user_scope(APP, "u0"), search_query="warm up")
    finally:
        await service.close()


async def drop_indexes(conn: asyncpg.Connection) -> list[str]:
    """Drop the memories table's secondary indexes; their definitions, to recreate them."""
    rows = await conn.fetch(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 "
        "AND tablename = 'memories' AND indexname <> 'memories_pkey' ORDER BY indexname",
        SCHEMA,
    )
    for row in rows:
        await conn.execute(f"DROP INDEX {SCHEMA}.{row['indexname']}")
    # HNSW last: the slowest build, and the others are then already in place.
    return sorted((r["indexdef"] for r in rows), key=lambda d: "USING hnsw" in d)


async def insert_rows(
    dsn: str, plan: Plan, sizes: list[int], centres: list[list[float]], rng: random.Random
) -> None:
    """Generate and insert every memory, `LOADERS` connections in parallel, with progress."""
    work = chunks(sizes, rng)
    queue: asyncio.Queue[tuple[list[int], list[int]]] = asyncio.Queue()
    for item in work:
        queue.put_nowait(item)
    done = 0
    started = time.perf_counter()
    sigma = noise_sigma(plan.dims)

    async def loader() -> None:
        nonlocal done
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute("SET synchronous_commit = off")
            while not queue.empty():
                numbers, counts = queue.get_nowait()
                words = (list(TOPICS), list(VERBS), list(CONTEXTS))
                await conn.execute(_LOAD, numbers, counts, centres, sigma, *words)
                done += sum(counts)
                rate = done / (time.perf_counter() - started)
                progress(
                    f"inserting: {done:,}/{plan.memories:,} rows "
                    f"({100 * done / plan.memories:.0f}%), {rate:,.0f} rows/s",
                    end="\r",
                )
        finally:
            await conn.close()

    await asyncio.gather(*(loader() for _ in range(LOADERS)))
    seconds = time.perf_counter() - started
    progress(f"inserted {done:,} rows in {len(work)} INSERTs, {seconds:.1f} s")


async def watch_index_build(dsn: str, name: str, stop: asyncio.Event) -> None:
    """Print the index build's phase and progress every few seconds until `stop` is set."""
    conn = await asyncpg.connect(dsn)
    started = time.perf_counter()
    try:
        while not stop.is_set():
            row = await conn.fetchrow(
                "SELECT phase, tuples_done, tuples_total, blocks_done, blocks_total "
                "FROM pg_stat_progress_create_index LIMIT 1"
            )
            if row is not None:
                counts = (
                    f"tuples {row['tuples_done']:,}/{row['tuples_total']:,}"
                    if row["tuples_total"]
                    else f"blocks {row['blocks_done']:,}/{row['blocks_total']:,}"
                )
                elapsed = time.perf_counter() - started
                progress(f"{name}: {row['phase']}, {counts}, {elapsed:.0f} s", end="\r")
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=5)
    finally:
        await conn.close()


async def build_index(conn: asyncpg.Connection, dsn: str, definition: str) -> float:
    """Create one index from its definition, showing progress; seconds taken."""
    name = definition.split(" ON ")[0].split()[-1]
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch_index_build(dsn, name, stop))
    started = time.perf_counter()
    try:
        await conn.execute(definition)
    finally:
        stop.set()
        await watcher
    seconds = time.perf_counter() - started
    progress(f"{name}: built in {seconds:.1f} s")
    return seconds


async def load(
    bench_url: str,
    bench_admin: str,
    plan: Plan,
    sizes: list[int],
    centres: list[list[float]],
    rng: random.Random,
) -> LoadReport:
    """Fill the memories table as fast as PostgreSQL allows; the time of each step. The service
    migrates as `bench_url`'s role; the rows go in as `bench_admin`'s."""
    report = LoadReport()
    dsn = common.asyncpg_dsn(bench_admin)
    started = time.perf_counter()
    await prepare_schema(bench_url, plan.dims)
    report.steps["schema (service, empty)"] = time.perf_counter() - started
    conn = await asyncpg.connect(dsn)
    try:
        definitions = await drop_indexes(conn)
        started = time.perf_counter()
        await insert_rows(dsn, plan, sizes, centres, rng)
        report.steps["insert rows"] = time.perf_counter() - started
        await conn.execute(f"SET maintenance_work_mem = '{plan.maintenance_work_mem}'")
        await conn.execute("SET max_parallel_maintenance_workers = 1")
        for definition in definitions:
            name = definition.split(" ON ")[0].split()[-1]
            report.steps[f"index {name}"] = await build_index(conn, dsn, definition)
        started = time.perf_counter()
        progress("VACUUM ANALYZE ...")
        await conn.execute(f"VACUUM (ANALYZE) {SCHEMA}.memories")
        await checkpoint(conn)
        report.steps["vacuum analyze + checkpoint"] = time.perf_counter() - started
    finally:
        await conn.close()
    return report


async def checkpoint(conn: asyncpg.Connection) -> None:
    """Flush the load's dirty pages now rather than during the measurements (if allowed)."""
    try:
        await conn.execute("CHECKPOINT")
    except asyncpg.InsufficientPrivilegeError:
        progress("(no privilege for CHECKPOINT: a checkpoint may fall in the measurements)")


async def check_scope_keys(conn: asyncpg.Connection, sizes: list[int]) -> None:
    """The loaded scope keys are the service's canonical ones, with the planned sizes."""
    for scope_no in {0, len(sizes) // 2, len(sizes) - 1}:
        key = scope_key(user_scope(APP, f"u{scope_no}"))
        count = await conn.fetchval(
            f"SELECT count(*) FROM {SCHEMA}.memories WHERE scope_key = $1", key
        )
        expect(count == sizes[scope_no], f"scope u{scope_no} has {count}, not {sizes[scope_no]}")


# ---------------------------------------------------------------------------------------------
# Measurement


@dataclass
class Samples:
    """One configuration's latencies (seconds) and returned ids, in query order."""

    seconds: list[float] = field(default_factory=list)
    ids: list[list[str]] = field(default_factory=list)


Probe = Callable[[Query], Awaitable[tuple[float, list[str]]]]
"""One measured call: make the search, return how long it took and the ids it returned."""


def postgres_probe(service: PostgresMemoryService, embedder: QueryEmbedder) -> Probe:
    """Timed `retrieve_memories(scope, search_query=..., top_k=10)`."""

    async def probe(query: Query) -> tuple[float, list[str]]:
        embedder.next_vector = query.vector
        scope = query.scope
        started = time.perf_counter()
        results = await service.retrieve_memories(scope, search_query=query.text, top_k=TOP_K)
        seconds = time.perf_counter() - started
        return seconds, [r.memory.id for r in results]

    return probe


def adk_probe(service: InMemoryMemoryService) -> Probe:
    """Timed `search_memory(app_name, user_id, query)` of ADK's in-memory service."""

    async def probe(query: Query) -> tuple[float, list[str]]:
        user_id = f"u{query.scope_no}"
        started = time.perf_counter()
        response = await service.search_memory(app_name=APP, user_id=user_id, query=query.text)
        seconds = time.perf_counter() - started
        return seconds, [m.id or "" for m in response.memories]

    return probe


async def measure(
    probes: dict[str, Probe], queries: list[Query], warmup: list[Query]
) -> dict[str, Samples]:
    """Warm-up calls (discarded), then every query once per probe, interleaved in rounds of
    `ROUND_SIZE` whose order alternates so background noise falls on all alike."""
    names = list(probes)
    for name in names:
        for query in warmup:
            await probes[name](query)
    gc.collect()
    samples = {name: Samples() for name in names}
    for round_no, first in enumerate(range(0, len(queries), ROUND_SIZE)):
        order = names if round_no % 2 == 0 else names[::-1]
        for name in order:
            for query in queries[first : first + ROUND_SIZE]:
                seconds, ids = await probes[name](query)
                samples[name].seconds.append(seconds)
                samples[name].ids.append(ids)
        if round_no % 10 == 9:
            progress(f"measuring: {first + ROUND_SIZE}/{len(queries)} queries", end="\r")
    progress(f"measured {len(queries)} queries x {len(names)} configurations")
    return samples


async def load_adk(bench_url: str) -> tuple[InMemoryMemoryService, float]:
    """ADK's in-memory service holding the same facts, as one user event each (one session per
    user); the service and how long loading it took."""
    conn = await asyncpg.connect(common.asyncpg_dsn(bench_url))
    try:
        rows = await conn.fetch(
            f"SELECT scope->>'user_id', fact, extract(epoch FROM create_time)::float8 "
            f"FROM {SCHEMA}.memories ORDER BY scope_key, create_time"
        )
    finally:
        await conn.close()
    started = time.perf_counter()
    by_user: dict[str, list[Event]] = defaultdict(list)
    for user_id, fact, timestamp in rows:
        content = types.Content(role="user", parts=[types.Part(text=fact)])
        by_user[user_id].append(Event(author="user", content=content, timestamp=timestamp))
    service = InMemoryMemoryService()
    for user_id, events in by_user.items():
        await service.add_events_to_memory(
            app_name=APP, user_id=user_id, events=events, session_id="bench"
        )
    return service, time.perf_counter() - started


CONFIGS: dict[str, RetrievalConfig] = {
    "hybrid": RetrievalConfig(),
    "vector": RetrievalConfig(mode="vector"),
    "vector, relevance only": RetrievalConfig(
        mode="vector", recency_weight=0.0, importance_weight=0.0
    ),
    "text": RetrievalConfig(mode="text"),
}
ADK = "ADK InMemoryMemoryService"
RLS_OFF = "hybrid, RLS off"
"""The hybrid search as a superuser, whom PostgreSQL's row-level security never polices (the
same statements, gates included): its ratio to "hybrid", run as the owner the policies police
(FORCE), is the policies' cost (docs/rls.md). Measured on the embedded server only."""
RLS_STRICT = "hybrid, policed role"
"""The hybrid search as a role with no all-users policy (as the agent role of `adk-memory db
roles`): the strict scope predicate alone, without the owner's all-users alternative."""
READER = "adk_memory_bench_reader"


# ---------------------------------------------------------------------------------------------
# Recall and plans


async def exact_neighbours(dsn: str, queries: list[Query]) -> list[list[str]]:
    """The true `TOP_K` nearest live memories of each query's scope, by a sequential scan."""
    conn = await asyncpg.connect(dsn)
    out: list[list[str]] = []
    try:
        for n, query in enumerate(queries):
            async with conn.transaction():
                await conn.execute("SET LOCAL enable_indexscan = off")
                await conn.execute("SET LOCAL enable_bitmapscan = off")
                rows = await conn.fetch(
                    f"SELECT id::text FROM {SCHEMA}.memories m "
                    "WHERE scope_key = $1 AND embedding IS NOT NULL "
                    "AND (expire_time IS NULL OR expire_time > now()) "
                    "ORDER BY embedding <=> $2::vector, id LIMIT $3",
                    scope_key(query.scope),
                    Vector(query.vector).to_text(),
                    TOP_K,
                )
            out.append([r[0] for r in rows])
            if n % 50 == 49:
                progress(f"exact scans: {n + 1}/{len(queries)}", end="\r")
    finally:
        await conn.close()
    progress(f"exact scans: {len(out)} done")
    return out


def recall(found: list[list[str]], exact: list[list[str]]) -> list[float]:
    """Per query: the share of the exact top-k that the search returned."""
    return [len(set(f) & set(e)) / len(e) for f, e in zip(found, exact, strict=True) if e]


def size_bucket(size: int) -> str:
    """A label for a scope's size range."""
    for limit, label in ((10, "<=10"), (100, "11-100"), (1000, "101-1k"), (10_000, "1k-10k")):
        if size <= limit:
            return label
    return ">10k"


def retrieval(service: PostgresMemoryService, query: Query) -> tuple[str, tuple[object, ...]]:
    """The statement and arguments `service` runs for `query` (no filter, no redaction: the
    benchmark's services have no redactor), built by the service's and store's own code."""
    vector = None if service.config.retrieval.mode == "text" else query.vector
    search = service.retrieval.plan(
        query.scope,
        query.text,
        query.text,
        vector,
        top_k=TOP_K,
        flt=None,
        now=datetime.now(timezone.utc),
    )
    return service._parts.store.retrieval(search)


def literal(value: object) -> str:
    """`value` as an SQL literal for EXECUTE (only the benchmark's own values get here)."""
    if value is None:
        return "NULL"
    return "'" + str(value).replace("'", "''") + "'"


async def explain_custom(service: PostgresMemoryService, query: Query) -> list[str]:
    """EXPLAIN ANALYZE of the retrieval statement planned for these values (a custom plan), on
    one of the service's pooled connections."""
    sql, args = retrieval(service, query)
    async with service.database.connection() as conn:
        rows = await conn.fetch("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql, *args)
    return [r[0] for r in rows]


async def explain_generic(dsn: str, service: PostgresMemoryService, query: Query) -> list[str]:
    """EXPLAIN ANALYZE of the retrieval statement's generic plan (the one a prepared statement
    switches to when the server finds it no worse)."""
    sql, args = retrieval(service, query)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        await conn.execute("PREPARE bench_retrieve AS " + sql)
        values = ", ".join(literal(a) for a in args)
        rows = await conn.fetch(
            f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE bench_retrieve({values})"
        )
    finally:
        await conn.close()
    return [r[0] for r in rows]


def vector_subtree(plan: list[str]) -> list[str]:
    """The vector search's part of a retrieval plan (the `vec` subquery), query vectors elided,
    with the planning and execution times."""
    start = next((i for i, line in enumerate(plan) if "Subquery Scan on vec" in line), None)
    if start is None:
        return plan
    indent = len(plan[start]) - len(plan[start].lstrip())
    lines = [plan[start]]
    for line in plan[start + 1 :]:
        if len(line) - len(line.lstrip()) <= indent:
            break
        lines.append(line)
    lines = [line[indent:] for line in lines]
    lines += [
        line.strip()
        for line in plan
        if line.strip().startswith(("Planning Time", "Execution Time"))
    ]
    return [re.sub(r"'\[[^']*\]'::vector", "'[query]'::vector", line) for line in lines]


async def plan_counts(service: PostgresMemoryService) -> dict[str, str]:
    """How the server planned the retrieval statement on a pooled connection so far (generic vs
    custom plans of the prepared statement)."""
    out: dict[str, str] = {}
    async with service.database.connection() as conn:
        row = await conn.fetchrow(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE '%WITH vec AS%' ORDER BY generic_plans + custom_plans DESC "
            "LIMIT 1"
        )
    if row is not None:
        out["retrieve plans"] = f"{row['generic_plans']} generic, {row['custom_plans']} custom"
    return out


# ---------------------------------------------------------------------------------------------
# Report


def latency_report(plan: Plan, samples: dict[str, Samples]) -> None:
    """p50/p95/p99 per configuration, the p95 target, and ADK's ratio."""
    at_scale = plan.memories >= TARGET_SCALE
    rows = []
    for name, s in samples.items():
        p95 = percentile(s.seconds, 95) * 1000
        verdict = "-"
        if name != ADK:
            verdict = f"{'PASS' if p95 <= P95_TARGET_MS else 'MISS'}"
            if not at_scale:
                verdict += f" (target is for {TARGET_SCALE:,})"
        rows.append(
            (
                name,
                ms(percentile(s.seconds, 50)),
                ms(percentile(s.seconds, 95)),
                ms(percentile(s.seconds, 99)),
                ms(statistics.fmean(s.seconds)),
                f"{statistics.fmean(len(i) for i in s.ids):.1f}",
                verdict,
            )
        )
    count = len(next(iter(samples.values())).seconds)
    print(
        f"\nretrieve_memories(top_k={TOP_K}) latency, {count} queries per configuration "
        "(ms; embedding time excluded)\n"
    )
    header = ("configuration", "p50", "p95", "p99", "mean", "results", "p95 <= 15 ms")
    table(header, rows)
    if ADK in samples:
        adk_report(samples)


def rls_report(samples: dict[str, Samples]) -> None:
    """Row-level security's cost on the hybrid search: policed owner vs superuser, same queries
    interleaved."""
    off = samples[RLS_OFF].seconds
    on, strict = samples["hybrid"].seconds, samples[RLS_STRICT].seconds

    def change(f: Callable[[list[float]], float], seconds: list[float]) -> str:
        return f"{ms(f(seconds))} ({100 * (f(seconds) / f(off) - 1):+.1f} %)"

    rows = [
        (what, ms(f(off)), change(f, on), change(f, strict))
        for what, f in (
            ("p50", lambda s: percentile(s, 50)),
            ("p95", lambda s: percentile(s, 95)),
            ("mean", statistics.fmean),
        )
    ]
    print("\nRow-level security on the hybrid search (ms; change against RLS off)\n")
    header = ("statistic", "RLS off (superuser)", "RLS on (owner)", "RLS on (policed role)")
    table(header, rows)


def superuser(url: str) -> str:
    """The embedded server's superuser URL (its owner's URL names `OWNER_ROLE` instead)."""
    return make_url(url).set(username=SUPERUSER).render_as_string(hide_password=False)


def latency_by_size(samples: dict[str, Samples], queries: list[Query], sizes: list[int]) -> None:
    """p50 / p95 per configuration and scope size: where the time goes."""
    labels = [size_bucket(sizes[q.scope_no]) for q in queries]
    buckets = sorted(set(labels), key=bucket_order)
    rows = []
    for name, s in samples.items():
        cells = []
        for bucket in buckets:
            times = [t for t, label in zip(s.seconds, labels, strict=True) if label == bucket]
            cells.append(f"{ms(percentile(times, 50))} / {ms(percentile(times, 95))}")
        rows.append((name, *cells))
    counts = {b: labels.count(b) for b in buckets}
    print("\nLatency by scope size (ms, p50 / p95; queries per bucket in the header)\n")
    table(("configuration", *(f"scope {b} ({counts[b]})" for b in buckets)), rows)


def adk_report(samples: dict[str, Samples]) -> None:
    """How ADK's keyword matcher's latency compares; it does different (lesser) work."""
    adk = samples[ADK].seconds
    print()
    for name in ("hybrid", "text"):
        ours = samples[name].seconds
        print(
            f"ADK / {name}: p50 {percentile(adk, 50) / percentile(ours, 50):.1f}x, "
            f"p95 {percentile(adk, 95) / percentile(ours, 95):.1f}x (above 1: ours is faster)"
        )
    print(
        "ADK's InMemoryMemoryService is a keyword matcher: it scans every event of the user, "
        "counts\nquery words it contains and keeps the ten with the most (no stemming, no "
        "relevance ranking,\nno vectors, no persistence). The comparison is of latency only, "
        "not of result quality."
    )


def recall_report(
    samples: dict[str, Samples], exact: list[list[str]], queries: list[Query], sizes: list[int]
) -> None:
    """Recall@10 of the vector-only configurations, overall and by scope size."""
    buckets = sorted({size_bucket(sizes[q.scope_no]) for q in queries}, key=bucket_order)
    rows = []
    for name in ("vector", "vector, relevance only"):
        scores = recall(samples[name].ids, exact)
        by_bucket: dict[str, list[float]] = defaultdict(list)
        for query, score in zip(queries, scores, strict=True):
            by_bucket[size_bucket(sizes[query.scope_no])].append(score)
        mean = statistics.fmean(scores)
        rows.append(
            (
                name,
                f"{mean:.4f}",
                f"{min(scores):.2f}",
                *(f"{statistics.fmean(by_bucket[b]):.3f} ({len(by_bucket[b])})" for b in buckets),
                "PASS" if mean >= RECALL_TARGET else "MISS",
            )
        )
    print(
        f"\nRecall@{TOP_K} against an exact scan of the scope "
        "(mean; by scope size: mean (queries))\n"
    )
    header = ("configuration", "recall", "min", *(f"scope {b}" for b in buckets), ">= 0.95")
    table(header, rows)
    print(
        "'vector' ranks the vector candidates with the default recency and importance weights, "
        "so\nits top 10 may differ from the 10 nearest by design; 'relevance only' zeroes "
        "those weights\nand measures the search itself."
    )


def bucket_order(label: str) -> int:
    """Sort key of `size_bucket` labels."""
    return ["<=10", "11-100", "101-1k", "1k-10k", ">10k"].index(label)


async def server_facts(dsn: str) -> dict[str, str]:
    """Server version, pgvector version and the settings that shape the measurements."""
    conn = await asyncpg.connect(dsn)
    try:
        facts = {
            "version": str(await conn.fetchval("SELECT version()")),
            "pgvector": str(
                await conn.fetchval("SELECT extversion FROM pg_extension WHERE extname='vector'")
            ),
        }
        for name in ("shared_buffers", "work_mem", "jit", "max_parallel_workers_per_gather"):
            facts[name] = str(await conn.fetchval(f"SHOW {name}"))
        return facts
    finally:
        await conn.close()


async def data_sizes(dsn: str) -> list[tuple[str, str]]:
    """The table's and each index's size on disk."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT c.relname, pg_size_pretty(pg_relation_size(c.oid)) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 "
            "AND (c.relname = 'memories' OR c.oid IN (SELECT indexrelid FROM pg_index "
            "WHERE indrelid = $2::regclass)) ORDER BY pg_relation_size(c.oid) DESC",
            SCHEMA,
            f"{SCHEMA}.memories",
        )
        total = await conn.fetchval(
            "SELECT pg_size_pretty(pg_total_relation_size($1::regclass))", f"{SCHEMA}.memories"
        )
        return [(r[0], r[1]) for r in rows] + [("total (table + indexes + toast)", total)]
    finally:
        await conn.close()


def describe(plan: Plan, embedded: bool, facts: dict[str, str], sizes: list[int], url: str) -> None:
    """The set-up: server, software, data shape."""
    server = common.server_label(url, embedded)
    ordered = sorted(sizes)
    print(f"PostgreSQL: {facts['version']}")
    print(f"pgvector:   {facts['pgvector']}")
    print(f"Server:     {server}")
    print(
        f"Settings:   shared_buffers={facts['shared_buffers']}, work_mem={facts['work_mem']}, "
        f"jit={facts['jit']}, "
        f"max_parallel_workers_per_gather={facts['max_parallel_workers_per_gather']}"
    )
    print(
        f"Software:   Python {sys.version.split()[0]}, google-adk {metadata.version('google-adk')},"
        f" asyncpg {metadata.version('asyncpg')}; {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.2f} after loading"
    )
    print(
        f"Data:       {plan.memories:,} memories in {plan.scopes:,} scopes, {plan.dims} dims; "
        f"scope sizes min {ordered[0]}, median {ordered[len(ordered) // 2]}, "
        f"p99 {ordered[int(len(ordered) * 0.99)]}, max {ordered[-1]:,}"
    )
    print(f"Queries:    {plan.queries} per configuration (+{WARMUP} warm-up), seed {plan.seed}")


def sizes_report(sizes_on_disk: list[tuple[str, str]], loaded: LoadReport) -> None:
    """Data size on disk and load time per step."""
    print("\nData size\n")
    table(("relation", "size"), sizes_on_disk)
    print("\nLoad time\n")
    rows = [(step, f"{seconds:.1f}") for step, seconds in loaded.steps.items()]
    table(("step", "seconds"), [*rows, ("total", f"{loaded.total:.1f}")])


def plans_report(plans: list[tuple[str, list[str]]], settings: dict[str, dict[str, str]]) -> None:
    """The vector search's plans, and how the server planned the statement so far."""
    print("\nRetrieval plans on the service's pooled connection, after the measurements\n")
    for name, values in settings.items():
        print(f"  {name}: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    for title, lines in plans:
        print(f"\n{title}\n")
        for line in lines:
            print(f"  {line}")


# ---------------------------------------------------------------------------------------------
# Entry point


def make_services(bench_url: str, embedder: QueryEmbedder) -> dict[str, PostgresMemoryService]:
    """One service (and pool) per configuration, all on the loaded schema."""
    return {
        name: PostgresMemoryService(
            bench_url, embedder=embedder, config=MemoryBankConfig(retrieval=config)
        )
        for name, config in CONFIGS.items()
    }


async def run_plans(
    services: dict[str, PostgresMemoryService],
    dsn: str,
    queries: list[Query],
    sizes: list[int],
) -> list[tuple[str, list[str]]]:
    """The vector-only search's custom and generic plans for a median-sized and the biggest
    scope (EXPLAIN ANALYZE)."""
    median_size = sorted(sizes)[len(sizes) // 2]
    median_scope = next(i for i, s in enumerate(sizes) if s == median_size)
    template = queries[0]
    plans = []
    for scope_no in (median_scope, 0):
        query = Query(scope_no, template.text, template.vector)
        what = f"scope u{scope_no} ({sizes[scope_no]:,} memories)"
        custom = await explain_custom(services["vector"], query)
        plans.append((f"Vector-only search, {what}: custom plan", vector_subtree(custom)))
        generic = await explain_generic(dsn, services["vector"], query)
        plans.append((f"Vector-only search, {what}: generic plan", vector_subtree(generic)))
    return plans


async def bench(url: str, embedded: bool, plan: Plan) -> None:
    """Load, measure, report."""
    rng = random.Random(plan.seed)
    sizes = scope_sizes(plan.memories, plan.scopes, plan.skew)
    centres = centroids(plan.dims, rng)
    queries = make_queries(sizes, centres, plan.queries + WARMUP, rng)
    warmup, queries = queries[:WARMUP], queries[WARMUP:]
    admin_url = superuser(url) if embedded else url
    bench_admin = await common.fresh_database(admin_url, BENCH_DATABASE)
    bench_url = make_url(url).set(database=BENCH_DATABASE).render_as_string(hide_password=False)
    if embedded:  # the owner migrates and searches; the superuser loads (no policy in the way)
        await common.admin(
            bench_admin,
            f"GRANT CREATE ON DATABASE {BENCH_DATABASE} TO {OWNER_ROLE}",
            "CREATE EXTENSION IF NOT EXISTS vector",
            "CREATE EXTENSION IF NOT EXISTS btree_gin",
            f"DROP ROLE IF EXISTS {READER}",
            f"CREATE ROLE {READER} LOGIN",
        )
    dsn = common.asyncpg_dsn(bench_admin)
    try:
        loaded = await load(bench_url, bench_admin, plan, sizes, centres, rng)
        conn = await asyncpg.connect(dsn)
        try:
            await check_scope_keys(conn, sizes)
        finally:
            await conn.close()
        describe(plan, embedded, await server_facts(dsn), sizes, url)
        sizes_report(await data_sizes(dsn), loaded)
        rls_off = bench_admin if embedded else None
        if embedded:
            await common.admin(
                bench_admin,
                f"GRANT USAGE ON SCHEMA {SCHEMA} TO {READER}",
                f"GRANT SELECT ON ALL TABLES IN SCHEMA {SCHEMA} TO {READER}",
            )
        await measure_all(bench_url, rls_off, plan, sizes, queries, warmup)
    finally:
        if not plan.keep:
            await common.drop_database(admin_url, BENCH_DATABASE)


async def measure_all(
    bench_url: str,
    rls_off_url: str | None,
    plan: Plan,
    sizes: list[int],
    queries: list[Query],
    warmup: list[Query],
) -> None:
    """Every timed configuration, recall, and plans; prints the report. With `rls_off_url` (a
    superuser's), the hybrid search again as that role: row-level security's cost."""
    embedder = QueryEmbedder(plan.dims)
    services = make_services(bench_url, embedder)
    if rls_off_url is not None:
        reader = make_url(bench_url).set(username=READER).render_as_string(hide_password=False)
        for name, url in ((RLS_OFF, rls_off_url), (RLS_STRICT, reader)):
            services[name] = PostgresMemoryService(
                url, embedder=embedder, config=MemoryBankConfig(retrieval=CONFIGS["hybrid"])
            )
    probes: dict[str, Probe] = {
        name: postgres_probe(svc, embedder) for name, svc in services.items()
    }
    if plan.memories <= plan.adk_max_memories:
        progress("loading the same facts into ADK's InMemoryMemoryService ...")
        adk, seconds = await load_adk(bench_url)
        progress(f"ADK loaded in {seconds:.1f} s")
        probes[ADK] = adk_probe(adk)
    else:
        print(f"\n(ADK's in-memory service skipped above {plan.adk_max_memories:,} memories)")
    try:
        samples = await measure(probes, queries, warmup)
        for name in ("hybrid", "vector"):
            expect(all(samples[name].ids), f"{name}: a search returned nothing")
        dsn = common.asyncpg_dsn(rls_off_url or bench_url)
        exact = await exact_neighbours(dsn, queries)
        settings = {name: await plan_counts(svc) for name, svc in services.items()}
        plans = await run_plans(services, dsn, queries, sizes)
    finally:
        for svc in services.values():
            await svc.close()
    latency_report(plan, samples)
    if RLS_OFF in samples:
        rls_report(samples)
    latency_by_size(samples, queries, sizes)
    recall_report(samples, exact, queries, sizes)
    plans_report(plans, settings)


def parse_args(argv: list[str] | None = None) -> tuple[Plan, str | None]:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--scopes", type=int, default=10_000)
    parser.add_argument("--dims", type=int, default=64)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skew", type=float, default=SKEW, help="scope sizes' skew (0: equal)")
    parser.add_argument(
        "--adk-max-memories",
        type=int,
        default=100_000,
        help="compare with ADK's in-memory service up to this many memories",
    )
    parser.add_argument(
        "--maintenance-work-mem", default="2GB", help="for the index builds (session setting)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the benchmark database at the end"
    )
    args = parser.parse_args(argv)
    plan = Plan(
        memories=args.memories,
        scopes=args.scopes,
        dims=args.dims,
        queries=args.queries,
        seed=args.seed,
        adk_max_memories=args.adk_max_memories,
        maintenance_work_mem=args.maintenance_work_mem,
        keep=args.keep,
        skew=args.skew,
    )
    return plan, args.database_url


def main(argv: list[str] | None = None) -> int:
    plan, database_url = parse_args(argv)
    started = time.perf_counter()
    with common.postgres_server(database_url) as url:
        asyncio.run(bench(url, database_url is None, plan))
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
