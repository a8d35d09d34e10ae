"""Vertex AI import benchmark: memories/s of `VertexImporter` (what `adk-memory import vertex`
runs) reading a synthetic Agent Engine in Memory Bank's REST shape (pages of 100, users
interleaved as Memory Bank lists by creation time, one revision per memory), on the same
database as `create_memories` writing the same facts in one call per user (the floor: the
import writes through it).

Why: a migration copies every memory once and is then run again at cut-over (`--since`), so
both the first run and a re-run that finds everything there matter. The API's own time is not
counted (the synthetic engine answers at once): with the real API, add its page latency.

  first import      every memory created (redacted, guarded), with its revision
  again             a second run: every memory found, nothing written
  again, --no-revisions   the same without checking each memory's history
  create_memories   the same facts, one call per user (no reading, no keys, no history)

    python benchmarks/vertex_import.py [--database-url URL] [--memories 5000] [--users 50]

Prints memories/s per way, and the first import against `create_memories`.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping
from typing import Any

import _common as common
from _common import expect, table, timed

from adk_memory import PostgresMemoryService
from adk_memory.adk.vertex_import import VertexImporter
from adk_memory.adk.vertex_source import PAGE_SIZE, Listing

BENCH_DATABASE = "adk_memory_bench_vertex_import"
ENGINE = "projects/bench/locations/us-central1/reasoningEngines/1"


class SyntheticEngine:
    """`AgentEnginePages` for `memories` memories of `users` users, in Memory Bank's shape."""

    def __init__(self, memories: int, users: int) -> None:
        self.memories = memories
        self.users = users

    def _memory(self, i: int) -> dict[str, Any]:
        return {
            "name": f"{ENGINE}/memories/{i}",
            "fact": f"The user likes topic {i % 97} and asked about it (#{i}).",
            "scope": {"app_name": "bench", "user_id": f"user-{i % self.users}"},
            "topics": [{"managedMemoryTopic": "USER_PREFERENCES"}],
            "createTime": "2025-01-01T00:00:00Z",
            "updateTime": "2025-01-02T00:00:00Z",
        }

    async def page(
        self, listing: Listing, parent: str, page_token: str | None
    ) -> Mapping[str, Any]:
        if listing is Listing.REVISIONS:
            i = int(parent.rsplit("/", 1)[1])
            fact = self._memory(i)["fact"]
            revision = {"name": f"{parent}/revisions/1", "fact": fact}
            return {"memoryRevisions": [{**revision, "createTime": "2025-01-01T00:00:00Z"}]}
        if listing is not Listing.MEMORIES:
            return {}
        start = int(page_token or 0)
        end = min(start + PAGE_SIZE, self.memories)
        body: dict[str, Any] = {"memories": [self._memory(i) for i in range(start, end)]}
        if end < self.memories:
            body["nextPageToken"] = str(end)
        return body

    async def engine(self, name: str) -> Mapping[str, Any]:
        """The engine resource: no Memory Bank configuration (the benchmark times memories)."""
        return {"name": name}


async def bench(url: str, embedded: bool, memories: int, users: int) -> None:
    print(f"Server:     {common.server_label(url, embedded)}")
    print(f"Load:       {common.load_average()} at start")
    print(f"Engine:     {memories:,} memories of {users} users, 1 revision each; no embedder\n")
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    engine = SyntheticEngine(memories, users)
    rates: dict[str, float] = {}
    try:
        async with PostgresMemoryService(bench_url, run_worker=False) as memory:
            for name, revisions in (
                ("first import", True),
                ("again", True),
                ("again, --no-revisions", False),
            ):
                common.progress(name)
                importer = VertexImporter(engine, ENGINE, memory=memory, revisions=revisions)
                seconds, tally = await timed(importer.import_memories())
                expect(tally.read == memories, f"{name} read {tally.read}")
                expect(
                    tally.imported == (memories if name == "first import" else 0),
                    f"{name} imported {tally.imported}",
                )
                rates[name] = memories / seconds
            common.progress("create_memories")
            facts: dict[int, list[str]] = {}
            for i in range(memories):
                facts.setdefault(i % users, []).append(engine._memory(i)["fact"] + " (floor)")
            started = time.perf_counter()
            for user, texts in facts.items():
                await memory.create_memories(texts, {"app_name": "floor", "user_id": f"u{user}"})
            rates["create_memories"] = memories / (time.perf_counter() - started)
    finally:
        await common.drop_database(url, BENCH_DATABASE)
    table(["way", "memories/s"], [[name, f"{rate:,.0f}"] for name, rate in rates.items()])
    ratio = rates["first import"] / rates["create_memories"]
    print(f"\nfirst import vs create_memories: {ratio:.2f}x")
    print(f"\nLoad:       {common.load_average()} at end")


def main(argv: list[str] | None = None) -> int:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--users", type=int, default=50)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with common.postgres_server(args.database_url) as url:
        asyncio.run(bench(url, args.database_url is None, args.memories, args.users))
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
