"""Scratch (issue 26, decision 4): what the all-users escape (`OR all_users = 'on'`) in the
sessions policies costs against the strict (app, user) form, on the real gated session read,
listing and append, as a non-superuser owner with FORCE ROW LEVEL SECURITY: RLS off, the
built policies as a policed role meets them (strict), as the owner meets them (its all-users
policy OR-ed in), and the design's single OR-ed policy. µs per call, median of rounds,
generic plans forced and the planner's choice.

    python benchmarks/rls_scratch/all_users_or.py [--rounds 7] [--n 300]
"""

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import asyncpg

from adk_memory.db import rls
from adk_memory.db.embedded import temporary_server
from adk_memory.db.engine import Database
from adk_memory.db.migrations import SESSION_MIGRATIONS
from adk_memory.sessions import store

S = "adk_memory"
_APP = f"nullif(current_setting('{rls.APP_SETTING}', true), '')"
_USER = f"nullif(current_setting('{rls.USER_SETTING}', true), '')"
OR_USER = f"app_name = {_APP} AND (user_id = {_USER} OR {rls.ALL_USERS})"
OR_APP = f"app_name = {_APP} OR {rls.ALL_USERS}"
"""The design's first form (docs/rls.md §3): one policy, the all-users escape OR-ed in."""
TABLES = ("sessions", "events", "user_states")


def policies(form: str) -> str:
    """`strict`: the built policies as a policed role meets them (the gated one only);
    `owner`: as built, as the owner meets them (gated OR its all-users policy); `or`: the
    design's single policy with the OR inside."""
    if form == "or":
        ddl = "".join(rls.table_policy(t, OR_USER, "false") for t in TABLES)
        ddl += rls.table_policy("app_states", OR_APP, "false")
    else:
        ddl = "".join(rls.table_policy(t, rls.USER_ROWS, rls.ALL_APP_USERS) for t in TABLES)
        ddl += rls.table_policy("app_states", rls.APP_ROWS, rls.ALL_APP_USERS)
        if form == "strict":
            ddl += "".join(
                f"DROP POLICY {t}_all_users ON {{schema}}.{t};" for t in (*TABLES, "app_states")
            )
    return ddl.format(schema=S)


def disable() -> str:
    return "".join(
        f"ALTER TABLE {S}.{t} DISABLE ROW LEVEL SECURITY;"
        for t in ("sessions", "events", "user_states", "app_states")
    )


async def seed(conn: asyncpg.Connection, events: int) -> None:
    data = json.dumps({"content": {"parts": [{"text": "x" * 600}]}, "author": "user"})
    await conn.execute(disable())
    await conn.execute(f"INSERT INTO {S}.app_states (app_name, state) VALUES ('app', '{{}}')")
    for user in ("alice", "bob"):
        for sid in ("s1", "s2", "s3"):
            await conn.execute(
                f"INSERT INTO {S}.sessions (app_name, user_id, id, state, revision, "
                f"last_update_time) VALUES ('app', $1, $2, '{{}}', {events}, 0)",
                user,
                sid,
            )
            await conn.executemany(
                f"INSERT INTO {S}.events (app_name, user_id, session_id, seq, id, invocation_id,"
                ' "timestamp", data) VALUES '
                "('app', $1, $4, $2::bigint, $3, 'i', $2::bigint::float8, $5)",
                [(user, seq, f"e{seq}", sid, data) for seq in range(1, events + 1)],
            )
        await conn.execute(
            f"INSERT INTO {S}.user_states (app_name, user_id, state) VALUES ('app', $1, '{{}}')",
            user,
        )
    await conn.execute(f"VACUUM ANALYZE {S}.sessions, {S}.events, {S}.user_states")


Args = tuple[Any, ...] | Callable[[], tuple[Any, ...]]
"""A call's arguments, or what makes the next call's (an append that writes)."""


async def timed(conn: asyncpg.Connection, sql: str, args: Args, rounds: int, n: int) -> float:
    def next_args() -> tuple[Any, ...]:
        return args() if callable(args) else args

    for _ in range(20):
        await conn.fetch(sql, *next_args())
    runs = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            await conn.fetch(sql, *next_args())
        runs.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(runs)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--events", type=int, default=50)
    parser.add_argument("--forms", default="off,strict,owner,or")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--modes", default="force_generic_plan,auto")
    parser.add_argument("--calls", default="get_session,list_sessions,append (stale),append")
    a = parser.parse_args()
    with temporary_server("adk-rls-or-") as url:
        db = Database(url, schema=S)
        await db.ensure_migrated("sessions", SESSION_MIGRATIONS)
        await db.close()
        conn = await asyncpg.connect(url)  # the embedded server's owner: not a superuser
        await seed(conn, a.events)
        get = rls.render(store._GET_ALL, S)
        listing = rls.render(store._LIST_FOR_USER, S)
        # An append that changes nothing (a stale revision): the statement's whole plan runs.
        append = rls.render(store._APPEND, S)
        revision = [a.events]

        def appended() -> tuple[Any, ...]:
            """The next event of alice's s1, with a user-state delta (every CTE writes)."""
            revision[0] += 1
            event = f"w{revision[0]}"
            delta = '{"user:k": 1}'
            return ("app", "alice", "s1", None, 1.0, revision[0] - 1, event, "i", "{}", None, delta)

        # Commits without waiting for the disk: the statement's own cost, not fsync's.
        await conn.execute("SET synchronous_commit = off")
        calls: dict[str, tuple[str, Args]] = {
            "append": (append, appended),
            "get_session": (get, ("app", "alice", "s1")),
            "list_sessions": (listing, ("app", "alice")),
            "append (stale)": (
                append,
                ("app", "alice", "s1", None, 1.0, -1, "x", "i", "{}", None, None),
            ),
        }
        for mode in a.modes.split(","):
            await conn.execute(f"SET plan_cache_mode = {mode}")
            for name, (sql, args) in ((k, calls[k]) for k in a.calls.split(",")):
                figures = {}
                for form in a.forms.split(",") * a.repeat:
                    await conn.execute(disable() if form == "off" else policies(form))
                    value = await timed(conn, sql, args, a.rounds, a.n)
                    figures.setdefault(form, []).append(value)
                medians = {f: statistics.median(v) for f, v in figures.items()}
                base = medians[a.forms.split(",")[0]]
                shown = ", ".join(
                    f"{f} {m:.0f} us ({(m / base - 1) * 100:+.1f} %)" for f, m in medians.items()
                )
                print(f"{mode:19} {name:15} {shown}", flush=True)
        await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
