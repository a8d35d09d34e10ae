"""Scratch (issue 26 RLS note, §2.1): the embedded server's role is a superuser, and a gate
declared VOLATILE is inlined into a per-row filter that runs after the policy (fails closed).

    python benchmarks/rls_scratch/volatile_gate.py
"""

import asyncio
import sys
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
        print(
            "superuser:",
            await conn.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = current_user"),
            await conn.fetchval("SELECT current_user"),
        )
        await conn.execute(x.SETUP)
        await x.seed(conn)
        await conn.execute(x.POLICIES + x.rls(True))
        await conn.execute(
            """CREATE FUNCTION adk_memory.act_as_v(app text, usr text) RETURNS boolean
            LANGUAGE sql VOLATILE AS $$
                SELECT set_config('adk_memory.app_name', app, true) IS NOT NULL
                   AND set_config('adk_memory.user_id', usr, true) IS NOT NULL $$"""
        )
        await conn.execute("SET ROLE rls_agent")
        sql = (
            "SELECT count(*) FROM adk_memory.events WHERE app_name = 'app' "
            "AND session_id = 's1' AND adk_memory.act_as_v('app', $1)"
        )
        print("volatile gate count:", await conn.fetchval(sql, "alice"))
        print("\n".join(r[0] for r in await conn.fetch("EXPLAIN (COSTS OFF) " + sql, "alice")))


asyncio.run(main())
