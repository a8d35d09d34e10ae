"""The audit of operator access: the statements on `operator_audit`.

Owns: adding a record (alone, after a read; or inside the caller's transaction, for a write
whose record must commit with it), listing records newest first by keyset (bounded pages), and
removing an erased user from the records (their app and user, their scope keys) while keeping
each record's kind, principal, time and counts. A record names who, what and when, and counts:
never any content (no fact text, no query), and this module has no column to put one in.

It never decides what is audited or who the principal is (`memory.service.audit` does), and
never deletes a record.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from ...db.engine import Database
from ..scope import read_for


def erased_key(erasure_id: uuid.UUID) -> str:
    """The scope key an erasure leaves in the records it scrubbed, and in its own record: a
    marker naming the erasure (whose record holds the app and the counts), not the user."""
    return f"erased:{erasure_id}"


_ADD = """
INSERT INTO {schema}.operator_audit
    (id, principal, kind, app_name, user_id, scope_key, memory_id, counts)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
ON CONFLICT (id) DO NOTHING
"""

# Every record naming the user, in any of their scopes, loses the user: what remains says an
# operator did this much to someone erased since (the marker names the erasure).
_SCRUB = """
UPDATE {schema}.operator_audit SET user_id = NULL, scope_key = $3, memory_id = NULL
WHERE app_name = $1 AND user_id = $2
"""

# Newest first; $4/$5 the last record of the page before (NULL: the first page).
_PAGE = """
SELECT id, create_time, principal, kind, app_name, user_id, scope_key, memory_id, counts::text
FROM {schema}.operator_audit
WHERE ($1::text IS NULL OR kind = $1)
  AND ($2::timestamptz IS NULL OR create_time >= $2)
  AND ($3::text IS NULL OR principal = $3)
  AND ($4::timestamptz IS NULL OR (create_time, id) < ($4, $5::uuid))
ORDER BY create_time DESC, id DESC
LIMIT $6
"""


@dataclass(frozen=True)
class AuditEntry:
    """One record to add: its id (chosen before the call, so a replay adds nothing), who,
    what kind, whose (app and user; None where the action names none) under which scope key,
    the one memory it was about (a page showing one), and counts."""

    id: uuid.UUID
    principal: str
    kind: str
    app_name: str | None
    user_id: str | None
    scope_key: str | None
    memory_id: str | None
    counts: Mapping[str, int]

    def arguments(self) -> tuple[object, ...]:
        """The `_ADD` parameters, in their `$n` order."""
        return (
            self.id,
            self.principal,
            self.kind,
            self.app_name,
            self.user_id,
            self.scope_key,
            self.memory_id,
            json.dumps(dict(self.counts)),
        )


@dataclass(frozen=True)
class AuditRecord:
    """One stored record, as listed (`user_id` None and `scope_key` `erased:<id>` once the
    user was erased)."""

    id: uuid.UUID
    time: datetime
    principal: str
    kind: str
    app_name: str | None
    user_id: str | None
    scope_key: str | None
    memory_id: str | None
    counts: dict[str, int]


class AuditStore:
    """`operator_audit`'s statements against one `Database` (each safe to replay)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._add = _ADD.format(schema=db.schema)
        self._scrub = _SCRUB.format(schema=db.schema)
        self._page = _PAGE.format(schema=db.schema)

    async def add(self, entry: AuditEntry) -> None:
        """Add a record on its own (after the action it records)."""
        args = entry.arguments()
        await self._db.run(lambda conn: conn.execute(self._add, *args))

    async def add_in(self, conn: asyncpg.Connection, entry: AuditEntry) -> None:
        """Add a record inside the caller's transaction on `conn` (it commits with the write it
        records, or not at all)."""
        await conn.execute(self._add, *entry.arguments())

    def alongside(self, entry: AuditEntry) -> Callable[[asyncpg.Connection], Awaitable[None]]:
        """`add_in` as a write another store makes inside its own transaction (`also`)."""

        async def add(conn: asyncpg.Connection) -> None:
            await self.add_in(conn, entry)

        return add

    async def scrub_in(
        self, conn: asyncpg.Connection, app_name: str, user_id: str, erasure_id: uuid.UUID
    ) -> None:
        """Inside the erasure's transaction: remove the user from every record naming them."""
        await conn.execute(self._scrub, app_name, user_id, erased_key(erasure_id))

    async def page(
        self,
        *,
        kind: str | None,
        since: datetime | None,
        principal: str | None,
        before: tuple[datetime, uuid.UUID] | None,
        limit: int,
    ) -> list[AuditRecord]:
        """Up to `limit` records, newest first, filtered; `before`: the time and id of the
        last record of the page before (None: the first page)."""
        at, last = before if before is not None else (None, None)
        args = (kind, since, principal, at, last, limit)
        # Every user's records: a replica serves only once it has replayed this process's
        # latest erasure (its scrub), so an erased user's name is never listed back.
        fenced = read_for(None)
        rows = await self._db.run(lambda conn: conn.fetch(self._page, *args), replica=fenced)
        return [
            AuditRecord(
                id=row[0],
                time=row[1],
                principal=row[2],
                kind=row[3],
                app_name=row[4],
                user_id=row[5],
                scope_key=row[6],
                memory_id=row[7],
                counts={k: int(v) for k, v in json.loads(row[8]).items()},
            )
            for row in rows
        ]
