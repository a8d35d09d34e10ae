"""Full-text ranking pieces of the hybrid search: BM25 (term rarity per scope, length
normalisation), the weight of dialogue turns by their length, and the looser matching of query
words no memory of the scope holds (prefixes, the query language's stop words).

Owns: SQL fragments and their parameters' meaning, used by `retrieval`'s statements; each
fragment that scans the memories carries the scope's gate (`GATE`, row-level security). It
runs nothing and builds no whole statement: `retrieval` does.
"""

from __future__ import annotations

from ..scope import scope_gate
from .sql import LIVE

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

GATE = scope_gate("$1")
"""Every statement here reads one scope ($1, in any of its forms): each query level that scans
the memories carries its gate (row-level security, `db.rls`)."""

SCOPE_SIZE = (
    "SELECT count(*) FROM (SELECT FROM {schema}.memories WHERE scope_key = $1 "
    f"AND {scope_gate('$1')} LIMIT {_COUNTED}) s"
)
"""SQL for the scope's ($1) size as term rarity counts it."""


def idf(scope_size: str, holding: str) -> str:
    """SQL for a term's BM25 inverse document frequency in a scope of `scope_size` memories,
    `holding` of which hold it (positive: a term in every memory of a big scope weighs nearly
    0). In float8: numeric arithmetic over thousands of matches cost more than the search."""
    return (
        f"ln(1 + ({scope_size} + {_BACKGROUND} - {holding} + 0.5)::float8 "
        f"/ ({holding} + 0.5)::float8)"
    )


def bm25(idf: str, length: str, avg_length: str) -> str:
    """SQL for a matched term's BM25 contribution to a memory's score (a term counted once: a
    memory is a fact or a turn, which rarely repeats a word, and reading each term's positions
    cost a third of a search in a scope of thousands)."""
    return (
        f"{idf} * {_K1 + 1}::float8 / (1 + {_K1}::float8 * ({1 - _B}::float8 "
        f"+ {_B}::float8 * {length} / {avg_length}))"
    )


# Dialogue turns: memories that record who said them (metadata `author`: a raw ADK event's, or
# an added entry's; `speaker`: an imported transcript's), or whose text opens with a speaker's
# label, as a transcript's lines do ("Ana: ...", "[26 March 2023] Ana: ...": one or two
# capitalised words, after an optional bracketed date). Facts (extracted or written) are never
# weighed by their length.
_SPEAKER_LABEL = r"^(\[[^]]+\] )?[[:upper:]][[:alnum:]''.-]*( [[:upper:]][[:alnum:]''.-]*)?: "
"""POSIX regular expression (SQL literal body) of a transcript line's speaker label."""


def _is_turn(alias: str) -> str:
    """SQL: whether memory `alias` is a dialogue turn."""
    return f"({alias}.metadata ?| array['author', 'speaker'] OR {alias}.fact ~ '{_SPEAKER_LABEL}')"


def turn_length(alias: str) -> str:
    """SQL for memory `alias`'s length (distinct lexemes) if it is a dialogue turn, else NULL
    (so averages over candidates count turns only)."""
    return f"CASE WHEN {_is_turn(alias)} THEN length({alias}.fts) END"


def brevity(length: str, avg_length: str, share: str) -> str:
    """SQL for a candidate's weight by its length: 1, except for a dialogue turn (`length` not
    NULL) shorter than `share` of `avg_length` (the candidates' average turn length), which
    weighs its share of that. Why: in a long conversation every turn carries the speaker's name
    and the date, so a filler ("What? Spill.", "You too, Ana.") is as near to a question about
    that person as the turn that answers it, by embedding and by the name's match, while a
    question's evidence is nearly always a turn that says something (measured on the
    long-conversation set: 3 of 319 evidence turns hold four content words or fewer, against
    over a third of the turns hybrid search ranked in the top 10 before this weight)."""
    return (
        f"CASE WHEN {length} IS NULL OR {share}::float8 <= 0 THEN 1.0::float8 "
        f"ELSE least(1.0, {length}::float8 / greatest({avg_length} * {share}::float8, 1e-9)) END"
    )


_TEXT_ONLY_SHARE = "(CASE WHEN $2::vector IS NULL THEN $28::float8 ELSE 0 END)"
"""`brevity`'s share in the full-text list: the turn weight, when no vector list takes part.
With one, the fused relevance is weighed already (measured on the long-conversation set's
tuning half: the text list weighed too costs hybrid 0.8 points of Recall@10, and gains
text-only search 4)."""

TEXT_BREVITY = brevity("tl", "(SELECT avg(turn_len) FROM matched)", _TEXT_ONLY_SHARE)
"""SQL for a full-text candidate's turn weight (`tl`: its turn length) among the matched."""


# Each of a query's (or fact's) terms as a tsquery of its own, which a memory's tsvector matches
# when it holds the term: `terms` is the text array of lexemes `tsvector_to_array` gives.
def term_queries(terms: str) -> str:
    """SQL for (term, tsquery) rows of the lexemes in the array `terms`."""
    return f"SELECT t AS term, quote_literal(t)::tsquery AS tq FROM unnest({terms}) t"


LOOSE_PREFIX = 5
"""How many leading characters stand for a query word no memory of the scope holds
(`LOOSE_TERMS`), at most the word less its last one (so a shorter stored form is found too:
котом finds кот, דודי finds דוד): enough to keep a stem through the endings of inflecting
languages (Helsingissä finds Helsinki, Новосибирске Новосибирск, Krakowie Kraków) and the head
of a compound (Haselnuss finds Haselnussallergie), too many to match unrelated words."""

LOOSE_MIN = 4
"""The shortest query word looked for by its prefix: shorter ones (function words, "psa") would
match a large share of any scope."""

LOOSE_WEIGHT = 0.5
"""What a prefix match counts for against an exact one of the same rarity: the looser evidence
ranks a memory below one holding the word as asked."""

# The looser form of a full-text search: when the query is not searched with its own language's
# stemmer (`text.own_stemmer`: a language with none, or searched with another language's; an
# English query under the English configuration is not loosened, its stemmer finds the other
# forms), each query term of `LOOSE_MIN` or more characters that no memory of the scope holds (a
# word typed in another form than stored: an inflection, a compound) is looked for as a prefix
# (`LOOSE_PREFIX`). A query whose words all occur in the scope searches exactly as without it.
# A prefix match counts like a term of its own in BM25 (its rarity: the memories holding the
# prefix), weighted by `LOOSE_WEIGHT`; the share of the query's information a memory matches
# keeps its denominator (the unmatched term already counts there). `{enabled}`: whether to
# loosen; `{hits}`, `{query_terms}`: the exact hits and the query's terms.
LOOSE_TERMS = f"""
    SELECT t.term,
           (quote_literal(left(t.term, least({LOOSE_PREFIX}, char_length(t.term) - 1)))
            || ':*')::tsquery AS tq
      FROM unnest({{query_terms}}) t(term)
     WHERE {{enabled}} AND char_length(t.term) >= {LOOSE_MIN}
       AND NOT EXISTS (SELECT FROM {{hits}} h WHERE h.lexeme = t.term)"""


# The memories holding a loose term (`LOOSE_TERMS` as `loose`), read apart like `matched`. With
# no loose term (every query word found) nothing is read.
LOOSE_MATCHED = f"""
    SELECT m.id, m.fts, {turn_length("m")} AS turn_len FROM {{schema}}.memories m
     WHERE $16 AND EXISTS (SELECT FROM loose) AND m.scope_key = $1
       AND m.fts @@ (SELECT string_agg(tq::text, ' | ')::tsquery FROM loose)
       AND {LIVE} AND {GATE} {{filters}}"""

# The same pieces for a search that is not loosened: empty by construction, whatever the values
# of $26 and $27 (named so the statement keeps its parameters' types). A search that needs no
# loosening (an English query, a vector search) runs this form: PostgreSQL plans it once and
# reuses the plan (a generic plan), where the loosened form, whose cost depends on $26, is
# planned for each search (custom plans: about a millisecond more).
NO_LOOSE_TERMS = (
    "SELECT NULL::text AS term, NULL::tsquery AS tq WHERE $26::boolean AND false "
    "AND $27::text IS NULL"
)
NO_LOOSE_MATCHED = (
    "SELECT NULL::uuid AS id, NULL::tsvector AS fts, NULL::integer AS turn_len WHERE false"
)

# The query's words ($3) searched for: all of them, or, when the query is placed in another
# language than its configuration's ($27, `text.foreign_language`), those that are not that
# language's stop words: "у" and "меня" of "Какая у меня машина?" would otherwise count as
# content words under the English configuration and outweigh "машина" in a scope of Russian
# facts. A configuration the server lacks (an older PostgreSQL) drops nothing.
QUERY_WORDS = """(CASE WHEN $27::text IS NULL THEN $3 ELSE array_to_string(ARRAY(
    SELECT w FROM regexp_split_to_table($3, '\\s+') w
     WHERE NOT EXISTS (SELECT FROM pg_ts_config c WHERE c.cfgname = $27::text
                          AND to_tsvector(c.oid::regconfig, w) = ''::tsvector)), ' ') END)"""
