"""The memory component's migrations: the append-only DDL of the memory tables (memories,
revisions, jobs, leases, watermarks, profiles, procedure support, tombstones, opt-outs, app
configurations, the operator audit, IngestEvents' streams) and their row-level security.

Owns: `MEMORY_MIGRATIONS` (a list's index + 1 is its version; a released step is never edited or
reordered) and the names of the scope-keyed tables the policies cover. `migrations` runs them:
this module only holds them, apart from the sessions' list so that each stays a readable size.
The vector steps, which depend on the embedder's dimension, are `db/vectors.py`'s.
"""

from __future__ import annotations

from . import rls

_MEANINGFUL_CHARACTERS = "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
"""Migration 14's characters (frozen with it): CJK ideographs and Hangul syllables."""

_PROCLITIC = "^(ال|لل|[ובהכלמשوبلفك])(?=[\u05d0-\u05ea\u0620-\u06ff]{{3}})"
"""Migration 14's Hebrew and Arabic proclitics (frozen with it; `memory.text._PROCLITIC`)."""

MEMORY_SCOPED_TABLES = (
    "memories",
    "memory_revisions",
    "memory_jobs",
    "memory_scope_leases",
    "memory_watermarks",
    "memory_profile_fields",
    "memory_profile_revisions",
    "procedure_support",
)
"""The memory tables keyed by a scope's key (`scope_key`, in one of its forms), policed by
`rls.SCOPE_ROWS` (`memory_revisions` by `rls.REVISION_ROWS`): a statement on them carries
`{act_as_scope}` of the exact key it reads or `{act_for_all}` in every query level that scans
one (`tests/test_rls_memory.py` checks every statement)."""

INGEST_TABLES = ("memory_ingest_streams", "memory_ingest_events")
"""IngestEvents' streams and their buffered events (migration 16), keyed by the stream's scope
key and policed like `MEMORY_SCOPED_TABLES` (`rls.SCOPE_ROWS`)."""

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
    # 15: row-level security (docs/rls.md §3): every table holding a scope's rows answers only
    # the key a statement's gate named (`db.rls`), in the exact form the statement reads, or
    # every scope for a statement gated `act_for_all` (maintenance, operator listings, the job
    # claim); an app's configurations answer only their app. Not policed, on purpose: opt-outs
    # and tombstones (digests only, looked up by the digest the caller computed), erasures,
    # replies, the tombstone key and the operators' audit (no user content; grants restrict them).
    rls.GATE_FUNCTIONS
    + "".join(
        rls.table_policy(
            table, rls.REVISION_ROWS if table == "memory_revisions" else rls.SCOPE_ROWS
        )
        for table in MEMORY_SCOPED_TABLES
    )
    + rls.table_policy("memory_app_configs", rls.APP_ROWS, rls.ALL_APP_USERS),
    # 16: Memory Bank's IngestEvents (`memory.store.ingest`): a stream per (scope, stream id)
    # with the trigger its requests named and when a time rule next flushes it (`due_time`,
    # read by the worker's sweep), and its buffered events, one per event id (an event sent
    # again is the same event). A flush claims the waiting events (`flush_id`; a claim older
    # than a lease is free again), enqueues their generation, then marks them processed; a
    # processed event keeps its content only while it is among the last `overlap_event_count`
    # (sent again as context), its id always (deduplication). Both are policed by the stream's
    # scope key, as every scope-keyed table (row-level security, migration 15).
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
    """
    + "".join(rls.table_policy(table, rls.SCOPE_ROWS) for table in INGEST_TABLES),
)
