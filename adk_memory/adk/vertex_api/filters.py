"""Memory Bank's filters, as far as this surface reads them itself.

Owns: splitting an AIP-160 filter into its `scope.KEY="VALUE"` terms (the exact scope a list or
a purge acts on: adk-memory never widens a scope) and the rest (handed to the service when it
reads such filters, refused otherwise), and turning `filterGroups` (metadata conditions, an OR
of ANDs) into a `MemoryFilter` when they are one group of plain equalities, and the two
session filters ADK's `VertexAiSessionService` sends (`user_id="..."`, `timestamp>="..."`).
Anything it
cannot honour exactly is an `InputValidationError` naming it, never a silently wider result.
It never calls a service.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

from ...errors import InputValidationError
from ...memory.models import MemoryFilter
from . import wire

_CONJUNCTION = re.compile(r"\s+AND\s+(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)")
_QUOTED = r'"((?:[^"\\]|\\.)*)"'
_SCOPE_TERM = re.compile(r"^scope\.([A-Za-z0-9_]+)\s*=\s*" + _QUOTED + "$")
_USER_TERM = re.compile(r"^\s*user_id\s*=\s*" + _QUOTED + r"\s*$")
_AFTER_TERM = re.compile(r'^\s*timestamp\s*>=\s*"([^"]+)"\s*$')


def _unquote(text: str) -> str:
    """A quoted literal's text (its backslash escapes undone)."""
    return re.sub(r"\\(.)", r"\1", text)


def split_scope(text: str | None) -> tuple[dict[str, str], str]:
    """(the scope the filter's `scope.K="V"` terms name, the other terms joined by AND)."""
    scope: dict[str, str] = {}
    rest: list[str] = []
    for term in _CONJUNCTION.split(text.strip()) if text and text.strip() else []:
        match = _SCOPE_TERM.match(term.strip())
        if match is None:
            rest.append(term.strip())
            continue
        key, value = match.group(1), _unquote(match.group(2))
        if scope.get(key, value) != value:
            raise InputValidationError(f"The filter names scope.{key} twice: {text!r}.")
        scope[key] = value
    return scope, " AND ".join(rest)


def filter_options(method: Callable[..., Any], text: str | None, groups: Any) -> dict[str, Any]:
    """The filter keywords for `method` (a listing or a search): an AIP-160 `filter` string and
    `filter_groups` as given when the method reads them (branch i-mbconfig's service does);
    else `filterGroups` as a `MemoryFilter` (`metadata_filter`), and a string filter refused
    with the reason: never a wider result than asked for."""
    parameters = inspect.signature(method).parameters
    options: dict[str, Any] = {}
    if text:
        annotation = parameters["filter"].annotation if "filter" in parameters else ""
        if "str" not in str(annotation):
            raise InputValidationError(
                f"This adk-memory's memory service does not read AIP-160 filters ({text!r}): "
                'filter by scope.KEY="VALUE" terms (listing, purge) or filterGroups (retrieval).'
            )
        options["filter"] = text
    if groups and "filter_groups" in parameters:
        options["filter_groups"] = groups
    elif groups:
        options["filter"] = metadata_filter(groups)
    return options


def metadata_filter(groups: Any) -> MemoryFilter | None:
    """`filterGroups` as a `MemoryFilter`: one group of non-negated EQUAL conditions."""
    if not groups:
        return None
    if not isinstance(groups, Sequence) or len(groups) != 1:
        raise InputValidationError(
            "This adk-memory honours one filter group (an AND of metadata equalities)."
        )
    conditions = groups[0].get("filters") if isinstance(groups[0], dict) else None
    if not isinstance(conditions, list) or not conditions:
        raise InputValidationError("A filter group needs a list of filters.")
    wanted: dict[str, Any] = {}
    for condition in conditions:
        if not isinstance(condition, dict) or condition.get("negate"):
            raise InputValidationError(f"Unsupported metadata filter: {condition!r}.")
        if condition.get("op", "EQUAL") not in ("EQUAL", "OPERATOR_UNSPECIFIED"):
            raise InputValidationError(f"Unsupported metadata operator: {condition.get('op')!r}.")
        value = wire.metadata_in({condition.get("key"): condition.get("value")}) or {}
        wanted.update(value)
    return MemoryFilter(metadata=wanted)


def session_user(text: str | None) -> str | None:
    """The user a sessions list filter names (`user_id="..."`, as ADK sends it), or None."""
    if not text:
        return None
    match = _USER_TERM.match(text)
    if match is None:
        raise InputValidationError(f'Sessions filter by user_id="..." only, not {text!r}.')
    return _unquote(match.group(1))


def events_after(text: str | None) -> float | None:
    """The time an events filter starts at (`timestamp>="..."`, as ADK sends it), or None."""
    if not text:
        return None
    match = _AFTER_TERM.match(text)
    after = wire.parse_time(match.group(1), "timestamp") if match else None
    if after is None:
        raise InputValidationError(f'Events filter by timestamp>="..." only, not {text!r}.')
    return after.timestamp()
