"""What every `adk-memory` command shares: where the database is, which model and embedder
generate memories, durations, and turning user errors into a one-line message and exit code 1.

Owns: the `--database-url` / `--schema` / `--data-dir` options and the services built from them
(never migrating: only `adk-memory migrate` changes a schema), the `--model` / `--embedder`
options, and the list of errors that are the user's to fix. It never defines a command, and never
hides an error it cannot explain: anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import asyncio
import functools
import re
import subprocess
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

import asyncpg
import click
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.models.base_llm import BaseLlm

from ..db.embedded import DATA_DIR_ENV, EmbeddedPostgresUnavailableError
from ..db.engine import DEFAULT_SCHEMA, Database
from ..db.migrations import MigrationError, SchemaVersionError
from ..memory.embeddings import Embedder, GeminiEmbedder
from ..memory.generation import resolve_llm
from ..memory.service import PostgresMemoryService
from ..memory.store import EmbeddingDimensionError
from ..sessions.service import PostgresSessionService

T = TypeVar("T")

DATABASE_URL_ENV = "ADK_MEMORY_DATABASE_URL"
SCHEMA_ENV = "ADK_MEMORY_SCHEMA"
MODEL_ENV = "ADK_MEMORY_MODEL"
EMBEDDER_ENV = "ADK_MEMORY_EMBEDDER"
DEFAULT_MODEL = "gemini-2.5-flash"
"""The generation model when neither `--model` nor `$ADK_MEMORY_MODEL` names one (the worker's
default too)."""

_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OSError,  # refused, unknown host, missing Unix socket
    asyncio.TimeoutError,
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.InvalidAuthorizationSpecificationError,  # role or password
    asyncpg.exceptions.InvalidCatalogNameError,  # no such database
    asyncpg.exceptions.ClientConfigurationError,
)
_USER_ERRORS: tuple[type[BaseException], ...] = (
    InputValidationError,
    SchemaVersionError,
    MigrationError,
    EmbeddedPostgresUnavailableError,
    EmbeddingDimensionError,
    asyncpg.exceptions.InsufficientPrivilegeError,
)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn errors the user can fix (a bad URL, an unreachable server, a schema that needs
    `adk-memory migrate`, ...) into `click.ClickException`: one line on stderr, exit code 1."""
    try:
        yield
    except _CONNECTION_ERRORS as exc:
        raise click.ClickException(f"Could not connect to the database: {exc}") from exc
    except _USER_ERRORS as exc:
        raise click.ClickException(str(exc)) from exc
    except subprocess.CalledProcessError as exc:  # only the embedded server runs programs
        raise click.ClickException(
            f"The embedded PostgreSQL failed ({exc}); its log is the file `log` in its data "
            "directory."
        ) from exc


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine to completion, with `user_errors()` applied."""
    with user_errors():
        return asyncio.run(coroutine)


@dataclass(frozen=True)
class Target:
    """The database a command works on: a URL, or the embedded server in `data_dir`."""

    database_url: str | None
    schema: str
    data_dir: str | None

    def _settings(self) -> dict[str, Any]:
        """What every handle built here shares: the schema, the data directory, and never
        migrating (only `adk-memory migrate` changes a schema)."""
        return {"schema": self.schema, "data_dir": self.data_dir, "auto_migrate": False}

    def database(self) -> Database:
        return Database(self.database_url, **self._settings())

    def sessions(self, **options: Any) -> PostgresSessionService:
        return PostgresSessionService(self.database_url, **self._settings(), **options)

    def memory(self, **options: Any) -> PostgresMemoryService:
        return PostgresMemoryService(self.database_url, **self._settings(), **options)


def with_options(
    function: Callable[..., T], options: Sequence[Callable[[Callable[..., T]], Callable[..., T]]]
) -> Callable[..., T]:
    """`function` with click options applied so that `--help` lists them in the given order."""
    for option in reversed(options):
        function = option(function)
    return function


data_dir_option = click.option(
    "--data-dir",
    envvar=DATA_DIR_ENV,
    type=click.Path(file_okay=False),
    help=f"The embedded server's data directory (default ${DATA_DIR_ENV}, else ./.adk/pgdata).",
)


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
                "PostgreSQL in --data-dir)."
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


@dataclass(frozen=True)
class Generation:
    """The model that generates memories and the embedder that must match the agent's."""

    llm: BaseLlm
    embedder: Embedder | None


def _resolve_model(ctx: click.Context, param: click.Parameter, name: str) -> BaseLlm:
    try:
        return resolve_llm(name)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from exc


def generation_options(command: Callable[..., T]) -> Callable[..., T]:
    """Add `--model` and `--embedder`; the command receives `generation`."""

    @functools.wraps(command)
    def wrapper(*args: Any, model: BaseLlm, embedder: str, **kwargs: Any) -> T:
        overrides = click.get_current_context().find_object(Overrides) or Overrides()
        chosen = Generation(
            llm=overrides.llm or model,
            embedder=overrides.embedder or (GeminiEmbedder() if embedder == "gemini" else None),
        )
        return command(*args, generation=chosen, **kwargs)

    options = (
        click.option(
            "--model",
            envvar=MODEL_ENV,
            default=DEFAULT_MODEL,
            show_default=True,
            callback=_resolve_model,
            help=f"The generation model, any name ADK resolves (${MODEL_ENV}).",
        ),
        click.option(
            "--embedder",
            envvar=EMBEDDER_ENV,
            type=click.Choice(["gemini", "none"]),
            default="none",
            show_default=True,
            help=f"Must match the agent's memory service (${EMBEDDER_ENV}).",
        ),
    )
    return with_options(wrapper, options)


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(w|d|h|m|s)")
_UNIT_SECONDS = {"w": 604_800, "d": 86_400, "h": 3_600, "m": 60, "s": 1}


class Duration(click.ParamType):
    """A positive duration such as `90s`, `15m`, `12h`, `30d`, `2w` or `1d12h`."""

    name = "duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> timedelta:
        if isinstance(value, timedelta):
            return value
        text = str(value).strip().lower()
        parts = _DURATION_PART.findall(text)
        seconds = sum(float(n) * _UNIT_SECONDS[unit] for n, unit in parts)
        if not parts or "".join(n + u for n, u in parts) != text or seconds <= 0:
            self.fail(f"{value!r} is not a duration such as 90s, 15m, 12h, 30d or 1d12h.")
        return timedelta(seconds=seconds)


DURATION = Duration()
