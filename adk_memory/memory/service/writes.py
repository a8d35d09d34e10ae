"""The one write path of a direct write: screen, embed, build each `NewMemory`, insert.

Owns: checking and screening a batch of facts (`Writer.screen`: redacted, judged by the guard;
a direct write is all or nothing), and writing screened facts (`Writer.write`: one embedding
call for the batch, each memory's fields checked and redacted, a quarantined fact under its
scope's quarantine key with its verdict in the revision, one INSERT for them all). Every
direct write (`create_memories`, ADK's `add_memory`, raw events) goes through it; what differs
between them is only the `Draft` each builds. Errors about one item of a batch name it
(`about_item`). It never writes SQL itself (the store does) and never checks consent (the
caller's `Gate` has, before).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from ...errors import InputValidationError
from ..checks import (
    check_fact,
    check_mapping,
    check_source_type,
    check_time,
    check_topics,
    check_unit,
    seconds,
)
from ..models import Memory, RevisionOptions, SourceType
from ..policy.screen import FactScreen, MemoryRejectedError, Screened, guard_labels
from ..scope import Scope, quarantine_key, scope_key
from ..store import NewMemory
from .core import Embedding, Readiness


@contextmanager
def about_item(index: int | None) -> Iterator[None]:
    """Errors raised inside name the item of a batch they are about (`index`; None: no batch)."""
    try:
        yield
    except MemoryRejectedError as error:
        if index is not None:
            error.add_note(f"Item {index} of the batch.")
        raise
    except InputValidationError as error:
        if index is None:
            raise
        raise InputValidationError(f"Item {index}: {error}") from error


@dataclass(frozen=True)
class Draft:
    """One memory to write: its screened fact and the fields its caller gives it, unchecked
    (the writer checks and redacts them). `revision_id`: a keyed fact's (see `entries.keyed_ids`),
    else the store's fresh one."""

    memory_id: str
    screened: Screened
    ttl: timedelta | None
    topics: Sequence[str] | None = None
    metadata: Mapping[str, Any] | None = None
    content: Mapping[str, Any] | None = None
    importance: float | None = None
    confidence: float | None = None
    source_type: SourceType = SourceType.BOOTSTRAPPED
    source_session_id: str | None = None
    source_event_ids: Sequence[str] = field(default_factory=tuple)
    create_time: datetime | None = None
    update_time: datetime | None = None
    revision_id: str | None = None


class Writer:
    """Screens and writes direct writes' facts (see the module docstring)."""

    def __init__(
        self,
        screen: FactScreen,
        embedding: Embedding,
        ready: Readiness,
        revision_ttl: float | None,
    ) -> None:
        self._screen = screen
        self._embedding = embedding
        self._ready = ready
        self._revision_ttl = revision_ttl

    async def screen(
        self,
        facts: Sequence[str],
        scope: Scope,
        source: str,
        *,
        direct: bool,
        itemised: bool = False,
    ) -> list[Screened]:
        """Each fact checked, redacted and judged. A direct write (`direct`) is all or nothing:
        one rejected fact raises `MemoryRejectedError` before anything is stored; `itemised`:
        errors name the item they are about."""
        checked = []
        for index, fact in enumerate(facts):
            with about_item(index if itemised else None):
                checked.append(check_fact(fact))
        if direct:
            return await self._screen.admit_all(checked, scope, source, itemised=itemised)
        return await self._screen.screen_all(checked, scope, source)

    async def write(
        self,
        scope: Scope,
        drafts: Sequence[Draft],
        *,
        itemised: bool = False,
        revisions: RevisionOptions | None = None,
    ) -> list[Memory]:
        """Embed the drafts' facts in one call, check each draft's fields, and insert them all
        in one statement (each with its CREATED revision, carrying the request's `revisions`
        labels and kept as long as it says). Returns the memories the store wrote (a replayed
        keyed one is not written again)."""
        revisions = revisions or RevisionOptions()
        vectors = await self._embedding.embed([d.screened.fact for d in drafts], "document")
        key = scope_key(scope)
        batch = []
        for index, draft in enumerate(drafts):
            with about_item(index if itemised else None):
                new = self._new_memory(draft, scope, key, vectors[index] if vectors else None)
            if revisions.labels:
                new = replace(new, labels={**revisions.labels, **(new.labels or {})})
            batch.append(
                new if draft.revision_id is None else replace(new, revision_id=draft.revision_id)
            )
        store = await self._ready()
        return await store.insert_many(batch, revisions.seconds(self._revision_ttl))

    def _new_memory(
        self, draft: Draft, scope: Scope, key: str, embedding: Sequence[float] | None
    ) -> NewMemory:
        """One draft's memory, its fields checked and redacted. A quarantined fact goes under
        its scope's quarantine key, its verdict in the revision."""
        screened = draft.screened
        return NewMemory(
            id=draft.memory_id,
            scope_key=quarantine_key(key) if screened.quarantined else key,
            scope=scope,
            fact=screened.fact,
            topics=self._screen.topics(check_topics(draft.topics)) or [],
            metadata=self._screen.json(check_mapping("metadata", draft.metadata) or {}),
            content=self._screen.json(check_mapping("content", draft.content)),
            importance=check_unit("importance", draft.importance),
            confidence=check_unit("confidence", draft.confidence),
            source_type=check_source_type(draft.source_type),
            source_session_id=draft.source_session_id,
            source_event_ids=list(draft.source_event_ids),
            embedding=embedding,
            create_time=check_time("create_time", draft.create_time),
            update_time=check_time("update_time", draft.update_time),
            ttl_seconds=seconds(draft.ttl),
            labels=guard_labels(screened.verdict),
        )
