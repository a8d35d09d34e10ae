"""Memory inspector benchmark: the scope listing behind its first page, against the plain
`SELECT DISTINCT` it replaces, and its pages, on a memory bank of many users with many memories
each, printed as two tables.

Why: the inspector's first page lists the scopes that have memories (optionally of one app,
page after page). `SELECT DISTINCT scope_key ... LIMIT 100` reads every memory of each scope it
passes (of every scope, with an app filter that skips most of them); `list_scopes` walks the
scope index instead, one probe per scope, so its cost follows the scopes it passes, not their
memories. No ADK built-in has an inspector to compare with. The pages are timed through FastAPI
(ASGI, in process: no network); each is a few scoped queries.

    python benchmarks/inspector.py [--users 1000] [--memories 200] [--apps 10] [--runs 20]
        [--database-url URL]

The memories are inserted with one SQL statement (the write path is not what is measured). The
DISTINCT figures are the statement alone; the `list_scopes` figures include the service call.
With no `--database-url` the embedded PostgreSQL is started in a temporary data directory; the
run uses its own database, dropped at the end.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable

import _common as common
import asyncpg
import httpx
from fastapi import FastAPI

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.adk.inspector import inspector_router
from adk_memory.memory.guard import NoGuard

DATABASE = "adk_memory_bench_inspector"

# Every memory of every user at once: `users` users spread over `apps` apps, `memories` each,
# under their canonical scope keys (`adk_memory.memory.scope.scope_key`).
_FILL = """
INSERT INTO adk_memory.memories (id, scope_key, scope, fact, source_type, fts)
SELECT gen_random_uuid(), s.scope_key, s.scope_key::jsonb, f.fact, 'bootstrapped',
       to_tsvector('english', f.fact)
  FROM (SELECT '{"app_name":"app' || (u % $2) || '","user_id":"user' || u || '"}' AS scope_key
          FROM generate_series(1, $1) u) s,
       LATERAL (SELECT 'Fact number ' || n || ' about tea, trains and teal.' AS fact
                  FROM generate_series(1, $3) n) f
"""
# What a listing without the index walk runs: the same filter, cursor and page size.
_DISTINCT = """
SELECT DISTINCT scope_key FROM adk_memory.memories
 WHERE scope_key > $2 AND NOT starts_with(scope_key, 'quarantine:')
   AND scope_key::jsonb @> $1::jsonb
 ORDER BY scope_key LIMIT 100
"""
# The page token of the last page: the key of the scope 100 before the end.
_LAST_PAGE = """
SELECT DISTINCT scope_key FROM adk_memory.memories ORDER BY scope_key DESC OFFSET 100 LIMIT 1
"""


async def median(runs: int, call: Callable[[], Awaitable[object]]) -> float:
    """The median wall-clock seconds of `runs` calls (after one unmeasured warm-up call)."""
    await call()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


async def main() -> None:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--memories", type=int, default=200, help="per user")
    parser.add_argument("--apps", type=int, default=10)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with common.postgres_server(args.database_url) as server:
        url = await common.fresh_database(server, DATABASE)
        try:
            await run(url, args.users, args.memories, args.apps, args.runs)
        finally:
            await common.drop_database(server, DATABASE)
        print(f"server: {common.server_label(server, args.database_url is None)}")
        print(f"load average: {common.load_average()}")


async def run(url: str, users: int, per_user: int, apps: int, runs: int) -> None:
    memory = PostgresMemoryService(url, guard=NoGuard(), run_worker=False)
    sessions = PostgresSessionService(url)
    app_filter = {"app_name": "app3"}
    try:
        await memory.list_scopes(page_size=1)  # migrated
        conn = await asyncpg.connect(common.asyncpg_dsn(url))
        try:
            common.progress(f"inserting {users * per_user:,} memories of {users:,} users")
            await conn.execute(_FILL, users, apps, per_user)
            await conn.execute("ANALYZE adk_memory.memories")
            token = await conn.fetchval(_LAST_PAGE)
            listings = []
            for name, containing, after in [
                ("first page", {}, None),
                ("one app's first page", app_filter, None),
                ("last page", {}, token),
            ]:
                distinct = await median(
                    runs,
                    lambda c=containing, a=after: conn.fetch(_DISTINCT, json.dumps(c), a or ""),
                )
                walked = await median(
                    runs,
                    lambda c=containing, a=after: memory.list_scopes(c or None, page_token=a),
                )
                listings.append([name, common.ms(distinct), common.ms(walked),
                                 f"{distinct / walked:.1f}x"])  # fmt: skip
        finally:
            await conn.close()
        last = await memory.list_scopes(page_token=token)
        common.expect(len(last.scopes) == 100 and not last.next_page_token, "the last page")
        mine = await memory.list_scopes(app_filter)
        common.expect(all(s["app_name"] == "app3" for s in mine.scopes), "one app's scopes")
        app = FastAPI()
        app.include_router(inspector_router(memory, session_service=sessions))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:

            async def page(path: str, **query: str) -> None:
                response = await client.get(f"/memory-inspector{path}", params=query)
                common.expect(response.status_code == 200, f"{path} answered")

            user = {"app": "app7", "user": "user7"}
            pages = [
                ("home", await median(runs, lambda: page("/"))),
                ("one app's users", await median(runs, lambda: page("/", app="app3"))),
                ("a user (first 100 memories)", await median(runs, lambda: page("/user", **user))),
                (
                    "a user, with a search",
                    await median(runs, lambda: page("/user", **user, q="teal trains")),
                ),
            ]
        print(f"{users:,} users x {per_user} memories, {apps} apps; median of {runs} runs")
        common.table(["scopes", "DISTINCT ms", "list_scopes ms", "speed-up"], listings)
        print()
        common.table(["page", "ms"], [[name, common.ms(s)] for name, s in pages])
    finally:
        await memory.close()
        await sessions.close()


if __name__ == "__main__":
    asyncio.run(main())
