"""JSON text that PostgreSQL always accepts, for every aggregate's store.

Owns: replacing what Postgres text, json and jsonb cannot hold (NUL characters, lone surrogates)
with U+FFFD, and serialising with pydantic's rules (datetimes as ISO 8601, NaN and infinities as
null, as pydantic models write them). It never rejects a value and never touches the database.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

_UNSAFE_CHARS = re.compile("[\x00\ud800-\udfff]")
_REPLACEMENT = "\ufffd"


def sanitise_text(text: str) -> str:
    """Replace what Postgres text and jsonb cannot hold (NUL, lone surrogates) with U+FFFD."""
    return _UNSAFE_CHARS.sub(_REPLACEMENT, text)


def sanitise(value: Any) -> Any:
    """`value` with every string in it (dict keys included) passed through `sanitise_text`."""
    if isinstance(value, str):
        return sanitise_text(value)
    if isinstance(value, dict):
        return {sanitise_text(str(k)): sanitise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [sanitise(v) for v in value]
    return value


def dump_json(value: Any) -> str:
    """JSON text of `value` that Postgres accepts; sanitises only when it must."""
    try:
        text = to_json(value, inf_nan_mode="null").decode()
    except PydanticSerializationError:  # lone surrogates cannot be encoded as UTF-8
        return to_json(sanitise(value), inf_nan_mode="null").decode()
    if "\\u0000" in text:
        return to_json(sanitise(value), inf_nan_mode="null").decode()
    return text
