"""Ordered, append-only SQL migrations and the runner that applies them.

Owns: the version table and the rule that a migration, once released, is never edited or
reordered: a list's index + 1 is its version. Each component (sessions, memory) has its own list,
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
)

_MEANINGFUL_CHARACTERS = "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
"""Migration 14's characters (frozen with it): CJK ideographs and Hangul syllables."""

_PROCLITIC = "^(ال|لل|[ובהכלמשوبلفك])(?=[\u05d0-\u05ea\u0620-\u06ff]{{3}})"
"""Migration 14's Hebrew and Arabic proclitics (frozen with it; `memory.text._PROCLITIC`)."""

MEMORY_MIGRATIONS: tuple[str, ...] = (
    # 1: memories and their revisions. The embedding column gets its dimension (and its HNSW
    # index) when a store is first used with an embedder: see memory/store.
    """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE EXTENSION IF NOT EXISTS btree_gin;
    CREATE TABLE {schema}.memories (
        id                uuid        PRIMARY KEY,
        scope_key         text        NOT NULL,
        scope             jsonb       NOT NULL,
        fact              text        NOT NULL,
        content           jsonb,
        topics            text[]      NOT NULL DEFAULT '{{}}',
        metadata          jsonb       NOT NULL DEFAULT '{{}}',
        importance        float8      CHECK (importance BETWEEN 0 AND 1),
        confidence        float8      CHECK (confidence BETWEEN 0 AND 1),
        source_type       text        NOT NULL,
        source_session_id text,
        source_event_ids  text[]      NOT NULL DEFAULT '{{}}',
        embedding         vector,
        fts               tsvector    NOT NULL,
        create_time       timestamptz NOT NULL DEFAULT now(),
        update_time       timestamptz NOT NULL DEFAULT now(),
        expire_time       timestamptz
    );
    -- Exact-scope reads: one equality on the canonical scope text, newest first.
    CREATE INDEX memories_by_scope ON {schema}.memories (scope_key, update_time DESC, id DESC);
    -- Scoped full-text search reads only the scope's postings (btree_gin puts the scope key in
    -- the GIN index), never the whole table's.
    CREATE INDEX memories_fts ON {schema}.memories USING gin (scope_key, fts);
    CREATE INDEX memories_expiry ON {schema}.memories (expire_time)
        WHERE expire_time IS NOT NULL;
    -- No foreign key: a revision outlives its memory and explains what happened to it.
    CREATE TABLE {schema}.memory_revisions (
        id                uuid        PRIMARY KEY,
        memory_id         uuid        NOT NULL,
        scope_key         text        NOT NULL,
        scope             jsonb       NOT NULL,
        action            text        NOT NULL CHECK (action IN ('CREATED', 'UPDATED', 'DELETED')),
        fact              text,
        extracted_facts   text[]      NOT NULL DEFAULT '{{}}',
        labels            jsonb       NOT NULL DEFAULT '{{}}',
        source_type       text,
        source_session_id text,
        source_event_ids  text[]      NOT NULL DEFAULT '{{}}',
        create_time       timestamptz NOT NULL DEFAULT clock_timestamp(),
        expire_time       timestamptz
    );
    CREATE INDEX memory_revisions_by_memory
        ON {schema}.memory_revisions (scope_key, memory_id, create_time);
    CREATE INDEX memory_revisions_expiry ON {schema}.memory_revisions (expire_time)
        WHERE expire_time IS NOT NULL;
    """,
    # 2: the durable queue that generates memories, its per-scope leases (generations for one
    # scope never interleave) and the per-session watermarks (no event is processed twice).
    """
    CREATE TABLE {schema}.memory_jobs (
        id           uuid        PRIMARY KEY,
        scope_key    text        NOT NULL,
        scope        jsonb       NOT NULL,
        payload      json        NOT NULL,
        status       text        NOT NULL DEFAULT 'pending'
                                 CHECK (status IN ('pending', 'running', 'done', 'dead')),
        attempts     integer     NOT NULL DEFAULT 0,
        max_attempts integer     NOT NULL,
        run_after    timestamptz NOT NULL DEFAULT now(),
        lease_until  timestamptz,
        error        text,
        result       json,
        create_time  timestamptz NOT NULL DEFAULT now(),
        update_time  timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX memory_jobs_due ON {schema}.memory_jobs (run_after, create_time)
        WHERE status IN ('pending', 'running');
    CREATE INDEX memory_jobs_dead ON {schema}.memory_jobs (update_time) WHERE status = 'dead';
    CREATE TABLE {schema}.memory_scope_leases (
        scope_key   text        PRIMARY KEY,
        job_id      uuid        NOT NULL,
        lease_until timestamptz NOT NULL
    );
    CREATE TABLE {schema}.memory_watermarks (
        scope_key   text             NOT NULL,
        session_id  text             NOT NULL,
        event_id    text             NOT NULL,
        event_time  double precision NOT NULL,
        update_time timestamptz      NOT NULL DEFAULT now(),
        PRIMARY KEY (scope_key, session_id)
    );
    """,
    # 3: privacy. A finished job keeps no conversation: its payload is emptied and its result
    # holds memory ids and actions only (facts are read from the memories, so a deleted
    # memory's fact is gone); jobs finished before this version are scrubbed the same way.
    # Erasures are recorded with counts and times, never with whom they erased.
    """
    UPDATE {schema}.memory_jobs
       SET payload = '{{}}',
           result = (SELECT coalesce(json_agg(json_build_object(
                                'action', g->>'action', 'memory_id', g->'memory'->>'id')), '[]')
                       FROM json_array_elements(result) g)
     WHERE status = 'done';
    CREATE INDEX memory_jobs_finished ON {schema}.memory_jobs (update_time)
        WHERE status IN ('done', 'dead');
    CREATE TABLE {schema}.erasures (
        id          uuid        PRIMARY KEY,
        app_name    text        NOT NULL,
        counts      jsonb       NOT NULL,
        start_time  timestamptz NOT NULL,
        finish_time timestamptz NOT NULL DEFAULT now()
    );
    """,
    # 4: exactly-once writes (see `Database.run`). A job keeps the id of the request that last
    # moved it (a claim, a failed try, a retry of a dead job), so that request's replay after a
    # lost reply recognises its own change: a replayed claim gets back the job it claimed (the
    # index holds running jobs only). Purges and erasures record their counts under their
    # request id for their replay. A revision's id is chosen by the caller and is the token of
    # the write that made it (no DDL: revisions already have a uuid primary key).
    """
    ALTER TABLE {schema}.memory_jobs ADD COLUMN request_id uuid;
    CREATE INDEX memory_jobs_by_request ON {schema}.memory_jobs (request_id)
        WHERE status = 'running';
    CREATE TABLE {schema}.memory_replies (
        id          uuid        PRIMARY KEY,
        counts      bigint[]    NOT NULL,
        create_time timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX memory_replies_by_time ON {schema}.memory_replies (create_time);
    """,
    # 5: one memory configuration per app, shared by every process that serves it (agents,
    # in-process and standalone workers): each distinct configuration is the app's next
    # version, and history is kept (a queued job may still name an old one). A job records the
    # version it was enqueued with, which its worker then uses; NULL: the worker's own. The
    # configuration is jsonb because a published one is compared with the latest for equality
    # (publishing the same one again is a no-op), never read back verbatim.
    """
    CREATE TABLE {schema}.memory_app_configs (
        app_name    text        NOT NULL,
        version     integer     NOT NULL CHECK (version > 0),
        config      jsonb       NOT NULL,
        create_time timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (app_name, version)
    );
    ALTER TABLE {schema}.memory_jobs ADD COLUMN config_version integer;
    """,
    # 6: a scope's memories by when they are from (`create_time`): retrieval's temporal list
    # ("what did I say last week?") reads the memories of a time window of one scope, not the
    # whole scope.
    """
    CREATE INDEX memories_by_time ON {schema}.memories (scope_key, create_time DESC, id);
    """,
    # 7: an operator's read-outs (the memory inspector): the quarantine queue of every scope
    # without a pass over the memories (a partial index of the quarantined ones only, stored
    # under `memory.scope.QUARANTINE_PREFIX`), and one scope's generations without a pass over
    # the queue (purging a scope's jobs uses it too).
    """
    CREATE INDEX memories_quarantined ON {schema}.memories (update_time DESC, id DESC)
        WHERE starts_with(scope_key, 'quarantine:');
    CREATE INDEX memory_jobs_by_scope ON {schema}.memory_jobs (scope_key, create_time DESC);
    """,
    # 8: structured profiles (Memory Bank's `StructuredMemoryConfig`): one row per field of one
    # schema's profile of one scope, read whole with one equality on the primary key's prefix
    # (no search). Every change to a field is a revision of its own, kept after the field goes
    # (as a memory's): the field's history. Values are jsonb (a field is any JSON value its
    # schema allows; never compared as text).
    """
    CREATE TABLE {schema}.memory_profile_fields (
        scope_key         text        NOT NULL,
        scope             jsonb       NOT NULL,
        schema_id         text        NOT NULL,
        field             text        NOT NULL,
        value             jsonb       NOT NULL,
        source_type       text        NOT NULL,
        source_session_id text,
        create_time       timestamptz NOT NULL DEFAULT now(),
        update_time       timestamptz NOT NULL DEFAULT now(),
        expire_time       timestamptz,
        PRIMARY KEY (scope_key, schema_id, field)
    );
    CREATE INDEX memory_profile_fields_expiry ON {schema}.memory_profile_fields (expire_time)
        WHERE expire_time IS NOT NULL;
    CREATE TABLE {schema}.memory_profile_revisions (
        id                uuid        PRIMARY KEY,
        scope_key         text        NOT NULL,
        scope             jsonb       NOT NULL,
        schema_id         text        NOT NULL,
        field             text        NOT NULL,
        action            text        NOT NULL CHECK (action IN ('CREATED', 'UPDATED', 'DELETED')),
        value             jsonb,
        labels            jsonb       NOT NULL DEFAULT '{{}}',
        source_type       text,
        source_session_id text,
        create_time       timestamptz NOT NULL DEFAULT clock_timestamp(),
        expire_time       timestamptz
    );
    CREATE INDEX memory_profile_revisions_by_field
        ON {schema}.memory_profile_revisions (scope_key, schema_id, field, create_time);
    CREATE INDEX memory_profile_revisions_expiry ON {schema}.memory_profile_revisions (expire_time)
        WHERE expire_time IS NOT NULL;
    """,
    # 9: trust-weighted confidence: each revision keeps the memory's confidence after its change
    # (a corroboration or a blocked contradiction changes confidence alone), so a memory's
    # history says how sure it was and why. NULL for revisions written before.
    """
    ALTER TABLE {schema}.memory_revisions ADD COLUMN confidence float8
        CHECK (confidence BETWEEN 0 AND 1);
    """,
    # 10: erasure that stays erased (`memory.tombstones`). A tombstone is a keyed hash (HMAC-
    # SHA256 under this database's own random key, one row) of what an erasure removed: the
    # user, their session ids and memory ids; never any text. Imports and replays look them up
    # to refuse the erased data. An erasure is one record from its first step to its last:
    # `finish_time` NULL while it runs, its tombstone naming it, so a run after a crash goes on
    # with the same record (and counts) instead of starting a second one.
    """
    CREATE TABLE {schema}.memory_tombstone_key (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        key       bytea   NOT NULL CHECK (length(key) >= 32)
    );
    CREATE TABLE {schema}.memory_tombstones (
        digest      bytea       PRIMARY KEY,
        erasure_id  uuid        NOT NULL,
        create_time timestamptz NOT NULL DEFAULT now()
    );
    ALTER TABLE {schema}.erasures ALTER COLUMN finish_time DROP NOT NULL;
    ALTER TABLE {schema}.erasures ALTER COLUMN finish_time DROP DEFAULT;
    """,
    # 11: Procedure support: which user's session supports which of an app's procedures, with the
    # (hashed) tokens of that session's redacted material and, apart, of what its job wrote. A
    # procedure is shown to other users only when enough users support it and no token of it is
    # one user's alone (`memory.procedure_rule`); erasing a user deletes their rows and
    # withdraws what they alone gave. Self-contained: no other table changes.
    """
    CREATE TABLE {schema}.procedure_support (
        scope_key   text        NOT NULL,
        memory_id   uuid        NOT NULL,
        user_id     text        NOT NULL,
        session_id  text        NOT NULL,
        tokens      text[]      NOT NULL,
        written     text[]      NOT NULL DEFAULT '{{}}',
        create_time timestamptz NOT NULL DEFAULT now(),
        update_time timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope_key, memory_id, user_id, session_id)
    );
    CREATE INDEX procedure_support_by_user ON {schema}.procedure_support (scope_key, user_id);
    """,
    # 12: the users who opted out of memory (`set_opt_out`, or the opt-out state key seen by
    # the service): one row per app and user, read by one primary-key lookup before every write
    # for that user. A row holds a SHA-256 of the user's scope, not the ids themselves, and
    # never anything the user said.
    """
    CREATE TABLE {schema}.memory_opt_outs (
        user_hash   bytea       PRIMARY KEY,
        create_time timestamptz NOT NULL DEFAULT now()
    );
    """,
    # 13: the audit of operator access (`memory.store.audit`): who (the operator's principal,
    # or the process's identity for a command), what (the kind, the scope's canonical key, its
    # app and user, the memory a page showed, counts) and when; never content. Rows are only
    # ever added, except that an erasure removes the erased user from them (`user_id` and
    # `memory_id` NULL, `scope_key` the erasure's marker), keeping the kind and the counts.
    # Listed newest first, by keyset.
    """
    CREATE TABLE {schema}.operator_audit (
        id          uuid        PRIMARY KEY,
        create_time timestamptz NOT NULL DEFAULT clock_timestamp(),
        principal   text        NOT NULL,
        kind        text        NOT NULL,
        app_name    text,
        user_id     text,
        scope_key   text,
        memory_id   text,
        counts      jsonb       NOT NULL DEFAULT '{{}}'
    );
    CREATE INDEX operator_audit_newest ON {schema}.operator_audit (create_time DESC, id DESC);
    CREATE INDEX operator_audit_by_user ON {schema}.operator_audit (app_name, user_id)
        WHERE user_id IS NOT NULL;
    -- Append-only, held by the database: the only change a record takes is an erasure's
    -- scrub (its user and memory cleared, its scope key the marker). Deleting is left to the
    -- roles (only the table's owner may; the package never does).
    CREATE FUNCTION {schema}.operator_audit_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.id <> OLD.id OR NEW.create_time <> OLD.create_time
           OR NEW.principal <> OLD.principal OR NEW.kind <> OLD.kind
           OR NEW.counts <> OLD.counts OR NEW.app_name IS DISTINCT FROM OLD.app_name
           OR NEW.user_id IS NOT NULL OR NEW.memory_id IS NOT NULL
           OR NEW.scope_key NOT LIKE 'erased:%' THEN
            RAISE EXCEPTION 'operator_audit is append-only: a record only loses an erased user';
        END IF;
        RETURN NEW;
    END
    $$;
    CREATE TRIGGER operator_audit_append_only BEFORE UPDATE ON {schema}.operator_audit
        FOR EACH ROW EXECUTE FUNCTION {schema}.operator_audit_append_only();
    """,
    # 14: one-character words of the scripts whose characters carry meaning (Chinese characters,
    # Japanese kanji, Hangul syllables) are indexed alone as well as in pairs, and Hebrew and
    # Arabic words without their proclitics too (`memory.text.search_text`), so a query of one
    # character (猫) finds every memory holding it and בירושלים finds ירושלים. The memories
    # indexed before get the same lexemes here: each such character of their stored pairs, each
    # stored Hebrew or Arabic word less its first one or two proclitics. No other lexeme
    # changes, and a memory without such text is not rewritten.
    f"""
    UPDATE {{schema}}.memories m
       SET fts = m.fts || array_to_tsvector(ARRAY(
           SELECT DISTINCT c
             FROM unnest(tsvector_to_array(m.fts)) l, regexp_split_to_table(l, '') c
            WHERE c ~ '^[{_MEANINGFUL_CHARACTERS}]$'))
     WHERE m.fts::text ~ '[{_MEANINGFUL_CHARACTERS}]';
    UPDATE {{schema}}.memories m
       SET fts = m.fts || array_to_tsvector(ARRAY(
           SELECT DISTINCT v
             FROM unnest(tsvector_to_array(m.fts)) l,
                  LATERAL (SELECT regexp_replace(l, '{_PROCLITIC}', '') AS once) a,
                  LATERAL (SELECT regexp_replace(a.once, '{_PROCLITIC}', '') AS twice) b,
                  unnest(ARRAY[a.once, b.twice]) v
            WHERE v <> l))
     WHERE m.fts::text ~ '[\u05d0-\u05ea\u0620-\u06ff]';
    """,
    # 15: Memory Bank's IngestEvents (`memory.store.ingest`): a stream per (scope, stream id)
    # with the trigger its requests named and when a time rule next flushes it (`due_time`,
    # read by the worker's sweep), and its buffered events, one per event id (an event sent
    # again is the same event). A flush claims the waiting events (`flush_id`; a claim older
    # than a lease is free again), enqueues their generation, then marks them processed; a
    # processed event keeps its content only while it is among the last `overlap_event_count`
    # (sent again as context), its id always (deduplication).
    """
    CREATE TABLE {schema}.memory_ingest_streams (
        scope_key    text        NOT NULL,
        stream_id    text        NOT NULL,
        scope        jsonb       NOT NULL,
        rule         jsonb,
        options      json        NOT NULL,
        window_start timestamptz NOT NULL,
        last_event   timestamptz NOT NULL,
        due_time     timestamptz,
        PRIMARY KEY (scope_key, stream_id)
    );
    CREATE INDEX memory_ingest_streams_due ON {schema}.memory_ingest_streams (due_time)
        WHERE due_time IS NOT NULL;
    CREATE TABLE {schema}.memory_ingest_events (
        scope_key  text        NOT NULL,
        stream_id  text        NOT NULL,
        event_id   text        NOT NULL,
        seq        bigint      GENERATED ALWAYS AS IDENTITY,
        event_time timestamptz NOT NULL,
        content    json,
        ingest_id  uuid        NOT NULL,
        processed  boolean     NOT NULL DEFAULT false,
        flush_id   uuid,
        claimed_at timestamptz,
        PRIMARY KEY (scope_key, stream_id, event_id)
    );
    CREATE INDEX memory_ingest_events_order
        ON {schema}.memory_ingest_events (scope_key, stream_id, processed, event_time, seq);
    CREATE INDEX memory_ingest_events_kept ON {schema}.memory_ingest_events (scope_key, stream_id)
        WHERE processed AND content IS NOT NULL;
    """,
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
