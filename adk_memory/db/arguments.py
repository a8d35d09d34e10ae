"""ADK's spellings of a service's connection arguments.

Owns: reading what ADK's `DatabaseSessionService` accepts (`db_url=`, `db_engine=`, and
SQLAlchemy engine options such as `pool_size=5` or `pool_pre_ping=True` as keyword arguments)
beside adk-memory's own `database_url`, `engine` and `engine_kwargs`, so that code written for
ADK's service keeps working when it switches to `PostgresSessionService` or
`PostgresMemoryService`. Both services read their arguments here (through
`adk_memory.settings.database_settings`), so the spellings mean the same to both. It never
builds the engine a service uses, never connects and never reads the environment (the settings
resolver adds the environment's password to the URL it returns).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from ..errors import InputTypeError, InputValidationError

_PLACEHOLDER_URL = "postgresql+asyncpg://"
"""What engine options are checked against: SQLAlchemy accepts or refuses an option by the
dialect and pool it configures, and building an engine connects to nothing."""


@dataclass(frozen=True)
class ConnectionArguments:
    """Where a service's database is, in adk-memory's own terms."""

    database_url: str | None
    engine: AsyncEngine | None
    engine_kwargs: dict[str, Any] | None


def _engine_option(name: str, value: Any) -> bool:
    """Whether SQLAlchemy's `create_async_engine` takes `name` for a PostgreSQL engine. A known
    option with a value it cannot use is an error here, not at the first query."""
    try:
        create_async_engine(_PLACEHOLDER_URL, **{name: value})
    except TypeError as exc:
        if str(exc).startswith("Invalid argument"):  # SQLAlchemy's words for an unknown option
            return False
        raise InputValidationError(f"Engine option {name}={value!r}: {exc}") from exc
    except Exception as exc:
        raise InputValidationError(f"Engine option {name}={value!r}: {exc}") from exc
    return True


def connection_arguments(
    database_url: str | None,
    engine: AsyncEngine | None,
    engine_kwargs: dict[str, Any] | None,
    *,
    db_url: str | None,
    db_engine: AsyncEngine | None,
    extra: Mapping[str, Any],
    owner: str,
) -> ConnectionArguments:
    """Merge ADK's spellings into adk-memory's: `db_url` is `database_url`, `db_engine` is
    `engine`, and every entry of `extra` that is a SQLAlchemy engine option joins
    `engine_kwargs`. Anything else in `extra` is no argument of `owner`'s: a TypeError, as
    Python's own check would raise (a misspelt argument is the usual cause). Giving one thing
    twice is an InputValidationError, and so are engine options beside an existing engine (ADK
    ignores them; here they would be lost silently)."""
    if db_url is not None:
        if database_url is not None:
            raise InputValidationError("Pass database_url or db_url (ADK's name), not both.")
        database_url = db_url
    if db_engine is not None:
        if engine is not None:
            raise InputValidationError("Pass engine or db_engine (ADK's name), not both.")
        engine = db_engine
    options = {name: value for name, value in extra.items() if _engine_option(name, value)}
    unexpected = sorted(set(extra) - set(options))
    if unexpected:
        raise InputTypeError(
            f"{owner}() got unexpected keyword arguments: {', '.join(unexpected)}."
        )
    if not options:
        return ConnectionArguments(database_url, engine, engine_kwargs)
    twice = sorted(set(options) & set(engine_kwargs or {}))
    if twice:
        raise InputValidationError(
            f"{', '.join(twice)} given both as an argument and in engine_kwargs."
        )
    if engine is not None:
        raise InputValidationError(
            f"Engine options ({', '.join(sorted(options))}) configure an engine the service "
            "builds from a URL; an engine passed in keeps its own."
        )
    return ConnectionArguments(database_url, engine, {**(engine_kwargs or {}), **options})
