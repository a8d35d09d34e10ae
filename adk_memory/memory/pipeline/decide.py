"""The decisions of a generation job between its reads and its write: judging what the model
wrote, and turning the trust rule's decisions into the plan the write phase applies.

Owns: the guard's part in generation (every extracted fact and every fact an operation would
write is redacted and judged before it is consolidated or stored: a rejected one is dropped and
reported without its text, a quarantined one becomes a memory of its own under the scope's
quarantine key and is never consolidated into a live memory; a profile value is redacted,
checked against its field's schema again and judged, and has no quarantine), the `Plan` (the
memory writes with their provenance, the profile changes, the support to record, what the
job's result reports) and the job's result (ids and actions, never a fact). It never reads or
writes the database and never calls a model (the screen's guard is CPU only): `read` reads,
`run` calls the model, `write` applies the plan.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...config import MemoryBankConfig, StructuredMemorySchemaConfig
from ..generation import ExtractedFact, FieldChange, MemoryOperation
from ..generation.profiles import field_error
from ..guard import GuardVerdict
from ..models import Memory, MemoryAction, SourceType
from ..policy import trust
from ..policy.screen import FactScreen, Screened, guard_labels
from ..scope import quarantine_key
from ..store import GenerationWrites, MemoryChange, MemoryDeletion, MemoryUpdate, NewMemory
from .kinds import Learner, Material, SupportWrite

Held = tuple[ExtractedFact, Screened]
"""A quarantined fact and its verdict: stored as a quarantined memory of its own."""


@dataclass
class Judged:
    """What the guard made of a job's facts and operations: kept, quarantined, rejected."""

    held: list[Held] = field(default_factory=list)
    refused: list[Screened] = field(default_factory=list)


async def judge_facts(
    screen: FactScreen, facts: list[ExtractedFact], scope: dict[str, str], judged: Judged
) -> list[ExtractedFact]:
    """The extracted facts the guard allows, redacted (the others go to `judged`). Only
    allowed facts reach consolidation, so a quarantined fact never changes a live memory."""
    allowed: list[ExtractedFact] = []
    verdicts = await screen.screen_all([f.fact for f in facts], scope, "generation")
    for fact, screened in zip(facts, verdicts, strict=True):
        kept = fact.model_copy(update={"fact": screened.fact})
        if screened.rejected:
            judged.refused.append(screened)
        elif screened.quarantined:
            judged.held.append((kept, screened))
        else:
            allowed.append(kept)
    return allowed


async def judge_operations(
    screen: FactScreen, operations: list[MemoryOperation], scope: dict[str, str], judged: Judged
) -> list[MemoryOperation]:
    """The consolidation's operations with what they would write redacted and judged: a
    rejected create or update is dropped, a quarantined one becomes a quarantined memory of
    its own (the memory an update targeted stays as it was)."""
    kept: list[MemoryOperation] = []
    writes = [op.fact for op in operations if op.action != "DELETE" and op.fact is not None]
    verdicts = iter(await screen.screen_all(writes, scope, "generation"))
    for op in operations:
        extracted = tuple(screen.texts(op.extracted_facts))
        if op.action == "DELETE" or op.fact is None:
            kept.append(op.model_copy(update={"extracted_facts": extracted}))
            continue
        screened = next(verdicts)
        if screened.rejected:
            judged.refused.append(screened)
        elif screened.quarantined:
            quarantined = ExtractedFact(fact=screened.fact, topic=op.topic or "", source=op.source)
            judged.held.append((quarantined, screened))
        else:
            kept.append(op.model_copy(update={"fact": screened.fact, "extracted_facts": extracted}))
    return kept


async def judge_profile(
    screen: FactScreen,
    schemas: Sequence[StructuredMemorySchemaConfig],
    changes: list[FieldChange],
    scope: dict[str, str],
    judged: Judged,
) -> list[FieldChange]:
    """The profile changes the guard allows, each value redacted and checked against its
    field's schema again (the redactor may have made it invalid: the stored value stays). A
    value the guard would quarantine is refused too: a profile field has no quarantine."""
    specs = {(s.id, name): s.field_schema(name) for s in schemas for name in s.fields}
    kept: list[FieldChange] = []
    for change in changes:
        if change.clear:
            kept.append(change)
            continue
        value = screen.json(change.value)
        if field_error(specs[(change.schema_id, change.field)], value) is not None:
            continue
        text = f"{change.field}: {json.dumps(value, ensure_ascii=False)}"
        screened = await screen.screen(text, scope, "generation")
        if screened.rejected or screened.quarantined:
            judged.refused.append(screened)
        else:
            kept.append(FieldChange(change.schema_id, change.field, value))
    return kept


def to_create(
    decisions: trust.Decisions, held: list[Held]
) -> list[tuple[MemoryOperation, Screened | None]]:
    """The memories to create: the applied CREATEs, and each quarantined fact as a memory of
    its own (with its verdict)."""
    creates: list[tuple[MemoryOperation, Screened | None]] = [
        (op, None) for op, _ in decisions.applied if op.action == "CREATE"
    ]
    creates += [
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
    return creates


def to_embed(
    decisions: trust.Decisions, creates: list[tuple[MemoryOperation, Screened | None]]
) -> list[MemoryOperation]:
    """The operations whose fact is written (updates, then creates): embedded in one call."""
    return [op for op, _ in decisions.applied if op.action == "UPDATE"] + [op for op, _ in creates]


@dataclass(frozen=True)
class ProfileWrite:
    """A job's profile changes and what their revisions record."""

    changes: list[FieldChange]
    source: tuple[SourceType, str | None]
    ttl_seconds: tuple[float | None, float | None]


@dataclass(frozen=True)
class Plan:
    """Everything a job writes, decided: the write phase applies it in one transaction."""

    memories: GenerationWrites
    labels: dict[str, str]
    profile: ProfileWrite | None
    support: SupportWrite | None
    quarantined: dict[str, GuardVerdict]
    """Each quarantined memory's verdict, kept with the job's result."""
    refused: list[Screened]
    noted: frozenset[str]
    """Memories whose confidence alone changed (`trust.ConfidenceNote`): no result entry."""


@dataclass(frozen=True)
class Draft:
    """What the plan is drawn from: the job's target, material and decisions."""

    learner: Learner
    material: Material
    decisions: trust.Decisions
    creates: list[tuple[MemoryOperation, Screened | None]]
    judged: Judged
    profile: list[FieldChange]
    labels: dict[str, str]
    metadata: dict[str, Any]
    updated_metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The metadata each updated memory gets (by id; one left out keeps its own):
    `updated_metadata`."""


def updated_metadata(
    decisions: trust.Decisions,
    targets: Mapping[str, Memory],
    metadata: dict[str, Any],
    strategy: str | None,
) -> dict[str, dict[str, Any]]:
    """The metadata the job's updates write, by Memory Bank's `metadata_merge_strategy`:
    OVERWRITE the request's, MERGE the memory's with the request's keys added (replacing equal
    keys); otherwise (none, or REQUIRE_EXACT_MATCH, whose targets already hold the request's)
    each keeps its own."""
    if strategy not in ("OVERWRITE", "MERGE"):
        return {}
    found: dict[str, dict[str, Any]] = {}
    for op, _ in decisions.applied:
        target = targets.get(op.target_id or "")
        if op.action == "UPDATE" and target is not None:
            found[target.id] = (
                dict(metadata) if strategy == "OVERWRITE" else {**target.metadata, **metadata}
            )
    return found


def plan(draft: Draft, vectors: list[list[float]] | None, config: MemoryBankConfig) -> Plan:
    """The job's plan, `vectors` the embeddings of `to_embed`'s operations (None: no
    embedder)."""
    written = to_embed(draft.decisions, draft.creates)
    embedding = {id(op): vectors[i] for i, op in enumerate(written)} if vectors else {}
    created_ttl, updated_ttl = config.ttl.for_generated_create(), config.ttl.for_generated_update()
    ttl = (
        created_ttl.total_seconds() if created_ttl else None,
        updated_ttl.total_seconds() if updated_ttl else None,
    )
    creates = _creates(draft, embedding, ttl[0], config)
    learner = draft.learner
    return Plan(
        memories=GenerationWrites(
            creates=creates,
            updates=_updates(draft, embedding, ttl[1]),
            deletes=_deletes(draft),
            watermark=draft.material.watermark,
        ),
        labels=draft.labels,
        profile=ProfileWrite(draft.profile, (learner.profile_source(), learner.source_id), ttl)
        if learner.learns_profiles
        else None,
        support=learner.support(draft.material),
        quarantined={
            new.id: held_by.verdict
            for new, (_, held_by) in zip(creates, draft.creates, strict=True)
            if held_by is not None
        },
        refused=draft.judged.refused,
        noted=frozenset(note.memory_id for note in draft.decisions.notes),
    )


def _creates(
    draft: Draft, embedding: Mapping[int, list[float]], ttl: float | None, config: MemoryBankConfig
) -> list[NewMemory]:
    """The memories to create, each with its provenance: the trust rule's, or for a
    quarantined fact's, a created memory's."""
    target, labels = draft.learner.target, draft.labels
    decided = {id(op): known for op, known in draft.decisions.applied}
    provenance = {
        id(op): decided.get(id(op)) or trust.created(op, config.trust) for op, _ in draft.creates
    }
    return [
        NewMemory(
            id=str(uuid.uuid4()),
            scope_key=target.key if held_by is None else quarantine_key(target.key),
            scope=target.scope,
            fact=op.fact or "",
            topics=[op.topic] if op.topic else [],
            metadata=draft.metadata,
            confidence=provenance[id(op)].confidence,
            source_type=provenance[id(op)].source_type,
            source_session_id=draft.learner.source_id,
            source_event_ids=draft.material.cited,
            embedding=embedding.get(id(op)),
            ttl_seconds=ttl,
            extracted_facts=op.extracted_facts,
            labels=labels if held_by is None else {**labels, **guard_labels(held_by.verdict)},
        )
        for op, held_by in draft.creates
    ]


def _updates(
    draft: Draft, embedding: Mapping[int, list[float]], ttl: float | None
) -> list[MemoryUpdate]:
    """The applied updates, then the trust rule's confidence notes (a change of confidence
    alone, with its labelled revision)."""
    key, labels, session = draft.learner.target.key, draft.labels, draft.learner.source_id
    cited = draft.material.cited
    updates = [
        MemoryUpdate(
            op.target_id or "",
            key,
            MemoryChange(
                fact=op.fact,
                topics=[op.topic] if op.topic else None,
                metadata=draft.updated_metadata.get(op.target_id or ""),
                embedding=embedding.get(id(op)),
                ttl_seconds=ttl,
                extracted_facts=op.extracted_facts,
                labels={**labels, **known.labels},
                confidence=known.confidence,
                source_type=known.source_type,
                source_session_id=session,
                source_event_ids=cited,
            ),
        )
        for op, known in draft.decisions.applied
        if op.action == "UPDATE"
    ]
    updates += [
        MemoryUpdate(
            note.memory_id,
            key,
            MemoryChange(
                confidence=note.confidence,
                extracted_facts=note.extracted_facts,
                labels={**labels, **note.labels},
                source_type=note.source_type,
                source_session_id=session,
                source_event_ids=cited,
                touch=note.touch,
            ),
        )
        for note in draft.decisions.notes
    ]
    return updates


def _deletes(draft: Draft) -> list[MemoryDeletion]:
    """The applied deletes, each with its DELETED revision's facts and labels."""
    key, labels = draft.learner.target.key, draft.labels
    return [
        MemoryDeletion(op.target_id or "", key, op.extracted_facts, {**labels, **known.labels})
        for op, known in draft.decisions.applied
        if op.action == "DELETE"
    ]


def result(applied: list[tuple[MemoryAction, Memory]], plan: Plan) -> list[dict[str, Any]]:
    """The job's result: ids and actions only, the facts stay in the memories (see
    `JobQueue`); for a quarantined memory the guard's rule and reason, for a rejected fact
    its rule and reason. A change of confidence alone changed no fact: its revision says it."""
    entries: list[dict[str, Any]] = [
        _entry(action, memory.id, plan.quarantined.get(memory.id))
        for action, memory in applied
        if memory.id not in plan.noted
    ]
    entries += [
        {"action": "REJECTED", "rule": s.verdict.rule, "reason": s.verdict.reason}
        for s in plan.refused
    ]
    return entries


def _entry(action: MemoryAction, memory_id: str, held: GuardVerdict | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "action": action.value,
        "memory_id": memory_id,
        "quarantined": held is not None,
    }
    if held is not None:
        entry.update(rule=held.rule, reason=held.reason)
    return entry
