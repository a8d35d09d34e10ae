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
    SELECT set_config('adk_memory.all_users', 'on', true) IS NOT NULL $$;
"""
"""The gate functions, `{schema}`-formatted by the migration that creates them (each component
has one, `CREATE OR REPLACE`, so either component alone has them). Each clears what it does
not set, so a stale setting from an earlier statement of the same transaction never widens
this one."""

GATES = ("act_as", "act_as_app", "act_as_scope", "act_for_all")
"""The placeholders a statement writes as `{act_as}($1, $2)`; `render` qualifies them."""

ALL_USERS = f"current_setting('{ALL_USERS_SETTING}', true) = 'on'"

USER_ROWS = (
    f"(app_name = nullif(current_setting('{APP_SETTING}', true), '') AND "
    f"(user_id = nullif(current_setting('{USER_SETTING}', true), '') OR {ALL_USERS}))"
)
"""The policy predicate of tables keyed by (app_name, user_id): built of builtins only, so the
planner folds it into index keys (docs/rls.md §3)."""

APP_ROWS = f"app_name = nullif(current_setting('{APP_SETTING}', true), '') OR {ALL_USERS}"
"""The policy predicate of tables keyed by the app only (its shared state, its config)."""


def scope_rows(column: str = "scope_key") -> str:
    """The policy predicate of memory tables: the gated scope, its quarantine, its procedures
    and their quarantine (`memory.scope`'s key forms), as an `IN` of builtins (an array from a
    function wrecks plans: docs/rls.md §3)."""
    key = f"nullif(current_setting('{SCOPE_SETTING}', true), '')"
    prefixes = ("quarantine:", "procedure:", "quarantine:procedure:")
    forms = ", ".join([key, *(f"'{prefix}' || {key}" for prefix in prefixes)])
    return f"({column} IN ({forms}) OR {ALL_USERS})"


def table_policy(table: str, predicate: str) -> str:
    """DDL (`{schema}`-formatted by the migration) that turns row-level security on for `table`,
    owner included (FORCE: otherwise the owner, i.e. the embedded default's only role, bypasses
    it silently), with one policy for every role keyed by the gate's settings. Roles that must
    see every row (maintenance, operators) get their own `USING (true)` policies from
    `adk-memory db roles`; a role with no policy sees nothing."""
    name = f"{table}_gated"
    escaped = predicate.replace("{", "{{").replace("}", "}}")
    return (
        f"ALTER TABLE {{schema}}.{table} ENABLE ROW LEVEL SECURITY;\n"
        f"ALTER TABLE {{schema}}.{table} FORCE ROW LEVEL SECURITY;\n"
        f"DROP POLICY IF EXISTS {name} ON {{schema}}.{table};\n"
        f"CREATE POLICY {name} ON {{schema}}.{table} USING ({escaped}) WITH CHECK ({escaped});\n"
    )


def render(statement: str, schema: str) -> str:
    """The statement's SQL for `schema`: `{schema}` and each gate placeholder filled. The one
    place a gate function's qualified name is spelled."""
    return statement.format(schema=schema, **{name: f"{schema}.{name}" for name in GATES})
