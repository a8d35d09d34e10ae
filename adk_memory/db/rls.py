"""Row-level security: the gate every statement on a user's table carries, and the policies
that read what the gate set.

Owns: the names of the per-transaction settings the policies read, the gate functions' DDL
(created by a migration of each component), the policy DDL for a table, and `render`, the one
way a store turns its statement text into SQL (it fills the schema and the gate functions'
qualified names, so no store spells a gate function's name). It never runs a statement.

Why a gate in the statement (docs/rls.md has the evidence): `act_as($1, $2)` is a STABLE SQL
function of bound parameters only, so PostgreSQL evaluates it once, in the one-time filter of
the query level it appears in, before any scan of that level reads a row; it sets the
transaction-local settings the policies compare rows with. One round trip, bound parameters,
safe behind transaction-mode poolers (nothing outlives the statement's transaction in
autocommit), and every ordering mistake fails closed: a policy evaluated before the gate sees
no user and matches nothing. The rule that keeps that true: **the gate goes in the `WHERE` of
every query level (each CTE, each subquery) that scans a policed table.**

What it does not do: stop code that can run arbitrary SQL from calling the gate for another
user. It is defence in depth against a missing or wrong `WHERE` in our own statements; the
identity layer and the roles' grants stand against a compromised process.
"""

from __future__ import annotations

APP_SETTING = "adk_memory.app_name"
USER_SETTING = "adk_memory.user_id"
SCOPE_SETTING = "adk_memory.scope_key"
ALL_USERS_SETTING = "adk_memory.all_users"
"""'on' while a statement acts for every user (maintenance, app-wide listings, the job claim)."""

GATE_FUNCTIONS = """
CREATE OR REPLACE FUNCTION {schema}.act_as(app text, usr text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL UNSAFE AS $$
    SELECT set_config('adk_memory.app_name', coalesce(app, ''), true) IS NOT NULL
       AND set_config('adk_memory.user_id', coalesce(usr, ''), true) IS NOT NULL
       AND set_config('adk_memory.all_users', '', true) IS NOT NULL $$;
CREATE OR REPLACE FUNCTION {schema}.act_as_app(app text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL UNSAFE AS $$
    SELECT set_config('adk_memory.app_name', coalesce(app, ''), true) IS NOT NULL
       AND set_config('adk_memory.user_id', '', true) IS NOT NULL
       AND set_config('adk_memory.all_users', 'on', true) IS NOT NULL $$;
CREATE OR REPLACE FUNCTION {schema}.act_as_scope(key text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL UNSAFE AS $$
    SELECT set_config('adk_memory.scope_key', coalesce(key, ''), true) IS NOT NULL
       AND set_config('adk_memory.all_users', '', true) IS NOT NULL $$;
CREATE OR REPLACE FUNCTION {schema}.act_for_all() RETURNS boolean
LANGUAGE sql STABLE PARALLEL UNSAFE AS $$
    SELECT set_config('adk_memory.app_name', '', true) IS NOT NULL
       AND set_config('adk_memory.all_users', 'on', true) IS NOT NULL $$;
"""
"""The gate functions, `{schema}`-formatted by the migration that creates them (each component
has one, `CREATE OR REPLACE`, so either component alone has them). Each clears what it does
not set, so a stale setting from an earlier statement of the same transaction never widens
this one (`act_for_all` clears the app: it acts for every app)."""

GATES = ("act_as", "act_as_app", "act_as_scope", "act_for_all")
"""The placeholders a statement writes as `{act_as}($1, $2)`; `render` qualifies them."""

_APP = f"nullif(current_setting('{APP_SETTING}', true), '')"

ALL_USERS = f"current_setting('{ALL_USERS_SETTING}', true) = 'on'"
"""The owner's all-users predicate for tables without an app column (the memory tables): a
statement gated `act_for_all` (or `act_as_app`) reaches every row."""

USER_ROWS = f"app_name = {_APP} AND user_id = nullif(current_setting('{USER_SETTING}', true), '')"
"""The policy predicate of tables keyed by (app_name, user_id). Strict, of builtins only, with
no OR: the planner folds it into the statement's own equalities (a one-time check and index
keys), so it costs nothing per row. With `OR <all users>` in it, it became a filter evaluated on
every row: +7.5 % on a 500-event session read (docs/rls.md, decision 4)."""

APP_ROWS = f"app_name = {_APP}"
"""The policy predicate of tables keyed by the app only (its shared state, its config)."""

ALL_APP_USERS = f"{ALL_USERS} AND (app_name = {_APP} OR {_APP} IS NULL)"
"""The owner's all-users predicate for tables with an app column: every user of the app
`act_as_app` named, or of every app under `act_for_all` (which clears the app)."""


_SCOPE = f"nullif(current_setting('{SCOPE_SETTING}', true), '')"

SCOPE_ROWS = f"scope_key = {_SCOPE}"
"""The policy predicate of the memory tables: the one key the gate named, in the exact form the
statement reads (a scope's own key, its quarantine `quarantine:K`, its procedures
`procedure:K`: `memory.scope`'s key forms). One equality of builtins, like `USER_ROWS`: the
planner puts it in the same equivalence class as the statement's own `scope_key = $1`, i.e. one
index key and a one-time `$1 = <setting>` check. An `IN` of the four forms could not merge:
the planner multiplied the two selectivities, estimated one row and nested loops over the
scope (+120 % to +190 % on the hybrid search, docs/rls.md §7)."""

REVISION_ROWS = (
    f"scope_key = CASE WHEN starts_with({_SCOPE}, 'quarantine:') "
    f"THEN substr({_SCOPE}, {len('quarantine:') + 1}) ELSE {_SCOPE} END"
)
"""The policy predicate of `memory_revisions`, whose rows always carry the real key (a
quarantined memory's revisions its scope's own: `memory.scope.QUARANTINE_PREFIX`): the gated
key without its quarantine prefix, so a statement that writes a quarantined memory with its
revision (one gate, `quarantine:K`) writes the revision under `K`. Still one equality."""


def table_policy(table: str, predicate: str, all_rows: str = ALL_USERS) -> str:
    """DDL (`{schema}`-formatted by the migration) that turns row-level security on for `table`,
    owner included (FORCE: otherwise the owner, i.e. the embedded default's only role, bypasses
    it silently), with two permissive policies:

    - `<table>_gated`, for every role: `predicate`, the strict form keyed by the gate's
      settings (USING and WITH CHECK);
    - `<table>_all_users`, for the migrating role only (`CURRENT_USER`: the owner, which runs
      the migrations): `all_rows`, which lets a statement gated `act_for_all` / `act_as_app`
      reach every user's rows (the sweeps, erasure, app-wide listings, the job claim of a
      single-role deployment). Policed roles (agent, worker) do not get it: a permissive
      policy is OR-ed into the qual of every statement of the roles it applies to, and only
      the owner pays that per-row OR. Its name sorts before `_gated` on purpose: PostgreSQL
      ORs a table's permissive policies in reverse name order, so the gated check comes first
      and, true for every row of an ordinary statement, spares the all-users one.

    Roles that must see every row (maintenance, operators) get their own `USING (true)`
    policies from `adk-memory db roles`; a role with no policy sees nothing."""
    gated, every = f"{table}_gated", f"{table}_all_users"
    escaped = predicate.replace("{", "{{").replace("}", "}}")
    wide = all_rows.replace("{", "{{").replace("}", "}}")
    on = f"{{schema}}.{table}"
    return (
        f"ALTER TABLE {on} ENABLE ROW LEVEL SECURITY;\n"
        f"ALTER TABLE {on} FORCE ROW LEVEL SECURITY;\n"
        f"DROP POLICY IF EXISTS {gated} ON {on};\n"
        f"CREATE POLICY {gated} ON {on} USING ({escaped}) WITH CHECK ({escaped});\n"
        f"DROP POLICY IF EXISTS {every} ON {on};\n"
        f"CREATE POLICY {every} ON {on} TO CURRENT_USER USING ({wide}) WITH CHECK ({wide});\n"
    )


def render(statement: str, schema: str) -> str:
    """The statement's SQL for `schema`: `{schema}` and each gate placeholder filled. The one
    place a gate function's qualified name is spelled."""
    return statement.format(schema=schema, **{name: f"{schema}.{name}" for name in GATES})
