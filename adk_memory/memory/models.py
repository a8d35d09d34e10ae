"""What the memory service hands out: memories, search results, revisions, pages, filters.

Owns: the public shapes of the Memory Bank-style API (ADK's own `MemoryEntry` is produced from
these by the service). Plain data: no database, no model calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..memory_bank_json import snake

MemoryType = Literal["fact", "procedure"]
"""What a memory is: a fact about its scope (the user), or a procedure (a playbook: how a kind of
task was done well, learned from successful sessions, anonymised, kept at app level)."""


class MemoryAction(str, Enum):
    """What a write did to a memory (recorded in its revision)."""

    CREATED = "CREATED"
    UPDATED = "UPDATED"
    DELETED = "DELETED"


class SourceType(str, Enum):
    """Where a memory's information came from (provenance). Trust ranks them (`memory.trust`):
    bootstrapped > explicit user input > implicit conversation (IMPLICIT, AGENT) > tool output.
    """

    BOOTSTRAPPED = "bootstrapped"
    """Written directly by the application (create_memory, add_memory, imports, direct facts)."""
    USER_INPUT = "user_input"
    """Stated explicitly by the user (about themselves, or as an instruction)."""
    TOOL_OUTPUT = "tool_output"
    """Returned by a tool."""
    AGENT = "agent"
    """Said or decided by the agent (a remembered raw event of the agent's)."""
    IMPLICIT = "implicit"
    """Inferred from a conversation: implied rather than stated, an agent's statement the
    user accepted, or a fact the agent chose to save (`CreateMemoryTool`)."""


@dataclass(frozen=True)
class MemoryFact:
    """One item of `create_memories`: a fact with its own optional fields (as for
    `create_memory`; a None `ttl` takes the configured default for direct writes).

    `key` (optional, up to 1,000 characters) makes writing the fact idempotent, e.g. a line's
    id in an import that may be run again or resumed: the memory's id is derived from the key
    and the scope, so the same key in the same scope is written once. Written again with the
    same (redacted) fact, the memory written the first time is returned, as it is now (edits
    kept); if the key's memory was deleted since, or the key was first written with another
    fact, nothing is written and the item is left out of the result.
    """

    fact: str
    topics: Sequence[str] | None = None
    metadata: Mapping[str, Any] | None = None
    content: Mapping[str, Any] | None = None
    importance: float | None = None
    confidence: float | None = None
    ttl: timedelta | None = None
    source_type: SourceType = SourceType.BOOTSTRAPPED
    key: str | None = None
    create_time: datetime | None = None
    """When the memory is from (None: now): an imported memory keeps its source's times, so
    recency ranks it as it was ranked there."""
    update_time: datetime | None = None
    """When its fact was last set (None: its `create_time`, else now)."""


@dataclass(frozen=True)
class PastRevision:
    """One revision of a memory's history kept elsewhere (Memory Bank's, on import), added
    with `import_revisions` at its own time. `key` (its name there) makes adding it
    idempotent: the same key of the same memory is written once."""

    key: str
    fact: str | None
    create_time: datetime
    action: MemoryAction = MemoryAction.UPDATED
    labels: Mapping[str, str] | None = None
    extracted_facts: Sequence[str] = ()
    expire_time: datetime | None = None


class GuardedFact(BaseModel):
    """The memory guard's verdict on a fact it did not let through: which rule and why, never
    the fact itself (a rejected fact was not stored; a quarantined one is held back)."""

    model_config = ConfigDict(frozen=True)

    rule: str
    reason: str


class Memory(BaseModel):
    """One memory: a fact about a scope (usually one user of one app)."""

    model_config = ConfigDict(frozen=True)

    id: str
    scope: dict[str, str]
    fact: str
    topics: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    content: dict[str, Any] | None = None
    """Optional structured form of the fact (for schema-based memories)."""
    importance: float | None = None
    confidence: float | None = None
    source_type: SourceType = SourceType.BOOTSTRAPPED
    source_session_id: str | None = None
    source_event_ids: list[str] = Field(default_factory=list)
    create_time: datetime
    update_time: datetime
    expire_time: datetime | None = None
    quarantined: bool = False
    """Held back by the memory guard: stored, never retrieved or shown to a model until an
    operator approves it."""
    guard: GuardedFact | None = None
    """Why the guard held it back (its rule and reason), on a quarantined memory that
    `create_memory(ies)` returns or `list_quarantined` lists; None otherwise."""
    effective_confidence: float | None = None
    """`confidence` as of the read: decayed by `TrustConfig.confidence_half_life` since the
    memory was last updated or corroborated (None when its confidence is unknown). Set by the
    service on the memories it returns; this is what the model is shown."""

    memory_type: MemoryType = "fact"
    """A fact, or a procedure (`learn_procedure`); each kind is only found by asking for it."""


class RetrievedMemory(BaseModel):
    """A search result: the memory, its cosine distance to the query (when it has an embedding
    and the store an embedder) and the blended ranking score (higher is better)."""

    model_config = ConfigDict(frozen=True)

    memory: Memory
    distance: float | None = None
    score: float


class MemoryRevision(BaseModel):
    """An immutable record of one change to a memory; kept after the memory is deleted."""

    model_config = ConfigDict(frozen=True)

    id: str
    memory_id: str
    scope: dict[str, str]
    action: MemoryAction
    fact: str | None
    """The fact after the change (the last fact, for a deletion)."""
    extracted_facts: list[str] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)
    source_type: SourceType | None = None
    source_session_id: str | None = None
    source_event_ids: list[str] = Field(default_factory=list)
    create_time: datetime
    expire_time: datetime | None = None
    confidence: float | None = None
    """The memory's stored confidence after the change (None: unknown, or a revision written
    before revisions kept it)."""


_METADATA_VALUE_KINDS = ("string_value", "double_value", "bool_value", "timestamp_value")


class MetadataCondition(BaseModel):
    """One condition on a memory's metadata (Memory Bank's `MemoryFilter`): the value at `key`
    compared with `value` by `op`; `negate` inverts it (a memory without the key then
    matches). Also read in Memory Bank's JSON: `{"key": ..., "value": {"stringValue": ...},
    "op": "EQUAL", "negate": false}`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(min_length=1, max_length=256)
    value: str | bool | float | datetime
    op: Literal["EQUAL", "GREATER_THAN", "LESS_THAN"] = "EQUAL"
    negate: bool = False

    @model_validator(mode="before")
    @classmethod
    def _memory_bank_value(cls, data: Any) -> Any:
        """A typed value (`{"stringValue": "x"}`, either case) as the value itself."""
        if isinstance(data, dict) and isinstance(data.get("value"), dict):
            typed = {snake(k): v for k, v in data["value"].items()}
            kinds = [k for k in _METADATA_VALUE_KINDS if k in typed]
            if len(kinds) != 1:
                raise ValueError("a metadata value holds exactly one typed value")
            data = {**data, "value": typed[kinds[0]]}
        if isinstance(data, dict) and data.get("op") in (None, "OPERATOR_UNSPECIFIED"):
            data = {k: v for k, v in data.items() if k != "op"}
        return data


class MetadataConjunction(BaseModel):
    """Conditions that must all hold (Memory Bank's `MemoryConjunctionFilter`); a search's
    `filter_groups` are ORed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    filters: list[MetadataCondition] = Field(default_factory=list, max_length=50)


class MemoryFilter(BaseModel):
    """Narrows a listing or a search. Every condition must hold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    expression: str | None = None
    """Memory Bank's AIP-160 filter (`memory.filters`): `fact`, `create_time`, `update_time`,
    `topics`, `metadata.KEY`; e.g. `update_time > "2025-01-01T00:00:00Z" AND topics:"pets"`."""
    filter_groups: list[MetadataConjunction] | None = Field(default=None, max_length=50)
    """Memory Bank's metadata filter groups: a memory matches when every condition of at least
    one group holds (an OR of ANDs)."""

    topics: list[str] | None = None
    """Memories with at least one of these topics."""
    metadata: dict[str, Any] | None = None
    """Memories whose metadata contains these key/value pairs (JSON containment)."""
    updated_after: datetime | None = None
    updated_before: datetime | None = None
    memory_type: MemoryType | None = None
    """The kind of memories (None: facts). Facts and procedures are kept apart, so a search
    returns one kind only."""


@dataclass(frozen=True)
class RevisionOptions:
    """One request's say over the revisions it writes (Memory Bank's `revision_labels`,
    `revision_ttl` and `disable_memory_revisions` on create, update and generate)."""

    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels every revision the request writes carries (listed with `list_revisions(labels=)`)."""
    ttl: timedelta | None = None
    """How long its revisions are kept (None: the configuration's `revision_ttl`)."""
    disabled: bool = False
    """No revision listed: each is written already expired (a replay of the write still finds
    it; the sweep deletes it)."""

    def seconds(self, default: float | None) -> float | None:
        """Its revisions' time to live in seconds, `default` (the configuration's) unless it
        says otherwise; 0 when disabled."""
        if self.disabled:
            return 0.0
        return default if self.ttl is None else self.ttl.total_seconds()


class PurgeResult(BaseModel):
    """What a purge by filter matched (Memory Bank's `PurgeMemoriesResponse.purge_count`) and,
    with `force`, deleted; without it (a dry run) nothing was (`purged` False)."""

    model_config = ConfigDict(frozen=True)

    purge_count: int
    memory_ids: list[str] = Field(default_factory=list)
    purged: bool = False


class MemoryPage(BaseModel):
    """One page of a listing; pass `next_page_token` back for the next one (None: the end)."""

    memories: list[Memory]
    next_page_token: str | None = None


class GeneratedMemory(BaseModel):
    """One change a generation made: what happened to which memory, and the memory as it is
    now. A finished job keeps only ids and actions, never facts, so `memory` is read when the
    operation is: None when the memory is gone (deleted by this generation or since) or is held
    in quarantine (`quarantined`)."""

    model_config = ConfigDict(frozen=True)

    memory_id: str
    action: MemoryAction
    memory: Memory | None = None
    quarantined: bool = False
    guard: GuardedFact | None = None
    """Why the guard quarantined it (None when live, or for a job finished before verdicts
    were kept with its result)."""


class GenerateMemoriesOperation(BaseModel):
    """A generation request: poll it with `get_operation(id, scope)` or block on
    `wait(operation)`. `error` is set when it failed for good (every try used: dead-lettered);
    `rejected` lists the facts the memory guard refused, `quarantined` the memories it held
    back (also marked in `generated_memories`)."""

    id: str
    scope: dict[str, str]
    done: bool = False
    error: str | None = None
    generated_memories: list[GeneratedMemory] = Field(default_factory=list)
    rejected: list[GuardedFact] = Field(default_factory=list)

    @property
    def quarantined(self) -> list[GeneratedMemory]:
        """The memories this generation created held back by the guard (stored, not live)."""
        return [g for g in self.generated_memories if g.quarantined]


class QuarantinedMemory(BaseModel):
    """A memory the guard held back: stored, never retrieved or shown to a model, until an
    operator approves it (it becomes live) or rejects it (it is deleted)."""

    model_config = ConfigDict(frozen=True)

    memory: Memory
    rule: str
    reason: str


class GenerationJob(BaseModel):
    """One generation of a scope as an operator reviews it (`list_operations`): its state,
    tries and last error, and how many memories it changed; never its conversation."""

    model_config = ConfigDict(frozen=True)

    id: str
    scope: dict[str, str]
    status: str
    """pending, running, done or dead (failed for good: `retry_operation` gives it new tries)."""
    attempts: int
    max_attempts: int
    error: str | None = None
    changes: int = 0
    """Memories it created, updated or deleted (quarantined ones included)."""
    quarantined: int = 0
    """Of its `changes`, memories the guard held back (stored, not live)."""
    rejected: int = 0
    """Facts the guard refused (not stored, not among `changes`)."""
    create_time: datetime
    update_time: datetime


class ScopePage(BaseModel):
    """One page of the scopes that have memories; pass `next_page_token` back for the next."""

    scopes: list[dict[str, str]]
    next_page_token: str | None = None


@dataclass(frozen=True)
class FieldChange:
    """One profile field to set to `value`, or to clear (`clear`)."""

    schema_id: str
    field: str
    value: Any = None
    clear: bool = False


class IngestEventsResult(BaseModel):
    """What one IngestEvents request did (`ingest_events`): its events buffered in the stream
    (`ingested`; `duplicates`: ids the stream already had), how many wait for the stream's next
    flush, and the generation it flushed into (None: nothing flushed; its events wait for the
    trigger, or the worker's sweep of time rules)."""

    model_config = ConfigDict(frozen=True)

    stream_id: str
    ingested: int
    duplicates: int
    waiting: int
    operation: GenerateMemoriesOperation | None = None
