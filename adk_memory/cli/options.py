"""What every `adk-memory` command shares: where the database is, which model and embedding
model generate memories, durations, and turning user errors into a one-line message and exit
code 1.

Owns: the `--database-url` / `--schema` / `--data-dir` options and the services built from them
(never migrating: only `adk-memory migrate` changes a schema; a URL without a password takes the
one in `$ADK_MEMORY_DATABASE_PASSWORD` / `_FILE`), the `--model` / `--embedding-model` options,
the `--redact` option (one redactor for the sessions, the memories and generation), and the list
of errors that are the user's to fix. Each option's environment variable is the one
`adk_memory.settings.variables` defines; the database they name is resolved by
`adk_memory.settings`. It never defines a command, and never hides an error it cannot explain:
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

import click
from google.adk.models.base_llm import BaseLlm

from ..config import GenerationConfig
from ..db.engine import DEFAULT_SCHEMA, Database
from ..memory.embeddings import Embedder, GeminiEmbedder
from ..memory.generation import resolve_llm
from ..memory.service import PostgresMemoryService
from ..redaction import Redactor
from ..sessions.service import PostgresSessionService
from ..settings.database import DatabaseSettings, command_database
from ..settings.variables import (
    DATABASE_PASSWORD_ENV,
    DATABASE_PASSWORD_FILE_ENV,
    DATABASE_URL_ENV,
    EMBEDDING_MODEL_ENV,
    MODEL_ENV,
    REDACT_CHOICES,
    REDACT_ENV,
    SCHEMA_ENV,
    parse_duration,
    parse_embedding_model,
    parse_redact,
)
from .db import data_dir_option as data_dir_option
from .failures import run as run
from .failures import user_errors as user_errors

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """The database a command works on: a URL, or the embedded server in `data_dir`."""

    database_url: str | None
    schema: str
    data_dir: str | None

    def settings(self) -> DatabaseSettings:
        """Resolved (`adk_memory.settings.command_database`): the URL with the environment's
        password when it carries none (kept in memory, never echoed or passed on a command
        line), the environment's timeouts, and never migrating (only `adk-memory migrate`
        changes a schema)."""
        return command_database(self.database_url, schema=self.schema, data_dir=self.data_dir)

    def database(self) -> Database:
        return self.settings().database()

    def sessions(self, **options: Any) -> PostgresSessionService:
        return PostgresSessionService(**self.memory_arguments(**options))

    def memory(self, **options: Any) -> PostgresMemoryService:
        return PostgresMemoryService(**self.memory_arguments(**options))

    def memory_arguments(self, **options: Any) -> dict[str, Any]:
        """A service's arguments for this database, with `options` (what
        `adk_memory.cli.worker.run_worker` builds the worker's service from)."""
        return {**self.settings().arguments(), **options}


def with_options(
    function: Callable[..., T], options: Sequence[Callable[[Callable[..., T]], Callable[..., T]]]
) -> Callable[..., T]:
    """`function` with click options applied so that `--help` lists them in the given order."""
    for option in reversed(options):
        function = option(function)
    return function


def database_options(command: Callable[..., T]) -> Callable[..., T]:
    """Add `--database-url`, `--schema` and `--data-dir`; the command receives `target`."""

    @functools.wraps(command)
    def wrapper(
        *args: Any, database_url: str | None, schema: str, data_dir: str | None, **kwargs: Any
    ) -> T:
        return command(*args, target=Target(database_url, schema, data_dir), **kwargs)

    options = (
        click.option(
            "--database-url",
            envvar=DATABASE_URL_ENV,
            metavar="URL",
            help=(
                f"postgresql://... (default ${DATABASE_URL_ENV}; unset: the embedded "
                "PostgreSQL in --data-dir). Without a password in it, the one in "
                f"${DATABASE_PASSWORD_ENV} (or the file in ${DATABASE_PASSWORD_FILE_ENV})."
            ),
        ),
        click.option(
            "--schema",
            envvar=SCHEMA_ENV,
            default=DEFAULT_SCHEMA,
            show_default=True,
            help=f"Postgres schema holding the tables (${SCHEMA_ENV}).",
        ),
        data_dir_option,
    )
    return with_options(wrapper, options)


@dataclass(frozen=True)
class Overrides:
    """Replaces the model and the embedder the options name: the test hook, passed as click's
    `obj` (`CliRunner().invoke(main, args, obj=Overrides(llm=ScriptedLlm(...)))`)."""

    llm: BaseLlm | None = None
    embedder: Embedder | None = None
    vertex: Any = None
    """What `import vertex` reads instead of the Agent Engine API (an `AgentEnginePages`)."""


@dataclass(frozen=True)
class Generation:
    """The model that generates memories, and the embedder and redactor that must match the
    agent's (a worker without the agent's redactor would send its model unredacted events)."""

    llm: BaseLlm
    embedder: Embedder | None
    redactor: Redactor | None = None

    def memory_options(self) -> dict[str, Any]:
        """The memory service's arguments for generating: the model, embedder and redactor."""
        return {"llm": self.llm, "embedder": self.embedder, "redactor": self.redactor}


def _resolve_model(ctx: click.Context, param: click.Parameter, name: str) -> BaseLlm:
    try:
        return resolve_llm(name)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from exc


def _embedding_model(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    return parse_embedding_model(value)


embedding_model_option = click.option(
    "--embedding-model",
    envvar=EMBEDDING_MODEL_ENV,
    metavar="NAME",
    callback=_embedding_model,
    help=(
        "A Gemini embedding model (e.g. gemini-embedding-001) for vector search; unset or none: "
        f"full-text search only. Must match the agent's memory service (${EMBEDDING_MODEL_ENV})."
    ),
)
"""`--embedding-model`: the command receives the model's name, or None for full text only."""

redact_option = click.option(
    "--redact",
    envvar=REDACT_ENV,
    type=click.Choice(REDACT_CHOICES, case_sensitive=False),
    default="none",
    show_default=True,
    help=(
        "pii: redact e-mail addresses, phone, card and IBAN numbers before anything is stored or "
        f"sent to a model; must match the agent's (${REDACT_ENV})."
    ),
)
"""`--redact`: the command receives `pii` or `none` (`settings.variables.parse_redact` makes the
redactor)."""


def generation_options(command: Callable[..., T]) -> Callable[..., T]:
    """Add `--model`, `--embedding-model` and `--redact`; the command receives `generation`."""

    @functools.wraps(command)
    def wrapper(
        *args: Any, model: BaseLlm, embedding_model: str | None, redact: str, **kwargs: Any
    ) -> T:
        overrides = click.get_current_context().find_object(Overrides) or Overrides()
        embedder = GeminiEmbedder(embedding_model) if embedding_model is not None else None
        chosen = Generation(
            llm=overrides.llm or model,
            embedder=overrides.embedder or embedder,
            redactor=parse_redact(redact),
        )
        return command(*args, generation=chosen, **kwargs)

    options = (
        click.option(
            "--model",
            envvar=MODEL_ENV,
            default=GenerationConfig().model,
            show_default=True,
            callback=_resolve_model,
            help=f"The generation model, any name ADK resolves (${MODEL_ENV}).",
        ),
        embedding_model_option,
        redact_option,
    )
    return with_options(wrapper, options)


skip_credential_check_option = click.option(
    "--skip-credential-check",
    is_flag=True,
    help=(
        "Start with a Gemini model even without GOOGLE_API_KEY / GEMINI_API_KEY or Vertex AI "
        "settings (GOOGLE_GENAI_USE_VERTEXAI=true, GOOGLE_CLOUD_PROJECT)."
    ),
)
"""`--skip-credential-check`: the command receives `skip_credential_check`. Without it, a
command that generates refuses to start when its Gemini model has no credentials (every job
would fail: `adk_memory.cli.worker.check_model_credentials`)."""


class Duration(click.ParamType):
    """A positive duration as `adk_memory.durations.parse_duration` reads it: `3600`, `90s`, `15m`,
    `12h`, `30d`, `2w` or `1d12h`."""

    name = "duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> timedelta:
        if isinstance(value, timedelta):
            return value
        try:
            return parse_duration(str(value))
        except ValueError as exc:
            self.fail(f"{exc}.", param, ctx)


DURATION = Duration()
