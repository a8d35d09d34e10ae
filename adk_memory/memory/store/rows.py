"""Python values to statement arguments, and rows back to `Memory` / `MemoryRevision`.

Owns: the text forms the statements take (a vector as pgvector text, lists and values as JSON
text, a filter as its four parameters) and the one reading of a memory's and a revision's row
(`sql.MEMORY_COLUMNS`). It runs no statement and decides nothing.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Sequence
from typing import Any

import asyncpg

from ..._json import dump_json
from ..filters import compile_filter
from ..models import Memory, MemoryAction, MemoryFilter, MemoryRevision, SourceType


def vector_text(values: Sequence[float] | None) -> str | None:
    """A vector in pgvector's text form, each value as the float4 it is stored as (what
    `pgvector.Vector(...).to_text()` writes, without its per-value conversions)."""
    if values is None:
        return None
    return "[" + ",".join(map(repr, array("f", values).tolist())) + "]"


def json_list(values: Sequence[str]) -> str:
    """A list as JSON text (most lists of a batch are empty: no encoder call for those)."""
    return json.dumps(list(values)) if values else "[]"


def json_value(value: Any) -> str | None:
    """`value` as JSON text, or None for None (SQL NULL: "keep" or "none")."""
    return None if value is None else dump_json(value)


def memory_of(row: asyncpg.Record) -> Memory:
    """The memory a row of `sql.MEMORY_COLUMNS` holds."""
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


def revision_of(row: asyncpg.Record) -> MemoryRevision:
    """The revision a row of `reads._REVISIONS` holds."""
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


def filter_args(flt: MemoryFilter | None) -> tuple[Any, ...]:
    """A filter as its four parameters (`sql.filter_sql`): topics, metadata, after, before."""
    if flt is None:
        return (None, None, None, None)
    topics = list(flt.topics) if flt.topics is not None else None
    return (topics, json_value(flt.metadata), flt.updated_after, flt.updated_before)


def expression_args(flt: MemoryFilter | None) -> tuple[str | None, str | None]:
    """A filter's Memory Bank expression and groups as the clause's last two parameters
    (`sql.filter_sql`): the jsonpath and its variables (JSON), or two NULLs."""
    compiled = compile_filter(flt.expression, flt.filter_groups) if flt is not None else None
    if compiled is None:
        return (None, None)
    path, variables = compiled
    return (path, json.dumps(variables))
