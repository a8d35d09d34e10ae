"""Lending pooled connections: borrowing the raw asyncpg connection behind one of an engine's
pooled connections, and giving it back outside any transaction, or throwing it away.

Owns: what a failure means for a connection (lost, interrupted, timed out), the typed errors
for a timeout (`DatabaseTimeoutError`) or a refused connection (`DatabaseUnavailableError`),
and the clean-up no cancellation may cut short. It never runs a statement of its own beyond
the ROLLBACK that returns a connection clean, and never decides which engine to use
(`Database` does)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import NoReturn

import asyncpg
import sqlalchemy.exc
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import PoolProxiedConnection
from sqlalchemy.util import greenlet_spawn

from ..errors import (
    AdkMemoryError,
    DatabaseTimeoutError,
    DatabaseUnavailableError,
)
from .driver import CONNECT_FAILURES, driver_error
from .loops import loop_pool, renew_loop_pool
from .roles import denied

_CONNECTION_LOST = (
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CannotConnectNowError,
    ConnectionError,
)


def is_lost(exc: BaseException, conn: asyncpg.Connection) -> bool:
    """Whether the connection, not the statement, failed: then the pool must drop it. A timeout
    is not a loss: it is the caller's bound, reported as it is, never retried (a retry would
    double the wait)."""
    if isinstance(exc, DatabaseTimeoutError):
        return False
    return isinstance(exc, _CONNECTION_LOST) or conn.is_closed()


_RESET_TIMEOUT = 10.0
"""Seconds a connection going back to the pool may take to roll back a transaction left open;
a server that takes longer gets the connection closed instead."""


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


def raw_connection(proxied: PoolProxiedConnection) -> asyncpg.Connection:
    """The asyncpg connection behind a pooled one (a checked-out connection always has one)."""
    conn: asyncpg.Connection = proxied.driver_connection
    return conn


async def borrow(engine: AsyncEngine) -> PoolProxiedConnection:
    """A live connection from the running loop's pool of `engine` (`loops`); waiting too long
    for one (connect or pool timeout) is a `DatabaseTimeoutError`, a refused or impossible
    connection a `DatabaseUnavailableError`."""
    try:
        pool = await loop_pool(engine)
        proxied = await greenlet_spawn(pool.connect)
        while raw_connection(proxied).is_closed():  # died while idle in the pool
            await _uncancellable(greenlet_spawn(proxied.invalidate))
            proxied = await greenlet_spawn(pool.connect)
    except Exception as exc:
        typed = _as_timeout(exc, connecting=True) or _as_unavailable(exc)
        if typed is None:
            raise
        raise typed from driver_error(exc)
    return proxied


async def give_back(
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
    conn = raw_connection(proxied)
    lost = failure is not None and is_lost(failure, conn)
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


def raise_typed(exc: BaseException, conn: asyncpg.Connection | None = None) -> NoReturn:
    """Raise `exc`, a timeout as a `DatabaseTimeoutError`, a refused privilege as a
    `DatabasePermissionError` naming `conn`'s role (`roles.denied`)."""
    if isinstance(exc, asyncpg.exceptions.InsufficientPrivilegeError):
        user = getattr(conn.get_settings(), "session_authorization", None) if conn else None
        raise denied(exc, user) from exc
    timeout = _as_timeout(exc, connecting=False)
    if timeout is None:
        raise exc
    raise timeout from exc
