"""Batch ingestion benchmark: memories written per second by `create_memories` and ADK's
`add_memory` path (one statement per call), against a loop of `create_memory` calls and ADK's
`InMemoryMemoryService`, on the same facts.

Why: imports and backfills write thousands of memories at once; one round trip per memory
(the `create_memory` loop) is bound by latency, one statement per batch by the server's
insert speed. The target: >= 5,000 memories/s with the deterministic `HashEmbedder` (64
dimensions, no model) and a `PiiRedactor`, on the embedded database.

Each batch size (100, 1,000, 10,000 facts) writes fresh facts of a fresh user with each way:

  create_memories   one call with every fact (redact, guard, one embed call, one INSERT)
  ..., NoGuard      the same without the guard (`NoGuard()`): what the default guard costs
                    (an ordinary fact skips the rules none of its words cue, and the
                    encoded-payload searches when it has no run of base64 or hex characters, no
                    escape, percent-escape or `data:`; about 0.06 ms of CPU a fact, against
                    0.18 ms for the server's share of the INSERT and the client's other work
                    together; see benchmarks/guard.py)
  add_memory        ADK's call with one MemoryEntry per fact (the same one statement)
  create_memory     one call per fact, awaited in turn
  ADK in-memory     ADK's InMemoryMemoryService.add_events_to_memory, one event per fact (its
                    `add_memory` raises NotImplementedError): a dict append, no database, no
                    redaction, guard or embedding; the floor of what a write can cost

    python benchmarks/ingest.py [--database-url URL] [--sizes 100,1000,10000]

Prints memories/s per way and size, and the ratios of `create_memories` to the others.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable

import _common as common
from _common import expect, table, timed
from google.adk.events.event import Event
from google.adk.memory import InMemoryMemoryService
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from adk_memory import PiiRedactor, PostgresMemoryService
from adk_memory.memory.guard import NoGuard
from adk_memory.testing import HashEmbedder

BENCH_DATABASE = "adk_memory_bench_ingest"
APP = "bench"
SUBJECTS = ("tea", "Lyon", "cycling", "jazz", "Python", "chess", "sushi", "Berlin", "yoga")
VERBS = ("likes", "talked about", "plans a trip around", "is learning", "asked twice about")


def facts(size: int, batch: int) -> list[str]:
    """`size` distinct, ordinary facts (deterministic), numbered within their batch. (They
    never mention the words the guard's rules look for, as most facts do not: a fact that
    says "system", "prompt" or "memories" runs the rules those words cue, about a quarter of
    a millisecond when all do.)"""
    return [
        f"The user {VERBS[i % len(VERBS)]} {SUBJECTS[i % len(SUBJECTS)]} (batch {batch}, #{i})."
        for i in range(size)
    ]


def content(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


Way = Callable[[list[str], str], Awaitable[object]]


def ways(
    ours: PostgresMemoryService, unguarded: PostgresMemoryService, adk: InMemoryMemoryService
) -> dict[str, Way]:
    async def create_memories(texts: list[str], user: str) -> object:
        return await ours.create_memories(texts, {"app_name": APP, "user_id": user})

    async def create_memories_unguarded(texts: list[str], user: str) -> object:
        return await unguarded.create_memories(texts, {"app_name": APP, "user_id": user})

    async def add_memory(texts: list[str], user: str) -> object:
        entries = [MemoryEntry(content=content(t)) for t in texts]
        return await ours.add_memory(app_name=APP, user_id=user, memories=entries)

    async def create_memory_loop(texts: list[str], user: str) -> object:
        for text in texts:
            await ours.create_memory(text, {"app_name": APP, "user_id": user})
        return None

    async def adk_in_memory(texts: list[str], user: str) -> object:
        events = [Event(author="user", content=content(t)) for t in texts]
        return await adk.add_events_to_memory(app_name=APP, user_id=user, events=events)

    return {
        "create_memories": create_memories,
        "create_memories, NoGuard": create_memories_unguarded,
        "add_memory": add_memory,
        "create_memory loop": create_memory_loop,
        "ADK in-memory": adk_in_memory,
    }


async def bench(url: str, embedded: bool, sizes: list[int]) -> None:
    print(f"Server:     {common.server_label(url, embedded)}")
    print(f"Load:       {common.load_average()} at start")
    print("Writes:     HashEmbedder(64), PiiRedactor, DefaultMemoryGuard (but NoGuard)\n")
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    ours = PostgresMemoryService(
        bench_url, embedder=HashEmbedder(), redactor=PiiRedactor(), run_worker=False
    )
    unguarded = PostgresMemoryService(
        bench_url,
        embedder=HashEmbedder(),
        redactor=PiiRedactor(),
        guard=NoGuard(),
        run_worker=False,
    )
    adk = InMemoryMemoryService()
    rates: dict[tuple[str, int], float] = {}
    try:
        await ours.create_memory("warm-up", {"app_name": APP, "user_id": "warm-up"})
        for size in sizes:
            for batch, (name, way) in enumerate(ways(ours, unguarded, adk).items()):
                user = f"{name}-{size}"
                texts = facts(size, batch)
                common.progress(f"{name}: {size} facts")
                seconds, _ = await timed(way(texts, user))
                if name != "ADK in-memory":
                    page = await ours.list_memories({"app_name": APP, "user_id": user}, page_size=1)
                    expect(bool(page.memories), f"{name} wrote nothing")
                rates[name, size] = size / seconds
    finally:
        await ours.close()
        await unguarded.close()
        await common.drop_database(url, BENCH_DATABASE)
    names = list(ways(ours, unguarded, adk))
    table(
        ["memories/s", *[f"{s:,} facts" for s in sizes]],
        [[n, *[f"{rates[n, s]:,.0f}" for s in sizes]] for n in names],
    )
    print()
    table(
        ["create_memories vs", *[f"{s:,} facts" for s in sizes]],
        [
            [n, *[f"{rates['create_memories', s] / rates[n, s]:.2f}x" for s in sizes]]
            for n in names[1:]
        ],
    )
    print(f"\nLoad:       {common.load_average()} at end")


def main(argv: list[str] | None = None) -> int:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--sizes", default="100,1000,10000", help="comma-separated batch sizes")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    with common.postgres_server(args.database_url) as url:
        asyncio.run(bench(url, args.database_url is None, sizes))
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
