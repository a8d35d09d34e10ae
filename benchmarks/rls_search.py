"""Row-level security experiment, part 2 (issue 26, design only): the real hybrid search
statement (`memory.store.retrieval`), captured from `retrieve_memories` and replayed as a
non-owner role, with and without RLS on `memories`, the gate added at every scan of the table.

    python benchmarks/rls_search.py [--memories 2000] [--rounds 5] [--n 100]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import asyncpg

sys.path.insert(0, str(Path(__file__).parent))
import rls_experiment as x

from adk_memory import PostgresMemoryService
from adk_memory.db.embedded import temporary_server
from adk_memory.db.engine import Database
from adk_memory.db.migrations import MIGRATIONS
from adk_memory.testing import HashEmbedder

S = x.S
POLICIES = {"any": x.MEMORY_POLICY["any"], "in3": x.MEMORY_POLICY["keys"]}
GRANT = f"GRANT SELECT ON {S}.memories, {S}.memory_tombstones TO rls_agent;"


async def capture(url: str, memories: int) -> tuple[str, tuple[Any, ...]]:
    """Loads `memories` facts in each of alice's and bob's scopes, then returns the statement
    and arguments one `retrieve_memories` for alice ran."""
    service = PostgresMemoryService(url, embedder=HashEmbedder(64))
    rng = random.Random(7)
    for user in x.USERS:
        scope = {"app_name": "app", "user_id": user}
        facts = [" ".join(rng.choice(x.WORDS) for _ in range(8)) for _ in range(memories)]
        for start in range(0, memories, 500):
            await service.create_memories(facts[start : start + 500], scope)
    seen: list[tuple[str, tuple[Any, ...]]] = []
    original = asyncpg.connection.Connection.fetch

    async def fetch(self: asyncpg.Connection, query: str, *args: Any, **kw: Any) -> Any:
        if "WITH vec AS" in query:
            seen.append((query, args))
        return await original(self, query, *args, **kw)

    asyncpg.connection.Connection.fetch = fetch
    try:
        found = await service.retrieve_memories(
            {"app_name": "app", "user_id": "alice"}, search_query="coffee and hiking", top_k=10
        )
    finally:
        asyncpg.connection.Connection.fetch = original
    assert found and seen, "no search captured"
    await service.close()
    return seen[-1]


def gated(statement: str, gate: str) -> str:
    """The gate in the WHERE of every scan of memories (each query level sets it before it
    reads the table)."""
    out = statement.replace("m.scope_key = $1", f"m.scope_key = $1 AND {gate}")
    out = out.replace("WHERE scope_key = $1", f"WHERE scope_key = $1 AND {gate}")
    return out.replace("ON m.id = f.id", f"ON m.id = f.id WHERE {gate}")


async def main(memories: int, rounds: int, n: int) -> None:
    with temporary_server("adk-rls-search-") as url:
        statement, args = await capture(url, memories)
        db = Database(url)  # the session tables too: the shared setup grants on them
        await db.ensure_migrated("sessions", MIGRATIONS["sessions"])
        await db.close()
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(x.SETUP + x.KEY_GATE + GRANT)
            many = gated(statement, f"{S}.act_as_scopes(ARRAY[$1::text])")
            one = gated(statement, f"{S}.act_as_scope($1::text)")
            modes = {
                "no RLS (today)": ("DISABLE", "in3", statement),
                "RLS = ANY(keys) + gate": ("ENABLE", "any", many),
                "RLS IN (3 keys) + gate": ("ENABLE", "in3", one),
            }
            expected = [r["id"] for r in await conn.fetch(statement, *args)]
            print("plans:")
            for name, (verb, policy, sql) in modes.items():
                await conn.execute(f"ALTER TABLE {S}.memories {verb} ROW LEVEL SECURITY")
                await conn.execute(f"DROP POLICY IF EXISTS own ON {S}.memories; {POLICIES[policy]}")
                await conn.execute("SET ROLE rls_agent")
                got = [r["id"] for r in await conn.fetch(sql, *args)]
                print(f"== {name}: same results as today: {got == expected} ({len(got)} rows)")
                plan = await x.explain(conn, sql, *args)
                print(
                    "\n".join(
                        line
                        for line in plan.splitlines()
                        if "Scan" in line or "Cond" in line or "Filter" in line
                    )
                )
                await conn.execute("RESET ROLE")
            print("load before:", os.getloadavg())
            results: dict[str, list[float]] = {name: [] for name in modes}
            for r in range(rounds):
                for name in list(modes)[r % len(modes) :] + list(modes)[: r % len(modes)]:
                    verb, policy, sql = modes[name]
                    await conn.execute(f"ALTER TABLE {S}.memories {verb} ROW LEVEL SECURITY")
                    await conn.execute(
                        f"DROP POLICY IF EXISTS own ON {S}.memories; {POLICIES[policy]}"
                    )
                    await conn.execute("SET ROLE rls_agent")
                    for _ in range(10):
                        await conn.fetch(sql, *args)
                    start = time.perf_counter()
                    for _ in range(n):
                        await conn.fetch(sql, *args)
                    results[name].append((time.perf_counter() - start) / n * 1e6)
                    await conn.execute("RESET ROLE")
            print("load after:", os.getloadavg())
            plans = await conn.fetch(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                "WHERE statement LIKE '%WITH vec AS%' AND statement NOT LIKE 'EXPLAIN%'"
            )
            print("(generic, custom) plans of the search statements:", [tuple(r) for r in plans])
            for name, runs in results.items():
                x.report(f"search ({memories}/scope)", name, runs, results["no RLS (today)"])
        finally:
            await conn.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=100)
    a = parser.parse_args()
    asyncio.run(main(a.memories, a.rounds, a.n))
