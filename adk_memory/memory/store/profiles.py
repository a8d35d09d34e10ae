"""SQL for structured profiles: their fields, each field's revisions, and forgetting them.

Owns: every statement on `memory_profile_fields` and `memory_profile_revisions`, each filtered
by the canonical scope key (or, for an erasure, by scope containment), so no call reaches
another scope's profile; each field change written together with its revision in one
statement. A profile is read with one equality on the primary key's prefix: no search. It never
decides what to write (generation validates every value against its schema first), never calls
a model, and never reads the job queue's table: generation's writes (`apply`) run on the
connection of the job's own transaction (`JobQueue.finish`, which checks the job is still its).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from ..._json import dump_json
from ...db import rls
from ...db.engine import Database
from ...db.replies import FIRST_ATTEMPT, recorded
from ..models import FieldChange, MemoryAction, SourceType
from ..scope import ALL_SCOPES_GATE, scope_gate
from .sql import expiry as _expiry

_LIVE = "(expire_time IS NULL OR expire_time > now())"

# The live fields of a scope's profiles ($1 scope key), grouped by schema.
_PROFILE = f"""
SELECT schema_id, field, value::text FROM {{schema}}.memory_profile_fields
WHERE scope_key = $1 AND {_LIVE} AND {scope_gate("$1")}
ORDER BY schema_id, field
"""

# A field's history, oldest first: $1 scope key, $2 schema id, $3 field.
_REVISIONS = f"""
SELECT id::text, action, value::text, labels::text, source_type, source_session_id, create_time
FROM {{schema}}.memory_profile_revisions
WHERE scope_key = $1 AND schema_id = $2 AND field = $3
  AND (expire_time IS NULL OR expire_time > now()) AND {scope_gate("$1")}
ORDER BY create_time, id
"""

# One field set, with its revision: $1 scope key, $2 scope, $3 schema id, $4 field, $5 value,
# $6 source type, $7 source session, $8 ttl seconds of a new field (NULL: never expires), $9
# revision id, $10 revision labels, $11 revision ttl seconds, $12 ttl seconds of an updated
# field. CREATED when the row is new (`xmax = 0` on the row an upsert inserted), else UPDATED.
_SET = f"""
WITH f AS (
    INSERT INTO {{schema}}.memory_profile_fields AS t
        (scope_key, scope, schema_id, field, value, source_type, source_session_id, expire_time)
    SELECT $1, $2::jsonb, $3, $4, $5::jsonb, $6, $7, {_expiry("$8")} WHERE {scope_gate("$1")}
    ON CONFLICT (scope_key, schema_id, field) DO UPDATE
        SET value = EXCLUDED.value, source_type = EXCLUDED.source_type,
            source_session_id = EXCLUDED.source_session_id, update_time = now(),
            expire_time = {_expiry("$12")}
    RETURNING (xmax = 0) AS created
)
INSERT INTO {{schema}}.memory_profile_revisions
    (id, scope_key, scope, schema_id, field, action, value, labels, source_type,
     source_session_id, expire_time)
SELECT $9::uuid, $1, $2::jsonb, $3, $4, CASE WHEN created THEN 'CREATED' ELSE 'UPDATED' END,
       $5::jsonb, $10::jsonb, $6, $7, {_expiry("$11")}
FROM f
WHERE {scope_gate("$1")}
"""

# One field cleared, with a DELETED revision (same parameters as `_SET`, less value and ttl).
_CLEAR = f"""
WITH f AS (
    DELETE FROM {{schema}}.memory_profile_fields
    WHERE scope_key = $1 AND schema_id = $2 AND field = $3 AND {scope_gate("$1")}
    RETURNING scope
)
INSERT INTO {{schema}}.memory_profile_revisions
    (id, scope_key, scope, schema_id, field, action, labels, source_type, source_session_id,
     expire_time)
SELECT $6::uuid, $1, f.scope, $2, $3, 'DELETED', $7::jsonb, $4, $5, {_expiry("$8")}
FROM f
WHERE {scope_gate("$1")}
"""

# A scope's profiles, forgotten (fields and revisions), counted under request id $2.
_PURGE = recorded(
    "{schema}.memory_replies",
    "$2",
    f"""
f AS (DELETE FROM {{schema}}.memory_profile_fields
       WHERE scope_key = $1 AND {FIRST_ATTEMPT} AND {scope_gate("$1")} RETURNING 1),
r AS (DELETE FROM {{schema}}.memory_profile_revisions
       WHERE scope_key = $1 AND {FIRST_ATTEMPT} AND {scope_gate("$1")} RETURNING 1)""",
    ["(SELECT count(*) FROM f)", "(SELECT count(*) FROM r)"],
)

# Every scope containing $1, forgotten: (fields, revisions), counted under request id $2. A scan
# on the scope's JSON, as the memories' erasure (rare; no index is worth its cost per write).
_ERASE = recorded(
    "{schema}.memory_replies",
    "$2",
    f"""
f AS (DELETE FROM {{schema}}.memory_profile_fields
       WHERE scope @> $1::jsonb AND {FIRST_ATTEMPT} AND {ALL_SCOPES_GATE} RETURNING 1),
r AS (DELETE FROM {{schema}}.memory_profile_revisions
       WHERE scope @> $1::jsonb AND {FIRST_ATTEMPT} AND {ALL_SCOPES_GATE} RETURNING 1)""",
    ["(SELECT count(*) FROM f)", "(SELECT count(*) FROM r)"],
)

# Up to $1 expired fields deleted, each with a DELETED revision labelled "expired" ($2 revision
# ttl seconds), so the field's history says why it went.
_SWEEP_FIELDS = f"""
WITH f AS (
    DELETE FROM {{schema}}.memory_profile_fields WHERE {ALL_SCOPES_GATE} AND ctid = ANY(ARRAY(
        SELECT ctid FROM {{schema}}.memory_profile_fields
         WHERE expire_time <= now() AND {ALL_SCOPES_GATE} LIMIT $1))
    RETURNING *
), r AS (
    INSERT INTO {{schema}}.memory_profile_revisions
        (id, scope_key, scope, schema_id, field, action, labels, source_type,
         source_session_id, expire_time)
    SELECT gen_random_uuid(), scope_key, scope, schema_id, field, 'DELETED',
           '{{{{"reason": "expired"}}}}'::jsonb, source_type, source_session_id, {_expiry("$2")}
    FROM f
    WHERE {ALL_SCOPES_GATE}
)
SELECT count(*) FROM f
"""

_SWEEP_REVISIONS = f"""
WITH gone AS (
    DELETE FROM {{schema}}.memory_profile_revisions WHERE {ALL_SCOPES_GATE} AND ctid = ANY(ARRAY(
        SELECT ctid FROM {{schema}}.memory_profile_revisions
         WHERE expire_time <= now() AND {ALL_SCOPES_GATE} LIMIT $1))
    RETURNING 1
)
SELECT count(*) FROM gone
"""


@dataclass(frozen=True)
class FieldRevision:
    """One stored change of a profile field."""

    id: str
    action: MemoryAction
    value: Any
    labels: dict[str, str]
    source_type: SourceType | None
    source_session_id: str | None
    create_time: datetime


class ProfileStore:
    """Runs the profile statements against one `Database` (and its schema)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        schema = db.schema
        self._profile = rls.render(_PROFILE, schema)
        self._revisions = rls.render(_REVISIONS, schema)
        self._set = rls.render(_SET, schema)
        self._clear = rls.render(_CLEAR, schema)
        self._purge = rls.render(_PURGE, schema)
        self._erase = rls.render(_ERASE, schema)
        self._sweep_fields = rls.render(_SWEEP_FIELDS, schema)
        self._sweep_revisions = rls.render(_SWEEP_REVISIONS, schema)

    async def profiles(self, scope_key: str) -> dict[str, dict[str, Any]]:
        """The scope's live profiles: schema id -> {field: value}, schemas and fields sorted."""
        rows = await self._db.run(lambda conn: conn.fetch(self._profile, scope_key))
        profiles: dict[str, dict[str, Any]] = {}
        for schema_id, field, value in rows:
            profiles.setdefault(schema_id, {})[field] = json.loads(value)
        return profiles

    async def set_fields(
        self,
        scope_key: str,
        scope: dict[str, str],
        schema_id: str,
        values: dict[str, Any],
        *,
        labels: dict[str, str],
        revision_ttl: float | None,
    ) -> int:
        """Set a profile's fields to `values` from outside generation (an import's), each one
        whose live value differs, with a revision each, in one transaction (`apply`'s
        statements, source `bootstrapped`, never expiring); how many changed. Its replay after
        a lost reply finds them set and changes none (it returns 0)."""

        async def write(conn: asyncpg.Connection) -> int:
            async with conn.transaction():
                rows = await conn.fetch(self._profile, scope_key)
                live = {field: json.loads(v) for s, field, v in rows if s == schema_id}
                changes = [
                    FieldChange(schema_id, field, value)
                    for field, value in values.items()
                    if field not in live or live[field] != value
                ]
                await self.apply(
                    conn,
                    scope_key=scope_key,
                    scope=scope,
                    changes=changes,
                    source=(SourceType.BOOTSTRAPPED, None),
                    ttl_seconds=(None, None),
                    labels=labels,
                    revision_ttl=revision_ttl,
                )
                return len(changes)

        return await self._db.run(write)

    async def revisions(self, scope_key: str, schema_id: str, field: str) -> list[FieldRevision]:
        """A field's history, oldest first (still there after the field was cleared)."""
        rows = await self._db.run(
            lambda conn: conn.fetch(self._revisions, scope_key, schema_id, field)
        )
        return [
            FieldRevision(
                id=row[0],
                action=MemoryAction(row[1]),
                value=None if row[2] is None else json.loads(row[2]),
                labels=json.loads(row[3]),
                source_type=SourceType(row[4]) if row[4] else None,
                source_session_id=row[5],
                create_time=row[6],
            )
            for row in rows
        ]

    async def apply(
        self,
        conn: asyncpg.Connection,
        *,
        scope_key: str,
        scope: dict[str, str],
        changes: list[FieldChange],
        source: tuple[SourceType, str | None],
        ttl_seconds: tuple[float | None, float | None],
        labels: dict[str, str],
        revision_ttl: float | None,
    ) -> None:
        """Write `changes` on `conn`, inside the caller's transaction (a generation's, which
        already checked that its job is still its own). `source`: (source type, session id);
        `ttl_seconds`: (for a new field, for an updated one). A replay of a committed job finds
        the job done and never gets here, so the random revision ids are safe."""
        scope_json = dump_json(scope)
        labels_json = json.dumps(labels)
        source_type, session_id = source
        created_ttl, updated_ttl = ttl_seconds
        for change in changes:
            revision_id = uuid.uuid4()
            if change.clear:
                await conn.execute(
                    self._clear,
                    scope_key,
                    change.schema_id,
                    change.field,
                    source_type.value,
                    session_id,
                    revision_id,
                    labels_json,
                    revision_ttl,
                )
                continue
            await conn.execute(
                self._set,
                scope_key,
                scope_json,
                change.schema_id,
                change.field,
                dump_json(change.value),
                source_type.value,
                session_id,
                created_ttl,
                revision_id,
                labels_json,
                revision_ttl,
                updated_ttl,
            )

    async def purge(self, scope_key: str) -> tuple[int, int]:
        """Delete the scope's profile fields and their revisions; (fields, revisions) deleted
        (the same again for a replay after a lost reply)."""
        request_id = uuid.uuid4()
        counts = await self._db.run(lambda conn: conn.fetchval(self._purge, scope_key, request_id))
        return int(counts[0]), int(counts[1])

    async def erase(
        self, containing: dict[str, str], request_id: uuid.UUID | None = None
    ) -> tuple[int, int]:
        """Delete the profile fields and revisions of every scope containing `containing`;
        (fields, revisions) deleted (the same again for a replay, or with the same
        `request_id`)."""
        args = (json.dumps(containing), request_id or uuid.uuid4())
        counts = await self._db.run(lambda conn: conn.fetchval(self._erase, *args))
        return int(counts[0]), int(counts[1])

    async def sweep(self, batch_size: int, revision_ttl: float | None) -> tuple[int, int]:
        """Delete up to `batch_size` expired fields (with DELETED revisions) and expired
        revisions; (fields, revisions)."""
        fields = await self._db.run(
            lambda conn: conn.fetchval(self._sweep_fields, batch_size, revision_ttl)
        )
        revisions = await self._db.run(
            lambda conn: conn.fetchval(self._sweep_revisions, batch_size)
        )
        return int(fields), int(revisions)
