"""`configure(...)`: one call from settings to a working stack of sessions, memory, plugins and
tools, and `MemoryStack.runner(app_or_agent)` to put an agent on it.

Owns: reading the settings (arguments, then the `ADK_MEMORY_*` environment variables of
`adk_memory.env`, then defaults), building the session and memory services on one database (one
connection pool when a URL is given), the plugins chosen by small typed configs
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

import inspect
import os
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from google.adk.agents.base_agent import BaseAgent
from google.adk.apps.app import App
from google.adk.artifacts.base_artifact_service import BaseArtifactService
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.models.base_llm import BaseLlm
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.tools.base_tool import BaseTool
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncEngine

from ..config import CustomTopic, DatabaseTimeouts, ManagedTopic, MemoryBankConfig
from ..db.engine import DEFAULT_SCHEMA, make_engine
from ..db.loops import dispose
from ..db.urls import normalise_url
from ..env import (
    DATA_DIR_ENV,
    DATABASE_URL_ENV,
    EMBEDDING_MODEL_ENV,
    MEMORY_TTL_ENV,
    MODEL_ENV,
    READ_DATABASE_URL_ENV,
    REDACT_ENV,
    SCHEMA_ENV,
    SESSION_TTL_ENV,
    database_timeouts,
    embedded_data_dir,
    environment,
    from_environ,
    parse_duration,
    parse_embedding_model,
    parse_redact,
    with_database_password,
)
from ..errors import InputValidationError
from ..memory.embeddings import Embedder, GeminiEmbedder
from ..memory.generation import resolve_llm
from ..memory.guard import MemoryGuard
from ..memory.service import PostgresMemoryService
from ..redaction import Redactor
from ..sessions.service import PostgresSessionService
from .callbacks import MemoryContextCallback, MemoryContextPlugin
from .compaction.archive import ToolResultArchivePlugin
from .compaction.budget import TokenBudgetPlugin
from .compaction.delegation import DelegationFilterPlugin
from .compaction.summarize import RecursiveSummarizationPlugin
from .compaction.window import SlidingWindowPlugin
from .erasure import erase_user
from .services import register
from .shared_database import Where, adk_database, uses
from .tools import CreateMemoryTool, ForgetMemoryTool, LoadMemoryTool
from .triggers import MemoryGenerationPlugin, OptOut


def _default(function: Callable[..., Any], parameter: str) -> Any:
    """The default of one of `function`'s parameters: the configs below take their defaults
    from the plugins they configure, so the two can never disagree."""
    return inspect.signature(function).parameters[parameter].default


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MemoryContextConfig(_Config):
    """What `MemoryContextPlugin` puts into every model call's system instruction: the user's
    profile and the memories relevant to the message (see `MemoryContextCallback`)."""

    top_k: int = Field(default=_default(MemoryContextCallback, "top_k"), ge=1)
    """Relevant memories retrieved per invocation, before the budget trims them (10)."""

    max_tokens: int = Field(default=_default(MemoryContextCallback, "max_tokens"), ge=1)
    """Budget of the appended text, estimated locally (1000)."""

    profile_topics: tuple[ManagedTopic | CustomTopic | str, ...] = ()
    """Topics whose memories are always shown, newest first, e.g. `(ManagedTopic.
    USER_PREFERENCES,)`; empty: no profile, only the memories relevant to the message."""

    profile_max_tokens: int | None = Field(default=None, ge=0)
    """The profile's share of `max_tokens` (None: half)."""

    procedure_top_k: int = Field(default=_default(MemoryContextCallback, "procedure_top_k"), ge=1)
    """The app's procedures retrieved per invocation by similarity to the message (3)."""

    procedure_max_tokens: int = Field(
        default=_default(MemoryContextCallback, "procedure_max_tokens"), ge=0
    )
    """The app's procedures' share of `max_tokens` (0: no procedures, no procedure search)."""

    timeout: float | None = Field(default=_default(MemoryContextCallback, "timeout"), gt=0)
    """Seconds a retrieval may take before the model is called without memories (5)."""


class TriggerConfig(_Config):
    """When conversations are sent to memory generation (`MemoryGenerationPlugin`). Every trigger
    only enqueues; the memory service's worker extracts and consolidates in the background."""

    every_n_turns: int | None = Field(
        default=_default(MemoryGenerationPlugin, "every_n_turns"), ge=1
    )
    """Enqueue after every N-th user turn (1: after each turn); None: only at session end
    (`stack.generation.end_session(session)`) and from the idle sweep."""

    opt_out: OptOut | None = None
    """An extra per-user opt-out predicate on the session (sync or async), besides the
    `user:adk_memory_generation_opt_out` state key."""


class CompactionConfig(_Config):
    """Which compaction plugins keep long conversations within the model's budget. Everything
    is off by default: each one changes what the model sees, so each is a deliberate choice.
    None of them modifies or deletes a stored event."""

    summarize: bool = False
    """Summarize older events in the background into one persisted ADK compaction, with the
    stack's model (`RecursiveSummarizationPlugin`). Leave `App.events_compaction_config` unset."""

    summarize_after_events: int | None = Field(
        default=_default(RecursiveSummarizationPlugin, "event_threshold"), ge=1
    )
    """Summarize once this many raw events follow the latest summary (50); None: off."""

    summarize_after_tokens: int | None = Field(
        default=_default(RecursiveSummarizationPlugin, "token_threshold"), ge=1
    )
    """Summarize once the history is estimated at this many tokens (None: off)."""

    keep_last_events: int = Field(default=_default(RecursiveSummarizationPlugin, "keep_last"), ge=0)
    """Raw events never summarized, so the latest exchange stays verbatim (10)."""

    archive_tool_results: bool = False
    """Save large tool results as artifacts and send the model a short reference instead
    (`ToolResultArchivePlugin`; add ADK's `load_artifacts` tool to let the model read one)."""

    archive_threshold_tokens: int = Field(
        default=_default(ToolResultArchivePlugin, "threshold_tokens"), ge=1
    )
    """Tool results estimated above this many tokens are archived (2000)."""

    window_turns: int | None = Field(default=None, ge=1)
    """Send only the last N user turns (`SlidingWindowPlugin`; a cut never splits a tool call
    from its result); None: off."""

    token_budget: int | Literal["auto"] | None = None
    """Trim the oldest whole turns to fit a token budget (`TokenBudgetPlugin`): a number of
    tokens (instructions and tool declarations count); "auto": `context_fraction` of the
    model's context window when `summarize` is on, else a conservative 8000 tokens / 50
    messages; None: off."""

    context_fraction: float = Field(
        default=_default(TokenBudgetPlugin, "context_fraction"), gt=0, le=1
    )
    """The share of the context window the "auto" budget allows (0.5)."""

    filter_delegation: bool = False
    """In a multi-agent app, show each sub-agent the top level of the conversation and its own
    delegation chain, not other sub-agents' tool traffic (`DelegationFilterPlugin`)."""


DEFAULT_CONTEXT = MemoryContextConfig()
"""configure()'s default: memories in the system instruction, no profile."""

DEFAULT_TRIGGERS = TriggerConfig()
"""configure()'s default: generation enqueued after every turn."""


def compaction_plugins(
    config: CompactionConfig, model: BaseLlm, redactor: Redactor | None = None
) -> tuple[BasePlugin, ...]:
    """The plugins `config` chooses, in the order they must run: filtering and archiving first,
    so the window and the budget measure the smaller request; the budget last among the
    request-trimming ones, as it counts everything the others left. `model` writes summaries.
    `redactor` goes to the plugins that store text or send it to a model of their own (the
    archive's artifacts and references, the summarizer's input and summaries); the others only
    choose which contents the agent's model gets."""
    chosen: list[BasePlugin] = []
    if config.filter_delegation:
        chosen.append(DelegationFilterPlugin())
    if config.archive_tool_results:
        chosen.append(
            ToolResultArchivePlugin(
                threshold_tokens=config.archive_threshold_tokens, redactor=redactor
            )
        )
    if config.window_turns is not None:
        chosen.append(SlidingWindowPlugin(config.window_turns))
    if config.token_budget is not None:
        fixed = None if config.token_budget == "auto" else config.token_budget
        chosen.append(
            TokenBudgetPlugin(
                max_tokens=fixed,
                context_fraction=config.context_fraction,
                with_summarizer=config.summarize,
            )
        )
    if config.summarize:
        chosen.append(
            RecursiveSummarizationPlugin(
                model,
                event_threshold=config.summarize_after_events,
                token_threshold=config.summarize_after_tokens,
                keep_last=config.keep_last_events,
                redactor=redactor,
            )
        )
    return tuple(chosen)


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
        self, app_name: str, user_id: str, *, artifact_service: BaseArtifactService | None = None
    ) -> dict[str, int]:
        """Forget one user of one app everywhere: archived tool results (in `artifact_service`,
        default the stack's), generation jobs with their payloads and results, memories
        (quarantined ones too), revisions, watermarks, sessions, events, compaction summaries
        and user state, for every scope naming the user. Idempotent and resumable (run it again
        after an interruption); returns counts per kind, and records the erasure with counts
        and times only; tombstones what went, so no import or replay brings it back. See
        `adk_memory.adk.erasure`."""
        return await erase_user(
            app_name=app_name,
            user_id=user_id,
            session_service=self.session_service,
            memory_service=self.memory_service,
            artifact_service=artifact_service or self.artifact_service,
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


def _model(
    model: str | BaseLlm | None, memory: MemoryBankConfig, environ: Mapping[str, str]
) -> BaseLlm:
    """The generation and summarization model: the argument, else the config's model if it was
    set, else `$ADK_MEMORY_MODEL`, else the config's default (a client object; nothing is
    called)."""
    if model is None:
        explicit = "model" in memory.generation.model_fields_set
        model = memory.generation.model if explicit else environ.get(MODEL_ENV)
        model = model or memory.generation.model
    if not isinstance(model, (str, BaseLlm)):
        raise InputValidationError("model must be a model name or an ADK BaseLlm.")
    try:
        return resolve_llm(model)
    except ValueError as exc:
        raise InputValidationError(f"Unknown model {model!r}: {exc}") from exc


def _memory_config(memory: MemoryBankConfig | None, environ: Mapping[str, str]) -> MemoryBankConfig:
    """The bank's config, with `$ADK_MEMORY_MEMORY_TTL` as its default TTL unless set."""
    memory = MemoryBankConfig() if memory is None else memory
    if not isinstance(memory, MemoryBankConfig):
        raise InputValidationError("memory must be a MemoryBankConfig.")
    ttl = from_environ(environ, MEMORY_TTL_ENV, parse_duration)
    if ttl is None or "default_ttl" in memory.ttl.model_fields_set:
        return memory
    return memory.model_copy(update={"ttl": memory.ttl.model_copy(update={"default_ttl": ttl})})


def configure(
    database_url: str | None = None,
    *,
    read_url: str | None = None,
    schema: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    memory: MemoryBankConfig | None = None,
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
    An argument left as None is read from its environment variable, else takes its default
    (see the module docstring for the precedence). With no database named at all (argument or
    environment), the database ADK's services were built on in this process from one of
    adk-memory's URIs is used (`adk web --session_service_uri ...`; `shared_database`). It
    registers adk-memory's URI schemes with ADK (`adk_memory.adk.services.register`), so an
    agent module calling it works under `adk run` with those URIs.

    Args:
      database_url: `postgresql://...` (`$ADK_MEMORY_DATABASE_URL`; default: the embedded
        PostgreSQL). A URL without a password takes `$ADK_MEMORY_DATABASE_PASSWORD` (or the
        file in `$ADK_MEMORY_DATABASE_PASSWORD_FILE`). Sessions and memory share one pool.
      read_url: a read replica of that database (`$ADK_MEMORY_READ_DATABASE_URL`; default:
        none), with the same role and password: searches, listings and session reads go
        there, with a pool of its own shared by both services (README: "Read replicas").
      schema: the Postgres schema of the tables (`$ADK_MEMORY_SCHEMA`; default adk_memory).
      data_dir: the embedded server's data directory (`$ADK_MEMORY_DATA_DIR`; default
        ./.adk/pgdata); unused with a database URL.
      memory: TTLs, retrieval, topics, few-shot examples, generation retries
        (`MemoryBankConfig`); its `ttl.default_ttl`, if not set, is `$ADK_MEMORY_MEMORY_TTL`.
        Given (and not the default), it is published as the app's shared configuration on the
        app's first generation, so standalone workers generate with it too.
      model: the model that generates memories and writes summaries: a name or any ADK
        `BaseLlm` (`$ADK_MEMORY_MODEL`; default `memory.generation.model`, gemini-2.5-flash).
      embedder: vectors for vector search (default: `GeminiEmbedder($ADK_MEMORY_EMBEDDING_MODEL)`
        when that names a model; unset or `none`: full-text search only).
      session_ttl: idle sessions older than this are deleted by `sweep_expired_sessions()`
        (`$ADK_MEMORY_SESSION_TTL`; default: kept forever).
      redactor: redacts personal data wherever the stack stores text or sends it to a model:
        session events and state, memories, raw events and jobs, the generation model's input
        and output, summaries and their model's input, archived tool results and their
        references (`$ADK_MEMORY_REDACT`: `pii` is `PiiRedactor()`; default: none).
      guard: judges every fact before it is stored (`MemoryGuard`; default
        `DefaultMemoryGuard()`): allow, reject, or quarantine for an operator.
      context: memories in the system instruction (default on); None: off.
      triggers: memory generation triggers (default: after every turn); None: no plugin.
      compaction: compaction plugins (default None: none).
      artifact_service: what `runner()` gives its Runners (default: in memory).
      run_worker: run generation jobs in this process (off when a standalone worker serves
        the database).
      auto_migrate: create and upgrade the tables on first use.
      engine_kwargs: SQLAlchemy engine options, e.g. `{"pool_size": 10}`.
      timeouts: how long a call may wait on the database before it raises
        `DatabaseTimeoutError` (default: `$ADK_MEMORY_STATEMENT_TIMEOUT`,
        `$ADK_MEMORY_CONNECT_TIMEOUT`, `$ADK_MEMORY_POOL_TIMEOUT`, else a statement 30 s,
        connecting 10 s, a free pooled connection 30 s: `DatabaseTimeouts`).
      environ: the environment to read (default `os.environ`).
    """
    for name, value, kind in (
        ("context", context, MemoryContextConfig),
        ("triggers", triggers, TriggerConfig),
        ("compaction", compaction, CompactionConfig),
    ):
        if value is not None and not isinstance(value, kind):
            raise InputValidationError(f"{name} must be a {kind.__name__} (or None).")
    adk = adk_database() if environ is None and data_dir is None else None
    environ = environment(environ)
    url = database_url or environ.get(DATABASE_URL_ENV) or None
    read = read_url or environ.get(READ_DATABASE_URL_ENV) or None
    if read is not None and url is None:
        raise InputValidationError(
            "A read replica needs the primary's database URL: the embedded server has no replicas."
        )
    if adk is not None and url is None and not environ.get(DATA_DIR_ENV):
        # No database named here: the one ADK's services were built on in this process
        # (`adk web --session_service_uri ...`), not a second one.
        url, data_dir = adk.url, adk.data_dir
        schema = schema or environ.get(SCHEMA_ENV) or adk.schema
    schema = schema or environ.get(SCHEMA_ENV) or DEFAULT_SCHEMA
    config = _memory_config(memory, environ)
    llm = _model(model, config, environ)
    embedding_model = parse_embedding_model(environ.get(EMBEDDING_MODEL_ENV))
    if embedder is None and embedding_model is not None:
        embedder = GeminiEmbedder(embedding_model)
    if session_ttl is None:
        session_ttl = from_environ(environ, SESSION_TTL_ENV, parse_duration)
    if redactor is None:
        redactor = from_environ(environ, REDACT_ENV, parse_redact)
    elif not isinstance(redactor, Redactor):
        raise InputValidationError("redactor must have a `redact(text) -> str` method.")
    if timeouts is None:
        timeouts = database_timeouts(environ)

    engine: AsyncEngine | None = None
    read_engine: AsyncEngine | None = None
    where: dict[str, Any]
    resolved_dir: Path | None = None
    if url is not None:
        # The password goes into the engine's in-memory URL only.
        url = with_database_password(normalise_url(url), environ)
        engine = make_engine(url, timeouts, **(engine_kwargs or {}))
        where = {"engine": engine}
        if read is not None:
            read = with_database_password(normalise_url(read), environ)
            read_engine = make_engine(read, timeouts, **(engine_kwargs or {}))
            where["read_engine"] = read_engine
    else:
        resolved_dir = embedded_data_dir(data_dir, environ)
        where = {
            "data_dir": str(resolved_dir),
            "engine_kwargs": engine_kwargs,
            "timeouts": timeouts,
        }
    shared = {"schema": schema, "auto_migrate": auto_migrate, **where}
    uses("configure()", Where(url, None if resolved_dir is None else str(resolved_dir), schema))
    # An agent module that calls configure() then works under `adk run` with adk-memory's URIs
    # too: `adk run` loads `services.py` from the agent's own folder, not the agents directory.
    register()

    session_service = PostgresSessionService(redactor=redactor, session_ttl=session_ttl, **shared)
    memory_service = PostgresMemoryService(
        embedder=embedder,
        config=config,
        llm=llm,
        run_worker=run_worker,
        redactor=redactor,
        guard=guard,
        # The app's configuration is shared with every worker when the caller wrote one; one
        # read from the environment alone is this process's (`memory_ttl` is not the app's).
        publish_config=None if memory is not None else False,
        **shared,
    )
    memory_context = None
    if context is not None:
        # dict(), not model_dump(): CustomTopic objects stay objects.
        callback = MemoryContextCallback(memory_service, **dict(context))
        memory_context = MemoryContextPlugin(callback)
    generation = None
    if triggers is not None:
        generation = MemoryGenerationPlugin(
            memory_service, every_n_turns=triggers.every_n_turns, opt_out=triggers.opt_out
        )
    return MemoryStack(
        session_service=session_service,
        memory_service=memory_service,
        artifact_service=artifact_service or InMemoryArtifactService(),
        memory_context=memory_context,
        generation=generation,
        compaction=() if compaction is None else compaction_plugins(compaction, llm, redactor),
        redactor=redactor,
        data_dir=resolved_dir,
        engine=engine,
        read_engine=read_engine,
    )
