"""Checks of what callers hand the memory service: facts, topics, metadata, ids, unit values,
TTLs, times, filters and page tokens.

Owns: the limits (`MAX_FACT_LENGTH`, `MAX_TOP_K`, `MAX_DIRECT_FACTS`, `MAX_TTL`, the range of
times) and one function per kind of
input, each returning the value as it is stored (sanitised: no NUL, no lone surrogate) or raising
ADK's `InputValidationError` saying what is wrong, before anything is written. It never touches
the database and never decides what a valid value means for a memory (the service does).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from .._json import dump_json, sanitise, sanitise_text
from ..errors import InputValidationError
from .filters import compile_filter, time_bounds
from .models import Memory, MemoryFilter, MetadataConjunction, RevisionOptions, SourceType
from .scope import Scope, user_scope, validate_scope

MAX_FACT_LENGTH = 10_000
"""Longest fact accepted, in characters: a memory is a fact, not a document."""

MAX_QUERY_LENGTH = 2_000
"""Longest search query used, in characters (the rest is ignored)."""

MAX_KEY_LENGTH = 1_000
"""Longest key of a fact (`MemoryFact.key`), in characters."""

MAX_JSON_BYTES = 1_000_000
"""Largest metadata or structured content accepted, as JSON text: data about a fact, never a
document (each copy is kept in every revision)."""

MAX_TOP_K = 100
MAX_DIRECT_FACTS = 5
"""Pre-extracted facts one generation request may carry (Memory Bank's limit)."""

MAX_TTL = timedelta(days=365_250)
"""Longest TTL accepted (about 1,000 years; None: never expires). An expiry time must stay a
time both PostgreSQL and Python can hold: `now + ttl` past the year 9999 cannot be read back."""

EARLIEST_TIME = datetime(2, 1, 1, tzinfo=timezone.utc)
LATEST_TIME = datetime(9998, 12, 31, tzinfo=timezone.utc)
"""The range of times accepted (create and update times, filters, `now`): a year of margin at
each end of Python's, so the arithmetic done with them (a time zone, a week before "now", a
TTL) never leaves it."""

_RAW_EVENT_NAMESPACE = uuid.UUID("5f0c5d1e-7d0a-4a57-9a53-3d1f0e6b2a10")
_ENTRY_NAMESPACE = uuid.UUID("0b8f4f0e-9d8e-4c55-8a3e-51f1d3a3c7b2")


def seconds(ttl: timedelta | None) -> float | None:
    """A TTL in seconds (None: never expires); a TTL that is not positive is refused."""
    if ttl is None:
        return None
    if not isinstance(ttl, timedelta) or ttl <= timedelta(0):
        raise InputValidationError("ttl must be a positive duration.")
    if ttl > MAX_TTL:
        raise InputValidationError(
            f"ttl is at most {MAX_TTL.days:,} days (about 1,000 years); None never expires."
        )
    return ttl.total_seconds()


def check_time(name: str, value: object) -> datetime | None:
    """A time (None: not given): a `datetime` between the years 2 and 9998 once in UTC (naive
    means UTC), returned as given."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InputValidationError(f"{name} must be a datetime.")
    try:
        utc = (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).astimezone(
            timezone.utc
        )
    except OverflowError:
        utc = None
    if utc is None or not EARLIEST_TIME <= utc <= LATEST_TIME:
        raise InputValidationError(f"{name} must be a time between the years 2 and 9998.")
    return value


def check_timestamp(name: str, value: object) -> datetime:
    """An ADK event's `timestamp` (seconds since the epoch) as a UTC time, in the range
    `check_time` accepts."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputValidationError(f"{name} must be a number of seconds.")
    try:
        when = datetime.fromtimestamp(value, timezone.utc)
    except (OverflowError, OSError, ValueError) as exc:
        raise InputValidationError(f"{name} is not a time: {value!r}.") from exc
    check_time(name, when)
    return when


def check_session_id(session_id: object) -> str:
    """A session id the memory service keeps (a memory's source, a watermark's key): a
    non-empty string of valid text (a NUL or a lone surrogate is refused, not replaced: a
    changed id would name another session)."""
    if not isinstance(session_id, str) or not session_id:
        raise InputValidationError("session_id must be a non-empty string.")
    if sanitise_text(session_id) != session_id:
        raise InputValidationError("session_id must be valid text (no NUL, no lone surrogate).")
    return session_id


def check_filter(flt: object) -> MemoryFilter | None:
    """A listing's or a search's filter, as it is matched: its topics and metadata checked and
    sanitised as stored ones are (so a NUL matches what a stored NUL became), its times in
    range."""
    if flt is None:
        return None
    if not isinstance(flt, MemoryFilter):
        raise InputValidationError("filter must be a MemoryFilter.")
    compile_filter(flt.expression, flt.filter_groups)  # an unreadable expression fails here
    after = check_time("updated_after", flt.updated_after)
    before = check_time("updated_before", flt.updated_before)
    expression = flt.expression
    if expression is not None and expression.strip():
        expression, bound_after, bound_before = time_bounds(expression)
        after = max((t for t in (after, bound_after) if t is not None), default=None)
        before = min((t for t in (before, bound_before) if t is not None), default=None)
    return flt.model_copy(
        update={
            "topics": check_topics(flt.topics),
            "metadata": check_mapping("The filter's metadata", flt.metadata),
            "updated_after": after,
            "updated_before": before,
            "expression": expression,
        }
    )


def as_filter(
    flt: MemoryFilter | str | None, groups: Sequence[MetadataConjunction] | None = None
) -> MemoryFilter | None:
    """A call's filter in Memory Bank's form (an AIP-160 text, metadata `groups`) or ours, as
    one checked `MemoryFilter` (None: no filter)."""
    if isinstance(flt, str):
        flt = MemoryFilter(expression=flt)
    if groups:
        try:
            checked = [MetadataConjunction.model_validate(g) for g in groups]
        except ValidationError as exc:
            raise InputValidationError(f"Invalid filter_groups: {exc.errors()[0]['msg']}.") from exc
        flt = (flt or MemoryFilter()).model_copy(update={"filter_groups": checked})
    return check_filter(flt)


def revision_options(
    labels: object = None, ttl: object = None, disabled: object = False
) -> RevisionOptions:
    """One request's revision options checked: text labels, a positive `revision_ttl`, a flag."""
    if ttl is not None and (not isinstance(ttl, timedelta) or ttl <= timedelta(0)):
        raise InputValidationError("revision_ttl must be a positive timedelta.")
    if not isinstance(disabled, bool):
        raise InputValidationError("disable_memory_revisions must be a bool.")
    return RevisionOptions(labels=check_labels(labels), ttl=ttl, disabled=disabled)


MERGE_STRATEGIES = ("OVERWRITE", "MERGE", "REQUIRE_EXACT_MATCH")
"""Memory Bank's metadata merge strategies (`generate_memories`)."""


def check_merge_strategy(strategy: object) -> str | None:
    """A metadata merge strategy (None, or Memory Bank's unspecified value: not given)."""
    if strategy is None or strategy == "METADATA_MERGE_STRATEGY_UNSPECIFIED":
        return None
    if strategy not in MERGE_STRATEGIES:
        raise InputValidationError(
            f"metadata_merge_strategy must be one of {', '.join(MERGE_STRATEGIES)}."
        )
    return str(strategy)


def check_labels(labels: object) -> dict[str, str]:
    """Revision labels: a mapping of text to text (None: none), sanitised as stored text is."""
    if labels is None:
        return {}
    if not isinstance(labels, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
    ):
        raise InputValidationError("labels must be a dict of strings to strings.")
    return {sanitise_text(k): sanitise_text(v) for k, v in labels.items()}


def check_fact(fact: object) -> str:
    """A fact: a non-empty string of at most `MAX_FACT_LENGTH` characters."""
    if not isinstance(fact, str) or not fact.strip():
        raise InputValidationError("A memory's fact must be a non-empty string.")
    if len(fact) > MAX_FACT_LENGTH:
        raise InputValidationError(f"A fact is at most {MAX_FACT_LENGTH} characters.")
    return sanitise_text(fact)


def check_key(key: object) -> str | None:
    """A caller's key for a fact (`MemoryFact.key`): None, or text of 1 to `MAX_KEY_LENGTH`
    characters (a lone surrogate is refused, not replaced: a changed key would name another
    memory)."""
    if key is None:
        return None
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
        raise InputValidationError(f"A fact's key is a string of 1 to {MAX_KEY_LENGTH} characters.")
    if sanitise_text(key) != key:
        raise InputValidationError("A fact's key must be valid text (no NUL, no lone surrogate).")
    return key


def check_topics(topics: object) -> list[str] | None:
    """Topics: a list of non-empty strings (None: not given)."""
    if topics is None:
        return None
    if isinstance(topics, str) or not isinstance(topics, Sequence):
        raise InputValidationError("topics must be a list of strings.")
    if not all(isinstance(t, str) and t for t in topics):
        raise InputValidationError("Every topic must be a non-empty string.")
    return [sanitise_text(t) for t in topics]


def check_mapping(name: str, value: object) -> dict[str, Any] | None:
    """Metadata and structured content: a dict, stored as JSON (strings sanitised; datetimes as
    ISO 8601 and NaN as null, pydantic's rules) of at most `MAX_JSON_BYTES`."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InputValidationError(f"{name} must be a dict.")
    try:
        checked = sanitise(dict(value))
        size = len(dump_json(checked).encode())
    except RecursionError as exc:
        raise InputValidationError(f"{name} is nested too deeply.") from exc
    except PydanticSerializationError as exc:
        raise InputValidationError(f"{name} must hold JSON values only: {exc}") from exc
    if size > MAX_JSON_BYTES:
        raise InputValidationError(f"{name} is at most {MAX_JSON_BYTES:,} bytes as JSON.")
    return checked


def check_count(name: str, value: object, high: int) -> int:
    """A count (top_k, page_size, limit): an int from 1 to `high` (a bool or "3" is not one)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise InputValidationError(f"{name} must be a whole number between 1 and {high}.")
    return value


def check_query(query: object) -> str | None:
    """A search query: text (or None), sanitised as facts are (NUL and lone surrogates become
    U+FFFD), so what a user typed can never fail the search."""
    if query is None:
        return None
    if not isinstance(query, str):
        raise InputValidationError("search_query must be a string.")
    # A turn's question, not a document: a longer one is cut (never refused mid-turn), so a
    # megabyte of words cannot cost seconds of full-text parsing or exceed tsquery's limits.
    return sanitise_text(query[:MAX_QUERY_LENGTH])


def check_id(memory_id: object) -> str:
    """A memory (or operation) id: a UUID, in its canonical text."""
    try:
        return str(uuid.UUID(str(memory_id)))
    except ValueError as exc:
        raise InputValidationError(f"Not a memory id: {memory_id!r}.") from exc


def check_unit(name: str, value: float | None) -> float | None:
    """An importance or confidence: between 0 and 1 (None: not given)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InputValidationError(f"{name} must be between 0 and 1.")
    return value


def check_source_type(value: object) -> SourceType:
    """A source type, given as the enum or its value: a typo is the caller's error
    (`InputValidationError`, a `ValueError` as the enum's own was), not a crash of the write."""
    try:
        return SourceType(value)
    except ValueError as exc:
        raise InputValidationError(f"Unknown source_type {value!r}.") from exc


def encode_token(memory: Memory) -> str:
    """The page token after `memory` (the last of a page): its update time and id."""
    raw = f"{memory.update_time.isoformat()}|{memory.id}"
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_token(token: str) -> tuple[datetime, str]:
    """A page token back to (update time, id); a forged or broken one is refused."""
    if not isinstance(token, str):
        raise InputValidationError("The page token must be a string.")
    try:
        when, memory_id = base64.urlsafe_b64decode(token.encode()).decode().split("|")
        return datetime.fromisoformat(when), check_id(memory_id)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputValidationError("Invalid page token.") from exc


def scope_of(app_name: str | None, user_id: str | None, scope: Mapping[str, str] | None) -> Scope:
    """The scope a call names in ADK's form (`app_name`, `user_id`) or Memory Bank's (`scope`):
    exactly one of them."""
    if scope is not None:
        if app_name is not None or user_id is not None:
            raise InputValidationError("Pass either scope or app_name and user_id, not both.")
        return validate_scope(scope)
    if app_name is None or user_id is None:
        raise InputValidationError("A scope (or app_name and user_id) is required.")
    return user_scope(app_name, user_id)
