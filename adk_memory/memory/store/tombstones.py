"""Tombstones: what an erasure removed, kept as keyed hashes so that nothing brings it back.

Owns: the database's tombstone key, the digests, the erasure record's life (begun, counted
step by step, finished) and the lookups imports and replays make. A tombstone is
HMAC-SHA256, under a random 32-byte key generated once per database and stored in it
(`memory_tombstone_key`), of a kind and an identity: the erased user (app, user), each of
their session ids and each memory id they had. It holds no text and cannot be listed back
into ids: only someone who already has an id (an import file, a replayed session) and the
database can tell that it was erased. The user's tombstone keeps the time of their latest
erasure and names the erasure record, so a run after a crash goes on with the same record.
The erasure's first transaction also removes the user from the operators' audit
(`store.audit`), and its last adds the erasure's own audit record, with its counts (and
removes the user from any record added while it ran).

It never deletes anything but the tombstones an operator lifts, and never decides what is
refused: the callers (the importers, `add_session_to_memory`) do, and say so.
"""

from __future__ import annotations

import hmac
import json
import secrets
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from enum import Enum

import asyncpg

from ...db import rls
from ...db.engine import Database
from ..scope import ALL_SCOPES_GATE
from .audit import AuditEntry, AuditStore


class Kind(str, Enum):
    """What a tombstone stands for."""

    USER = "user"
    SESSION = "session"
    MEMORY = "memory"


_KEY = """
WITH made AS (
    INSERT INTO {schema}.memory_tombstone_key (key) VALUES ($1)
    ON CONFLICT (singleton) DO NOTHING RETURNING key
)
SELECT key FROM made UNION ALL SELECT key FROM {schema}.memory_tombstone_key LIMIT 1
"""

_READ_KEY = "SELECT key FROM {schema}.memory_tombstone_key"

# The unfinished erasure of the user whose tombstone is $1, if any: its id and counts so far.
_RUNNING = """
SELECT e.id, e.counts::text FROM {schema}.memory_tombstones t
JOIN {schema}.erasures e ON e.id = t.erasure_id AND e.finish_time IS NULL
WHERE t.digest = $1
"""

_BEGIN = """
INSERT INTO {schema}.erasures (id, app_name, counts, start_time) VALUES ($1, $2, '{{}}', $3)
ON CONFLICT (id) DO NOTHING
"""

# A tombstone of an erasure ($2) that exists already (erased before, and again) is renewed:
# its time is the latest erasure's, which is what the import rule compares with.
_BURY = """
INSERT INTO {schema}.memory_tombstones (digest, erasure_id)
SELECT d, $2 FROM unnest($1::bytea[]) d
ON CONFLICT (digest) DO UPDATE SET erasure_id = EXCLUDED.erasure_id, create_time = now()
 WHERE {schema}.memory_tombstones.erasure_id <> EXCLUDED.erasure_id
"""

# Every memory id the user has or had (live, quarantined, or known only from its revisions),
# across every scope of theirs: an erasure's, gated for every scope (row-level security).
_MEMORY_IDS = f"""
SELECT id::text FROM {{schema}}.memories WHERE scope @> $1::jsonb AND {ALL_SCOPES_GATE}
UNION
SELECT memory_id::text FROM {{schema}}.memory_revisions
 WHERE scope @> $1::jsonb AND {ALL_SCOPES_GATE}
"""

# A step's counts join the record; a step counted before (a re-run) is counted the same.
_COUNT = "UPDATE {schema}.erasures SET counts = counts || $2::jsonb WHERE id = $1"

_FINISH = """
UPDATE {schema}.erasures SET finish_time = now() WHERE id = $1 AND finish_time IS NULL
RETURNING counts::text
"""

_FOUND = """
SELECT digest, create_time FROM {schema}.memory_tombstones WHERE digest = ANY($1::bytea[])
"""

_LIFT = "DELETE FROM {schema}.memory_tombstones WHERE digest = ANY($1::bytea[])"


class Tombstones:
    """The tombstones and erasure records of one database schema (memory component)."""

    def __init__(self, db: Database, audit: AuditStore) -> None:
        self._db = db
        self._audit = audit
        self._key: bytes | None = None
        schema = db.schema
        self._sql = {
            name: rls.render(sql, schema)
            for name, sql in {
                "key": _KEY,
                "read_key": _READ_KEY,
                "running": _RUNNING,
                "begin": _BEGIN,
                "bury": _BURY,
                "memory_ids": _MEMORY_IDS,
                "count": _COUNT,
                "finish": _FINISH,
                "found": _FOUND,
                "lift": _LIFT,
            }.items()
        }

    async def _secret(self) -> bytes:
        """The database's key (made by whichever process needs it first)."""
        made = secrets.token_bytes(32)
        while self._key is None:
            # None only when another process made it while this statement ran (its snapshot
            # predates that commit): the next statement sees it.
            key = await self._db.run(lambda c: c.fetchval(self._sql["key"], made))
            self._key = bytes(key) if key is not None else None
        return self._key

    async def _made(self) -> bool:
        """Whether the key exists: a lookup never makes it (a database where nothing was ever
        erased holds no tombstone, and a read must write nothing)."""
        if self._key is None:
            key = await self._db.run(lambda c: c.fetchval(self._sql["read_key"]))
            self._key = bytes(key) if key is not None else None
        return self._key is not None

    async def digests(
        self, kind: Kind, app_name: str, user_id: str, ids: Iterable[str]
    ) -> list[bytes]:
        """The tombstones of `ids` of one kind of one user (for `Kind.USER`: `[""]`)."""
        key = await self._secret()
        named = (kind.value, app_name, user_id)
        return [hmac.new(key, "\x1f".join((*named, i)).encode(), "sha256").digest() for i in ids]

    async def begin(
        self, app_name: str, user_id: str, session_ids: Iterable[str], start_time: datetime
    ) -> tuple[uuid.UUID, dict[str, int]]:
        """Tombstone the user, their sessions and every memory id they have, before anything is
        deleted; the erasure's record id and the counts it holds already: an unfinished
        erasure of the same user (a crash, a lost reply) goes on under its own record."""
        (user,) = await self.digests(Kind.USER, app_name, user_id, [""])
        sessions = await self.digests(Kind.SESSION, app_name, user_id, session_ids)
        containing = json.dumps({"app_name": app_name, "user_id": user_id})
        rows = await self._db.run(lambda c: c.fetch(self._sql["memory_ids"], containing))
        memories = await self.digests(Kind.MEMORY, app_name, user_id, [r[0] for r in rows])
        new_id = uuid.uuid4()

        async def begin(conn: asyncpg.Connection) -> tuple[uuid.UUID, dict[str, int]]:
            async with conn.transaction():
                running = await conn.fetchrow(self._sql["running"], user)
                erasure = running[0] if running is not None else new_id
                if running is None:
                    await conn.execute(self._sql["begin"], erasure, app_name, start_time)
                await conn.execute(self._sql["bury"], [user, *sessions, *memories], erasure)
                await self._audit.scrub_in(conn, app_name, user_id, erasure)
                return erasure, json.loads(running[1]) if running is not None else {}

        return await self._db.run(begin)

    async def count(self, erasure_id: uuid.UUID, counts: Mapping[str, int]) -> None:
        """Add one step's counts to the erasure's record (again: the same counts)."""
        args = (erasure_id, json.dumps(dict(counts)))
        await self._db.run(lambda c: c.execute(self._sql["count"], *args))

    async def finish(
        self, erasure_id: uuid.UUID, audit: AuditEntry, erased: Mapping[str, str] | None
    ) -> None:
        """The erasure is complete: its record gets its finish time and, in the same
        transaction, the operators' audit gets `audit` with the record's counts (once: a
        replay, or a second call, finds the erasure finished and adds nothing) and loses the
        `erased` user (their scope; None: not known here) from any record added meanwhile."""

        async def finish(conn: asyncpg.Connection) -> None:
            async with conn.transaction():
                if erased is not None:
                    app_name, user_id = erased["app_name"], erased["user_id"]
                    await self._audit.scrub_in(conn, app_name, user_id, erasure_id)
                counts = await conn.fetchval(self._sql["finish"], erasure_id)
                if counts is not None:
                    tally = {k: int(v) for k, v in json.loads(counts).items()}
                    await self._audit.add_in(conn, replace(audit, counts=tally))

        await self._db.run(finish)

    async def erased_among(
        self, kind: Kind, app_name: str, user_id: str, times: Mapping[str, datetime | None]
    ) -> set[str]:
        """Which of one user's `ids` (with their source times) an erasure removed: a
        tombstoned id, or one from at or before the user's latest erasure (an unknown time
        counts as before). One round trip: the user's tombstone is looked up with the ids'."""
        wanted = list(times)
        if not await self._made():
            return set()
        (user,) = await self.digests(Kind.USER, app_name, user_id, [""])
        digests = await self.digests(kind, app_name, user_id, wanted)
        rows = await self._db.run(lambda c: c.fetch(self._sql["found"], [user, *digests]))
        found = {bytes(r[0]): r[1] for r in rows}
        erased_at = found.get(user)
        return {
            i
            for i, digest in zip(wanted, digests, strict=True)
            if digest in found
            or (erased_at is not None and (times[i] is None or times[i] <= erased_at))
        }

    async def buried_at(self, kind: Kind, app_name: str, user_id: str, id: str) -> datetime | None:
        """When the latest erasure that removed this id (of one kind of one user) ran; None
        when none did."""
        if not await self._made():
            return None
        digests = await self.digests(kind, app_name, user_id, [id])
        rows = await self._db.run(lambda c: c.fetch(self._sql["found"], digests))
        return rows[0][1] if rows else None

    async def lift(self, kind: Kind, app_name: str, user_id: str, ids: Iterable[str]) -> None:
        """An operator restored these (`allow_erased`): their tombstones go."""
        digests = await self.digests(kind, app_name, user_id, ids)
        if digests:
            await self._db.run(lambda c: c.execute(self._sql["lift"], digests))
