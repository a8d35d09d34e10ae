"""Memory Bank filter benchmark: what an AIP-160 `filter` and metadata `filter_groups` cost a
search (`retrieve_memories` with a query), against the same search unfiltered and filtered the
way adk-memory filtered before (`MemoryFilter(topics=...)`).

Why: Memory Bank's filters are compiled to one jsonpath predicate evaluated on each candidate
row (`memory.filters`, `store.sql.FILTER_DOCUMENT`), inside the one search statement, so they
narrow candidates before ranking. A filtered search cannot stay index-only (it reads each
candidate's row), as with the older filters; this measures both.

  unfiltered          a hybrid search of one scope (vector + full text), top 10
  topics filter       the same with MemoryFilter(topics=[...]) (the older filter path)
  AIP-160, a time     the same with `update_time > "2000-01-01T00:00:00Z"` (keeps all)
  ... a time and text the same with `... AND NOT fact:"zzz"` (keeps all; a regex per row)
  filter groups       the same with one metadata group `source = "chat"` (keeps half)

    python benchmarks/memory_bank_filters.py [--database-url URL] [--memories 5000] [--searches 100]

Prints p50 and p95 latency per way.
"""

from __future__ import annotations

import asyncio
import sys
import time

import _common as common
from _common import expect, ms, percentile, table

from adk_memory import PostgresMemoryService
from adk_memory.memory.models import MemoryFact, MemoryFilter
from adk_memory.testing import HashEmbedder

BENCH_DATABASE = "adk_memory_bench_memory_bank_filters"
SCOPE = {"app_name": "bench", "user_id": "u1"}
WORDS = ("coffee", "tea", "flights", "hotels", "chess", "music", "books", "running", "cats")


async def bench(url: str, embedded: bool, memories: int, searches: int) -> None:
    print(f"Server:     {common.server_label(url, embedded)}")
    print(f"Load:       {common.load_average()} at start")
    print(f"Scope:      {memories:,} memories, HashEmbedder(64); {searches} searches per way\n")
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    ways = {
        "unfiltered": {},
        "topics filter": {"filter": MemoryFilter(topics=["USER_PREFERENCES", "other"])},
        "AIP-160, a time": {"filter": 'update_time > "2000-01-01T00:00:00Z"'},
        "AIP-160, a time and text": {
            "filter": 'update_time > "2000-01-01T00:00:00Z" AND NOT fact:"zzz"'
        },
        "filter groups": {
            "filter_groups": [{"filters": [{"key": "source", "value": {"stringValue": "chat"}}]}]
        },
    }
    rows = []
    try:
        async with PostgresMemoryService(
            bench_url, embedder=HashEmbedder(), run_worker=False
        ) as memory:
            common.progress("writing")
            for start in range(0, memories, 1000):
                facts = [
                    MemoryFact(
                        f"The user likes {WORDS[i % len(WORDS)]} number {i}.",
                        topics=["USER_PREFERENCES"],
                        metadata={"source": "chat" if i % 2 else "import"},
                    )
                    for i in range(start, min(start + 1000, memories))
                ]
                await memory.create_memories(facts, SCOPE)
            for name, options in ways.items():
                common.progress(name)
                samples = []
                for i in range(searches):
                    query = f"what about {WORDS[i % len(WORDS)]}"
                    started = time.perf_counter()
                    found = await memory.retrieve_memories(
                        SCOPE, search_query=query, top_k=10, **options
                    )
                    samples.append(time.perf_counter() - started)
                    expect(len(found) == 10, f"{name}: {len(found)} results")
                rows.append([name, ms(percentile(samples, 50)), ms(percentile(samples, 95))])
    finally:
        await common.drop_database(url, BENCH_DATABASE)
    table(["way", "p50", "p95"], rows)
    print(f"\nLoad:       {common.load_average()} at end")


def main(argv: list[str] | None = None) -> int:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--searches", type=int, default=100)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with common.postgres_server(args.database_url) as url:
        asyncio.run(bench(url, args.database_url is None, args.memories, args.searches))
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
