"""Structured-profile lookup benchmark: `retrieve_profiles` latency with 100,000 users' profiles.

Why: profiles are read at the start of a conversation (the memory-context block, the
`load_profiles` tool) by the user's key, with no search, so the lookup has to stay cheap however
many users the table holds. The target:

  retrieve_profiles(app_name=, user_id=)   p95 < 3 ms on the embedded PostgreSQL, 100,000 users

Setup: `--users` (100,000) users of one app, each with one profile of `--fields` (4) fields and
one revision per field, written in SQL (the rows generation writes: the canonical scope key,
jsonb values), then `ANALYZE`. Measured: `PostgresMemoryService.retrieve_profiles` for users
picked at random (the same seeded sequence each run), `--calls` (2,000) calls after 200 warm-up
calls, one at a time; each returns its user's profile (checked). For scale, the same statement
is timed alone on one dedicated asyncpg connection (prepared once), interleaved with the
service's calls: the difference is the service's own cost (pool, scope validation, decoding),
and a tail both share is the machine's (a loaded machine preempts any short call). ADK has no
profile store of its own to compare with (its only `retrieve_profiles` is the Vertex AI Memory
Bank service, a remote call), so no ratio is printed.

With no `--database-url` the embedded PostgreSQL is started in a temporary data directory. The
benchmark runs in a fresh database (`adk_memory_bench_profiles`, dropped and recreated at start
and dropped at the end).

    python benchmarks/profiles.py [--database-url URL] [--users 100000] [--fields 4]
        [--calls 2000]
"""

from __future__ import annotations

import asyncio
import random
import sys

import _common as common
import asyncpg
from _common import expect, load_average, ms, percentile, table, timed

from adk_memory import PostgresMemoryService

BENCH_DATABASE = "adk_memory_bench_profiles"
APP = "bench"
SCHEMA_ID = "user-profile"
WARMUP = 200
TARGET_P95_MS = 3.0

# One profile of $2 fields for each of $1 users, and one CREATED revision per field.
_SEED_FIELDS = """
INSERT INTO adk_memory.memory_profile_fields
    (scope_key, scope, schema_id, field, value, source_type)
SELECT format('{{"app_name":"{app}","user_id":"user-%s"}}', u),
       format('{{"app_name":"{app}","user_id":"user-%s"}}', u)::jsonb,
       '{schema_id}', 'field_' || f, to_jsonb('value ' || f || ' of user ' || u), 'user_input'
FROM generate_series(1, $1::integer) u, generate_series(1, $2::integer) f
"""
_SEED_REVISIONS = """
INSERT INTO adk_memory.memory_profile_revisions
    (id, scope_key, scope, schema_id, field, action, value, source_type)
SELECT gen_random_uuid(), scope_key, scope, schema_id, field, 'CREATED', value, source_type
FROM adk_memory.memory_profile_fields
"""


async def seed(url: str, users: int, fields: int) -> None:
    """The users' profiles and revisions, in SQL (the tables were created by the service)."""
    conn = await asyncpg.connect(common.asyncpg_dsn(url))
    try:
        await conn.execute(_SEED_FIELDS.format(app=APP, schema_id=SCHEMA_ID), users, fields)
        await conn.execute(_SEED_REVISIONS)
        await conn.execute("ANALYZE adk_memory.memory_profile_fields")
        await conn.execute("ANALYZE adk_memory.memory_profile_revisions")
    finally:
        await conn.close()


async def bench(url: str, embedded: bool, users: int, fields: int, calls: int) -> int:
    print("Structured-profile lookup benchmark")
    print(f"Server:     {common.server_label(url, embedded)}")
    print(f"Load:       {load_average()}")
    print(f"Data:       {users:,} users x {fields} fields (+ one revision each)")
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    service = PostgresMemoryService(bench_url)
    try:
        await service.retrieve_profiles(app_name=APP, user_id="nobody")  # migrates
        common.progress(f"seeding {users:,} profiles")
        await seed(bench_url, users, fields)
        raw = await asyncpg.connect(common.asyncpg_dsn(bench_url))
        try:
            statement = await raw.prepare(service._parts.users.profiles._profile)
            picks = random.Random(15)
            samples: list[float] = []
            alone: list[float] = []
            for n in range(WARMUP + calls):
                user = f"user-{picks.randint(1, users)}"
                call = service.retrieve_profiles(app_name=APP, user_id=user)
                seconds, profiles = await timed(call)
                expect(
                    len(profiles) == 1 and len(profiles[0].profile) == fields,
                    f"{user}'s profile was not returned whole",
                )
                key = f'{{"app_name":"{APP}","user_id":"{user}"}}'
                statement_seconds, rows = await timed(statement.fetch(key))
                expect(len(rows) == fields, f"{user}'s rows were not found")
                if n >= WARMUP:
                    samples.append(seconds)
                    alone.append(statement_seconds)
        finally:
            await raw.close()
    finally:
        await service.close()
        await common.drop_database(url, BENCH_DATABASE)
    p95 = percentile(samples, 95)
    print()
    table(
        ["operation", "calls", "p50 ms", "p95 ms", "p99 ms", "target p95 ms"],
        [
            [
                "retrieve_profiles",
                str(len(samples)),
                ms(percentile(samples, 50)),
                ms(p95),
                ms(percentile(samples, 99)),
                f"< {TARGET_P95_MS:g}",
            ],
            [
                "its statement alone",
                str(len(alone)),
                ms(percentile(alone, 50)),
                ms(percentile(alone, 95)),
                ms(percentile(alone, 99)),
                "",
            ],
        ],
    )
    met = p95 * 1000 < TARGET_P95_MS
    verdict = "met" if met else "MISSED"
    print(f"\nprofile lookup p95 {ms(p95)} ms at {users:,} users: target {verdict}")
    print(f"Load after: {load_average()}")
    return 0 if met else 1


def main(argv: list[str] | None = None) -> int:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--fields", type=int, default=4)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args(argv)
    with common.postgres_server(args.database_url) as url:
        return asyncio.run(
            bench(url, args.database_url is None, args.users, args.fields, args.calls)
        )


if __name__ == "__main__":
    sys.exit(main())
