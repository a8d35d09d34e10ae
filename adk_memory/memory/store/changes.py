"""The typed requests a caller hands the store to write: what a new memory is, what a change
to one is, and the updates, deletions and watermark a generation applies together.

Owns: the shape of each write request (each one write: a request that carries its revision's
id is never reused, so its replay after a lost reply is recognised). It holds no SQL and
decides nothing: the service and the generator fill these in, `memories` writes them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..models import SourceType


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
    """One memory a generation updates: its id, the key it lives under, and the change."""

    memory_id: str
    scope_key: str
    change: MemoryChange


@dataclass(frozen=True)
class MemoryDeletion:
    """One memory a generation deletes, with the facts that led to it and its revision's
    labels."""

    memory_id: str
    scope_key: str
    extracted_facts: Sequence[str]
    labels: dict[str, str]
    revision_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    """The DELETED revision's id, chosen once so a replay writes the same revision."""


@dataclass(frozen=True)
class Watermark:
    """The last event of a session turned into memories of a scope (its id and timestamp):
    what a generation moves the session's watermark to."""

    scope_key: str
    session_id: str
    event_id: str
    event_time: float


@dataclass(frozen=True)
class GenerationWrites:
    """Everything one generation writes to the memories, applied together on the job's
    connection (`MemoryStore.apply_generation`)."""

    creates: Sequence[NewMemory] = ()
    updates: Sequence[MemoryUpdate] = ()
    deletes: Sequence[MemoryDeletion] = ()
    watermark: Watermark | None = None
