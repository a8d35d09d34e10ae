"""Engines and connections.

Owns: turning the URLs users write (`postgresql://`, `postgres://`, `postgresql+asyncpg://`,
Unix-socket URLs, or nothing at all for the embedded server) into one SQLAlchemy `AsyncEngine`,
lending out its pooled asyncpg connections, and making sure the schema is migrated once per
process before the first statement runs. It never holds SQL of its own beyond that: the
statements live in the store module of each aggregate.

Hot paths borrow the raw asyncpg connection from SQLAlchemy's pool: the engine stays the one
object users configure and share, while each statement costs one prepared-statement round trip
instead of an ORM unit of work.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import asyncpg
from google.adk.errors.input_validation_error import InputValidationError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.util import greenlet_spawn

from . import embedded
from .migrations import migrate

_ACCEPTED_SCHEMES = {"postgresql", "postgres", "postgresql+asyncpg"}
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

T = TypeVar("T")

_CONNECTION_LOST = (
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CannotConnectNowError,
    ConnectionError,
)


def _is_lost(exc: BaseException, conn: asyncpg.Connection) -> bool:
    """Whether the connection, not the statement, failed: then the pool must drop it."""
    return isinstance(exc, _CONNECTION_LOST) or conn.is_closed()


DEFAULT_SCHEMA = "adk_memory"
"""The Postgres schema holding every adk-memory table, so they never collide with ADK's own
`sessions`/`events` tables (or anything else) in a shared database."""


def normalise_url(url: str) -> str:
    """Return `url` with the asyncpg driver named; reject URLs for other databases or drivers.

    ADK's own factory would hand a plain `postgresql://` URL to a synchronous driver; here every
    accepted spelling means asyncpg.
    """
    if not isinstance(url, str) or not url.strip():
        raise InputValidationError("The database URL must be a non-empty string.")
    try:
        parsed = make_url(url.strip())
    except ArgumentError as exc:
        raise InputValidationError(f"Not a database URL: {_redact(url)!r}.") from exc
    if parsed.drivername not in _ACCEPTED_SCHEMES:
        raise InputValidationError(
            f"Unsupported database URL scheme {parsed.drivername!r}: adk-memory needs PostgreSQL "
            "(postgresql://, postgres:// or postgresql+asyncpg://)."
        )
    return parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def _redact(url: str) -> str:
    """The URL with any password hidden, for error messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable URL>"


def validate_schema_name(schema: str) -> str:
    """Schema names end up in SQL text, so only plain lower-case identifiers are allowed."""
    if not isinstance(schema, str) or not _SCHEMA_NAME.match(schema):
        raise InputValidationError(
            f"Invalid schema name {schema!r}: use lower-case letters, digits and underscores."
        )
    return schema


class Database:
    """One engine, one schema, migrated once: the handle a service runs its statements through.

    Built from a URL, from an existing `AsyncEngine` (shared with other services, never disposed
    here), or from nothing (the embedded server, started lazily on first use so constructing a
    service never blocks the event loop).
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        engine: AsyncEngine | None = None,
        schema: str = DEFAULT_SCHEMA,
        data_dir: str | None = None,
        auto_migrate: bool = True,
        engine_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if database_url is not None and engine is not None:
            raise InputValidationError("Pass either a database URL or an engine, not both.")
        if engine is not None and engine.dialect.name != "postgresql":
            raise InputValidationError("The engine must be a PostgreSQL (asyncpg) engine.")
        self._url = normalise_url(database_url) if database_url is not None else None
        self._engine = engine
        self._owns_engine = engine is None
        self._data_dir = data_dir
        self._engine_kwargs = dict(engine_kwargs or {})
        self.schema = validate_schema_name(schema)
        self.auto_migrate = auto_migrate
        self._ready: set[str] = set()
        self._lock = asyncio.Lock()
        self._migrate_lock = asyncio.Lock()

    async def engine(self) -> AsyncEngine:
        """The engine, created (and the embedded server started) on first call."""
        if self._engine is None:
            async with self._lock:
                if self._engine is None:
                    url = self._url
                    if url is None:
                        raw = await asyncio.to_thread(embedded.embedded_url, self._data_dir)
                        url = normalise_url(raw)
                    self._engine = create_async_engine(url, **self._engine_kwargs)
        return self._engine

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[asyncpg.Connection]:
        """Borrow a pooled asyncpg connection; it goes back to the pool on exit, or is thrown
        away if it broke (a server restart, a killed backend) so the next caller gets a new one.
        """
        engine = await self.engine()
        proxied = await engine.raw_connection()
        conn: asyncpg.Connection = proxied.driver_connection
        while conn.is_closed():  # died while idle in the pool
            await greenlet_spawn(proxied.invalidate)
            proxied = await engine.raw_connection()
            conn = proxied.driver_connection
        try:
            yield conn
        except BaseException as exc:
            if _is_lost(exc, conn):
                # One lost connection usually means all of them (restart, failover): start a
                # fresh pool, as SQLAlchemy does on a disconnect. Connections in use elsewhere
                # finish their work and are discarded when returned.
                await greenlet_spawn(proxied.invalidate)
                await engine.dispose(close=False)
            raise
        finally:
            await greenlet_spawn(proxied.close)

    async def run(self, statement: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        """Run `statement` on a pooled connection, once more on a fresh one if the connection
        was lost mid-statement. Callers pass only statements that are safe to repeat (reads, and
        writes whose second attempt finds the first one's result)."""
        used: asyncpg.Connection | None = None
        try:
            async with self.connection() as conn:
                used = conn
                return await statement(conn)
        except Exception as exc:
            # Retried only after `connection()` has dropped the broken pool.
            if used is None or not _is_lost(exc, used):
                raise
        async with self.connection() as conn:
            return await statement(conn)

    async def ensure_migrated(self, component: str, steps: Sequence[str]) -> None:
        """Bring `component`'s tables up to date (or check them, with auto_migrate off), once."""
        if component in self._ready:
            return
        async with self._migrate_lock:
            if component in self._ready:
                return
            async with self.connection() as conn:
                await migrate(conn, self.schema, component, steps, apply=self.auto_migrate)
            self._ready.add(component)

    async def close(self) -> None:
        """Dispose of the engine if this handle created it; a shared engine is left alone."""
        if self._engine is not None and self._owns_engine:
            await self._engine.dispose()
            self._engine = None
            self._ready.clear()
