"""Row-level security experiment (issue 26, design only): which way of setting the acting user
per statement do the policies see, in which statement shapes, and at what cost.

Runs on a throwaway embedded server: migrates the real schema, adds an experimental gate
function and policies on sessions / events / user_states / app_states / memories, and checks,
as a non-owner role without BYPASSRLS, that (1) a deliberately unfiltered statement returns only
the acting user's rows, (2) each statement shape we use sees the setting before its policy quals
run (custom and generic plans), then (3) times the real session read and append statements with
and without RLS, per mechanism. Nothing here is product code: docs/rls.md records the results.

    python benchmarks/rls_experiment.py [--rounds 5] [--n 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from adk_memory.db.embedded import temporary_server
from adk_memory.db.engine import Database
from adk_memory.db.migrations import MIGRATIONS
from adk_memory.db.rls import render
from adk_memory.sessions import store as session_store

S = "adk_memory"
USERS = ("alice", "bob")
EVENTS = 50

SETUP = f"""
CREATE ROLE rls_agent NOLOGIN;
GRANT USAGE ON SCHEMA {S} TO rls_agent;
GRANT SELECT, INSERT, UPDATE, DELETE ON {S}.sessions, {S}.events, {S}.user_states,
      {S}.app_states, {S}.memories TO rls_agent;
-- The gate: sets the acting app and user for this transaction only. Declared STABLE (a white
-- lie: set_config is volatile) so that a WHERE clause holding only it and parameters is a
-- pseudo-constant, evaluated once in a Result node's One-Time Filter above the scans.
CREATE FUNCTION {S}.act_as(app text, usr text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL UNSAFE AS $$
    SELECT set_config('adk_memory.app_name', app, true) IS NOT NULL
       AND set_config('adk_memory.user_id', usr, true) IS NOT NULL
$$;
-- The same gate in PL/pgSQL: its plan is cached for the session, where a SQL function's
-- body is planned again in every statement that calls it.
CREATE FUNCTION {S}.act_as_pl(app text, usr text) RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL UNSAFE AS $$
BEGIN
    PERFORM set_config('adk_memory.app_name', app, true),
            set_config('adk_memory.user_id', usr, true);
    RETURN true;
END $$;
CREATE FUNCTION {S}.act_as_scope_pl(k text) RETURNS boolean LANGUAGE plpgsql STABLE
PARALLEL UNSAFE AS $$
BEGIN
    PERFORM set_config('adk_memory.scope_key', k, true);
    RETURN true;
END $$;
-- The value policies compare with: NULL when unset or reset ('' after a transaction that set
-- it ended), so an unset user matches nothing (fails closed).
CREATE FUNCTION {S}.acting_user() RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT nullif(current_setting('adk_memory.user_id', true), '') $$;
CREATE FUNCTION {S}.acting_app() RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT nullif(current_setting('adk_memory.app_name', true), '') $$;
"""

POLICIES = f"""
CREATE POLICY own ON {S}.sessions TO rls_agent
    USING (app_name = {S}.acting_app() AND user_id = {S}.acting_user());
CREATE POLICY own ON {S}.events TO rls_agent
    USING (app_name = {S}.acting_app() AND user_id = {S}.acting_user());
CREATE POLICY own ON {S}.user_states TO rls_agent
    USING (app_name = {S}.acting_app() AND user_id = {S}.acting_user());
CREATE POLICY own ON {S}.app_states TO rls_agent USING (app_name = {S}.acting_app());
CREATE POLICY own ON {S}.memories TO rls_agent
    USING (scope->>'app_name' = {S}.acting_app()
           AND coalesce(scope->>'user_id', {S}.acting_user()) = {S}.acting_user());
"""
TABLES = ("sessions", "events", "user_states", "app_states", "memories")


def rls(on: bool) -> str:
    verb = "ENABLE" if on else "DISABLE"
    force = "FORCE" if on else "NO FORCE"
    return "".join(
        f"ALTER TABLE {S}.{t} {verb} ROW LEVEL SECURITY; ALTER TABLE {S}.{t} {force} ROW LEVEL "
        "SECURITY;"
        for t in TABLES
    )


async def seed(conn: asyncpg.Connection) -> None:
    data = json.dumps({"content": {"parts": [{"text": "x" * 600}]}, "author": "user"})
    await conn.execute(f"INSERT INTO {S}.app_states (app_name, state) VALUES ('app', '{{}}')")
    for user in USERS:
        await conn.execute(
            f"INSERT INTO {S}.sessions (app_name, user_id, id, state, revision, last_update_time)"
            f" VALUES ('app', $1, 's1', '{{}}', {EVENTS}, 0)",
            user,
        )
        await conn.execute(
            f"INSERT INTO {S}.user_states (app_name, user_id, state) VALUES ('app', $1, '{{}}')",
            user,
        )
        await conn.executemany(
            f"INSERT INTO {S}.events (app_name, user_id, session_id, seq, id, invocation_id,"
            ' "timestamp", data) '
            "VALUES ('app', $1, 's1', $2::bigint, $3, 'i', $2::bigint::float8, $4)",
            [(user, seq, f"e{seq}", data) for seq in range(1, EVENTS + 1)],
        )
        for scope in ({"app_name": "app", "user_id": user}, {"app_name": "app"}):
            key = json.dumps(scope, sort_keys=True, separators=(",", ":"))
            await conn.execute(
                f"INSERT INTO {S}.memories (id, scope_key, scope, fact, source_type, fts) "
                "VALUES ($1, $2, $3, $4, 'direct', to_tsvector($4))",
                uuid.uuid4(),
                key,
                json.dumps(scope),
                f"fact for {key}",
            )
    await conn.execute(f"ANALYZE {S}.sessions, {S}.events, {S}.memories")


def ungated(statement: str) -> str:
    """A store statement as it was before issue 26 gated it (the experiment adds its own gate
    where it measures one)."""
    plain = re.sub(rf"\s*AND {S}\.act_as\(\$1, \$2\)", "", render(statement, S))
    return plain.replace(f"WHERE {S}.act_as($1, $2)", "WHERE true")


def gated_get() -> str:
    """The real session read with the gate added to its WHERE."""
    sql = ungated(session_store._GET_RECENT)
    return sql.replace(
        "WHERE s.app_name = $1 AND s.user_id = $2 AND s.id = $3",
        f"WHERE s.app_name = $1 AND s.user_id = $2 AND s.id = $3 AND {S}.act_as($1, $2)",
    )


def gated_append() -> str:
    """The real append with the gate as the first qual of the UPDATE that every other part of
    the statement reads from."""
    sql = ungated(session_store._APPEND)
    return sql.replace(
        "WHERE app_name = $1 AND user_id = $2 AND id = $3 AND revision = $6",
        f"WHERE {S}.act_as($1, $2) AND app_name = $1 AND user_id = $2 AND id = $3 "
        "AND revision = $6",
    )


async def explain(conn: asyncpg.Connection, sql: str, *args: Any) -> str:
    """EXPLAIN ANALYZE of `sql` with bound `args` (it runs: a write is written)."""
    rows = await conn.fetch("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + sql, *args)
    return "\n".join(r[0] for r in rows)


async def checks(conn: asyncpg.Connection) -> list[tuple[str, Any]]:
    """Correctness as the agent role with RLS on: (name, observed) pairs."""
    out: list[tuple[str, Any]] = []
    await conn.execute("SET ROLE rls_agent")
    unfiltered = {
        t: f"SELECT count(*) FROM {S}.{t} WHERE {S}.act_as('app', $1)"
        for t in ("sessions", "events", "user_states", "memories")
    }
    for t, sql in unfiltered.items():
        out.append((f"unfiltered {t} as alice", await conn.fetchval(sql, "alice")))
    out.append(
        ("unfiltered events, no gate", await conn.fetchval(f"SELECT count(*) FROM {S}.events"))
    )
    # Generic plans: the same prepared statement 8 times alternating users, then forced generic.
    stmt = await conn.prepare(
        f"SELECT array_agg(DISTINCT user_id) FROM {S}.events WHERE {S}.act_as('app', $1)"
    )
    seen = [await stmt.fetchval(USERS[i % 2]) for i in range(8)]
    out.append(("prepared x8 alternating users (users seen each time)", seen))
    await conn.execute("SET plan_cache_mode = force_generic_plan")
    stmt = await conn.prepare(
        f"SELECT array_agg(DISTINCT user_id) FROM {S}.events "
        f"WHERE app_name = 'app' AND session_id = 's1' AND {S}.act_as('app', $1)"
    )
    out.append(("forced generic plan", [await stmt.fetchval(u) for u in ("bob", "alice")]))
    out.append(
        (
            "generic plan",
            await explain(
                conn,
                f"SELECT array_agg(DISTINCT user_id) FROM {S}.events WHERE app_name = 'app' "
                f"AND session_id = 's1' AND {S}.act_as('app', $1)",
                "alice",
            ),
        )
    )
    await conn.execute("RESET plan_cache_mode")
    # Mis-ordered: the setter evaluated after the scan: in autocommit the setting is unset then,
    # so the scan sees nothing (fails closed)...
    misordered = f"SELECT (SELECT count(*) FROM {S}.events), {S}.act_as('app', $1)"
    out.append(("misordered, autocommit", await conn.fetchrow(misordered, "bob")))
    # ... but inside a transaction, the previous statement's user is still set: a leak.
    async with conn.transaction():
        await conn.fetchval(f"SELECT {S}.act_as('app', 'alice')")
        leak = await conn.fetchrow(
            f"SELECT (SELECT array_agg(DISTINCT user_id) FROM {S}.events), {S}.act_as('app', $1)",
            "bob",
        )
    out.append(("misordered inside a transaction after alice (bob asked)", leak))
    # A first CTE is no guarantee: an unreferenced CTE is not run at all.
    cte = f"WITH g AS (SELECT {S}.act_as('app', $1)) SELECT count(*) FROM {S}.events"
    out.append(("first CTE, unreferenced", await conn.fetchval(cte, "alice")))
    # Real statements: the session read (custom plans, then 8 more for the generic plan).
    get = gated_get()
    rows = [await conn.fetchrow(get, "app", u, "s1", None, None) for u in USERS * 4]
    out.append(("real _GET gated: events returned per call", [len(r[5]) for r in rows]))
    out.append(("real _GET plan", await explain(conn, get, "app", "alice", "s1", None, None)))
    # Cross-user through the gate: alice's gate, bob's WHERE: nothing.
    cross = get.replace(f"{S}.act_as($1, $2)", f"{S}.act_as($1, 'alice')")
    out.append(
        ("_GET for bob gated as alice", await conn.fetchrow(cross, "app", "bob", "s1", None, None))
    )
    # The append: a new event, then the identical event again (must be a no-op: the NOT EXISTS
    # over events runs as an InitPlan; if it ran before the gate it would see no events).
    append = gated_append()
    args = lambda rev, eid: ("app", "alice", "s1", None, 1.0, rev, eid, "i", '{"a":1}', None, None)  # noqa: E731
    rev = await conn.fetchval(f"SELECT revision FROM {S}.sessions WHERE {S}.act_as('app','alice')")
    first = await conn.fetchval(append, *args(rev, "new1"))
    again = await conn.fetchval(append, *args(rev, "new1"))
    count = await conn.fetchval(
        f"SELECT count(*) FROM {S}.events WHERE id = 'new1' AND {S}.act_as('app', 'alice')"
    )
    out.append(
        ("append new -> revision, re-delivery -> revision, copies stored", (first, again, count))
    )
    out.append(("real _APPEND plan", await explain(conn, append, *args(rev + 1, "new1"))))
    # INSERT ... ON CONFLICT ... RETURNING with the gate in the SELECT feeding it.
    upsert = (
        f"INSERT INTO {S}.user_states AS t (app_name, user_id, state) "
        f"SELECT $1, $2, $3::json WHERE {S}.act_as($1, $2) "
        f"ON CONFLICT (app_name, user_id) DO UPDATE SET state = EXCLUDED.state RETURNING t.user_id"
    )
    out.append(("upsert as alice", await conn.fetchval(upsert, "app", "alice", '{"k":1}')))
    try:
        forged = upsert.replace(f"{S}.act_as($1, $2)", f"{S}.act_as($1, 'alice')")
        out.append(
            ("upsert bob's row gated as alice", await conn.fetchval(forged, "app", "bob", "{}"))
        )
    except asyncpg.PostgresError as exc:
        out.append(("upsert bob's row gated as alice", f"{type(exc).__name__}: {exc}"))
    # unnest bulk insert (a DELETE with a CTE first, as the revision-writing statements do).
    bulk = (
        f"WITH d AS (DELETE FROM {S}.events WHERE session_id = 's1' AND id = ANY($3) "
        f"AND {S}.act_as($1, $2) RETURNING seq) "
        f"INSERT INTO {S}.events (app_name, user_id, session_id, seq, id, invocation_id, "
        '"timestamp", data) '
        f"SELECT $1, $2, 's1', $4::bigint + o, i, 'i', 0, '{{}}' FROM unnest($3::text[]) "
        f"WITH ORDINALITY AS u(i, o) WHERE {S}.act_as($1, $2) AND (SELECT count(*) FROM d) >= 0 "
        "RETURNING user_id"
    )
    out.append(
        (
            "unnest insert (+ CTE delete) as alice",
            await conn.fetch(bulk, "app", "alice", ["b1", "b2"], 100000),
        )
    )
    out.append(
        ("unnest insert plan", await explain(conn, bulk, "app", "alice", ["b3", "b4"], 200000))
    )
    await conn.execute("RESET ROLE")
    return out


ALICE = json.dumps({"app_name": "app", "user_id": "alice"}, sort_keys=True, separators=(",", ":"))
WORDS = [
    "coffee",
    "tea",
    "hiking",
    "paris",
    "berlin",
    "allergy",
    "peanuts",
    "vegan",
    "running",
    "piano",
    "jazz",
    "cats",
    "dogs",
    "garden",
    "python",
    "rust",
    "chess",
    "sailing",
    "winter",
    "summer",
]

KEY_GATE = f"""
CREATE FUNCTION {S}.act_as_scopes(keys text[]) RETURNS boolean
LANGUAGE sql STABLE PARALLEL UNSAFE AS
$$ SELECT set_config('adk_memory.scope_keys', to_json(keys)::text, true) IS NOT NULL $$;
-- The keys a statement may touch: the acting scopes, their quarantine and their procedures.
CREATE FUNCTION {S}.acting_keys() RETURNS text[] LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(p || k), '{{}}') FROM
        json_array_elements_text(
            nullif(current_setting('adk_memory.scope_keys', true), '')::json) k,
        unnest(ARRAY['', 'quarantine:', 'procedure:']) p
$$;
CREATE FUNCTION {S}.act_as_scope(k text) RETURNS boolean LANGUAGE sql STABLE PARALLEL UNSAFE AS
$$ SELECT set_config('adk_memory.scope_key', k, true) IS NOT NULL $$;
"""
MEMORY_POLICY = {
    "jsonb": f"""CREATE POLICY own ON {S}.memories TO rls_agent
    USING (scope->>'app_name' = {S}.acting_app()
           AND coalesce(scope->>'user_id', {S}.acting_user()) = {S}.acting_user())""",
    # Any of a list of scopes (a JSON array in one setting, parsed by a SQL function): the
    # planner cannot estimate the array, which changes the plans (see rls_search.py).
    "any": f"CREATE POLICY own ON {S}.memories TO rls_agent "
    f"USING (scope_key = ANY ({S}.acting_keys()))",
    # One acting scope, its quarantine and its procedures: three keys built from one setting
    # by builtins, estimated as three equalities and used as an index key (once per scan).
    "keys": f"""CREATE POLICY own ON {S}.memories TO rls_agent USING (scope_key IN (
        current_setting('adk_memory.scope_key', true),
        'quarantine:' || current_setting('adk_memory.scope_key', true),
        'procedure:' || current_setting('adk_memory.scope_key', true)))""",
}


async def seed_memories(conn: asyncpg.Connection, n: int) -> None:
    """n memories in alice's scope (and as many in bob's): the search's candidates."""
    import random

    rng = random.Random(7)
    rows = []
    for user in USERS:
        scope = {"app_name": "app", "user_id": user}
        key = json.dumps(scope, sort_keys=True, separators=(",", ":"))
        for _ in range(n):
            fact = " ".join(rng.choice(WORDS) for _ in range(8))
            rows.append((uuid.uuid4(), key, json.dumps(scope), fact))
    await conn.executemany(
        f"INSERT INTO {S}.memories (id, scope_key, scope, fact, source_type, fts) "
        "VALUES ($1, $2, $3, $4, 'direct', to_tsvector('english', $4))",
        rows,
    )
    await conn.execute(f"ANALYZE {S}.memories")


class Kind:
    """One timed statement: plain (today), gated (with the gate), and how to set its setting."""

    def __init__(
        self,
        plain: str,
        gate: str,
        args: Callable[[], tuple[Any, ...]],
        setter: str,
        setter_args: tuple[Any, ...],
    ) -> None:
        self.plain, self.args, self.setter, self.setter_args = plain, args, setter, setter_args
        self.gated = plain.replace("{GATE}", gate)
        self.plain = plain.replace("{GATE}", "true")


def kinds(policy: str) -> dict[str, Kind]:
    users = (
        "SELECT set_config('adk_memory.app_name', $1, $3), set_config('adk_memory.user_id', $2, $3)"
    )
    scopes = "SELECT set_config('adk_memory.scope_key', $1, $2)"
    get = ungated(session_store._GET_RECENT).replace(
        "WHERE s.app_name = $1 AND s.user_id = $2 AND s.id = $3",
        "WHERE s.app_name = $1 AND s.user_id = $2 AND s.id = $3 AND {GATE}",
    )
    append = ungated(session_store._APPEND).replace(
        "WHERE app_name = $1 AND user_id = $2 AND id = $3 AND revision = $6",
        "WHERE {GATE} AND app_name = $1 AND user_id = $2 AND id = $3 AND revision = $6",
    )
    search = (
        f"SELECT id, fact FROM {S}.memories WHERE scope_key = $1 "
        "AND fts @@ plainto_tsquery('english', $2) AND {GATE} ORDER BY id LIMIT 10"
    )
    scan = f"SELECT count(*), max(fact) FROM {S}.memories WHERE scope_key = $1 AND {{GATE}}"
    keys = ALICE
    memory_gate = f"{S}.act_as_scope($1)" if policy == "keys" else f"{S}.act_as('app', 'alice')"
    return {
        "get_session": Kind(
            get,
            f"{S}.act_as($1, $2)",
            lambda: ("app", "alice", "s1", None, None),
            users,
            ("app", "alice"),
        ),
        "append_event": Kind(append, f"{S}.act_as($1, $2)", append_args, users, ("app", "alice")),
        "search (fts, 10 of ~300)": Kind(
            search, memory_gate, lambda: (ALICE, "coffee hiking"), scopes, (keys,)
        ),
        "scope scan (1000 rows)": Kind(scan, memory_gate, lambda: (ALICE,), scopes, (keys,)),
    }


Runner = Callable[[asyncpg.Connection, Kind], Awaitable[Any]]


async def today(conn: asyncpg.Connection, kind: Kind) -> Any:
    return await conn.fetch(kind.plain, *kind.args())


async def gate(conn: asyncpg.Connection, kind: Kind) -> Any:
    return await conn.fetch(kind.gated, *kind.args())


async def gate_pl(conn: asyncpg.Connection, kind: Kind) -> Any:
    sql = kind.gated.replace(f"{S}.act_as(", f"{S}.act_as_pl(")
    return await conn.fetch(
        sql.replace(f"{S}.act_as_scope(", f"{S}.act_as_scope_pl("), *kind.args()
    )


async def transaction(conn: asyncpg.Connection, kind: Kind) -> Any:
    async with conn.transaction():  # BEGIN, set, statement, COMMIT: 4 round trips
        await conn.fetch(kind.setter, *kind.setter_args, True)
        return await conn.fetch(kind.plain, *kind.args())


async def session(conn: asyncpg.Connection, kind: Kind) -> Any:
    # per checkout: SET (session level), the statement, RESET at give-back: 3 round trips
    await conn.fetch(kind.setter, *kind.setter_args, False)
    rows = await conn.fetch(kind.plain, *kind.args())
    await conn.execute(
        "RESET adk_memory.app_name; RESET adk_memory.user_id; RESET adk_memory.scope_key"
    )
    return rows


MODES: dict[str, tuple[bool, str, Runner]] = {
    "no RLS (today)": (False, "keys", today),
    "RLS + gate (keys policy)": (True, "keys", gate),
    "RLS + gate (jsonb policy)": (True, "jsonb", gate),
    "RLS + PL/pgSQL gate (keys)": (True, "keys", gate_pl),
    "RLS + BEGIN/set/stmt/COMMIT": (True, "keys", transaction),
    "RLS + session SET/RESET": (True, "keys", session),
}

_COUNTER = iter(range(10**9))
_REVISION: dict[str, int] = {}


def append_args() -> tuple[Any, ...]:
    """Arguments of the next append to alice's session s2 (the revision it expects is tracked
    here, so each append is one statement)."""
    rev = _REVISION["alice"]
    _REVISION["alice"] = rev + 1
    eid = f"t{next(_COUNTER)}"
    return ("app", "alice", "s2", None, float(rev), rev, eid, "i", '{"a":1}', None, None)


async def timing(
    conn: asyncpg.Connection, rounds: int, n: int
) -> dict[tuple[str, str], list[float]]:
    """Microseconds per statement, per (mechanism, statement), in interleaved rounds (the
    mechanisms' order rotates each round so drifting load does not favour one)."""
    await conn.execute(
        f"INSERT INTO {S}.sessions (app_name, user_id, id, last_update_time) "
        "VALUES ('app', 'alice', 's2', 0)"
    )
    _REVISION["alice"] = 0
    results: dict[tuple[str, str], list[float]] = {}
    names = list(MODES)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            on, policy, runner = MODES[name]
            await conn.execute(
                f"DROP POLICY own ON {S}.memories; {MEMORY_POLICY[policy]}; " + rls(on)
            )
            await conn.execute(f"ANALYZE {S}.events, {S}.sessions")  # appends grow events
            await conn.execute("SET ROLE rls_agent")
            for label, kind in kinds(policy).items():
                for _ in range(10):  # warm: custom plans, then the generic plan
                    assert await runner(conn, kind), (name, label)
                start = time.perf_counter()
                for _ in range(n):
                    await runner(conn, kind)
                per = (time.perf_counter() - start) / n * 1e6
                results.setdefault((name, label), []).append(per)
            await conn.execute("RESET ROLE")
    return results


def report(label: str, name: str, runs: list[float], today: list[float]) -> None:
    """One line: the median of `runs` (µs per statement) and its change against `today`."""
    med, base = statistics.median(runs), statistics.median(today)
    print(
        f"{label:26s} {name:30s} median {med:8.1f} us  rounds {[round(v) for v in runs]}  "
        f"vs today {100 * (med - base) / base:+.1f}% ({med - base:+.1f} us)"
    )


async def main(rounds: int, n: int) -> None:
    with temporary_server("adk-rls-") as url:
        db = Database(url)
        for component, steps in MIGRATIONS.items():
            await db.ensure_migrated(component, steps)
        await db.close()
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(SETUP)
            await seed(conn)
            await conn.execute(POLICIES + rls(True))
            for name, value in await checks(conn):
                print(
                    f"== {name}:\n{value}\n"
                    if isinstance(value, str) and "\n" in value
                    else f"== {name}: {value}"
                )
            await conn.execute(KEY_GATE)
            await seed_memories(conn, 1000)
            print("load before timing:", os.getloadavg())
            results = await timing(conn, rounds, n)
            print("load after timing:", os.getloadavg())
            for (name, label), runs in sorted(results.items(), key=lambda x: x[0][1]):
                report(label, name, runs, results[("no RLS (today)", label)])
        finally:
            await conn.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=300)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rounds, arguments.n))
