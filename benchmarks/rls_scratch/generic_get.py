"""Scratch (issue 26, docs/rls.md §6): the session read before and after it was split into
shapes. Before: one statement whose events column was a CASE on the selection ($4, $5), which
made the planner's custom plans cheaper than its generic one, so the read was planned on every
call; after: `_GET_ALL` (every event), which settles on its generic plan. Both gated, as the
embedded server's owner, RLS on; µs per read, median of rounds, interleaved.

    python benchmarks/rls_scratch/generic_get.py [--events 50] [--rounds 7] [--n 200]
"""

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).parent))
from all_users_or import S, seed

from adk_memory.db import rls
from adk_memory.db.embedded import temporary_server
from adk_memory.db.engine import Database
from adk_memory.db.migrations import SESSION_MIGRATIONS
from adk_memory.sessions import store

BEFORE = store._GET_SHAPE.replace(
    "{events}",
    "CASE WHEN $4::bigint = 0 THEN NULL "
    f"WHEN $4::bigint IS NULL AND $5::float8 IS NULL THEN {store._ALL_EVENTS} "
    f"ELSE {store._RECENT_EVENTS} END",
)
"""The read as it was (events chosen by a CASE on $4 and $5), gated like the rest."""


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=200)
    a = parser.parse_args()
    with temporary_server("adk-rls-get-") as url:
        db = Database(url, schema=S)
        await db.ensure_migrated("sessions", SESSION_MIGRATIONS)
        await db.close()
        conn = await asyncpg.connect(url)
        await seed(conn, a.events)
        await conn.execute(
            "".join(
                rls.table_policy(t, rls.USER_ROWS, rls.ALL_APP_USERS)
                for t in ("sessions", "events", "user_states")
            ).format(schema=S)
            + rls.table_policy("app_states", rls.APP_ROWS, rls.ALL_APP_USERS).format(schema=S)
        )
        shapes = {
            "before (CASE)": (rls.render(BEFORE, S), ("app", "alice", "s1", None, None)),
            "after (_GET_ALL)": (rls.render(store._GET_ALL, S), ("app", "alice", "s1")),
        }
        times: dict[str, list[float]] = {name: [] for name in shapes}
        for sql, args in shapes.values():
            for _ in range(20):
                await conn.fetchrow(sql, *args)
        for round_no in range(a.rounds):
            order = list(shapes) if round_no % 2 == 0 else list(shapes)[::-1]
            for name in order:
                sql, args = shapes[name]
                start = time.perf_counter()
                for _ in range(a.n):
                    await conn.fetchrow(sql, *args)
                times[name].append((time.perf_counter() - start) / a.n * 1e6)
        plans = {
            name: tuple(
                await conn.fetchrow(
                    "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                    "WHERE statement = $1",
                    sql,
                )
            )
            for name, (sql, _) in shapes.items()
        }
        before = statistics.median(times["before (CASE)"])
        after = statistics.median(times["after (_GET_ALL)"])
        print(
            f"{a.events} events: before {before:.0f} us, after {after:.0f} us "
            f"({(after / before - 1) * 100:+.1f} %); plans (generic, custom): "
            f"before {plans['before (CASE)']}, after {plans['after (_GET_ALL)']}"
        )
        await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
