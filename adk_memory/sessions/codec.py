"""Event and state <-> JSON text, exactly as ADK's models define them.

Owns: the one JSON form an event is stored in (the whole pydantic model, so fields ADK adds later
survive a round trip untouched), ADK's coercion of state values that are not JSON, redaction on
the way in, and the cache of decoded events on the way out. Sanitising (NUL, lone surrogates)
is `adk_memory._json`'s. It must never drop a field or a `None` value, and never touch the
database.
"""

from __future__ import annotations

import functools
import gc
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from google.adk.events.event import Event
from pydantic_core import PydanticSerializationError

from .._adk_private import extract_json_safe_state_delta
from .._cache import LruCache
from .._json import dump_json, sanitise
from ..errors import InputValidationError
from ..redaction import Redactor, redact_event_data, redact_json
from ..telemetry import cache_stats
from .decoding import copier, decode


def split_state(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """State by scope ("app", "user", "session"), prefixes removed, `temp:` keys dropped, and
    values coerced to JSON the way ADK's own database service coerces them."""
    try:
        try:
            return extract_json_safe_state_delta(state)
        except UnicodeEncodeError:  # a lone surrogate in a key or value
            return extract_json_safe_state_delta(sanitise(state))
    except (RecursionError, ValueError) as exc:  # ADK's "Maximum serialization depth exceeded"
        raise InputValidationError(f"The state cannot be stored as JSON: {exc}") from exc


def dump_state(delta: dict[str, Any] | None, redactor: Redactor | None) -> str | None:
    """JSON text of one scope's delta, redacted; None when there is nothing to write."""
    if not delta:
        return None
    return dump_json(redact_json(delta, redactor) if redactor else delta)


READ_BACK_ABOVE = 128
"""Events with more than this many `{` and `[` are read back before they are stored. pydantic
reads JSON nested up to about 200 levels and writes it somewhat deeper, so an event in between
would be stored and then fail every later read of its session; an event with fewer brackets
than this cannot be nested that deep, so almost every event skips the check."""


def check_readable(text: str) -> None:
    """Raise `InputValidationError` if the stored form of an event could not be read back."""
    if text.count("{") + text.count("[") <= READ_BACK_ABOVE:
        return
    try:
        Event.model_validate_json(text)
    except ValueError as exc:  # pydantic's ValidationError: "recursion limit exceeded"
        raise InputValidationError(
            "The event is nested too deeply to be read back once stored (about 200 levels is "
            "the limit); nothing was written."
        ) from exc


def dump_event(event: Event, redactor: Redactor | None) -> str:
    """The whole event as JSON text (None-valued fields left out, as ADK stores them).

    Field names are written by alias (camelCase, as ADK's API speaks): some nested models only
    round-trip that way (an API-key auth scheme's `in`, for one).

    With a redactor, the event's text (content, state delta, compaction summary: see
    `redact_event_data`) is redacted before it is written.

    Raises `InputValidationError` for an event that cannot be written, or could not be read
    back (`check_readable`): a stored event must never break its session's later reads.
    """
    try:
        text = _dump(event, redactor)
    except ValueError as exc:  # pydantic: "Maximum serialization depth exceeded"
        raise InputValidationError(
            f"The event cannot be stored (nested too deeply?): {exc}; nothing was written."
        ) from exc
    check_readable(text)
    return text


def _dump(event: Event, redactor: Redactor | None) -> str:
    if redactor is None:
        try:
            text = event.model_dump_json(exclude_none=True, by_alias=True)
        except (PydanticSerializationError, UnicodeEncodeError):
            return dump_json(_json_data(event))
        return dump_json(_json_data(event)) if "\\u0000" in text else text
    return dump_json(redact_event_data(_json_data(event), redactor))


def _json_data(event: Event) -> dict[str, Any]:
    """The event as JSON-mode data, sanitised first if a lone surrogate makes ADK's own
    serialisers fail."""
    try:
        return event.model_dump(mode="json", exclude_none=True, by_alias=True)
    except (PydanticSerializationError, UnicodeEncodeError):
        clean = Event.model_validate(sanitise(event.model_dump(exclude_none=True, by_alias=True)))
        return clean.model_dump(mode="json", exclude_none=True, by_alias=True)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while a read builds thousands of small objects:
    its passes would otherwise cost about a third of the work (and all of the tail latency)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


DECODED_BYTES_PER_CHAR = 2
"""What a cached event costs the process per character of its stored JSON: the text (the key)
and the decoded objects (issue 12 measured 30 events of 10 MB each growing a process by 574 MB)."""

DECODED_BYTES_PER_EVENT = 6 * 1024
"""What a cached event costs besides its characters: its objects and copy recipe (measured
with tracemalloc: about 6.5 KB for a 300-character event, 8.7 KB for a 2,800-character one).
Without it the byte bound undercounted small events tenfold."""


def decoded_weight(text: str) -> int:
    """The estimated bytes a cached event of stored JSON `text` holds (its cache weight)."""
    return DECODED_BYTES_PER_EVENT + DECODED_BYTES_PER_CHAR * len(text)


class EventCache:
    """Decoded events, keyed by the exact JSON text they are stored as.

    A stored event never changes, so one text always decodes to equal events. Most are built
    straight from their JSON (`decoding.decode`); the others are validated by pydantic (plus
    google-genai's and ADK's own validators), which costs nearly twice as much. Either way a
    cached event is cheaper to copy than to decode again (`decoding.copier`, worked out once
    per cached event, for those built directly; pydantic's deep copy for the others). Every
    read gets copies, never the cached objects: callers may mutate what they get back. Least
    recently read events are dropped beyond `max_events`, or beyond `max_bytes` (weighed at
    `decoded_weight`), so neither a few huge events nor many small ones can grow the
    process without bound; 0 turns the cache off (then nothing is copied).
    """

    def __init__(self, max_events: int, max_bytes: int) -> None:
        self._decoded: LruCache[str, Callable[[], Event]] = LruCache(
            max_events, max_bytes=max_bytes, stats=cache_stats("session.events")
        )
        self._keeps = max_events > 0 and max_bytes > 0

    def load(self, texts: Sequence[str] | None) -> list[Event]:
        """Events for stored JSON texts, in the same order."""
        if not texts:
            return []
        with _gc_paused():
            return [self._load_one(text) for text in texts]

    def _load_one(self, text: str) -> Event:
        make = self._decoded.get(text)
        if make is None:
            event = decode(text)
            direct = event is not None
            if event is None:
                event = Event.model_validate_json(text)
            if not self._keeps:
                return event
            make = copier(event) if direct else functools.partial(event.model_copy, deep=True)
            self._decoded.put(text, make, decoded_weight(text))
        return make()

    @property
    def size(self) -> tuple[int, int]:
        """(events, estimated bytes) held now."""
        return len(self._decoded), self._decoded.bytes

    def clear(self) -> None:
        """Forget every decoded event (after an erasure: nothing of it stays in memory)."""
        self._decoded.clear()


def load_state(state_json: str | None) -> dict[str, Any]:
    """A state dict from JSON text (None means empty)."""
    return json.loads(state_json) if state_json else {}
