"""SQL fragments every statement on the memory tables shares, and typed bind parameters.

Owns: the columns a memory is read as (`MEMORY_COLUMNS`), liveness, the filter clause, expiry,
the full-text forms, effective confidence, what a revision keeps (`revision_of_m`), and `bind`,
which turns a statement's typed argument object into its positional `$n` values. It runs
nothing and holds no statement of its own: the statements live with the part that runs them.
"""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ..filters import DOCUMENT_FIELDS, METADATA_ONLY
from ..scope import real_key_sql

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# The last column is the memory's `memory_type`, read from its key (`scope.PROCEDURE_PREFIX`,
# also under the quarantine's `scope.QUARANTINE_PREFIX`).
MEMORY_COLUMNS = """
    m.id::text, m.scope::text, m.fact, m.content::text, m.topics, m.metadata::text, m.importance,
    m.confidence, m.source_type, m.source_session_id, m.source_event_ids, m.create_time,
    m.update_time, m.expire_time,
    CASE WHEN starts_with(m.scope_key, 'procedure:')
           OR starts_with(m.scope_key, 'quarantine:procedure:')
         THEN 'procedure' ELSE 'fact' END"""

LIVE = "(m.expire_time IS NULL OR m.expire_time > now())"


# Filter parameters, always $F1..$F4 below: topics (any of), metadata containment, update-time
# bounds; and $E1/$E2 (numbered apart, at the end of each statement's parameters): Memory Bank's
# filters compiled to a jsonpath predicate and its variables (`memory.filters`) over
# `filter_document`. Substituted per statement so each statement numbers its own parameters.
_FILTERS = """
    AND ({topics}::text[] IS NULL OR m.topics && {topics}::text[])
    AND ({metadata}::jsonb IS NULL OR m.metadata @> {metadata}::jsonb)
    AND ({after}::timestamptz IS NULL OR m.update_time > {after}::timestamptz)
    AND ({before}::timestamptz IS NULL OR m.update_time < {before}::timestamptz)
    AND ({path}::jsonpath IS NULL OR jsonb_path_match({document}, {path}::jsonpath,
                                                     {variables}::jsonb) IS TRUE)"""

_FIELD_SQL = {
    "fact": "m.fact",
    "create_time": "extract(epoch FROM m.create_time)",
    "update_time": "extract(epoch FROM m.update_time)",
    "topics": "to_jsonb(m.topics)",
    "metadata": "m.metadata",
    "scope": "m.scope",
}
"""A memory's fields as Memory Bank's filters see them (`memory.filters.DOCUMENT_FIELDS`): its
fact, its times as seconds since the epoch, its topics, its metadata and its scope."""


def filter_document(variables: str) -> str:
    """SQL for the document a filter is evaluated on: the memory's metadata as it is for a
    filter on metadata alone (`METADATA_ONLY`: no document to build, 10 times cheaper per row),
    else an object of only the fields the filter names (each one it names is also a key of its
    `variables`), since building every field for every row of a scope costs more than
    evaluating the filter."""
    named = ", ".join(
        f"'{name}', CASE WHEN {variables}::jsonb ? '{name}' THEN {_FIELD_SQL[name]} END"
        for name in DOCUMENT_FIELDS
    )
    return (
        f"CASE WHEN {variables}::jsonb ? '{METADATA_ONLY}' THEN m.metadata "
        f"ELSE jsonb_build_object({named}) END"
    )


def filter_sql(first: int, expression: int) -> str:
    """The filter clause: its four parameters from $`first`, the compiled expression's two from
    $`expression`."""
    return _FILTERS.format(
        topics=f"${first}",
        metadata=f"${first + 1}",
        after=f"${first + 2}",
        before=f"${first + 3}",
        path=f"${expression}",
        variables=f"${expression + 1}",
        document=filter_document(f"${expression + 1}"),
    )


def expiry(param: str) -> str:
    """SQL for "now + ttl seconds", or NULL (never expires) when the parameter is NULL."""
    return (
        f"CASE WHEN {param}::float8 IS NULL THEN NULL "
        f"ELSE now() + make_interval(secs => {param}::float8) END"
    )


# Full text is indexed and queried in the form `text.search_text` gives both sides: the words
# under the service's configuration, the unspaced scripts' bigrams under `simple` (no stemming or
# stop words apply to them), so one scope can hold memories in any mix of languages.
def fts(config: str, *, words: str, grams: str) -> str:
    """SQL for a fact's tsvector from its searchable words and bigrams."""
    return f"to_tsvector({config}::regconfig, {words}) || to_tsvector('simple', {grams})"


def tsquery(config: str, *, words: str, grams: str) -> str:
    """SQL for a query's tsquery: any of its words or bigrams (OR, ranked by `ts_rank`), NULL
    when it has none."""
    return (
        f"nullif(replace((plainto_tsquery({config}::regconfig, {words}) "
        f"|| plainto_tsquery('simple', {grams}))::text, '&', '|'), '')::tsquery"
    )


def effective_confidence(half_life: str) -> str:
    """SQL for a memory `m`'s effective confidence: its stored confidence halved every
    `half_life` seconds (a parameter; NULL: no decay) since it was last updated or corroborated
    (`update_time`); NULL when its confidence is unknown. The one definition retrieval and
    pruning share (`trust.effective_confidence` is its Python twin, for what a model is shown).
    """
    return (
        f"m.confidence * coalesce(power(0.5, extract(epoch FROM now() - m.update_time) "
        f"/ {half_life}::float8), 1)"
    )


def revision_of_m(
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
    gate: str,
) -> str:
    """The CTE body that records one revision per row of `m` (the rows a statement just
    created, updated or deleted): the one place that says what a revision keeps. Its text goes
    through the statement's `.format(schema=...)` once, so literal braces are doubled once.

    A statement that changes one memory passes the caller's `revision_id` (a uuid parameter):
    the revision is then the token of that write, which its replay after a lost reply finds
    (`_MINE`) instead of writing it again. A statement that creates many passes `rows`, `m`
    joined to its input, so each revision takes its own row's id and values. `gate`: the
    statement's gate (`scope_gate`, `ALL_SCOPES_GATE`), since the level writes a scoped table."""
    return f"""
    INSERT INTO {{schema}}.memory_revisions
        (id, memory_id, scope_key, scope, action, fact, extracted_facts, labels, source_type,
         source_session_id, source_event_ids, expire_time, confidence)
    SELECT {revision_id}, m.id, {real_key_sql("m.scope_key")}, m.scope, '{action}', m.fact,
           {extracted},
           {labels}, {source_type}, {source_session}, {source_events}, {expiry(ttl)},
           m.confidence
    FROM {rows}
    WHERE {gate}"""


@cache
def _getter(kind: type) -> attrgetter[Any]:
    return attrgetter(*(f.name for f in fields(kind)))


def bind(args: DataclassInstance) -> tuple[Any, ...]:
    """The positional values of a statement's typed arguments: its fields in declaration order
    are the statement's $1, $2, ... (each argument class declares them next to its SQL, so the
    order is said in one place and every value is named where it is built)."""
    return tuple(_getter(type(args))(args))
