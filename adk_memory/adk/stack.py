"""`configure(...)`: one call from settings to a working stack of sessions, memory, plugins and
tools, and `MemoryStack.runner(app_or_agent)` to put an agent on it.

Owns: building, from the settings `adk_memory.settings.stack` resolves (arguments, then the
`ADK_MEMORY_*` environment variables, then defaults), the session and memory services on one
database (one connection pool when a URL is given), the plugins chosen by small typed configs
(`MemoryContextConfig`, `TriggerConfig`, `CompactionConfig`) in the order they must run, the
memory tools, and closing all of it in the right order.

It never connects, starts the embedded server or calls a model while configuring: the pool, the
migrations and the embedded server start on the first database call, and a model name becomes a
client object whose first request is the first network call. A password read from the
environment only ever goes into the engine's in-memory URL (errors and logs show URLs without
it), and the `App` given to `runner()` is never edited (it gets a copy).

Precedence, for every setting: what the caller wrote wins (a non-None argument, or a field set
on a config object: `TtlConfig(default_ttl=None)` means "forever" even with
`ADK_MEMORY_MEMORY_TTL` set); a setting left out is read from its environment variable; else its
documented default applies.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.apps.app import App
from google.adk.artifacts.base_artifact_service import BaseArtifactService
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.models.base_llm import BaseLlm
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.tools.base_tool import BaseTool
from sqlalchemy.ext.asyncio import AsyncEngine

from ..config import DatabaseTimeouts, MemoryBankConfig
from ..db.engine import make_engine
from ..db.loops import dispose
from ..errors import InputValidationError
from ..memory.app_config import parse_memory_config
from ..memory.embeddings import Embedder, GeminiEmbedder
from ..memory.generation import resolve_llm
from ..memory.guard import MemoryGuard
from ..memory.service import PostgresMemoryService
from ..memory.service.audit import Principal
from ..redaction import Redactor
from ..sessions.service import PostgresSessionService
from ..settings.database import DatabaseSettings
from ..settings.stack import StackSettings, stack_settings
from ..settings.variables import environment
from .callbacks import MemoryContextPlugin
from .compaction.summarize import RecursiveSummarizationPlugin
from .erasure import erase_user
from .plugin_configs import (
    DEFAULT_CONTEXT,
    DEFAULT_TRIGGERS,
    CompactionConfig,
    MemoryContextConfig,
    TriggerConfig,
    compaction_plugins,
    memory_plugins,
)
from .services import register
from .shared_database import Where, adk_database, uses
from .tools import CreateMemoryTool, ForgetMemoryTool, LoadMemoryTool
from .triggers import MemoryGenerationPlugin


class MemoryStack:
    """Sessions, memory, plugins and tools on one database, built by `configure()`.

    Use `stack.runner(app_or_agent)` for a `Runner` with all of it attached, or put
    `stack.plugins` on your own `App` (what `adk web` serves) and `stack.tools` on your agents.
    The plugins and tools are bound to `stack.memory_service`, so they work under any Runner,
    whatever memory service it has. Close with `await stack.close()` or `async with stack:`.

    Attributes:
      session_service: the `PostgresSessionService`.
      memory_service: the `PostgresMemoryService` (with the generation model).
      artifact_service: what `runner()` gives the Runner (archived tool results live there).
      memory_context: the plugin putting memories into the system instruction (its `.callback`
        works as an agent's `before_model_callback` instead; use one or the other), or None.
      generation: the memory-generation trigger plugin (`end_session(session)`,
        `sweep_idle(...)`), or None.
      compaction: the compaction plugins, in order.
      redactor: the one redactor every part applies before it stores text or sends it to a
        model (sessions, memory, generation, summaries, archived tool results), or None.
      create_memory, load_memory, forget_memory: the memory tools, described with the
        configured topics.
      data_dir: the embedded server's data directory (None when a database URL is used).
    """

    def __init__(
        self,
        *,
        session_service: PostgresSessionService,
        memory_service: PostgresMemoryService,
        artifact_service: BaseArtifactService,
        memory_context: MemoryContextPlugin | None = None,
        generation: MemoryGenerationPlugin | None = None,
        compaction: tuple[BasePlugin, ...] = (),
        redactor: Redactor | None = None,
        data_dir: Path | None = None,
        engine: AsyncEngine | None = None,
        read_engine: AsyncEngine | None = None,
    ) -> None:
        self.session_service = session_service
        self.memory_service = memory_service
        self.artifact_service = artifact_service
        self.memory_context = memory_context
        self.generation = generation
        self.compaction = compaction
        self.redactor = redactor
        self.create_memory = CreateMemoryTool(memory_service)
        self.load_memory = LoadMemoryTool(memory_service)
        self.forget_memory = ForgetMemoryTool(memory_service)
        self.data_dir = data_dir
        self._engine = engine
        self._read_engine = read_engine

    @property
    def plugins(self) -> list[BasePlugin]:
        """Every plugin, in the order they must run: memories into the instruction first (the
        budget counts them), generation, then compaction."""
        memory = [p for p in (self.memory_context, self.generation) if p is not None]
        return [*memory, *self.compaction]

    @property
    def tools(self) -> list[BaseTool]:
        """`create_memory`, `load_memory` and `forget_memory`."""
        return [self.create_memory, self.load_memory, self.forget_memory]

    def merge_plugins(self, app: App) -> App:
        """A copy of `app` with the stack's plugins after its own (the app's own logic runs
        first; the budget plugin still runs last among the stack's). A plugin already there is
        not added twice: the same object, or one of the same type and name (the app configured
        that concern itself). A plugin of another type under one of the stack's names is an
        error, as ADK allows one plugin per name."""
        own = {plugin.name: plugin for plugin in app.plugins}
        added: list[BasePlugin] = []
        for plugin in self.plugins:
            existing = own.get(plugin.name)
            if existing is None:
                added.append(plugin)
            elif type(existing) is not type(plugin):
                raise InputValidationError(
                    f"The app's plugin {plugin.name!r} ({type(existing).__name__}) has the name "
                    f"of adk-memory's {type(plugin).__name__}: rename one of them."
                )
        if app.events_compaction_config is not None and any(
            isinstance(p, RecursiveSummarizationPlugin) for p in [*app.plugins, *added]
        ):
            raise InputValidationError(
                "App.events_compaction_config and the summarization plugin would both write "
                "compactions: use CompactionConfig(summarize=True) or ADK's, not both."
            )
        return app.model_copy(update={"plugins": [*app.plugins, *added]})

    def runner(
        self, app_or_agent: App | BaseAgent, *, app_name: str | None = None, **options: Any
    ) -> Runner:
        """An ADK `Runner` on the stack's services, with its plugins merged into the app's
        (`merge_plugins`). An agent is wrapped in an `App` named `app_name` (default: the
        agent's name). `options` go to `Runner` (e.g. `auto_create_session=True`,
        `artifact_service=GcsArtifactService(...)`)."""
        if isinstance(app_or_agent, App):
            app = self.merge_plugins(app_or_agent)
        elif isinstance(app_or_agent, BaseAgent):
            app = App(name=app_name or app_or_agent.name, root_agent=app_or_agent)
            app = self.merge_plugins(app)
            app_name = None
        else:
            raise InputValidationError("runner() takes an ADK App or agent.")
        options.setdefault("artifact_service", self.artifact_service)
        return Runner(
            app=app,
            app_name=app_name,
            session_service=self.session_service,
            memory_service=self.memory_service,
            **options,
        )

    async def erase_user(
        self,
        app_name: str,
        user_id: str,
        *,
        artifact_service: BaseArtifactService | None = None,
        principal: Principal | None = None,
    ) -> dict[str, int]:
        """Forget one user of one app everywhere: archived tool results (in `artifact_service`,
        default the stack's), generation jobs with their payloads and results, memories
        (quarantined ones too), revisions, watermarks, sessions, events, compaction summaries
        and user state, for every scope naming the user. Idempotent and resumable (run it again
        after an interruption); returns counts per kind, and records the erasure with counts
        and times only; tombstones what went, so no import or replay brings it back. Audited as
        `principal`'s (None: this process's). See `adk_memory.adk.erasure`."""
        return await erase_user(
            app_name=app_name,
            user_id=user_id,
            session_service=self.session_service,
            memory_service=self.memory_service,
            artifact_service=artifact_service or self.artifact_service,
            principal=principal,
        )

    async def close(self) -> None:
        """Finish the plugins' background work (summaries in flight are written), stop the
        generation worker (queued jobs stay queued), then release the connection pools. The
        embedded server keeps running for other processes; the last one to exit stops it."""
        try:
            for plugin in self.plugins:
                await plugin.close()
        finally:
            try:
                await self.memory_service.close()
                await self.session_service.close()
            finally:
                for engine in (self._engine, self._read_engine):
                    if engine is not None:
                        await dispose(engine)  # its pools on every event loop

    async def __aenter__(self) -> MemoryStack:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _model(model: str | BaseLlm | None, memory: MemoryBankConfig, named: str | None) -> BaseLlm:
    """The generation and summarization model: the argument, else the config's model if it was
    set, else `named` (`$ADK_MEMORY_MODEL`), else the config's default (a client object;
    nothing is called)."""
    if model is None:
        explicit = "model" in memory.generation.model_fields_set
        model = memory.generation.model if explicit else named
        model = model or memory.generation.model
    if not isinstance(model, (str, BaseLlm)):
        raise InputValidationError("model must be a model name or an ADK BaseLlm.")
    try:
        return resolve_llm(model)
    except ValueError as exc:
        raise InputValidationError(f"Unknown model {model!r}: {exc}") from exc


def _memory_config(
    memory: MemoryBankConfig | Mapping[str, Any] | None, ttl: timedelta | None
) -> MemoryBankConfig:
    """The bank's config (a mapping: ours or Memory Bank's JSON, validated), with `ttl`
    (`$ADK_MEMORY_MEMORY_TTL`) as its default TTL unless set."""
    if isinstance(memory, Mapping):
        memory = parse_memory_config(memory)
    memory = MemoryBankConfig() if memory is None else memory
    if not isinstance(memory, MemoryBankConfig):
        raise InputValidationError("memory must be a MemoryBankConfig.")
    if ttl is None or "default_ttl" in memory.ttl.model_fields_set:
        return memory
    return memory.model_copy(update={"ttl": memory.ttl.model_copy(update={"default_ttl": ttl})})


def _check_configs(**configs: object) -> None:
    """Each plugin config is its own type (or None)."""
    kinds = {"context": MemoryContextConfig, "triggers": TriggerConfig}
    for name, value in configs.items():
        kind = kinds.get(name, CompactionConfig)
        if value is not None and not isinstance(value, kind):
            raise InputValidationError(f"{name} must be a {kind.__name__} (or None).")


@dataclass(frozen=True)
class _Engines:
    """The engines a stack on a server shares between its services (None: the embedded
    server, whose engine each service builds on first use), and what the services are given."""

    engine: AsyncEngine | None
    read_engine: AsyncEngine | None
    arguments: dict[str, Any]


def _engines(database: DatabaseSettings) -> _Engines:
    """One pool for sessions and memory when a URL is given (and one for the replica); else
    the embedded server's settings, for each service to build its own."""
    shared = {"schema": database.schema, "auto_migrate": database.auto_migrate}
    options = dict(database.engine_kwargs or {})
    if database.url is None:
        where = {"data_dir": database.data_dir, "engine_kwargs": database.engine_kwargs}
        return _Engines(None, None, {**shared, **where, "timeouts": database.timeouts})
    engine = make_engine(database.url, database.timeouts, **options)
    read_engine = None
    if database.read_url is not None:
        read_engine = make_engine(database.read_url, database.timeouts, **options)
        shared["read_engine"] = read_engine
    return _Engines(engine, read_engine, {**shared, "engine": engine})


def configure(
    database_url: str | None = None,
    *,
    read_url: str | None = None,
    schema: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    memory: MemoryBankConfig | Mapping[str, Any] | None = None,
    model: str | BaseLlm | None = None,
    embedder: Embedder | None = None,
    session_ttl: timedelta | None = None,
    redactor: Redactor | None = None,
    guard: MemoryGuard | None = None,
    context: MemoryContextConfig | None = DEFAULT_CONTEXT,
    triggers: TriggerConfig | None = DEFAULT_TRIGGERS,
    compaction: CompactionConfig | None = None,
    artifact_service: BaseArtifactService | None = None,
    run_worker: bool = True,
    auto_migrate: bool = True,
    engine_kwargs: dict[str, Any] | None = None,
    timeouts: DatabaseTimeouts | None = None,
    environ: Mapping[str, str] | None = None,
) -> MemoryStack:
    """Build sessions, memory, plugins and tools on one PostgreSQL, ready for a Runner.

    Nothing connects yet: the embedded server, the pool and the migrations start on first use.
    An argument left as None is its `ADK_MEMORY_*` variable's, else its default (the module
    docstring; `adk_memory.settings.stack`). With no database named at all, the one ADK's
    services were built on in this process from adk-memory's URIs is used (`shared_database`).
    It registers adk-memory's URI schemes with ADK (`services.register`) for `adk run`.

    Args (variable; default):
      database_url: `postgresql://...` (DATABASE_URL, a missing password from DATABASE_PASSWORD
        or _FILE; the embedded PostgreSQL in `data_dir`: DATA_DIR; ./.adk/pgdata). One pool.
      read_url: a read replica, same role and password (READ_DATABASE_URL; none).
      schema: the Postgres schema of the tables (SCHEMA; adk_memory).
      memory: `MemoryBankConfig` or a mapping (ours, or Memory Bank's JSON) (its unset
        `ttl.default_ttl`: MEMORY_TTL); published as the app's on its first generation.
      model: a name or `BaseLlm` for memories and summaries (MODEL; the config's).
      embedder: vector search (`GeminiEmbedder(EMBEDDING_MODEL)`; none: full text only).
      session_ttl: idle sessions older are swept (SESSION_TTL; kept forever).
      redactor: applied wherever text is stored or sent to a model (REDACT=pii; none).
      guard: judges every fact before it is stored (`DefaultMemoryGuard()`).
      context, triggers, compaction: the plugins' configs; None: off.
      artifact_service: what `runner()` gives its Runners (in memory).
      run_worker: run generation jobs here; auto_migrate: create/upgrade tables on first use.
      engine_kwargs: SQLAlchemy engine options; environ: the environment read (`os.environ`).
      timeouts: `DatabaseTimeouts` (STATEMENT_TIMEOUT, CONNECT_TIMEOUT, POOL_TIMEOUT).
    """
    _check_configs(context=context, triggers=triggers, compaction=compaction)
    shared = adk_database() if environ is None and data_dir is None else None
    settings = stack_settings(
        database_url,
        read_url=read_url,
        schema=schema,
        data_dir=data_dir,
        session_ttl=session_ttl,
        redactor=redactor,
        auto_migrate=auto_migrate,
        engine_kwargs=engine_kwargs,
        timeouts=timeouts,
        environ=environment(environ),
        shared=shared,
    )
    config = _memory_config(memory, settings.memory_ttl)
    llm = _model(model, config, settings.model)
    if embedder is None and settings.embedding_model is not None:
        embedder = GeminiEmbedder(settings.embedding_model)
    return _build(
        settings,
        config=config,
        llm=llm,
        embedder=embedder,
        guard=guard,
        run_worker=run_worker,
        # The app's configuration is shared with every worker when the caller wrote one; one
        # read from the environment alone is this process's (`memory_ttl` is not the app's).
        publish_config=None if memory is not None else False,
        plugins=(context, triggers, compaction),
        artifact_service=artifact_service,
    )


def _build(
    settings: StackSettings,
    *,
    config: MemoryBankConfig,
    llm: BaseLlm,
    embedder: Embedder | None,
    guard: MemoryGuard | None,
    run_worker: bool,
    publish_config: bool | None,
    plugins: tuple[MemoryContextConfig | None, TriggerConfig | None, CompactionConfig | None],
    artifact_service: BaseArtifactService | None,
) -> MemoryStack:
    """The stack on the resolved settings: the engines, the services, the plugins."""
    database = settings.database
    engines = _engines(database)
    data_dir = None if database.url is not None else database.data_dir
    uses("configure()", Where(database.url, data_dir, database.schema))
    # An agent module that calls configure() then works under `adk run` with adk-memory's URIs
    # too: `adk run` loads `services.py` from the agent's own folder, not the agents directory.
    register()
    redactor = settings.redactor
    session_service = PostgresSessionService(
        redactor=redactor, session_ttl=settings.session_ttl, **engines.arguments
    )
    memory_service = PostgresMemoryService(
        embedder=embedder,
        config=config,
        llm=llm,
        run_worker=run_worker,
        redactor=redactor,
        guard=guard,
        publish_config=publish_config,
        **engines.arguments,
    )
    context, triggers, compaction = plugins
    memory_context, generation = memory_plugins(memory_service, context, triggers)
    return MemoryStack(
        session_service=session_service,
        memory_service=memory_service,
        artifact_service=artifact_service or InMemoryArtifactService(),
        memory_context=memory_context,
        generation=generation,
        compaction=() if compaction is None else compaction_plugins(compaction, llm, redactor),
        redactor=redactor,
        data_dir=None if data_dir is None else Path(data_dir),
        engine=engines.engine,
        read_engine=engines.read_engine,
    )
