"""What `configure()` resolves before it builds anything: typed, frozen `StackSettings`.

Owns: `configure()`'s precedence for every setting it reads from the environment (the argument
the caller wrote, else its `ADK_MEMORY_*` variable, else the database ADK's services were built
on in this process when none is named, else the documented default): the database (URL and read
replica with the environment's password, schema, data directory, timeouts), the session TTL,
the redactor, and the raw values of the model, the embedding model and the memory TTL, which
`adk_memory.adk.stack` weighs against the `MemoryBankConfig` the caller passed. It never builds
an engine, a service or a model and never connects.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Protocol

from ..config import DatabaseTimeouts
from ..db.engine import DEFAULT_SCHEMA
from ..db.urls import normalise_url
from ..errors import InputValidationError
from ..redaction import Redactor
from .database import DatabaseSettings
from .variables import (
    DATA_DIR_ENV,
    DATABASE_URL_ENV,
    EMBEDDING_MODEL_ENV,
    MEMORY_TTL_ENV,
    MODEL_ENV,
    READ_DATABASE_URL_ENV,
    REDACT_ENV,
    SCHEMA_ENV,
    SESSION_TTL_ENV,
    chosen,
    database_timeouts,
    embedded_data_dir,
    from_environ,
    parse_duration,
    parse_embedding_model,
    parse_redact,
    with_database_password,
)

__all__ = ["SharedDatabase", "StackSettings", "stack_settings"]


class SharedDatabase(Protocol):
    """The database ADK's services were built on in this process (`adk.shared_database.Where`):
    a server URL or the embedded server's data directory, and the schema."""

    @property
    def url(self) -> str | None: ...
    @property
    def data_dir(self) -> str | None: ...
    @property
    def schema(self) -> str: ...


@dataclass(frozen=True)
class StackSettings:
    """`configure()`'s settings, resolved (its docstring says what each means)."""

    database: DatabaseSettings
    """With a URL: the URL and the read replica's, passwords added, normalised; else the
    embedded server's absolute data directory."""
    session_ttl: timedelta | None
    redactor: Redactor | None
    model: str | None
    """`$ADK_MEMORY_MODEL` (the argument and the config's model are weighed by the stack)."""
    embedding_model: str | None
    """`$ADK_MEMORY_EMBEDDING_MODEL`, None for full-text search only."""
    memory_ttl: timedelta | None
    """`$ADK_MEMORY_MEMORY_TTL` (a TTL set on the caller's config wins)."""


def stack_settings(
    database_url: str | None,
    *,
    read_url: str | None,
    schema: str | None,
    data_dir: str | os.PathLike[str] | None,
    session_ttl: timedelta | None,
    redactor: Redactor | None,
    auto_migrate: bool,
    engine_kwargs: dict[str, Any] | None,
    timeouts: DatabaseTimeouts | None,
    environ: Mapping[str, str],
    shared: SharedDatabase | None,
) -> StackSettings:
    """Every setting: the argument, else its variable in `environ`, else (the database only)
    `shared`, else the default. A read replica without a primary URL, or a redactor without a
    `redact` method, is an InputValidationError; so is a variable whose value does not parse."""
    database = _database(database_url, read_url, schema, data_dir, environ, shared)
    if redactor is None:
        redactor = from_environ(environ, REDACT_ENV, parse_redact)
    elif not isinstance(redactor, Redactor):
        raise InputValidationError("redactor must have a `redact(text) -> str` method.")
    return StackSettings(
        database=replace(
            database,
            auto_migrate=auto_migrate,
            engine_kwargs=engine_kwargs,
            timeouts=timeouts if timeouts is not None else database_timeouts(environ),
        ),
        session_ttl=chosen(session_ttl, environ, SESSION_TTL_ENV, parse_duration),
        redactor=redactor,
        model=environ.get(MODEL_ENV) or None,
        embedding_model=parse_embedding_model(environ.get(EMBEDDING_MODEL_ENV)),
        memory_ttl=from_environ(environ, MEMORY_TTL_ENV, parse_duration),
    )


def _database(
    database_url: str | None,
    read_url: str | None,
    schema: str | None,
    data_dir: str | os.PathLike[str] | None,
    environ: Mapping[str, str],
    shared: SharedDatabase | None,
) -> DatabaseSettings:
    """Where the stack's database is: the URL (argument, else `$ADK_MEMORY_DATABASE_URL`), else
    `shared` when no data directory is named either (not a second database beside ADK's), else
    the embedded server's data directory (argument, else `$ADK_MEMORY_DATA_DIR`, else the
    default). The schema: argument, else `$ADK_MEMORY_SCHEMA`, else `shared`'s, else the
    default."""
    url = database_url or environ.get(DATABASE_URL_ENV) or None
    read = read_url or environ.get(READ_DATABASE_URL_ENV) or None
    if read is not None and url is None:
        raise InputValidationError(
            "A read replica needs the primary's database URL: the embedded server has no replicas."
        )
    fallback = DEFAULT_SCHEMA
    if shared is not None and url is None and not environ.get(DATA_DIR_ENV):
        url, data_dir, fallback = shared.url, shared.data_dir, shared.schema
    schema = schema or environ.get(SCHEMA_ENV) or fallback
    if url is None:
        return DatabaseSettings(
            None, schema=schema, data_dir=str(embedded_data_dir(data_dir, environ))
        )
    # The passwords go into the engines' in-memory URLs only.
    url = with_database_password(normalise_url(url), environ)
    if read is not None:
        read = with_database_password(normalise_url(read), environ)
    return DatabaseSettings(url, read_url=read, schema=schema)
