"""Vector-size benchmark: vector search's recall@10 and latency at 768, 1,536 and 3,072
dimensions (gemini-embedding-001's sizes), on a large memory bank of skewed scopes.

Why: up to 800 dimensions a scope's search is an exact scan of a covering index of
half-precision vectors; above, the `quantized` strategy ranks the scope's binary-quantised
vectors from a covering index and re-ranks the best `RERANKED_MIN` (or twice the candidates) by
their full-precision vectors (db/vectors.py, memory/store/retrieval.py). It checks the bar:

  1,536 dims, 100k memories, 2 cores: recall@10 >= 0.95 against exact search at p95 <= 20 ms

Data: the memory-search benchmark's (benchmarks/memory_search.py): `--memories` memories over
`--scopes` scopes with Zipf-like sizes (a few of thousands, most of a handful), each vector its
topic's centroid plus Gaussian noise, normalised (a Gaussian mixture, clustered like real
embeddings), generated inside PostgreSQL, the vector index built after the load with
`--maintenance-work-mem`.

Measuring: `retrieve_memories` in vector mode, ranked by relevance alone (recency and
importance weights zero, so its top 10 are the search's), through the public service API with an
embedder that returns precomputed query vectors near the stored ones (embedding time excluded).
Half the queries pick their scope in proportion to its size (as traffic would), half uniformly
(most scopes are small). Recall@10 compares with the exact nearest neighbours from a sequential
scan. Results are split by scope size at `--sizes` (default: `RERANKED_MIN`, up to which the
search is exact, and 1,000). The 1-minute load average is printed with every row:
other work on the machine makes every number noisier.

    python benchmarks/vector_sizes.py [--database-url URL] [--dims 768,1536,3072]
        [--memories 100000] [--scopes 10000] [--queries 400] [--sizes 200,1000] [--compare]

With `--compare`, at the quantised sizes, the queries in scopes bigger than the re-ranked pool
also run as the vector search alone in three ways: the store's quantised search, an exact
scan of the scope, and HNSW on the half-precision vectors (index built for the comparison)
with iterative scans.

Each dimension gets a fresh database (`adk_memory_bench_vectors`), dropped afterwards unless
`--keep` (then only the last one is kept). The exit status is 0 whether or not the bar is met.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass

import _common as common
import asyncpg
import memory_search as search
from _common import ms, percentile, table
from pgvector import Vector

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.config import RetrievalConfig
from adk_memory.db.vectors import EXACT, QUANTIZED, vector_strategy
from adk_memory.memory.scope import scope_key

# The store's own vector searches, timed against the alternatives (private on purpose: the
# comparison must run the real SQL, not a copy that could drift).
from adk_memory.memory.store.retrieval import RERANKED_MIN, _vector_search

BENCH_DATABASE = "adk_memory_bench_vectors"
BAR_DIMS = 1536
BAR_MEMORIES = 100_000
RECALL_TARGET = 0.95
P95_TARGET_MS = 20.0
CONFIG = RetrievalConfig(mode="vector", recency_weight=0.0, importance_weight=0.0)


@dataclass(frozen=True)
class Outcome:
    """One dimension's measurements."""

    dims: int
    sizes: list[int]
    queries: list[search.Query]
    samples: search.Samples
    exact: list[list[str]]
    loaded: search.LoadReport
    on_disk: list[tuple[str, str]]
    load: str
    plans: list[tuple[str, list[str]]]
    compared: dict[str, search.Samples]
    """With --compare: each search method's timings and ids in the scopes bigger than the
    re-ranked pool, on the queries there."""


def make_queries(
    sizes: list[int], centres: list[list[float]], count: int, rng: random.Random
) -> list[search.Query]:
    """`count` searches, half in scopes drawn by size, half in scopes drawn uniformly,
    interleaved."""
    by_size = search.make_queries(sizes, centres, count - count // 2, rng)
    uniform = search.make_queries([1] * len(sizes), centres, count // 2, rng)
    mixed = [q for pair in zip(by_size, uniform, strict=False) for q in pair]
    return mixed + by_size[len(uniform) :]


async def plans_for(
    service: PostgresMemoryService, sizes: list[int], template: search.Query
) -> list[tuple[str, list[str]]]:
    """The vector search's plan (EXPLAIN ANALYZE, custom) in the biggest and a median scope."""
    median = sorted(sizes)[len(sizes) // 2]
    out = []
    for scope_no in (0, sizes.index(median)):
        query = search.Query(scope_no, template.text, template.vector)
        lines = await search.explain_custom(service, query, CONFIG)
        out.append((f"scope u{scope_no} ({sizes[scope_no]:,} memories)", lines))
    return out


async def run_dims(url: str, dims: int, args: argparse.Namespace) -> Outcome:
    """Load a bank of `dims`-dimension vectors, measure, drop it (unless --keep)."""
    plan = search.Plan(
        memories=args.memories,
        scopes=args.scopes,
        dims=dims,
        queries=args.queries,
        seed=args.seed,
        adk_max_memories=0,
        maintenance_work_mem=args.maintenance_work_mem,
        keep=args.keep,
    )
    rng = random.Random(args.seed)
    sizes = search.scope_sizes(plan.memories, plan.scopes)
    centres = search.centroids(dims, rng)
    queries = make_queries(sizes, centres, plan.queries + search.WARMUP, rng)
    warmup, queries = queries[: search.WARMUP], queries[search.WARMUP :]
    common.progress(f"{dims} dims ({vector_strategy(dims)}): loading {plan.memories:,} memories")
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    dsn = common.asyncpg_dsn(bench_url)
    try:
        loaded = await search.load(bench_url, plan, sizes, centres, rng)
        embedder = search.QueryEmbedder(dims)
        service = PostgresMemoryService(
            bench_url, embedder=embedder, config=MemoryBankConfig(retrieval=CONFIG)
        )
        try:
            probe = search.postgres_probe(service, embedder)
            samples = (await search.measure({"vector": probe}, queries, warmup))["vector"]
            load = common.load_average()
            plans = await plans_for(service, sizes, queries[0])
        finally:
            await service.close()
        exact = await search.exact_neighbours(dsn, queries)
        on_disk = await search.data_sizes(dsn)
        big = [q for q in queries if sizes[q.scope_no] > RERANKED_MIN]
        compared = {}
        if args.compare and vector_strategy(dims) == QUANTIZED:
            compared = await compare(dsn, dims, big, args.maintenance_work_mem)
    finally:
        if not args.keep:
            await common.drop_database(url, BENCH_DATABASE)
    return Outcome(dims, sizes, queries, samples, exact, loaded, on_disk, load, plans, compared)


# The alternatives --compare measures, as vector searches alone (no fusion, no service): $1 scope
# key, $2 query vector, $3 candidates. Exact and quantised are the store's own searches; HNSW
# (on the half-precision cast: pgvector's `vector` HNSW stops at 2,000 dimensions) is written
# here, its scope condition kept from the btree and GIN indexes so the planner takes the HNSW
# index (it otherwise sorts the whole scope, the exact search), with iterative scans.
_HNSW_INDEX = (
    "CREATE INDEX bench_half_hnsw ON {schema}.memories "
    "USING hnsw ((embedding::halfvec({dims})) halfvec_cosine_ops)"
)
_HNSW_SEARCH = """
SELECT m.id FROM {schema}.memories m
 WHERE m.scope_key || '' = $1 AND (m.expire_time IS NULL OR m.expire_time > now())
 ORDER BY m.embedding::halfvec({dims}) <=> (SELECT $2::vector::halfvec({dims}))
 LIMIT $3"""


def _store_search(strategy: str) -> str:
    nearest = _vector_search(
        strategy,
        query="$2::vector",
        half="(SELECT $2::vector::halfvec)",
        bits="(SELECT binary_quantize($2::vector))",
        limit="$3",
    ).format(schema=search.SCHEMA)
    return f"SELECT id FROM ({nearest}) v ORDER BY distance"


async def compare(
    dsn: str, dims: int, queries: list[search.Query], maintenance_work_mem: str
) -> dict[str, search.Samples]:
    """Time the quantised search against an exact scan and HNSW (index built here, dropped
    after) on `queries`, interleaved, on one direct connection; the top 10 ids of each."""
    conn = await asyncpg.connect(dsn)
    try:
        common.progress("--compare: building an HNSW index on the half-precision vectors ...")
        await conn.execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'")
        started = time.perf_counter()
        await conn.execute(_HNSW_INDEX.format(schema=search.SCHEMA, dims=dims))
        common.progress(f"HNSW index built in {time.perf_counter() - started:.1f} s")
        await conn.execute(f"VACUUM ANALYZE {search.SCHEMA}.memories")
        candidates = CONFIG.candidates
        await conn.execute(
            "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false), "
            "set_config('hnsw.ef_search', $1, false)",
            str(max(candidates, 40)),
        )
        statements = {
            f"{QUANTIZED} (the store's)": _store_search(QUANTIZED),
            f"{EXACT} scan": _store_search(EXACT),
            "HNSW, iterative scan": _HNSW_SEARCH.format(schema=search.SCHEMA, dims=dims),
        }
        samples = {name: search.Samples() for name in statements}
        for measured, batch in ((False, queries[: search.WARMUP]), (True, queries)):
            for query in batch:
                args = (scope_key(query.scope), Vector(query.vector).to_text(), candidates)
                for name, sql in statements.items():
                    started = time.perf_counter()
                    rows = await conn.fetch(sql, *args)
                    if measured:
                        samples[name].seconds.append(time.perf_counter() - started)
                        samples[name].ids.append([str(r[0]) for r in rows[: search.TOP_K]])
        await conn.execute(f"DROP INDEX {search.SCHEMA}.bench_half_hnsw")
    finally:
        await conn.close()
    return samples


def bucket(size: int, limits: list[int]) -> str:
    """A label for a scope's size range between `limits`."""
    low = 1
    for limit in limits:
        if size <= limit:
            return f"{low}-{limit}"
        low = limit + 1
    return f">{limits[-1]}"


def report(outcomes: list[Outcome], limits: list[int], memories: int) -> None:
    """Recall and latency per dimension and scope size, then the bar."""
    rows = []
    bar: list[str] = []
    labels_order = [bucket(limit, limits) for limit in limits] + [f">{limits[-1]}"]
    for o in outcomes:
        scores = search.recall(o.samples.ids, o.exact)
        labels = [bucket(o.sizes[q.scope_no], limits) for q in o.queries]
        groups = [("all", list(range(len(o.queries))))] + [
            (label, [i for i, x in enumerate(labels) if x == label]) for label in labels_order
        ]
        for label, picked in groups:
            if not picked:
                continue
            times = [o.samples.seconds[i] for i in picked]
            recalls = [scores[i] for i in picked]
            rows.append(
                (
                    f"{o.dims} ({vector_strategy(o.dims)})" if label == "all" else "",
                    label,
                    str(len(picked)),
                    f"{statistics.fmean(recalls):.4f}",
                    f"{min(recalls):.2f}",
                    ms(percentile(times, 50)),
                    ms(percentile(times, 95)),
                    o.load if label == "all" else "",
                )
            )
        if o.dims == BAR_DIMS:
            mean = statistics.fmean(scores)
            p95 = percentile(o.samples.seconds, 95) * 1000
            ok = mean >= RECALL_TARGET and p95 <= P95_TARGET_MS
            scale = "" if memories >= BAR_MEMORIES else f" (the bar is for {BAR_MEMORIES:,})"
            bar.append(
                f"Bar, {BAR_DIMS} dims at {memories:,} memories on {os.cpu_count()} CPUs: "
                f"recall@10 {mean:.4f} (>= {RECALL_TARGET}), p95 {p95:.2f} ms "
                f"(<= {P95_TARGET_MS:.0f}): {'PASS' if ok else 'MISS'}{scale}"
            )
    print(
        f"\nVector search: retrieve_memories(mode vector, top_k={search.TOP_K}), recall@10 against"
        " exact search,\nlatency in ms (embedding excluded), by scope size (memories)\n"
    )
    header = ("dims (strategy)", "scopes", "queries", "recall", "min", "p50", "p95", "load")
    table(header, rows)
    print()
    for line in bar:
        print(line)


def comparison(outcomes: list[Outcome]) -> None:
    """--compare's table: recall@10 and latency of each search method in the big scopes."""
    rows = []
    for o in outcomes:
        if not o.compared:
            continue
        big = [i for i, q in enumerate(o.queries) if o.sizes[q.scope_no] > RERANKED_MIN]
        exact = [o.exact[i] for i in big]
        for name, s in o.compared.items():
            rows.append(
                (
                    f"{o.dims}: {name}",
                    str(len(s.seconds)),
                    f"{statistics.fmean(search.recall(s.ids, exact)):.4f}",
                    ms(percentile(s.seconds, 50)),
                    ms(percentile(s.seconds, 95)),
                )
            )
    if rows:
        print(
            f"\nSearch methods in scopes of more than {RERANKED_MIN} memories (SQL alone, "
            f"{CONFIG.candidates} candidates, one connection; recall@10 against exact)\n"
        )
        table(("dims: method", "queries", "recall", "p50", "p95"), rows)


def details(outcomes: list[Outcome]) -> None:
    """Load times, sizes on disk and the vector search's plans, per dimension."""
    for o in outcomes:
        print(f"\n--- {o.dims} dims ---\n")
        table(("relation", "size"), o.on_disk)
        print()
        steps = [(step, f"{seconds:.1f}") for step, seconds in o.loaded.steps.items()]
        table(("load step", "seconds"), steps)
        for title, lines in o.plans:
            print(f"\nVector search plan, {title}\n")
            for line in search.vector_subtree(lines):
                print(f"  {line}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    def numbers(text: str) -> list[int]:
        return sorted(int(x) for x in text.split(","))

    parser = common.argument_parser(__doc__)
    parser.add_argument("--dims", type=numbers, default=[768, 1536, 3072])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--scopes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument(
        "--sizes",
        type=numbers,
        default=[RERANKED_MIN, 1000],
        help="scope sizes to split the results at (default: where re-ranking stops being exact)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--maintenance-work-mem", default="2GB", help="for the index builds (session setting)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the (last) benchmark database at the end"
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="also time an exact scan and HNSW (built for the comparison) in the big scopes",
    )
    return parser.parse_args(argv)


async def bench(url: str, embedded: bool, args: argparse.Namespace) -> None:
    outcomes = []
    for dims in args.dims:
        outcomes.append(await run_dims(url, dims, args))
    print(f"Server: {common.server_label(url, embedded)}; {os.cpu_count()} CPUs")
    print(
        f"Data:   {args.memories:,} memories in {args.scopes:,} scopes (biggest "
        f"{max(outcomes[0].sizes):,}, median {sorted(outcomes[0].sizes)[args.scopes // 2]}), "
        f"{args.queries} queries per size (+{search.WARMUP} warm-up), seed {args.seed}"
    )
    report(outcomes, args.sizes, args.memories)
    comparison(outcomes)
    details(outcomes)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    with common.postgres_server(args.database_url) as url:
        asyncio.run(bench(url, args.database_url is None, args))
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
