"""PostgresMemoryService: ADK's `BaseMemoryService` with Memory Bank-style memory management.

Owns: the memory API (create / get / list / update / delete / revisions / retrieve) and ADK's
calls (add_session_to_memory / add_events_to_memory / add_memory / search_memory /
delete_memory): scope validation, TTLs, every fact redacted and guarded before it is written
(`screen.py`), and the mapping to ADK's `MemoryEntry`. Generation operations, procedural
memory, the privacy operations (purge, erase_user, sweeps, quarantine) and profile reads are
its other parts (`operations.py`, `procedures.py`, `privacy.py`, `profiles.py`), with an
operator's read-outs in `inspection.py`, on a shared core (`core.py`). With no model
configured, sessions are remembered as raw events (one memory per event with text, never
twice). It never writes SQL itself (the store does) and never imports the session service: it
reads sessions only through ADK's `Session` and `Event` types.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from google.adk.events.event import Event
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from typing_extensions import override

from ..db.batches import in_batches
from ..errors import InputValidationError, NotFoundError, OptedOutError
from ..telemetry import annotate, traced
from .checks import (
    MAX_DIRECT_FACTS,
    MAX_FACT_LENGTH,
    MAX_TOP_K,
    check_count,
    check_fact,
    check_filter,
    check_id,
    check_key,
    check_mapping,
    check_query,
    check_session_id,
    check_time,
    check_timestamp,
    check_topics,
    check_unit,
    decode_token,
    encode_token,
    seconds,
)
from .entries import (
    entry_memory_id,
    entry_text,
    entry_time,
    event_text,
    keyed_ids,
    raw_event_memory_id,
    to_memory_entry,
)
from .inspection import InspectionOperations
from .models import (
    Memory,
    MemoryFact,
    MemoryFilter,
    MemoryPage,
    MemoryRevision,
    PastRevision,
    RetrievedMemory,
    SourceType,
)
from .privacy import PrivacyOperations
from .procedure_rule import PUBLIC, viewer_key
from .procedure_support import AUDIENCE
from .procedures import ProcedureOperations
from .profiles import MemoryProfile, ProfileOperations
from .scope import (
    Scope,
    app_scope,
    kind_key,
    read_for,
    scope_key,
    user_scope,
    validate_scope,
)
from .screen import MemoryRejectedError
from .store import MemoryChange, Search
from .temporal import find_window
from .trust import with_effective

logger = logging.getLogger(__name__)


@contextmanager
def _about_item(index: int | None) -> Iterator[None]:
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


class PostgresMemoryService(
    ProcedureOperations,
    PrivacyOperations,
    ProfileOperations,
    InspectionOperations,
    BaseMemoryService,
):
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
        quarantine); None: `DefaultMemoryGuard()`. To switch it off, pass `NoGuard()`.
      publish_config: share this service's configuration (with its guard and redactor by name,
        `AppMemoryConfig`) as the app's, so every worker generates the app's memories with it:
        published for each app on its first generation, which then names that version. None
        (default): when `config` is given and is not the default. Off, a generation names the
        app's latest stored version (`adk-memory config push`), if any; else the worker's own.
      engine: an existing SQLAlchemy `AsyncEngine` (e.g. shared with `PostgresSessionService`).
      db_url, db_engine, schema, data_dir, auto_migrate, engine_kwargs, timeouts: as for
        `PostgresSessionService`.
      read_url, read_engine: a read replica of the database: `retrieve_memories`,
        `search_memory`, `list_memories` and `list_revisions` read there (what a write just
        stored may show a moment later); writes, `get_memory`, generation and the job queue use
        the primary. As for `PostgresSessionService`, an unreachable replica is skipped for a
        while and one whose schema is not the primary's is a `SchemaVersionError`.
      uri: instead of all of the above, a memory service URI (`postgresql://...?model=...`,
        `adk-memory://`; see `adk_memory.adk.services`): its query parameters are the options,
        the `ADK_MEMORY_*` environment fills those it leaves out. ADK's `services.yaml`
        constructs services this way, so it can name this class.
      **adk_arguments: without `uri`, SQLAlchemy engine options (`pool_size=5`, ...), as for
        `PostgresSessionService`; with `uri`, what ADK passes beside it: `agents_dir` (ignored,
        as by the registered schemes).
    """

    # ------------------------------------------------------------------ Memory Bank-style API

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
    ) -> Memory:
        """Store a fact as a memory of `scope`, as given (no consolidation): redacted, then
        judged by the guard. A quarantined fact is stored but not live until an operator
        approves it: the memory returned says so (`quarantined` True, `guard` the rule id and
        reason) and a WARNING is logged with the rule id. It is a result, not an error, because
        the fact was stored (an operator may approve it); check `memory.quarantined`.

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
        [memory] = await self._create_all([item], scope, itemised=False)
        return memory

    @traced("memory.create_memories")
    async def create_memories(
        self, facts: Sequence[str | MemoryFact], scope: Mapping[str, str]
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
        holds another fact).
        """
        return await self._create_all(facts, scope, itemised=True)

    async def _create_all(
        self, items: Sequence[str | MemoryFact], scope: Mapping[str, str], *, itemised: bool
    ) -> list[Memory]:
        """`create_memories`; `itemised`: errors name the item they are about."""
        checked = validate_scope(scope)
        await self._refuse_opted_out(checked)
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise InputValidationError("facts must be a list of strings or MemoryFact objects.")
        facts = [MemoryFact(item) if isinstance(item, str) else item for item in items]
        texts = []
        for index, item in enumerate(facts):
            with _about_item(index if itemised else None):
                if not isinstance(item, MemoryFact):
                    raise InputValidationError("Each fact must be a string or a MemoryFact.")
                texts.append(check_fact(item.fact))
        screened = await self._screen.admit_all(texts, checked, "api", itemised=itemised)
        vectors = await self._embed([s.fact for s in screened], "document")
        default_ttl = self.config.ttl.for_create()
        key = scope_key(checked)
        batch = []
        for index, (item, kept) in enumerate(zip(facts, screened, strict=True)):
            with _about_item(index if itemised else None):
                fact_key = check_key(item.key)
                memory_id, revision_id = (
                    keyed_ids(checked, fact_key, kept.fact)
                    if fact_key is not None
                    else (str(uuid.uuid4()), None)
                )
                new = await self._new_memory(
                    memory_id,
                    checked,
                    kept,
                    key=key,
                    embedding=vectors[index] if vectors else None,
                    ttl=item.ttl if item.ttl is not None else default_ttl,
                    topics=item.topics,
                    metadata=item.metadata,
                    content=item.content,
                    importance=item.importance,
                    confidence=item.confidence,
                    source_type=item.source_type,
                    create_time=item.create_time,
                    update_time=item.update_time or item.create_time,
                )
                batch.append(new if revision_id is None else replace(new, revision_id=revision_id))
        store = await self._ready()
        created = {m.id: m for m in await store.insert_many(batch, self._revision_ttl)}
        writes: dict[str, str] = {}  # a key given twice in one call: its first fact is written
        for new in batch:
            writes.setdefault(new.id, new.revision_id)
        memories = []
        for item, new, kept in zip(facts, batch, screened, strict=True):
            memory = created.get(new.id)
            if item.key is not None and (memory is None or writes[new.id] != new.revision_id):
                continue  # its memory was deleted, or the key names another fact: left out
            if memory is None:  # a fresh id: only a delete between a commit and its replay
                raise NotFoundError(
                    f"Memory {new.id} was deleted before its creation was confirmed."
                )
            memory = self._believed(memory)
            memories.append(
                memory.model_copy(update={"quarantined": True, "guard": kept.guarded})
                if kept.quarantined
                else memory
            )
        return memories

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
        filter: MemoryFilter | None = None,
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
        filter = check_filter(filter)
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
        memory_id = check_id(memory_id)
        await self._refuse_opted_out(checked)
        if fact is not None:
            screened = await self._screen.admit(check_fact(fact), checked, "api")
            if screened.quarantined:
                raise MemoryRejectedError(screened.verdict)
            fact = screened.fact
        vectors = await self._embed([fact], "document") if fact is not None else None
        change = MemoryChange(
            fact=fact,
            topics=self._screen.topics(check_topics(topics)),
            metadata=self._screen.json(check_mapping("metadata", metadata)),
            importance=check_unit("importance", importance),
            confidence=check_unit("confidence", confidence),
            embedding=vectors[0] if vectors else None,
            ttl_seconds=seconds(ttl if ttl is not None else self.config.ttl.for_update()),
            labels=dict(labels or {}),
        )
        store = await self._ready()
        memory = await store.update(memory_id, scope_key(checked), change, self._revision_ttl)
        if memory is None:
            raise NotFoundError(f"No memory {memory_id} in scope {checked}.")
        return self._believed(memory)

    @override
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
        checked = self._scope_of(app_name, user_id, scope)
        if not memory_id:
            logger.warning(
                "delete_memory without a memory_id deletes nothing; use purge(scope) to forget "
                "a whole scope."
            )
            return
        store = await self._ready()
        await store.delete(scope_key(checked), check_id(memory_id), None, self._revision_ttl)

    @traced("memory.retrieve_profiles")
    async def retrieve_profiles(
        self,
        *,
        app_name: str | None = None,
        user_id: str | None = None,
        scope: Mapping[str, str] | None = None,
    ) -> list[MemoryProfile]:
        """The structured profiles of the user (`app_name`, `user_id`: the call and return shape
        of ADK's `VertexAiMemoryBankService.retrieve_profiles`) or of a `scope`: one
        `MemoryProfile` (schema id, field values) per schema with a field set, by schema id.
        One lookup by the scope's key, no search; expired fields are left out. Generation fills
        them from `MemoryBankConfig.structured_memory_configs`."""
        return await self._profiles_of(self._scope_of(app_name, user_id, scope))

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

    @traced("memory.list_revisions")
    async def list_revisions(
        self, memory_id: str, scope: Mapping[str, str]
    ) -> list[MemoryRevision]:
        """A memory's history, oldest first; still there after the memory was deleted."""
        checked = validate_scope(scope)
        store = await self._ready()
        return await store.revisions(
            check_id(memory_id), scope_key(checked), replica=read_for(checked)
        )

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
        await self._refuse_opted_out(checked)
        store = await self._ready()
        return await store.import_revisions(scope_key(checked), memory_ids, ids, kept)

    @traced("memory.retrieve_memories")
    async def retrieve_memories(
        self,
        scope: Mapping[str, str],
        *,
        search_query: str | None = None,
        top_k: int = 3,
        filter: MemoryFilter | None = None,
        now: datetime | None = None,
    ) -> list[RetrievedMemory]:
        """Memories of exactly `scope`. With a query: the `top_k` most relevant, best first
        (hybrid vector + full-text, and the memories of a time the query names, blended with
        recency, importance and effective confidence). Without: all of them, newest first
        (score 0). `now`: what relative times in the query ("last week") are read against, in
        its timezone (naive: UTC); default the clock, in UTC."""
        checked = validate_scope(scope)
        check_count("top_k", top_k, MAX_TOP_K)
        search_query = check_query(search_query)
        filter = check_filter(filter)
        if self.config.retrieval.opt_out_hides:
            await self._refuse_opted_out(checked)
        if search_query is None or not search_query.strip():
            return [
                RetrievedMemory(memory=m, score=0.0)
                for m in await self._all_memories(checked, filter)
            ]
        check_time("now", now)
        retrieval = self.config.retrieval
        if retrieval.mode == "vector" and self.embedder is None:
            raise InputValidationError("Vector-only retrieval needs an embedder.")
        # The query is often the user's own message: redacted before the embedding model sees
        # it (and so it matches the redacted facts it should find).
        redacted = self._screen.text(search_query)
        vectors = await self._embed([redacted], "query") if retrieval.mode != "text" else None
        store = await self._ready()
        search = self._search(
            checked,
            search_query,
            redacted,
            vectors[0] if vectors else None,
            top_k=top_k,
            flt=filter,
            now=now or datetime.now(timezone.utc),
        )
        annotate(
            "retrieval",
            mode=retrieval.mode,
            candidates=search.candidates,
            top_k=top_k,
            time_window=search.window is not None,
        )
        rows = await store.retrieve(search, replica=read_for(checked))
        return [RetrievedMemory(memory=self._believed(m), distance=d, score=s) for m, d, s in rows]

    @traced("memory.retrieve_procedures")
    async def retrieve_procedures(
        self, app_name: str, user_id: str, *, search_query: str, top_k: int = 3
    ) -> list[RetrievedMemory]:
        """The `top_k` procedures most like `search_query` that `user_id` may see, best first:
        the app's public ones, as stored, and those the user's sessions support, masked for
        them (a word only another user gave is "…": `procedure_rule`)."""
        scope = user_scope(app_name, user_id)
        found: list[RetrievedMemory] = []
        for audience in (PUBLIC, viewer_key(scope["app_name"], scope["user_id"])):
            flt = MemoryFilter(memory_type="procedure", metadata={AUDIENCE: [audience]})
            found += await self.retrieve_memories(
                app_scope(app_name), search_query=search_query, top_k=top_k, filter=flt
            )
        best = sorted(found, key=lambda r: -r.score)[:top_k]
        seen = await self._as_seen_by(app_name, scope["user_id"], [r.memory for r in best])
        return [r.model_copy(update={"memory": seen[r.memory.id]}) for r in best]

    def _believed(self, memory: Memory) -> Memory:
        """`memory` with its effective confidence as of now, as every read returns it."""
        return with_effective(memory, self.config.trust, datetime.now(timezone.utc))

    def _search(
        self,
        scope: Scope,
        query: str,
        redacted: str,
        vector: Sequence[float] | None,
        *,
        top_k: int,
        flt: MemoryFilter | None,
        now: datetime,
    ) -> Search:
        """The store's search for `query` under this service's retrieval settings: `redacted`
        is searched, the time `query` names (read before redaction, which may mask dates)
        is its window. No I/O: benchmarks build the statement the service runs with it."""
        retrieval = self.config.retrieval
        window = find_window(query, now) if retrieval.temporal_cues else None
        key, flt = kind_key(scope_key(scope), flt)
        return Search(
            scope_key=key,
            query_text=redacted,
            query_embedding=vector,
            top_k=top_k,
            candidates=max(retrieval.candidates, top_k),
            rrf_k=retrieval.rrf_k,
            weights=(
                retrieval.relevance_weight,
                retrieval.recency_weight,
                retrieval.importance_weight,
            ),
            half_life_seconds=retrieval.recency_half_life.total_seconds(),
            flt=flt,
            use_text=retrieval.mode != "vector",
            floors=(self._similarity_floor(), retrieval.min_text_relevance),
            window=(window.start, window.end) if window else None,
            confidence_weight=retrieval.confidence_weight,
            confidence_half_life_seconds=seconds(self.config.trust.confidence_half_life),
        )

    def _similarity_floor(self) -> float:
        """The configured cosine floor, else the embedder's own calibrated one, else none."""
        configured = self.config.retrieval.min_similarity
        if configured is not None:
            return configured
        calibrated = getattr(self.embedder, "similarity_floor", None)
        return -1.0 if calibrated is None else float(calibrated)

    @traced("memory.reindex_text")
    async def reindex_text(
        self, batch_size: int = 1000, *, progress: Callable[[int], None] | None = None
    ) -> int:
        """Rebuild every stored memory's full-text index in this service's form: run once after
        upgrading from a version that indexed text without normalisation and bigrams (those
        memories are otherwise found only by words typed exactly as stored, never in Chinese,
        Japanese or Thai), or after changing `text_search_language`. Runs in batches (one
        statement to read, one to write, each); safe to run again or alongside traffic.
        `progress` gets the running count. Returns how many memories were indexed
        (`adk-memory memories reindex` runs it)."""
        check_count("batch_size", batch_size, 10_000)
        store = await self._ready()
        after: str | None = None

        async def step(size: int) -> tuple[int, bool]:
            nonlocal after
            batch = await store.reindex_text(after, size)
            after = batch[-1] if batch else after
            return len(batch), len(batch) == size

        return await in_batches(step, batch_size, progress)

    async def _all_memories(self, scope: Scope, flt: MemoryFilter | None) -> list[Memory]:
        memories: list[Memory] = []
        token: str | None = None
        while True:
            page = await self.list_memories(scope, filter=flt, page_size=1000, page_token=token)
            memories.extend(page.memories)
            if page.next_page_token is None:
                return memories
            token = page.next_page_token

    # ------------------------------------------------------------------ ADK's memory service

    @override
    @traced("memory.search_memory")
    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's most relevant memories for `query`, as ADK `MemoryEntry`s. A blank query
        finds nothing (it must never hand a model the whole memory bank)."""
        if not isinstance(query, str) or not query.strip():
            user_scope(app_name, user_id)  # still validated
            return SearchMemoryResponse()
        try:
            results = await self.retrieve_memories(
                user_scope(app_name, user_id),
                search_query=query,
                top_k=self.config.retrieval.top_k,
            )
        except OptedOutError:  # `opt_out_hides`: the turn goes on without memories
            logger.info("No memories searched: the user opted out (opt_out_hides).")
            return SearchMemoryResponse()
        return SearchMemoryResponse(memories=[to_memory_entry(r) for r in results])

    @override
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
        await self._refuse_opted_out(scope)
        happened = [entry_time(i, e) for i, e in enumerate(memories)]
        screened = await self._screen_all(
            [entry_text(e) for e in memories], scope, "add_memory", direct=True
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
                    entry_memory_id(scope, entry),
                    scope,
                    text,
                    embedding=vectors[i] if vectors else None,
                    ttl=ttl,
                    topics=topics if isinstance(topics, list) else [str(topics)],
                    metadata=metadata,
                    create_time=happened[i],
                    update_time=happened[i],
                )
            )
        store = await self._ready()
        await store.insert_many(batch, self._revision_ttl)

    @override
    @traced("memory.add_session_to_memory")
    async def add_session_to_memory(self, session: Session) -> None:
        """Remember the session: in extraction mode, enqueue generation from its new events (the
        turn never waits); in raw-events mode, one memory per event with text. A session an
        erasure removed (an old session object replayed after its user was erased) is refused
        with `ErasedError`: nothing of it is remembered again."""
        if not isinstance(session, Session):
            raise InputValidationError("session must be an ADK Session.")
        if self.llm is not None:
            await self.generate_memories(session=session)
            return
        # The session's state may hold the user's opt-out key: it decides (and is recorded).
        await self._refuse_opted_out(user_scope(session.app_name, session.user_id), session.state)
        await self.add_events_to_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            events=session.events,
            session_id=session.id,
        )

    @override
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
        if session_id is not None:
            session_id = check_session_id(session_id)
            events = await self._refuse_erased_session(app_name, user_id, session_id, events)
        await self._refuse_opted_out(scope)
        if self.llm is not None:
            await self.generate_memories(
                contents=list(events),
                scope=scope,
                session_id=session_id,
                metadata=dict(custom_metadata or {}),
            )
            return
        key = scope_key(scope)
        picked = [(e, event_text(e)[:MAX_FACT_LENGTH]) for e in events if not e.partial]
        picked = [(e, text) for e, text in picked if text]
        screened = await self._screen_all([t for _, t in picked], scope, "raw_event", direct=False)
        kept = [(e, s) for (e, _), s in zip(picked, screened, strict=True) if not s.rejected]
        vectors = await self._embed([s.fact for _, s in kept], "document")
        ttl = self.config.ttl.for_create()
        batch = []
        for i, (event, screened_fact) in enumerate(kept):
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
                    raw_event_memory_id(key, session_id, event.id),
                    scope,
                    screened_fact,
                    embedding=vectors[i] if vectors else None,
                    ttl=ttl,
                    metadata=metadata,
                    source_type=SourceType.USER_INPUT
                    if event.author == "user"
                    else SourceType.AGENT,
                    source_session_id=session_id,
                    source_event_ids=[event.id],
                    create_time=check_timestamp("An event's timestamp", event.timestamp),
                )
            )
        store = await self._ready()
        await store.insert_many(batch, self._revision_ttl)
