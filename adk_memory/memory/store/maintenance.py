"""Upkeep of the memory tables: session watermarks, forgetting a scope (purge) or a user
(erasure, with its recorded counts), re-indexing the full text, the TTL sweep and pruning by
confidence.

Owns: the watermark statements (a generation moves its watermark through `SET_WATERMARK`, in
its own transaction: `memories`), and every bulk deletion, each recorded so its replay after a
lost reply counts what its first attempt deleted (`db.replies`), and each expiring or pruned
memory deleted with a labelled DELETED revision so its history says why. It never decides when
to run (the service and the worker do) and never touches another table.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import asyncpg

from ...db import rls
from ...db.engine import Database
from ...db.replies import FIRST_ATTEMPT, recorded
from ..scope import ALL_SCOPES_GATE, QUARANTINE_PREFIX, scope_gate
from ..text import SearchText
from .sql import effective_confidence, fts, revision_of_m

_WATERMARK = f"""
SELECT event_id, event_time FROM {{schema}}.memory_watermarks
WHERE scope_key = $1 AND session_id = $2 AND {scope_gate("$1")}
"""

# One row per session id ($2) of one scope ($1) asked about, in the order asked: its watermark
# time, or NULL. One round trip for a whole page of one scope's sessions.
_PROCESSED_UNTIL = f"""
SELECT w.event_time
FROM unnest($2::text[]) WITH ORDINALITY AS s(session_id, n)
LEFT JOIN {{schema}}.memory_watermarks w ON w.scope_key = $1 AND w.session_id = s.session_id
WHERE {scope_gate("$1")}
ORDER BY s.n
"""

# A generation moves its session's watermark with this, in its own transaction
# (`memories.MemoryWrites.apply_generation`).
SET_WATERMARK = f"""
INSERT INTO {{schema}}.memory_watermarks (scope_key, session_id, event_id, event_time)
SELECT $1, $2, $3, $4::float8 WHERE {scope_gate("$1")}
ON CONFLICT (scope_key, session_id) DO UPDATE
    SET event_id = EXCLUDED.event_id, event_time = EXCLUDED.event_time, update_time = now()
"""


def _streams_deleted(where: str, gate: str) -> str:
    """CTEs `i` and `s`: the IngestEvents buffers (`store.ingest`) of the scopes `where`
    selects by key, deleted (counted with the watermarks: a stream's position is its kind),
    each level carrying `gate` (row-level security)."""
    return f"""i AS (DELETE FROM {{schema}}.memory_ingest_events
       WHERE {where} AND {FIRST_ATTEMPT} AND {gate} RETURNING 1),
s AS (DELETE FROM {{schema}}.memory_ingest_streams
       WHERE {where} AND {FIRST_ATTEMPT} AND {gate} RETURNING 1)"""


# A scope, forgotten: its memories, revisions, watermarks and event streams, counted under
# request id $2 (see `db.replies`) with $3, the quarantined memories `_PURGE_QUARANTINE`
# deleted just before in the same transaction (a key form of its own: one statement each,
# `db.rls.SCOPE_ROWS`). Gated by the scope, not for every scope: a purge names one, so a
# mistake in it cannot reach another.
_PURGE_QUARANTINE = f"""
WITH d AS (DELETE FROM {{schema}}.memories WHERE scope_key = $1 AND {scope_gate("$1")}
           RETURNING 1)
SELECT count(*) FROM d
"""
_PURGE = recorded(
    "{schema}.memory_replies",
    "$2",
    f"""
m AS (DELETE FROM {{schema}}.memories
       WHERE scope_key = $1 AND {FIRST_ATTEMPT} AND {scope_gate("$1")}
      RETURNING 1),
r AS (DELETE FROM {{schema}}.memory_revisions
       WHERE scope_key = $1 AND {FIRST_ATTEMPT} AND {scope_gate("$1")} RETURNING 1),
w AS (DELETE FROM {{schema}}.memory_watermarks
       WHERE scope_key = $1 AND {FIRST_ATTEMPT} AND {scope_gate("$1")} RETURNING 1),
{_streams_deleted("scope_key = $1", scope_gate("$1"))}""",
    [
        "(SELECT count(*) FROM m) + (SELECT count(*) FROM r) + (SELECT count(*) FROM w)"
        " + (SELECT count(*) FROM i) + (SELECT count(*) FROM s) + $3"
    ],
)

# Every scope containing $1 (e.g. {{"app_name": A, "user_id": U}}), forgotten: counts of
# memories, revisions and watermarks deleted. Scopes are matched on their JSON (a scan: erasure
# is rare, and no index on every memory's scope is worth its cost on every write). Counted under
# request id $2 (see `db.replies`).
_ERASE = recorded(
    "{schema}.memory_replies",
    "$2",
    f"""
m AS (DELETE FROM {{schema}}.memories
       WHERE scope @> $1::jsonb AND {FIRST_ATTEMPT} AND {ALL_SCOPES_GATE} RETURNING 1),
r AS (DELETE FROM {{schema}}.memory_revisions
       WHERE scope @> $1::jsonb AND {FIRST_ATTEMPT} AND {ALL_SCOPES_GATE} RETURNING 1),
w AS (DELETE FROM {{schema}}.memory_watermarks
       WHERE scope_key::jsonb @> $1::jsonb AND {FIRST_ATTEMPT} AND {ALL_SCOPES_GATE}
      RETURNING 1),
{_streams_deleted("scope_key::jsonb @> $1::jsonb", ALL_SCOPES_GATE)}""",
    [
        "(SELECT count(*) FROM m)",
        "(SELECT count(*) FROM r)",
        "(SELECT count(*) FROM w) + (SELECT count(*) FROM i) + (SELECT count(*) FROM s)",
    ],
)

# Re-indexing the full text (`MemoryStore.reindex_text`): the next batch of memories after an id
# ($1, NULL: from the start; $2 rows), and the new tsvectors for a batch ($1 configs, $2 ids,
# $3 facts, $4 words, $5 bigrams). A memory whose fact changed since it was read is left alone:
# the write that changed it indexed it. Neither statement touches update_time (recency) or
# writes a revision: the index is derived from the fact, not part of the memory.
_REINDEX_BATCH = f"""
SELECT m.id::text, m.fact FROM {{schema}}.memories m
 WHERE ($1::uuid IS NULL OR m.id > $1::uuid) AND {ALL_SCOPES_GATE}
 ORDER BY m.id
 LIMIT $2
"""

_REINDEX = f"""
UPDATE {{schema}}.memories m
   SET fts = {fts("u.config", words="u.words", grams="u.grams")}
  FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[])
       AS u(config, id, fact, words, grams)
 WHERE m.id = u.id AND m.fact = u.fact AND {ALL_SCOPES_GATE}
"""

# Expired memories are deleted with a DELETED revision (labelled), so their history says why.


def _deleting_labelled(where: str, reason: str, limit: str, ttl: str) -> str:
    """CTEs `m` and `r`: up to `limit` memories matching `where` (over `m`) deleted, each with a
    DELETED revision labelled with `reason` (kept `ttl` seconds); for every scope (maintenance)."""
    revision = revision_of_m(
        "DELETED",
        revision_id="gen_random_uuid()",
        extracted="'{{}}'::text[]",
        labels=f"""'{{{{"reason": "{reason}"}}}}'::jsonb""",
        ttl=ttl,
        gate=ALL_SCOPES_GATE,
    )
    return f"""
m AS (
    DELETE FROM {{schema}}.memories m WHERE {ALL_SCOPES_GATE} AND m.ctid = ANY(ARRAY(
        SELECT m.ctid FROM {{schema}}.memories m WHERE {where} AND {ALL_SCOPES_GATE}
         LIMIT {limit}))
    RETURNING m.*
), r AS (
{revision}
)"""


def _delete_labelled(where: str, reason: str, limit: str, ttl: str) -> str:
    """SQL running `_deleting_labelled`, returning how many memories went."""
    return f"WITH {_deleting_labelled(where, reason, limit, ttl)}\nSELECT count(*) FROM m\n"


_SWEEP_MEMORIES = _delete_labelled("m.expire_time <= now()", "expired", "$1", "$2")

# Expired revisions go, except that an expired DELETED revision stays as a tombstone with its
# content cleared: it is what keeps a deleted memory from being re-created from its source.
_SWEEP_REVISIONS = f"""
WITH gone AS (
    DELETE FROM {{schema}}.memory_revisions WHERE {ALL_SCOPES_GATE} AND ctid = ANY(ARRAY(
        SELECT ctid FROM {{schema}}.memory_revisions
         WHERE expire_time <= now() AND action <> 'DELETED' AND {ALL_SCOPES_GATE} LIMIT $1))
    RETURNING 1
), emptied AS (
    UPDATE {{schema}}.memory_revisions
       SET fact = NULL, extracted_facts = '{{{{}}}}', labels = '{{{{}}}}', expire_time = NULL
     WHERE {ALL_SCOPES_GATE} AND ctid = ANY(ARRAY(
        SELECT ctid FROM {{schema}}.memory_revisions
         WHERE expire_time <= now() AND action = 'DELETED' AND {ALL_SCOPES_GATE} LIMIT $1))
    RETURNING 1
)
SELECT (SELECT count(*) FROM gone) + (SELECT count(*) FROM emptied)
"""

# Pruning (`MemoryStore.prune`): up to $5 live memories of the scopes containing $1 (an app, or
# an app's user) whose effective confidence (half-life $3 seconds, NULL: none) is below $4 and
# that were not updated or corroborated for $2 seconds, deleted with a labelled DELETED revision
# ($6 revision ttl). A memory of unknown confidence is never pruned, nor a quarantined one (the
# operator's). Scopes are matched on their JSON, as erasure does: pruning is rare maintenance.
# Counted under request id $7 (`db.replies`): a batch replayed after a lost reply returns what
# its first attempt deleted, not 0.
_PRUNE = recorded(
    "{schema}.memory_replies",
    "$7",
    _deleting_labelled(
        f"""m.scope @> $1::jsonb AND NOT starts_with(m.scope_key, '{QUARANTINE_PREFIX}')
           AND m.confidence IS NOT NULL
           AND m.update_time < now() - make_interval(secs => $2::float8)
           AND {effective_confidence("$3")} < $4::float8 AND {FIRST_ATTEMPT}""",
        "low_confidence",
        "$5",
        "$6",
    ),
    ["(SELECT count(*) FROM m)"],
)


async def _fetch(statement: str, args: tuple[object, ...], conn: asyncpg.Connection) -> list[Any]:
    return await conn.fetch(statement, *args)


class Maintenance:
    """Runs the watermark and upkeep statements against one `Database` (and its schema)."""

    def __init__(self, db: Database, searchable: Callable[[str], SearchText]) -> None:
        self._db = db
        self._searchable = searchable
        schema = db.schema
        self._watermark = rls.render(_WATERMARK, schema)
        self._processed_until = rls.render(_PROCESSED_UNTIL, schema)
        self._purge = rls.render(_PURGE, schema)
        self._purge_quarantine = rls.render(_PURGE_QUARANTINE, schema)
        self._erase = rls.render(_ERASE, schema)
        self._reindex_batch = rls.render(_REINDEX_BATCH, schema)
        self._reindex = rls.render(_REINDEX, schema)
        self._sweep_memories = rls.render(_SWEEP_MEMORIES, schema)
        self._sweep_revisions = rls.render(_SWEEP_REVISIONS, schema)
        self._prune = rls.render(_PRUNE, schema)

    async def watermark(self, scope_key: str, session_id: str) -> tuple[str, float] | None:
        """The last event of a session already turned into memories of this scope."""
        row = await self._db.run(lambda conn: conn.fetchrow(self._watermark, scope_key, session_id))
        return None if row is None else (row[0], row[1])

    async def processed_until(self, sources: Sequence[tuple[str, str]]) -> list[float | None]:
        """For each (scope key, session id): the timestamp of the session's last event already
        turned into memories of that scope, or None; in the order given, in one query per scope
        (each gated by its scope: row-level security)."""
        by_scope: dict[str, list[int]] = {}
        for index, (scope_key, _) in enumerate(sources):
            by_scope.setdefault(scope_key, []).append(index)
        found: list[float | None] = [None] * len(sources)
        for scope_key, indexes in by_scope.items():  # one statement per scope: each gated by it
            args = (scope_key, [sources[i][1] for i in indexes])
            rows = await self._db.run(partial(_fetch, self._processed_until, args))
            for index, row in zip(indexes, rows, strict=True):
                found[index] = row[0]
        return found

    async def purge(self, scope_key: str) -> int:
        """Delete every memory (quarantined ones too), revision and watermark of the scope; how
        many rows went (its replay after a lost reply counts the same)."""
        request_id, quarantine = uuid.uuid4(), QUARANTINE_PREFIX + scope_key

        async def purged(conn: asyncpg.Connection) -> int:
            async with conn.transaction():
                held = await conn.fetchval(self._purge_quarantine, quarantine)
                return int((await conn.fetchval(self._purge, scope_key, request_id, held))[0])

        return await self._db.run(purged)

    async def erase(
        self, containing: dict[str, str], request_id: uuid.UUID | None = None
    ) -> tuple[int, int, int]:
        """Delete the memories, revisions and watermarks of every scope containing
        `containing`; (memories, revisions, watermarks) deleted (the same again for a replay,
        or with the same `request_id`)."""
        args = (json.dumps(containing), request_id or uuid.uuid4())
        counts = await self._db.run(lambda conn: conn.fetchval(self._erase, *args))
        return int(counts[0]), int(counts[1]), int(counts[2])

    async def reindex_text(self, after: str | None, batch_size: int) -> list[str]:
        """Index the full text of the next `batch_size` memories (every scope, quarantined ones
        too) after the id `after` (None: from the first) the way new writes are (normalised,
        with bigrams, under this store's configuration); their ids in order, none when no memory
        was left. Safe to replay: indexing a memory again gives the same vector."""
        rows = await self._db.run(lambda conn: conn.fetch(self._reindex_batch, after, batch_size))
        if not rows:
            return []
        searchable = [self._searchable(row[1]) for row in rows]
        args = (
            [s.config for s in searchable],
            [row[0] for row in rows],
            [row[1] for row in rows],
            [s.words for s in searchable],
            [s.grams for s in searchable],
        )
        await self._db.run(lambda conn: conn.execute(self._reindex, *args))
        return list(args[1])

    async def sweep(self, batch_size: int, revision_ttl: float | None) -> tuple[int, int]:
        """Delete up to `batch_size` expired memories and expired revisions; (memories, revs)."""
        memories = await self._db.run(
            lambda conn: conn.fetchval(self._sweep_memories, batch_size, revision_ttl)
        )
        revisions = await self._db.run(
            lambda conn: conn.fetchval(self._sweep_revisions, batch_size)
        )
        return int(memories), int(revisions)

    async def prune(
        self,
        containing: dict[str, str],
        *,
        threshold: float,
        min_age_seconds: float,
        half_life_seconds: float | None,
        batch_size: int,
        revision_ttl: float | None,
    ) -> int:
        """Delete up to `batch_size` live memories of the scopes containing `containing` whose
        effective confidence is below `threshold` and that were not updated or corroborated for
        `min_age_seconds`, each with a DELETED revision labelled `reason: low_confidence`; how
        many went. Safe to run again: it deletes only what still qualifies; a replay after a
        lost reply returns the first attempt's count."""
        args = (
            json.dumps(containing),
            min_age_seconds,
            half_life_seconds,
            threshold,
            batch_size,
            revision_ttl,
            uuid.uuid4(),
        )
        counts = await self._db.run(lambda conn: conn.fetchval(self._prune, *args))
        return int(counts[0])
