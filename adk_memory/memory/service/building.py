"""Building the memory service's components from its database, configuration and arguments.

Owns: the wiring of `PostgresMemoryService` (`build`): the stores on the database, the shared
parts (`core.py`), the one write path (`writes.py`), the mode chosen once from whether there is
a generation model (`modes.py`: `Generation`, whose jobs the worker runs on
`pipelines.Pipelines`, or `NoGeneration`), the in-process worker, and each component built
with only the parts it uses. It never resolves database settings (the service's constructor
hands it a `Database`), never reads the environment, and never does I/O.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.adk.models.base_llm import BaseLlm

from ...config import AppMemoryConfig, MemoryBankConfig
from ...db.engine import Database
from ..jobs import ClaimedJob, JobQueue, Worker
from ..pipeline import JOB_PAYLOADS
from ..policy.screen import FactScreen
from ..store import MemoryStore
from ..store.app_configs import AppConfigStore
from ..store.audit import AuditStore
from ..store.ingest import IngestStore
from ..store.opt_outs import OptOutStore
from ..store.profiles import ProfileStore
from ..store.support import SupportStore
from ..store.tombstones import Tombstones
from .audit import Audit
from .core import Embedding, Gate, Readiness
from .direct import DirectWrites
from .ingestion import Ingestion
from .inspection import Inspection
from .memories import Memories
from .modes import Generation, Mode, NoGeneration
from .operations import Operations
from .pipelines import ConfigVersions, Pipelines, Submitter, no_model
from .privacy import Privacy, UserStores
from .procedures import Procedures
from .profiles import Profiles
from .retrieval import Retrieval
from .writes import Writer


@dataclass(frozen=True)
class Parts:
    """What every component is built from: the stores on the database, and the shared parts."""

    config: MemoryBankConfig
    screen: FactScreen
    embedding: Embedding
    store: MemoryStore
    users: UserStores
    app_configs: AppConfigStore
    ready: Readiness
    gate: Gate
    writer: Writer
    run: Callable[[ClaimedJob], Awaitable[None]]
    """The worker's handler: the generation pipelines' with a model, else a refusal."""

    def new_worker(self, **options: Any) -> Worker:
        """A worker for this database's generation jobs (`Worker` options: lease,
        poll_interval, concurrency)."""
        options.setdefault("retry_base_delay", self.config.generation.retry_base_delay)
        return Worker(
            self.users.jobs, self.run, prepare=self.ready, redact=self.screen.text, **options
        )


def parts(
    database: Database,
    config: MemoryBankConfig,
    screen: FactScreen,
    embedding: Embedding,
    *,
    llm: BaseLlm | None,
    shared: AppMemoryConfig,
) -> Parts:
    """The stores on `database` and the parts they share. With a generation model `llm`, the
    worker runs each job on the pipeline of the app configuration it names (`shared`: this
    service's own as an app's)."""
    store = MemoryStore(database, text_search_language=config.retrieval.text_search_language)
    audit = AuditStore(database)
    users = UserStores(
        jobs=JobQueue(database, JOB_PAYLOADS),
        support=SupportStore(database),
        profiles=ProfileStore(database),
        tombstones=Tombstones(database, audit),
        audit=audit,
    )
    app_configs = AppConfigStore(database)
    ready = Readiness(store, embedding)
    gate = Gate(OptOutStore(database), users.tombstones, ready)
    writer = Writer(screen, embedding, ready, config.ttl.revision_seconds())
    run = no_model
    if llm is not None:
        run = Pipelines(
            llm,
            config,
            screen,
            store=store,
            profiles=users.profiles,
            support=users.support,
            queue=users.jobs,
            app_configs=app_configs,
            embedding=embedding,
            shared=shared,
            gate=gate,
        ).run
    return Parts(config, screen, embedding, store, users, app_configs, ready, gate, writer, run)


@dataclass(frozen=True)
class Components:
    """The components of a `PostgresMemoryService`: its public attributes of the same names."""

    generation: Mode
    memories: Memories
    writes: DirectWrites
    retrieval: Retrieval
    operations: Operations
    procedures: Procedures
    privacy: Privacy
    profiles: Profiles
    inspection: Inspection
    audit: Audit
    ingestion: Ingestion


def components(
    database: Database,
    built: Parts,
    worker: Worker | None,
    *,
    llm: BaseLlm | None,
    shared: AppMemoryConfig,
    publish_config: bool,
) -> Components:
    """Each component on the parts it uses (`worker`: the in-process one, started on the first
    enqueue; None: a standalone worker serves the database)."""
    config, ready, gate, store = built.config, built.ready, built.gate, built.store
    jobs = built.users.jobs
    operations = Operations(jobs, store, built.app_configs, ready)
    generation = _mode(built, operations, worker, llm=llm, shared=shared, publish=publish_config)
    memories = Memories(
        store,
        built.screen,
        built.embedding,
        gate,
        ready,
        ttl=config.ttl,
        trust=config.trust,
        generation=generation,
    )
    retrieval = Retrieval(
        built.screen,
        built.embedding,
        gate,
        ready,
        memories,
        retrieval=config.retrieval,
        trust=config.trust,
    )
    return Components(
        generation=generation,
        memories=memories,
        writes=DirectWrites(
            built.writer, gate, ttl=config.ttl, trust=config.trust, generation=generation
        ),
        retrieval=retrieval,
        operations=operations,
        procedures=Procedures(
            generation,
            gate,
            built.screen,
            operations,
            store,
            built.users.support,
            ready,
            retrieval,
            config=config.generation,
            revision_ttl=config.ttl.revision_seconds(),
        ),
        privacy=Privacy(built.users, built.app_configs, database, gate, ready, config),
        profiles=Profiles(built.users.profiles, ready, gate, built.screen, config),
        inspection=Inspection(jobs, ready),
        audit=Audit(built.users.audit, ready),
        ingestion=Ingestion(
            IngestStore(database),
            generation.generate_memories if llm is not None else None,
            gate,
            ready,
            config.generation.trigger,
            worker,
        ),
    )


def _mode(
    built: Parts,
    operations: Operations,
    worker: Worker | None,
    *,
    llm: BaseLlm | None,
    shared: AppMemoryConfig,
    publish: bool,
) -> Mode:
    """The service's mode, chosen here once: `Generation` with a model (its jobs enqueued with
    this service's configuration published as the app's when `publish`, else the app's
    latest), else `NoGeneration`."""
    if llm is None:
        return NoGeneration(built.gate, built.writer, built.config.ttl)
    versions = ConfigVersions(built.app_configs, shared, publish)
    submitter = Submitter(
        built.users.jobs, versions, built.ready, worker, built.config.generation.max_attempts
    )
    return Generation(llm, built.screen, built.gate, built.writer, submitter, operations)
