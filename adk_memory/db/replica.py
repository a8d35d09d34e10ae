"""The read replica's health: whether it may serve a read now, and whether its schema matches.

Owns: the rules `Database` routes reads by when it has a read URL (a streaming replica, a Cloud
SQL read replica, an AlloyDB read pool). A replica that cannot be reached is skipped for a
while (`RETRY_AFTER`) and reads go to the primary meanwhile, so a replica outage costs one
failed connection attempt per `RETRY_AFTER`, not one per read; a statement the replica
cancelled because replaying the primary's changes needed its rows (a recovery conflict) is run
again on the primary. A replica is used only once its schema is the one this process migrated
the primary to: right after a migration it may not have replayed it yet, so the first read
waits for it (`CATCH_UP`), and one still different after that is a `SchemaVersionError`
saying so (a read URL naming another database, never migrated, is the usual cause), raised at
once by the reads of the next `RETRY_AFTER` (a misconfiguration must not make every read wait),
then looked at again. After an erasure (`ErasureFences`), reads of the erased user go to the
primary until the replica has replayed the erasure's last commit (its replay position,
`pg_last_wal_replay_lsn()`, at or past the primary's WAL position taken after it).

It never writes to the replica, never migrates it and never holds SQL beyond reading the
version rows and vector catalog (`migrations.current_version`, `vectors.vector_state`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import timedelta
from typing import NamedTuple

import asyncpg

from .migrations import SchemaVersionError, current_version
from .vectors import vector_state

logger = logging.getLogger(__name__)

RETRY_AFTER = timedelta(seconds=30)
"""How long reads go to the primary after the replica could not be reached, before it is
tried again."""

CATCH_UP = timedelta(seconds=30)
"""How long the first read waits for the replica to replay the schema this process migrated
the primary to, before it is a `SchemaVersionError`."""

_POLL = 0.05
"""Seconds between two looks at the replica's schema while it catches up."""


def recovery_conflict(exc: BaseException) -> bool:
    """Whether the replica cancelled the statement because replaying the primary's changes
    needed what it was reading ("canceling statement due to conflict with recovery",
    SQLSTATE 40001): it succeeds on the primary."""
    return isinstance(exc, asyncpg.exceptions.SerializationError)


class ReplicaHealth:
    """What one `Database` knows of its replica: when it may be tried again after a failure,
    which schema it must have (the components and vector dimension this process readied on the
    primary) and which of those it was seen to have."""

    def __init__(self, schema: str) -> None:
        self._schema = schema
        self._retry_at = 0.0
        self._wanted: dict[str, int] = {}
        self._dimensions: int | None = None
        self._seen: set[str] = set()
        self._mismatch: SchemaVersionError | None = None
        self._mismatch_until = 0.0

    def usable(self) -> bool:
        """Whether reads may go to the replica now (not within `RETRY_AFTER` of a failure)."""
        return time.monotonic() >= self._retry_at

    def failed(self, exc: BaseException) -> None:
        """The replica could not be reached: reads go to the primary for `RETRY_AFTER`."""
        self._retry_at = time.monotonic() + RETRY_AFTER.total_seconds()
        logger.warning(
            "The read replica is unavailable (%s); reads go to the primary for %d s.",
            exc,
            RETRY_AFTER.total_seconds(),
        )

    def want(self, component: str, version: int) -> None:
        """The primary's `component` is at `version`: the replica must be too."""
        if self._wanted.get(component) != version:
            self._wanted[component] = version
            self._seen.discard(component)

    def want_vectors(self, dimensions: int) -> None:
        """The primary's vector column and index are in place for `dimensions`."""
        if self._dimensions != dimensions:
            self._dimensions = dimensions
            self._seen.discard("vectors")

    async def check(self, conn: asyncpg.Connection) -> None:
        """Return once the replica behind `conn` has every schema `want` named (free after the
        first time), waiting up to `CATCH_UP` for it to replay them."""
        if all(c in self._seen for c in self._wanted) and (
            self._dimensions is None or "vectors" in self._seen
        ):
            return
        if self._mismatch is not None and time.monotonic() < self._mismatch_until:
            raise self._mismatch
        deadline = time.monotonic() + CATCH_UP.total_seconds()
        while True:
            behind = await self._behind(conn)
            if not behind:
                self._mismatch = None
                return
            if time.monotonic() >= deadline:
                self._mismatch = SchemaVersionError(
                    f"The read replica's schema {self._schema!r} is not the primary's "
                    f"({'; '.join(behind)}) after {CATCH_UP.total_seconds():g} s: the read URL "
                    "must name a replica of the primary database (migrations run on the "
                    "primary only)."
                )
                self._mismatch_until = time.monotonic() + RETRY_AFTER.total_seconds()
                raise self._mismatch
            await asyncio.sleep(_POLL)

    async def _behind(self, conn: asyncpg.Connection) -> list[str]:
        """What the replica lacks, for the error message; marks what it has as seen."""
        behind = []
        for component, version in list(self._wanted.items()):
            if component in self._seen:
                continue
            there = await current_version(conn, self._schema, component)
            if there == version:
                self._seen.add(component)
            else:
                behind.append(f"{component} at version {there}, the primary at {version}")
        if self._dimensions is not None and "vectors" not in self._seen:
            state = await vector_state(conn, self._schema, self._dimensions)
            if state.tables and not state.pending:
                self._seen.add("vectors")
            else:
                behind.append(f"vectors for {self._dimensions} dimensions not in place")
        return behind


class ReadFor(NamedTuple):
    """Whose rows a replica read returns: one user of an app, every user of an app
    (`user_id` ""), or every app (both ""). `Database.run(..., replica=ReadFor(...))`."""

    app_name: str = ""
    user_id: str = ""


_REPLAYED = "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::text::pg_lsn, false)"
"""Whether the replica has replayed the primary's WAL up to $1 (false on a server that
reports no replay position: it is not known to have)."""


class ErasureFences:
    """The primary's WAL position after each erasure this process made, per read it concerns
    (the user's, their app's, every app's), until the replica is seen past it. Reads named
    by `ReadFor` go to the primary meanwhile: a lagging replica never returns an erased
    user's rows. Erasures are rare, and a fence goes at the first read the replica could
    serve, so this holds a few entries."""

    def __init__(self) -> None:
        self._positions: dict[ReadFor, str] = {}

    def erected(self, app_name: str, user_id: str, position: str) -> None:
        """The user was erased; the primary's WAL was at `position` after it."""
        for read in (ReadFor(app_name, user_id), ReadFor(app_name), ReadFor()):
            self._positions[read] = position  # a later erasure's position is never earlier

    async def passable(self, read: ReadFor, conn: asyncpg.Connection) -> bool:
        """Whether the replica behind `conn` may serve `read`: nothing fences it, or the
        replica has replayed past the fence (which then goes)."""
        position = self._positions.get(read)
        if position is None:
            return True
        if not await conn.fetchval(_REPLAYED, position):
            return False
        if self._positions.get(read) == position:
            del self._positions[read]
        return True
