"""Trust-weighted confidence: which source wins a conflict, and how confidence moves.

Owns: applying the trust ranking of source types (bootstrapped > explicit user input >
implicit conversation > tool output: `generation.sources.RANK`), a generated memory's first
confidence, effective confidence (stored confidence decayed since the memory was last updated
or corroborated: computed when read, so no write sweeps it), and `enforce`, the conflict rule
applied in code to the consolidation model's operations after it answers:

- A change (UPDATE or DELETE) from a source at least as trusted as the memory's stands: trust
  first, then recency (the new fact is the newer). With `conflict_strategy="recency"` every
  change stands.
- A change from a less trusted source is blocked unless corroborated: another, independent
  source's change to the same memory was blocked before. A source is a session; a write with
  no session (direct facts) is a source of its own. Blocked, the memory keeps its fact and its
  update time, its confidence falls by `contradiction_penalty`, and a revision labelled
  `trust: blocked` records the claim (its extracted facts and source): the evidence a later
  independent source corroborates. Corroborated, the change goes through, labelled
  `trust: corroborated_override`, its confidence raised once.
- A CONFIRM (the model found the fact already known) from a source that has not written or
  corroborated the memory before raises its confidence by `corroboration_boost` and counts as a
  confirmation (its update time moves); from the same source it changes nothing.
- A forget request is never blocked: deleting on the user's request is always allowed.

It is policy only: it never calls a model, never reads and never writes. The pipeline reads
the targeted memories and their history (`store.trust_history`) and hands them in as data, and
applies what `enforce` returns. The source names and their ranking live in
`generation.sources` (below both this module and generation, so neither imports the other).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ...config import TrustConfig
from ..generation import MemoryOperation
from ..generation.sources import RANK, source_type_of
from ..generation.sources import fact_source as fact_source
from ..models import Memory, SourceType

History = tuple[frozenset[str], frozenset[str]]
"""What the rule knows of a memory's past (`store.trust_history`): the sources that wrote or
corroborated it, and those whose change to it was blocked."""


def initial_confidence(source: SourceType, trust: TrustConfig) -> float:
    """The confidence a memory generated from `source` starts with."""
    return trust.initial_confidence.get(source.value, 0.5)


def effective_confidence(memory: Memory, trust: TrustConfig, now: datetime) -> float | None:
    """`memory`'s confidence as of `now`: halved every `confidence_half_life` since it was last
    updated or corroborated (the SQL twin is `store._effective_confidence`); None when unknown."""
    if memory.confidence is None:
        return None
    if trust.confidence_half_life is None:
        return memory.confidence
    age = max((now - memory.update_time).total_seconds(), 0.0)
    decayed = memory.confidence * 0.5 ** (age / trust.confidence_half_life.total_seconds())
    return round(decayed, 6)  # beyond that it means nothing, and reads a moment apart agree


def with_effective(memory: Memory, trust: TrustConfig, now: datetime) -> Memory:
    """`memory` with its `effective_confidence` as of `now`."""
    return memory.model_copy(
        update={"effective_confidence": effective_confidence(memory, trust, now)}
    )


def corroborated(confidence: float, trust: TrustConfig) -> float:
    """Confidence after an independent corroboration: towards 1 by `corroboration_boost`."""
    return confidence + trust.corroboration_boost * (1 - confidence)


def contradicted(confidence: float, trust: TrustConfig) -> float:
    """Confidence after a contradiction: down by `contradiction_penalty`."""
    return confidence * (1 - trust.contradiction_penalty)


@dataclass(frozen=True)
class Provenance:
    """What an applied operation writes besides its fact: its source type, its confidence
    (None for a DELETE) and labels for its revision."""

    source_type: SourceType
    confidence: float | None
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ConfidenceNote:
    """A change of a memory's confidence alone, with a labelled revision: a corroboration
    (`touch`: it confirms the fact, so its update time moves) or a blocked contradiction (the
    fact and update time stay; the revision records the claim and its source)."""

    memory_id: str
    confidence: float
    source_type: SourceType | None
    """The memory's new source type (a more trusted corroborator), else None: kept."""
    touch: bool
    labels: dict[str, str]
    extracted_facts: tuple[str, ...]


@dataclass(frozen=True)
class Decisions:
    """`enforce`'s answer: the operations to apply, each with its provenance, and the
    confidence notes to write beside them."""

    applied: list[tuple[MemoryOperation, Provenance]]
    notes: list[ConfidenceNote]


def _known(confidence: float | None, memory: Memory, trust: TrustConfig) -> float:
    """`confidence`, or where it is unknown, what a memory of its source starts with."""
    return initial_confidence(memory.source_type, trust) if confidence is None else confidence


def created(op: MemoryOperation, trust: TrustConfig) -> Provenance:
    """The provenance of a memory created from `op`'s facts."""
    source = source_type_of(op.source)
    return Provenance(source, initial_confidence(source, trust))


def targets(operations: Sequence[MemoryOperation]) -> list[str]:
    """The memories the operations target: whose history `enforce` needs."""
    return [op.target_id for op in operations if op.target_id]


def enforce(
    operations: Sequence[MemoryOperation],
    memories: Mapping[str, Memory],
    history: Mapping[str, History],
    *,
    source_id: str | None,
    trust: TrustConfig,
    now: datetime,
) -> Decisions:
    """Apply the conflict rule (module docstring) to the model's operations for one scope.
    `memories`: the live targeted memories by id (a target missing there is gone: skipped, as
    the store would skip it); `history`: theirs (`History`, none: never written by a source);
    `source_id`: the session the facts came from (None: a source of its own)."""
    applied: list[tuple[MemoryOperation, Provenance]] = []
    notes: list[ConfidenceNote] = []
    for op in operations:
        source = source_type_of(op.source)
        if op.action == "CREATE":
            applied.append((op, created(op, trust)))
            continue
        memory = memories.get(op.target_id or "")
        if memory is None:  # gone since the candidates were read: the store skips it too
            continue
        writers, blocked = history.get(memory.id, (frozenset(), frozenset()))
        if op.action == "CONFIRM":
            if source_id is not None and source_id in writers:
                continue  # the same source saying it again corroborates nothing
            higher = RANK[source] > RANK[memory.source_type]
            current = effective_confidence(memory, trust, now)  # decay restarts now
            notes.append(
                ConfidenceNote(
                    memory.id,
                    corroborated(_known(current, memory, trust), trust),
                    source if higher else None,
                    touch=True,
                    labels={"trust": "corroborated", "source_type": source.value},
                    extracted_facts=op.extracted_facts,
                )
            )
            continue
        confidence = initial_confidence(source, trust) if op.action == "UPDATE" else None
        if (
            op.forget
            or trust.conflict_strategy == "recency"
            or RANK[source] >= RANK[memory.source_type]
        ):
            applied.append((op, Provenance(source, confidence)))
        elif any(other != source_id for other in blocked):
            raised = None if confidence is None else corroborated(confidence, trust)
            labels = {"trust": "corroborated_override"}
            applied.append((op, Provenance(source, raised, labels)))
        else:
            notes.append(
                ConfidenceNote(  # its update time stays: the stored value falls
                    memory.id,
                    contradicted(_known(memory.confidence, memory, trust), trust),
                    source,
                    touch=False,
                    labels={"trust": "blocked", "blocked_action": op.action},
                    extracted_facts=op.extracted_facts,
                )
            )
    return Decisions(applied, notes)
