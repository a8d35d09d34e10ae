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
from ..db.engine import DEFAULT_SCHEMA, Database
from .embeddings import Embedder
from .generation import resolve_llm
from .generator import Generator, contents_payload, facts_payload, session_payload
from .jobs import ClaimedJob, JobQueue, JobRecord, Worker
from .models import (
    GeneratedMemory,
    GenerateMemoriesOperation,
    Memory,
    MemoryAction,
    MemoryFilter,
    MemoryPage,
    MemoryRevision,
    RetrievedMemory,
    SourceType,
)
from .scope import Scope, scope_key, user_scope, validate_scope
from .store import MemoryChange, MemoryStore, NewMemory

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
    return MemoryEntry(
        id=memory.id,
        content=types.Content(role="user", parts=[types.Part(text=memory.fact)]),
        author=memory.metadata.get("author"),
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
        engine: AsyncEngine | None = None,
        schema: str = DEFAULT_SCHEMA,
        data_dir: str | None = None,
        auto_migrate: bool = True,
        engine_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if embedder is not None and not isinstance(embedder, Embedder):
            raise InputValidationError("embedder must have `dimensions` and `embed(texts)`.")
        self.config = config or MemoryBankConfig()
        self.embedder = embedder
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
        return Worker(self._jobs, self._generate, prepare=self._ready, **options)

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
        """Store a fact as a memory of `scope`, as given (no consolidation)."""
        checked = validate_scope(scope)
        new = await self._new_memory(
            str(uuid.uuid4()),
            checked,
            fact,
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
        return memory

    async def _new_memory(
        self,
        memory_id: str,
        scope: Scope,
        fact: str,
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
        """Validate one memory's fields (and embed its fact unless a vector is given)."""
        fact = _check_fact(fact)
        if embedding is None:
            vectors = await self._embed([fact], "document")
            embedding = vectors[0] if vectors else None
        return NewMemory(
            id=memory_id,
            scope_key=scope_key(scope),
            scope=scope,
            fact=fact,
            topics=_check_topics(topics) or [],
            metadata=_check_mapping("metadata", metadata) or {},
            content=_check_mapping("content", content),
            importance=_check_unit("importance", importance),
            confidence=_check_unit("confidence", confidence),
            source_type=SourceType(source_type),
            source_session_id=source_session_id,
            source_event_ids=list(source_event_ids),
            embedding=embedding,
            create_time=create_time,
            ttl_seconds=_seconds(ttl),
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

        The expiry is reset to now + `ttl`, else now + the configured default TTL, else kept.

        Raises:
          LookupError: no live memory with this id in this scope.
        """
        checked = validate_scope(scope)
        memory_id = _check_id(memory_id)
        if fact is not None:
            fact = _check_fact(fact)
        vectors = await self._embed([fact], "document") if fact is not None else None
        change = MemoryChange(
            fact=fact,
            topics=_check_topics(topics),
            metadata=_check_mapping("metadata", metadata),
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
        """Delete one memory, or with no `memory_id` all of the scope's, keeping revisions.

        ADK's form names the user (`app_name`, `user_id`); Memory Bank's names the `scope`. A
        memory of another scope is never touched, even with its id.
        """
        await self._delete(self._scope_of(app_name, user_id, scope), memory_id)

    async def _delete(self, scope: Scope, memory_id: str | None) -> int:
        checked_id = _check_id(memory_id) if memory_id is not None else None
        store = await self._ready()
        return await store.delete(scope_key(scope), checked_id, None, self._revision_ttl)

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
        """Forget a scope entirely: its memories and their revisions. Returns rows deleted."""
        checked = validate_scope(scope)
        store = await self._ready()
        return await store.purge(scope_key(checked))

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
        revisions, in batches; `progress` gets the running count of memories. Returns it."""
        if batch_size < 1:
            raise InputValidationError("batch_size must be at least 1.")
        store = await self._ready()
        total = 0
        while True:
            memories, revisions = await store.sweep(batch_size, self._revision_ttl)
            total += memories
            if progress is not None:
                progress(total)
            if memories < batch_size and revisions < batch_size:
                return total

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
        if session is not None:
            events = [
                e
                for e in session.events
                if (start_time is None or e.timestamp >= start_time.timestamp())
                and (end_time is None or e.timestamp < end_time.timestamp())
            ]
            payload = session_payload(session.id, events, options)
        elif contents is not None:
            payload = contents_payload(list(contents), session_id, options)
        else:
            texts = [_check_fact(f) for f in facts or ()]
            if not 1 <= len(texts) <= MAX_DIRECT_FACTS:
                raise InputValidationError(f"Pass 1 to {MAX_DIRECT_FACTS} facts.")
            payload = facts_payload(texts, topic or "", options)
        await self._ready()
        job_id = await self._jobs.enqueue(
            scope_key(checked), checked, payload, self.config.generation.max_attempts
        )
        if self._run_worker:
            self.worker.start()
        operation = GenerateMemoriesOperation(id=job_id)
        return await self.wait(operation) if wait_for_completion else operation

    async def get_operation(self, operation_id: str) -> GenerateMemoriesOperation | None:
        """A generation's current state, by id (None if there is no such operation)."""
        record = await self._jobs.get(_check_id(operation_id))
        return None if record is None else _operation(record)

    async def wait(
        self, operation: GenerateMemoriesOperation, *, timeout: float | None = None
    ) -> GenerateMemoriesOperation:
        """Block until the operation is done (or `timeout` seconds pass: TimeoutError)."""

        async def poll() -> GenerateMemoriesOperation:
            delay = 0.02
            while True:
                current = await self.get_operation(operation.id)
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
        return [_operation(r) for r in await self._jobs.dead_letters(limit)]

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
        in the background."""
        scope = user_scope(app_name, user_id)
        if custom_metadata and custom_metadata.get("consolidate"):
            texts = [_check_fact(_entry_text(e)) for e in memories]
            for start in range(0, len(texts), MAX_DIRECT_FACTS):
                await self.generate_memories(
                    facts=texts[start : start + MAX_DIRECT_FACTS], scope=scope
                )
            return
        texts: list[str] = []
        for entry in memories:
            if not isinstance(entry, MemoryEntry):
                raise InputValidationError("memories must be ADK MemoryEntry objects.")
            texts.append(_check_fact(_entry_text(entry)))
        vectors = await self._embed(texts, "document")
        ttl = self.config.ttl.for_create()
        batch = []
        for i, (entry, text) in enumerate(zip(memories, texts, strict=True)):
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
        and then deleted, is skipped)."""
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
        picked = [(e, _event_text(e)) for e in events if not e.partial]
        picked = [(e, text) for e, text in picked if text]
        vectors = await self._embed([text for _, text in picked], "document")
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
                    text[:MAX_FACT_LENGTH],
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


def _operation(record: JobRecord) -> GenerateMemoriesOperation:
    generated = [
        GeneratedMemory(memory=Memory.model_validate(g["memory"]), action=MemoryAction(g["action"]))
        for g in record.result or []
    ]
    return GenerateMemoriesOperation(
        id=record.id,
        done=record.status in ("done", "dead"),
        error=record.error if record.status == "dead" else None,
        generated_memories=generated,
    )


def _entry_memory_id(scope: Scope, entry: MemoryEntry) -> str:
    """A `MemoryEntry` with an id becomes the same memory however often it is added, and never
    collides with another scope's memory (the id is derived per scope); one without gets a new
    id."""
    if not entry.id:
        return str(uuid.uuid4())
    return str(uuid.uuid5(_ENTRY_NAMESPACE, f"{scope_key(scope)}\n{entry.id}"))
