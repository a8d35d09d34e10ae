"""The memory service's side of ADK's shapes: what an event or a `MemoryEntry` says, and a
memory as a `MemoryEntry`.

Owns: which text of an event is remembered in raw-events mode, the ids that make re-adding the
same event or entry a no-op (derived per scope, so they never collide across scopes), when a
memory is from, and the `MemoryEntry` ADK's memory tools show a model (its text `neutralise`d).
It never touches the database.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from ..errors import InputValidationError
from .models import Memory, RetrievedMemory
from .rendering import neutralise
from .scope import Scope, scope_key

_RAW_EVENT_NAMESPACE = uuid.UUID("5f0c5d1e-7d0a-4a57-9a53-3d1f0e6b2a10")
_ENTRY_NAMESPACE = uuid.UUID("0b8f4f0e-9d8e-4c55-8a3e-51f1d3a3c7b2")
_KEY_NAMESPACE = uuid.UUID("3c6e2a4b-8f1d-4e7a-b5c9-2d0f6a8e1b47")


def event_text(event: Event) -> str:
    """The text an event says (thoughts left out): what raw-events mode remembers."""
    if not event.content or not event.content.parts:
        return ""
    return _joined(p.text for p in event.content.parts if p.text and not p.thought)


def entry_text(entry: MemoryEntry) -> str:
    """The text a `MemoryEntry` says."""
    return _joined(p.text for p in entry.content.parts or [] if p.text)


def _joined(texts: Iterable[object]) -> str:
    """Part texts joined; a part whose `text` is not a string (pydantic validates neither
    `model_construct` nor assignment) is bad input, not a crash."""
    parts = list(texts)
    if not all(isinstance(text, str) for text in parts):
        raise InputValidationError("A content part's text must be a string.")
    return "\n".join(parts).strip()  # type: ignore[arg-type]


def memory_time(memory: Memory) -> datetime:
    """When a memory is from: when its event happened for a memory of a raw event, else when
    the fact was last updated."""
    return memory.create_time if "event_id" in memory.metadata else memory.update_time


def to_memory_entry(result: RetrievedMemory | Memory) -> MemoryEntry:
    """A memory as ADK's `MemoryEntry`: the fact as text, its id, its time (UTC ISO 8601: when
    the event happened for a memory of a raw event, else when the fact was last updated) and, in
    custom_metadata, only what helps a model weigh it: score, topics, scope. (Everything here
    reaches the model through `load_memory`: internal ids and provenance stay out.)"""
    memory = result.memory if isinstance(result, RetrievedMemory) else result
    extra: dict[str, Any] = {"topics": list(memory.topics), "scope": dict(memory.scope)}
    if isinstance(result, RetrievedMemory):
        extra["score"] = result.score
    happened = memory_time(memory)
    # ADK's load_memory / preload_memory show the text (and author) as lines of a tagged block:
    # neutralised here, at rendering time, so facts stored before any write-time guard are too.
    author = memory.metadata.get("author")
    return MemoryEntry(
        id=memory.id,
        content=types.Content(role="user", parts=[types.Part(text=neutralise(memory.fact))]),
        author=neutralise(author) if isinstance(author, str) else author,
        timestamp=happened.astimezone(timezone.utc).isoformat(),
        custom_metadata=extra,
    )


def entry_time(index: int, entry: MemoryEntry) -> datetime | None:
    """When an entry's content happened (its ISO 8601 `timestamp`; naive means UTC), or None
    when it has none. A value that is no time is an error naming the entry."""
    if entry.timestamp is None:
        return None
    try:
        happened = datetime.fromisoformat(entry.timestamp.strip())
    except (TypeError, ValueError) as exc:
        name = repr(entry.id) if entry.id else f"#{index}"
        raise InputValidationError(
            f"MemoryEntry {name}: timestamp {entry.timestamp!r} is not an ISO 8601 time."
        ) from exc
    return happened if happened.tzinfo else happened.replace(tzinfo=timezone.utc)


def entry_memory_id(scope: Scope, entry: MemoryEntry) -> str:
    """A `MemoryEntry` with an id becomes the same memory however often it is added, and never
    collides with another scope's memory (the id is derived per scope); one without gets a new
    id."""
    if not entry.id:
        return str(uuid.uuid4())
    return str(uuid.uuid5(_ENTRY_NAMESPACE, f"{scope_key(scope)}\n{entry.id}"))


def keyed_ids(scope: Scope, key: str, fact: str) -> tuple[str, str]:
    """The memory id and CREATED revision id of a fact with a caller's key (`MemoryFact.key`):
    the same key in the same scope is the same memory however often it is written (never
    another scope's), and the revision id names the fact too, so writing the same key and
    fact again is recognised as the earlier write, and another fact under that key is not."""
    memory_id = uuid.uuid5(_KEY_NAMESPACE, f"{scope_key(scope)}\n{key}")
    return str(memory_id), str(uuid.uuid5(memory_id, fact))


def raw_event_memory_id(key: str, session_id: str | None, event_id: str) -> str:
    """The id of the memory of one raw event of a session in a scope (its canonical key): the
    same event is remembered once, however often it is added."""
    return str(uuid.uuid5(_RAW_EVENT_NAMESPACE, f"{key}\n{session_id}\n{event_id}"))
