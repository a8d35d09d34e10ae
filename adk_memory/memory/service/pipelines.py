"""Both ends of a generation job, as the memory service drives them: submitting one, and running
one with the app configuration it names.

Owns: which app configuration version a job runs with (`ConfigVersions`: this service's own,
published for the app on first use, or the app's latest stored one; `app_config.py` stores
them), enqueueing a job and starting the in-process worker (`Submitter`), and the worker's
handler (`Pipelines.run`: the generation pipeline of the job's app configuration, built once
per version and process, refused for a user who opted out since). The work of a job is
`pipeline.Generator`'s; this module never reads a payload and never writes SQL itself.
"""

from __future__ import annotations

from google.adk.models.base_llm import BaseLlm

from ..._cache import LruCache
from ...config import AppMemoryConfig, MemoryBankConfig
from ...errors import AppConfigError, ServiceConfigurationError
from ...settings.variables import parse_redact
from ..jobs import ClaimedJob, JobQueue, Worker
from ..models import GenerateMemoriesOperation
from ..pipeline import Generator, JobPayload
from ..policy.names import named_guard
from ..policy.screen import FactScreen
from ..scope import Scope, scope_key
from ..store import MemoryStore
from ..store.app_configs import AppConfigStore
from ..store.profiles import ProfileStore
from ..store.support import SupportStore
from .core import Embedding, Gate, Readiness


class ConfigVersions:
    """The app configuration version each job is enqueued with (see `version`)."""

    def __init__(self, app_configs: AppConfigStore, shared: AppMemoryConfig, publish: bool) -> None:
        self._app_configs = app_configs
        self._shared = shared
        self._publish = publish
        self._published: LruCache[str, int] = LruCache(1024)
        """The version this service published, per app (once per app and process)."""

    async def version(self, scope: Scope) -> int | None:
        """The app configuration version a job for `scope` runs with: this service's own
        configuration, published for the scope's app on first use, when it has one to share
        (`publish_config`); else the app's latest stored version. None for a scope without an
        app, or an app with nothing stored: the worker's own configuration then applies."""
        app = scope.get("app_name")
        if app is None:
            return None
        if not self._publish:
            return await self._app_configs.latest_version(app)
        version = self._published.get(app)
        if version is None:
            version, _ = await self._app_configs.publish(app, self._shared)
            self._published.put(app, version)
        return version


class Submitter:
    """Enqueues a generation job (payload already built and redacted) with the configuration
    version it runs with, and starts the in-process worker when the service runs one."""

    def __init__(
        self,
        queue: JobQueue,
        versions: ConfigVersions,
        ready: Readiness,
        worker: Worker | None,
        max_attempts: int,
    ) -> None:
        self._queue = queue
        self._versions = versions
        self._ready = ready
        self._worker = worker
        self._max_attempts = max_attempts

    async def submit(self, scope: Scope, payload: JobPayload) -> GenerateMemoriesOperation:
        """The job enqueued for `scope`; its operation, to poll."""
        await self._ready()
        job_id = await self._queue.enqueue(
            scope_key(scope),
            scope,
            payload,
            self._max_attempts,
            config_version=await self._versions.version(scope),
        )
        if self._worker is not None:
            self._worker.start()
        return GenerateMemoriesOperation(id=job_id, scope=scope)


class Pipelines:
    """The worker's handler with a generation model: each job runs on the pipeline of the app
    configuration it was enqueued with, else this service's own."""

    def __init__(
        self,
        llm: BaseLlm,
        config: MemoryBankConfig,
        screen: FactScreen,
        *,
        store: MemoryStore,
        profiles: ProfileStore,
        support: SupportStore,
        queue: JobQueue,
        app_configs: AppConfigStore,
        embedding: Embedding,
        shared: AppMemoryConfig,
        gate: Gate,
    ) -> None:
        self._llm = llm
        self._screen = screen
        self._stores = (store, profiles, support, queue)
        self._app_configs = app_configs
        self._embedding = embedding
        self._shared = shared
        self._gate = gate
        self._generators: LruCache[tuple[str, int], Generator] = LruCache(64)
        """The generation pipeline of each (app, version) a job named: versions never change."""
        self._own = self._generator(config, screen)

    async def run(self, job: ClaimedJob) -> None:
        """Run one generation job (the worker has made the database ready first)."""
        await self._gate.refuse_opted_out(job.scope)  # since it was queued: dead-lettered, said why
        generator = self._own
        app = job.scope.get("app_name")
        if app is not None and job.config_version is not None:
            generator = await self._generator_for(app, job.config_version)
        await generator(job)

    def _generator(self, config: MemoryBankConfig, screen: FactScreen) -> Generator:
        """The generation pipeline for one configuration (procedure jobs included)."""
        store, profiles, support, queue = self._stores
        return Generator(
            support=support,
            store=store,
            profiles=profiles,
            queue=queue,
            llm=self._llm,
            embed=self._embedding.embed,
            config=config,
            revision_ttl=config.ttl.revision_seconds(),
            screen=screen,
        )

    async def _generator_for(self, app: str, version: int) -> Generator:
        """The pipeline for version `version` of the app's stored configuration, built once per
        process (a version never changes). A version equal to what this service shares runs on
        its own pipeline, with its own guard and redactor objects."""
        key = (app, version)
        generator = self._generators.get(key)
        if generator is None:
            stored = await self._app_configs.get(app, version)
            if stored is None:
                raise AppConfigError(
                    f"App {app!r} has no stored memory configuration version {version}."
                )
            if stored.config == self._shared:
                generator = self._own
            else:
                generator = self._generator(stored.config, self._screen_for(stored.config))
            self._generators.put(key, generator)
        return generator

    def _screen_for(self, config: AppMemoryConfig) -> FactScreen:
        """The redactor and guard an app's stored configuration names, for this worker: its
        guard by name (unset: this service's own); its `pii` redactor when this service has no
        redactor of its own (a worker never redacts less than it was built to)."""
        redactor = self._screen.redactor
        if redactor is None and config.redact is not None:
            redactor = parse_redact(config.redact)
        guard = self._screen.guard if config.guard is None else named_guard(config.guard)
        return FactScreen(redactor, guard)


async def no_model(job: ClaimedJob) -> None:
    """The worker's handler without a generation model: a job (queued by a service that has
    one) cannot run here."""
    raise ServiceConfigurationError("This service has no generation model (pass llm=...).")
