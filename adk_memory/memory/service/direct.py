"""Direct writes: what a caller hands the memory service to store as memories, as given.

Owns: `PostgresMemoryService.writes`: `create_memory` / `create_memories` (Memory Bank's, with
keyed idempotent facts) and ADK's add_* calls (`add_memory`, `add_events_to_memory`,
`add_session_to_memory`): their checks, the user's opt-out (`core.Gate`) and the drafts of
their memories, written by the one write path (`writes.Writer`). Whether ADK's calls generate
memories or keep raw events is the service's mode's (`modes.py`), never decided here. It never
writes SQL itself (the store does) and never imports the session service: it reads sessions
only through ADK's `Session` and `Event` types.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session

from ...config import TrustConfig, TtlConfig
from ...errors import InputValidationError, NotFoundError
from ...telemetry import traced
from ..checks import MAX_DIRECT_FACTS, check_key, check_mapping, revision_options
from ..entries import entry_memory_id, entry_text, entry_time, keyed_ids
from ..models import Memory, MemoryFact, RevisionOptions, SourceType
from ..policy.screen import Screened
from ..scope import Scope, user_scope, validate_scope
from .core import Gate, believed
from .modes import Mode
from .writes import Draft, Writer, about_item


class DirectWrites:
    """Memories written as given (see the module docstring). Built with the one write path,
    the gate, the TTL and trust settings, and the service's mode (ADK's calls in extraction
    mode, and `add_memory` with `consolidate`, hand their material to generation)."""

    def __init__(
        self,
        writer: Writer,
        gate: Gate,
        *,
        ttl: TtlConfig,
        trust: TrustConfig,
        generation: Mode,
    ) -> None:
        self._writer = writer
        self._gate = gate
        self._ttl = ttl
        self._trust = trust
        self._generation = generation

    @traced("memory.create_memory")
    async def create_memory(
        self,
        fact: str,
        scope: Mapping[str, str],
        *,
        topics: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        content: Mapping[str, Any] | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        ttl: timedelta | None = None,
        source_type: SourceType = SourceType.BOOTSTRAPPED,
        revision_labels: Mapping[str, str] | None = None,
        revision_ttl: timedelta | None = None,
        disable_memory_revisions: bool = False,
    ) -> Memory:
        """Store a fact as a memory of `scope`, as given (no consolidation): redacted, then
        judged by the guard. Its CREATED revision carries `revision_labels` and is kept for
        `revision_ttl` (default: the configuration's), or is never listed with
        `disable_memory_revisions` (Memory Bank's per-request revision options). A quarantined
        fact is stored but not live until an operator approves it: the memory returned says so
        (`quarantined` True, `guard` the rule id and reason) and a WARNING is logged with the
        rule id. It is a result, not an error, because the fact was stored (an operator may
        approve it); check `memory.quarantined`.

        Raises:
          MemoryRejectedError: the guard refused the fact (nothing is stored).
        """
        item = MemoryFact(
            fact,
            topics=topics,
            metadata=metadata,
            content=content,
            importance=importance,
            confidence=confidence,
            ttl=ttl,
            source_type=source_type,
        )
        revisions = revision_options(revision_labels, revision_ttl, disable_memory_revisions)
        [memory] = await self._create_all([item], scope, itemised=False, revisions=revisions)
        return memory

    @traced("memory.create_memories")
    async def create_memories(
        self,
        facts: Sequence[str | MemoryFact],
        scope: Mapping[str, str],
        *,
        revision_labels: Mapping[str, str] | None = None,
        revision_ttl: timedelta | None = None,
        disable_memory_revisions: bool = False,
    ) -> list[Memory]:
        """Store many facts as memories of one `scope` (one scope per call, so a call can never
        spread over users), each as `create_memory` would, in one statement: one embedding call
        (the embedder batches), every memory written with its CREATED revision at once, safe to
        replay after a lost reply. A `str` item is a fact with the defaults; a `MemoryFact`
        carries its own topics, metadata, importance, confidence, TTL, source type, and a `key`
        that makes writing it idempotent (an import run again or resumed writes each keyed fact
        once; see `MemoryFact`).

        All or nothing: a bad item raises `InputValidationError` naming its index, a rejected
        fact `MemoryRejectedError` (its index in the error's notes), and nothing is stored.
        Quarantined facts are stored under the quarantine, as by `create_memory`. Returns the
        memories in the order given: a keyed fact's whether this call or an earlier one wrote
        it, and none for a keyed fact that was not written (its key's memory was deleted, or
        holds another fact). The revision options are `create_memory`'s, for every fact.
        """
        revisions = revision_options(revision_labels, revision_ttl, disable_memory_revisions)
        return await self._create_all(facts, scope, itemised=True, revisions=revisions)

    async def _create_all(
        self,
        items: Sequence[str | MemoryFact],
        scope: Mapping[str, str],
        *,
        itemised: bool,
        revisions: RevisionOptions | None = None,
    ) -> list[Memory]:
        """`create_memories`; `itemised`: errors name the item they are about."""
        checked = validate_scope(scope)
        await self._gate.refuse_opted_out(checked)
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise InputValidationError("facts must be a list of strings or MemoryFact objects.")
        facts = [MemoryFact(item) if isinstance(item, str) else item for item in items]
        for index, item in enumerate(facts):
            with about_item(index if itemised else None):
                if not isinstance(item, MemoryFact):
                    raise InputValidationError("Each fact must be a string or a MemoryFact.")
        screened = await self._writer.screen(
            [item.fact for item in facts], checked, "api", direct=True, itemised=itemised
        )
        drafts = []
        for index, (item, kept) in enumerate(zip(facts, screened, strict=True)):
            with about_item(index if itemised else None):
                drafts.append(self._draft(checked, item, kept))
        written = await self._writer.write(checked, drafts, itemised=itemised, revisions=revisions)
        created = {m.id: m for m in written}
        writes: dict[str, str | None] = {}  # a key given twice in one call: its first is written
        for draft in drafts:
            writes.setdefault(draft.memory_id, draft.revision_id)
        memories = []
        for item, draft in zip(facts, drafts, strict=True):
            memory = created.get(draft.memory_id)
            if item.key is not None and (
                memory is None or writes[draft.memory_id] != draft.revision_id
            ):
                continue  # its memory was deleted, or the key names another fact: left out
            if memory is None:  # a fresh id: only a delete between a commit and its replay
                raise NotFoundError(
                    f"Memory {draft.memory_id} was deleted before its creation was confirmed."
                )
            memory = believed(memory, self._trust)
            kept = draft.screened
            memories.append(
                memory.model_copy(update={"quarantined": True, "guard": kept.guarded})
                if kept.quarantined
                else memory
            )
        return memories

    def _draft(self, scope: Scope, item: MemoryFact, kept: Screened) -> Draft:
        """A `MemoryFact`'s draft: a keyed fact's ids derived from its key and fact (so writing
        it again writes nothing), else fresh ones."""
        fact_key = check_key(item.key)
        memory_id, revision_id = (
            keyed_ids(scope, fact_key, kept.fact)
            if fact_key is not None
            else (str(uuid.uuid4()), None)
        )
        return Draft(
            memory_id,
            kept,
            item.ttl if item.ttl is not None else self._ttl.for_create(),
            topics=item.topics,
            metadata=item.metadata,
            content=item.content,
            importance=item.importance,
            confidence=item.confidence,
            source_type=item.source_type,
            create_time=item.create_time,
            update_time=item.update_time or item.create_time,
            revision_id=revision_id,
        )

    @traced("memory.add_memory")
    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Store each entry's text as a memory of the user (entry metadata kept; an entry's
        `custom_metadata["topics"]` becomes its topics; its `timestamp`, when the content
        happened, becomes the memory's time, so an import keeps its dates). With
        `custom_metadata={"consolidate": True}` (extraction mode), the entries are consolidated
        into existing memories instead, in the background. Every text is redacted and judged by
        the guard first; one rejected entry raises `MemoryRejectedError` and nothing of the call
        is stored."""
        scope = user_scope(app_name, user_id)
        custom_metadata = check_mapping("custom_metadata", custom_metadata)
        if isinstance(memories, (str, bytes)) or not isinstance(memories, Sequence):
            raise InputValidationError("memories must be a list of ADK MemoryEntry objects.")
        for entry in memories:
            if not isinstance(entry, MemoryEntry):
                raise InputValidationError("memories must be ADK MemoryEntry objects.")
        await self._gate.refuse_opted_out(scope)
        happened = [entry_time(i, e) for i, e in enumerate(memories)]
        screened = await self._writer.screen(
            [entry_text(e) for e in memories], scope, "add_memory", direct=True
        )
        if custom_metadata and custom_metadata.get("consolidate"):
            texts = [s.fact for s in screened]
            for start in range(0, len(texts), MAX_DIRECT_FACTS):
                await self._generation.generate_memories(
                    facts=texts[start : start + MAX_DIRECT_FACTS], scope=scope
                )
            return
        ttl = self._ttl.for_create()
        drafts = []
        for i, (entry, text) in enumerate(zip(memories, screened, strict=True)):
            metadata = {**(custom_metadata or {}), **entry.custom_metadata}
            topics = metadata.pop("topics", None) or []
            if entry.author:
                metadata.setdefault("author", entry.author)
            drafts.append(
                Draft(
                    entry_memory_id(scope, entry),
                    text,
                    ttl,
                    topics=topics if isinstance(topics, list) else [str(topics)],
                    metadata=metadata,
                    create_time=happened[i],
                    update_time=happened[i],
                )
            )
        await self._writer.write(scope, drafts)

    @traced("memory.add_session_to_memory")
    async def add_session_to_memory(self, session: Session) -> None:
        """Remember the session: in extraction mode, enqueue generation from its new events (the
        turn never waits); in raw-events mode, one memory per event with text. A session an
        erasure removed (an old session object replayed after its user was erased) is refused
        with `ErasedError`: nothing of it is remembered again."""
        if not isinstance(session, Session):
            raise InputValidationError("session must be an ADK Session.")
        await self._generation.remember_session(session, self.add_events_to_memory)

    @traced("memory.add_events_to_memory")
    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Remember these events (a delta): in extraction mode, enqueue generation from them; in
        raw-events mode, each event with text once (an event already remembered, or remembered
        and then deleted, is skipped), redacted and judged by the guard: an event it rejects is
        not remembered (logged), one it quarantines is held for an operator. Events of a
        `session_id` an erasure removed are refused with `ErasedError`."""
        scope = user_scope(app_name, user_id)
        custom_metadata = check_mapping("custom_metadata", custom_metadata)
        session_id, kept = await self._gate.admit_events(scope, session_id, events)
        await self._generation.remember_events(scope, kept, session_id, custom_metadata or {})
