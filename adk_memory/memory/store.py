"""SQL for memories and their revisions: CRUD, hybrid retrieval, TTL sweeps.

Owns: every statement on the memory tables (and all pgvector-specific queries), each filtered by
the canonical scope key so no call reaches another scope's rows, and each change written together
with its revision in one statement, safe to replay after a lost reply (`Database.run`): the
revision's id is the write's token, and counting deletions record their counts. Rows become
`Memory` / `MemoryRevision` here. It never decides what to write (the service does), never
calls a model, and never changes the schema: the vector column and index are migrations
(`db.vectors.VECTOR_STRATEGIES`) it asks for through `Database.ensure_vectors`.
"""

from __future__ import annotations

import json
import uuid
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from .._json import dump_json
from ..db.engine import Database
from ..db.migrations import MEMORY_MIGRATIONS
from ..db.replica import ReadFor
from ..db.replies import FIRST_ATTEMPT, recorded
from ..db.vectors import COVERED, EXACT, QUANTIZED
from ..errors import InputValidationError
from .models import (
    Memory,
    MemoryAction,
    MemoryFilter,
    MemoryRevision,
    PastRevision,
    SourceType,
)
from .procedure_rule import PUBLIC
from .text import AUTO, SearchText, search_text

# The last column is the memory's `memory_type`, read from its key (`PROCEDURE_PREFIX`, also
# under the quarantine's `QUARANTINE_PREFIX`).
_MEMORY_COLUMNS = """
    m.id::text, m.scope::text, m.fact, m.content::text, m.topics, m.metadata::text, m.importance,
    m.confidence, m.source_type, m.source_session_id, m.source_event_ids, m.create_time,
    m.update_time, m.expire_time,
    CASE WHEN starts_with(m.scope_key, 'procedure:')
           OR starts_with(m.scope_key, 'quarantine:procedure:')
         THEN 'procedure' ELSE 'fact' END"""

_LIVE = "(m.expire_time IS NULL OR m.expire_time > now())"

QUARANTINE_PREFIX = "quarantine:"
"""A quarantined memory is stored under its scope's key with this prefix. Every read, search and
ADK call matches a scope key exactly, so no path can return a quarantined memory without naming
the quarantine on purpose (and the tuned retrieval statements and indexes stay as they are);
approving it moves it back under its scope's own key. Revisions always carry the real key."""


def _real_key(column: str) -> str:
    """SQL for the scope key without the quarantine prefix."""
    return (
        f"CASE WHEN starts_with({column}, '{QUARANTINE_PREFIX}') "
        f"THEN substr({column}, {len(QUARANTINE_PREFIX) + 1}) ELSE {column} END"
    )


def quarantine_key(scope_key: str) -> str:
    """Where a scope's quarantined memories are kept (see `QUARANTINE_PREFIX`)."""
    return QUARANTINE_PREFIX + scope_key


PROCEDURE_PREFIX = "procedure:"
"""A procedure (a playbook, `memory_type` "procedure") is stored under its scope's key with this
prefix, as a quarantined memory is: every read and search matches a key exactly, so a search for
facts never returns a procedure and one for procedures never a fact, and the tuned retrieval
statements and covering indexes serve both unchanged. Its revisions carry the prefixed key; its
`memory_type` is read from the key (`_MEMORY_COLUMNS`), so no column or index was added."""


def procedure_key(scope_key: str) -> str:
    """Where a scope's procedures are kept (see `PROCEDURE_PREFIX`)."""
    return PROCEDURE_PREFIX + scope_key


def kind_key(scope_key: str, flt: MemoryFilter | None) -> tuple[str, MemoryFilter | None]:
    """The key holding the kind of memories `flt` asks for (facts unless it says procedures),
    and what is left of the filter (None when the kind was all it said, so the unfiltered,
    index-only retrieval statement still serves it). Procedures are only those every user may
    see (`metadata["audience"]` holds `PUBLIC`: `procedure_support`) unless the filter names an
    audience itself (`PostgresMemoryService.retrieve_procedures` names one user's)."""
    if flt is None or flt.memory_type is None:
        return scope_key, flt
    if flt.memory_type == "fact":
        rest = flt.model_copy(update={"memory_type": None})
        return scope_key, None if rest == MemoryFilter() else rest
    metadata = dict(flt.metadata or {})
    metadata.setdefault("audience", [PUBLIC])
    return procedure_key(scope_key), flt.model_copy(
        update={"memory_type": None, "metadata": metadata}
    )


# Filter parameters, always $F1..$F4 below: topics (any of), metadata containment, update-time
# bounds. Substituted per statement so each statement numbers its own parameters.
_FILTERS = """
    AND ({topics}::text[] IS NULL OR m.topics && {topics}::text[])
    AND ({metadata}::jsonb IS NULL OR m.metadata @> {metadata}::jsonb)
    AND ({after}::timestamptz IS NULL OR m.update_time > {after}::timestamptz)
    AND ({before}::timestamptz IS NULL OR m.update_time < {before}::timestamptz)"""


def _filters(first: int) -> str:
    return _FILTERS.format(
        topics=f"${first}", metadata=f"${first + 1}", after=f"${first + 2}", before=f"${first + 3}"
    )


def _expiry(param: str) -> str:
    """SQL for "now + ttl seconds", or NULL (never expires) when the parameter is NULL."""
    return (
        f"CASE WHEN {param}::float8 IS NULL THEN NULL "
        f"ELSE now() + make_interval(secs => {param}::float8) END"
    )


# Full text is indexed and queried in the form `text.search_text` gives both sides: the words
# under the service's configuration, the unspaced scripts' bigrams under `simple` (no stemming or
# stop words apply to them), so one scope can hold memories in any mix of languages.
def _fts(config: str, *, words: str, grams: str) -> str:
    """SQL for a fact's tsvector from its searchable words and bigrams."""
    return f"to_tsvector({config}::regconfig, {words}) || to_tsvector('simple', {grams})"


def _tsquery(config: str, *, words: str, grams: str) -> str:
    """SQL for a query's tsquery: any of its words or bigrams (OR, ranked by `ts_rank`), NULL
    when it has none."""
    return (
        f"nullif(replace((plainto_tsquery({config}::regconfig, {words}) "
        f"|| plainto_tsquery('simple', {grams}))::text, '&', '|'), '')::tsquery"
    )


# BM25's parameters: term-frequency saturation (k1) and length normalisation (b), the usual.
_K1 = 1.2
_B = 0.25


# Memories that hold none of a query's terms, assumed besides the scope's own when weighing a
# term by its rarity: in a scope of a few memories, a term in all of them says little about
# its rarity (two memories about trips do not make "trips" a word to ignore), while in a scope
# of thousands the prior vanishes next to the counts.
_BACKGROUND = 20


_COUNTED = 5000
"""A scope is counted up to this many memories for term rarity: counting a scope of 36k took a
third of its search, and past a few thousand memories a term's rarity hardly moves (a term in
more memories than were counted counts the scope as that big)."""

_SCOPE_SIZE = (
    "SELECT count(*) FROM (SELECT FROM {schema}.memories WHERE scope_key = $1 "
    f"LIMIT {_COUNTED}) s"
)
"""SQL for the scope's ($1) size as term rarity counts it."""


def _idf(scope_size: str, holding: str) -> str:
    """SQL for a term's BM25 inverse document frequency in a scope of `scope_size` memories,
    `holding` of which hold it (positive: a term in every memory of a big scope weighs nearly
    0). In float8: numeric arithmetic over thousands of matches cost more than the search."""
    return (
        f"ln(1 + ({scope_size} + {_BACKGROUND} - {holding} + 0.5)::float8 "
        f"/ ({holding} + 0.5)::float8)"
    )


def _bm25(idf: str, length: str, avg_length: str) -> str:
    """SQL for a matched term's BM25 contribution to a memory's score (a term counted once: a
    memory is a fact or a turn, which rarely repeats a word, and reading each term's positions
    cost a third of a search in a scope of thousands)."""
    return (
        f"{idf} * {_K1 + 1}::float8 / (1 + {_K1}::float8 * ({1 - _B}::float8 "
        f"+ {_B}::float8 * {length} / {avg_length}))"
    )


# Each of a query's (or fact's) terms as a tsquery of its own, which a memory's tsvector matches
# when it holds the term: `terms` is the text array of lexemes `tsvector_to_array` gives.
def _term_queries(terms: str) -> str:
    """SQL for (term, tsquery) rows of the lexemes in the array `terms`."""
    return f"SELECT t AS term, quote_literal(t)::tsquery AS tq FROM unnest({terms}) t"


def _effective_confidence(half_life: str) -> str:
    """SQL for a memory `m`'s effective confidence: its stored confidence halved every
    `half_life` seconds (a parameter; NULL: no decay) since it was last updated or corroborated
    (`update_time`); NULL when its confidence is unknown. The one definition retrieval and
    pruning share (`trust.effective_confidence` is its Python twin, for what a model is shown).
    """
    return (
        f"m.confidence * coalesce(power(0.5, extract(epoch FROM now() - m.update_time) "
        f"/ {half_life}::float8), 1)"
    )


def _revision_of_m(
    action: str,
    *,
    revision_id: str,
    extracted: str,
    labels: str,
    ttl: str,
    source_type: str = "m.source_type",
    source_session: str = "m.source_session_id",
    source_events: str = "m.source_event_ids",
    rows: str = "m",
) -> str:
    """The CTE body that records one revision per row of `m` (the rows a statement just
    created, updated or deleted): the one place that says what a revision keeps. Its text goes
    through the statement's `.format(schema=...)` once, so literal braces are doubled once.

    A statement that changes one memory passes the caller's `revision_id` (a uuid parameter):
    the revision is then the token of that write, which its replay after a lost reply finds
    (`_MINE`) instead of writing it again. A statement that creates many passes `rows`, `m`
    joined to its input, so each revision takes its own row's id and values."""
    return f"""
    INSERT INTO {{schema}}.memory_revisions
        (id, memory_id, scope_key, scope, action, fact, extracted_facts, labels, source_type,
         source_session_id, source_event_ids, expire_time, confidence)
    SELECT {revision_id}, m.id, {_real_key("m.scope_key")}, m.scope, '{action}', m.fact,
           {extracted},
           {labels}, {source_type}, {source_session}, {source_events}, {_expiry(ttl)},
           m.confidence
    FROM {rows}"""


# The replay of a write to one memory whose first attempt committed: that write's revision
# ({revision}, the write's token) exists, so the memory is returned as it is now and nothing is
# written again. In the first attempt the revision is not visible yet (one snapshot per
# statement), so this adds one primary-key probe and no row.
_MINE = f"""
SELECT {_MEMORY_COLUMNS} FROM {{{{schema}}}}.memories m
 WHERE m.id = {{memory}}::uuid AND m.scope_key = {{scope_key}}
   AND EXISTS (SELECT 1 FROM {{{{schema}}}}.memory_revisions
                WHERE id = {{revision}}::uuid AND memory_id = {{memory}}::uuid)"""

# $1 id, $2 scope key, $3 scope, $4 fact, $5 content, $6 topics, $7 metadata, $8 importance,
# $9 confidence, $10 source type, $11 source session, $12 source events, $13 embedding,
# $14 text-search config, $15 create time (NULL: now), $16 ttl seconds, $17 extracted facts,
# $18 revision labels, $19 revision ttl seconds, $20 revision id (the write's token), $21 and
# $22 the fact's searchable words and bigrams (`text.search_text`), $23 update time (NULL: now).
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
           $12::text[], $13::vector, {_fts("$14", words="$21", grams="$22")},
           coalesce($15::timestamptz, now()), coalesce($23::timestamptz, now()), {_expiry("$16")}
    WHERE NOT EXISTS (SELECT 1 FROM {{schema}}.memory_revisions
                       WHERE scope_key = {_real_key("$2")} AND memory_id = $1::uuid)
    ON CONFLICT (id) DO NOTHING
    RETURNING *
), r AS (
{
    _revision_of_m(
        "CREATED", revision_id="$20::uuid", extracted="$17::text[]", labels="$18::jsonb", ttl="$19"
    )
}
)
SELECT {_MEMORY_COLUMNS} FROM m
UNION ALL
{_MINE.format(memory="$1", scope_key="$2", revision="$20")}
"""

# Many creates in one statement: one array per column, one element per memory (the input `s`),
# arrays of arrays and JSON values as JSON text per element (Postgres arrays are rectangular).
# $1 ids, $2 scope keys, $3 scopes, $4 facts, $5 contents, $6 topics, $7 metadata,
# $8 importance, $9 confidence, $10 source types, $11 source sessions, $12 source events,
# $13 embeddings, $14 create times (NULL: now), $15 ttl seconds, $16 extracted facts,
# $17 revision labels, $18 revision ids (each write's token); $19 text-search configs,
# $20 revision ttl seconds; $21 and $22 each fact's searchable words and bigrams
# (`text.search_text`); $23 update times (NULL: now). As `_INSERT`: an id any revision names
# is never created again, and the replay of a first attempt that committed returns the
# memories it created.
_INSERT_MANY = f"""
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
           s.embedding::vector, {_fts("s.config", words="s.words", grams="s.grams")},
           coalesce(s.create_time, now()), coalesce(s.update_time, now()), {_expiry("s.ttl")}
    FROM s
    WHERE NOT EXISTS (SELECT 1 FROM {{schema}}.memory_revisions
                       WHERE scope_key = {_real_key("s.scope_key")} AND memory_id = s.id)
    ON CONFLICT (id) DO NOTHING
    RETURNING *
), r AS (
{
    _revision_of_m(
        "CREATED",
        revision_id="s.revision_id",
        extracted="ARRAY(SELECT jsonb_array_elements_text(s.extracted::jsonb))",
        labels="s.labels::jsonb",
        ttl="$20",
        rows="m JOIN s ON s.id = m.id",
    )
}
)
SELECT {_MEMORY_COLUMNS} FROM m
UNION ALL
SELECT {_MEMORY_COLUMNS} FROM {{schema}}.memories m JOIN s ON s.id = m.id
 WHERE m.scope_key = s.scope_key
   AND EXISTS (SELECT 1 FROM {{schema}}.memory_revisions
                WHERE id = s.revision_id AND memory_id = s.id)
"""

# $1 id, $2 scope key, $3 fact (NULL: keep), $4 topics, $5 metadata, $6 importance,
# $7 confidence, $8 embedding (used when the fact changes), $9 text-search config,
# $10 ttl seconds (NULL: keep the expiry), $11 extracted facts, $12 labels,
# $13 revision ttl seconds, $14 source type, $15 source session, $16 source events,
# $17 revision id (the write's token: its replay changes nothing and returns the memory),
# $18 and $19 the new fact's searchable words and bigrams (`text.search_text`), $20 whether the
# update time and provenance move (false for a blocked contradiction: the memory's confidence
# alone changes; the revision records the contradicting source).
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
                      ELSE {_fts("$9", words="$18", grams="$19")} END,
           source_type = CASE WHEN $20::boolean THEN coalesce($14, m.source_type)
                              ELSE m.source_type END,
           source_session_id = CASE WHEN $20::boolean THEN coalesce($15, m.source_session_id)
                                    ELSE m.source_session_id END,
           source_event_ids = CASE WHEN $20::boolean
                                   THEN coalesce($16::text[], m.source_event_ids)
                                   ELSE m.source_event_ids END,
           update_time = CASE WHEN $20::boolean THEN now() ELSE m.update_time END,
           expire_time = CASE WHEN $10::float8 IS NULL THEN m.expire_time
                              ELSE {_expiry("$10")} END
     WHERE m.id = $1::uuid AND m.scope_key = $2 AND {_LIVE}
       AND NOT EXISTS (SELECT 1 FROM {{schema}}.memory_revisions WHERE id = $17::uuid)
    RETURNING m.*
), r AS (
{
    _revision_of_m(
        "UPDATED",
        revision_id="$17::uuid",
        extracted="$11::text[]",
        labels="$12::jsonb",
        ttl="$13",
        source_type="coalesce($14, m.source_type)",
        source_session="coalesce($15, m.source_session_id)",
        source_events="coalesce($16::text[], m.source_event_ids)",
    )
}
)
SELECT {_MEMORY_COLUMNS} FROM m
UNION ALL
{_MINE.format(memory="$1", scope_key="$2", revision="$17")}
"""

# $1 scope key, $2 id, $3 labels, $4 revision ttl seconds, $5 extracted facts (what led a
# generation to delete it), $6 revision id. One memory at a time, always: deleting a whole scope
# is `_PURGE`, asked for by name. A deleted memory is never created again (see `_INSERT`), so a
# replay deletes nothing; `_DELETE_ONE` counts its first attempt's deletion by its revision.
_DELETE_CTES = f"""
WITH m AS (
    DELETE FROM {{schema}}.memories m
     WHERE m.scope_key = $1 AND m.id = $2::uuid
    RETURNING m.*
), r AS (
{
    _revision_of_m(
        "DELETED", revision_id="$6::uuid", extracted="$5::text[]", labels="$3::jsonb", ttl="$4"
    )
}
)
"""
# A generation's delete: the deleted memory (its whole transaction is replay-safe, see
# `apply_generation`).
_DELETE = _DELETE_CTES + f"SELECT {_MEMORY_COLUMNS} FROM m"
# A direct delete: how many went (0 or 1), this write's replay included.
_DELETE_ONE = (
    _DELETE_CTES
    + """SELECT (SELECT count(*) FROM m) + (SELECT count(*) FROM {schema}.memory_revisions
                                        WHERE id = $6::uuid AND memory_id = $2::uuid)"""
)

# Memories of a scope that any revision traces to session $2, each with the facts extracted from
# other sources over its history (what remains to regenerate it from). A claim the trust rule
# blocked (`trust: blocked`) derived nothing: it neither ties a memory to its session nor is
# regenerated.
_DERIVED_FROM = """
SELECT m.id::text,
       coalesce(array_agg(DISTINCT f.fact) FILTER (WHERE f.fact IS NOT NULL), '{{}}')
FROM {schema}.memories m
LEFT JOIN {schema}.memory_revisions r
       ON r.scope_key = m.scope_key AND r.memory_id = m.id
      AND r.source_session_id IS DISTINCT FROM $2
      AND r.labels->>'trust' IS DISTINCT FROM 'blocked'
LEFT JOIN LATERAL unnest(r.extracted_facts) AS f(fact) ON true
WHERE m.scope_key = $1
  AND EXISTS (SELECT 1 FROM {schema}.memory_revisions x
               WHERE x.scope_key = $1 AND x.memory_id = m.id AND x.source_session_id = $2
                 AND x.labels->>'trust' IS DISTINCT FROM 'blocked')
GROUP BY m.id
"""

_WATERMARK = """
SELECT event_id, event_time FROM {schema}.memory_watermarks
WHERE scope_key = $1 AND session_id = $2
"""

# One row per (scope key, session id) pair asked about, in the order asked: the pair's watermark
# time, or NULL. One round trip for a whole page of sessions.
_PROCESSED_UNTIL = """
SELECT w.event_time
FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS s(scope_key, session_id, n)
LEFT JOIN {schema}.memory_watermarks w
       ON w.scope_key = s.scope_key AND w.session_id = s.session_id
ORDER BY s.n
"""

_SET_WATERMARK = """
INSERT INTO {schema}.memory_watermarks (scope_key, session_id, event_id, event_time)
VALUES ($1, $2, $3, $4)
ON CONFLICT (scope_key, session_id) DO UPDATE
    SET event_id = EXCLUDED.event_id, event_time = EXCLUDED.event_time, update_time = now()
"""

# A scope, forgotten: its memories (quarantined ones too), revisions and watermarks, counted
# under request id $2 (see `db.replies`).
_PURGE = recorded(
    "{schema}.memory_replies",
    "$2",
    f"""
m AS (DELETE FROM {{schema}}.memories
       WHERE (scope_key = $1 OR scope_key = '{QUARANTINE_PREFIX}' || $1) AND {FIRST_ATTEMPT}
      RETURNING 1),
r AS (DELETE FROM {{schema}}.memory_revisions
       WHERE scope_key = $1 AND {FIRST_ATTEMPT} RETURNING 1),
w AS (DELETE FROM {{schema}}.memory_watermarks
       WHERE scope_key = $1 AND {FIRST_ATTEMPT} RETURNING 1)""",
    ["(SELECT count(*) FROM m) + (SELECT count(*) FROM r) + (SELECT count(*) FROM w)"],
)

# Every scope containing $1 (e.g. {{"app_name": A, "user_id": U}}), forgotten: counts of
# memories, revisions and watermarks deleted. Scopes are matched on their JSON (a scan: erasure
# is rare, and no index on every memory's scope is worth its cost on every write). Counted under
# request id $2 (see `db.replies`).
_ERASE = recorded(
    "{schema}.memory_replies",
    "$2",
    f"""
m AS (DELETE FROM {{schema}}.memories WHERE scope @> $1::jsonb AND {FIRST_ATTEMPT} RETURNING 1),
r AS (DELETE FROM {{schema}}.memory_revisions
       WHERE scope @> $1::jsonb AND {FIRST_ATTEMPT} RETURNING 1),
w AS (DELETE FROM {{schema}}.memory_watermarks
       WHERE scope_key::jsonb @> $1::jsonb AND {FIRST_ATTEMPT} RETURNING 1)""",
    ["(SELECT count(*) FROM m)", "(SELECT count(*) FROM r)", "(SELECT count(*) FROM w)"],
)

# Live memories of a scope by id ($1 ids, $2 scope key), for an operation's results.
_GET_MANY = f"""
SELECT {_MEMORY_COLUMNS} FROM {{schema}}.memories m
WHERE m.id = ANY($1::uuid[]) AND m.scope_key = $2 AND {_LIVE}
"""

# Quarantined memories, newest first: of one scope ($1), or of every scope ($1 NULL: the
# operator's queue), each with the guard's reason from its latest revision. $2 limit.
_QUARANTINED = f"""
SELECT {_MEMORY_COLUMNS}, r.labels::text FROM {{schema}}.memories m
LEFT JOIN LATERAL (
    SELECT labels FROM {{schema}}.memory_revisions x
     WHERE x.scope_key = {_real_key("m.scope_key")} AND x.memory_id = m.id
     ORDER BY x.create_time DESC LIMIT 1) r ON true
WHERE starts_with(m.scope_key, '{QUARANTINE_PREFIX}')
  AND ($1::text IS NULL OR m.scope_key = '{QUARANTINE_PREFIX}' || $1)
ORDER BY m.update_time DESC, m.id DESC
LIMIT $2
"""

# Approve: the memory moves back under its scope's key ($1 id, $2 scope key, $3 labels,
# $4 revision ttl, $5 revision id), with an UPDATED revision. A replay finds the memory released
# (nothing to move) and returns it.
_RELEASE = f"""
WITH m AS (
    UPDATE {{schema}}.memories m SET scope_key = $2, update_time = now()
     WHERE m.id = $1::uuid AND m.scope_key = '{QUARANTINE_PREFIX}' || $2
    RETURNING m.*
), r AS (
{
    _revision_of_m(
        "UPDATED", revision_id="$5::uuid", extracted="'{{}}'::text[]", labels="$3::jsonb", ttl="$4"
    )
}
)
SELECT {_MEMORY_COLUMNS} FROM m
UNION ALL
{_MINE.format(memory="$1", scope_key="$2", revision="$5")}
"""

_GET = f"""
SELECT {_MEMORY_COLUMNS} FROM {{schema}}.memories m
WHERE m.id = $1::uuid AND m.scope_key = $2 AND {_LIVE}
"""

# $1 scope key (NULL: every scope's facts, for operators: never a procedure, whose text only
# `procedure_rule` may show, and which exports would turn into anyone's memory), $2..$5 filters,
# $6/$7 the last row of the previous page (update time, id), $8 page size, $9 quarantined
# memories too (the scope's, or with $1 NULL every scope's; never without it), each marked by
# the last column. Newest first.
_LIST = f"""
SELECT {_MEMORY_COLUMNS}, starts_with(m.scope_key, '{QUARANTINE_PREFIX}')
FROM {{schema}}.memories m
WHERE ($1::text IS NULL OR m.scope_key = $1
       OR ($9::boolean AND m.scope_key = '{QUARANTINE_PREFIX}' || $1))
  AND ($9::boolean OR NOT starts_with(m.scope_key, '{QUARANTINE_PREFIX}'))
  AND ($1::text IS NOT NULL OR NOT (starts_with(m.scope_key, '{PROCEDURE_PREFIX}')
       OR starts_with(m.scope_key, '{QUARANTINE_PREFIX}{PROCEDURE_PREFIX}')))
  AND {_LIVE} {_filters(2)}
  AND ($6::timestamptz IS NULL OR (m.update_time, m.id) < ($6::timestamptz, $7::uuid))
ORDER BY m.update_time DESC, m.id DESC
LIMIT $8
"""

# The scopes that have memories ($1 containing them, e.g. {"app_name": ...}), in scope-key
# order after $2 (the previous page's last key; '' from the start), $3 at most: a loose index
# scan of `memories_by_scope` (one probe per distinct scope, never a pass over the memories).
# Quarantine keys are walked past, not returned: their scopes are the quarantine queue's.
_SCOPES = f"""
WITH RECURSIVE walk(scope_key) AS (
    (SELECT scope_key FROM {{schema}}.memories WHERE scope_key > $2 ORDER BY scope_key LIMIT 1)
    UNION ALL
    SELECT (SELECT m.scope_key FROM {{schema}}.memories m
             WHERE m.scope_key > w.scope_key ORDER BY m.scope_key LIMIT 1)
      FROM walk w WHERE w.scope_key IS NOT NULL
)
SELECT scope_key FROM walk
WHERE scope_key IS NOT NULL
  AND CASE WHEN starts_with(scope_key, '{QUARANTINE_PREFIX}')
             OR starts_with(scope_key, '{PROCEDURE_PREFIX}') THEN false
           ELSE scope_key::jsonb @> $1::jsonb END
LIMIT $3
"""

_REVISIONS = """
SELECT id::text, memory_id::text, scope::text, action, fact, extracted_facts, labels::text,
       source_type, source_session_id, source_event_ids, create_time, expire_time, confidence
FROM {schema}.memory_revisions
WHERE scope_key = $1 AND memory_id = $2::uuid AND (expire_time IS NULL OR expire_time > now())
ORDER BY create_time, id
"""

# Live memories' past revisions from another system (an import's), with their own times.
# $1 scope key (the live memories': a quarantined or deleted one gets none), $2 memory ids,
# $3 revision ids (each written once), $4 actions, $5 facts, $6 extracted facts (JSON arrays),
# $7 labels (JSON), $8 create times, $9 expire times.
_IMPORT_REVISIONS = """
INSERT INTO {schema}.memory_revisions
    (id, memory_id, scope_key, scope, action, fact, extracted_facts, labels, source_type,
     create_time, expire_time)
SELECT s.id, m.id, m.scope_key, m.scope, s.action, s.fact,
       ARRAY(SELECT jsonb_array_elements_text(s.extracted::jsonb)), s.labels::jsonb,
       m.source_type, s.create_time, s.expire_time
FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[],
            $8::timestamptz[], $9::timestamptz[])
     AS s(memory_id, id, action, fact, extracted, labels, create_time, expire_time)
JOIN {schema}.memories m ON m.id = s.memory_id AND m.scope_key = $1
ON CONFLICT (id) DO NOTHING
RETURNING id
"""

# One statement per search. $1 scope key, $2 query embedding (NULL: full-text only), $3 query
# words, $4 text-search config, $5 candidates per list, $6 top k, $7 RRF k, $8/$9/$10 relevance,
# recency and importance weights, $11 recency half-life in seconds, $12..$15 filters, $16 whether
# full-text search takes part (the vector search does when $2 is given), $17 query bigrams,
# $18 the cosine-similarity floor of vector candidates, $19 the text-relevance floor of
# full-text candidates, $20/$21 the start and end of the time window the query names (NULL: it
# names none; `temporal.find_window`), $22 the confidence weight, $23 the confidence half-life
# in seconds (NULL: no decay; `_effective_confidence`).
# Full-text matching is OR over the query's words and bigrams (a question rarely repeats all of
# a fact's words), ranked by BM25 (`_bm25`): each matched term weighs by its rarity in
# the scope (a speaker's name on every turn counts for little, a rare word for much), with
# document-length normalisation. How many memories hold each term is counted over the matched
# memories, so it is exact (every memory holding a query term matches the OR query) and needs
# no stored statistics; the scope's size is counted up to `_COUNTED`. A memory's text relevance
# is its BM25 over the best a memory of average length holding each query term would score:
# the share of the query's information it matches.
# The relevance floor applies to each list before fusion (rank fusion has no absolute scale):
# vector candidates below the similarity floor and text candidates below the text floor are
# dropped, so a question with nothing relevant returns nothing rather than the nearest noise.
# When the query names a time window, the scope's memories from then (create time: when the
# event happened, for a raw event's memory) are a third list, ranked by their fused relevance
# in the other two; those matching neither share the rank after them (each is as much "from
# last week" as another). "what did I say last week?" finds last week's memories with no
# content word to match; a memory matching the words and the time ranks above one matching
# either, and the window's best match for the words above the window's other memories. The
# list is bounded like the others: its best-matching, then newest, memories. The window is
# read apart (MATERIALIZED), from the index on (scope, create time), never by joining the
# candidates to the whole table.
# The lists are fused by reciprocal rank, normalised so that being first in every list taking
# part scores 1 (equally relevant memories share a rank), then blended with recency (halving
# every half-life) and importance. The full-precision distance each result reports is computed for
# the top k only, not for every candidate: big vectors are TOASTed, so each one read is a
# lookup in the TOAST table.
# The vector list (`_vector_search`) is an exact search of the scope when its vectors are small
# enough to sit, in half precision, in the covering index `memories_scope_vectors` (an
# index-only scan reads a scope's vectors from a few contiguous pages instead of one heap page
# per memory: 20 times fewer pages for a scope of 10k memories). Bigger vectors (up to 8,000
# dimensions) sit there binary-quantised: the scope's nearest bit vectors are re-ranked by their
# full-precision vectors (exact in scopes of up to 200 memories; in bigger ones recall@10 0.997
# measured at 1,536 dimensions, 3 times faster than an exact scan, which reads one TOASTed
# vector per memory, and 20 times faster than HNSW filtered by the scope: see
# `db.vectors.QUANTIZED`). Without a filter the statement names no other column, so the scan
# stays index-only.
_RETRIEVE = f"""
WITH vec AS (
    SELECT id, rank() OVER (ORDER BY distance) AS rank FROM ({{nearest}}) v
     WHERE v.distance <= 1 - $18::float8
), query AS MATERIALIZED (
    SELECT {_tsquery("$4", words="$3", grams="$17")} AS q,
           tsvector_to_array({_fts("$4", words="$3", grams="$17")}) AS terms
), matched AS MATERIALIZED (
    SELECT m.id, m.fts FROM {{schema}}.memories m, query
     WHERE $16 AND query.q IS NOT NULL AND m.scope_key = $1 AND m.fts @@ query.q
       AND {_LIVE} {{filters}}
), hits AS (
    SELECT m.id, length(m.fts) AS len, w.term AS lexeme
      FROM matched m JOIN ({_term_queries("(SELECT terms FROM query)")}) w ON m.fts @@ w.tq
), corpus AS (
    SELECT ({_SCOPE_SIZE}) AS n,
           (SELECT avg(length(fts))::float8 FROM matched) AS avg_len
), idf AS (
    SELECT q.term, {_idf("greatest(c.n, count(h.id))", "count(h.id)")} AS idf
      FROM query, unnest(query.terms) q(term) CROSS JOIN corpus c
      LEFT JOIN hits h ON h.lexeme = q.term
     GROUP BY q.term, c.n
), txt AS (
    SELECT id, rank() OVER (ORDER BY bm25 DESC) AS rank FROM (
        SELECT h.id, sum({_bm25("i.idf", "h.len", "c.avg_len")}) AS bm25
          FROM hits h JOIN idf i ON i.term = h.lexeme CROSS JOIN corpus c
         GROUP BY h.id
         ORDER BY bm25 DESC, h.id
         LIMIT $5) t
     WHERE t.bm25 >= $19::float8 * (SELECT sum(idf) FROM idf)
), content AS (
    SELECT id, sum(1.0 / ($7 + rank)) AS rrf
      FROM (SELECT id, rank FROM vec UNION ALL SELECT id, rank FROM txt) candidates
     GROUP BY id
), windowed AS MATERIALIZED (
    SELECT m.id, m.create_time FROM {{schema}}.memories m
     WHERE $20::timestamptz IS NOT NULL AND m.scope_key = $1
       AND m.create_time >= $20::timestamptz AND m.create_time < $21::timestamptz
       AND {_LIVE} {{filters}}
), dated AS (
    SELECT id, rank() OVER (ORDER BY rrf DESC NULLS LAST) AS rank FROM (
        SELECT w.id, c.rrf FROM windowed w LEFT JOIN content c ON c.id = w.id
         ORDER BY c.rrf DESC NULLS LAST, w.create_time DESC, w.id
         LIMIT $5) d
), fused AS (
    SELECT id, sum(rrf) AS rrf
      FROM (SELECT id, rrf FROM content
            UNION ALL SELECT id, 1.0 / ($7 + rank) FROM dated) candidates
     GROUP BY id
)
SELECT {_MEMORY_COLUMNS},
       CASE WHEN $2::vector IS NULL THEN NULL ELSE m.embedding <=> $2::vector END,
       m.score
FROM (
    SELECT m.*,
           $8 * f.rrf * ($7 + 1.0)
              / ((CASE WHEN $2::vector IS NULL THEN 0 ELSE 1 END)
                 + (CASE WHEN $16 THEN 1 ELSE 0 END)
                 + (CASE WHEN $20::timestamptz IS NULL THEN 0 ELSE 1 END))
         + $9 * power(0.5, extract(epoch FROM now() - m.update_time) / $11)
         + $10 * coalesce(m.importance, 0.5)
         + $22::float8 * coalesce({_effective_confidence("$23")}, 0.5) AS score
      FROM fused f JOIN {{schema}}.memories m ON m.id = f.id
     ORDER BY score DESC, m.id
     LIMIT $6) m
ORDER BY m.score DESC, m.id
"""

# Typed, unused filter parameters: the statement keeps its numbering without naming a column.
_NO_FILTERS = """
    AND $12::text[] IS NULL AND $13::jsonb IS NULL AND $14::timestamptz IS NULL
    AND $15::timestamptz IS NULL"""

RERANKED_MIN = 200
"""With the `QUANTIZED` strategy, the bit vectors nearest to the query that are re-ranked by
their full-precision vectors: twice the candidates asked for, and at least this many, so a
scope of up to this many memories is searched exactly. Measured (benchmarks/vector_sizes.py,
100k memories at 1,536 and 3,072 dimensions): recall@10 0.997 in scopes of 200 to 3,321
memories, 1.0 in those of over 1,000."""


def _nearest(distance: str, match: str, *, limit: str, where: str = "") -> str:
    """SQL for a scope's ($1) memories nearest by `distance` (ascending), at most `limit`, that
    `match` and `where` keep: (id, distance) rows. `{schema}` is left to format."""
    return f"""
        SELECT m.id, {distance} AS distance FROM {{schema}}.memories m
         WHERE m.scope_key = $1 AND {match} AND {_LIVE}{where}
         ORDER BY {distance}
         LIMIT {limit}"""


def _vector_search(
    strategy: str, *, query: str, half: str, bits: str, limit: str, where: str = ""
) -> str:
    """SQL for the scope's `limit` vectors nearest to `query` (a query vector's SQL; `half` and
    `bits`, its half-precision and binary forms, computed once) as `strategy` indexes them:
    (id, distance) rows, ascending.

    COVERED: exact, from the covering index's half-precision copies (index-only). QUANTIZED: the
    scope's bit vectors nearest by Hamming distance (index-only, from `memories_scope_bits`),
    `RERANKED_MIN` or twice `limit` of them, re-ranked by full-precision distance (one TOASTed
    vector read each). EXACT: the scope's rows in full precision."""
    if strategy == COVERED:
        return _nearest(
            f"m.embedding_half <=> {half}", "m.embedding_half IS NOT NULL", limit=limit, where=where
        )
    exact = f"m.embedding <=> {query}"
    if strategy != QUANTIZED:
        return _nearest(exact, "m.embedding IS NOT NULL", limit=limit, where=where)
    pool = _nearest(
        f"m.embedding_bits <~> {bits}",
        "m.embedding_bits IS NOT NULL",
        limit=f"greatest(2 * {limit}, {RERANKED_MIN})",
        where=where,
    )
    return f"""
        SELECT m.id, {exact} AS distance FROM {{schema}}.memories m
         WHERE m.scope_key = $1 AND m.id IN (SELECT p.id FROM ({pool}) p)
         ORDER BY distance
         LIMIT {limit}"""


def _retrieve_statement(schema: str, *, strategy: str, filtered: bool) -> str:
    """`_RETRIEVE` for vectors indexed by `strategy`, with or without filters. The query vector
    is cast to half precision (or quantised) once, in an InitPlan: a cast written inline is
    evaluated per row under a generic plan (the parameter is no constant), which doubled the cost
    of a 36k-memory scope's covered scan."""
    filters = _filters(12) if filtered else _NO_FILTERS
    nearest = _vector_search(
        strategy,
        query="$2::vector",
        half="(SELECT $2::vector::halfvec)",
        bits="(SELECT binary_quantize($2::vector))",
        limit="$5",
        where=f" AND $2::vector IS NOT NULL {filters}",
    )
    return _RETRIEVE.format(schema=schema, filters=filters, nearest=nearest.format(schema=schema))


# Consolidation's candidates: for every extracted fact of a job at once, its most similar live
# memories of the scope, in one statement (a LATERAL search per fact over the unnested facts),
# each memory once, in the order first found (by fact, then similarity: the prompt's order).
# Similarity alone ranks them: no recency or importance, no fusion. The per-fact search is the
# one `_RETRIEVE` runs for vectors (`_vector_search`); full-text, for facts without embeddings
# (no embedder), is `_TEXT_CANDIDATES`. Only ids are read per fact, so the covered search stays
# an index-only scan; the rows are read once, at the end.
# $1 scope key, $2 the facts' embeddings (vector text) or texts, $3 candidates per fact,
# $4 the facts' text-search configs and $5 their bigrams (full-text only: $2 holds their words).
_CANDIDATES = f"""
WITH facts AS MATERIALIZED (
    SELECT f.ord, {{query}}
      FROM {{facts}}
), found AS (
    SELECT c.id, min(ARRAY[f.ord, c.pos]) AS first
      FROM facts f CROSS JOIN LATERAL (
          SELECT s.id, row_number() OVER (ORDER BY s.distance, s.id) AS pos
            FROM ({{nearest}}) s) c
     GROUP BY c.id
)
SELECT {_MEMORY_COLUMNS} FROM found JOIN {{schema}}.memories m ON m.id = found.id
ORDER BY found.first
"""


def _candidates_statement(schema: str, strategy: str) -> str:
    """`_CANDIDATES` by vectors indexed by `strategy`. A fact's vector is cast once per fact
    (in `facts`), not per memory compared."""
    nearest = _vector_search(strategy, query="f.query", half="f.half", bits="f.bits", limit="$3")
    return _CANDIDATES.format(
        schema=schema,
        facts="unnest($2::text[]) WITH ORDINALITY AS f(fact, ord)",
        query="f.fact::vector AS query, f.fact::vector::halfvec AS half, "
        "binary_quantize(f.fact::vector) AS bits",
        nearest=nearest.format(schema=schema),
    )


# Whether the server has a text-search configuration of this name ($1).
_TEXT_CONFIG_EXISTS = "SELECT count(*) FROM pg_catalog.pg_ts_config WHERE cfgname = $1"

_ALL_FACT_TERMS = "(SELECT array_agg(DISTINCT t) FROM facts, unnest(terms) t)"
"""Every term of a job's facts, once (`_TEXT_CANDIDATES`)."""

# The full-text form of `_CANDIDATES` (no embedder): each fact's most similar memories by the
# BM25 ranking `_RETRIEVE` uses (each fact's average length over the memories it matches, as a
# search for it alone takes it), term statistics taken once over the memories any fact matches.
# $1 scope key, $2 the facts' words, $3 candidates per fact, $4 their text-search configs,
# $5 their bigrams.
_TEXT_CANDIDATES = f"""
WITH facts AS MATERIALIZED (
    SELECT f.ord, x.query, tsvector_to_array(x.vector) AS terms
      FROM unnest($2::text[], $5::text[], $4::text[])
           WITH ORDINALITY AS f(fact, grams, config, ord),
           LATERAL (SELECT {_tsquery("f.config", words="f.fact", grams="f.grams")} AS query,
                           {_fts("f.config", words="f.fact", grams="f.grams")} AS vector) x
     WHERE x.query IS NOT NULL
), matched AS MATERIALIZED (
    SELECT DISTINCT m.id, m.fts FROM {{schema}}.memories m
     WHERE m.scope_key = $1 AND {_LIVE}
       AND m.fts @@ ANY (SELECT query FROM facts)
), hits AS (
    SELECT m.id, length(m.fts) AS len, w.term AS lexeme
      FROM matched m JOIN ({_term_queries(_ALL_FACT_TERMS)}) w ON m.fts @@ w.tq
), idf AS (
    SELECT h.lexeme, {_idf(f"greatest(({_SCOPE_SIZE}), count(*))", "count(*)")} AS idf
      FROM hits h GROUP BY h.lexeme
), lengths AS (
    SELECT f.ord, avg(length(m.fts))::float8 AS avg_len
      FROM facts f JOIN matched m ON m.fts @@ f.query GROUP BY f.ord
), scored AS (
    SELECT f.ord, h.id,
           sum({_bm25("i.idf", "h.len", "l.avg_len")}) AS bm25
      FROM facts f JOIN lengths l ON l.ord = f.ord, unnest(f.terms) q(term)
      JOIN hits h ON h.lexeme = q.term JOIN idf i ON i.lexeme = q.term
     GROUP BY f.ord, h.id
), ranked AS (
    SELECT ord, id, row_number() OVER (PARTITION BY ord ORDER BY bm25 DESC, id) AS pos
      FROM scored
), found AS (
    SELECT id, min(ARRAY[ord, pos]) AS first FROM ranked WHERE pos <= $3 GROUP BY id
)
SELECT {_MEMORY_COLUMNS} FROM found JOIN {{schema}}.memories m ON m.id = found.id
ORDER BY found.first
"""

# Re-indexing the full text (`MemoryStore.reindex_text`): the next batch of memories after an id
# ($1, NULL: from the start; $2 rows), and the new tsvectors for a batch ($1 configs, $2 ids,
# $3 facts, $4 words, $5 bigrams). A memory whose fact changed since it was read is left alone:
# the write that changed it indexed it. Neither statement touches update_time (recency) or
# writes a revision: the index is derived from the fact, not part of the memory.
_REINDEX_BATCH = """
SELECT m.id::text, m.fact FROM {schema}.memories m
 WHERE $1::uuid IS NULL OR m.id > $1::uuid
 ORDER BY m.id
 LIMIT $2
"""

_REINDEX = f"""
UPDATE {{schema}}.memories m
   SET fts = {_fts("u.config", words="u.words", grams="u.grams")}
  FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[])
       AS u(config, id, fact, words, grams)
 WHERE m.id = u.id AND m.fact = u.fact
"""

# Expired memories are deleted with a DELETED revision (labelled), so their history says why.


def _deleting_labelled(where: str, reason: str, limit: str, ttl: str) -> str:
    """CTEs `m` and `r`: up to `limit` memories matching `where` (over `m`) deleted, each with a
    DELETED revision labelled with `reason` (kept `ttl` seconds)."""
    revision = _revision_of_m(
        "DELETED",
        revision_id="gen_random_uuid()",
        extracted="'{{}}'::text[]",
        labels=f"""'{{{{"reason": "{reason}"}}}}'::jsonb""",
        ttl=ttl,
    )
    return f"""
m AS (
    DELETE FROM {{schema}}.memories m WHERE m.ctid = ANY(ARRAY(
        SELECT m.ctid FROM {{schema}}.memories m WHERE {where} LIMIT {limit}))
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
_SWEEP_REVISIONS = """
WITH gone AS (
    DELETE FROM {schema}.memory_revisions WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM {schema}.memory_revisions
         WHERE expire_time <= now() AND action <> 'DELETED' LIMIT $1))
    RETURNING 1
), emptied AS (
    UPDATE {schema}.memory_revisions
       SET fact = NULL, extracted_facts = '{{}}', labels = '{{}}', expire_time = NULL
     WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM {schema}.memory_revisions
         WHERE expire_time <= now() AND action = 'DELETED' LIMIT $1))
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
           AND {_effective_confidence("$3")} < $4::float8 AND {FIRST_ATTEMPT}""",
        "low_confidence",
        "$5",
        "$6",
    ),
    ["(SELECT count(*) FROM m)"],
)

# What the trust rule needs of a scope's ($1) memories ($2 ids): per memory, the sources (a
# session id, or for a write without one, its revision's id: a source of its own) that wrote
# or corroborated it, and those whose change to it was blocked (revisions labelled
# `trust: blocked`).
_TRUST_HISTORY = """
SELECT r.memory_id::text,
       array_agg(DISTINCT coalesce(r.source_session_id, r.id::text))
           FILTER (WHERE r.labels->>'trust' IS DISTINCT FROM 'blocked'),
       array_agg(DISTINCT coalesce(r.source_session_id, r.id::text))
           FILTER (WHERE r.labels->>'trust' = 'blocked')
FROM {schema}.memory_revisions r
WHERE r.scope_key = $1 AND r.memory_id = ANY($2::uuid[])
GROUP BY r.memory_id
"""


@dataclass(frozen=True)
class NewMemory:
    """Everything needed to insert one memory (the service fills it in)."""

    id: str
    scope_key: str
    scope: dict[str, str]
    fact: str
    topics: Sequence[str] = ()
    metadata: dict[str, Any] | None = None
    content: dict[str, Any] | None = None
    importance: float | None = None
    confidence: float | None = None
    source_type: SourceType = SourceType.BOOTSTRAPPED
    source_session_id: str | None = None
    source_event_ids: Sequence[str] = ()
    embedding: Sequence[float] | None = None
    create_time: datetime | None = None
    """When the memory is from (None: now): a raw event's time, an imported entry's."""
    update_time: datetime | None = None
    """When its fact was last set (None: now): an imported entry's own time, so recency and the
    time ADK's `MemoryEntry` shows are the entry's, not the import's."""
    ttl_seconds: float | None = None
    extracted_facts: Sequence[str] = ()
    labels: dict[str, str] | None = None
    revision_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    """The CREATED revision's id, chosen here (before the first attempt) so that a replay of the
    insert after a lost reply recognises its own write: one object is one write, never reused."""


@dataclass(frozen=True)
class Search:
    """One retrieval, as `MemoryStore.retrieve` runs it. Vector search takes part when a
    query embedding is given, full-text when `use_text`. `floors`: the least cosine similarity
    of a vector candidate and the least text relevance (0..1) of a full-text candidate.
    `window`: the [start, end) the query asks about, whose memories (by create time) are a
    third candidate list."""

    scope_key: str
    query_text: str
    query_embedding: Sequence[float] | None
    top_k: int
    candidates: int
    rrf_k: int
    weights: tuple[float, float, float]
    """Relevance, recency and importance."""
    half_life_seconds: float
    flt: MemoryFilter | None
    use_text: bool = True
    floors: tuple[float, float] = (-1.0, 0.0)
    window: tuple[datetime, datetime] | None = None
    confidence_weight: float = 0.0
    confidence_half_life_seconds: float | None = None
    """Effective confidence's half-life (None: no decay)."""


@dataclass(frozen=True)
class MemoryChange:
    """A partial update: None fields are kept as they are."""

    fact: str | None = None
    topics: Sequence[str] | None = None
    metadata: dict[str, Any] | None = None
    importance: float | None = None
    confidence: float | None = None
    embedding: Sequence[float] | None = None
    ttl_seconds: float | None = None
    extracted_facts: Sequence[str] = ()
    labels: dict[str, str] | None = None
    source_type: SourceType | None = None
    source_session_id: str | None = None
    source_event_ids: Sequence[str] | None = None
    revision_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    """The UPDATED revision's id: the update's token for its replay (see `NewMemory`)."""
    touch: bool = True
    """Whether the update time moves (recency, decay's start); False for a change of confidence
    alone that confirms nothing (a blocked contradiction)."""


@dataclass(frozen=True)
class MemoryUpdate:
    """One memory a generation changes (`MemoryChange`), by id and scope key."""

    memory_id: str
    scope_key: str
    change: MemoryChange


@dataclass(frozen=True)
class MemoryDeletion:
    """One memory a generation deletes, with its DELETED revision's extracted facts, labels
    and id (chosen once, so a replay writes the same revision)."""

    memory_id: str
    scope_key: str
    extracted_facts: Sequence[str]
    labels: dict[str, str]
    revision_id: str = field(default_factory=lambda: str(uuid.uuid4()))


@dataclass(frozen=True)
class Watermark:
    """The last event of a session (`time`: its timestamp) turned into memories of a scope."""

    scope_key: str
    session_id: str
    event_id: str
    time: float


@dataclass(frozen=True)
class GenerationWrites:
    """Everything one generation writes to the memories, applied together
    (`MemoryStore.apply_generation`)."""

    creates: Sequence[NewMemory] = ()
    updates: Sequence[MemoryUpdate] = ()
    deletes: Sequence[MemoryDeletion] = ()
    watermark: Watermark | None = None


def _vector(values: Sequence[float] | None) -> str | None:
    """A vector in pgvector's text form, each value as the float4 it is stored as (what
    `pgvector.Vector(...).to_text()` writes, without its per-value conversions)."""
    if values is None:
        return None
    return "[" + ",".join(map(repr, array("f", values).tolist())) + "]"


def _json_list(values: Sequence[str]) -> str:
    """A list as JSON text (most lists of a batch are empty: no encoder call for those)."""
    return json.dumps(list(values)) if values else "[]"


def _json(value: Any) -> str | None:
    return None if value is None else dump_json(value)


def _memory(row: asyncpg.Record) -> Memory:
    return Memory(
        id=row[0],
        scope=json.loads(row[1]),
        fact=row[2],
        content=json.loads(row[3]) if row[3] is not None else None,
        topics=list(row[4]),
        metadata=json.loads(row[5]),
        importance=row[6],
        confidence=row[7],
        source_type=SourceType(row[8]),
        source_session_id=row[9],
        source_event_ids=list(row[10]),
        create_time=row[11],
        update_time=row[12],
        expire_time=row[13],
        memory_type=row[14],
    )


def _revision(row: asyncpg.Record) -> MemoryRevision:
    return MemoryRevision(
        id=row[0],
        memory_id=row[1],
        scope=json.loads(row[2]),
        action=MemoryAction(row[3]),
        fact=row[4],
        extracted_facts=list(row[5]),
        labels=json.loads(row[6]),
        source_type=SourceType(row[7]) if row[7] else None,
        source_session_id=row[8],
        source_event_ids=list(row[9]),
        create_time=row[10],
        expire_time=row[11],
        confidence=row[12],
    )


def _filter_args(flt: MemoryFilter | None) -> tuple[Any, ...]:
    if flt is None:
        return (None, None, None, None)
    topics = list(flt.topics) if flt.topics is not None else None
    return (topics, _json(flt.metadata), flt.updated_after, flt.updated_before)


class MemoryStore:
    """Runs the memory statements against one `Database` (and its schema)."""

    def __init__(self, db: Database, *, text_search_language: str = "english") -> None:
        self._db = db
        self._language = text_search_language
        schema = db.schema
        self._insert = _INSERT.format(schema=schema)
        self._insert_many = _INSERT_MANY.format(schema=schema)
        self._update = _UPDATE.format(schema=schema)
        self._delete = _DELETE.format(schema=schema)
        self._delete_one = _DELETE_ONE.format(schema=schema)
        self._purge = _PURGE.format(schema=schema)
        self._erase = _ERASE.format(schema=schema)
        self._get_many = _GET_MANY.format(schema=schema)
        self._quarantined = _QUARANTINED.format(schema=schema)
        self._release = _RELEASE.format(schema=schema)
        self._get = _GET.format(schema=schema)
        self._list = _LIST.format(schema=schema)
        self._revisions = _REVISIONS.format(schema=schema)
        self._scopes = _SCOPES.format(schema=schema)
        self._import_revisions = _IMPORT_REVISIONS.format(schema=schema)
        self._text_candidates = _TEXT_CANDIDATES.format(schema=schema)
        self._search_vectors(EXACT)  # until `prepare_embeddings` says how they are indexed
        self._sweep_memories = _SWEEP_MEMORIES.format(schema=schema)
        self._reindex_batch = _REINDEX_BATCH.format(schema=schema)
        self._reindex = _REINDEX.format(schema=schema)
        self._sweep_revisions = _SWEEP_REVISIONS.format(schema=schema)
        self._watermark = _WATERMARK.format(schema=schema)
        self._derived_from = _DERIVED_FROM.format(schema=schema)
        self._set_watermark = _SET_WATERMARK.format(schema=schema)
        self._processed_until = _PROCESSED_UNTIL.format(schema=schema)
        self._prune = _PRUNE.format(schema=schema)
        self._trust_history = _TRUST_HISTORY.format(schema=schema)

    def _searchable(self, text: str) -> SearchText:
        """`text` as this store indexes and queries it (its configuration, or the detected
        one when the store's language is "auto")."""
        return search_text(text, self._language)

    async def ready(self) -> None:
        """Migrate (or check) the memory tables, and check that the server has this store's
        text-search configuration (a misspelt one would otherwise fail every write and search
        with a raw database error); cheap after the first call."""
        await self._db.ensure_migrated("memory", MEMORY_MIGRATIONS)
        if self._language == AUTO:
            return
        known = await self._db.run(lambda conn: conn.fetchval(_TEXT_CONFIG_EXISTS, self._language))
        if not known:
            raise InputValidationError(
                f"Unknown text_search_language {self._language!r}: the server has no such "
                "text-search configuration (see `SELECT cfgname FROM pg_ts_config`), or use "
                '"auto".'
            )

    async def prepare_embeddings(self, dimensions: int) -> None:
        """Make sure the embedding column and vector index fit `dimensions` (the migrations own
        that DDL: `Database.ensure_vectors`), and search the way they are built. A dimension
        other than the stored vectors' is an `EmbeddingDimensionError`."""
        state = await self._db.ensure_vectors(dimensions)
        self._search_vectors(state.strategy)

    def _search_vectors(self, strategy: str) -> None:
        """Search vectors the way `strategy` indexes them."""
        schema = self._db.schema
        self._retrieve = {
            filtered: _retrieve_statement(schema, strategy=strategy, filtered=filtered)
            for filtered in (False, True)
        }
        self._vector_candidates = _candidates_statement(schema, strategy)

    def _insert_args(self, new: NewMemory, revision_ttl: float | None) -> tuple[Any, ...]:
        searchable = self._searchable(new.fact)
        return (
            new.id,
            new.scope_key,
            json.dumps(new.scope),
            new.fact,
            _json(new.content),
            list(new.topics),
            dump_json(new.metadata or {}),
            new.importance,
            new.confidence,
            new.source_type.value,
            new.source_session_id,
            list(new.source_event_ids),
            _vector(new.embedding),
            searchable.config,
            new.create_time,
            new.ttl_seconds,
            list(new.extracted_facts),
            json.dumps(new.labels or {}),
            revision_ttl,
            new.revision_id,
            searchable.words,
            searchable.grams,
            new.update_time,
        )

    async def insert_many(
        self, memories: Sequence[NewMemory], revision_ttl: float | None
    ) -> list[Memory]:
        """Create many memories, each with its CREATED revision, in one statement (all or
        none); the memories created, in no particular order. Ids that exist or existed before
        this call are skipped, and so is a repeated id after its first occurrence; a replay after
        a lost reply returns the memories its first attempt created."""
        first: dict[str, NewMemory] = {}
        for memory in memories:
            first.setdefault(memory.id, memory)
        unique = list(first.values())
        if not unique:
            return []
        scopes: dict[str, str] = {}
        for m in unique:  # a batch has one scope or a few: each written to JSON once
            if m.scope_key not in scopes:
                scopes[m.scope_key] = json.dumps(m.scope)
        searchable = [self._searchable(m.fact) for m in unique]
        args = (
            [m.id for m in unique],
            [m.scope_key for m in unique],
            [scopes[m.scope_key] for m in unique],
            [m.fact for m in unique],
            [_json(m.content) for m in unique],
            [_json_list(m.topics) for m in unique],
            [dump_json(m.metadata or {}) for m in unique],
            [m.importance for m in unique],
            [m.confidence for m in unique],
            [m.source_type.value for m in unique],
            [m.source_session_id for m in unique],
            [_json_list(m.source_event_ids) for m in unique],
            [_vector(m.embedding) for m in unique],
            [m.create_time for m in unique],
            [m.ttl_seconds for m in unique],
            [_json_list(m.extracted_facts) for m in unique],
            [json.dumps(m.labels) if m.labels else "{}" for m in unique],
            [m.revision_id for m in unique],
            [s.config for s in searchable],
            revision_ttl,
            [s.words for s in searchable],
            [s.grams for s in searchable],
            [m.update_time for m in unique],
        )
        rows = await self._db.run(lambda conn: conn.fetch(self._insert_many, *args))
        return [_memory(r) for r in rows]

    def _update_args(
        self, memory_id: str, scope_key: str, change: MemoryChange, revision_ttl: float | None
    ) -> tuple[Any, ...]:
        # The new fact's full text (none when the fact is kept).
        config, words, grams = (
            (None, None, None) if change.fact is None else self._searchable(change.fact)
        )
        return (
            memory_id,
            scope_key,
            change.fact,
            list(change.topics) if change.topics is not None else None,
            _json(change.metadata),
            change.importance,
            change.confidence,
            _vector(change.embedding),
            config,
            change.ttl_seconds,
            list(change.extracted_facts),
            json.dumps(change.labels or {}),
            revision_ttl,
            change.source_type.value if change.source_type else None,
            change.source_session_id,
            list(change.source_event_ids) if change.source_event_ids is not None else None,
            change.revision_id,
            words,
            grams,
            change.touch,
        )

    async def update(
        self, memory_id: str, scope_key: str, change: MemoryChange, revision_ttl: float | None
    ) -> Memory | None:
        """Apply `change` with an UPDATED revision; None if no live memory has that id here.
        Its replay after a lost reply returns the memory, with no second revision."""
        args = self._update_args(memory_id, scope_key, change, revision_ttl)
        row = await self._db.run(lambda conn: conn.fetchrow(self._update, *args))
        return None if row is None else _memory(row)

    async def delete(
        self,
        scope_key: str,
        memory_id: str,
        labels: dict[str, str] | None,
        revision_ttl: float | None,
    ) -> int:
        """Delete one memory with a DELETED revision; how many went (0 or 1, the same again for
        its replay after a lost reply)."""
        args: tuple[object, ...] = (
            scope_key,
            memory_id,
            json.dumps(labels or {}),
            revision_ttl,
            [],
            uuid.uuid4(),
        )
        return int(await self._db.run(lambda conn: conn.fetchval(self._delete_one, *args)))

    async def purge(self, scope_key: str) -> int:
        """Delete every memory (quarantined ones too), revision and watermark of the scope; how
        many rows went (its replay after a lost reply counts the same)."""
        request_id = uuid.uuid4()
        counts = await self._db.run(lambda conn: conn.fetchval(self._purge, scope_key, request_id))
        return int(counts[0])

    async def erase(
        self, containing: dict[str, str], request_id: uuid.UUID | None = None
    ) -> tuple[int, int, int]:
        """Delete the memories, revisions and watermarks of every scope containing
        `containing`; (memories, revisions, watermarks) deleted (the same again for a replay,
        or with the same `request_id`)."""
        args = (json.dumps(containing), request_id or uuid.uuid4())
        counts = await self._db.run(lambda conn: conn.fetchval(self._erase, *args))
        return int(counts[0]), int(counts[1]), int(counts[2])

    async def get_many(self, memory_ids: Sequence[str], scope_key: str) -> dict[str, Memory]:
        """The live memories of the scope among these ids, by id."""
        if not memory_ids:
            return {}
        ids = list(memory_ids)
        rows = await self._db.run(lambda conn: conn.fetch(self._get_many, ids, scope_key))
        return {memory.id: memory for memory in map(_memory, rows)}

    async def quarantined(
        self, scope_key: str | None, limit: int
    ) -> list[tuple[Memory, dict[str, str]]]:
        """Quarantined memories (of one scope, or of all), newest first, each with the labels
        of its latest revision (the guard's reason)."""
        rows = await self._db.run(lambda conn: conn.fetch(self._quarantined, scope_key, limit))
        return [(_memory(r), json.loads(r[15] or "{}")) for r in rows]

    async def release(
        self, memory_id: str, scope_key: str, labels: dict[str, str], revision_ttl: float | None
    ) -> Memory | None:
        """Move a quarantined memory back under its scope (an UPDATED revision with `labels`);
        None if no quarantined memory of the scope has that id (a replay after a lost reply
        returns the memory it released)."""
        args = (memory_id, scope_key, json.dumps(labels), revision_ttl, uuid.uuid4())
        row = await self._db.run(lambda conn: conn.fetchrow(self._release, *args))
        return None if row is None else _memory(row)

    async def get(self, memory_id: str, scope_key: str) -> Memory | None:
        """One live memory of the scope."""
        row = await self._db.run(lambda conn: conn.fetchrow(self._get, memory_id, scope_key))
        return None if row is None else _memory(row)

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
        args = (scope_key, *_filter_args(flt), *(after or (None, None)), limit, quarantined)
        rows = await self._db.run(lambda conn: conn.fetch(self._list, *args), replica=replica)
        return [
            _memory(r).model_copy(update={"quarantined": True}) if r[15] else _memory(r)
            for r in rows
        ]

    async def revisions(
        self, memory_id: str, scope_key: str, *, replica: bool | ReadFor = False
    ) -> list[MemoryRevision]:
        """A memory's revisions, oldest first (also after the memory was deleted)."""
        rows = await self._db.run(
            lambda conn: conn.fetch(self._revisions, scope_key, memory_id), replica=replica
        )
        return [_revision(r) for r in rows]

    async def scopes(self, containing: dict[str, str], after: str, limit: int) -> list[str]:
        """The keys of the scopes with memories that contain `containing`, in key order after
        `after` ('' from the start), at most `limit` (an operator's listing)."""
        args = (json.dumps(containing), after, limit)
        rows = await self._db.run(lambda conn: conn.fetch(self._scopes, *args))
        return [row[0] for row in rows]

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
            [_json_list(r.extracted_facts) for r in revisions],
            [json.dumps(r.labels) for r in revisions],
            [r.create_time for r in revisions],
            [r.expire_time for r in revisions],
        )
        rows = await self._db.run(lambda conn: conn.fetch(self._import_revisions, *args))
        return len(rows)

    def retrieval(self, search: Search) -> tuple[str, tuple[Any, ...]]:
        """The statement `retrieve` runs for `search`, and its arguments (benchmarks EXPLAIN
        them as they run)."""
        query = self._searchable(search.query_text)
        args = (
            search.scope_key,
            _vector(search.query_embedding),
            query.words,
            query.config,
            search.candidates,
            search.top_k,
            search.rrf_k,
            *search.weights,
            search.half_life_seconds,
            *_filter_args(search.flt),
            search.use_text,
            query.grams,
            *search.floors,
            *(search.window or (None, None)),
            search.confidence_weight,
            search.confidence_half_life_seconds,
        )
        return self._retrieve[search.flt is not None], args

    async def retrieve(
        self, search: Search, *, replica: bool | ReadFor = False
    ) -> list[tuple[Memory, float | None, float]]:
        """The `top_k` best memories for `search`: (memory, cosine distance, score), best
        first."""
        statement, args = self.retrieval(search)
        rows = await self._db.run(lambda conn: conn.fetch(statement, *args), replica=replica)
        return [(_memory(r), r[15], float(r[16])) for r in rows]

    async def candidates(
        self,
        scope_key: str,
        *,
        facts: Sequence[str],
        embeddings: Sequence[Sequence[float]] | None,
        per_fact: int,
    ) -> list[Memory]:
        """For every fact at once (one statement), its `per_fact` most similar live memories
        of the scope: by vector distance when `embeddings` (one per fact) are given, else by
        full-text relevance. Each memory once, in the order first found: by fact, then by
        similarity."""
        if not facts:
            return []
        if embeddings is None:
            statement = self._text_candidates
            searchable = [self._searchable(fact) for fact in facts]
            args: tuple[Any, ...] = (
                scope_key,
                [s.words for s in searchable],
                per_fact,
                [s.config for s in searchable],
                [s.grams for s in searchable],
            )
        else:
            statement = self._vector_candidates
            args = (scope_key, [_vector(e) for e in embeddings], per_fact)
        return [_memory(r) for r in await self._db.run(lambda conn: conn.fetch(statement, *args))]

    async def derived_from(self, scope_key: str, session_id: str) -> list[tuple[str, list[str]]]:
        """(memory id, facts extracted from its other sources) for each memory of the scope
        derived, even in part, from the session."""
        rows = await self._db.run(
            lambda conn: conn.fetch(self._derived_from, scope_key, session_id)
        )
        return [(r[0], list(r[1])) for r in rows]

    async def watermark(self, scope_key: str, session_id: str) -> tuple[str, float] | None:
        """The last event of a session already turned into memories of this scope."""
        row = await self._db.run(lambda conn: conn.fetchrow(self._watermark, scope_key, session_id))
        return None if row is None else (row[0], row[1])

    async def processed_until(self, sources: Sequence[tuple[str, str]]) -> list[float | None]:
        """For each (scope key, session id): the timestamp of the session's last event already
        turned into memories of that scope, or None; in the order given, in one query."""
        if not sources:
            return []
        keys = [scope_key for scope_key, _ in sources]
        sessions = [session_id for _, session_id in sources]
        rows = await self._db.run(lambda conn: conn.fetch(self._processed_until, keys, sessions))
        return [row[0] for row in rows]

    async def apply_generation(
        self, conn: asyncpg.Connection, writes: GenerationWrites, revision_ttl: float | None
    ) -> list[tuple[MemoryAction, Memory]]:
        """Apply a generation's creates, updates and deletes and move the session's watermark,
        on `conn`, inside the caller's transaction (the job queue's `finish`, which checked
        that the try still owns its job and completes it in the same transaction); what was
        applied (a write whose memory is gone is skipped)."""
        applied: list[tuple[MemoryAction, Memory]] = []
        for new in writes.creates:
            row = await conn.fetchrow(self._insert, *self._insert_args(new, revision_ttl))
            if row is not None:
                applied.append((MemoryAction.CREATED, _memory(row)))
        for update in writes.updates:
            args = self._update_args(
                update.memory_id, update.scope_key, update.change, revision_ttl
            )
            row = await conn.fetchrow(self._update, *args)
            if row is not None:
                applied.append((MemoryAction.UPDATED, _memory(row)))
        for gone in writes.deletes:
            rows = await conn.fetch(
                self._delete,
                gone.scope_key,
                gone.memory_id,
                json.dumps(gone.labels),
                revision_ttl,
                list(gone.extracted_facts),
                gone.revision_id,
            )
            applied.extend((MemoryAction.DELETED, _memory(r)) for r in rows)
        if (mark := writes.watermark) is not None:
            await conn.execute(
                self._set_watermark, mark.scope_key, mark.session_id, mark.event_id, mark.time
            )
        return applied

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
