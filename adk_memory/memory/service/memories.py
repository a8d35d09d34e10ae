"""A scope's memories, one by one: read, list, change, delete, their histories, and withdrawing
a session as their source.

Owns: `PostgresMemoryService.memories`: get / list / update / delete by id (ADK's form and
Memory Bank's), revisions (listed, filtered by label, got one by one, rolled back to, imported
from elsewhere), Memory Bank's purge by filter (`purge_memories`), and `revoke_source` (the
memories a session supports deleted, what their other sources said generated again by the
service's mode). Every read hands out a memory with its effective confidence (`core.believed`);
every change of a user's memory takes the user's opt-out (`core.Gate`) and redacts and guards
a new fact. Creating memories is the one write path's (`direct.py`, `writes.py`). It never
writes SQL itself (the store does) and never reads another scope's memories.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

from ...config import TrustConfig, TtlConfig
from ...errors import InputValidationError, NotFoundError
from ...telemetry import traced
from ..checks import (
    as_filter,
    check_count,
    check_fact,
    check_id,
    check_key,
    check_labels,
    check_mapping,
    check_session_id,
    check_time,
    check_topics,
    check_unit,
    decode_token,
    encode_token,
    revision_options,
    scope_of,
    seconds,
)
from ..filters import revision_label_filter
from ..models import (
    GenerateMemoriesOperation,
    Memory,
    MemoryFilter,
    MemoryPage,
    MemoryRevision,
    MetadataConjunction,
    PastRevision,
    PurgeResult,
)
from ..policy.screen import FactScreen, MemoryRejectedError
from ..scope import kind_key, read_for, scope_key, validate_scope
from ..store import MemoryChange, MemoryStore
from .core import Embedding, Gate, Readiness, believed
from .modes import Mode

logger = logging.getLogger(__name__)


class Memories:
    """One scope's memories by id (see the module docstring). Built with the memory store, the
    screen and embedding a new fact goes through, the gate, the TTL and trust settings, and
    the service's mode (for `revoke_source`)."""

    def __init__(
        self,
        store: MemoryStore,
        screen: FactScreen,
        embedding: Embedding,
        gate: Gate,
        ready: Readiness,
        *,
        ttl: TtlConfig,
        trust: TrustConfig,
        generation: Mode,
    ) -> None:
        self._store = store
        self._screen = screen
        self._embedding = embedding
        self._gate = gate
        self._ready = ready
        self._ttl = ttl
        self._trust = trust
        self._revision_ttl = ttl.revision_seconds()
        self._generation = generation

    def _believed(self, memory: Memory) -> Memory:
        return believed(memory, self._trust)

    @traced("memory.get_memory")
    async def get_memory(self, memory_id: str, scope: Mapping[str, str]) -> Memory | None:
        """The live memory with this id in this scope, or None (never another scope's)."""
        checked = validate_scope(scope)
        store = await self._ready()
        memory = await store.get(check_id(memory_id), scope_key(checked))
        return None if memory is None else self._believed(memory)

    @traced("memory.get_memories")
    async def get_memories(
        self, memory_ids: Sequence[str], scope: Mapping[str, str]
    ) -> dict[str, Memory]:
        """The live memories with these ids in this scope, by id, in one statement (ids that
        are not live there are left out: never another scope's)."""
        checked = validate_scope(scope)
        ids = [check_id(memory_id) for memory_id in memory_ids]
        if not ids:
            return {}
        store = await self._ready()
        found = await store.get_many(ids, scope_key(checked))
        return {memory_id: self._believed(m) for memory_id, m in found.items()}

    @traced("memory.list_memories")
    async def list_memories(
        self,
        scope: Mapping[str, str] | None = None,
        *,
        filter: MemoryFilter | str | None = None,
        filter_groups: Sequence[MetadataConjunction] | None = None,
        page_size: int = 50,
        page_token: str | None = None,
        include_quarantined: bool = False,
    ) -> MemoryPage:
        """Live memories of `scope`, newest update first, one page at a time.

        `scope=None` lists every scope's facts: an operator's view (CLI, exports), never one to
        hand to a model or an end user, and never a procedure (its text is shown only by the
        procedure rule: `retrieve_procedures`, or a filter for procedures with a scope).
        `include_quarantined` adds the memories the guard holds back (marked `quarantined`;
        their rule and reason are in `list_quarantined`): an operator's view too. Without it a
        quarantined memory is never listed, with a scope or without.
        """
        key = scope_key(validate_scope(scope)) if scope is not None else None
        filter = as_filter(filter, filter_groups)
        if key is not None:
            key, filter = kind_key(key, filter)
        elif filter is not None and filter.memory_type is not None:
            raise InputValidationError("Listing memories of one kind needs a scope.")
        check_count("page_size", page_size, 1000)
        after = decode_token(page_token) if page_token else None
        store = await self._ready()
        rows = await store.list_memories(
            key,
            filter,
            after,
            page_size + 1,
            replica=read_for(scope),
            quarantined=include_quarantined,
        )
        more = len(rows) > page_size
        rows = rows[:page_size]
        return MemoryPage(
            memories=[self._believed(m) for m in rows],
            next_page_token=encode_token(rows[-1]) if more and rows else None,
        )

    @traced("memory.update_memory")
    async def update_memory(
        self,
        memory_id: str,
        scope: Mapping[str, str],
        *,
        fact: str | None = None,
        topics: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        ttl: timedelta | None = None,
        labels: Mapping[str, str] | None = None,
        revision_ttl: timedelta | None = None,
        disable_memory_revisions: bool = False,
    ) -> Memory:
        """Change a memory (fields left None are kept) and record an UPDATED revision, labelled
        `labels`, kept for `revision_ttl` (default: the configuration's) or never listed with
        `disable_memory_revisions`.

        The expiry is reset to now + `ttl`, else now + the configured default TTL, else kept. A
        new fact is redacted and judged by the guard; one the guard does not allow outright is
        refused (a live memory is never turned into a quarantined one).

        Raises:
          LookupError: no live memory with this id in this scope.
          MemoryRejectedError: the guard rejected or would quarantine the new fact.
        """
        checked = validate_scope(scope)
        memory_id = check_id(memory_id)
        revisions = revision_options(labels, revision_ttl, disable_memory_revisions)
        await self._gate.refuse_opted_out(checked)
        if fact is not None:
            screened = await self._screen.admit(check_fact(fact), checked, "api")
            if screened.quarantined:
                raise MemoryRejectedError(screened.verdict)
            fact = screened.fact
        vectors = await self._embedding.embed([fact], "document") if fact is not None else None
        change = MemoryChange(
            fact=fact,
            topics=self._screen.topics(check_topics(topics)),
            metadata=self._screen.json(check_mapping("metadata", metadata)),
            importance=check_unit("importance", importance),
            confidence=check_unit("confidence", confidence),
            embedding=vectors[0] if vectors else None,
            ttl_seconds=seconds(ttl if ttl is not None else self._ttl.for_update()),
            labels=dict(revisions.labels),
        )
        store = await self._ready()
        memory = await store.update(
            memory_id, scope_key(checked), change, revisions.seconds(self._revision_ttl)
        )
        if memory is None:
            raise NotFoundError(f"No memory {memory_id} in scope {checked}.")
        return self._believed(memory)

    @traced("memory.delete_memory")
    async def delete_memory(
        self,
        *,
        app_name: str | None = None,
        user_id: str | None = None,
        memory_id: str | None = None,
        scope: Mapping[str, str] | None = None,
    ) -> None:
        """Delete one memory by id, keeping its revisions (ADK's contract).

        ADK's form names the user (`app_name`, `user_id`); Memory Bank's names the `scope`. A
        memory of another scope is never touched, even with its id. Without a `memory_id`
        nothing is deleted (logged at warning), as in ADK's `InMemoryMemoryService`: ADK's
        `Context.delete_memory()` defaults the id to None, and "no id" must never mean "all".
        Forgetting a whole scope is `purge(scope)`; a whole user, `erase_user`.
        """
        checked = scope_of(app_name, user_id, scope)
        if not memory_id:
            logger.warning(
                "delete_memory without a memory_id deletes nothing; use purge(scope) to forget "
                "a whole scope."
            )
            return
        store = await self._ready()
        await store.delete(scope_key(checked), check_id(memory_id), None, self._revision_ttl)

    @traced("memory.list_revisions")
    async def list_revisions(
        self,
        memory_id: str,
        scope: Mapping[str, str],
        *,
        labels: Mapping[str, str] | None = None,
        filter: str | None = None,
    ) -> list[MemoryRevision]:
        """A memory's history, oldest first; still there after the memory was deleted.
        `labels`: only revisions carrying all of these labels; `filter`: the same in Memory
        Bank's ListMemoryRevisions form, `labels.KEY="VALUE"` joined by AND (spaces around `=`
        allowed: `labels.key = "v" AND labels.other = "w"`)."""
        checked = validate_scope(scope)
        wanted = {**check_labels(labels), **revision_label_filter(filter)}
        store = await self._ready()
        history = await store.revisions(
            check_id(memory_id), scope_key(checked), replica=read_for(checked)
        )
        return [r for r in history if wanted.items() <= r.labels.items()]

    @traced("memory.get_revision")
    async def get_revision(
        self, memory_id: str, scope: Mapping[str, str], revision_id: str
    ) -> MemoryRevision:
        """One revision of a memory (live or deleted) of this scope (Memory Bank's
        GetMemoryRevision). Raises NotFoundError when the memory has no such revision here
        (another scope's, an expired one, or one of another memory)."""
        revision_id = check_id(revision_id)
        for revision in await self.list_revisions(memory_id, scope):
            if revision.id == revision_id:
                return revision
        raise NotFoundError(f"No revision {revision_id} of memory {memory_id} in this scope.")

    @traced("memory.rollback_memory")
    async def rollback_memory(
        self, memory_id: str, scope: Mapping[str, str], target_revision_id: str
    ) -> Memory:
        """Set a live memory's fact back to what it was at one of its revisions (Memory Bank's
        RollbackMemory): an update like any other (redacted, guarded, its expiry reset as
        `update_memory` does) whose UPDATED revision is labelled `rolled_back_to` with the
        target's id, so the history shows the rollback and it can itself be rolled back.
        Topics and metadata are kept (a revision records the fact only).

        Raises:
          NotFoundError: no live memory with this id here, or no such revision of it.
          InputValidationError: the revision holds no fact.
        """
        revision = await self.get_revision(memory_id, scope, target_revision_id)
        if revision.fact is None:
            raise InputValidationError(f"Revision {revision.id} holds no fact to roll back to.")
        return await self.update_memory(
            memory_id, scope, fact=revision.fact, labels={"rolled_back_to": revision.id}
        )

    @traced("memory.purge_memories")
    async def purge_memories(
        self,
        scope: Mapping[str, str] | None = None,
        *,
        filter: MemoryFilter | str | None = None,
        filter_groups: Sequence[MetadataConjunction] | None = None,
        force: bool = False,
    ) -> PurgeResult:
        """Delete the memories a filter matches (Memory Bank's PurgeMemories): `filter` (an
        AIP-160 text, e.g. `update_time < "2024-01-01T00:00:00Z"` or `scope.user_id = "u1"`, or
        a `MemoryFilter`) and/or `filter_groups`, within `scope` (None: every scope's facts,
        an operator's purge; never a procedure or a quarantined memory). Without `force` it is
        a dry run: what would go is counted and listed, nothing is deleted. With it, each
        memory is deleted as `delete_memory` does (a DELETED revision labelled `reason:
        purged`), one at a time, so a purge stopped part way is resumed by running it again.
        A whole scope without a filter is `purge(scope)`; a whole user, `erase_user`."""
        flt = as_filter(filter, filter_groups)
        if flt is None or flt == MemoryFilter():
            raise InputValidationError(
                "A purge by filter needs a filter; purge(scope) forgets a whole scope."
            )
        matched: list[Memory] = []
        token: str | None = None
        while True:
            page = await self.list_memories(scope, filter=flt, page_size=1000, page_token=token)
            matched.extend(page.memories)
            token = page.next_page_token
            if token is None:
                break
        if not force:
            return PurgeResult(purge_count=len(matched), memory_ids=[m.id for m in matched])
        store = await self._ready()
        labels = {"reason": "purged"}
        purged = [
            m.id
            for m in matched
            if await store.delete(scope_key(m.scope), m.id, labels, self._revision_ttl)
        ]
        return PurgeResult(purge_count=len(purged), memory_ids=purged, purged=True)

    @traced("memory.import_revisions")
    async def import_revisions(
        self, scope: Mapping[str, str], history: Mapping[str, Sequence[PastRevision]]
    ) -> int:
        """Add live memories' past revisions kept elsewhere (Memory Bank's, on import) to their
        histories (`history`: memory id -> its past revisions), each at its own time, facts and
        labels redacted, in one statement. A revision whose key its memory already has is
        skipped, so adding them again adds nothing; the memories themselves are not changed.
        Returns how many were added; none for a memory that is not live in this scope (never
        another scope's)."""
        checked = validate_scope(scope)
        memory_ids: list[str] = []
        ids: list[str] = []
        kept: list[PastRevision] = []
        for memory_id, revisions in history.items():
            memory_id = check_id(memory_id)
            for revision in revisions:
                if not isinstance(revision, PastRevision) or check_key(revision.key) is None:
                    raise InputValidationError("Each revision must be a PastRevision with a key.")
                if check_time("A revision's create_time", revision.create_time) is None:
                    raise InputValidationError("A revision's create_time is required.")
                check_time("A revision's expire_time", revision.expire_time)
                memory_ids.append(memory_id)
                ids.append(str(uuid.uuid5(uuid.UUID(memory_id), revision.key)))
                kept.append(
                    replace(
                        revision,
                        fact=None if revision.fact is None else self._screen.text(revision.fact),
                        labels=self._screen.json(dict(revision.labels or {})),
                        extracted_facts=self._screen.texts(list(revision.extracted_facts)),
                    )
                )
        if not kept:
            return 0
        await self._gate.refuse_opted_out(checked)
        store = await self._ready()
        return await store.import_revisions(scope_key(checked), memory_ids, ids, kept)

    @traced("memory.revoke_source")
    async def revoke_source(
        self, session_id: str, scope: Mapping[str, str]
    ) -> list[GenerateMemoriesOperation]:
        """Withdraw a session as a source: every memory of `scope` derived from it, even in
        part, is deleted (its revision labelled `source_revoked`), and what its other sources
        said (their extracted facts, kept in the revisions) is generated again. Returns those
        regenerations; a memory with no other source is simply gone."""
        checked = validate_scope(scope)
        session_id = check_session_id(session_id)
        store = await self._ready()
        key = scope_key(checked)
        derived = await store.derived_from(key, session_id)
        labels = {"reason": "source_revoked", "session_id": session_id}
        remaining: list[str] = []
        for memory_id, other_facts in derived:
            await store.delete(key, memory_id, labels, self._revision_ttl)
            remaining.extend(f for f in other_facts if f not in remaining)
        if not remaining:
            return []
        return await self._generation.regenerate(remaining, checked)
