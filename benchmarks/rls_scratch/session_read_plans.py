"""Scratch (issue 26 RLS note, §6): where the session read's RLS cost goes. The real `_GET`
with and without RLS, plain or gated, with the acting user set per statement (the gate) or
already set for the session, under `plan_cache_mode` auto and force_generic_plan; prints
µs per statement (median of 5 x 300) and how often the server used a generic plan, then
EXPLAIN ANALYZE of the generic plan each way.

    python benchmarks/rls_scratch/session_read_plans.py
"""

import asyncio
import statistics
import sys
import time
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).parent.parent))
import rls_experiment as x

from adk_memory.db.embedded import temporary_server
from adk_memory.db.engine import Database
from adk_memory.db.migrations import MIGRATIONS

ARGS = ("app", "alice", "s1", None, None)
COUNTS = (
    "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
    "WHERE statement LIKE '%s.last_update_time%' AND statement NOT LIKE 'EXPLAIN%'"
)
MORE_EVENTS = (
    "INSERT INTO adk_memory.events SELECT 'app', 'alice', 's2', g, 'x' || g, 'i', g, "
    "'{\"a\":1}' FROM generate_series(1, 3000) g"
)


async def bench(conn: asyncpg.Connection, sql: str) -> tuple[int, list[int]]:
    for _ in range(30):
        await conn.fetch(sql, *ARGS)
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(300):
            await conn.fetch(sql, *ARGS)
        runs.append((time.perf_counter() - start) / 300 * 1e6)
    return round(statistics.median(runs)), [round(v) for v in runs]


async def rls(conn: asyncpg.Connection, on: bool) -> None:
    await conn.execute("RESET ROLE")
    await conn.execute(x.rls(on))
    await conn.execute("SET ROLE rls_agent")
    await conn.execute("DISCARD PLANS")


async def main() -> None:
    with temporary_server("adk-rls-") as url:
        db = Database(url)
        for component, steps in MIGRATIONS.items():
            await db.ensure_migrated(component, steps)
        await db.close()
        conn = await asyncpg.connect(url)
        await conn.execute(x.SETUP)
        await x.seed(conn)
        await conn.execute(x.KEY_GATE)
        sessions = x.POLICIES.split("CREATE POLICY own ON adk_memory.memories")[0]
        await conn.execute(sessions + x.MEMORY_POLICY["keys"])
        await conn.execute(
            "INSERT INTO adk_memory.sessions (app_name, user_id, id, last_update_time) "
            "VALUES ('app', 'alice', 's2', 0)"
        )
        await conn.execute(MORE_EVENTS)
        await conn.execute("ANALYZE")
        get = x.kinds("keys")["get_session"]
        for mode in ("auto", "force_generic_plan", "auto", "force_generic_plan"):
            await conn.execute(f"RESET ROLE; SET plan_cache_mode = {mode}")
            print("plan_cache_mode", mode)
            await rls(conn, False)
            print("  RLS off, plain", await bench(conn, get.plain))
            print("  RLS off, gated", await bench(conn, get.gated))
            await rls(conn, True)
            await conn.execute(
                "SELECT set_config('adk_memory.app_name', 'app', false), "
                "set_config('adk_memory.user_id', 'alice', false)"
            )
            print("  RLS on, session setting, plain", await bench(conn, get.plain))
            print("  RLS on, session setting, gated", await bench(conn, get.gated))
            await conn.execute("RESET adk_memory.app_name; RESET adk_memory.user_id")
            print("  RLS on, gated", await bench(conn, get.gated))
            print("  (generic, custom) plans so far:", [tuple(r) for r in await conn.fetch(COUNTS)])
        await conn.execute("RESET ROLE; SET plan_cache_mode = force_generic_plan")
        for on in (False, True):
            await rls(conn, on)
            name = f"g{int(on)}"
            await conn.execute(
                f"PREPARE {name}(text, text, text, bigint, float8) AS "
                + (get.gated if on else get.plain)
            )
            call = f"EXECUTE {name}('app', 'alice', 's1', NULL, NULL)"
            for _ in range(3):
                await conn.execute(call)
            plan = await conn.fetch(f"EXPLAIN (ANALYZE, COSTS OFF, BUFFERS OFF) {call}")
            print(f"--- generic plan, RLS {on}")
            print("\n".join(r[0] for r in plan))
        await conn.close()


asyncio.run(main())
