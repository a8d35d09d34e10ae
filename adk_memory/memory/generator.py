"""Runs one memory-generation job end to end: source -> facts -> candidates -> operations ->
one transaction.

Owns: the job payload's shape, the watermark rule (a session's events are turned into memories
once: a job only sees events after the last one processed for that session and scope), and
turning model decisions into store writes with provenance. At most two model calls per job
(extraction, consolidation) whatever the size of the store, and one more for the scope's structured
profiles when it has profile schemas (natural-language memories turned off: that one only); profile
field changes commit in the same transaction as the memories. It never commits anything outside
`MemoryStore.apply_generation`, so a worker killed at any point leaves no partial writes and the
retried job produces the same memories once.

Privacy and safety: a payload's events are redacted when it is built (and again when it is read,
for jobs queued before a redactor was configured), so the model never sees what the redactor
removes; every fact the model extracts or writes is redacted and judged by the guard before it
is consolidated or stored (a rejected one is dropped and reported without its text, a
quarantined one is stored under quarantine and never consolidated into a live memory). The
job's result names memory ids and actions, never facts.

Trust: each fact carries its source, and `trust.enforce` rules on conflicts between sources
after the model answers (a less trusted source cannot overwrite a more trusted memory, whatever
the model says) and sets each write's source type and confidence.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.genai import types

from ..config import ConsolidationConfig, CustomizationConfig, MemoryBankConfig
from ..telemetry import count_actions, traced
from . import trust
from .generation import (
    ExtractedFact,
    FieldChange,
    MemoryOperation,
    consolidate,
    conversation_contents,
    extract_facts,
    plain_creates,
    update_profiles,
)
from .generation.profiles import field_error
from .guard import GuardVerdict
from .jobs import ClaimedJob, JobQueue
from .models import Memory, MemoryAction, SourceType
from .profile_store import ProfileStore
from .scope import quarantine_key
from .screen import FactScreen, Screened, guard_labels
from .store import (
    MemoryChange,
    MemoryDeletion,
    MemoryStore,
    MemoryUpdate,
    NewMemory,
    Watermark,
)

Embed = Callable[[Sequence[str], str], Awaitable[list[list[float]] | None]]


def _events_data(events: Sequence[Event], screen: FactScreen) -> list[dict[str, Any]]:
    return [
        screen.event_data(e.model_dump(mode="json", exclude_none=True, by_alias=True))
        for e in events
    ]


def session_payload(
    session_id: str, events: Sequence[Event], options: dict[str, Any], screen: FactScreen
) -> dict[str, Any]:
    """A job that turns a session's (new) events into memories (their text redacted)."""
    return {
        "source": "session",
        "session_id": session_id,
        "events": _events_data(events, screen),
        **options,
    }


def contents_payload(
    contents: Sequence[Event | types.Content],
    session_id: str | None,
    options: dict[str, Any],
    screen: FactScreen,
) -> dict[str, Any]:
    """A job that turns given events or contents (a delta, not a whole session) into memories
    (their text redacted)."""
    return {
        "source": "contents",
        "session_id": session_id,
        "events": _events_data([c for c in contents if isinstance(c, Event)], screen),
        "contents": [
            screen.json(c.model_dump(mode="json", exclude_none=True))
            for c in contents
            if isinstance(c, types.Content)
        ],
        **options,
    }


def facts_payload(facts: Sequence[str], topic: str, options: dict[str, Any]) -> dict[str, Any]:
    """A job that consolidates already extracted facts (about `topic`, "" when unknown) into the
    scope's memories."""
    return {"source": "facts", "facts": list(facts), "topic": topic, **options}


def _after_watermark(events: list[Event], watermark: tuple[str, float] | None) -> list[Event]:
    """The events not yet processed: after the watermark event if it is among them, else those
    newer than its time."""
    if watermark is None:
        return events
    event_id, event_time = watermark
    for i, event in enumerate(events):
        if event.id == event_id:
            return events[i + 1 :]
    return [e for e in events if e.timestamp > event_time]


@dataclass(frozen=True)
class Material:
    """What a job's steps generate from, worked out once: its payload, its conversation as
    model contents, the scope's customization and when the conversation happened."""

    payload: dict[str, Any]
    conversation: list[types.Content]
    customization: CustomizationConfig
    time: datetime | None


class Generator:
    """The job handler: one generation job, from payload to committed memories."""

    def __init__(
        self,
        *,
        store: MemoryStore,
        profiles: ProfileStore,
        queue: JobQueue,
        llm: BaseLlm,
        embed: Embed,
        config: MemoryBankConfig,
        revision_ttl: float | None,
        screen: FactScreen,
    ) -> None:
        self._screen = screen
        self._store = store
        self._profiles = profiles
        self._queue = queue
        self._llm = llm
        self._embed = embed
        self._config = config
        self._revision_ttl = revision_ttl

    async def __call__(self, job: ClaimedJob) -> None:
        payload = job.payload
        session_id: str | None = payload.get("session_id")
        events = [
            Event.model_validate(self._screen.event_data(e)) for e in payload.get("events", [])
        ]
        watermark = None
        if payload["source"] == "session" and session_id:
            events = _after_watermark(
                events, await self._store.watermark(job.scope_key, session_id)
            )
            if events:
                watermark = Watermark(
                    job.scope_key, session_id, events[-1].id, events[-1].timestamp
                )
        customization = self._config.customization_for(frozenset(job.scope))
        material = Material(
            payload=payload,
            conversation=self._conversation(payload, events),
            customization=customization,
            time=datetime.fromtimestamp(events[-1].timestamp, timezone.utc) if events else None,
        )
        extracted = (
            []
            if customization.disable_natural_language_memories
            else await self._facts(job, material)
        )
        facts, held, refused = await self._judged(job, extracted)
        operations = await self._operations(
            job,
            facts,
            bool(payload.get("disable_consolidation")),
            customization.consolidation_config,
        )
        operations, more_held, more_refused = await self._judged_operations(job, operations)
        profile, profile_refused = await self._profile_changes(job, material)
        decisions = await trust.enforce(
            self._store,
            job.scope_key,
            operations,
            source_id=session_id,
            trust=self._config.trust,
            now=datetime.now(timezone.utc),
        )
        await self._apply(
            job,
            payload,
            decisions,
            [*held, *more_held],
            [*refused, *more_refused, *profile_refused],
            events,
            watermark,
            profile,
        )

    @traced("generation.guard", database=False)
    async def _judged(
        self, job: ClaimedJob, facts: list[ExtractedFact]
    ) -> tuple[list[ExtractedFact], list[tuple[ExtractedFact, Screened]], list[Screened]]:
        """The extracted facts, redacted and judged: (allowed, quarantined, rejected). Only
        allowed facts reach consolidation, so a quarantined fact never changes a live memory."""
        allowed: list[ExtractedFact] = []
        held: list[tuple[ExtractedFact, Screened]] = []
        refused: list[Screened] = []
        judged = await self._screen.screen_all([f.fact for f in facts], job.scope, "generation")
        for fact, screened in zip(facts, judged, strict=True):
            kept = fact.model_copy(update={"fact": screened.fact})
            if screened.rejected:
                refused.append(screened)
            elif screened.quarantined:
                held.append((kept, screened))
            else:
                allowed.append(kept)
        return allowed, held, refused

    async def _judged_operations(
        self, job: ClaimedJob, operations: list[MemoryOperation]
    ) -> tuple[list[MemoryOperation], list[tuple[ExtractedFact, Screened]], list[Screened]]:
        """The consolidation's operations with what they would write redacted and judged: a
        rejected create or update is dropped, a quarantined one becomes a quarantined memory of
        its own (the memory an update targeted stays as it was)."""
        kept: list[MemoryOperation] = []
        held: list[tuple[ExtractedFact, Screened]] = []
        refused: list[Screened] = []
        writes = [op.fact for op in operations if op.action != "DELETE" and op.fact is not None]
        judged = iter(await self._screen.screen_all(writes, job.scope, "generation"))
        for op in operations:
            extracted = tuple(self._screen.texts(op.extracted_facts))
            if op.action == "DELETE" or op.fact is None:
                kept.append(op.model_copy(update={"extracted_facts": extracted}))
                continue
            screened = next(judged)
            if screened.rejected:
                refused.append(screened)
            elif screened.quarantined:
                quarantined = ExtractedFact(
                    fact=screened.fact, topic=op.topic or "", source=op.source
                )
                held.append((quarantined, screened))
            else:
                update = {"fact": screened.fact, "extracted_facts": extracted}
                kept.append(op.model_copy(update=update))
        return kept, held, refused

    def _conversation(self, payload: dict[str, Any], events: list[Event]) -> list[types.Content]:
        """The job's conversation as model contents (none for a facts job)."""
        if payload["source"] == "facts":
            return []
        contents: list[Event | types.Content] = [*events]
        contents += [types.Content.model_validate(c) for c in payload.get("contents", [])]
        return conversation_contents(
            contents, include_function_calls=self._config.generation.include_function_calls
        )

    @traced("generation.extract", database=False)
    async def _facts(self, job: ClaimedJob, material: Material) -> list[ExtractedFact]:
        payload, conversation = material.payload, material.conversation
        if payload["source"] == "facts":
            topic = payload.get("topic", "")  # jobs enqueued before topics were carried
            source = payload.get("fact_source", "bootstrapped")
            return [ExtractedFact(fact=f, topic=topic, source=source) for f in payload["facts"]]
        if not conversation:
            return []
        return await extract_facts(
            self._llm, conversation, material.customization, now=material.time
        )

    @traced("generation.consolidate", database=False)
    async def _operations(
        self,
        job: ClaimedJob,
        facts: list[ExtractedFact],
        disable_consolidation: bool,
        settings: ConsolidationConfig,
    ) -> list[MemoryOperation]:
        """The facts' operations: created as given with `disable_consolidation` or when their
        topic is one of `settings.disabled_topics` (a forget request is still consolidated:
        only consolidation can find what to delete); else consolidated in one model call."""
        if not facts:
            return []
        if disable_consolidation:
            return plain_creates(facts)
        unmerged = set(settings.disabled_topics)
        apart = [f for f in facts if f.topic in unmerged and not f.forget]
        merged = [f for f in facts if f not in apart]
        operations = plain_creates(apart)
        if merged:
            candidates = await self._candidates(job, merged)
            operations += await consolidate(
                self._llm, merged, candidates, instructions=settings.instructions
            )
        return operations

    @traced("generation.profiles", database=False)
    async def _profile_changes(
        self, job: ClaimedJob, material: Material
    ) -> tuple[list[FieldChange], list[Screened]]:
        """The scope's profile changes from the same material (one model call; none without
        profile schemas), each value redacted, checked against its field's schema again (the
        redactor may have changed it) and judged by the guard: (allowed, refused). A value the
        guard would quarantine is refused too: a profile field has no quarantine."""
        schemas = self._config.structured_for(frozenset(job.scope))
        payload, conversation = material.payload, material.conversation
        facts = [str(f) for f in payload.get("facts", [])] if payload["source"] == "facts" else []
        if not schemas or not (conversation or facts):
            return [], []
        changes = await update_profiles(
            self._llm,
            schemas,
            await self._profiles.profiles(job.scope_key),
            conversation=conversation,
            facts=facts,
            instructions=material.customization.consolidation_config.instructions,
            now=material.time,
        )
        specs = {(s.id, name): s.field_schema(name) for s in schemas for name in s.fields}
        kept: list[FieldChange] = []
        refused: list[Screened] = []
        for change in changes:
            if change.clear:
                kept.append(change)
                continue
            value = self._screen.json(change.value)
            if field_error(specs[(change.schema_id, change.field)], value) is not None:
                continue  # redaction made it invalid: the stored value stays
            text = f"{change.field}: {json.dumps(value, ensure_ascii=False)}"
            screened = await self._screen.screen(text, job.scope, "generation")
            if screened.rejected or screened.quarantined:
                refused.append(screened)
            else:
                kept.append(FieldChange(change.schema_id, change.field, value))
        return kept, refused

    @traced("generation.candidates")
    async def _candidates(self, job: ClaimedJob, facts: list[ExtractedFact]) -> list[Memory]:
        """The existing memories most similar to each fact: one embedding call and one query
        for all the facts. With an embedder, similarity alone decides (full-text OR-matching
        would rank nearly every memory of a big scope: they all mention "the user"); without,
        full-text search does."""
        texts = [f.fact for f in facts]
        found = await self._store.candidates(
            job.scope_key,
            facts=texts,
            embeddings=await self._embed(texts, "query"),
            per_fact=self._config.generation.similar_memories,
        )
        now = datetime.now(timezone.utc)  # the model is shown each one's effective confidence
        return [trust.with_effective(m, self._config.trust, now) for m in found]

    async def _in_transaction(
        self, conn: Any, job: ClaimedJob, applied: list[tuple[MemoryAction, Memory]]
    ) -> None:
        """What else a generation writes in its transaction, after its memories: nothing for
        facts; the procedure learner records whose session supports what it wrote."""

    @traced("generation.apply")
    async def _apply(
        self,
        job: ClaimedJob,
        payload: dict[str, Any],
        decisions: trust.Decisions,
        held: list[tuple[ExtractedFact, Screened]],
        refused: list[Screened],
        events: list[Event],
        watermark: Watermark | None,
        profile: list[FieldChange],
    ) -> None:
        operations = [op for op, _ in decisions.applied]
        provenance = {id(op): known for op, known in decisions.applied}

        def of(op: MemoryOperation) -> trust.Provenance:
            return provenance.get(id(op)) or trust.created(op, self._config.trust)

        ttl = self._config.ttl
        labels = {str(k): str(v) for k, v in (payload.get("revision_labels") or {}).items()}
        metadata = dict(payload.get("metadata") or {})
        session_id = payload.get("session_id")
        event_ids = [e.id for e in events]
        source = (  # a profile field's source (a memory's is its operation's: `trust`)
            SourceType(payload.get("fact_source", SourceType.BOOTSTRAPPED))
            if payload["source"] == "facts"
            else SourceType.USER_INPUT
        )
        # A quarantined fact is created as a memory of its own, under the scope's quarantine key.
        to_create: list[tuple[MemoryOperation, Screened | None]] = [
            (op, None) for op in operations if op.action == "CREATE"
        ]
        to_create += [
            (
                MemoryOperation(
                    action="CREATE",
                    fact=f.fact,
                    topic=f.topic,
                    extracted_facts=(f.fact,),
                    source=f.source,
                ),
                s,
            )
            for f, s in held
        ]
        written = [op for op in operations if op.action == "UPDATE"] + [op for op, _ in to_create]
        vectors = await self._embed([op.fact or "" for op in written], "document")
        embedding = {id(op): vectors[i] for i, op in enumerate(written)} if vectors else {}
        created_ttl = ttl.for_generated_create()
        updated_ttl = ttl.for_generated_update()
        creates = [
            NewMemory(
                id=str(uuid.uuid4()),
                scope_key=job.scope_key if held_by is None else quarantine_key(job.scope_key),
                scope=job.scope,
                fact=op.fact or "",
                topics=[op.topic] if op.topic else [],
                metadata=metadata,
                confidence=of(op).confidence,
                source_type=of(op).source_type,
                source_session_id=session_id,
                source_event_ids=event_ids,
                embedding=embedding.get(id(op)),
                ttl_seconds=created_ttl.total_seconds() if created_ttl else None,
                extracted_facts=op.extracted_facts,
                labels=labels if held_by is None else {**labels, **guard_labels(held_by.verdict)},
            )
            for op, held_by in to_create
        ]
        quarantined = {  # each held memory's verdict, kept with the job's result
            new.id: held_by.verdict
            for new, (_, held_by) in zip(creates, to_create, strict=True)
            if held_by is not None
        }
        updates = [
            MemoryUpdate(
                op.target_id or "",
                job.scope_key,
                MemoryChange(
                    fact=op.fact,
                    topics=[op.topic] if op.topic else None,
                    embedding=embedding.get(id(op)),
                    ttl_seconds=updated_ttl.total_seconds() if updated_ttl else None,
                    extracted_facts=op.extracted_facts,
                    labels={**labels, **of(op).labels},
                    confidence=of(op).confidence,
                    source_type=of(op).source_type,
                    source_session_id=session_id,
                    source_event_ids=event_ids,
                ),
            )
            for op in operations
            if op.action == "UPDATE"
        ]
        updates += [
            MemoryUpdate(
                note.memory_id,
                job.scope_key,
                MemoryChange(
                    confidence=note.confidence,
                    extracted_facts=note.extracted_facts,
                    labels={**labels, **note.labels},
                    source_type=note.source_type,
                    source_session_id=session_id,
                    source_event_ids=event_ids,
                    touch=note.touch,
                ),
            )
            for note in decisions.notes
        ]
        deletes = [
            MemoryDeletion(
                op.target_id or "", job.scope_key, op.extracted_facts, {**labels, **of(op).labels}
            )
            for op in operations
            if op.action == "DELETE"
        ]

        noted = {note.memory_id for note in decisions.notes}

        async def complete(conn: Any, applied: list[tuple[MemoryAction, Memory]]) -> None:
            await self._profiles.apply(
                conn,
                scope_key=job.scope_key,
                scope=job.scope,
                changes=profile,
                source=(source, session_id),
                ttl_seconds=(
                    created_ttl.total_seconds() if created_ttl else None,
                    updated_ttl.total_seconds() if updated_ttl else None,
                ),
                labels=labels,
                revision_ttl=self._revision_ttl,
            )
            # Ids and actions only: the facts stay in the memories (see `JobQueue`). A change of
            # confidence alone (`trust.ConfidenceNote`) changed no fact: its revision says it.
            result: list[dict[str, Any]] = [
                _result_entry(action, memory.id, quarantined.get(memory.id))
                for action, memory in applied
                if memory.id not in noted
            ]
            result += [
                {"action": "REJECTED", "rule": s.verdict.rule, "reason": s.verdict.reason}
                for s in refused
            ]
            await self._in_transaction(conn, job, applied)
            await self._queue.complete(conn, job.id, result, job.attempt)

        await self._store.apply_generation(
            job_id=job.id,
            attempt=job.attempt,
            creates=creates,
            updates=updates,
            deletes=deletes,
            watermark=watermark,
            revision_ttl=self._revision_ttl,
            complete=complete,
        )
        count_actions(
            created=len(creates) - len(quarantined),
            updated=len(updates),
            deleted=len(deletes),
            quarantined=len(quarantined),
            rejected=len(refused),
        )


def _result_entry(
    action: MemoryAction, memory_id: str, held: GuardVerdict | None
) -> dict[str, Any]:
    """One change as a finished job keeps it: ids and action, and for a quarantined memory the
    guard's rule and reason (never a fact: see `JobQueue`)."""
    entry: dict[str, Any] = {
        "action": action.value,
        "memory_id": memory_id,
        "quarantined": held is not None,
    }
    if held is not None:
        entry.update(rule=held.rule, reason=held.reason)
    return entry
