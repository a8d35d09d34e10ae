"""PostgresMemoryService: ADK's `BaseMemoryService` with Memory Bank-style memory management.

Owns: the service's public face: its constructor (the database settings, then the components
`building.py` wires from them), the names of its API (each a one-line delegate to the
component that owns it, with that method's signature and docstring: see the class docstring),
ADK's `BaseMemoryService` contract, and its lifetime (the in-process worker and the connection
pool, `close`). With no model configured, sessions are remembered as raw events (one memory
per event with text, never twice). It holds no logic of its own, never writes SQL (the stores
do) and never imports the session service: it reads sessions only through ADK's `Session` and
`Event` types.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from google.adk.memory.base_memory_service import BaseMemoryService
from google.adk.models.base_llm import BaseLlm
from sqlalchemy.ext.asyncio import AsyncEngine
from typing_extensions import Self, override

from ...config import AppMemoryConfig, DatabaseTimeouts, MemoryBankConfig
from ...db.engine import DEFAULT_SCHEMA
from ...redaction import Redactor
from ...settings.database import constructor_database
from ...settings.uri import announce, check_uri_alone
from ..app_config import UNSHARED, parse_memory_config
from ..embeddings import Embedder, GeminiEmbedder
from ..generation import resolve_llm
from ..guard import MemoryGuard
from ..jobs import Worker
from ..policy.names import guard_name, redactor_name
from ..policy.screen import FactScreen
from .audit import Audit
from .building import components, parts
from .core import Embedding, Gate
from .direct import DirectWrites
from .ingestion import Ingestion
from .inspection import Inspection
from .memories import Memories
from .modes import Generation
from .operations import Operations
from .privacy import Privacy
from .procedures import Procedures
from .profiles import Profiles
from .retrieval import Retrieval
from .uri import memory_settings_from_uri

_P = ParamSpec("_P")
_R = TypeVar("_R")
_Method = Callable[Concatenate[Any, _P], Coroutine[Any, Any, _R]]


def delegate(component: str, method: _Method[_P, _R]) -> _Method[_P, _R]:
    """A method of the service that calls `method` of its `component` attribute, with that
    method's signature and docstring (so `help()` and type checkers see the real API). One
    line per public name keeps the service a face: the work is the component's."""
    name = method.__name__
    signature = inspect.signature(method)

    async def call(self: Any, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        part = getattr(self, component)  # its class's method: never a subclass's re-entry
        try:
            return cast(_R, await getattr(type(part), name)(part, *args, **kwargs))
        except TypeError:
            _check_call(signature, self, name, args, kwargs)
            raise

    call.delegated_to = component  # type: ignore[attr-defined]
    return cast(_Method[_P, _R], functools.wraps(method)(call))


def _check_call(
    signature: inspect.Signature,
    service: Any,
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    """A call that does not fit the method's signature is Python's `TypeError`, naming the
    service's method (the user's call) instead of the component's that Python raised it for."""
    try:
        signature.bind(service, *args, **kwargs)
    except TypeError as wrong:
        raise TypeError(f"{type(service).__name__}.{name}(): {wrong}") from None


def route_overrides(service: PostgresMemoryService) -> None:
    """Make a subclass's override of a public method the one the other methods call too (its
    `retrieve_memories` is what `search_memory` ranks with, its `generate_memories` what ADK's
    add_* calls enqueue with, its `is_opted_out` what every write asks), as when the service
    was one class: the override is set on the component that owns the name, which the
    components call by that name; the delegate itself calls the component's class, so the
    override's `super()` reaches the real method."""
    for name, face in vars(PostgresMemoryService).items():
        component = getattr(face, "delegated_to", None)
        if component is not None and getattr(type(service), name) is not face:
            setattr(getattr(service, component), name, getattr(service, name))


class PostgresMemoryService(BaseMemoryService):
    """Long-term memory on PostgreSQL + pgvector, scoped exactly, ranked by hybrid search.

    Args:
      database_url: `postgresql://...`; None and no engine: the embedded PostgreSQL.
      embedder: makes vectors for facts and queries (e.g. `GeminiEmbedder()`); None: full-text
        search only (no API key needed).
      config: TTLs, retrieval weights, topics and generation settings (`MemoryBankConfig`, or
        a mapping of its fields or of Memory Bank's own configuration JSON).
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

    Components (each built with only the parts it uses: `building.py`); every method below is
    one of theirs, under the name it has always had:
      generation: the mode, chosen once: `modes.Generation` with a model (`generate_memories`;
        ADK's add_* calls enqueue generation) or `modes.NoGeneration` (generation refused with
        `InputValidationError`; sessions remembered as raw events).
      writes: direct writes (`direct.DirectWrites`): `create_memory(ies)`, ADK's `add_memory`,
        `add_events_to_memory`, `add_session_to_memory`, through the one write path
        (`writes.Writer`: screen, embed, new memory, insert).
      memories: one scope's memories by id (`memories.Memories`): get, list, update, delete,
        revisions, `revoke_source`.
      retrieval: search (`retrieval.Retrieval`): `retrieve_memories`, ADK's `search_memory`,
        `reindex_text`.
      operations: generations read back and app configurations (`operations.Operations`).
      procedures: procedural memory (`procedures.Procedures`).
      privacy: purge, erasure, sweeps, pruning and the quarantine (`privacy.Privacy`).
      consent: the user's opt-out and the refusals every write takes (`core.Gate`).
      profiles: structured profiles (`profiles.Profiles`).
      inspection: an operator's read-outs (`inspection.Inspection`).
      audit: the audit of operator access (`audit.Audit`): `record_access`, `list_access`.
      ingestion: Memory Bank's IngestEvents (`ingestion.Ingestion`): `ingest_events`, and
        `flush_due_streams`, which the worker runs when idle.
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        uri: str | None = None,
        embedder: Embedder | None = None,
        config: MemoryBankConfig | Mapping[str, Any] | None = None,
        llm: str | BaseLlm | None = None,
        run_worker: bool = True,
        redactor: Redactor | None = None,
        guard: MemoryGuard | None = None,
        publish_config: bool | None = None,
        engine: AsyncEngine | None = None,
        db_url: str | None = None,
        db_engine: AsyncEngine | None = None,
        schema: str = DEFAULT_SCHEMA,
        data_dir: str | None = None,
        auto_migrate: bool = True,
        engine_kwargs: dict[str, Any] | None = None,
        timeouts: DatabaseTimeouts | None = None,
        read_url: str | None = None,
        read_engine: AsyncEngine | None = None,
        **adk_arguments: Any,
    ) -> None:
        # -- database settings (adk_memory.settings: every spelling through one resolver) --
        if uri is not None:
            check_uri_alone(PostgresMemoryService.__init__, locals())
            given = memory_settings_from_uri(uri, None, adk_arguments)
            embedder, config, llm = given.embedder, given.config, given.llm
            redactor, run_worker = given.redactor, given.run_worker
            publish_config, database = given.publish_config, given.database
        else:
            database = constructor_database(self, locals(), adk_arguments)
        self.database = database.database()
        # -- end database settings --
        self._build(embedder, config, llm, redactor, guard, publish_config, run_worker)
        if uri is not None:
            announce(self)  # once built: a failed construction is never collected

    def _build(
        self,
        embedder: Embedder | None,
        config: MemoryBankConfig | Mapping[str, Any] | None,
        llm: str | BaseLlm | None,
        redactor: Redactor | None,
        guard: MemoryGuard | None,
        publish_config: bool | None,
        run_worker: bool,
    ) -> None:
        """Everything but the database, from `self.database` and the other arguments."""
        if isinstance(config, Mapping):  # ours or Memory Bank's JSON
            config = parse_memory_config(config)
        self.config = config or MemoryBankConfig()
        model = self.config.retrieval.embedding_model
        if embedder is None and model is not None:
            embedder = GeminiEmbedder(model)
        self._embedding = Embedding(embedder)
        screen = FactScreen(redactor, guard)
        self.llm = resolve_llm(llm) if llm is not None else None
        shared = AppMemoryConfig.of(
            self.config, guard=guard_name(screen.guard), redact=redactor_name(screen.redactor)
        )
        if publish_config is None:
            publish_config = config is not None and shared != UNSHARED
        self._parts = parts(
            self.database, self.config, screen, self._embedding, llm=self.llm, shared=shared
        )
        self.worker = self._parts.new_worker()
        built = components(
            self.database,
            self._parts,
            self.worker if run_worker else None,
            llm=self.llm,
            shared=shared,
            publish_config=publish_config,
        )
        self.generation = built.generation
        self.writes = built.writes
        self.memories = built.memories
        self.retrieval = built.retrieval
        self.operations = built.operations
        self.procedures = built.procedures
        self.privacy = built.privacy
        self.consent = self._parts.gate
        self.profiles = built.profiles
        self.inspection = built.inspection
        self.audit = built.audit
        self.ingestion = built.ingestion
        self.worker.when_idle(self.ingestion.flush_due)
        route_overrides(self)

    @property
    def embedder(self) -> Embedder | None:
        """The embedder (None: full-text search only); replacing it applies to every part."""
        return self._embedding.embedder

    @embedder.setter
    def embedder(self, embedder: Embedder | None) -> None:
        self._embedding.embedder = embedder

    @property
    def redactor(self) -> Redactor | None:
        """The redactor every write and model input of this service goes through."""
        return self._parts.screen.redactor

    @property
    def guard(self) -> MemoryGuard:
        """The guard that judges every fact before it is written."""
        return self._parts.screen.guard

    def make_worker(self, **options: Any) -> Worker:
        """A worker for this database's generation jobs (`Worker` options: lease,
        poll_interval, concurrency), which also flushes IngestEvents streams a time rule made
        due when it finds no job; the in-process one is `self.worker`."""
        worker = self._parts.new_worker(**options)
        worker.when_idle(self.ingestion.flush_due)
        return worker

    async def close(self) -> None:
        """Stop the in-process worker and release the connection pool (a shared engine is left
        to its owner). Queued generations stay queued for the next worker."""
        await self.worker.stop()
        await self.database.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ADK's memory service (`BaseMemoryService`)
    add_session_to_memory = override(delegate("writes", DirectWrites.add_session_to_memory))
    add_events_to_memory = override(delegate("writes", DirectWrites.add_events_to_memory))
    add_memory = override(delegate("writes", DirectWrites.add_memory))
    search_memory = override(delegate("retrieval", Retrieval.search_memory))
    delete_memory = override(delegate("memories", Memories.delete_memory))

    # Memory Bank's API: memories
    create_memory = delegate("writes", DirectWrites.create_memory)
    create_memories = delegate("writes", DirectWrites.create_memories)
    get_memory = delegate("memories", Memories.get_memory)
    get_memories = delegate("memories", Memories.get_memories)
    list_memories = delegate("memories", Memories.list_memories)
    update_memory = delegate("memories", Memories.update_memory)
    list_revisions = delegate("memories", Memories.list_revisions)
    get_revision = delegate("memories", Memories.get_revision)
    rollback_memory = delegate("memories", Memories.rollback_memory)
    purge_memories = delegate("memories", Memories.purge_memories)
    import_revisions = delegate("memories", Memories.import_revisions)
    revoke_source = delegate("memories", Memories.revoke_source)
    retrieve_memories = delegate("retrieval", Retrieval.retrieve_memories)
    reindex_text = delegate("retrieval", Retrieval.reindex_text)

    # generation and its operations
    generate_memories = delegate("generation", Generation.generate_memories)
    get_operation = delegate("operations", Operations.get_operation)
    ingest_events = delegate("ingestion", Ingestion.ingest_events)
    flush_due_streams = delegate("ingestion", Ingestion.flush_due)
    wait = delegate("operations", Operations.wait)
    processed_until = delegate("operations", Operations.processed_until)
    push_config = delegate("operations", Operations.push_config)
    app_config = delegate("operations", Operations.app_config)
    dead_letters = delegate("operations", Operations.dead_letters)

    # procedural memory
    learn_procedure = delegate("procedures", Procedures.learn_procedure)
    retrieve_procedures = delegate("procedures", Procedures.retrieve_procedures)
    procedure_revisions = delegate("procedures", Procedures.procedure_revisions)
    delete_procedure = delegate("procedures", Procedures.delete_procedure)

    # consent and privacy
    set_opt_out = delegate("consent", Gate.set_opt_out)
    is_opted_out = delegate("consent", Gate.is_opted_out)
    purge = delegate("privacy", Privacy.purge)
    erase_user = delegate("privacy", Privacy.erase_user)
    begin_erasure = delegate("privacy", Privacy.begin_erasure)
    count_erasure = delegate("privacy", Privacy.count_erasure)
    finish_erasure = delegate("privacy", Privacy.finish_erasure)
    erased_among = delegate("privacy", Privacy.erased_among)
    lift_tombstones = delegate("privacy", Privacy.lift_tombstones)
    sweep_expired = delegate("privacy", Privacy.sweep_expired)
    sweep_jobs = delegate("privacy", Privacy.sweep_jobs)
    prune_memories = delegate("privacy", Privacy.prune_memories)
    list_quarantined = delegate("privacy", Privacy.list_quarantined)
    approve_quarantined = delegate("privacy", Privacy.approve_quarantined)
    reject_quarantined = delegate("privacy", Privacy.reject_quarantined)

    # structured profiles, and an operator's read-outs
    retrieve_profiles = delegate("profiles", Profiles.retrieve_profiles)
    list_profile_revisions = delegate("profiles", Profiles.list_profile_revisions)
    import_profile = delegate("profiles", Profiles.import_profile)
    list_scopes = delegate("inspection", Inspection.list_scopes)
    list_operations = delegate("inspection", Inspection.list_operations)
    retry_operation = delegate("inspection", Inspection.retry_operation)

    # the audit of operator access
    record_access = delegate("audit", Audit.record_access)
    list_access = delegate("audit", Audit.list_access)
