"""PostgresMemoryService: ADK's `BaseMemoryService` with Memory Bank-style memory management.

Owns: the API (create / get / list / update / delete / purge / revisions / retrieve, and ADK's
add_session_to_memory / add_events_to_memory / add_memory / search_memory / delete_memory), scope
validation, TTLs, embedding of facts and queries, and the mapping to ADK's `MemoryEntry`. With no
model configured, sessions are remembered as raw events (one memory per event with text, never
twice). It never writes SQL itself (the store does) and never imports the session service: it
reads sessions only through ADK's `Session` and `Event` types.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from google.adk.errors.input_validation_error import InputValidationError
from google.adk.events.event import Event
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.models.base_llm import BaseLlm
from google.adk.sessions.session import Session
from google.genai import types
from sqlalchemy.ext.asyncio import AsyncEngine
from typing_extensions import override

from .._json import sanitise, sanitise_text
from ..config import MemoryBankConfig
from ..db.batches import in_batches
from ..db.engine import DEFAULT_SCHEMA, Database
from ..redaction import Redactor
from .embeddings import Embedder
from .generation import resolve_llm
from .generator import Generator, contents_payload, facts_payload, session_payload
from .guard import MemoryGuard
from .jobs import ClaimedJob, JobQueue, JobRecord, Worker
from .models import (
    GeneratedMemory,
    GenerateMemoriesOperation,
    GuardedFact,
    Memory,
    MemoryAction,
    MemoryFilter,
    MemoryPage,
    MemoryRevision,
    QuarantinedMemory,
    RetrievedMemory,
    SourceType,
)
from .rendering import neutralise
from .scope import Scope, scope_key, user_scope, validate_scope
from .screen import FactScreen, MemoryRejectedError, Screened, guard_labels
from .store import MemoryChange, MemoryStore, NewMemory, quarantine_key

logger = logging.getLogger(__name__)

MAX_FACT_LENGTH = 10_000
"""Longest fact accepted, in characters: a memory is a fact, not a document."""

MAX_TOP_K = 100
MAX_DIRECT_FACTS = 5
"""Pre-extracted facts one generation request may carry (Memory Bank's limit)."""

_RAW_EVENT_NAMESPACE = uuid.UUID("5f0c5d1e-7d0a-4a57-9a53-3d1f0e6b2a10")
_ENTRY_NAMESPACE = uuid.UUID("0b8f4f0e-9d8e-4c55-8a3e-51f1d3a3c7b2")


def _seconds(ttl: timedelta | None) -> float | None:
    if ttl is None:
        return None
    if ttl <= timedelta(0):
        raise InputValidationError("ttl must be a positive duration.")
    return ttl.total_seconds()


def _check_fact(fact: object) -> str:
    if not isinstance(fact, str) or not fact.strip():
        raise InputValidationError("A memory's fact must be a non-empty string.")
    if len(fact) > MAX_FACT_LENGTH:
        raise InputValidationError(f"A fact is at most {MAX_FACT_LENGTH} characters.")
    return sanitise_text(fact)


def _check_topics(topics: object) -> list[str] | None:
    if topics is None:
        return None
    if isinstance(topics, str) or not isinstance(topics, Sequence):
        raise InputValidationError("topics must be a list of strings.")
    if not all(isinstance(t, str) and t for t in topics):
        raise InputValidationError("Every topic must be a non-empty string.")
    return [sanitise_text(t) for t in topics]


def _check_mapping(name: str, value: object) -> dict[str, Any] | None:
    """Metadata and structured content: a dict, stored as JSON (strings sanitised; datetimes as
    ISO 8601 and NaN as null, pydantic's rules)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InputValidationError(f"{name} must be a dict.")
    return sanitise(dict(value))


def _check_id(memory_id: object) -> str:
    try:
        return str(uuid.UUID(str(memory_id)))
    except ValueError as exc:
        raise InputValidationError(f"Not a memory id: {memory_id!r}.") from exc


def _check_unit(name: str, value: float | None) -> float | None:
    if value is not None and not 0.0 <= value <= 1.0:
        raise InputValidationError(f"{name} must be between 0 and 1.")
    return value


def _event_text(event: Event) -> str:
    """The text an event says (thoughts left out): what raw-events mode remembers."""
    if not event.content or not event.content.parts:
        return ""
    return "\n".join(p.text for p in event.content.parts if p.text and not p.thought).strip()


def _entry_text(entry: MemoryEntry) -> str:
    return "\n".join(p.text for p in entry.content.parts or [] if p.text).strip()


def _encode_token(memory: Memory) -> str:
    raw = f"{memory.update_time.isoformat()}|{memory.id}"
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _decode_token(token: str) -> tuple[datetime, str]:
    try:
        when, memory_id = base64.urlsafe_b64decode(token.encode()).decode().split("|")
        return datetime.fromisoformat(when), _check_id(memory_id)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputValidationError("Invalid page token.") from exc


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


class PostgresMemoryService(BaseMemoryService):
    """Long-term memory on PostgreSQL + pgvector, scoped exactly, ranked by hybrid search.

    Args:
      database_url: `postgresql://...`; None and no engine: the embedded PostgreSQL.
      embedder: makes vectors for facts and queries (e.g. `GeminiEmbedder()`); None: full-text
        search only (no API key needed).
      config: TTLs, retrieval weights, topics and generation settings (`MemoryBankConfig`).
      llm: the generation model: a model name (e.g. "gemini-2.5-flash") or any ADK `BaseLlm`
        (e.g. `adk_memory.testing.ScriptedLlm`). With one, the service is in extraction mode:
        ADK's add_* calls enqueue generation; without, sessions are remembered as raw events.
      run_worker: run a generation worker in this process (started on the first enqueue); off
        when a standalone worker serves the database.
      redactor: applied to every text this service persists or sends to a model (facts, raw
        events, job payloads, the generation model's input and output, revisions' extracted
        facts, stored errors), e.g. `PiiRedactor()`; the same object as the session service's.
      guard: judges every fact before it is written (`MemoryGuard`: allow, reject or
        quarantine); None: `DefaultMemoryGuard()`. To switch it off, pass a guard that allows
        everything.
      engine: an existing SQLAlchemy `AsyncEngine` (e.g. shared with `PostgresSessionService`).
      schema, data_dir, auto_migrate, engine_kwargs: as for `PostgresSessionService`.
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        embedder: Embedder | None = None,
        config: MemoryBankConfig | None = None,
        llm: str | BaseLlm | None = None,
        run_worker: bool = True,
        redactor: Redactor | None = None,
        guard: MemoryGuard | None = None,
        engine: AsyncEngine | None = None,
        schema: str = DEFAULT_SCHEMA,
        data_dir: str | None = None,
        auto_migrate: bool = True,
        engine_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if embedder is not None and not isinstance(embedder, Embedder):
            raise InputValidationError("embedder must have `dimensions` and `embed(texts)`.")
        self._screen = FactScreen(redactor, guard)
        self.config = config or MemoryBankConfig()
        self.embedder = embedder
        self.redactor = redactor
        self.guard = self._screen.guard
        self.database = Database(
            database_url,
            engine=engine,
            schema=schema,
            data_dir=data_dir,
            auto_migrate=auto_migrate,
            engine_kwargs=engine_kwargs,
        )
        self._store = MemoryStore(
            self.database, text_search_language=self.config.retrieval.text_search_language
        )
        self._prepared = False
        self.llm = resolve_llm(llm) if llm is not None else None
        self._jobs = JobQueue(self.database)
        self._generator = (
            Generator(
                store=self._store,
                queue=self._jobs,
                llm=self.llm,
                embed=self._embed,
                config=self.config,
                revision_ttl=self._revision_ttl,
                screen=self._screen,
            )
            if self.llm is not None
            else None
        )
        self._run_worker = run_worker
        self.worker = self.make_worker()

    def make_worker(self, **options: Any) -> Worker:
        """A worker for this database's generation jobs (`Worker` options: lease,
        poll_interval, concurrency); the in-process one is `self.worker`."""
        options.setdefault("retry_base_delay", self.config.generation.retry_base_delay)
        return Worker(
            self._jobs, self._generate, prepare=self._ready, redact=self._screen.text, **options
        )

    async def _generate(self, job: ClaimedJob) -> None:
        """The worker's handler: run one generation job (the worker has run `_ready` first)."""
        if self._generator is None:
            raise RuntimeError("This service has no generation model (pass llm=...).")
        await self._generator(job)

    async def _ready(self) -> MemoryStore:
        """Migrate once, and fix (or check) the vector dimension once, before the first call."""
        if not self._prepared:
            await self._store.ready()
            if self.embedder is not None:
                await self._store.prepare_embeddings(self.embedder.dimensions)
            self._prepared = True
        return self._store

    async def _embed(self, texts: Sequence[str], task: str) -> list[list[float]] | None:
        if self.embedder is None or not texts:
            return None
        vectors = await self.embedder.embed(list(texts), task=task)  # type: ignore[arg-type]
        if len(vectors) != len(texts) or any(len(v) != self.embedder.dimensions for v in vectors):
            raise ValueError("The embedder returned vectors of the wrong number or size.")
        return vectors

    @property
    def _revision_ttl(self) -> float | None:
        return _seconds(self.config.ttl.revision_ttl)

    # ------------------------------------------------------------------ Memory Bank-style API

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
    ) -> Memory:
        """Store a fact as a memory of `scope`, as given (no consolidation): redacted, then
        judged by the guard. A quarantined fact is stored but not live (the memory returned says
        `quarantined`) until an operator approves it.

        Raises:
          MemoryRejectedError: the guard refused the fact (nothing is stored).
        """
        checked = validate_scope(scope)
        screened = await self._screen.admit(_check_fact(fact), checked, "api")
        new = await self._new_memory(
            str(uuid.uuid4()),
            checked,
            screened,
            topics=topics,
            metadata=metadata,
            content=content,
            importance=importance,
            confidence=confidence,
            ttl=ttl if ttl is not None else self.config.ttl.for_create(),
            source_type=source_type,
        )
        store = await self._ready()
        memory = await store.insert(new, self._revision_ttl)
        assert memory is not None  # a fresh random id is never taken
        return memory.model_copy(update={"quarantined": True}) if screened.quarantined else memory

    async def _screen_all(
        self, facts: Sequence[str], scope: Scope, source: str, *, direct: bool
    ) -> list[Screened]:
        """Each fact checked, redacted and judged. A direct write (`direct`) is all or nothing:
        one rejected fact raises `MemoryRejectedError` before anything is stored."""
        checked = [_check_fact(f) for f in facts]
        judge = self._screen.admit if direct else self._screen.screen
        return [await judge(fact, scope, source) for fact in checked]

    async def _new_memory(
        self,
        memory_id: str,
        scope: Scope,
        screened: Screened,
        *,
        embedding: Sequence[float] | None = None,
        ttl: timedelta | None,
        topics: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        content: Mapping[str, Any] | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        source_type: SourceType = SourceType.BOOTSTRAPPED,
        source_session_id: str | None = None,
        source_event_ids: Sequence[str] = (),
        create_time: datetime | None = None,
    ) -> NewMemory:
        """Validate one screened memory's fields (and embed its fact unless a vector is given).
        A quarantined fact goes under its scope's quarantine key, its verdict in the revision."""
        fact = screened.fact
        if embedding is None:
            vectors = await self._embed([fact], "document")
            embedding = vectors[0] if vectors else None
        key = scope_key(scope)
        return NewMemory(
            id=memory_id,
            scope_key=quarantine_key(key) if screened.quarantined else key,
            scope=scope,
            fact=fact,
            topics=_check_topics(topics) or [],
            metadata=self._screen.json(_check_mapping("metadata", metadata) or {}),
            content=self._screen.json(_check_mapping("content", content)),
            importance=_check_unit("importance", importance),
            confidence=_check_unit("confidence", confidence),
            source_type=SourceType(source_type),
            source_session_id=source_session_id,
            source_event_ids=list(source_event_ids),
            embedding=embedding,
            create_time=create_time,
            ttl_seconds=_seconds(ttl),
            labels=guard_labels(screened.verdict),
        )

    async def get_memory(self, memory_id: str, scope: Mapping[str, str]) -> Memory | None:
        """The live memory with this id in this scope, or None (never another scope's)."""
        checked = validate_scope(scope)
        store = await self._ready()
        return await store.get(_check_id(memory_id), scope_key(checked))

    async def list_memories(
        self,
        scope: Mapping[str, str] | None = None,
        *,
        filter: MemoryFilter | None = None,
        page_size: int = 50,
        page_token: str | None = None,
    ) -> MemoryPage:
        """Live memories of `scope`, newest update first, one page at a time.

        `scope=None` lists every scope: an operator's view (CLI, exports), never one to hand to
        a model or an end user.
        """
        key = scope_key(validate_scope(scope)) if scope is not None else None
        if not 1 <= page_size <= 1000:
            raise InputValidationError("page_size must be between 1 and 1000.")
        after = _decode_token(page_token) if page_token else None
        store = await self._ready()
        rows = await store.list_memories(key, filter, after, page_size + 1)
        more = len(rows) > page_size
        rows = rows[:page_size]
        return MemoryPage(
            memories=rows, next_page_token=_encode_token(rows[-1]) if more and rows else None
        )

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
    ) -> Memory:
        """Change a memory (fields left None are kept) and record an UPDATED revision.

        The expiry is reset to now + `ttl`, else now + the configured default TTL, else kept. A
        new fact is redacted and judged by the guard; one the guard does not allow outright is
        refused (a live memory is never turned into a quarantined one).

        Raises:
          LookupError: no live memory with this id in this scope.
          MemoryRejectedError: the guard rejected or would quarantine the new fact.
        """
        checked = validate_scope(scope)
        memory_id = _check_id(memory_id)
        if fact is not None:
            screened = await self._screen.admit(_check_fact(fact), checked, "api")
            if screened.quarantined:
                raise MemoryRejectedError(screened.verdict)
            fact = screened.fact
        vectors = await self._embed([fact], "document") if fact is not None else None
        change = MemoryChange(
            fact=fact,
            topics=_check_topics(topics),
            metadata=self._screen.json(_check_mapping("metadata", metadata)),
            importance=_check_unit("importance", importance),
            confidence=_check_unit("confidence", confidence),
            embedding=vectors[0] if vectors else None,
            ttl_seconds=_seconds(ttl if ttl is not None else self.config.ttl.for_update()),
            labels=dict(labels or {}),
        )
        store = await self._ready()
        memory = await store.update(memory_id, scope_key(checked), change, self._revision_ttl)
        if memory is None:
            raise LookupError(f"No memory {memory_id} in scope {checked}.")
        return memory

    @override
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
        checked = self._scope_of(app_name, user_id, scope)
        if not memory_id:
            logger.warning(
                "delete_memory without a memory_id deletes nothing; use purge(scope) to forget "
                "a whole scope."
            )
            return
        store = await self._ready()
        await store.delete(scope_key(checked), _check_id(memory_id), None, self._revision_ttl)

    @staticmethod
    def _scope_of(
        app_name: str | None, user_id: str | None, scope: Mapping[str, str] | None
    ) -> Scope:
        if scope is not None:
            if app_name is not None or user_id is not None:
                raise InputValidationError("Pass either scope or app_name and user_id, not both.")
            return validate_scope(scope)
        if app_name is None or user_id is None:
            raise InputValidationError("A scope (or app_name and user_id) is required.")
        return user_scope(app_name, user_id)

    async def list_revisions(
        self, memory_id: str, scope: Mapping[str, str]
    ) -> list[MemoryRevision]:
        """A memory's history, oldest first; still there after the memory was deleted."""
        checked = validate_scope(scope)
        store = await self._ready()
        return await store.revisions(_check_id(memory_id), scope_key(checked))

    async def purge(self, scope: Mapping[str, str]) -> int:
        """Forget a scope entirely: its memories (quarantined ones too), their revisions, its
        generation jobs (payloads and results) and its watermarks. Returns rows deleted. The
        jobs go first, so a generation running for the scope finds its job gone and writes
        nothing."""
        checked = validate_scope(scope)
        key = scope_key(checked)
        store = await self._ready()
        jobs = await self._jobs.purge(key)
        return jobs + await store.purge(key)

    async def erase_user(self, app_name: str, user_id: str) -> dict[str, int]:
        """Forget one user of one app everywhere in memory: for every scope that contains
        `{"app_name": app_name, "user_id": user_id}` (ADK's scope, and any narrower one such as
        `{..., "agent": "a1"}`), its generation jobs, memories (quarantined ones too), revisions
        and watermarks. Scopes without an `app_name` are not touched. Idempotent: a second call
        counts zeros; an interrupted one is finished by calling again. Returns counts per kind
        (`MemoryStack.erase_user` also erases sessions and artifacts and records the erasure)."""
        containing = user_scope(app_name, user_id)
        store = await self._ready()
        jobs = await self._jobs.erase(containing)
        memories, revisions, watermarks = await store.erase(containing)
        return {
            "generation_jobs": jobs,
            "memories": memories,
            "revisions": revisions,
            "watermarks": watermarks,
        }

    async def record_erasure(
        self, app_name: str, counts: Mapping[str, int], start_time: datetime
    ) -> None:
        """Record that a user of `app_name` was erased: the counts and the times, nothing that
        says who (the record must not keep what it erased)."""
        store = await self._ready()
        await store.record_erasure(app_name, dict(counts), start_time)

    async def retrieve_memories(
        self,
        scope: Mapping[str, str],
        *,
        search_query: str | None = None,
        top_k: int = 3,
        filter: MemoryFilter | None = None,
    ) -> list[RetrievedMemory]:
        """Memories of exactly `scope`. With a query: the `top_k` most relevant, best first
        (hybrid vector + full-text, blended with recency and importance). Without: all of them,
        newest first (score 0)."""
        checked = validate_scope(scope)
        if not 1 <= top_k <= MAX_TOP_K:
            raise InputValidationError(f"top_k must be between 1 and {MAX_TOP_K}.")
        if search_query is None or not search_query.strip():
            return [
                RetrievedMemory(memory=m, score=0.0)
                for m in await self._all_memories(checked, filter)
            ]
        retrieval = self.config.retrieval
        if retrieval.mode == "vector" and self.embedder is None:
            raise InputValidationError("Vector-only retrieval needs an embedder.")
        # The query is often the user's own message: redacted before the embedding model sees
        # it (and so it matches the redacted facts it should find).
        search_query = self._screen.text(search_query)
        use_vectors = retrieval.mode != "text"
        vectors = await self._embed([search_query], "query") if use_vectors else None
        store = await self._ready()
        rows = await store.retrieve(
            scope_key(checked),
            query_text=search_query,
            query_embedding=vectors[0] if vectors else None,
            top_k=top_k,
            candidates=max(retrieval.candidates, top_k),
            rrf_k=retrieval.rrf_k,
            weights=(
                retrieval.relevance_weight,
                retrieval.recency_weight,
                retrieval.importance_weight,
            ),
            half_life_seconds=retrieval.recency_half_life.total_seconds(),
            flt=filter,
            use_text=retrieval.mode != "vector",
        )
        return [RetrievedMemory(memory=m, distance=d, score=s) for m, d, s in rows]

    async def _all_memories(self, scope: Scope, flt: MemoryFilter | None) -> list[Memory]:
        memories: list[Memory] = []
        token: str | None = None
        while True:
            page = await self.list_memories(scope, filter=flt, page_size=1000, page_token=token)
            memories.extend(page.memories)
            if page.next_page_token is None:
                return memories
            token = page.next_page_token

    async def sweep_expired(
        self, *, batch_size: int = 1000, progress: Callable[[int], None] | None = None
    ) -> int:
        """Delete expired memories (each with a DELETED revision labelled "expired") and expired
        revisions, in batches; `progress` gets the running count of memories. Returns it.
        (Finished generation jobs past their retention: `sweep_jobs`.)"""
        store = await self._ready()

        async def step(size: int) -> tuple[int, bool]:
            memories, revisions = await store.sweep(size, self._revision_ttl)
            return memories, memories == size or revisions == size

        return await in_batches(step, batch_size, progress)

    async def sweep_jobs(
        self, *, batch_size: int = 1000, progress: Callable[[int], None] | None = None
    ) -> int:
        """Delete finished generation jobs (done, and dead-lettered ones whose payload was kept
        for diagnosis) older than `config.generation.job_retention`, in batches; `progress`
        gets the running count. Returns it. Their operations are then unknown."""
        await self._ready()
        retention = self.config.generation.job_retention

        async def step(size: int) -> tuple[int, bool]:
            deleted = await self._jobs.sweep(retention, size)
            return deleted, deleted == size

        return await in_batches(step, batch_size, progress)

    # ------------------------------------------------------------------ quarantine

    async def list_quarantined(
        self, scope: Mapping[str, str] | None = None, *, limit: int = 100
    ) -> list[QuarantinedMemory]:
        """Memories the guard quarantined, newest first, with its reason: of `scope`, or of
        every scope (`None`: the operator's review queue). Never shown to a model."""
        key = scope_key(validate_scope(scope)) if scope is not None else None
        if not 1 <= limit <= 1000:
            raise InputValidationError("limit must be between 1 and 1000.")
        store = await self._ready()
        return [
            QuarantinedMemory(
                memory=memory.model_copy(update={"quarantined": True}),
                rule=labels.get("guard_rule", ""),
                reason=labels.get("guard_reason", ""),
            )
            for memory, labels in await store.quarantined(key, limit)
        ]

    async def approve_quarantined(self, memory_id: str, scope: Mapping[str, str]) -> Memory:
        """An operator's approval: the quarantined memory becomes live in its scope (an UPDATED
        revision labelled `guard: approved`).

        Raises:
          LookupError: no quarantined memory with this id in this scope.
        """
        checked = validate_scope(scope)
        store = await self._ready()
        labels = {"guard": "approved"}
        memory = await store.release(
            _check_id(memory_id), scope_key(checked), labels, self._revision_ttl
        )
        if memory is None:
            raise LookupError(f"No quarantined memory {memory_id} in scope {checked}.")
        return memory

    async def reject_quarantined(self, memory_id: str, scope: Mapping[str, str]) -> bool:
        """An operator's rejection: the quarantined memory is deleted (a DELETED revision
        labelled `guard_rejected`). False if there was no such quarantined memory."""
        checked = validate_scope(scope)
        store = await self._ready()
        key = quarantine_key(scope_key(checked))
        labels = {"reason": "guard_rejected"}
        return await store.delete(key, _check_id(memory_id), labels, self._revision_ttl) > 0

    # ------------------------------------------------------------------ memory generation

    async def generate_memories(
        self,
        *,
        session: Session | None = None,
        start_time: datetime | None = None,
        end_time: datetime | None = None,
        contents: Sequence[Event | types.Content] | None = None,
        facts: Sequence[str] | None = None,
        topic: str | None = None,
        scope: Mapping[str, str] | None = None,
        session_id: str | None = None,
        disable_consolidation: bool = False,
        wait_for_completion: bool = False,
        metadata: Mapping[str, Any] | None = None,
        revision_labels: Mapping[str, str] | None = None,
    ) -> GenerateMemoriesOperation:
        """Turn one source into memories of `scope`, in the background (Memory Bank's
        GenerateMemories). Exactly one source: a `session` (optionally only its events between
        `start_time` and `end_time`; only events not processed before are used), direct
        `contents` (events or `types.Content`, a delta; images, audio and files reach the model),
        or up to 5 pre-extracted `facts` to consolidate (with the memory `topic` they are
        about, if known: extraction gives the others theirs). `scope` defaults to the session's
        user. Returns at once with an operation to poll, unless `wait_for_completion`."""
        if self.llm is None:
            raise InputValidationError("Memory generation needs a model: pass llm=... .")
        if sum(source is not None for source in (session, contents, facts)) != 1:
            raise InputValidationError("Pass exactly one of session, contents or facts.")
        if topic is not None:
            if facts is None:
                raise InputValidationError("A topic goes with direct facts only.")
            [topic] = _check_topics([topic]) or [""]
        if scope is None:
            if session is None:
                raise InputValidationError("A scope is required unless a session is given.")
            scope = user_scope(session.app_name, session.user_id)
        checked = validate_scope(scope)
        options = {
            "disable_consolidation": disable_consolidation,
            "metadata": _check_mapping("metadata", metadata) or {},
            "revision_labels": {str(k): str(v) for k, v in (revision_labels or {}).items()},
        }
        options["metadata"] = self._screen.json(options["metadata"])
        if session is not None:
            events = [
                e
                for e in session.events
                if (start_time is None or e.timestamp >= start_time.timestamp())
                and (end_time is None or e.timestamp < end_time.timestamp())
            ]
            payload = session_payload(session.id, events, options, self._screen)
        elif contents is not None:
            payload = contents_payload(list(contents), session_id, options, self._screen)
        else:
            if not 1 <= len(facts or ()) <= MAX_DIRECT_FACTS:
                raise InputValidationError(f"Pass 1 to {MAX_DIRECT_FACTS} facts.")
            source = "tool" if "tool" in options["metadata"] else "api"
            screened = await self._screen_all(facts or (), checked, source, direct=True)
            payload = facts_payload([s.fact for s in screened], topic or "", options)
        await self._ready()
        job_id = await self._jobs.enqueue(
            scope_key(checked), checked, payload, self.config.generation.max_attempts
        )
        if self._run_worker:
            self.worker.start()
        operation = GenerateMemoriesOperation(id=job_id, scope=checked)
        return await self.wait(operation) if wait_for_completion else operation

    async def get_operation(
        self, operation_id: str, scope: Mapping[str, str]
    ) -> GenerateMemoriesOperation | None:
        """A generation's current state, by id and the scope it was for (None if this scope
        has no such operation: another scope's operation is never returned). A finished one
        lists the memories it changed as they are now (see `GeneratedMemory`)."""
        checked = validate_scope(scope)
        await self._ready()
        record = await self._jobs.get(_check_id(operation_id), scope_key(checked))
        return None if record is None else await self._operation(record)

    async def _operation(self, record: JobRecord) -> GenerateMemoriesOperation:
        """An operation from its job: the facts of the memories it changed are read from the
        memories themselves (the job keeps ids and actions only)."""
        changes: list[tuple[str, MemoryAction, bool]] = []
        rejected: list[GuardedFact] = []
        for entry in record.result or []:
            if entry["action"] == "REJECTED":
                rejected.append(GuardedFact(rule=entry["rule"], reason=entry["reason"]))
                continue
            # Jobs finished before results lost their facts carry the memory itself.
            memory_id = entry.get("memory_id") or entry["memory"]["id"]
            changes.append(
                (memory_id, MemoryAction(entry["action"]), bool(entry.get("quarantined")))
            )
        key = scope_key(record.scope)
        live = await self._store.get_many([c[0] for c in changes], key) if changes else {}
        return GenerateMemoriesOperation(
            id=record.id,
            scope=record.scope,
            done=record.status in ("done", "dead"),
            error=record.error if record.status == "dead" else None,
            generated_memories=[
                GeneratedMemory(
                    memory_id=memory_id,
                    action=action,
                    memory=None if quarantined else live.get(memory_id),
                    quarantined=quarantined,
                )
                for memory_id, action, quarantined in changes
            ],
            rejected=rejected,
        )

    async def wait(
        self, operation: GenerateMemoriesOperation, *, timeout: float | None = None
    ) -> GenerateMemoriesOperation:
        """Block until the operation is done (or `timeout` seconds pass: TimeoutError)."""

        async def poll() -> GenerateMemoriesOperation:
            delay = 0.02
            while True:
                current = await self.get_operation(operation.id, operation.scope)
                if current is None:
                    raise LookupError(f"No operation {operation.id}.")
                if current.done:
                    return current
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)

        return await asyncio.wait_for(poll(), timeout)

    async def revoke_source(
        self, session_id: str, scope: Mapping[str, str]
    ) -> list[GenerateMemoriesOperation]:
        """Withdraw a session as a source: every memory of `scope` derived from it, even in
        part, is deleted (its revision labelled `source_revoked`), and what its other sources
        said (their extracted facts, kept in the revisions) is generated again. Returns those
        regenerations; a memory with no other source is simply gone."""
        checked = validate_scope(scope)
        if not isinstance(session_id, str) or not session_id:
            raise InputValidationError("session_id must be a non-empty string.")
        store = await self._ready()
        key = scope_key(checked)
        derived = await store.derived_from(key, session_id)
        labels = {"reason": "source_revoked", "session_id": session_id}
        remaining: list[str] = []
        for memory_id, other_facts in derived:
            await store.delete(key, memory_id, labels, self._revision_ttl)
            remaining.extend(f for f in other_facts if f not in remaining)
        if not remaining or self.llm is None:
            return []
        return [
            await self.generate_memories(
                facts=remaining[i : i + MAX_DIRECT_FACTS],
                scope=checked,
                revision_labels={"reason": "regenerated_after_revocation"},
            )
            for i in range(0, len(remaining), MAX_DIRECT_FACTS)
        ]

    async def processed_until(
        self, sources: Sequence[tuple[Mapping[str, str], str]]
    ) -> list[float | None]:
        """For each (scope, session id): the timestamp of the session's last event already turned
        into memories of that scope (its watermark), or None if none was; in the order given, in
        one query. Generation triggers use it to send only new events and to skip sessions with
        nothing new."""
        keys: list[tuple[str, str]] = []
        for scope, session_id in sources:
            if not isinstance(session_id, str) or not session_id:
                raise InputValidationError("session_id must be a non-empty string.")
            keys.append((scope_key(validate_scope(scope)), session_id))
        store = await self._ready()
        return await store.processed_until(keys)

    async def dead_letters(self, limit: int = 100) -> list[GenerateMemoriesOperation]:
        """Generations that failed for good, newest first, each with its last error."""
        await self._ready()
        return [await self._operation(r) for r in await self._jobs.dead_letters(limit)]

    # ------------------------------------------------------------------ ADK's memory service

    @override
    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's most relevant memories for `query`, as ADK `MemoryEntry`s. A blank query
        finds nothing (it must never hand a model the whole memory bank)."""
        if not isinstance(query, str) or not query.strip():
            user_scope(app_name, user_id)  # still validated
            return SearchMemoryResponse()
        results = await self.retrieve_memories(
            user_scope(app_name, user_id),
            search_query=query,
            top_k=self.config.retrieval.top_k,
        )
        return SearchMemoryResponse(memories=[to_memory_entry(r) for r in results])

    @override
    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Store each entry's text as a memory of the user (entry metadata kept; an entry's
        `custom_metadata["topics"]` becomes its topics). With `custom_metadata={"consolidate":
        True}` (extraction mode), the entries are consolidated into existing memories instead,
        in the background. Every text is redacted and judged by the guard first; one rejected
        entry raises `MemoryRejectedError` and nothing of the call is stored."""
        scope = user_scope(app_name, user_id)
        for entry in memories:
            if not isinstance(entry, MemoryEntry):
                raise InputValidationError("memories must be ADK MemoryEntry objects.")
        screened = await self._screen_all(
            [_entry_text(e) for e in memories], scope, "add_memory", direct=True
        )
        if custom_metadata and custom_metadata.get("consolidate"):
            texts = [s.fact for s in screened]
            for start in range(0, len(texts), MAX_DIRECT_FACTS):
                await self.generate_memories(
                    facts=texts[start : start + MAX_DIRECT_FACTS], scope=scope
                )
            return
        vectors = await self._embed([s.fact for s in screened], "document")
        ttl = self.config.ttl.for_create()
        batch = []
        for i, (entry, text) in enumerate(zip(memories, screened, strict=True)):
            metadata = {**(custom_metadata or {}), **entry.custom_metadata}
            topics = metadata.pop("topics", None) or []
            if entry.author:
                metadata.setdefault("author", entry.author)
            batch.append(
                await self._new_memory(
                    _entry_memory_id(scope, entry),
                    scope,
                    text,
                    embedding=vectors[i] if vectors else None,
                    ttl=ttl,
                    topics=topics if isinstance(topics, list) else [str(topics)],
                    metadata=metadata,
                )
            )
        store = await self._ready()
        await store.insert_many(batch, self._revision_ttl)

    @override
    async def add_session_to_memory(self, session: Session) -> None:
        """Remember the session: in extraction mode, enqueue generation from its new events (the
        turn never waits); in raw-events mode, one memory per event with text."""
        if not isinstance(session, Session):
            raise InputValidationError("session must be an ADK Session.")
        if self.llm is not None:
            await self.generate_memories(session=session)
            return
        await self.add_events_to_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            events=session.events,
            session_id=session.id,
        )

    @override
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
        not remembered (logged), one it quarantines is held for an operator."""
        scope = user_scope(app_name, user_id)
        if self.llm is not None:
            await self.generate_memories(
                contents=list(events),
                scope=scope,
                session_id=session_id,
                metadata=dict(custom_metadata or {}),
            )
            return
        key = scope_key(scope)
        picked = [(e, _event_text(e)[:MAX_FACT_LENGTH]) for e in events if not e.partial]
        picked = [(e, text) for e, text in picked if text]
        screened = await self._screen_all([t for _, t in picked], scope, "raw_event", direct=False)
        refused = [s.verdict.rule for s in screened if s.rejected]
        if refused:
            logger.warning("The memory guard refused %d event(s): %s", len(refused), refused)
        picked = [(e, s) for (e, _), s in zip(picked, screened, strict=True) if not s.rejected]
        vectors = await self._embed([s.fact for _, s in picked], "document")
        ttl = self.config.ttl.for_create()
        batch = []
        for i, (event, text) in enumerate(picked):
            metadata = {
                **(custom_metadata or {}),
                "author": event.author,
                "event_id": event.id,
                "invocation_id": event.invocation_id,
            }
            if session_id:
                metadata["session_id"] = session_id
            batch.append(
                await self._new_memory(
                    str(uuid.uuid5(_RAW_EVENT_NAMESPACE, f"{key}\n{session_id}\n{event.id}")),
                    scope,
                    text,
                    embedding=vectors[i] if vectors else None,
                    ttl=ttl,
                    metadata=metadata,
                    source_type=SourceType.USER_INPUT
                    if event.author == "user"
                    else SourceType.AGENT,
                    source_session_id=session_id,
                    source_event_ids=[event.id],
                    create_time=datetime.fromtimestamp(event.timestamp, timezone.utc),
                )
            )
        store = await self._ready()
        await store.insert_many(batch, self._revision_ttl)

    async def close(self) -> None:
        """Stop the in-process worker and release the connection pool (a shared engine is left
        to its owner). Queued generations stay queued for the next worker."""
        await self.worker.stop()
        await self.database.close()

    async def __aenter__(self) -> PostgresMemoryService:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _entry_memory_id(scope: Scope, entry: MemoryEntry) -> str:
    """A `MemoryEntry` with an id becomes the same memory however often it is added, and never
    collides with another scope's memory (the id is derived per scope); one without gets a new
    id."""
    if not entry.id:
        return str(uuid.uuid4())
    return str(uuid.uuid5(_ENTRY_NAMESPACE, f"{scope_key(scope)}\n{entry.id}"))
