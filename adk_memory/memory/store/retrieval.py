"""Retrieval: the hybrid search statement (BM25 full text, vector nearest neighbours, a time
window, fused by reciprocal rank and blended with recency, importance and confidence) and
consolidation's candidates, with the builders that shape them to how the vectors are indexed.

Owns: every ranking statement on the memories (and all pgvector-specific queries), each
filtered by the canonical scope key so no search reaches another scope's rows, and the typed
arguments of a search (`Search`, bound through `_RetrieveArgs`). It never writes and never
changes the schema: the vector column and index are migrations (`db.vectors.VECTOR_STRATEGIES`)
that `MemoryStore.prepare_embeddings` asks for; `use_vectors` only picks the statements.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...db import rls
from ...db.engine import Database
from ...db.replica import ReadFor
from ...db.vectors import COVERED, EXACT, QUANTIZED
from ..models import Memory, MemoryFilter
from ..text import SearchText, as_query, foreign_language, own_stemmer
from .ranking import (
    GATE,
    LOOSE_MATCHED,
    LOOSE_TERMS,
    LOOSE_WEIGHT,
    NO_LOOSE_MATCHED,
    NO_LOOSE_TERMS,
    QUERY_WORDS,
    SCOPE_SIZE,
    TEXT_BREVITY,
    bm25,
    brevity,
    idf,
    term_queries,
    turn_length,
)
from .rows import expression_args, filter_args, memory_of, vector_text
from .sql import LIVE, MEMORY_COLUMNS, bind, effective_confidence, filter_sql, fts, tsquery


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
    turn_length_prior: float = 0.0
    """Dialogue turns shorter than this share of the candidates' average turn length weigh
    proportionally less (`brevity`; 0: off)."""


@dataclass(frozen=True)
class _RetrieveArgs:
    """`_RETRIEVE`'s parameters, $1.. in field order (`sql.bind`)."""

    scope_key: str
    query_vector: str | None  # the query embedding (NULL: full-text only)
    query_words: str
    config: str  # the query's text-search configuration
    candidates: int  # per list
    top_k: int
    rrf_k: int
    relevance_weight: float
    recency_weight: float
    importance_weight: float
    half_life_seconds: float  # recency's
    topics: list[str] | None  # $12..$15: the filters (`sql.filter_sql`)
    metadata: str | None
    updated_after: datetime | None
    updated_before: datetime | None
    use_text: bool  # whether full-text search takes part (the vector search does with a vector)
    query_grams: str
    similarity_floor: float  # the least cosine similarity of a vector candidate
    text_floor: float  # the least text relevance of a full-text candidate
    window_start: datetime | None  # the time window the query names (`temporal.find_window`)
    window_end: datetime | None
    confidence_weight: float
    confidence_half_life_seconds: float | None  # None: no decay (`sql.effective_confidence`)
    filter_path: str | None  # $24/$25: Memory Bank's filters, compiled (`sql.filter_sql`)
    filter_variables: str | None
    loose: bool  # $26: whether query words no memory holds are looked for by prefix
    stop_config: str | None  # $27: the configuration whose stop words the query drops
    turn_length_prior: float  # $28: `brevity`'s share (0: off)


# One statement per search; its parameters: `_RetrieveArgs`.
# Full-text matching is OR over the query's words and bigrams (a question rarely repeats all of
# a fact's words), ranked by BM25 (`bm25`): each matched term weighs by its rarity in
# the scope (a speaker's name on every turn counts for little, a rare word for much), with
# document-length normalisation. How many memories hold each term is counted over the matched
# memories, so it is exact (every memory holding a query term matches the OR query) and needs
# no stored statistics; the scope's size is counted up to `_COUNTED`. A memory's text relevance
# is its BM25 over the best a memory of average length holding each query term would score:
# the share of the query's information it matches. Query terms no memory holds may be looked
# for by prefix (`LOOSE_TERMS`: `loose`, read apart like `matched`), their hits scored with
# the exact ones.
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
# Dialogue turns among the candidates are weighed by their length (`brevity`, share $28): the
# vector list is ranked by similarity times the weight, against the average of its turns, and
# the fused relevance is multiplied by it, against the fused candidates' (the text list too
# when it is the only one: `TEXT_BREVITY`). Reading a vector candidate's length and metadata
# is one row lookup each, skipped when the weight is off.
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
WITH near AS (
    SELECT v.id, v.distance, t.len FROM ({{nearest}}) v
      LEFT JOIN LATERAL (
          SELECT {turn_length("t")} AS len FROM {{schema}}.memories t
           WHERE t.id = v.id AND t.scope_key = $1 AND $28::float8 > 0 AND {GATE}) t ON true
     WHERE v.distance <= 1 - $18::float8
), vec AS (
    SELECT id, rank() OVER (
               ORDER BY (1 - distance) * {brevity("len", "(SELECT avg(len) FROM near)", "$28")}
               DESC) AS rank
      FROM near
), query AS MATERIALIZED (
    SELECT {tsquery("$4", words="{words}", grams="$17")} AS q,
           tsvector_to_array({fts("$4", words="{words}", grams="$17")}) AS terms
), matched AS MATERIALIZED (
    SELECT m.id, m.fts, {turn_length("m")} AS turn_len FROM {{schema}}.memories m, query
     WHERE $16 AND query.q IS NOT NULL AND m.scope_key = $1 AND m.fts @@ query.q
       AND {LIVE} AND {GATE} {{filters}}
), hits AS MATERIALIZED (
    SELECT m.id, length(m.fts) AS len, m.turn_len AS tl, w.term AS lexeme
      FROM matched m JOIN ({term_queries("(SELECT terms FROM query)")}) w ON m.fts @@ w.tq
), loose AS MATERIALIZED (
    {{loose_terms}}
), loose_matched AS MATERIALIZED (
    {{loose_matched}}
), loose_hits AS (
    SELECT m.id, length(m.fts) AS len, m.turn_len AS tl, l.term AS lexeme
      FROM loose_matched m JOIN loose l ON m.fts @@ l.tq
), corpus AS (
    SELECT ({SCOPE_SIZE}) AS n,
           (SELECT avg(length(fts))::float8
              FROM (SELECT fts FROM matched UNION ALL SELECT fts FROM loose_matched) a) AS avg_len
), idf AS (
    SELECT q.term, {idf("greatest(c.n, count(h.id))", "count(h.id)")} AS idf
      FROM query, unnest(query.terms) q(term) CROSS JOIN corpus c
      LEFT JOIN hits h ON h.lexeme = q.term
     GROUP BY q.term, c.n
), loose_idf AS (
    SELECT h.lexeme AS term, {idf("greatest(c.n, count(*))", "count(*)")} AS idf
      FROM loose_hits h CROSS JOIN corpus c
     GROUP BY h.lexeme, c.n
), scored AS (
    SELECT h.id, h.tl, {bm25("i.idf", "h.len", "c.avg_len")} AS part
      FROM hits h JOIN idf i ON i.term = h.lexeme CROSS JOIN corpus c
    UNION ALL
    SELECT h.id, h.tl, {LOOSE_WEIGHT}::float8 * {bm25("i.idf", "h.len", "c.avg_len")}
      FROM loose_hits h JOIN loose_idf i ON i.term = h.lexeme CROSS JOIN corpus c
), txt AS (
    SELECT id, rank() OVER (
               ORDER BY bm25 * {TEXT_BREVITY} DESC) AS rank FROM (
        SELECT id, max(tl) AS tl, sum(part) AS bm25 FROM scored
         GROUP BY id
         ORDER BY bm25 DESC, id
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
       AND {LIVE} AND {GATE} {{filters}}
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
SELECT {MEMORY_COLUMNS},
       CASE WHEN $2::vector IS NULL THEN NULL ELSE m.embedding <=> $2::vector END,
       m.score
FROM (
    SELECT m.*,
           $8 * f.rrf * ($7 + 1.0)
              * {brevity(turn_length("m"), f"avg({turn_length('m')}) OVER ()", "$28")}
              / ((CASE WHEN $2::vector IS NULL THEN 0 ELSE 1 END)
                 + (CASE WHEN $16 THEN 1 ELSE 0 END)
                 + (CASE WHEN $20::timestamptz IS NULL THEN 0 ELSE 1 END))
         + $9 * power(0.5, extract(epoch FROM now() - m.update_time) / $11)
         + $10 * coalesce(m.importance, 0.5)
         + $22::float8 * coalesce({effective_confidence("$23")}, 0.5) AS score
      FROM fused f JOIN {{schema}}.memories m ON m.id = f.id
     WHERE m.id = ANY (ARRAY(SELECT id FROM fused)) AND m.scope_key = $1 AND {GATE}
     ORDER BY score DESC, m.id
     LIMIT $6) m
ORDER BY m.score DESC, m.id
"""

# Typed, unused filter parameters: the statement keeps its numbering without naming a column.
_NO_FILTERS = """
    AND $12::text[] IS NULL AND $13::jsonb IS NULL AND $14::timestamptz IS NULL
    AND $15::timestamptz IS NULL AND $24::jsonpath IS NULL AND $25::jsonb IS NULL"""

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
         WHERE m.scope_key = $1 AND {match} AND {LIVE} AND {GATE}{where}
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
         WHERE m.scope_key = $1 AND {GATE} AND m.id IN (SELECT p.id FROM ({pool}) p)
         ORDER BY distance
         LIMIT {limit}"""


def _retrieve_statement(schema: str, *, strategy: str, filtered: bool, loose: bool = False) -> str:
    """`_RETRIEVE` for vectors indexed by `strategy`, with or without filters, loosened
    (`LOOSE_TERMS`, `QUERY_WORDS`) or not. The query vector
    is cast to half precision (or quantised) once, in an InitPlan: a cast written inline is
    evaluated per row under a generic plan (the parameter is no constant), which doubled the cost
    of a 36k-memory scope's covered scan."""
    filters = filter_sql(12, 24) if filtered else _NO_FILTERS
    nearest = _vector_search(
        strategy,
        query="$2::vector",
        half="(SELECT $2::vector::halfvec)",
        bits="(SELECT binary_quantize($2::vector))",
        limit="$5",
        where=f" AND $2::vector IS NOT NULL {filters}",
    )
    if loose:
        words = QUERY_WORDS
        loose_terms = LOOSE_TERMS.format(
            enabled="$26", query_terms="(SELECT terms FROM query)", hits="hits"
        )
        loose_matched = LOOSE_MATCHED.replace("{filters}", filters)
    else:
        words, loose_terms, loose_matched = "$3", NO_LOOSE_TERMS, NO_LOOSE_MATCHED
    statement = _RETRIEVE
    for name, text in (
        ("filters", filters),
        ("nearest", nearest),
        ("words", words),
        ("loose_terms", loose_terms),
        ("loose_matched", loose_matched),
    ):
        statement = statement.replace("{" + name + "}", text)
    return rls.render(statement, schema)


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
SELECT {MEMORY_COLUMNS} FROM found JOIN {{schema}}.memories m ON m.id = found.id
WHERE {GATE}
ORDER BY found.first
"""


def _candidates_statement(schema: str, strategy: str) -> str:
    """`_CANDIDATES` by vectors indexed by `strategy`. A fact's vector is cast once per fact
    (in `facts`), not per memory compared."""
    nearest = _vector_search(strategy, query="f.query", half="f.half", bits="f.bits", limit="$3")
    query = (
        "f.fact::vector AS query, f.fact::vector::halfvec AS half, "
        "binary_quantize(f.fact::vector) AS bits"
    )
    statement = (
        _CANDIDATES.replace("{facts}", "unnest($2::text[]) WITH ORDINALITY AS f(fact, ord)")
        .replace("{query}", query)
        .replace("{nearest}", nearest)
    )
    return rls.render(statement, schema)


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
           LATERAL (SELECT {tsquery("f.config", words="f.fact", grams="f.grams")} AS query,
                           {fts("f.config", words="f.fact", grams="f.grams")} AS vector) x
     WHERE x.query IS NOT NULL
), matched AS MATERIALIZED (
    SELECT DISTINCT m.id, m.fts FROM {{schema}}.memories m
     WHERE m.scope_key = $1 AND {LIVE} AND {GATE}
       AND m.fts @@ ANY (SELECT query FROM facts)
), hits AS (
    SELECT m.id, length(m.fts) AS len, w.term AS lexeme
      FROM matched m JOIN ({term_queries(_ALL_FACT_TERMS)}) w ON m.fts @@ w.tq
), idf AS (
    SELECT h.lexeme, {idf(f"greatest(({SCOPE_SIZE}), count(*))", "count(*)")} AS idf
      FROM hits h GROUP BY h.lexeme
), lengths AS (
    SELECT f.ord, avg(length(m.fts))::float8 AS avg_len
      FROM facts f JOIN matched m ON m.fts @@ f.query GROUP BY f.ord
), scored AS (
    SELECT f.ord, h.id,
           sum({bm25("i.idf", "h.len", "l.avg_len")}) AS bm25
      FROM facts f JOIN lengths l ON l.ord = f.ord, unnest(f.terms) q(term)
      JOIN hits h ON h.lexeme = q.term JOIN idf i ON i.lexeme = q.term
     GROUP BY f.ord, h.id
), ranked AS (
    SELECT ord, id, row_number() OVER (PARTITION BY ord ORDER BY bm25 DESC, id) AS pos
      FROM scored
), found AS (
    SELECT id, min(ARRAY[ord, pos]) AS first FROM ranked WHERE pos <= $3 GROUP BY id
)
SELECT {MEMORY_COLUMNS} FROM found JOIN {{schema}}.memories m ON m.id = found.id
WHERE {GATE}
ORDER BY found.first
"""


class Retrieval:
    """Runs the ranking statements against one `Database` (and its schema), built for how its
    vectors are indexed."""

    def __init__(self, db: Database, searchable: Callable[[str], SearchText]) -> None:
        self._db = db
        self._searchable = searchable
        self._text_candidates = rls.render(_TEXT_CANDIDATES, db.schema)
        self.use_vectors(EXACT)  # until `MemoryStore.prepare_embeddings` says how they are indexed

    def use_vectors(self, strategy: str) -> None:
        """Search vectors the way `strategy` indexes them."""
        schema = self._db.schema
        self._retrieve = {
            (filtered, loose): _retrieve_statement(
                schema, strategy=strategy, filtered=filtered, loose=loose
            )
            for filtered in (False, True)
            for loose in (False, True)
        }
        self._vector_candidates = _candidates_statement(schema, strategy)

    def retrieval(self, search: Search) -> tuple[str, tuple[Any, ...]]:
        """The statement `retrieve` runs for `search`, and its arguments (benchmarks EXPLAIN
        them as they run)."""
        query = as_query(self._searchable(search.query_text))
        topics, metadata, updated_after, updated_before = filter_args(search.flt)
        filter_path, filter_variables = expression_args(search.flt)
        relevance, recency, importance = search.weights
        similarity_floor, text_floor = search.floors
        window_start, window_end = search.window or (None, None)
        args = _RetrieveArgs(
            scope_key=search.scope_key,
            query_vector=vector_text(search.query_embedding),
            query_words=query.words,
            config=query.config,
            candidates=search.candidates,
            top_k=search.top_k,
            rrf_k=search.rrf_k,
            relevance_weight=relevance,
            recency_weight=recency,
            importance_weight=importance,
            half_life_seconds=search.half_life_seconds,
            topics=topics,
            metadata=metadata,
            updated_after=updated_after,
            updated_before=updated_before,
            use_text=search.use_text,
            query_grams=query.grams,
            similarity_floor=similarity_floor,
            text_floor=text_floor,
            window_start=window_start,
            window_end=window_end,
            confidence_weight=search.confidence_weight,
            confidence_half_life_seconds=search.confidence_half_life_seconds,
            filter_path=filter_path,
            filter_variables=filter_variables,
            loose=search.use_text and not own_stemmer(query),
            stop_config=foreign_language(query) if search.use_text else None,
            turn_length_prior=search.turn_length_prior,
        )
        return self._retrieve[search.flt is not None, args.loose], bind(args)

    async def retrieve(
        self, search: Search, *, replica: bool | ReadFor = False
    ) -> list[tuple[Memory, float | None, float]]:
        """The `top_k` best memories for `search`: (memory, cosine distance, score), best
        first."""
        statement, args = self.retrieval(search)
        rows = await self._db.run(lambda conn: conn.fetch(statement, *args), replica=replica)
        return [(memory_of(r), r[15], float(r[16])) for r in rows]

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
            args = (scope_key, [vector_text(e) for e in embeddings], per_fact)
        return [memory_of(r) for r in await self._db.run(lambda conn: conn.fetch(statement, *args))]
