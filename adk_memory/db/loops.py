"""Connection pools per event loop: one engine usable from any event loop.

Owns: which pool a coroutine on the running event loop borrows from. An asyncpg connection
belongs to the loop that opened it (its socket is that loop's), so one pool shared by two loops
hands the second connections it cannot use ("Event loop is closed", "attached to a different
loop"): `asyncio.run` twice, ADK's synchronous `Runner.run`, a test client running its own loop
in a thread, a notebook beside a script. So each engine gets one pool per loop: the engine's own
pool (`engine.pool`, what a one-loop program sees, sizes and shares) on the first loop that
borrows, a copy of it on any other (`Pool.recreate`: the same size, options and pool events).
Each loop's pool is closed on that loop as it shuts down (`asyncio.run` and ADK's runner close
their loop's async generators before the loop: one parked here does it); one whose loop was
closed some other way is dropped without a statement on the dead loop, its sockets closing
with it. `dispose` closes them all. It never opens a connection and never holds SQL.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import Pool
from sqlalchemy.util import greenlet_spawn


class _LoopPools:
    """The pools of one engine, by event loop, and what closes each as its loop shuts down."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._home: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._copies: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = (
            weakref.WeakKeyDictionary()
        )
        self._closers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._adopting = threading.Lock()  # loops in two threads may both be first

    def _home_loop(self) -> asyncio.AbstractEventLoop | None:
        return self._home() if self._home is not None else None

    def current(self, loop: asyncio.AbstractEventLoop) -> Pool | None:
        """`loop`'s pool, None the first time `loop` borrows (`adopt` makes it)."""
        if self._home_loop() is loop:
            return self._engine.pool
        return self._copies.get(loop)

    async def adopt(self, loop: asyncio.AbstractEventLoop) -> Pool:
        """A pool for `loop`, the running loop, which has none yet: the engine's own when no
        live loop holds it (a dead loop's connections in it are dropped unclosed), else a
        copy; closed when `loop` shuts down."""
        with self._adopting:
            pool = self.current(loop)
            if pool is not None:
                return pool
            self._forget_closed_loops()
            home = self._home_loop()
            if home is None or home.is_closed():
                if self._home is not None:  # a dead loop's connections: dropped
                    self._engine.dispose(close=False)
                self._home = weakref.ref(loop)
                pool = self._engine.pool
            else:
                pool = self._copies[loop] = self._engine.pool.recreate()
        closer = self._close_at_shutdown()
        await closer.__anext__()  # parked: the loop's shutdown_asyncgens() resumes it
        self._closers[loop] = closer
        return pool

    def _forget_closed_loops(self) -> None:
        """Drop the copies and closers of loops closed without shutting down their async
        generators (both hold their loop: kept, the loop would never be freed)."""
        for loop in [loop for loop in self._closers if loop.is_closed()]:
            self._closers.pop(loop, None)
            self._copies.pop(loop, None)

    async def _close_at_shutdown(self) -> AsyncIterator[None]:
        """Parked until its loop shuts down, then closes that loop's pool. It holds no
        reference to the loop (the map of closers is keyed on it weakly)."""
        try:
            yield
        finally:
            await self._close(self._take(asyncio.get_running_loop()))

    def _take(self, loop: asyncio.AbstractEventLoop) -> Pool | None:
        """Remove `loop`'s pool from this engine's; the pool, to close on `loop`."""
        self._closers.pop(loop, None)
        if self._home_loop() is loop:
            pool = self._engine.pool
            self._home = None
            self._engine.dispose(close=False)  # a new pool for whichever loop comes next
            return pool
        return self._copies.pop(loop, None)

    @staticmethod
    async def _close(pool: Pool | None) -> None:
        """Close `pool`'s idle connections, on the running loop (theirs)."""
        if pool is not None:
            await greenlet_spawn(pool.dispose)

    def replace(self, loop: asyncio.AbstractEventLoop) -> None:
        """Give `loop` a new, empty pool; connections out of the old one are discarded when
        returned (a lost connection usually means all of them are: a restart, a failover)."""
        if self._home_loop() is loop:
            self._engine.dispose(close=False)
        elif loop in self._copies:
            self._copies[loop] = self._copies[loop].recreate()

    async def close_all(self) -> None:
        """Close every loop's pool: the running loop's here, a live loop's on that loop (not
        waited for: it may be busy), a dead loop's dropped unclosed."""
        running = asyncio.get_running_loop()
        home = self._home_loop()
        if home is None and self._home is not None:  # its loop is gone: dropped
            self._home = None
            self._engine.dispose(close=False)
        loops = [*self._copies, *([home] if home is not None else [])]
        for loop in loops:
            pool = self._take(loop)
            if loop is running:
                await self._close(pool)
            elif loop.is_running():
                asyncio.run_coroutine_threadsafe(self._close(pool), loop)


_POOLS: weakref.WeakKeyDictionary[AsyncEngine, _LoopPools] = weakref.WeakKeyDictionary()
"""Every engine's pools, shared by all the services using the engine."""


def _pools(engine: AsyncEngine) -> _LoopPools:
    pools = _POOLS.get(engine)
    if pools is None:
        pools = _POOLS[engine] = _LoopPools(engine.sync_engine)
    return pools


async def loop_pool(engine: AsyncEngine) -> Pool:
    """The pool of `engine` that coroutines on the running loop borrow from."""
    loop = asyncio.get_running_loop()
    pools = _pools(engine)
    pool = pools.current(loop)
    return pool if pool is not None else await pools.adopt(loop)


def renew_loop_pool(engine: AsyncEngine) -> None:
    """Replace the running loop's pool of `engine` with an empty one (`_LoopPools.replace`)."""
    _pools(engine).replace(asyncio.get_running_loop())


async def dispose(engine: AsyncEngine) -> None:
    """Close the pools of `engine` on every loop (`engine.dispose()` closes only its own pool).
    The engine stays usable: the next borrow opens new connections."""
    pools = _POOLS.pop(engine, None)
    if pools is not None:
        await pools.close_all()
    await engine.dispose()
