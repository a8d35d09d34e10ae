"""Least-privilege database roles: who may do what to each table, and the SQL that makes it so.

Owns: the one declarative grant table (`GRANTS`: for every table the migrations create, which
of the agent, worker and operator roles may SELECT / INSERT / UPDATE / DELETE it; the
maintenance role owns the schema and everything in it), the statements that create the NOLOGIN
group roles (and LOGIN users that are members of them), and the typed error a denied statement
becomes (`denied`), which names the role and says which role may. The grants are re-applied
whole on every run (REVOKE, then GRANT exactly what the table says), so a run after a migration
added a table covers it, and one after an edit of the table removes what it no longer allows.

It never reads a password from anywhere but its caller (the command reads stdin or the
environment), never prints one (`Plan.shown` masks them), and runs no statement built from
user text: role names and the schema are validated identifiers, passwords are quoted by the
server (`format('%L')`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import asyncpg

from ..errors import DatabasePermissionError, InputValidationError

ROLES: tuple[str, ...] = ("agent", "worker", "maintenance", "operator")
"""The processes' roles, narrowest job first: the ADK runtime, the generation worker, the
sweeps / erasure / migrations, and read-only operators (the inspector, exports)."""

GRANTED_ROLES: tuple[str, ...] = ("agent", "worker", "operator")
"""The roles that hold per-table grants; maintenance owns the tables instead."""

DEFAULT_PREFIX = "adk_memory_"

_PRIVILEGES = {"S": "SELECT", "I": "INSERT", "U": "UPDATE", "D": "DELETE"}

GRANTS: Mapping[str, Mapping[str, str]] = {
    # sessions: the agent runs ADK's session service (create, append, delete_session); user and
    # app state are upserts (INSERT ... ON CONFLICT DO UPDATE). Erasure's recorded counts
    # (`session_replies`) are maintenance's alone, so `erase_user` fails at its first statement.
    "schema_versions": {"agent": "S", "worker": "S", "operator": "S"},
    "app_states": {"agent": "SIU", "operator": "S"},
    "user_states": {"agent": "SIU", "operator": "S"},
    "sessions": {"agent": "SIUD", "operator": "S"},
    "events": {"agent": "SI", "operator": "S"},
    "session_replies": {"operator": "S"},
    # memory: direct writes and the memory tools (create / update / delete a memory, each with
    # its revision), retrieval, enqueueing a generation; the worker writes what a job decided.
    # Revisions are never updated nor deleted but by the sweeps, purge and erasure.
    "memories": {"agent": "SIUD", "worker": "SIUD", "operator": "S"},
    "memory_revisions": {"agent": "SI", "worker": "SI", "operator": "S"},
    "memory_jobs": {"agent": "SI", "worker": "SIU", "operator": "S"},
    "memory_scope_leases": {"worker": "SIUD", "operator": "S"},
    "memory_watermarks": {"agent": "S", "worker": "SIU", "operator": "S"},
    "memory_replies": {"operator": "S"},
    "memory_app_configs": {"agent": "SI", "worker": "S", "operator": "S"},
    "memory_profile_fields": {"agent": "S", "worker": "SIUD", "operator": "S"},
    "memory_profile_revisions": {"agent": "S", "worker": "SI", "operator": "S"},
    "procedure_support": {"agent": "S", "worker": "SIU", "operator": "S"},
    "memory_opt_outs": {"agent": "SID", "worker": "S", "operator": "S"},
    # IngestEvents: the agent (the REST surface) buffers and flushes; the worker's sweep
    # flushes streams a time rule made due (enqueueing their generation: I on memory_jobs).
    "memory_ingest_streams": {"agent": "SIU", "worker": "SU", "operator": "S"},
    "memory_ingest_events": {"agent": "SIU", "worker": "SU", "operator": "S"},
    # erasure: reads check tombstones (a lookup never makes the key); only an erasure writes.
    # The tombstone key stays out of operators' reach: with it, a guessed id can be tested.
    "erasures": {"operator": "S"},
    "memory_tombstone_key": {"agent": "S", "worker": "S"},
    "memory_tombstones": {"agent": "S", "worker": "S", "operator": "S"},
    "vector_steps": {"agent": "S", "worker": "S", "operator": "S"},
    # the audit of operator access: appended by whoever serves the inspector (the agent in the
    # deployment) or runs an export (an operator); an erasure's scrub is maintenance's; nobody
    # but the owner deletes.
    "operator_audit": {"agent": "SI", "operator": "SI"},
}
"""Which role may do what to each table: S(ELECT), I(NSERT), U(PDATE), D(ELETE). No role but
maintenance gets TRUNCATE, REFERENCES, TRIGGER or any DDL (owners only). A table the
migrations create without an entry here fails `tests/test_roles.py`."""

OPEN_ROLES: Mapping[str, str] = {"maintenance": "ALL", "operator": "SELECT"}
"""The roles that pass the row-level security of every policed table (`db/rls.py`), and for
which command: a `USING (true)` policy of their own on each table (maintenance: sweeps,
erasure, purges, migrations; operators: reads only, every one of them audited). Preferred to
the BYPASSRLS attribute, which only a superuser may grant (managed services may not let you)
and which would not show in `\\d+`. The agent and the worker have none: they are policed."""

OPEN_TABLES: Mapping[str, Mapping[str, str]] = {
    # The worker claims the next due job of any scope, and keeps the books of the job it holds
    # by id (ownership, completion, failure, the queue's depth): `memory/jobs/queue.py` gates
    # those with `act_for_all`. A job's effects are written under its scope's gate.
    "memory_jobs": {"worker": "ALL"},
    "memory_scope_leases": {"worker": "ALL"},
    # The worker's sweep finds the streams a time rule made due in every scope
    # (`memory/store/ingest.py` DUE_STREAMS, gated `act_for_all`); each flush then acts under
    # its stream's scope.
    "memory_ingest_streams": {"worker": "SELECT"},
}
"""Per-table exceptions for a policed role: table -> {role: command}."""

_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def _identifier(name: str, what: str) -> str:
    """`name` double-quoted, after checking it is a plain lower-case identifier."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise InputValidationError(
            f"Invalid {what} {name!r}: use lower-case letters, digits and underscores "
            "(at most 63), not starting with a digit."
        )
    return f'"{name}"'


def role_name(prefix: str, role: str) -> str:
    """The group role of `role` (one of `ROLES`) under `prefix`, e.g. adk_memory_agent."""
    if role not in ROLES:
        raise InputValidationError(f"Unknown role {role!r}: one of {', '.join(ROLES)}.")
    name = f"{prefix}{role}"
    _identifier(name, "role name")
    return name


def privileges(table: str, role: str) -> list[str]:
    """The privileges `role` holds on `table` per `GRANTS`, as SQL keywords."""
    return [_PRIVILEGES[letter] for letter in GRANTS.get(table, {}).get(role, "")]


@dataclass(frozen=True)
class Login:
    """A LOGIN user to create (or update) as a member of one group role."""

    role: str
    name: str
    password: str | None = None
    """None: an existing user keeps its password (a new one gets none: it cannot log in with
    one until it is set)."""


@dataclass
class Plan:
    """The statements one run applies, in order, and what it could not cover."""

    statements: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    """(SQL, arguments): an argument is a password, which `format('%L')` quotes server-side."""
    unknown_tables: list[str] = field(default_factory=list)
    """Tables in the schema that `GRANTS` does not name: maintenance owns them, nobody else
    may touch them until the table has an entry."""

    def add(self, sql: str, *arguments: str) -> None:
        self.statements.append((sql, arguments))

    @property
    def shown(self) -> list[str]:
        """The statements as text to print, passwords masked."""
        return [sql.replace("%L", "'********'") + ";" for sql, _ in self.statements]


@dataclass(frozen=True)
class _Catalog:
    """What the database holds now, read before planning."""

    existing_roles: frozenset[str]
    schema_exists: bool
    tables: dict[str, str]
    """Table name -> its owner."""
    policed: frozenset[str]
    """The tables with row-level security policies (`db/rls.py`; enabled or not)."""
    functions: dict[str, str]
    """Function signature (`name(args)`) -> its owner."""
    is_superuser: bool
    member_of_maintenance: bool
    widened: dict[str, list[str]] = field(default_factory=dict)
    """An existing LOGIN user -> what makes it wider than its group: its other role
    memberships, and the attributes CREATEROLE / CREATEDB / SUPERUSER it holds. A user made by
    `gcloud sql users create` is a cloudsqlsuperuser with CREATEROLE and CREATEDB."""


_CATALOG = """
SELECT
  (SELECT coalesce(array_agg(rolname), '{}') FROM pg_roles),
  (SELECT count(*) > 0 FROM pg_namespace WHERE nspname = $1),
  (SELECT coalesce(array_agg(ARRAY[c.relname, pg_get_userbyid(c.relowner)]), '{}')
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')),
  (SELECT coalesce(array_agg(ARRAY[
            format('%I(%s)', p.proname, pg_get_function_identity_arguments(p.oid)),
            pg_get_userbyid(p.proowner)]), '{}')
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1),
  (SELECT rolsuper FROM pg_roles WHERE rolname = current_user),
  (SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = $2)
          AND pg_has_role(current_user, $2, 'MEMBER')),
  (SELECT coalesce(array_agg(c.relname), '{}')
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND EXISTS (SELECT FROM pg_policy p WHERE p.polrelid = c.oid))
"""

_WIDENED = """
SELECT u.rolname, array_remove(ARRAY[
         CASE WHEN u.rolsuper THEN 'SUPERUSER' END,
         CASE WHEN u.rolcreaterole THEN 'CREATEROLE' END,
         CASE WHEN u.rolcreatedb THEN 'CREATEDB' END], NULL),
       coalesce((SELECT array_agg(g.rolname) FROM pg_auth_members m
                   JOIN pg_roles g ON g.oid = m.roleid
                  WHERE m.member = u.oid AND g.rolname <> ALL($2::text[])), '{}')
  FROM pg_roles u WHERE u.rolname = ANY($1::text[])
"""


async def _catalog(
    conn: asyncpg.Connection, schema: str, prefix: str, logins: Sequence[Login]
) -> _Catalog:
    row = await conn.fetchrow(_CATALOG, schema, role_name(prefix, "maintenance"))
    roles, schema_exists, tables, functions, superuser, member, policed = row
    groups = [role_name(prefix, role) for role in ROLES]
    wide = await conn.fetch(_WIDENED, [login.name for login in logins], groups)
    return _Catalog(
        widened={r[0]: [*r[1], *r[2]] for r in wide if r[1] or r[2]},
        existing_roles=frozenset(roles),
        schema_exists=bool(schema_exists),
        tables={t: owner for t, owner in tables},
        policed=frozenset(policed),
        functions={f: owner for f, owner in functions},
        is_superuser=bool(superuser),
        member_of_maintenance=bool(member),
    )


def _plan(schema: str, prefix: str, logins: Sequence[Login], catalog: _Catalog) -> Plan:
    """The statements that bring `catalog` to what `GRANTS` says (pure: no I/O)."""
    plan = Plan()
    s = _identifier(schema, "schema name")
    names = {role: role_name(prefix, role) for role in ROLES}
    quoted = {role: f'"{name}"' for role, name in names.items()}
    maintenance = quoted["maintenance"]
    for role in ROLES:
        if names[role] not in catalog.existing_roles:
            plan.add(f"CREATE ROLE {quoted[role]} NOLOGIN")
    # Giving maintenance what it owns takes membership in it (a superuser needs none).
    if not catalog.is_superuser and not catalog.member_of_maintenance:
        plan.add(f"GRANT {maintenance} TO CURRENT_USER")
    if catalog.schema_exists:
        plan.add(f"ALTER SCHEMA {s} OWNER TO {maintenance}")
    else:
        plan.add(f"CREATE SCHEMA {s} AUTHORIZATION {maintenance}")
    granted = ", ".join(quoted[role] for role in GRANTED_ROLES)
    plan.add(f"GRANT USAGE ON SCHEMA {s} TO {granted}")
    for table, owner in sorted(catalog.tables.items()):
        t = f"{s}.{_identifier(table, 'table name')}"
        if owner != names["maintenance"]:
            plan.add(f"ALTER TABLE {t} OWNER TO {maintenance}")
        plan.add(f"REVOKE ALL ON {t} FROM {granted}")
        if table not in GRANTS:
            plan.unknown_tables.append(table)
            continue
        for role in GRANTED_ROLES:
            allowed = privileges(table, role)
            if allowed:
                plan.add(f"GRANT {', '.join(allowed)} ON {t} TO {quoted[role]}")
        if table in catalog.policed:
            _plan_policies(plan, table, t, names)
    for function, owner in sorted(catalog.functions.items()):
        if owner != names["maintenance"]:
            plan.add(f"ALTER FUNCTION {s}.{function} OWNER TO {maintenance}")
    for login in logins:
        _plan_login(plan, login, names[login.role], catalog)
    return plan


def _plan_policies(plan: Plan, table: str, qualified: str, names: Mapping[str, str]) -> None:
    """Re-apply the per-role policies of one policed table: `OPEN_ROLES` and `OPEN_TABLES`
    exactly (each role's policy dropped, then created if it still may), like the grants."""
    for role in ROLES:
        policy = _identifier(f"{table}_{names[role]}"[:63], "policy name")
        plan.add(f"DROP POLICY IF EXISTS {policy} ON {qualified}")
        command = OPEN_TABLES.get(table, {}).get(role) or OPEN_ROLES.get(role)
        if command is None:
            continue
        using = "" if command == "INSERT" else " USING (true)"
        check = " WITH CHECK (true)" if command in ("ALL", "INSERT", "UPDATE") else ""
        plan.add(
            f'CREATE POLICY {policy} ON {qualified} FOR {command} TO "{names[role]}"{using}{check}'
        )


def _plan_login(plan: Plan, login: Login, group: str, catalog: _Catalog) -> None:
    """Create or update one LOGIN user and make it a member of the group role `group`."""
    user = _identifier(login.name, "user name")
    verb = "ALTER" if login.name in catalog.existing_roles else "CREATE"
    if login.password is not None:
        plan.add(f"{verb} ROLE {user} LOGIN PASSWORD %L", login.password)
    else:
        plan.add(f"{verb} ROLE {user} LOGIN")
    plan.add(f'GRANT "{group}" TO {user}')
    attributes = {"SUPERUSER", "CREATEROLE", "CREATEDB"}
    wider = catalog.widened.get(login.name, [])
    if "SUPERUSER" in wider:
        raise InputValidationError(
            f"{login.name!r} is a superuser: no grant narrows it. Use another user for the "
            f"{login.role} role."
        )
    if stripped := [a for a in wider if a in attributes]:
        plan.add(f"ALTER ROLE {user} {' '.join(f'NO{a}' for a in stripped)}")
    for other in (r for r in wider if r not in attributes):
        plan.add(f'REVOKE "{other.replace(chr(34), chr(34) * 2)}" FROM {user}')
    if login.role == "maintenance":
        # A maintenance user's sessions act as the group role, so the tables a later migration
        # creates are the group's (every maintenance user may alter them) and not the user's.
        plan.add(f"ALTER ROLE {user} SET role = '{group}'")


async def apply_roles(
    conn: asyncpg.Connection,
    schema: str,
    *,
    prefix: str = DEFAULT_PREFIX,
    logins: Sequence[Login] = (),
    dry_run: bool = False,
) -> Plan:
    """Create the group roles (and `logins`) and apply `GRANTS` to `schema`'s tables, in one
    transaction; with `dry_run`, only read the catalog and return the plan. Safe to re-run:
    after a migration added tables, it grants on them; nothing else changes."""
    for login in logins:
        role_name(prefix, login.role)
    async with conn.transaction():
        plan = _plan(schema, prefix, logins, await _catalog(conn, schema, prefix, logins))
        if not dry_run:
            for sql, arguments in plan.statements:
                if arguments:
                    sql = await conn.fetchval(f"SELECT format($${sql}$$, $1::text)", *arguments)
                await conn.execute(sql)
    return plan


async def roles_present(conn: asyncpg.Connection, prefix: str = DEFAULT_PREFIX) -> bool:
    """Whether `prefix`'s group roles were created (a deployment that uses them re-applies the
    grants after each migration; one that does not is left alone)."""
    names = [role_name(prefix, role) for role in ROLES]
    found = await conn.fetchval("SELECT count(*) FROM pg_roles WHERE rolname = ANY($1)", names)
    return int(found) == len(names)


def denied(exc: asyncpg.exceptions.InsufficientPrivilegeError, user: str | None) -> Exception:
    """The typed error for a statement the database refused for lack of a privilege: which
    role was refused what, and which of adk-memory's roles may do it."""
    message = exc.args[0] if exc.args else str(exc)
    table = re.search(r"(?:table|relation) \"?(\w+)\"?", message)
    who = f"The database role {user!r}" if user else "This database role"
    hint = (
        "Erasure, purge, the sweeps, prune, migrations and DDL are the maintenance role's; "
        "connect this process with the narrowest role that may (`adk-memory db roles`)."
    )
    if table is not None and table.group(1) in GRANTS:
        name = table.group(1)
        holders = [
            f"{role} {'/'.join(privileges(name, role))}"
            for role in GRANTED_ROLES
            if GRANTS[name].get(role)
        ]
        hint = (
            f"On {name}, adk-memory's roles hold: {'; '.join(holders) or 'nothing'} "
            f"(maintenance owns it). {hint}"
        )
    return DatabasePermissionError(f"{who} lacks a privilege: {message}. {hint}")
