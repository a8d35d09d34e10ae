"""Scratch (docs/rls.md §7): the memory paths split per key form, timed before and after. Run
on each tree: `cd <tree> && PYTHONPATH=<tree> python benchmarks/rls_scratch/split_paths.py`.
A plain page of a scope, the page with its quarantine (two statements now), and the purge of a
scope (a transaction block and one more statement now); median of `CALLS` calls, µs."""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common as common

from adk_memory import PostgresMemoryService
from adk_memory.memory.scope import scope_key
from adk_memory.testing import HashEmbedder

CALLS = 60


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    """Median µs of `CALLS` calls."""
    took = []
    for _ in range(CALLS):
        started = time.perf_counter()
        await call()
        took.append(time.perf_counter() - started)
    return statistics.median(took) * 1e6


async def main(url: str) -> None:
    async with PostgresMemoryService(url, embedder=HashEmbedder(), run_worker=False) as svc:
        scope = {"app_name": "a", "user_id": "u"}
        await svc.create_memories([f"fact number {i} about tea" for i in range(50)], scope)
        store, key = svc._parts.store, scope_key(scope)
        page = await timed(lambda: svc.list_memories(scope, page_size=20))
        print(f"list_memories page of 20: {page:.0f} us")
        both = await timed(lambda: store.list_memories(key, None, None, 20, quarantined=True))
        print(f"list with its quarantine (store): {both:.0f} us")
        fresh = lambda: store.purge(scope_key({"app_name": "a", "user_id": str(uuid.uuid4())}))  # noqa: E731
        print(f"purge of an empty scope (store): {await timed(fresh):.0f} us")


if __name__ == "__main__":
    with common.postgres_server(None) as server:
        asyncio.run(main(server))
