"""The state every part of the memory service shares, and the steps all its writes take.

Owns: building the service's parts from its arguments (database handle, store, job queue,
generation pipeline, worker, the screen that redacts and guards facts), readiness (migrations
and the vector dimension, once), embedding, turning a screened fact into a `NewMemory`, and which
app configuration a job runs with (the version its enqueuer names: this service's own, published
for the app on first use, or the app's latest stored one; `app_config.py` stores them). The
service's API is split by concern over `PostgresMemoryService` (service.py: memories and ADK's
calls), `GenerationOperations` (operations.py) and `PrivacyOperations` (privacy.py), all on this
core. It never writes SQL itself (the store and the queue do).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.genai import types
from sqlalchemy.ext.asyncio import AsyncEngine
from typing_extensions import Self

from .._cache import LruCache
from ..config import AppMemoryConfig, DatabaseTimeouts, MemoryBankConfig
from ..db.arguments import connection_arguments
from ..db.engine import DEFAULT_SCHEMA, Database
from ..env import parse_redact
from ..errors import ErasedError, InputValidationError, OptedOutError
from ..redaction import Redactor
from ..telemetry import traced
from ..uri import announce, check_uri_alone, without_agents_dir
from .app_config import (
    UNSHARED,
    AppConfigError,
    AppConfigStore,
    guard_name,
    named_guard,
    redactor_name,
)
from .checks import check_fact, check_mapping, check_time, check_topics, check_unit, seconds
from .embeddings import Embedder
from .generation import resolve_llm
from .generation.llm import GenerationOutputError
from .generator import Generator
from .guard import MemoryGuard
from .jobs import ClaimedJob, JobQueue, Worker
from .models import SourceType
from .opt_out import OptOutStore, UserState, stated_wish
from .procedure_jobs import ProcedureGenerator
from .procedure_support import SupportStore
from .profile_store import ProfileStore
from .scope import Scope, quarantine_key, scope_key, user_scope
from .screen import FactScreen, Screened, guard_labels
from .store import MemoryStore, NewMemory
from .tombstones import Kind, Tombstones
from .uri import memory_arguments

logger = logging.getLogger(__name__)

_Said = TypeVar("_Said", bound=Event | types.Content)
"""A session's material: its events, or a direct request's contents."""


class MemoryServiceCore:
    """The shared state and write steps of `PostgresMemoryService` (its docstring lists the
    constructor's arguments)."""

    def __init__(
        self,
        database_url: str | None = None,
        *,
        uri: str | None = None,
        embedder: Embedder | None = None,
        config: MemoryBankConfig | None = None,
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
        if uri is not None:
            check_uri_alone(MemoryServiceCore.__init__, locals())
            unexpected = sorted(without_agents_dir(adk_arguments))
            if unexpected:
                raise InputValidationError(
                    f"Unexpected memory service arguments: {', '.join(unexpected)}."
                )
            MemoryServiceCore.__init__(self, **memory_arguments(uri, None))
            announce(self)
            return
        where = connection_arguments(
            database_url,
            engine,
            engine_kwargs,
            db_url=db_url,
            db_engine=db_engine,
            extra=adk_arguments,
            owner=type(self).__name__,
        )
        if embedder is not None and not isinstance(embedder, Embedder):
            raise InputValidationError("embedder must have `dimensions` and `embed(texts)`.")
        self._screen = FactScreen(redactor, guard)
        self.config = config or MemoryBankConfig()
        self.embedder = embedder
        self.database = Database(
            where.database_url,
            engine=where.engine,
            schema=schema,
            data_dir=data_dir,
            auto_migrate=auto_migrate,
            engine_kwargs=where.engine_kwargs,
            timeouts=timeouts,
            read_url=read_url,
            read_engine=read_engine,
        )
        self._store = MemoryStore(
            self.database, text_search_language=self.config.retrieval.text_search_language
        )
        self._profiles = ProfileStore(self.database)
        self._tombstones = Tombstones(self.database)
        self._support = SupportStore(self.database)
        self._opt_outs = OptOutStore(self.database)
        self._prepared = False
        self.llm = resolve_llm(llm) if llm is not None else None
        self._jobs = JobQueue(self.database)
        self._app_configs = AppConfigStore(self.database)
        self._shared = AppMemoryConfig.of(
            self.config, guard=guard_name(self.guard), redact=redactor_name(self.redactor)
        )
        if publish_config is None:
            publish_config = config is not None and self._shared != UNSHARED
        self._publish_config = publish_config
        self._published: LruCache[str, int] = LruCache(1024)
        """The version this service published, per app (once per app and process)."""
        self._generators: LruCache[tuple[str, int], Generator] = LruCache(64)
        """The generation pipeline of each (app, version) a job named: versions never change."""
        self._generator = (
            self._make_generator(self.llm, self.config, self._screen)
            if self.llm is not None
            else None
        )
        self._run_worker = run_worker
        self.worker = self.make_worker()

    @property
    def redactor(self) -> Redactor | None:
        """The redactor every write and model input of this service goes through."""
        return self._screen.redactor

    @property
    def guard(self) -> MemoryGuard:
        """The guard that judges every fact before it is written."""
        return self._screen.guard

    def make_worker(self, **options: Any) -> Worker:
        """A worker for this database's generation jobs (`Worker` options: lease,
        poll_interval, concurrency); the in-process one is `self.worker`."""
        options.setdefault("retry_base_delay", self.config.generation.retry_base_delay)
        return Worker(
            self._jobs, self._generate, prepare=self._ready, redact=self._screen.text, **options
        )

    def _make_generator(
        self, llm: BaseLlm, config: MemoryBankConfig, screen: FactScreen
    ) -> Generator:
        """The generation pipeline for one configuration (procedure jobs included)."""
        return ProcedureGenerator(
            support=self._support,
            store=self._store,
            profiles=self._profiles,
            queue=self._jobs,
            llm=llm,
            embed=self._embed,
            config=config,
            revision_ttl=seconds(config.ttl.revision_ttl),
            screen=screen,
        )

    async def _generate(self, job: ClaimedJob) -> None:
        """The worker's handler: run one generation job (the worker has run `_ready` first)
        with the app configuration it was enqueued with, else this service's own."""
        if self.llm is None or self._generator is None:
            raise RuntimeError("This service has no generation model (pass llm=...).")
        await self._refuse_opted_out(job.scope)  # since it was queued: dead-lettered, said why
        generator = self._generator
        app = job.scope.get("app_name")
        if app is not None and job.config_version is not None:
            generator = await self._generator_for(app, job.config_version, self.llm, generator)
        await generator(job)

    async def _generator_for(
        self, app: str, version: int, llm: BaseLlm, own: Generator
    ) -> Generator:
        """The pipeline for version `version` of the app's stored configuration, built once per
        process (a version never changes). A version equal to what this service shares runs on
        its `own` pipeline, with its own guard and redactor objects."""
        key = (app, version)
        generator = self._generators.get(key)
        if generator is None:
            stored = await self._app_configs.get(app, version)
            if stored is None:
                raise AppConfigError(
                    f"App {app!r} has no stored memory configuration version {version}."
                )
            if stored.config == self._shared:
                generator = own
            else:
                screen = self._screen_for(stored.config)
                generator = self._make_generator(llm, stored.config, screen)
            self._generators.put(key, generator)
        return generator

    def _screen_for(self, config: AppMemoryConfig) -> FactScreen:
        """The redactor and guard an app's stored configuration names, for this worker: its
        guard by name (unset: this service's own); its `pii` redactor when this service has no
        redactor of its own (a worker never redacts less than it was built to)."""
        redactor = self.redactor
        if redactor is None and config.redact is not None:
            redactor = parse_redact(config.redact)
        guard = self.guard if config.guard is None else named_guard(config.guard)
        return FactScreen(redactor, guard)

    async def _config_version(self, scope: Scope) -> int | None:
        """The app configuration version a job for `scope` runs with: this service's own
        configuration, published for the scope's app on first use, when it has one to share
        (`publish_config`); else the app's latest stored version. None for a scope without an
        app, or an app with nothing stored: the worker's own configuration then applies."""
        app = scope.get("app_name")
        if app is None:
            return None
        if not self._publish_config:
            return await self._app_configs.latest_version(app)
        version = self._published.get(app)
        if version is None:
            version, _ = await self._app_configs.publish(app, self._shared)
            self._published.put(app, version)
        return version

    async def _ready(self) -> MemoryStore:
        """Migrate once, and fix (or check) the vector dimension once, before the first call."""
        if not self._prepared:
            await self._store.ready()
            if self.embedder is not None:
                await self._store.prepare_embeddings(self.embedder.dimensions)
            self._prepared = True
        return self._store

    async def _refuse_erased_session(
        self, app_name: str, user_id: str, session_id: str, events: Sequence[_Said]
    ) -> list[_Said]:
        """The `events` of a session that may be remembered: all of them, unless an erasure
        removed a session with this id (its tombstone). Then its events from before the erasure
        must not come back as memories (a trigger, a backfill or a replay holding the old
        session): `ErasedError` when they are all there is; only those from after it are kept
        (the user came back and the app gave their new session the same id, e.g. a fixed one:
        what they do after the erasure is theirs), the others dropped with a WARNING. A
        `Content` has no time: it counts as from before, as an import's record without one."""
        if not isinstance(session_id, str):
            raise InputValidationError("session_id must be a string.")
        await self._ready()
        erased = await self._tombstones.buried_at(Kind.SESSION, app_name, user_id, session_id)
        if erased is None:
            return list(events)
        after: list[_Said] = [
            e for e in events if isinstance(e, Event) and e.timestamp > erased.timestamp()
        ]
        if len(after) < len(events):
            if not after:
                raise ErasedError(
                    f"Session {session_id!r} of app {app_name!r} was erased with its user: "
                    "nothing of it is remembered again."
                )
            logger.warning(
                "%d events of a session erased with its user were not remembered (they are "
                "from before the erasure); its %d later events are.",
                len(events) - len(after),
                len(after),
            )
        return after

    @traced("memory.set_opt_out")
    async def set_opt_out(self, app_name: str, user_id: str, opted_out: bool = True) -> None:
        """Record that the user opted out of memory (False: opted back in). Opted out, every
        write for the user (any scope naming the app and user) raises `OptedOutError` and
        writes nothing; what was remembered before stays until it is erased (`erase_user`)."""
        scope = user_scope(app_name, user_id)
        if not isinstance(opted_out, bool):
            raise InputValidationError("opted_out must be True or False.")
        await self._ready()
        await self._opt_outs.set(scope["app_name"], scope["user_id"], opted_out)

    @traced("memory.is_opted_out")
    async def is_opted_out(
        self, app_name: str, user_id: str, *, state: UserState | None = None
    ) -> bool:
        """Whether the user opted out of memory. A `state` (a session's, or a tool context's)
        that holds `OPT_OUT_STATE_KEY` decides, and is recorded when the record says otherwise,
        so a later call that carries only a scope knows it; without the key, the record does."""
        scope = user_scope(app_name, user_id)
        await self._ready()
        recorded = await self._opt_outs.get(scope["app_name"], scope["user_id"])
        wish = stated_wish(state)
        if wish is not None and wish != recorded:
            await self._opt_outs.set(scope["app_name"], scope["user_id"], wish)
            return wish
        return recorded

    async def _refuse_opted_out(
        self, scope: Mapping[str, str], state: UserState | None = None
    ) -> None:
        """The one opt-out check every write for a user takes (and reads, with
        `RetrievalConfig.opt_out_hides`): `OptedOutError` when the user the scope names opted
        out. A scope naming no user (an app's procedures) is no one's to refuse."""
        app, user = scope.get("app_name"), scope.get("user_id")
        if app is None or user is None:
            return
        if await self.is_opted_out(app, user, state=state):
            raise OptedOutError(
                f"User {user!r} of app {app!r} opted out of memory: nothing is remembered for them."
            )

    async def _embed(self, texts: Sequence[str], task: str) -> list[list[float]] | None:
        if self.embedder is None or not texts:
            return None
        vectors = await self.embedder.embed(list(texts), task=task)  # type: ignore[arg-type]
        if len(vectors) != len(texts) or any(len(v) != self.embedder.dimensions for v in vectors):
            raise GenerationOutputError(
                "The embedder returned vectors of the wrong number or size."
            )
        return vectors

    @property
    def _revision_ttl(self) -> float | None:
        return seconds(self.config.ttl.revision_ttl)

    async def _screen_all(
        self, facts: Sequence[str], scope: Scope, source: str, *, direct: bool
    ) -> list[Screened]:
        """Each fact checked, redacted and judged. A direct write (`direct`) is all or nothing:
        one rejected fact raises `MemoryRejectedError` before anything is stored."""
        checked = [check_fact(f) for f in facts]
        judge = self._screen.admit_all if direct else self._screen.screen_all
        return await judge(checked, scope, source)

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
        update_time: datetime | None = None,
        key: str | None = None,
    ) -> NewMemory:
        """Validate one screened memory's fields (and embed its fact unless a vector is given).
        A quarantined fact goes under its scope's quarantine key, its verdict in the revision.
        `key`: the scope's `scope_key`, when a batch has it already."""
        fact = screened.fact
        if embedding is None:
            vectors = await self._embed([fact], "document")
            embedding = vectors[0] if vectors else None
        key = key or scope_key(scope)
        return NewMemory(
            id=memory_id,
            scope_key=quarantine_key(key) if screened.quarantined else key,
            scope=scope,
            fact=fact,
            topics=self._screen.topics(check_topics(topics)) or [],
            metadata=self._screen.json(check_mapping("metadata", metadata) or {}),
            content=self._screen.json(check_mapping("content", content)),
            importance=check_unit("importance", importance),
            confidence=check_unit("confidence", confidence),
            source_type=SourceType(source_type),
            source_session_id=source_session_id,
            source_event_ids=list(source_event_ids),
            embedding=embedding,
            create_time=check_time("create_time", create_time),
            update_time=check_time("update_time", update_time),
            ttl_seconds=seconds(ttl),
            labels=guard_labels(screened.verdict),
        )

    async def close(self) -> None:
        """Stop the in-process worker and release the connection pool (a shared engine is left
        to its owner). Queued generations stay queued for the next worker."""
        await self.worker.stop()
        await self.database.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
