"""Ordered, append-only SQL migrations and the runner that applies them.

Owns: the version table and the rule that a migration, once released, is never edited or
reordered: a list's index + 1 is its version. Each component (sessions, memory: its list in
`memory_migrations.py`) has its own list,
so a deployment that only uses sessions never needs the pgvector extension. The runner holds a
transaction-scoped advisory lock, so ten replicas starting at once migrate exactly once and the
other nine wait, then see the work done; one that applies steps also holds a database-wide lock
(extensions are the database's, shared by every schema).

The vector steps, which depend on the embedder's dimension, are `db/vectors.py`'s. It never
runs a statement built from user input: the only substitution is the validated schema name.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from ..errors import MigrationError, SchemaVersionError
from . import rls
from .memory_migrations import INGEST_TABLES as INGEST_TABLES
from .memory_migrations import MEMORY_MIGRATIONS
from .memory_migrations import MEMORY_SCOPED_TABLES as MEMORY_SCOPED_TABLES

SCHEMA_CHANGE_TIMEOUT = 3600.0
"""Seconds the client waits for one migration statement. A migration runs without the pool's
statement timeout (`DatabaseTimeouts.statement`, meant for a turn's statements): building an
index on a big table, or waiting for the lock while another process migrates, is slow but not
hung. This bound still ends the wait on a server that stopped answering."""

_LIFT_STATEMENT_TIMEOUT = "SET LOCAL statement_timeout = 0"

DATABASE_LOCK = 0x61646B5F6D656D31
"""The advisory lock key (b"adk_mem1") a migration that applies steps holds database-wide, for
the objects schemas share (extensions). Above 2**31, so no schema's `hashtext` key is this one."""


_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS {schema}.schema_versions (
    component  text        NOT NULL,
    version    integer     NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (component, version)
)
"""

SESSION_MIGRATIONS: tuple[str, ...] = (
    # 1: app, user and session state; events stored whole.
    # Everything is `json`, not `jsonb`: stored verbatim, so every field and every number
    # round-trips exactly (jsonb would print the float 1e23 as an integer).
    """
    -- Top-level replace of `base`'s keys by `delta`'s (ADK's state-delta rule), keeping every
    -- value's text as written.
    CREATE FUNCTION {schema}.merge_state(base json, delta json) RETURNS json
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(json_object_agg(key, value), '{{}}'::json)
        FROM (SELECT key, value FROM json_each(base)
               WHERE key NOT IN (SELECT json_object_keys(delta))
              UNION ALL
              SELECT key, value FROM json_each(delta)) merged
    $$;
    CREATE TABLE {schema}.app_states (
        app_name    text        PRIMARY KEY,
        state       json        NOT NULL DEFAULT '{{}}',
        update_time timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE {schema}.user_states (
        app_name    text        NOT NULL,
        user_id     text        NOT NULL,
        state       json        NOT NULL DEFAULT '{{}}',
        update_time timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (app_name, user_id)
    );
    -- No secondary indexes: every append rewrites this row, and without indexed columns
    -- changing the update stays HOT (no index writes, little bloat).
    CREATE TABLE {schema}.sessions (
        app_name         text             NOT NULL,
        user_id          text             NOT NULL,
        id               text             NOT NULL,
        state            json             NOT NULL DEFAULT '{{}}',
        revision         bigint           NOT NULL DEFAULT 0,
        last_update_time double precision NOT NULL,
        create_time      timestamptz      NOT NULL DEFAULT now(),
        active_time      timestamptz      NOT NULL DEFAULT now(),
        PRIMARY KEY (app_name, user_id, id)
    );
    -- `seq` is the session revision the event was written at: append order, the order a
    -- conversation is read back in.
    CREATE TABLE {schema}.events (
        app_name      text             NOT NULL,
        user_id       text             NOT NULL,
        session_id    text             NOT NULL,
        seq           bigint           NOT NULL,
        id            text             NOT NULL,
        invocation_id text             NOT NULL,
        "timestamp"   double precision NOT NULL,
        data          json             NOT NULL,
        PRIMARY KEY (app_name, user_id, session_id, seq),
        FOREIGN KEY (app_name, user_id, session_id)
            REFERENCES {schema}.sessions (app_name, user_id, id) ON DELETE CASCADE
    );
    -- Finds an event by id: idempotent re-delivery, provenance lookups.
    CREATE INDEX events_by_id ON {schema}.events (app_name, user_id, session_id, id);
    """,
    # 2: exactly-once writes (every write is replayed once after a lost reply, see
    # `Database.run`). A session keeps the id of the call that created it, so that call's replay
    # finds its own row where another call's create finds the id taken (not indexed: looked up
    # by primary key, and appends stay HOT). A user's erasure records its counts under its
    # request id, so its replay returns them instead of zeros (counts only, never whose).
    """
    ALTER TABLE {schema}.sessions ADD COLUMN request_id uuid;
    CREATE TABLE {schema}.session_replies (
        id          uuid        PRIMARY KEY,
        counts      bigint[]    NOT NULL,
        create_time timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX session_replies_by_time ON {schema}.session_replies (create_time);
    """,
    # 3: row-level security (issue 26, `db/rls.py`): every table holding a user's sessions is
    # policed by the acting app and user a statement's gate sets, its owner included (FORCE), so
    # a statement that forgot its `WHERE` still reaches no other user's rows. App state is the
    # app's, shared by its users.
    rls.GATE_FUNCTIONS
    + "".join(
        rls.table_policy(table, rls.USER_ROWS, rls.ALL_APP_USERS)
        for table in ("sessions", "events", "user_states")
    )
    + rls.table_policy("app_states", rls.APP_ROWS, rls.ALL_APP_USERS),
)

MIGRATIONS: dict[str, tuple[str, ...]] = {
    "sessions": SESSION_MIGRATIONS,
    "memory": MEMORY_MIGRATIONS,
}
"""Every component's migration list, by component name."""


async def current_version(conn: asyncpg.Connection, schema: str, component: str) -> int:
    """The version `component` is at in `schema`; 0 when nothing was ever applied."""
    exists = await conn.fetchval("SELECT to_regclass($1) IS NOT NULL", f"{schema}.schema_versions")
    if not exists:
        return 0
    query = f"SELECT coalesce(max(version), 0) FROM {schema}.schema_versions WHERE component = $1"
    return int(await conn.fetchval(query, component))


async def migrate(
    conn: asyncpg.Connection,
    schema: str,
    component: str,
    steps: Sequence[str],
    *,
    apply: bool = True,
) -> int:
    """Apply `component`'s missing `steps` in one transaction; return the resulting version.

    With `apply=False` nothing is written: a schema that is not exactly current is an error that
    says which command brings it up to date. The statement timeout is lifted for the
    transaction (see `SCHEMA_CHANGE_TIMEOUT`).
    """
    async with conn.transaction():
        await conn.execute(_LIFT_STATEMENT_TIMEOUT)
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1))",
            f"adk_memory:{schema}",
            timeout=SCHEMA_CHANGE_TIMEOUT,
        )
        version = await current_version(conn, schema, component)
        if version > len(steps):
            raise SchemaVersionError(
                f"The {component!r} tables in schema {schema!r} are at version {version}, newer "
                f"than this adk-memory knows ({len(steps)}). Upgrade adk-memory."
            )
        if version == len(steps):
            return version
        if not apply:
            raise SchemaVersionError(
                f"The {component!r} tables in schema {schema!r} are at version {version} of "
                f"{len(steps)} and automatic migration is off: run `adk-memory migrate`."
            )
        # Extensions belong to the database, not the schema: two processes migrating two
        # schemas of one new database would both create `vector` (and one fail on the catalog's
        # unique index). Taken after the schema's lock, by every migrator alike, so none waits
        # for another in a cycle; only a run that applies steps takes it.
        await conn.execute(
            "SELECT pg_advisory_xact_lock($1)", DATABASE_LOCK, timeout=SCHEMA_CHANGE_TIMEOUT
        )
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        await conn.execute(_VERSION_TABLE.format(schema=schema))
        for number, step in enumerate(steps[version:], start=version + 1):
            try:
                await conn.execute(step.format(schema=schema), timeout=SCHEMA_CHANGE_TIMEOUT)
            except asyncpg.exceptions.InsufficientPrivilegeError as exc:
                if "extension" not in str(exc):
                    raise  # a role too narrow to migrate: `db.roles.denied` names it
                raise MigrationError(
                    f"Migration {number} of {component!r} needs a privilege this database role "
                    f"lacks ({exc}). If it is the pgvector extension, have an administrator run "
                    "`CREATE EXTENSION vector;` in this database once (on Cloud SQL, as "
                    "cloudsqlsuperuser), then start again."
                ) from exc
            except (
                asyncpg.exceptions.FeatureNotSupportedError,  # PostgreSQL >= 15
                asyncpg.exceptions.UndefinedFileError,  # older: no control file
            ) as exc:
                if "vector" not in str(exc):
                    raise
                raise MigrationError(
                    f"The pgvector extension is not installed on this PostgreSQL server ({exc}). "
                    "Install pgvector (e.g. the postgresql-NN-pgvector package, or the "
                    "pgvector/pgvector Docker image), then run `CREATE EXTENSION vector;` in this "
                    "database as a superuser, or `adk-memory migrate` again."
                ) from exc
            await conn.execute(
                f"INSERT INTO {schema}.schema_versions (component, version) VALUES ($1, $2)",
                component,
                number,
            )
        return len(steps)
