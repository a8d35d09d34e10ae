"""Engines and connections.

Owns: turning a database URL (read by `adk_memory.db.urls`, the one parser), or nothing at all
for the embedded server, into one SQLAlchemy `AsyncEngine` bounded by `DatabaseTimeouts`,
lending out its pooled asyncpg connections (a timeout is a `DatabaseTimeoutError`; every
connection goes back to the pool outside any transaction, or is closed), and making sure the
schema is migrated once per process before the first statement runs. It never holds SQL of its
own beyond that (a connection's ROLLBACK): the statements live in the store module of each
aggregate.

With a read URL (a streaming replica, a Cloud SQL read replica, an AlloyDB read pool) it holds
a second engine, built the same way, for the reads a caller routes there (`replica=True`):
writes, the job queue and migrations always use the primary; `db/replica.py` decides whether
the replica may serve a read now, and a read it cannot serve goes to the primary.

Hot paths borrow the raw asyncpg connection from SQLAlchemy's pool: the engine stays the one
object users configure and share, while each statement costs one prepared-statement round trip
instead of an ORM unit of work. The pool is the running event loop's (`db/loops.py`), so one
service works from any loop: `asyncio.run` twice, ADK's synchronous runner, a test client.

This module holds the handle (`Database`: which engine, which connection, migrated once, a
statement replayed on a lost connection); `db/factory.py` builds the engines and
`db/lending.py` lends and takes back their connections.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import PoolProxiedConnection

from ..config import DatabaseTimeouts
from ..errors import (
    DatabaseTimeoutError,
    DatabaseUnavailableError,
    InputValidationError,
)
from . import embedded
from .enforcement import RlsState, apply_setting
from .factory import DEFAULT_SCHEMA, make_engine, validate_schema_name
from .lending import borrow, give_back, is_lost, raise_typed, raw_connection
from .loops import dispose
from .migrations import migrate
from .poolers import pooler_symptom, with_pooler
from .replica import ErasureFences, ReadFor, ReplicaHealth, recovery_conflict
from .urls import normalise_url, parse_url, pooler_of
from .vectors import VectorState, migrate_vectors

__all__ = ["DEFAULT_SCHEMA", "Database", "make_engine", "normalise_url", "validate_schema_name"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


_WAL_POSITION = "SELECT pg_current_wal_lsn()::text"
"""The primary's WAL position now: past the commit of everything committed before."""


class _Attempt:
    """Which connection one try of `Database.run` got, and whether it is the replica's."""

    __slots__ = ("conn", "on_replica")

    def __init__(self) -> None:
        self.conn: asyncpg.Connection | None = None
        self.on_replica = False


class Database:
    """One engine, one schema, migrated once: the handle a service runs its statements through.

    Built from a URL, from an existing `AsyncEngine` (shared with other services, never disposed
    here), or from nothing (the embedded server, started lazily on first use so constructing a
    service never blocks the event loop). `timeouts` bound the engine it builds (default
    `DatabaseTimeouts()`); an engine passed in keeps its own.

    `read_url` or `read_engine` name a read replica of that database (not of the embedded
    server): `run(..., replica=True)` and `connection(replica=True)` use it, with the same
    timeouts and engine options, while it is reachable and its schema is the primary's
    (`ReplicaHealth`); everything else uses the primary.
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
        timeouts: DatabaseTimeouts | None = None,
        read_url: str | None = None,
        read_engine: AsyncEngine | None = None,
        row_level_security: bool = True,
    ) -> None:
        if database_url is not None and engine is not None:
            raise InputValidationError("Pass either a database URL or an engine, not both.")
        if read_url is not None and read_engine is not None:
            raise InputValidationError("Pass either a read URL or a read engine, not both.")
        replica = read_url is not None or read_engine is not None
        if replica and database_url is None and engine is None:
            raise InputValidationError(
                "A read replica needs the primary's database URL (or engine): the embedded "
                "server has no replicas."
            )
        if timeouts is not None and not isinstance(timeouts, DatabaseTimeouts):
            raise InputValidationError("timeouts must be a DatabaseTimeouts.")
        if timeouts is not None and (engine is not None or read_engine is not None):
            raise InputValidationError(
                "timeouts bound the engine a service builds; build a shared engine with "
                "make_engine(url, timeouts) instead."
            )
        for given in (engine, read_engine):
            if given is not None and (
                not isinstance(given, AsyncEngine) or given.dialect.name != "postgresql"
            ):
                raise InputValidationError("The engine must be a PostgreSQL (asyncpg) engine.")
        self._url = normalise_url(database_url) if database_url is not None else None
        self._engine = engine
        self._owns_engine = engine is None
        self._read_url = normalise_url(read_url) if read_url is not None else None
        self._read_engine = read_engine
        self._owns_read_engine = read_engine is None
        self.has_replica = replica
        """Whether reads routed with `replica=True` may go to a replica."""
        self._data_dir = data_dir
        if database_url is None and engine is None:
            # Built in the main thread (the server starts later, in a worker thread): SIGTERM
            # must unwind this process so that it releases the embedded server on exit.
            embedded.exit_on_sigterm()
        self._engine_kwargs = dict(engine_kwargs or {})
        self.timeouts = None if engine is not None else timeouts or DatabaseTimeouts()
        """What bounds the engine this handle builds; None for an engine passed in (it keeps
        its own settings)."""
        self.schema = validate_schema_name(schema)
        self.auto_migrate = auto_migrate
        self.row_level_security = row_level_security
        """Whether the policed tables should have row-level security on (`db/enforcement.py`:
        applied by a process that migrates, checked by every process)."""
        self.rls: RlsState | None = None
        """Row-level security as this handle's role met it at its last migration check."""
        self._replica = ReplicaHealth(self.schema)
        self._fences = ErasureFences()
        self._ready: set[str] = set()
        self._found_a_pooler = False
        """Whether `_found_pooler` rebuilt the engine for a pooler the URL did not name."""
        self._locks: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[asyncio.Lock, asyncio.Lock]
        ] = weakref.WeakKeyDictionary()

    def _loop_locks(self) -> tuple[asyncio.Lock, asyncio.Lock]:
        """The running loop's locks (an asyncio lock is one loop's): one for building the
        engines, one for migrating. Loops in other threads migrate under the database's own
        advisory locks."""
        loop = asyncio.get_running_loop()
        locks = self._locks.get(loop)
        if locks is None:
            locks = self._locks[loop] = (asyncio.Lock(), asyncio.Lock())
        return locks

    @property
    def pooler(self) -> str | None:
        """The connection pooler in front of the primary ("transaction" or "session", from its
        URL: `?pooler=` or a hosted pooler's address), None for a direct connection."""
        if self._url is not None:
            return parse_url(self._url).pooler
        return pooler_of(self._engine) if self._engine is not None else None

    async def engine(self) -> AsyncEngine:
        """The engine, created (and the embedded server started) on first call."""
        if self._engine is None:
            async with self._loop_locks()[0]:
                if self._engine is None:
                    url = self._url
                    if url is None:
                        raw = await asyncio.to_thread(embedded.embedded_url, self._data_dir)
                        url = normalise_url(raw)
                    built = make_engine(url, self.timeouts, **self._engine_kwargs)
                    if self._engine is None:  # a loop in another thread may have been first
                        self._engine = built
        return self._engine

    async def _read_engine_now(self) -> AsyncEngine | None:
        """The replica's engine (created on first call), or None: no replica, or one that
        failed recently (`ReplicaHealth.usable`)."""
        if not self.has_replica or not self._replica.usable():
            return None
        if self._read_engine is None:
            async with self._loop_locks()[0]:
                if self._read_engine is None and self._read_url is not None:
                    self._read_engine = make_engine(
                        self._read_url, self.timeouts, **self._engine_kwargs
                    )
        return self._read_engine

    async def _checkout(
        self, replica: bool | ReadFor
    ) -> tuple[AsyncEngine, PoolProxiedConnection, bool]:
        """A pooled connection, its engine, and whether it is the replica's: the replica's when
        `replica` asks for it and it can serve (one that cannot be reached raises nothing here:
        the primary serves; one whose schema is not the primary's in time is a
        `SchemaVersionError`; one that has not replayed an erasure of the user `replica`
        names, as `ErasureFences` says, leaves the read to the primary)."""
        read = await self._read_engine_now() if replica else None
        if read is not None:
            try:
                proxied = await borrow(read)
            except (DatabaseUnavailableError, DatabaseTimeoutError) as exc:
                self._replica.failed(exc)
            else:
                try:
                    await self._replica.check(raw_connection(proxied))
                    passable = not isinstance(replica, ReadFor) or await self._fences.passable(
                        replica, raw_connection(proxied)
                    )
                except BaseException as exc:
                    await give_back(read, proxied, exc)
                    raise
                if passable:
                    return read, proxied, True
                await give_back(read, proxied, None)
        engine = await self.engine()
        return engine, await borrow(engine), False

    @asynccontextmanager
    async def connection(self, *, replica: bool = False) -> AsyncIterator[asyncpg.Connection]:
        """Borrow a pooled asyncpg connection: the replica's if `replica` and it can serve
        (only ever for reads), else the primary's. It goes back to the pool outside any
        transaction whatever happened, even if the caller is cancelled, or is thrown away
        (`give_back`), so the next caller never inherits a transaction. A timeout is a
        `DatabaseTimeoutError`.
        """
        engine, proxied, _ = await self._checkout(replica)
        failure: BaseException | None = None
        conn = raw_connection(proxied)
        try:
            yield conn
        except BaseException as exc:
            failure = exc
            raise_typed(exc, conn)
        finally:
            await give_back(engine, proxied, failure)

    async def _run_once(
        self,
        statement: Callable[[asyncpg.Connection], Awaitable[T]],
        replica: bool | ReadFor,
        attempt: _Attempt,
    ) -> T:
        """`statement` on a connection lent and given back as `connection` does, spelt out:
        a generator-based context manager costs every call of the hot path ~15 us more.
        `attempt` records the connection used and whether it is the replica's (a failure
        there decides whether `run` tries again)."""
        engine, proxied, attempt.on_replica = await self._checkout(replica)
        attempt.conn = conn = raw_connection(proxied)
        failure: BaseException | None = None
        try:
            return await statement(conn)
        except BaseException as exc:
            failure = exc
            raise_typed(exc, conn)
        finally:
            await give_back(engine, proxied, failure)

    async def run(
        self,
        statement: Callable[[asyncpg.Connection], Awaitable[T]],
        *,
        replica: bool | ReadFor = False,
    ) -> T:
        """Run `statement` on a pooled connection, once more on a fresh one if the connection
        was lost mid-statement. With `replica` (a read that may be a little behind the
        primary), on the replica when there is one that can serve; a read the replica cancels
        (a recovery conflict) runs once more, on the primary. A `ReadFor` says whose rows the
        read returns: after this process erased that user (`fence_replica`), it is served by
        the replica only once the replica has replayed the erasure.

        The contract every caller keeps: `statement` is safe to replay, and its replay returns
        the original result. A lost connection does not say whether the first attempt
        committed: the server may have committed it and only the reply was lost (a network
        drop, an immediate shutdown). So every write is written to recognise its own earlier
        commit:

        - ids (and per-call request ids) are generated in Python before the first attempt, so
          the replay carries the same ones: build the arguments outside `statement`, never in
          it;
        - the statement finds what its first attempt wrote (`ON CONFLICT`, or an "already
          mine" check on the request id it stored) and returns that result instead of writing
          again or reporting a conflict;
        - one that cannot rebuild its result from what it wrote (counting deletions) records
          the result under its request id (`db.replies`);
        - a transaction (several statements) runs whole inside `statement`, so its replay
          starts it again from the top.

        A natural key chosen by the caller is not a request id: another call with the same key
        still gets its conflict. Reads are trivially safe. A second lost connection, or any
        other error, propagates: the write then either committed once or not at all.
        """
        first = _Attempt()
        try:
            return await self._run_once(statement, replica, first)
        except Exception as exc:
            if await self._found_pooler(exc):
                return await self._run_once(statement, replica, _Attempt())
            # Retried only after `give_back` has dropped the broken pool.
            conflict = first.on_replica and recovery_conflict(exc)
            if first.conn is None or not (conflict or is_lost(exc, first.conn)):
                raise
        return await self._run_once(statement, False if conflict else replica, _Attempt())

    async def fence_replica(self, app_name: str, user_id: str) -> None:
        """The user was just erased (committed): until the replica has replayed the primary's
        WAL as it is now, reads of theirs (`ReadFor`), of their app's users and of every app
        go to the primary. Nothing to do without a replica."""
        if self.has_replica:
            position = await self.run(lambda conn: conn.fetchval(_WAL_POSITION))
            self._fences.erected(app_name, user_id, str(position))

    async def ensure_migrated(self, component: str, steps: Sequence[str]) -> None:
        """Bring `component`'s tables up to date (or check them, with auto_migrate off), once."""
        if component in self._ready:
            return
        async with self._loop_locks()[1]:
            if component in self._ready:
                return
            version = await self._migrating(
                lambda conn: migrate(conn, self.schema, component, steps, apply=self.auto_migrate)
            )
            self.rls = await self._migrating(
                lambda conn: apply_setting(
                    conn, self.schema, self.row_level_security, change=self.auto_migrate
                )
            )
            self._replica.want(component, version)
            self._ready.add(component)

    async def ensure_vectors(self, dimensions: int) -> VectorState:
        """Bring the memory table's embedding column and vector index up to what `dimensions`
        needs (or check them, with auto_migrate off); where they stand. Each call reads the
        catalog (a first use's cost, like `ensure_migrated`'s): callers keep the answer."""
        async with self._loop_locks()[1]:
            state = await self._migrating(
                lambda conn: migrate_vectors(
                    conn,
                    self.schema,
                    dimensions,
                    apply=self.auto_migrate,
                    in_one_transaction=self.pooler == "transaction",
                )
            )
        self._replica.want_vectors(dimensions)
        return state

    async def _migrating(self, work: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        """`work` (a migration: it finds what an earlier try did) on a primary connection, once
        more if the first try showed a pooler the URL did not name (`_found_pooler`)."""
        try:
            async with self.connection() as conn:
                return await work(conn)
        except Exception as exc:
            if not await self._found_pooler(exc):
                raise
        async with self.connection() as conn:
            return await work(conn)

    async def _found_pooler(self, exc: BaseException) -> bool:
        """Whether `exc` showed a connection pooler the URL did not name (`db/poolers.py`) and
        the engine was rebuilt for one (as for `?pooler=transaction`, right in either mode):
        the caller then tries again. An engine passed in (`engine=`, as `configure()` shares
        one between its services) cannot be rebuilt here: the log says what to add to the URL
        it was built from."""
        symptom = pooler_symptom(exc)
        if symptom is None:
            return False
        if self._found_a_pooler:  # a call begun on the engine before the switch
            return True
        if self.pooler is not None:
            return False
        if self._url is None or not self._owns_engine:
            logger.error(
                "The database is behind a connection pooler: %s. A shared engine (the one "
                "configure() builds, or one passed as engine=) is not rebuilt: add "
                "?pooler=transaction (or session) to its URL (see the README's Connection "
                "poolers).",
                symptom,
            )
            return False
        logger.warning(
            "The database is behind a connection pooler: %s. Connecting again as for "
            "?pooler=transaction; add it to the URL to start that way (see the README's "
            "Connection poolers).",
            symptom,
        )
        self._url = with_pooler(self._url, "transaction")
        self._found_a_pooler = True
        old, self._engine = self._engine, None
        if old is not None:
            await dispose(old)
        return True

    async def close(self) -> None:
        """Dispose of the engines this handle created, their pools on every event loop;
        shared engines are left alone."""
        if self._read_engine is not None and self._owns_read_engine:
            await dispose(self._read_engine)
            self._read_engine = None
        if self._engine is not None and self._owns_engine:
            await dispose(self._engine)
            self._engine = None
            self._ready.clear()
