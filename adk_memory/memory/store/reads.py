"""Reads of memories and their revisions: by id, a scope's page, a memory's history, the
quarantine queue, the scopes that have memories, and what regeneration and the trust rule need.

Owns: every statement that reads memories or revisions outside retrieval (`retrieval` ranks),
each filtered by the canonical scope key so no call reaches another scope's rows (the
operator's listings, which name no scope, never return a procedure or a quarantined memory
unless asked). It never writes.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime

import asyncpg

from ...db import rls
from ...db.engine import Database
from ...db.replica import ReadFor
from ..models import Memory, MemoryFilter, MemoryRevision
from ..scope import (
    ALL_SCOPES_GATE,
    PROCEDURE_PREFIX,
    QUARANTINE_PREFIX,
    quarantine_key,
    real_key_sql,
    scope_gate,
    scope_or_all_gate,
)
from .rows import expression_args, filter_args, memory_of, revision_of
from .sql import LIVE, MEMORY_COLUMNS, filter_sql

# Memories of a scope that any revision traces to session $2, each with the facts extracted from
# other sources over its history (what remains to regenerate it from). A claim the trust rule
# blocked (`trust: blocked`) derived nothing: it neither ties a memory to its session nor is
# regenerated.
_DERIVED_FROM = f"""
SELECT m.id::text,
       coalesce(array_agg(DISTINCT f.fact) FILTER (WHERE f.fact IS NOT NULL), '{{{{}}}}')
FROM {{schema}}.memories m
LEFT JOIN {{schema}}.memory_revisions r
       ON r.scope_key = m.scope_key AND r.memory_id = m.id
      AND r.source_session_id IS DISTINCT FROM $2
      AND r.labels->>'trust' IS DISTINCT FROM 'blocked'
LEFT JOIN LATERAL unnest(r.extracted_facts) AS f(fact) ON true
WHERE m.scope_key = $1 AND {scope_gate("$1")}
  AND EXISTS (SELECT 1 FROM {{schema}}.memory_revisions x
               WHERE x.scope_key = $1 AND x.memory_id = m.id AND x.source_session_id = $2
                 AND x.labels->>'trust' IS DISTINCT FROM 'blocked' AND {scope_gate("$1")})
GROUP BY m.id
"""

# Live memories of a scope by id ($1 ids, $2 scope key), for an operation's results.
_GET_MANY = f"""
SELECT {MEMORY_COLUMNS} FROM {{schema}}.memories m
WHERE m.id = ANY($1::uuid[]) AND m.scope_key = $2 AND {LIVE} AND {scope_gate("$2")}
"""

# Quarantined memories, newest first: of one scope ($1), or of every scope ($1 NULL: the
# operator's queue), each with the guard's reason from its latest revision (under the real key:
# the quarantine key's gate answers it, `db.rls.REVISION_ROWS`). $2 limit.
_QUARANTINE_GATE = scope_or_all_gate("$1", QUARANTINE_PREFIX)
_QUARANTINED = f"""
SELECT {MEMORY_COLUMNS}, r.labels::text FROM {{schema}}.memories m
LEFT JOIN LATERAL (
    SELECT labels FROM {{schema}}.memory_revisions x
     WHERE x.scope_key = {real_key_sql("m.scope_key")} AND x.memory_id = m.id
       AND {_QUARANTINE_GATE}
     ORDER BY x.create_time DESC LIMIT 1) r ON true
WHERE starts_with(m.scope_key, '{QUARANTINE_PREFIX}')
  AND ($1::text IS NULL OR m.scope_key = '{QUARANTINE_PREFIX}' || $1)
  AND {_QUARANTINE_GATE}
ORDER BY m.update_time DESC, m.id DESC
LIMIT $2
"""

_GET = f"""
SELECT {MEMORY_COLUMNS} FROM {{schema}}.memories m
WHERE m.id = $1::uuid AND m.scope_key = $2 AND {LIVE} AND {scope_gate("$2")}
"""

# $1 scope key, the exact form read (NULL: every scope's facts, for operators: never a
# procedure, whose text only `procedure_rule` may show, and which exports would turn into
# anyone's memory), $2..$5 and $10/$11 filters, $6/$7 the last row of the previous page
# (update time, id), $8 page size, $9 (with $1 NULL) every scope's quarantined memories too;
# each row marked quarantined by the last column. Newest first. A scope's page with its
# quarantine is two statements, one per key form (`MemoryReads.list_memories`): each level
# reads one form, the one its gate names (`db.rls.SCOPE_ROWS`).
_LIST = f"""
SELECT {MEMORY_COLUMNS}, starts_with(m.scope_key, '{QUARANTINE_PREFIX}')
FROM {{schema}}.memories m
WHERE ($1::text IS NULL OR m.scope_key = $1)
  AND ($1::text IS NOT NULL OR $9::boolean OR NOT starts_with(m.scope_key, '{QUARANTINE_PREFIX}'))
  AND ($1::text IS NOT NULL OR NOT (starts_with(m.scope_key, '{PROCEDURE_PREFIX}')
       OR starts_with(m.scope_key, '{QUARANTINE_PREFIX}{PROCEDURE_PREFIX}')))
  AND {LIVE} {filter_sql(2, 10)}
  AND ($6::timestamptz IS NULL OR (m.update_time, m.id) < ($6::timestamptz, $7::uuid))
  AND {scope_or_all_gate("$1")}
ORDER BY m.update_time DESC, m.id DESC
LIMIT $8
"""

# The scopes that have memories ($1 containing them, e.g. {"app_name": ...}), in scope-key
# order after $2 (the previous page's last key; '' from the start), $3 at most: a loose index
# scan of `memories_by_scope` (one probe per distinct scope, never a pass over the memories).
# Quarantine keys are walked past, not returned: their scopes are the quarantine queue's.
_SCOPES = f"""
WITH RECURSIVE walk(scope_key) AS (
    (SELECT scope_key FROM {{schema}}.memories WHERE scope_key > $2 AND {ALL_SCOPES_GATE}
      ORDER BY scope_key LIMIT 1)
    UNION ALL
    SELECT (SELECT m.scope_key FROM {{schema}}.memories m
             WHERE m.scope_key > w.scope_key AND {ALL_SCOPES_GATE}
             ORDER BY m.scope_key LIMIT 1)
      FROM walk w WHERE w.scope_key IS NOT NULL
)
SELECT scope_key FROM walk
WHERE scope_key IS NOT NULL
  AND CASE WHEN starts_with(scope_key, '{QUARANTINE_PREFIX}')
             OR starts_with(scope_key, '{PROCEDURE_PREFIX}') THEN false
           ELSE scope_key::jsonb @> $1::jsonb END
LIMIT $3
"""

_REVISIONS = f"""
SELECT id::text, memory_id::text, scope::text, action, fact, extracted_facts, labels::text,
       source_type, source_session_id, source_event_ids, create_time, expire_time, confidence
FROM {{schema}}.memory_revisions
WHERE scope_key = $1 AND memory_id = $2::uuid AND (expire_time IS NULL OR expire_time > now())
  AND {scope_gate("$1")}
ORDER BY create_time, id
"""

# What the trust rule needs of a scope's ($1) memories ($2 ids): per memory, the sources (a
# session id, or for a write without one, its revision's id: a source of its own) that wrote
# or corroborated it, and those whose change to it was blocked (revisions labelled
# `trust: blocked`).
_TRUST_HISTORY = f"""
SELECT r.memory_id::text,
       array_agg(DISTINCT coalesce(r.source_session_id, r.id::text))
           FILTER (WHERE r.labels->>'trust' IS DISTINCT FROM 'blocked'),
       array_agg(DISTINCT coalesce(r.source_session_id, r.id::text))
           FILTER (WHERE r.labels->>'trust' = 'blocked')
FROM {{schema}}.memory_revisions r
WHERE r.scope_key = $1 AND r.memory_id = ANY($2::uuid[]) AND {scope_gate("$1")}
GROUP BY r.memory_id
"""


# The facts of the latest revisions of a scope's ($1) memories ($2 ids), at most $3 each, newest
# first: what consolidation shows of each candidate's history
# (`ConsolidationConfig.revisions_per_candidate_count`). Expired revisions are left out.
_REVISION_FACTS = f"""
SELECT memory_id::text, fact FROM (
    SELECT memory_id, fact, create_time, id,
           row_number() OVER (PARTITION BY memory_id ORDER BY create_time DESC, id DESC) AS n
    FROM {{schema}}.memory_revisions
    WHERE scope_key = $1 AND memory_id = ANY($2::uuid[]) AND fact IS NOT NULL
      AND (expire_time IS NULL OR expire_time > now()) AND {scope_gate("$1")}
) r
WHERE n <= $3
ORDER BY memory_id, n
"""


class MemoryReads:
    """Runs the read statements against one `Database` (and its schema)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        schema = db.schema
        self._get_many = rls.render(_GET_MANY, schema)
        self._quarantined = rls.render(_QUARANTINED, schema)
        self._get = rls.render(_GET, schema)
        self._list = rls.render(_LIST, schema)
        self._revisions = rls.render(_REVISIONS, schema)
        self._scopes = rls.render(_SCOPES, schema)
        self._derived_from = rls.render(_DERIVED_FROM, schema)
        self._trust_history = rls.render(_TRUST_HISTORY, schema)
        self._revision_facts = rls.render(_REVISION_FACTS, schema)

    async def get(self, memory_id: str, scope_key: str) -> Memory | None:
        """One live memory of the scope."""
        row = await self._db.run(lambda conn: conn.fetchrow(self._get, memory_id, scope_key))
        return None if row is None else memory_of(row)

    async def get_many(self, memory_ids: Sequence[str], scope_key: str) -> dict[str, Memory]:
        """The live memories of the scope among these ids, by id."""
        if not memory_ids:
            return {}
        ids = list(memory_ids)
        rows = await self._db.run(lambda conn: conn.fetch(self._get_many, ids, scope_key))
        return {memory.id: memory for memory in map(memory_of, rows)}

    async def list_memories(
        self,
        scope_key: str | None,
        flt: MemoryFilter | None,
        after: tuple[datetime, str] | None,
        limit: int,
        *,
        replica: bool | ReadFor = False,
        quarantined: bool = False,
    ) -> list[Memory]:
        """Live memories newest first, starting after `after` (the previous page's last row);
        on the read replica if `replica` (`Database.run`), as for `revisions` and `retrieve`.
        `quarantined`: the quarantined ones too, marked `quarantined`."""
        rest = (
            *filter_args(flt),
            *(after or (None, None)),
            limit,
            quarantined,
            *expression_args(flt),
        )
        keys = [scope_key]
        if scope_key is not None and quarantined:  # one statement per key form, merged
            keys.append(quarantine_key(scope_key))

        async def page(conn: asyncpg.Connection) -> list[asyncpg.Record]:
            return [r for key in keys for r in await conn.fetch(self._list, key, *rest)]

        rows = await self._db.run(page, replica=replica)
        if len(keys) > 1:
            # newest first, as the statement orders: (update time, id)
            rows.sort(key=lambda r: (r[12], uuid.UUID(r[0])), reverse=True)
        return [
            memory_of(r).model_copy(update={"quarantined": True}) if r[15] else memory_of(r)
            for r in rows[:limit]
        ]

    async def revisions(
        self, memory_id: str, scope_key: str, *, replica: bool | ReadFor = False
    ) -> list[MemoryRevision]:
        """A memory's revisions, oldest first (also after the memory was deleted)."""
        rows = await self._db.run(
            lambda conn: conn.fetch(self._revisions, scope_key, memory_id), replica=replica
        )
        return [revision_of(r) for r in rows]

    async def quarantined(
        self, scope_key: str | None, limit: int
    ) -> list[tuple[Memory, dict[str, str]]]:
        """Quarantined memories (of one scope, or of all), newest first, each with the labels
        of its latest revision (the guard's reason)."""
        rows = await self._db.run(lambda conn: conn.fetch(self._quarantined, scope_key, limit))
        return [(memory_of(r), json.loads(r[15] or "{}")) for r in rows]

    async def scopes(self, containing: dict[str, str], after: str, limit: int) -> list[str]:
        """The keys of the scopes with memories that contain `containing`, in key order after
        `after` ('' from the start), at most `limit` (an operator's listing)."""
        args = (json.dumps(containing), after, limit)
        rows = await self._db.run(lambda conn: conn.fetch(self._scopes, *args))
        return [row[0] for row in rows]

    async def derived_from(self, scope_key: str, session_id: str) -> list[tuple[str, list[str]]]:
        """(memory id, facts extracted from its other sources) for each memory of the scope
        derived, even in part, from the session."""
        rows = await self._db.run(
            lambda conn: conn.fetch(self._derived_from, scope_key, session_id)
        )
        return [(r[0], list(r[1])) for r in rows]

    async def revision_facts(
        self, scope_key: str, memory_ids: Sequence[str], per_memory: int
    ) -> dict[str, list[str]]:
        """The facts of the latest `per_memory` revisions of each of the scope's memories among
        `memory_ids`, newest first (one query; none asked: no query)."""
        if not memory_ids or per_memory < 1:
            return {}
        args = (scope_key, list(memory_ids), per_memory)
        rows = await self._db.run(lambda conn: conn.fetch(self._revision_facts, *args))
        found: dict[str, list[str]] = {}
        for memory_id, fact in rows:
            found.setdefault(memory_id, []).append(fact)
        return found

    async def trust_history(
        self, scope_key: str, memory_ids: Sequence[str]
    ) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
        """For each of the scope's memories among `memory_ids` (one query): the sources that
        wrote or corroborated it, and those whose change to it the trust rule blocked."""
        if not memory_ids:
            return {}
        ids = list(memory_ids)
        rows = await self._db.run(lambda conn: conn.fetch(self._trust_history, scope_key, ids))
        return {r[0]: (frozenset(r[1] or ()), frozenset(r[2] or ())) for r in rows}
