"""Scratch (issue 26 RLS note, §2.1): what the gate costs per statement, against the same
statement without it and a bare set_config.

    python benchmarks/rls_scratch/gate_cost.py
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


async def main():
    with temporary_server("adk-rls-") as url:
        db = Database(url)
        for c, st in MIGRATIONS.items():
            await db.ensure_migrated(c, st)
        await db.close()
        conn = await asyncpg.connect(url)
        await conn.execute(x.SETUP)
        stmts = {
            "SELECT 1 WHERE $1::text IS NOT NULL": ("a",),
            "SELECT 1 WHERE adk_memory.act_as('app', $1)": ("a",),
            "SELECT 1 WHERE adk_memory.act_as_pl('app', $1)": ("a",),
            "SELECT set_config('adk_memory.user_id', $1, true)": ("a",),
        }
        res = {s: [] for s in stmts}
        for _round in range(7):
            for s, a in stmts.items():
                for _ in range(50):
                    await conn.fetch(s, *a)
                t = time.perf_counter()
                for _ in range(500):
                    await conn.fetch(s, *a)
                res[s].append((time.perf_counter() - t) / 500 * 1e6)
        for s, v in res.items():
            print(f"{statistics.median(v):7.1f} us  {s}")


asyncio.run(main())
