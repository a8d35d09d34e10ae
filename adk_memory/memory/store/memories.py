"""Writes to memories and their revisions: create, update, delete, release from quarantine,
import past revisions, and a generation's changes applied in one transaction.

Owns: every statement that changes a memory, each writing the memory together with its revision
in one statement, safe to replay after a lost reply (`Database.run`): the revision's id is the
write's token, and a counting deletion counts its first attempt's. It never decides what to
write (the service and the generator do), never calls a model, and reads only to return what it
wrote.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from ..._json import dump_json
from ...db import rls
from ...db.engine import Database
from ..models import Memory, MemoryAction, PastRevision
from ..scope import ALL_SCOPES_GATE, QUARANTINE_PREFIX, real_key_sql, scope_gate
from ..text import SearchText
from .batch import INSERT_MANY, insert_many_args
from .changes import GenerationWrites, MemoryChange, NewMemory
from .maintenance import SET_WATERMARK
from .rows import json_list, json_value, memory_of, vector_text
from .sql import LIVE, MEMORY_COLUMNS, bind, expiry, fts, revision_of_m

Also = Callable[[asyncpg.Connection], Awaitable[None]]
"""A write made in the same transaction as a memory's change (e.g. its audit record)."""

# The replay of a write to one memory whose first attempt committed: that write's revision
# ({revision}, the write's token) exists, so the memory is returned as it is now and nothing is
# written again. In the first attempt the revision is not visible yet (one snapshot per
# statement), so this adds one primary-key probe and no row.
_MINE = f"""
SELECT {MEMORY_COLUMNS} FROM {{{{schema}}}}.memories m
 WHERE m.id = {{memory}}::uuid AND m.scope_key = {{scope_key}} AND {{gate}}
   AND EXISTS (SELECT 1 FROM {{{{schema}}}}.memory_revisions
                WHERE id = {{revision}}::uuid AND memory_id = {{memory}}::uuid AND {{gate}})"""


def _mine(memory: str, scope_key: str, revision: str) -> str:
    """`_MINE` for a statement's parameters, gated by the memory's scope."""
    return _MINE.format(
        memory=memory, scope_key=scope_key, revision=revision, gate=scope_gate(scope_key)
    )


@dataclass(frozen=True)
class _InsertArgs:
    """`_INSERT`'s parameters, $1.. in field order (`sql.bind`)."""

    id: str
    scope_key: str
    scope: str  # JSON
    fact: str
    content: str | None  # JSON
    topics: list[str]
    metadata: str  # JSON
    importance: float | None
    confidence: float | None
    source_type: str
    source_session_id: str | None
    source_event_ids: list[str]
    embedding: str | None  # pgvector text
    config: str  # the fact's text-search configuration
    create_time: datetime | None  # None: now
    ttl_seconds: float | None
    extracted_facts: list[str]
    labels: str  # the revision's, JSON
    revision_ttl: float | None
    revision_id: str  # the write's token
    words: str  # the fact's searchable words and bigrams (`text.search_text`)
    grams: str
    update_time: datetime | None  # None: now


# Its parameters: `_InsertArgs`.
# An id that any revision already names is never created again: a deleted memory stays deleted
# when the same source is added twice. The replay of a create whose first attempt committed
# returns the memory it created.
_INSERT = f"""
WITH m AS (
    INSERT INTO {{schema}}.memories AS t
        (id, scope_key, scope, fact, content, topics, metadata, importance, confidence,
         source_type, source_session_id, source_event_ids, embedding, fts, create_time,
         update_time, expire_time)
    SELECT $1::uuid, $2, $3::jsonb, $4, $5::jsonb, $6::text[], $7::jsonb, $8, $9, $10, $11,
           $12::text[], $13::vector, {fts("$14", words="$21", grams="$22")},
           coalesce($15::timestamptz, now()), coalesce($23::timestamptz, now()), {expiry("$16")}
    WHERE {scope_gate("$2")}
      AND NOT EXISTS (SELECT 1 FROM {{schema}}.memory_revisions
                       WHERE scope_key = {real_key_sql("$2")} AND memory_id = $1::uuid
                         AND {scope_gate("$2")})
    ON CONFLICT (id) DO NOTHING
    RETURNING *
), r AS (
{
    revision_of_m(
        "CREATED",
        revision_id="$20::uuid",
        extracted="$17::text[]",
        labels="$18::jsonb",
        ttl="$19",
        gate=scope_gate("$2"),
    )
}
)
SELECT {MEMORY_COLUMNS} FROM m
UNION ALL
{_mine("$1", "$2", "$20")}
"""


@dataclass(frozen=True)
class _UpdateArgs:
    """`_UPDATE`'s parameters, $1.. in field order (`sql.bind`)."""

    memory_id: str
    scope_key: str
    fact: str | None  # None: keep
    topics: list[str] | None
    metadata: str | None  # JSON
    importance: float | None
    confidence: float | None
    embedding: str | None  # used when the fact changes
    config: str | None  # the new fact's text-search configuration
    ttl_seconds: float | None  # None: keep the expiry
    extracted_facts: list[str]
    labels: str  # JSON
    revision_ttl: float | None
    source_type: str | None
    source_session_id: str | None
    source_event_ids: list[str] | None
    revision_id: str  # the write's token: its replay changes nothing and returns the memory
    words: str | None  # the new fact's searchable words and bigrams (`text.search_text`)
    grams: str | None
    touch: bool
    """Whether the update time and provenance move (false for a blocked contradiction: the
    memory's confidence alone changes; the revision records the contradicting source)."""


# Its parameters: `_UpdateArgs`.
_UPDATE = f"""
WITH m AS (
    UPDATE {{schema}}.memories m
       SET fact = coalesce($3, m.fact),
           topics = coalesce($4::text[], m.topics),
           metadata = coalesce($5::jsonb, m.metadata),
           importance = coalesce($6, m.importance),
           confidence = coalesce($7, m.confidence),
           embedding = CASE WHEN $3 IS NULL THEN m.embedding ELSE $8::vector END,
           fts = CASE WHEN $3 IS NULL THEN m.fts
                      ELSE {fts("$9", words="$18", grams="$19")} END,
           source_type = CASE WHEN $20::boolean THEN coalesce($14, m.source_type)
                              ELSE m.source_type END,
           source_session_id = CASE WHEN $20::boolean THEN coalesce($15, m.source_session_id)
                                    ELSE m.source_session_id END,
           source_event_ids = CASE WHEN $20::boolean
                                   THEN coalesce($16::text[], m.source_event_ids)
                                   ELSE m.source_event_ids END,
           update_time = CASE WHEN $20::boolean THEN now() ELSE m.update_time END,
           expire_time = CASE WHEN $10::float8 IS NULL THEN m.expire_time
                              ELSE {expiry("$10")} END
     WHERE m.id = $1::uuid AND m.scope_key = $2 AND {LIVE} AND {scope_gate("$2")}
       AND NOT EXISTS (SELECT 1 FROM {{schema}}.memory_revisions
                        WHERE id = $17::uuid AND {scope_gate("$2")})
    RETURNING m.*
), r AS (
{
    revision_of_m(
        "UPDATED",
        revision_id="$17::uuid",
        extracted="$11::text[]",
        labels="$12::jsonb",
        ttl="$13",
        source_type="coalesce($14, m.source_type)",
        source_session="coalesce($15, m.source_session_id)",
        source_events="coalesce($16::text[], m.source_event_ids)",
        gate=scope_gate("$2"),
    )
}
)
SELECT {MEMORY_COLUMNS} FROM m
UNION ALL
{_mine("$1", "$2", "$17")}
"""

# $1 scope key, $2 id, $3 labels, $4 revision ttl seconds, $5 extracted facts (what led a
# generation to delete it), $6 revision id. One memory at a time, always: deleting a whole scope
# is `_PURGE`, asked for by name. A deleted memory is never created again (see `_INSERT`), so a
# replay deletes nothing; `_DELETE_ONE` counts its first attempt's deletion by its revision.
_DELETE_CTES = f"""
WITH m AS (
    DELETE FROM {{schema}}.memories m
     WHERE m.scope_key = $1 AND m.id = $2::uuid AND {scope_gate("$1")}
    RETURNING m.*
), r AS (
{
    revision_of_m(
        "DELETED",
        revision_id="$6::uuid",
        extracted="$5::text[]",
        labels="$3::jsonb",
        ttl="$4",
        gate=scope_gate("$1"),
    )
}
)
"""
# A generation's delete: the deleted memory (its whole transaction is replay-safe, see
# `apply_generation`).
_DELETE = _DELETE_CTES + f"SELECT {MEMORY_COLUMNS} FROM m"
# A direct delete: how many went (0 or 1), this write's replay included.
_DELETE_ONE = (
    _DELETE_CTES
    + f"""SELECT (SELECT count(*) FROM m) + (SELECT count(*) FROM {{schema}}.memory_revisions
                                         WHERE id = $6::uuid AND memory_id = $2::uuid
                                           AND {scope_gate("$1")})"""
)

# Approve: the memory moves back under its scope's key ($1 id, $2 scope key, $3 labels,
# $4 revision ttl, $5 revision id), with an UPDATED revision. A replay finds the memory released
# (nothing to move) and returns it. An operator's act (`approve_quarantined`), gated for every
# scope like the operators' listings: the row changes key form, and an updated row must pass the
# policy of the key it reads (`quarantine:K`) and, moved, the one it gets (`K`), which no one
# key's policy does (`db.rls.SCOPE_ROWS`); its own `scope_key` equalities name the one scope.
_RELEASE = f"""
WITH m AS (
    UPDATE {{schema}}.memories m SET scope_key = $2, update_time = now()
     WHERE m.id = $1::uuid AND m.scope_key = '{QUARANTINE_PREFIX}' || $2 AND {ALL_SCOPES_GATE}
    RETURNING m.*
), r AS (
{
    revision_of_m(
        "UPDATED",
        revision_id="$5::uuid",
        extracted="'{{}}'::text[]",
        labels="$3::jsonb",
        ttl="$4",
        gate=ALL_SCOPES_GATE,
    )
}
)
SELECT {MEMORY_COLUMNS} FROM m
UNION ALL
{_MINE.format(memory="$1", scope_key="$2", revision="$5", gate=ALL_SCOPES_GATE)}
"""

# Live memories' past revisions from another system (an import's), with their own times.
# $1 scope key (the live memories': a quarantined or deleted one gets none), $2 memory ids,
# $3 revision ids (each written once), $4 actions, $5 facts, $6 extracted facts (JSON arrays),
# $7 labels (JSON), $8 create times, $9 expire times.
_IMPORT_REVISIONS = f"""
INSERT INTO {{schema}}.memory_revisions
    (id, memory_id, scope_key, scope, action, fact, extracted_facts, labels, source_type,
     create_time, expire_time)
SELECT s.id, m.id, m.scope_key, m.scope, s.action, s.fact,
       ARRAY(SELECT jsonb_array_elements_text(s.extracted::jsonb)), s.labels::jsonb,
       m.source_type, s.create_time, s.expire_time
FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[],
            $8::timestamptz[], $9::timestamptz[])
     AS s(memory_id, id, action, fact, extracted, labels, create_time, expire_time)
JOIN {{schema}}.memories m ON m.id = s.memory_id AND m.scope_key = $1
WHERE {scope_gate("$1")}
ON CONFLICT (id) DO NOTHING
RETURNING id
"""


class MemoryWrites:
    """Runs the write statements against one `Database` (and its schema)."""

    def __init__(self, db: Database, searchable: Callable[[str], SearchText]) -> None:
        self._db = db
        self._searchable = searchable
        schema = db.schema
        self._insert = rls.render(_INSERT, schema)
        self._insert_many = rls.render(INSERT_MANY, schema)
        self._update = rls.render(_UPDATE, schema)
        self._delete = rls.render(_DELETE, schema)
        self._delete_one = rls.render(_DELETE_ONE, schema)
        self._release = rls.render(_RELEASE, schema)
        self._import_revisions = rls.render(_IMPORT_REVISIONS, schema)
        self._set_watermark = rls.render(SET_WATERMARK, schema)

    def _insert_args(self, new: NewMemory, revision_ttl: float | None) -> _InsertArgs:
        searchable = self._searchable(new.fact)
        return _InsertArgs(
            id=new.id,
            scope_key=new.scope_key,
            scope=json.dumps(new.scope),
            fact=new.fact,
            content=json_value(new.content),
            topics=list(new.topics),
            metadata=dump_json(new.metadata or {}),
            importance=new.importance,
            confidence=new.confidence,
            source_type=new.source_type.value,
            source_session_id=new.source_session_id,
            source_event_ids=list(new.source_event_ids),
            embedding=vector_text(new.embedding),
            config=searchable.config,
            create_time=new.create_time,
            ttl_seconds=new.ttl_seconds,
            extracted_facts=list(new.extracted_facts),
            labels=json.dumps(new.labels or {}),
            revision_ttl=revision_ttl,
            revision_id=new.revision_id,
            words=searchable.words,
            grams=searchable.grams,
            update_time=new.update_time,
        )

    async def insert_many(
        self, memories: Sequence[NewMemory], revision_ttl: float | None
    ) -> list[Memory]:
        """Create many memories, each with its CREATED revision, all or none: one statement per
        key form (a batch with quarantined facts: two, in one transaction); the memories
        created, in no particular order. Ids that exist or existed before this call are
        skipped, and so is a repeated id after its first occurrence; a replay after a lost
        reply returns the memories its first attempt created."""
        first: dict[str, NewMemory] = {}
        for memory in memories:
            first.setdefault(memory.id, memory)
        unique = list(first.values())
        if not unique:
            return []
        by_key: dict[str, list[NewMemory]] = {}
        for m in unique:  # a scope's own key and its quarantine: one statement each
            by_key.setdefault(m.scope_key, []).append(m)
        batches = [insert_many_args(b, self._searchable, revision_ttl) for b in by_key.values()]

        async def inserted(conn: asyncpg.Connection) -> list[asyncpg.Record]:
            if len(batches) == 1:  # the usual batch: one statement, no transaction block
                return list(await conn.fetch(self._insert_many, *batches[0]))
            rows: list[asyncpg.Record] = []
            async with conn.transaction():
                for args in batches:
                    rows += await conn.fetch(self._insert_many, *args)
            return rows

        return [memory_of(r) for r in await self._db.run(inserted)]

    def _update_args(
        self, memory_id: str, scope_key: str, change: MemoryChange, revision_ttl: float | None
    ) -> _UpdateArgs:
        # The new fact's full text (none when the fact is kept).
        config, words, grams = (
            (None, None, None) if change.fact is None else self._searchable(change.fact)
        )
        return _UpdateArgs(
            memory_id=memory_id,
            scope_key=scope_key,
            fact=change.fact,
            topics=list(change.topics) if change.topics is not None else None,
            metadata=json_value(change.metadata),
            importance=change.importance,
            confidence=change.confidence,
            embedding=vector_text(change.embedding),
            config=config,
            ttl_seconds=change.ttl_seconds,
            extracted_facts=list(change.extracted_facts),
            labels=json.dumps(change.labels or {}),
            revision_ttl=revision_ttl,
            source_type=change.source_type.value if change.source_type else None,
            source_session_id=change.source_session_id,
            source_event_ids=(
                list(change.source_event_ids) if change.source_event_ids is not None else None
            ),
            revision_id=change.revision_id,
            words=words,
            grams=grams,
            touch=change.touch,
        )

    async def update(
        self, memory_id: str, scope_key: str, change: MemoryChange, revision_ttl: float | None
    ) -> Memory | None:
        """Apply `change` with an UPDATED revision; None if no live memory has that id here.
        Its replay after a lost reply returns the memory, with no second revision."""
        args = bind(self._update_args(memory_id, scope_key, change, revision_ttl))
        row = await self._db.run(lambda conn: conn.fetchrow(self._update, *args))
        return None if row is None else memory_of(row)

    async def delete(
        self,
        scope_key: str,
        memory_id: str,
        labels: dict[str, str] | None,
        revision_ttl: float | None,
        also: Also | None = None,
    ) -> int:
        """Delete one memory with a DELETED revision; how many went (0 or 1, the same again for
        its replay after a lost reply). `also`: a write that commits with the deletion, made
        when one memory went (again on a replay: it must be safe to repeat)."""
        args: tuple[object, ...] = (
            scope_key,
            memory_id,
            json.dumps(labels or {}),
            revision_ttl,
            [],
            uuid.uuid4(),
        )

        async def deleted(conn: asyncpg.Connection) -> int:
            async with conn.transaction():
                count = int(await conn.fetchval(self._delete_one, *args))
                if count and also is not None:
                    await also(conn)
                return count

        return await self._db.run(deleted)

    async def release(
        self,
        memory_id: str,
        scope_key: str,
        labels: dict[str, str],
        revision_ttl: float | None,
        also: Also | None = None,
    ) -> Memory | None:
        """Move a quarantined memory back under its scope (an UPDATED revision with `labels`);
        None if no quarantined memory of the scope has that id (a replay after a lost reply
        returns the memory it released). `also`: a write that commits with the release, made
        when one was released (again on a replay: it must be safe to repeat)."""
        args = (memory_id, scope_key, json.dumps(labels), revision_ttl, uuid.uuid4())

        async def released(conn: asyncpg.Connection) -> asyncpg.Record | None:
            async with conn.transaction():
                row = await conn.fetchrow(self._release, *args)
                if row is not None and also is not None:
                    await also(conn)
                return row

        row = await self._db.run(released)
        return None if row is None else memory_of(row)

    async def import_revisions(
        self,
        scope_key: str,
        memory_ids: Sequence[str],
        ids: Sequence[str],
        revisions: Sequence[PastRevision],
    ) -> int:
        """Add `revisions` (each with its memory's id and its own id, written once) to the
        histories of live memories of `scope_key`; how many were new."""
        args = (
            scope_key,
            list(memory_ids),
            list(ids),
            [r.action.value for r in revisions],
            [r.fact for r in revisions],
            [json_list(r.extracted_facts) for r in revisions],
            [json.dumps(r.labels) for r in revisions],
            [r.create_time for r in revisions],
            [r.expire_time for r in revisions],
        )
        rows = await self._db.run(lambda conn: conn.fetch(self._import_revisions, *args))
        return len(rows)

    async def apply_generation(
        self, conn: asyncpg.Connection, writes: GenerationWrites, revision_ttl: float | None
    ) -> list[tuple[MemoryAction, Memory]]:
        """Apply a generation's creates, updates and deletes and move the session's watermark,
        on `conn`, inside the caller's transaction (the job queue's `finish`, which checked
        that the try still owns its job and completes it in the same transaction); what was
        applied (a write whose memory is gone is skipped)."""
        applied: list[tuple[MemoryAction, Memory]] = []
        for new in writes.creates:
            row = await conn.fetchrow(self._insert, *bind(self._insert_args(new, revision_ttl)))
            if row is not None:
                applied.append((MemoryAction.CREATED, memory_of(row)))
        for u in writes.updates:
            updating = self._update_args(u.memory_id, u.scope_key, u.change, revision_ttl)
            row = await conn.fetchrow(self._update, *bind(updating))
            if row is not None:
                applied.append((MemoryAction.UPDATED, memory_of(row)))
        for d in writes.deletes:
            rows = await conn.fetch(
                self._delete,
                d.scope_key,
                d.memory_id,
                json.dumps(d.labels),
                revision_ttl,
                list(d.extracted_facts),
                d.revision_id,
            )
            applied.extend((MemoryAction.DELETED, memory_of(r)) for r in rows)
        if (mark := writes.watermark) is not None:
            await conn.execute(
                self._set_watermark, mark.scope_key, mark.session_id, mark.event_id, mark.event_time
            )
        return applied
