"""Where a service's database is, resolved once into typed, frozen settings.

Owns: `DatabaseSettings` (the URL with its password, or the engine; the read replica; the
schema; the embedded server's data directory; migrating; the engine options; the timeouts) and
`database_settings`, the one resolver every service constructor, `configure()`, the service
URIs and the `adk-memory` command build a database through: ADK's spellings (`db_url`,
`db_engine`, engine options as keyword arguments: `adk_memory.db.arguments`) merged into
adk-memory's, then the argument, else the environment, else the default (the password for a
URL that carries none, the data directory when no URL or engine is given). It never connects:
`DatabaseSettings.database()` builds the lazy handle (`adk_memory.db.engine.Database`).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from ..config import DatabaseTimeouts
from ..db import embedded
from ..db.arguments import connection_arguments
from ..db.engine import DEFAULT_SCHEMA, Database
from .variables import (
    database_timeouts,
    embedded_data_dir,
    environment,
    row_level_security,
    with_database_password,
)

__all__ = [
    "DATABASE_ARGUMENTS",
    "DatabaseSettings",
    "command_database",
    "database_from",
    "database_settings",
    "embedded_url",
]


@dataclass(frozen=True)
class DatabaseSettings:
    """A service's database, every setting resolved (see `database_settings`)."""

    url: str | None
    """The server's URL, with the environment's password when it carried none (kept in memory
    only), or None: the engine below, else the embedded server in `data_dir`."""
    engine: AsyncEngine | None = None
    read_url: str | None = None
    read_engine: AsyncEngine | None = None
    schema: str = DEFAULT_SCHEMA
    data_dir: str | None = None
    """The embedded server's absolute data directory when neither a URL nor an engine is given
    (else as given: unused)."""
    auto_migrate: bool = True
    engine_kwargs: Mapping[str, Any] | None = None
    timeouts: DatabaseTimeouts | None = None
    row_level_security: bool = True
    """Whether the policed tables have row-level security on (`$ADK_MEMORY_ROW_LEVEL_SECURITY`,
    default on: `adk_memory.db.enforcement` says what off means)."""

    def arguments(self) -> dict[str, Any]:
        """These settings as a service's database arguments (what its constructor resolves back
        to these settings)."""
        return {
            "database_url": self.url,
            "engine": self.engine,
            "read_url": self.read_url,
            "read_engine": self.read_engine,
            "schema": self.schema,
            "data_dir": self.data_dir,
            "auto_migrate": self.auto_migrate,
            "engine_kwargs": dict(self.engine_kwargs) if self.engine_kwargs is not None else None,
            "timeouts": self.timeouts,
        }

    def database(self) -> Database:
        """The handle these settings describe (nothing connects until its first statement)."""
        return Database(
            self.url,
            engine=self.engine,
            schema=self.schema,
            data_dir=self.data_dir,
            auto_migrate=self.auto_migrate,
            engine_kwargs=dict(self.engine_kwargs) if self.engine_kwargs is not None else None,
            timeouts=self.timeouts,
            read_url=self.read_url,
            read_engine=self.read_engine,
            row_level_security=self.row_level_security,
        )


DATABASE_PARAMETERS = (
    "database_url",
    "engine",
    "db_url",
    "db_engine",
    "schema",
    "data_dir",
    "auto_migrate",
    "engine_kwargs",
    "timeouts",
    "read_url",
    "read_engine",
)
"""The database parameters both services' constructors take (their public spellings)."""


def constructor_database(
    owner: object, given: Mapping[str, Any], extra: Mapping[str, Any]
) -> DatabaseSettings:
    """The database a service's constructor was given (`given`: its `locals()`, holding
    `DATABASE_PARAMETERS`; `extra`: its other keyword arguments), resolved once as
    `database_settings` resolves them: one call for both services."""
    chosen = {name: given[name] for name in DATABASE_PARAMETERS}
    return database_settings(**chosen, extra=extra, owner=type(owner).__name__)


def database_settings(
    database_url: str | None = None,
    *,
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
    extra: Mapping[str, Any] | None = None,
    owner: str = "Database",
    environ: Mapping[str, str] | None = None,
) -> DatabaseSettings:
    """A service constructor's database arguments resolved: ADK's `db_url` / `db_engine` and
    the engine options in `extra` merged (`adk_memory.db.arguments.connection_arguments`:
    giving one thing twice is an error, an unknown argument of `owner`'s a TypeError); a URL
    without a password takes `$ADK_MEMORY_DATABASE_PASSWORD` (or `_FILE`), so a service built
    from a bare URL reaches the database `configure()` reaches; with neither URL nor engine,
    the data directory is the argument, else `$ADK_MEMORY_DATA_DIR`, else `./.adk/pgdata`.
    `environ` defaults to the process's environment."""
    where = connection_arguments(
        database_url,
        engine,
        engine_kwargs,
        db_url=db_url,
        db_engine=db_engine,
        extra=extra or {},
        owner=owner,
    )
    environ = environment(environ)
    url = where.database_url
    if url is not None:
        url = with_database_password(url, environ)
    elif where.engine is None:
        data_dir = str(embedded_data_dir(data_dir, environ))
    return DatabaseSettings(
        url=url,
        engine=where.engine,
        read_url=read_url,
        read_engine=read_engine,
        schema=schema,
        data_dir=data_dir,
        auto_migrate=auto_migrate,
        engine_kwargs=where.engine_kwargs,
        timeouts=timeouts,
        row_level_security=row_level_security(environ),
    )


DATABASE_ARGUMENTS = frozenset(inspect.signature(database_settings).parameters) - {
    "extra",
    "owner",
    "environ",
}
"""The database arguments a service takes (the ones `database_settings` resolves)."""


def database_from(arguments: dict[str, Any], **options: Any) -> DatabaseSettings:
    """`database_settings` for the database arguments in `arguments` (a service's arguments,
    as a URI's options give them), taken out of it; `options` go to `database_settings`."""
    given = {name: arguments.pop(name) for name in DATABASE_ARGUMENTS if name in arguments}
    return database_settings(**given, **options)


def command_database(
    database_url: str | None,
    *,
    schema: str,
    data_dir: str | None,
    environ: Mapping[str, str] | None = None,
) -> DatabaseSettings:
    """The database an `adk-memory` command works on (its options already read their
    variables): the URL with the environment's password, the timeouts
    `$ADK_MEMORY_STATEMENT_TIMEOUT` / `_CONNECT_TIMEOUT` / `_POOL_TIMEOUT` set, and never
    migrating (only `adk-memory migrate` changes a schema)."""
    environ = environment(environ)
    return database_settings(
        database_url,
        schema=schema,
        data_dir=data_dir,
        auto_migrate=False,
        timeouts=database_timeouts(environ),
        environ=environ,
    )


def embedded_url(
    data_dir: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> str:
    """Start (or reuse) the embedded server and return its `postgresql://` URL, its data
    directory chosen as every entry point chooses it: `data_dir`, else `$ADK_MEMORY_DATA_DIR`,
    else `./.adk/pgdata` (`adk_memory.db.embedded.embedded_url` on the resolved directory:
    `db/` itself never reads the environment). Blocking: async callers run it in a thread."""
    return embedded.embedded_url(embedded_data_dir(data_dir, environment(environ)))
