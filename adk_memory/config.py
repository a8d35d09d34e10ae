"""Typed settings for the memory service, one documented field at a time.

Owns: the knobs users turn (TTLs, retrieval weights, text-search language, topics, trust and
confidence, database timeouts) and their validation, so a bad setting fails when the service is
built, not in the middle of a turn, and the shape an app's configuration is stored and shared in
(`AppMemoryConfig`). It never reads the environment or touches the database.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from enum import Enum
from typing import Any, Literal, Self

from jsonschema import SchemaError
from jsonschema.validators import validator_for
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    model_validator,
)

from .memory_bank_json import from_memory_bank, unsupported_cause


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TtlConfig(_Settings):
    """How long memories live (Memory Bank's TTL semantics). None everywhere: forever.

    A memory's expiry is set when it is written: `now + ttl`. An update resets it to
    `now + ttl` of the update's kind. A per-call `ttl` overrides all of these.
    """

    default_ttl: timedelta | None = None
    """TTL for every memory written, unless a granular TTL below applies."""

    create_ttl: timedelta | None = None
    """TTL for memories created directly (`create_memory`, `add_memory`); default_ttl if None."""

    generate_created_ttl: timedelta | None = None
    """TTL for memories created by generation (extraction); default_ttl if None."""

    generate_updated_ttl: timedelta | None = None
    """TTL given to a memory when generation updates it; default_ttl if None."""

    revision_ttl: timedelta | None = None
    """How long revisions are kept; None keeps the whole history."""

    disable_memory_revisions: bool = False
    """Memory Bank's `disable_memory_revisions`: no revision is listed for any change (each
    change's revision is written already expired, so a replay of the write still finds it, and
    the sweep deletes it). A request can ask for the same on its own."""

    @model_validator(mode="after")
    def _positive(self) -> TtlConfig:
        for name, value in self:
            if isinstance(value, timedelta) and value <= timedelta(0):
                raise ValueError(f"{name} must be a positive duration")
        return self

    def revision_seconds(self) -> float | None:
        """How long a revision is kept, in seconds: 0 with revisions disabled, None forever."""
        if self.disable_memory_revisions:
            return 0.0
        return None if self.revision_ttl is None else self.revision_ttl.total_seconds()

    def for_create(self) -> timedelta | None:
        """The TTL of a directly created memory."""
        return self.create_ttl or self.default_ttl

    def for_generated_create(self) -> timedelta | None:
        """The TTL of a memory created by generation."""
        return self.generate_created_ttl or self.default_ttl

    def for_update(self) -> timedelta | None:
        """The TTL a direct update resets expiry to: only `default_ttl` does (with granular TTLs,
        Memory Bank leaves a directly updated memory's expiry alone)."""
        return self.default_ttl

    def for_generated_update(self) -> timedelta | None:
        """The TTL a memory gets when generation updates it."""
        return self.generate_updated_ttl or self.default_ttl


class RetrievalConfig(_Settings):
    """How search results are ranked: relevance (vector and full-text, fused by reciprocal-rank
    fusion), blended with recency and importance. Weights are relative; they need not sum to 1.
    """

    mode: Literal["hybrid", "vector", "text"] = "hybrid"
    """Which searches feed relevance: both (fused), vector similarity only (needs an embedder),
    or full-text only. Hybrid without an embedder is full-text only."""

    relevance_weight: float = Field(default=1.0, ge=0)
    """Weight of the fused relevance (normalised so the best possible match scores 1)."""

    recency_weight: float = Field(default=0.1, ge=0)
    """Weight of recency: 1 for a memory updated now, halving every `recency_half_life`."""

    recency_half_life: timedelta = timedelta(days=30)
    """How fast recency decays."""

    importance_weight: float = Field(default=0.1, ge=0)
    """Weight of a memory's importance (0..1; 0.5 when unknown)."""

    confidence_weight: float = Field(default=0.0, ge=0)
    """Weight of a memory's effective confidence (0..1: its confidence decayed by
    `TrustConfig.confidence_half_life` since it was last updated or corroborated; 0.5 when
    unknown). Off (0) by default, so scores and the floors calibrated on them stay as they
    were; 0.1 weighs confidence as much as importance."""

    rrf_k: int = Field(default=5, ge=1)
    """Reciprocal-rank-fusion constant: a result at rank r in a list adds 1 / (rrf_k + r).
    Smaller than the customary 60 because only two short lists are fused here, and the fused
    relevance must still separate rank 1 from rank 2 once recency and importance are added.
    5 was chosen on the shipped retrieval sets (`benchmarks/memory_recall.py`): better than 10,
    20 and 60 on all three in hybrid mode (Recall@10 and MRR)."""

    candidates: int = Field(default=100, ge=1, le=10_000)
    """How many candidates each of the vector and full-text searches contributes before fusion."""

    embedding_model: str | None = None
    """The embedding model a service built without an `embedder` uses (`GeminiEmbedder(model)`;
    Memory Bank's `similarity_search_config.embedding_model`); None: no vector search unless an
    embedder is given. An embedder given to the service wins."""

    top_k: int = Field(default=3, ge=1, le=100)
    """How many memories ADK's `search_memory` returns (Memory Bank's default)."""

    opt_out_hides: bool = False
    """Whether a user who opted out of memory (`set_opt_out`, `OPT_OUT_STATE_KEY`) is also
    read nothing: `retrieve_memories` raises `OptedOutError` (the memory tools tell the model)
    and `search_memory` returns nothing. Off: only writes are refused, and what was remembered
    before the opt-out is still used until it is erased."""

    min_similarity: float | None = Field(default=None, ge=-1, le=1)
    """The relevance floor of vector search: candidates whose cosine similarity to the query is
    below it are not returned (nearest-neighbour search otherwise always returns the nearest
    memories, related or not). None: the embedder's calibrated `similarity_floor` when it has
    one (`HashEmbedder` does), else no floor; -1 turns it off. Embedding models differ in how
    similar unrelated texts look (0.2 for one, 0.6 for another): calibrate with
    `benchmarks/memory_recall.py --embedder ...`, which prints recall against the share of
    empty answers to questions with no relevant memory."""

    min_text_relevance: float = Field(default=0.05, ge=0, le=1)
    """The relevance floor of full-text search: the share of the query's information (its
    terms, weighted by rarity in the scope) a memory must match; 0 keeps any memory sharing a
    term with the query. The default drops memories that share only words found in nearly
    every memory (a speaker's name, "user"): on the long-conversation set it costs no recall
    and raises hybrid Recall@10 by 3 points."""

    turn_length_prior: float = Field(default=0.0, ge=0, le=10)
    """How dialogue turns (memories that record who said them: metadata `author`, as raw ADK
    events and added entries with an author carry, or `speaker`; or whose text opens with a
    speaker's label, "Ana: ..." or "[26 March 2023] Ana: ...", as a transcript's lines do)
    are weighed by their length: a turn shorter than this share of the candidates' average
    turn length weighs its share of it, in the vector list and in the fused relevance (with
    no vector list, in the full-text list too). Fillers ("What? Spill.", "You too, Ana.")
    carry the speaker's name and little else, so without it they outrank the turn that
    answers a question about that person. Facts (no speaker) are never weighed by length.
    Off by default (0): 1.0 helped the repository's long conversations (hybrid Recall@10 78.9
    -> 86.7 on the half not tuned on) but cost public persona chats (Synthetic-Persona-Chat,
    top-1 recall 0.873 -> 0.811): measure on your transcripts first."""

    temporal_cues: bool = True
    """Whether a time the query names ("last week", "yesterday", "in May 2023", "8 May 2023",
    "3 days ago"; the common ones also in German, French and Spanish) takes part: the scope's
    memories from that time (create time: when the event happened, for a raw event's memory, or
    an added `MemoryEntry`'s timestamp) become a third candidate list, fused with the others,
    so "what did I say last week?" finds last week's memories and a memory matching both the
    words and the time ranks first. Relative times are read against the clock in UTC (or the
    `now` given to `retrieve_memories`, whose timezone is the user's day). Found without a
    model (`memory.temporal`)."""

    text_search_language: str = Field(default="english", pattern=r"^[a-z_]+$")
    """Postgres text-search configuration for full-text search (e.g. english, simple, german),
    or "auto": each fact and each query is stemmed for the language it is detected in (by
    script, and by common words for the Latin-script languages; English when unsure), and every
    word is also indexed unstemmed, so one scope can mix languages. Changing it applies to new
    writes; `reindex_text()` (`adk-memory memories reindex`) re-indexes the stored memories."""

    @model_validator(mode="after")
    def _half_life(self) -> RetrievalConfig:
        if self.recency_half_life <= timedelta(0):
            raise ValueError("recency_half_life must be a positive duration")
        return self


class DatabaseTimeouts(_Settings):
    """How long a call may wait on the database before it raises `DatabaseTimeoutError`, so a
    hung server, a lost network or an exhausted pool never hangs a turn. Durations accept a
    `timedelta` or seconds.

    They bound the engine a service builds itself (from a URL or for the embedded server); an
    engine passed in keeps its own settings (`make_engine(url, timeouts)` builds one with
    these). The same setting given in `engine_kwargs` (`pool_timeout`, `connect_args` and its
    `server_settings`) or in the URL (`connect_timeout`) wins.
    """

    statement: timedelta | None = timedelta(seconds=30)
    """Longest one statement may run: the server cancels it (`statement_timeout`), and the
    client gives up 2 s later if the server does not answer at all (asyncpg's
    `command_timeout`). It bounds each statement, not a transaction: memory generation holds
    no transaction while its model works, and its transaction is a few short statements.
    Migrations lift it (an index built on a big table, or a wait behind another process's
    migration, is slow, not hung). None: no limit set here (the server's or the role's own
    `statement_timeout` applies)."""

    connect: timedelta | None = timedelta(seconds=10)
    """Longest opening a connection may take, log-in included. None: no limit."""

    pool: timedelta = timedelta(seconds=30)
    """Longest a call waits for a free connection when the pool is exhausted (SQLAlchemy's
    `pool_timeout`)."""

    idle_in_transaction: timedelta | None = timedelta(seconds=60)
    """The server closes a connection left idle inside a transaction this long
    (`idle_in_transaction_session_timeout`): a backstop, so a transaction nobody will finish
    cannot hold its locks, and block every other writer, forever. adk-memory holds a
    transaction only while its statements run. None: no limit set here."""

    @model_validator(mode="after")
    def _positive(self) -> DatabaseTimeouts:
        for name, value in self:
            if value is not None and value <= timedelta(0):
                raise ValueError(f"the {name} timeout must be positive (None: no limit)")
        return self


class ManagedTopic(str, Enum):
    """Memory Bank's built-in kinds of information worth remembering."""

    USER_PERSONAL_INFO = "USER_PERSONAL_INFO"
    USER_PREFERENCES = "USER_PREFERENCES"
    KEY_CONVERSATION_DETAILS = "KEY_CONVERSATION_DETAILS"
    EXPLICIT_INSTRUCTIONS = "EXPLICIT_INSTRUCTIONS"


class CustomTopic(_Settings):
    """A kind of information of your own, described for the model."""

    label: str = Field(pattern=r"^[A-Za-z0-9_]{1,64}$")
    """Short name, stored as the memory's topic."""
    description: str = Field(min_length=1, max_length=2000)
    """What belongs under this topic (and what does not), in plain words."""


MemoryTopic = ManagedTopic | CustomTopic


class GenerateMemoriesExample(_Settings):
    """A few-shot example: a conversation and the facts that should be remembered from it (an
    empty list teaches the model that nothing in it is worth remembering)."""

    conversation: list[dict[str, Any]]
    """The events, as ADK `types.Content` dicts (`{"role": "user", "parts": [{"text": ...}]}`)."""
    generated_memories: list[str] = Field(default_factory=list)
    """The facts expected from it."""


class ConsolidationConfig(_Settings):
    """How extracted facts are merged into a scope's existing memories (Memory Bank's
    `consolidation_config`, with two settings of adk-memory's own)."""

    instructions: str = Field(default="", max_length=4000)
    """Extra instructions appended to the consolidation prompt, e.g. "Keep every past address
    as its own memory; never merge them". They cannot change what a valid answer is: every
    decision is still validated in code."""

    disabled_topics: tuple[str, ...] = ()
    """Topic labels whose facts are never consolidated: each is created as a memory of its own
    (as with `disable_consolidation`), e.g. a journal topic where every entry counts."""

    revisions_per_candidate_count: int = Field(default=0, ge=0, le=10)
    """Memory Bank's: how many of each candidate memory's latest revisions the consolidation
    model is also shown (their earlier facts, newest first), so it sees how a memory changed
    (a change back, a value that keeps flipping); 0: the current fact only (one query more per
    consolidation otherwise)."""


class CustomizationConfig(_Settings):
    """What to remember, for requests of one shape of scope (or by default)."""

    scope_keys: frozenset[str] | None = None
    """Applies only to requests whose scope has exactly these keys; None: the default config."""
    memory_topics: tuple[MemoryTopic, ...] = tuple(ManagedTopic)
    """The kinds of information to keep; anything else is left out."""
    generate_memories_examples: tuple[GenerateMemoriesExample, ...] = ()
    """Few-shot examples shown to the extraction model."""
    disable_natural_language_memories: bool = False
    """Memory Bank's switch: generate no natural-language memories for these scopes, only the
    structured profiles (`MemoryBankConfig.structured_memory_configs`). Generation then makes
    one model call per job (the profile's), and no extraction or consolidation call."""
    consolidation_config: ConsolidationConfig = ConsolidationConfig()
    """Extra consolidation instructions and the topics never consolidated."""

    @field_serializer("scope_keys", when_used="json")
    def _sorted_keys(self, keys: frozenset[str] | None) -> list[str] | None:
        """Sorted in JSON, so one config has one JSON text in every process (a set's order
        follows the process's hash seed), and a stored config is compared by its text."""
        return None if keys is None else sorted(keys)


SCHEMA_ID_PATTERN = r"^[a-z]([a-z0-9-]{0,62})$"
"""Memory Bank's rule for a schema id: 1 to 63 characters, a lowercase letter first, then
lowercase letters, digits and hyphens."""


class StructuredMemorySchemaConfig(_Settings):
    """One structured profile: its id and the JSON schema its fields follow (Memory Bank's
    `StructuredMemoryConfig.SchemaConfig`). Each top-level property of the schema is one field
    of the profile, kept with its revision history; generation writes only those fields, and
    only values valid against the property's schema."""

    id: str = Field(pattern=SCHEMA_ID_PATTERN)
    """The schema id profiles are returned under (`MemoryProfile.schema_id`)."""
    json_schema: dict[str, Any]
    """A JSON schema of type `object` with `properties` (one field each, e.g.
    `{"type": "object", "properties": {"preferred_language": {"type": "string"}}}`); property
    descriptions tell the model what belongs in each field."""
    memory_type: Literal["STRUCTURED_PROFILE"] = "STRUCTURED_PROFILE"
    """Memory Bank's memory type of the schema's memories (profiles are the one kind here)."""

    @model_validator(mode="after")
    def _valid_schema(self) -> StructuredMemorySchemaConfig:
        try:
            validator_for(self.json_schema).check_schema(self.json_schema)
        except SchemaError as exc:
            raise ValueError(
                f"schema {self.id!r} is not a valid JSON schema: {exc.message}"
            ) from exc
        properties = self.json_schema.get("properties")
        if self.json_schema.get("type") != "object" or not isinstance(properties, dict):
            raise ValueError(f"schema {self.id!r} must be of type object with properties")
        if not properties or not all(isinstance(p, dict) for p in properties.values()):
            raise ValueError(f"schema {self.id!r} needs at least one property, each a schema")
        return self

    @property
    def fields(self) -> dict[str, dict[str, Any]]:
        """The profile's fields: property name -> the property's schema."""
        return dict(self.json_schema["properties"])

    def field_schema(self, name: str) -> dict[str, Any]:
        """The schema a value of field `name` is validated against: the property's, with the
        root's `$schema` and definitions (`$defs`, `definitions`), so its `$ref`s resolve."""
        shared = ("$schema", "$defs", "definitions")
        root = {key: self.json_schema[key] for key in shared if key in self.json_schema}
        return {**root, **self.fields[name]}


class StructuredMemoryConfig(_Settings):
    """The structured profiles kept for requests of one shape of scope (or by default), as
    Memory Bank's `StructuredMemoryConfig`."""

    scope_keys: frozenset[str] | None = None
    """Applies only to requests whose scope has exactly these keys; None: the default config
    (the same rule as `CustomizationConfig.scope_keys`)."""
    schema_configs: tuple[StructuredMemorySchemaConfig, ...] = ()
    """The profiles: one per schema, per scope."""

    @model_validator(mode="after")
    def _unique_ids(self) -> StructuredMemoryConfig:
        ids = [schema.id for schema in self.schema_configs]
        if len(ids) != len(set(ids)):
            raise ValueError("schema_configs must not repeat a schema id")
        return self

    @field_serializer("scope_keys", when_used="json")
    def _sorted_keys(self, keys: frozenset[str] | None) -> list[str] | None:
        """Sorted in JSON, as `CustomizationConfig.scope_keys`."""
        return None if keys is None else sorted(keys)


class GenerationTrigger(_Settings):
    """When an IngestEvents stream's buffered events become a generation (Memory Bank's
    `generation_trigger_config.generation_rule`): any rule met flushes the stream; none set
    means at once. Durations in whole minutes, as Memory Bank requires."""

    event_count: int | None = Field(default=None, ge=1, le=10_000)
    """Flush once this many events wait."""
    fixed_interval: timedelta | None = None
    """Flush this long after the stream's previous flush (or its first event)."""
    idle_duration: timedelta | None = None
    """Flush once the stream got no event for this long."""
    overlap_event_count: int = Field(default=0, ge=0, le=1000)
    """Send the last N already-processed events again with the next window (context)."""

    @model_validator(mode="after")
    def _minutes(self) -> Self:
        for name in ("fixed_interval", "idle_duration"):
            value = getattr(self, name)
            if value is not None and (value <= timedelta(0) or value.total_seconds() % 60):
                raise ValueError(f"{name} must be a whole number of minutes, got {value}")
        return self


class GenerationConfig(_Settings):
    """How memories are generated from conversations."""

    model: str = "gemini-2.5-flash"
    """The generation model's name (used when the service is given no `llm` object)."""
    similar_memories: int = Field(default=5, ge=1, le=50)
    """How many existing memories of the scope are candidates for each extracted fact."""
    max_attempts: int = Field(default=5, ge=1, le=50)
    """Tries per generation job before it is dead-lettered; a permanent failure (a rejected
    key, a 4xx, bad input: `adk_memory._retry.is_permanent`) is dead-lettered at once."""
    retry_base_delay: timedelta = Field(default=timedelta(seconds=2), ge=timedelta(0))
    """First retry delay; doubled on each further try (half jittered, at most 10 minutes: the
    package's `adk_memory._retry.Backoff`)."""
    include_function_calls: bool = False
    """Send function calls and responses to the model too (off: only what was said)."""
    procedure_min_users: int = Field(default=3, ge=1, le=1000)
    """How many distinct users' sessions must support a procedure before other users of the
    app see it (and then only if no token of it is one user's alone: README, "Procedural
    memory")."""
    trigger: GenerationTrigger | None = None
    """Memory Bank's `generation_trigger_config`: when IngestEvents streams flush, unless a
    request names its own; None flushes each request's events at once."""
    job_retention: timedelta = Field(default=timedelta(days=7), gt=timedelta(0))
    """How long a finished job is kept before `sweep_jobs` deletes it. A done job holds no
    conversation (only memory ids and actions); a dead-lettered one keeps its payload, for
    diagnosis, until then."""


_SOURCE_TYPES = frozenset({"bootstrapped", "user_input", "implicit", "agent", "tool_output"})
"""`memory.models.SourceType`'s values (this module imports nothing of the service's)."""


class TrustConfig(_Settings):
    """How a memory's provenance weighs (`memory.policy.trust`): sources rank bootstrapped >
    explicit user input > implicit conversation > tool output, conflicts are resolved by the
    strategy below (enforced in code after the consolidation model answers), corroboration
    raises confidence, contradiction lowers it, and confidence decays with age."""

    conflict_strategy: Literal["trust", "recency"] = "trust"
    """`trust`: a change from a less trusted source never updates or deletes a more trusted
    memory unless it is corroborated (an independent source, another session, made the same
    kind of change before); sources of equal trust: the newer wins. `recency`: the newer always
    wins (the model's decision stands), as before provenance counted."""

    initial_confidence: dict[str, float] = Field(
        default_factory=lambda: {
            "bootstrapped": 0.9,
            "user_input": 0.8,
            "implicit": 0.6,
            "agent": 0.6,
            "tool_output": 0.4,
        }
    )
    """The confidence a generated memory starts with, by its source type (`SourceType` values;
    a type left out starts at 0.5). A direct write keeps the confidence it is given (None:
    unknown, never shown or pruned)."""

    corroboration_boost: float = Field(default=0.3, ge=0, le=1)
    """How far an independent corroboration moves confidence towards 1: c + boost * (1 - c)."""

    contradiction_penalty: float = Field(default=0.3, ge=0, le=1)
    """How far a contradiction (a change the trust rule blocked) lowers confidence:
    c * (1 - penalty)."""

    confidence_half_life: timedelta | None = timedelta(days=180)
    """Effective confidence halves every this long since the memory was last updated or
    corroborated; computed when read (no write sweeps it). None: no decay."""

    prune_threshold: float = Field(default=0.2, ge=0, le=1)
    """`prune_memories` deletes memories whose effective confidence is below this..."""

    prune_min_age: timedelta = Field(default=timedelta(days=30), ge=timedelta(0))
    """...and that were not updated or corroborated for at least this long."""

    @model_validator(mode="after")
    def _valid(self) -> TrustConfig:
        if self.confidence_half_life is not None and self.confidence_half_life <= timedelta(0):
            raise ValueError("confidence_half_life must be a positive duration (None: no decay)")
        for name, value in self.initial_confidence.items():
            if name not in _SOURCE_TYPES:
                raise ValueError(f"initial_confidence: {name!r} is not a source type")
            if not 0 <= value <= 1:
                raise ValueError(f"initial_confidence[{name!r}] must be between 0 and 1")
        return self


class MemoryBankConfig(_Settings):
    """Everything that shapes a memory bank: TTLs, retrieval, and generation.

    Also read from Memory Bank's own `memory_bank_config` JSON, as is (snake_case or camelCase,
    `ttl_config`, `generation_config`, `similarity_search_config`, Memory Bank's topic and
    few-shot shapes, OpenAPI `memory_schema`s: `adk_memory.memory_bank_json`); a Memory Bank
    field adk-memory does not implement raises `UnsupportedConfigError` naming it.
    """

    ttl: TtlConfig = TtlConfig()
    """Memory and revision lifetimes."""

    retrieval: RetrievalConfig = RetrievalConfig()
    """Ranking of search results."""

    customization_configs: tuple[CustomizationConfig, ...] = (CustomizationConfig(),)
    """What to remember: the config whose `scope_keys` match a request's scope keys exactly,
    else the one without `scope_keys`."""

    generation: GenerationConfig = GenerationConfig()
    """The generation model and the job queue's retry policy."""

    structured_memory_configs: tuple[StructuredMemoryConfig, ...] = ()
    """Structured profiles to keep: the config whose `scope_keys` match a request's scope keys
    exactly, else the one without `scope_keys`; none: no profiles."""

    trust: TrustConfig = TrustConfig()
    """Provenance: conflict strategy, confidence's rises, falls, decay and pruning."""

    @model_validator(mode="before")
    @classmethod
    def _memory_bank_shape(cls, data: Any) -> Any:
        return from_memory_bank(data) if isinstance(data, Mapping) else data

    @classmethod
    def model_validate(cls, obj: Any, **options: Any) -> Self:
        """Pydantic's, but a Memory Bank field we do not implement raises its own
        `UnsupportedConfigError` (pydantic would wrap it: it is a ValueError)."""
        try:
            return super().model_validate(obj, **options)
        except ValidationError as exc:
            cause = unsupported_cause(exc)
            if cause is None:
                raise
            raise cause from None

    @model_validator(mode="after")
    def _one_per_scope_shape(self) -> MemoryBankConfig:
        for name in ("customization_configs", "structured_memory_configs"):
            shapes = [c.scope_keys for c in getattr(self, name)]
            if len(shapes) != len(set(shapes)):
                raise ValueError(f"{name} must not repeat the same scope_keys")
        return self

    def structured_for(
        self, scope_keys: frozenset[str]
    ) -> tuple[StructuredMemorySchemaConfig, ...]:
        """The profile schemas of a scope with these keys (exact match first, else default)."""
        for exact in (True, False):
            for config in self.structured_memory_configs:
                if config.scope_keys == (scope_keys if exact else None):
                    return config.schema_configs
        return ()

    def customization_for(self, scope_keys: frozenset[str]) -> CustomizationConfig:
        """The customization for a scope with these keys (exact match first, else default)."""
        for config in self.customization_configs:
            if config.scope_keys == scope_keys:
                return config
        for config in self.customization_configs:
            if config.scope_keys is None:
                return config
        return CustomizationConfig()


GuardChoice = Literal["default", "none"]
"""A guard by name: `default` is `DefaultMemoryGuard()`, `none` allows every fact."""

RedactChoice = Literal["pii", "none"]
"""A redactor by name: `pii` is `PiiRedactor()`, `none` redacts nothing."""


class AppMemoryConfig(MemoryBankConfig):
    """The memory configuration one app runs with, as it is stored in the database and shared
    by every process that serves the app (agents, in-process and standalone workers):
    `MemoryBankConfig`'s fields, plus the guard and the redactor by name, since code is never
    stored. Written by `adk-memory config push` or by the app's memory service on first use;
    the generation model is not part of it (each process uses its own, with its credentials).
    """

    guard: GuardChoice | None = None
    """The guard a worker judges this app's facts with; unset: the worker's own."""

    redact: RedactChoice | None = None
    """`pii`: this app's generations are redacted with `PiiRedactor()` even by a worker started
    without a redactor; `none` or unset: the worker's own redactor (a worker never redacts less
    than it was started to)."""

    @classmethod
    def of(
        cls,
        config: MemoryBankConfig,
        *,
        guard: GuardChoice | None = None,
        redact: RedactChoice | None = None,
    ) -> AppMemoryConfig:
        """`config`'s fields with these names (an `AppMemoryConfig`'s own names are replaced)."""
        fields = {name: getattr(config, name) for name in MemoryBankConfig.model_fields}
        return cls(**fields, guard=guard, redact=redact)
