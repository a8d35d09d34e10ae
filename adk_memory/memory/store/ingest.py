"""The statements of Memory Bank's IngestEvents: event streams and their buffered events.

Owns: `memory_ingest_streams` (one row per scope key and stream id: the trigger its requests
named, the options its generation takes, when its window opened and its last event came, when a
time rule next flushes it) and `memory_ingest_events` (the buffered events, one per event id:
an event sent again is not buffered twice). A flush is three steps the service orders: claim
the waiting events under a flush id (a claim older than `CLAIM_LEASE` is free again, so events
a crashed flush claimed are never lost), enqueue their generation, mark them processed. Every
statement is keyed by the scope key and safe to replay. It never decides when a stream flushes
(`service.ingestion` does) and never enqueues a job.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from ..._json import dump_json
from ...db import rls
from ...db.engine import Database
from ..scope import ALL_SCOPES_GATE, scope_gate

CLAIM_LEASE = timedelta(minutes=10)
"""How long a flush's claim on its events holds before another flush may take them."""

_GATE = scope_gate("$1")
"""Every statement but the sweep's acts for one stream's scope ($1): each query level that
reads a stream or its events carries its gate (row-level security, `db.rls`)."""

# The stream, created or touched by a request: $4 the trigger the request named (written only
# when $5: a request without one keeps the stream's), $6 its generation options, $7 now (the
# last event's time when $8: events came).
TOUCH_STREAM = f"""
INSERT INTO {{schema}}.memory_ingest_streams AS s
       (scope_key, stream_id, scope, rule, options, window_start, last_event)
SELECT $1, $2, $3::jsonb, $4::jsonb, $6::json, $7, $7 WHERE {_GATE}
ON CONFLICT (scope_key, stream_id) DO UPDATE
   SET rule = CASE WHEN $5 THEN EXCLUDED.rule ELSE s.rule END,
       options = EXCLUDED.options,
       last_event = CASE WHEN $8 THEN greatest(s.last_event, $7) ELSE s.last_event END
RETURNING rule, window_start, last_event
"""

# The request's events ($3 ids, $4 times, $5 contents), each buffered once; then how many of
# this request ($6, its id) are buffered, and how many wait.
ADD_EVENTS = f"""
INSERT INTO {{schema}}.memory_ingest_events
       (scope_key, stream_id, event_id, event_time, content, ingest_id)
SELECT $1, $2, e.id, e.at, e.content, $6
  FROM unnest($3::text[], $4::timestamptz[], $5::json[]) AS e(id, at, content)
 WHERE {_GATE}
ON CONFLICT (scope_key, stream_id, event_id) DO NOTHING
"""

# Each count reads only what it counts (the request's ids by primary key, looked up one by one
# (LATERAL: no plan reads the stream); the waiting events by the `processed` index): a stream keeps
# every event id it ever had.
COUNT_EVENTS = f"""
SELECT (SELECT count(*) FROM (SELECT DISTINCT unnest($4::text[])) AS i(id),
               LATERAL (SELECT FROM {{schema}}.memory_ingest_events e
                         WHERE e.scope_key = $1 AND e.stream_id = $2 AND e.event_id = i.id
                           AND e.ingest_id = $3 AND {_GATE}
                         LIMIT 1) hit) AS added,
       (SELECT count(*) FROM {{schema}}.memory_ingest_events
         WHERE scope_key = $1 AND stream_id = $2 AND NOT processed AND {_GATE}) AS waiting,
       (SELECT count(*) FROM {{schema}}.memory_ingest_events
         WHERE scope_key = $1 AND stream_id = $2 AND NOT processed
           AND ingest_id <> $3 AND {_GATE}) AS earlier
"""

# When a time rule next flushes the stream ($3; NULL: none) and when its window opened ($4).
SET_DUE = f"""
UPDATE {{schema}}.memory_ingest_streams SET due_time = $3, window_start = $4
 WHERE scope_key = $1 AND stream_id = $2 AND {_GATE}
"""

# The waiting events claimed under flush id $3 at $4 (a claim older than $5 seconds is free
# again; a replay finds its own), with the last $6 processed events still holding content (the
# overlap), oldest first; `fresh` tells the claimed from the overlap.
CLAIM = f"""
WITH claimed AS (
    UPDATE {{schema}}.memory_ingest_events
       SET flush_id = $3, claimed_at = $4::timestamptz
     WHERE scope_key = $1 AND stream_id = $2 AND NOT processed AND {_GATE}
       AND (flush_id IS NULL OR flush_id = $3
            OR claimed_at < $4::timestamptz - make_interval(secs => $5::float8))
    RETURNING event_time, seq, content
), overlap AS (
    SELECT event_time, seq, content FROM {{schema}}.memory_ingest_events
     WHERE scope_key = $1 AND stream_id = $2 AND processed AND content IS NOT NULL AND {_GATE}
     ORDER BY event_time DESC, seq DESC
     LIMIT $6
)
SELECT true AS fresh, event_time, seq, content FROM claimed
UNION ALL
SELECT false, event_time, seq, content FROM overlap
ORDER BY event_time, seq
"""

# A claim given up (its generation could not be enqueued): the events wait again.
RELEASE = f"""
UPDATE {{schema}}.memory_ingest_events SET flush_id = NULL, claimed_at = NULL
 WHERE scope_key = $1 AND stream_id = $2 AND flush_id = $3 AND NOT processed AND {_GATE}
"""

# The claimed events processed, the stream's window reopened at $4, nothing due unless events
# came while the flush ran (their request set the due time: kept); then only the last $5
# processed events keep their content (the ids stay: deduplication).
FINISH = f"""
WITH done AS (
    UPDATE {{schema}}.memory_ingest_events SET processed = true
     WHERE scope_key = $1 AND stream_id = $2 AND NOT processed AND flush_id = $3 AND {_GATE}
)
UPDATE {{schema}}.memory_ingest_streams s
   SET window_start = $4,
       due_time = CASE WHEN EXISTS (
           SELECT FROM {{schema}}.memory_ingest_events e
            WHERE e.scope_key = $1 AND e.stream_id = $2 AND NOT e.processed
              AND e.flush_id IS DISTINCT FROM $3 AND {_GATE}) THEN s.due_time END
 WHERE s.scope_key = $1 AND s.stream_id = $2 AND {_GATE}
"""

FORGET_CONTENT = f"""
UPDATE {{schema}}.memory_ingest_events SET content = NULL
 WHERE scope_key = $1 AND stream_id = $2 AND processed AND content IS NOT NULL AND {_GATE}
   AND seq NOT IN (SELECT seq FROM {{schema}}.memory_ingest_events
                    WHERE scope_key = $1 AND stream_id = $2 AND processed AND {_GATE}
                    ORDER BY event_time DESC, seq DESC LIMIT $3)
"""

# Streams a time rule made due by $1, the earliest first, at most $2: every scope's (the
# worker's sweep; the worker role has its own policy on the streams, `db.roles.OPEN_TABLES`).
DUE_STREAMS = f"""
SELECT scope_key, stream_id, scope, rule, options, window_start
  FROM {{schema}}.memory_ingest_streams
 WHERE due_time <= $1 AND {ALL_SCOPES_GATE}
 ORDER BY due_time
 LIMIT $2
"""


@dataclass(frozen=True)
class Touched:
    """A stream after a request: its stored trigger (None: never named), when its window
    opened and its last event came, how many of the request's events were new, how many wait
    (with them), and how many waited before them."""

    rule: dict[str, Any] | None
    window_start: datetime
    last_event: datetime
    added: int
    waiting: int
    earlier: int


@dataclass(frozen=True)
class DueStream:
    """A stream whose time rule is due: its keys, scope, stored trigger, options and window."""

    scope_key: str
    stream_id: str
    scope: dict[str, str]
    rule: dict[str, Any] | None
    options: dict[str, Any]
    window_start: datetime


@dataclass(frozen=True)
class Claimed:
    """A flush's events, oldest first: the contents to generate from, and how many of them are
    newly claimed (the rest are the overlap)."""

    contents: list[dict[str, Any]]
    fresh: int


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


class IngestStore:
    """The IngestEvents statements against one `Database`."""

    def __init__(self, db: Database) -> None:
        self._db = db
        schema = db.schema
        self._touch = rls.render(TOUCH_STREAM, schema)
        self._add = rls.render(ADD_EVENTS, schema)
        self._count = rls.render(COUNT_EVENTS, schema)
        self._set_due = rls.render(SET_DUE, schema)
        self._claim = rls.render(CLAIM, schema)
        self._release = rls.render(RELEASE, schema)
        self._finish = rls.render(FINISH, schema)
        self._forget = rls.render(FORGET_CONTENT, schema)
        self._due = rls.render(DUE_STREAMS, schema)

    async def add(
        self,
        scope_key: str,
        stream_id: str,
        scope: dict[str, str],
        events: list[tuple[str, datetime, dict[str, Any]]],
        *,
        rule: dict[str, Any] | None,
        rule_given: bool,
        options: dict[str, Any],
        now: datetime,
    ) -> Touched:
        """Touch the stream and buffer `events` (id, time, content) once each, in one
        transaction; what the stream holds after."""
        ids = [event_id for event_id, _, _ in events]
        args = (
            [at for _, at, _ in events],
            [dump_json(content) for _, _, content in events],
        )
        request_id = uuid.uuid4()
        stream = (scope_key, stream_id)

        async def add(conn: asyncpg.Connection) -> Touched:
            async with conn.transaction():
                row = await conn.fetchrow(
                    self._touch,
                    *stream,
                    dump_json(scope),
                    None if rule is None else dump_json(rule),
                    rule_given,
                    dump_json(options),
                    now,
                    bool(events),
                )
                await conn.execute(self._add, *stream, ids, *args, request_id)
                counts = await conn.fetchrow(self._count, *stream, request_id, ids)
            return Touched(
                _json(row["rule"]),
                row["window_start"],
                row["last_event"],
                counts["added"],
                counts["waiting"],
                counts["earlier"],
            )

        return await self._db.run(add)

    async def set_due(
        self, scope_key: str, stream_id: str, due: datetime | None, window_start: datetime
    ) -> None:
        await self._db.run(
            lambda conn: conn.execute(self._set_due, scope_key, stream_id, due, window_start)
        )

    async def claim(
        self, scope_key: str, stream_id: str, flush_id: uuid.UUID, now: datetime, overlap: int
    ) -> Claimed:
        """Claim the stream's waiting events under `flush_id`, with the `overlap` last
        processed ones before them."""
        lease = CLAIM_LEASE.total_seconds()
        rows = await self._db.run(
            lambda conn: conn.fetch(
                self._claim, scope_key, stream_id, flush_id, now, lease, overlap
            )
        )
        return Claimed([_json(r["content"]) for r in rows], sum(1 for r in rows if r["fresh"]))

    async def release(self, scope_key: str, stream_id: str, flush_id: uuid.UUID) -> None:
        await self._db.run(lambda conn: conn.execute(self._release, scope_key, stream_id, flush_id))

    async def finish(
        self, scope_key: str, stream_id: str, flush_id: uuid.UUID, now: datetime, overlap: int
    ) -> None:
        """Mark the claim processed, reopen the stream's window at `now`, and drop the content
        of processed events past the last `overlap`."""

        async def finish(conn: asyncpg.Connection) -> None:
            async with conn.transaction():
                await conn.execute(self._finish, scope_key, stream_id, flush_id, now)
                await conn.execute(self._forget, scope_key, stream_id, overlap)

        await self._db.run(finish)

    async def due(self, now: datetime, limit: int) -> list[DueStream]:
        rows = await self._db.run(lambda conn: conn.fetch(self._due, now, limit))
        return [
            DueStream(
                r["scope_key"],
                r["stream_id"],
                _json(r["scope"]),
                _json(r["rule"]),
                _json(r["options"]),
                r["window_start"],
            )
            for r in rows
        ]
