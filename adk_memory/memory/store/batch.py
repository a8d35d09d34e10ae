"""The batch create: many new memories of one key in one statement, each with its CREATED
revision, and the statement's arguments built from them.

Owns: `INSERT_MANY` and its typed arguments (one array per column). `memories.MemoryWrites`
runs it, once per key form of a batch (a scope's own key, its quarantine): the policies answer
the one key a statement's gate names (`db.rls.SCOPE_ROWS`). It never runs a statement.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..._json import dump_json
from ..scope import real_key_sql, scope_gate
from ..text import SearchText
from .changes import NewMemory
from .rows import json_list, json_value, vector_text
from .sql import MEMORY_COLUMNS, bind, expiry, fts, revision_of_m


@dataclass(frozen=True)
class InsertManyArgs:
    """`INSERT_MANY`'s parameters, $1.. in field order (`sql.bind`): one element per memory,
    arrays of arrays and JSON values as JSON text per element."""

    ids: list[str]
    scope_keys: list[str]
    scopes: list[str]
    facts: list[str]
    contents: list[str | None]
    topics: list[str]
    metadata: list[str]
    importance: list[float | None]
    confidence: list[float | None]
    source_types: list[str]
    source_session_ids: list[str | None]
    source_event_ids: list[str]
    embeddings: list[str | None]
    create_times: list[datetime | None]  # None: now
    ttl_seconds: list[float | None]
    extracted_facts: list[str]
    labels: list[str]
    revision_ids: list[str]  # each write's token
    configs: list[str]
    revision_ttl: float | None
    words: list[str]
    grams: list[str]
    update_times: list[datetime | None]  # None: now


ONE_KEY = scope_gate("($2::text[])[1]")
"""`INSERT_MANY`'s gate, its first memory's key: a batch is one key's (`MemoryWrites.insert_many`
runs one statement per key form), and a memory of another key raises (the policy's WITH
CHECK)."""

# Many creates in one statement: one array per column, one element per memory (the input `s`),
# arrays of arrays and JSON values as JSON text per element (Postgres arrays are rectangular);
# its parameters: `InsertManyArgs`. As `memories._INSERT`: an id any revision names is never created
# again, and the replay of a first attempt that committed returns the memories it created.
INSERT_MANY = f"""
WITH s AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                         $7::text[], $8::float8[], $9::float8[], $10::text[], $11::text[],
                         $12::text[], $13::text[], $14::timestamptz[], $15::float8[],
                         $16::text[], $17::text[], $18::uuid[], $19::text[], $21::text[],
                         $22::text[], $23::timestamptz[])
        AS s(id, scope_key, scope, fact, content, topics, metadata, importance, confidence,
             source_type, source_session_id, source_event_ids, embedding, create_time, ttl,
             extracted, labels, revision_id, config, words, grams, update_time)
), m AS (
    INSERT INTO {{schema}}.memories AS t
        (id, scope_key, scope, fact, content, topics, metadata, importance, confidence,
         source_type, source_session_id, source_event_ids, embedding, fts, create_time,
         update_time, expire_time)
    SELECT s.id, s.scope_key, s.scope::jsonb, s.fact, s.content::jsonb,
           ARRAY(SELECT jsonb_array_elements_text(s.topics::jsonb)), s.metadata::jsonb,
           s.importance, s.confidence, s.source_type, s.source_session_id,
           ARRAY(SELECT jsonb_array_elements_text(s.source_event_ids::jsonb)),
           s.embedding::vector, {fts("s.config", words="s.words", grams="s.grams")},
           coalesce(s.create_time, now()), coalesce(s.update_time, now()), {expiry("s.ttl")}
    FROM s
    WHERE {ONE_KEY}
      AND NOT EXISTS (SELECT 1 FROM {{schema}}.memory_revisions
                       WHERE scope_key = {real_key_sql("s.scope_key")} AND memory_id = s.id
                         AND {ONE_KEY})
    ON CONFLICT (id) DO NOTHING
    RETURNING *
), r AS (
{
    revision_of_m(
        "CREATED",
        revision_id="s.revision_id",
        extracted="ARRAY(SELECT jsonb_array_elements_text(s.extracted::jsonb))",
        labels="s.labels::jsonb",
        ttl="$20",
        rows="m JOIN s ON s.id = m.id",
        gate=ONE_KEY,
    )
}
)
SELECT {MEMORY_COLUMNS} FROM m
UNION ALL
SELECT {MEMORY_COLUMNS} FROM {{schema}}.memories m JOIN s ON s.id = m.id
 WHERE m.scope_key = s.scope_key AND {ONE_KEY}
   AND EXISTS (SELECT 1 FROM {{schema}}.memory_revisions
                WHERE id = s.revision_id AND memory_id = s.id AND {ONE_KEY})
"""


def insert_many_args(
    unique: Sequence[NewMemory], searchable: Callable[[str], SearchText], revision_ttl: float | None
) -> tuple[object, ...]:
    """`INSERT_MANY`'s arguments for one key's memories."""
    scope = json.dumps(unique[0].scope)  # one key's memories: one scope, written once
    texts = [searchable(m.fact) for m in unique]
    return bind(
        InsertManyArgs(
            ids=[m.id for m in unique],
            scope_keys=[m.scope_key for m in unique],
            scopes=[scope] * len(unique),
            facts=[m.fact for m in unique],
            contents=[json_value(m.content) for m in unique],
            topics=[json_list(m.topics) for m in unique],
            metadata=[dump_json(m.metadata or {}) for m in unique],
            importance=[m.importance for m in unique],
            confidence=[m.confidence for m in unique],
            source_types=[m.source_type.value for m in unique],
            source_session_ids=[m.source_session_id for m in unique],
            source_event_ids=[json_list(m.source_event_ids) for m in unique],
            embeddings=[vector_text(m.embedding) for m in unique],
            create_times=[m.create_time for m in unique],
            ttl_seconds=[m.ttl_seconds for m in unique],
            extracted_facts=[json_list(m.extracted_facts) for m in unique],
            labels=[json.dumps(m.labels) if m.labels else "{}" for m in unique],
            revision_ids=[m.revision_id for m in unique],
            configs=[s.config for s in texts],
            revision_ttl=revision_ttl,
            words=[s.words for s in texts],
            grams=[s.grams for s in texts],
            update_times=[m.update_time for m in unique],
        )
    )
