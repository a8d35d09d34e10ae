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
"""

from __future__ import annotations

import asyncio
import logging
import re
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any, NoReturn, TypeVar

import asyncpg
import sqlalchemy.exc
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import PoolProxiedConnection
from sqlalchemy.util import greenlet_spawn

from ..config import DatabaseTimeouts
from ..errors import (
    AdkMemoryError,
    DatabaseTimeoutError,
    DatabaseUnavailableError,
    InputValidationError,
)
from . import embedded
from .driver import CONNECT_FAILURES, driver_error
from .loops import dispose, loop_pool, renew_loop_pool
from .migrations import migrate
from .poolers import pooler_symptom, with_pooler
from .replica import ErasureFences, ReadFor, ReplicaHealth, recovery_conflict
from .urls import create_engine, normalise_url, parse_url, pooler_of
from .vectors import VectorState, migrate_vectors

logger = logging.getLogger(__name__)

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

T = TypeVar("T")

_CONNECTION_LOST = (
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CannotConnectNowError,
    ConnectionError,
)


def _is_lost(exc: BaseException, conn: asyncpg.Connection) -> bool:
    """Whether the connection, not the statement, failed: then the pool must drop it. A timeout
    is not a loss: it is the caller's bound, reported as it is, never retried (a retry would
    double the wait)."""
    if isinstance(exc, DatabaseTimeoutError):
        return False
    return isinstance(exc, _CONNECTION_LOST) or conn.is_closed()


DEFAULT_SCHEMA = "adk_memory"
"""The Postgres schema holding every adk-memory table, so they never collide with ADK's own
`sessions`/`events` tables (or anything else) in a shared database."""


def validate_schema_name(schema: str) -> str:
    """Schema names end up in SQL text, so only plain lower-case identifiers are allowed."""
    if not isinstance(schema, str) or not _SCHEMA_NAME.match(schema):
        raise InputValidationError(
            f"Invalid schema name {schema!r}: use lower-case letters, digits and underscores."
        )
    return schema


CLIENT_MARGIN = timedelta(seconds=2)
"""How much longer than the statement timeout the client waits before giving up on a statement
itself (asyncpg's `command_timeout`): a live server reports its own timeout first (and the
connection is kept); a server that stopped answering is caught by the client's."""

_RESET_TIMEOUT = 10.0
"""Seconds a connection going back to the pool may take to roll back a transaction left open;
a server that takes longer gets the connection closed instead."""


def _engine_options(
    timeouts: DatabaseTimeouts,
    engine_kwargs: Mapping[str, Any] | None = None,
    *,
    pooled: bool = False,
) -> dict[str, Any]:
    """`create_async_engine` arguments that enforce `timeouts`, under `engine_kwargs` (which
    win: `pool_timeout`, and `connect_args` and its `server_settings` key by key).

    Behind a pooler (`pooled`) the server-side timeouts are not sent: they would travel as
    startup parameters, which PgBouncer refuses ("unsupported startup parameter") unless its
    `ignore_startup_parameters` lists them, and then drops. The client's bound
    (`command_timeout`, which cancels the statement through the pooler) still holds; a server
    bound is set on the role (`ALTER ROLE ... SET statement_timeout`, see the README)."""
    given = dict(engine_kwargs or {})
    connect_args = dict(given.pop("connect_args", None) or {})
    settings = dict(connect_args.pop("server_settings", None) or {})
    client: dict[str, Any] = {"timeout": _seconds(timeouts.connect)}
    server: dict[str, str] = {}
    if timeouts.statement is not None:
        client["command_timeout"] = _seconds(timeouts.statement + CLIENT_MARGIN)
        server["statement_timeout"] = _milliseconds(timeouts.statement)
    if timeouts.idle_in_transaction is not None:
        server["idle_in_transaction_session_timeout"] = _milliseconds(timeouts.idle_in_transaction)
    if pooled:
        server = {}
    return {
        "pool_timeout": timeouts.pool.total_seconds(),
        **given,
        "connect_args": {**client, **connect_args, "server_settings": {**server, **settings}},
    }


def _seconds(duration: timedelta | None) -> float | None:
    """A duration as asyncpg takes it: seconds, None for no limit."""
    return None if duration is None else duration.total_seconds()


def _milliseconds(duration: timedelta) -> str:
    """A duration as a Postgres time setting's value (milliseconds, at least 1: 0 means off)."""
    return str(max(1, round(duration.total_seconds() * 1000)))


def make_engine(
    url: str, timeouts: DatabaseTimeouts | None = None, **engine_kwargs: Any
) -> AsyncEngine:
    """An engine for `url` (`adk_memory.db.urls.create_engine`) bounded by `timeouts` (default
    `DatabaseTimeouts()`): the one way adk-memory builds an engine, and the way to build one to
    share between services. A `connect_timeout` in the URL wins over `timeouts.connect`."""
    pooled = parse_url(url).pooler is not None
    options = _engine_options(timeouts or DatabaseTimeouts(), engine_kwargs, pooled=pooled)
    return create_engine(url, **options)


def _as_timeout(exc: BaseException, *, connecting: bool) -> DatabaseTimeoutError | None:
    """The typed error for a timeout the pool, the driver or the server reported; None for any
    other exception (one already typed included)."""
    if isinstance(exc, DatabaseTimeoutError):
        return None
    if isinstance(exc, sqlalchemy.exc.TimeoutError):
        return DatabaseTimeoutError(f"No pooled database connection came free in time: {exc}")
    if isinstance(exc, asyncpg.exceptions.QueryCanceledError):
        return DatabaseTimeoutError(f"The database cancelled the statement: {exc}.")
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        if connecting:
            return DatabaseTimeoutError("Could not connect to the database in time.")
        return DatabaseTimeoutError(
            "The database did not answer in time (the server may be hung or unreachable)."
        )
    return None


def _interrupted(exc: BaseException | None) -> bool:
    """Whether `exc` may have cut a statement off before the server answered (a cancellation,
    the client-side timeout, an interrupt). Then the connection's state is unknown: a statement
    may still be running, a BEGIN may have started a transaction the driver has not seen (and
    asyncpg's own record of it, which decides whether its next transaction block is a
    savepoint, may be stale), so it cannot be reused. Any other exception came after the
    server's answer, which told the driver exactly where the connection stands."""
    return exc is not None and (not isinstance(exc, Exception) or _timed_out(exc))


def _timed_out(exc: BaseException | None) -> bool:
    """Whether `exc` is the client giving up on a server that did not answer in time."""
    return isinstance(exc, (TimeoutError, asyncio.TimeoutError))


async def _uncancellable(work: Awaitable[None]) -> None:
    """Run `work` to its end even if the caller is cancelled meanwhile, then re-raise the
    cancellation: a connection must never go back to the pool half cleaned up. A cancellation
    that arrives just as `work` ends is re-raised too: swallowed, it would leave a cancelled
    task running on (a worker loop that `stop` then waits for forever)."""
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            cancelled = exc
    task.result()
    if cancelled is not None:
        raise cancelled


def _as_unavailable(exc: BaseException) -> DatabaseUnavailableError | None:
    """The typed error for a connection the server refused or could not be opened; None for
    anything else. The message keeps the driver's words (which role, which database)."""
    cause = driver_error(exc)
    if isinstance(cause, CONNECT_FAILURES) and not isinstance(cause, AdkMemoryError):
        return DatabaseUnavailableError(f"Could not connect to the database: {cause}")
    return None


def _driver(proxied: PoolProxiedConnection) -> asyncpg.Connection:
    """The asyncpg connection behind a pooled one (a checked-out connection always has one)."""
    conn: asyncpg.Connection = proxied.driver_connection
    return conn


async def _borrow(engine: AsyncEngine) -> PoolProxiedConnection:
    """A live connection from the running loop's pool of `engine` (`loops`); waiting too long
    for one (connect or pool timeout) is a `DatabaseTimeoutError`, a refused or impossible
    connection a `DatabaseUnavailableError`."""
    try:
        pool = await loop_pool(engine)
        proxied = await greenlet_spawn(pool.connect)
        while _driver(proxied).is_closed():  # died while idle in the pool
            await _uncancellable(greenlet_spawn(proxied.invalidate))
            proxied = await greenlet_spawn(pool.connect)
    except Exception as exc:
        typed = _as_timeout(exc, connecting=True) or _as_unavailable(exc)
        if typed is None:
            raise
        raise typed from driver_error(exc)
    return proxied


async def _give_back(
    engine: AsyncEngine, proxied: PoolProxiedConnection, failure: BaseException | None
) -> None:
    """Return a borrowed connection to the pool outside any transaction, or throw it away.

    SQLAlchemy's reset-on-return cannot do this: it rolls back only the transactions it began
    itself, never one begun on the raw asyncpg connection. So: a transaction left open is rolled
    back; a connection whose state is unknown (`_interrupted`) is rolled back too (whatever the
    driver believes), then closed and dropped from the pool. That rollback waits for the
    statement the interruption cut off (asyncpg asks the server to cancel it), so the write is
    decided, whole or not at all, before the caller hears of the interruption. A connection
    whose rollback fails, or whose server did not answer in time, is closed at once; a lost one
    renews the whole pool (one lost connection usually means all of them: a restart, a
    failover; connections in use elsewhere are discarded when returned). The usual case, a
    clean connection, costs no round trip.
    """
    conn = _driver(proxied)
    lost = failure is not None and _is_lost(failure, conn)
    if not lost and not _interrupted(failure) and not conn.is_in_transaction():
        await greenlet_spawn(proxied.close)
        return

    async def clean() -> None:
        discard = lost or _interrupted(failure)
        if not lost and not _timed_out(failure) and (discard or conn.is_in_transaction()):
            try:
                await conn.execute("ROLLBACK", timeout=_RESET_TIMEOUT)
            except BaseException:  # whatever went wrong, the connection goes
                discard = True
        if discard:
            conn.terminate()  # at once: a hung server would stall a polite close
            await greenlet_spawn(proxied.invalidate)
        else:
            await greenlet_spawn(proxied.close)
        if lost:
            renew_loop_pool(engine)

    await _uncancellable(clean())


def _raise_typed(exc: BaseException) -> NoReturn:
    """Raise `exc`, a timeout as a `DatabaseTimeoutError`."""
    timeout = _as_timeout(exc, connecting=False)
    if timeout is None:
        raise exc
    raise timeout from exc


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
                proxied = await _borrow(read)
            except (DatabaseUnavailableError, DatabaseTimeoutError) as exc:
                self._replica.failed(exc)
            else:
                try:
                    await self._replica.check(_driver(proxied))
                    passable = not isinstance(replica, ReadFor) or await self._fences.passable(
                        replica, _driver(proxied)
                    )
                except BaseException as exc:
                    await _give_back(read, proxied, exc)
                    raise
                if passable:
                    return read, proxied, True
                await _give_back(read, proxied, None)
        engine = await self.engine()
        return engine, await _borrow(engine), False

    @asynccontextmanager
    async def connection(self, *, replica: bool = False) -> AsyncIterator[asyncpg.Connection]:
        """Borrow a pooled asyncpg connection: the replica's if `replica` and it can serve
        (only ever for reads), else the primary's. It goes back to the pool outside any
        transaction whatever happened, even if the caller is cancelled, or is thrown away
        (`_give_back`), so the next caller never inherits a transaction. A timeout is a
        `DatabaseTimeoutError`.
        """
        engine, proxied, _ = await self._checkout(replica)
        failure: BaseException | None = None
        try:
            yield _driver(proxied)
        except BaseException as exc:
            failure = exc
            _raise_typed(exc)
        finally:
            await _give_back(engine, proxied, failure)

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
        attempt.conn = conn = _driver(proxied)
        failure: BaseException | None = None
        try:
            return await statement(conn)
        except BaseException as exc:
            failure = exc
            _raise_typed(exc)
        finally:
            await _give_back(engine, proxied, failure)

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
            # Retried only after `_give_back` has dropped the broken pool.
            conflict = first.on_replica and recovery_conflict(exc)
            if first.conn is None or not (conflict or _is_lost(exc, first.conn)):
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
