"""Scratch (issue 26 RLS note, §2.3): the wrapper-function mechanism measured on the session
read: a PL/pgSQL function that sets the acting user, then RETURN QUERY runs the real `_GET`,
against `_GET` without RLS and `_GET` with RLS and the in-statement gate. µs per read, median
of 7 rounds x 300, both plan cache modes.

    python benchmarks/rls_scratch/wrapper_function.py
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


def wrapper(get: str) -> str:
    body = get.replace("$1", "p_app").replace("$2", "p_user").replace("$3", "p_id")
    body = body.replace("$4", "p_n").replace("$5", "p_after")
    return f"""
CREATE FUNCTION adk_memory.get_session_as(p_app text, p_user text, p_id text, p_n bigint,
                                          p_after float8)
RETURNS TABLE (state text, revision bigint, last_update_time float8, app_state text,
               user_state text, events text[])
LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
BEGIN
    PERFORM set_config('adk_memory.app_name', p_app, true),
            set_config('adk_memory.user_id', p_user, true);
    RETURN QUERY {body};
END $fn$;
GRANT EXECUTE ON FUNCTION adk_memory.get_session_as TO rls_agent;
"""


async def bench(conn: asyncpg.Connection, sql: str) -> float:
    for _ in range(30):
        assert await conn.fetch(sql, *ARGS)
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(300):
            await conn.fetch(sql, *ARGS)
        runs.append((time.perf_counter() - start) / 300 * 1e6)
    return round(statistics.median(runs))


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
        get = x.kinds("keys")["get_session"]
        await conn.execute(wrapper(get.plain.rstrip()))
        call = "SELECT * FROM adk_memory.get_session_as($1, $2, $3, $4, $5)"
        for mode in ("auto", "force_generic_plan"):
            await conn.execute(f"RESET ROLE; SET plan_cache_mode = {mode}")
            await conn.execute("RESET ROLE; " + x.rls(False) + "SET ROLE rls_agent")
            today = await bench(conn, get.plain)
            await conn.execute("RESET ROLE; " + x.rls(True) + "SET ROLE rls_agent")
            gated = await bench(conn, get.gated)
            wrapped = await bench(conn, call)
            print(f"{mode}: no RLS {today} us, RLS + gate {gated} us, RLS + wrapper {wrapped} us")
        await conn.close()


asyncio.run(main())
