"""Procedure support: the SQL of who supports an app's procedures, and what follows from it.

Owns: the `procedure_support` table (one row per procedure, user and session, holding token
hashes, see `procedure_rule`), each procedure's audience (its `metadata["audience"]`: `["*"]`
for a public procedure, the supporting users' `viewer_key`s for a private one; a procedure
learned before support was recorded has none, and no one sees it: it may name its learner),
and the withdrawal that follows a user's erasure. The rule itself is `procedure_rule`'s;
reads that honour the audience are `store.kind_key`'s. It never runs a model, and it never
deletes a text whose every token the remaining supporters' material holds.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Sequence

import asyncpg

from ...config import GenerationConfig
from ...db import rls
from ...db.engine import Database
from ..procedure_rule import PUBLIC, Support, audience, material, unsafe, viewer_key
from ..scope import Scope, app_scope, procedure_key, quarantine_key, scope_gate, scope_key

AUDIENCE = "audience"
"""The metadata key a procedure's audience is kept under."""

# Every statement here is on one app's procedure key (its procedures, their quarantine, their
# revisions and support: `_keys`) and carries its gate (row-level security, `db.rls`): the
# exact key form it reads (the procedures' and their quarantine's are one statement each; the
# revisions carry the procedure key itself).
_RECORD = f"""
INSERT INTO {{schema}}.procedure_support AS s
       (scope_key, memory_id, user_id, session_id, tokens, written)
SELECT $1, $2::uuid, $3, $4, $5::text[], $6::text[] WHERE {scope_gate("$1")}
ON CONFLICT (scope_key, memory_id, user_id, session_id) DO UPDATE
SET tokens = ARRAY(SELECT DISTINCT unnest(s.tokens || EXCLUDED.tokens)),
    written = ARRAY(SELECT DISTINCT unnest(s.written || EXCLUDED.written)),
    update_time = now()
"""

_SUPPORT = f"""
SELECT memory_id::text, user_id, tokens FROM {{schema}}.procedure_support
WHERE scope_key = $1 AND memory_id = ANY($2::uuid[]) AND {scope_gate("$1")}
"""

_FACTS = f"""
SELECT id::text, fact FROM {{schema}}.memories
WHERE id = ANY($1::uuid[]) AND scope_key = $2 AND {scope_gate("$2")}
"""

_SET_AUDIENCE = f"""
UPDATE {{schema}}.memories SET metadata = jsonb_set(metadata, '{{{{audience}}}}', $3::jsonb)
WHERE id = $1::uuid AND scope_key = $2 AND metadata -> 'audience' IS DISTINCT FROM $3::jsonb
  AND {scope_gate("$2")}
"""

_UNSUPPORT = f"""
DELETE FROM {{schema}}.procedure_support
 WHERE scope_key = $1 AND user_id = $2 AND {scope_gate("$1")}
RETURNING memory_id::text, tokens || written
"""

_REVISIONS = f"""
SELECT id::text, memory_id::text, fact, extracted_facts FROM {{schema}}.memory_revisions
WHERE memory_id = ANY($1::uuid[]) AND scope_key = $2 AND {scope_gate("$2")}
"""

_WITHDRAW = f"""
WITH support AS (
    DELETE FROM {{schema}}.procedure_support
     WHERE scope_key = $2 AND memory_id = ANY($1::uuid[]) AND {scope_gate("$2")}
), revisions AS (
    DELETE FROM {{schema}}.memory_revisions
    WHERE memory_id = ANY($1::uuid[]) AND scope_key = $2 AND {scope_gate("$2")}
    RETURNING 1
)
SELECT (SELECT count(*) FROM revisions)::int
"""

# The withdrawn procedures themselves, under one key form ($2) at a time.
_DELETE_PROCEDURES = f"""
WITH d AS (DELETE FROM {{schema}}.memories
            WHERE id = ANY($1::uuid[]) AND scope_key = $2 AND {scope_gate("$2")}
           RETURNING 1)
SELECT count(*)::int FROM d
"""

_DROP_REVISIONS = f"""
DELETE FROM {{schema}}.memory_revisions
 WHERE id = ANY($1::uuid[]) AND scope_key = $2 AND {scope_gate("$2")}
"""

_COUNTS = ("procedure_support", "procedures_withdrawn", "procedure_revisions")
"""What `SupportStore.erase` counts: support rows, procedures withdrawn, revisions deleted."""

_PRIOR = "SELECT counts FROM {schema}.memory_replies WHERE id = $1::uuid"

_REPLY = "INSERT INTO {schema}.memory_replies (id, counts) VALUES ($1::uuid, $2::bigint[])"

_PURGE = f"DELETE FROM {{schema}}.procedure_support WHERE scope_key = $1 AND {scope_gate('$1')}"


def _keys(key: str) -> list[str]:
    """Where an app's procedures may be: its procedure key, and that key's quarantine."""
    return [key, quarantine_key(key)]


def _only_theirs(texts: Sequence[str], theirs: frozenset[str], support: Support) -> bool:
    """Whether `texts` hold a token of the erased user's (`theirs`: their material and what
    their jobs wrote) that no remaining supporter's material holds: something only they gave."""
    left = frozenset().union(*support.values())
    return any(h in theirs and h not in left for text in texts for h in unsafe(text))


class SupportStore:
    """Runs the support statements against one `Database` (and its schema)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        schema = db.schema
        self._record = rls.render(_RECORD, schema)
        self._support = rls.render(_SUPPORT, schema)
        self._facts = rls.render(_FACTS, schema)
        self._set_audience = rls.render(_SET_AUDIENCE, schema)
        self._unsupport = rls.render(_UNSUPPORT, schema)
        self._revisions = rls.render(_REVISIONS, schema)
        self._withdraw = rls.render(_WITHDRAW, schema)
        self._delete_procedures = rls.render(_DELETE_PROCEDURES, schema)
        self._drop_revisions = rls.render(_DROP_REVISIONS, schema)
        self._purge = rls.render(_PURGE, schema)
        self._prior = rls.render(_PRIOR, schema)
        self._reply = rls.render(_REPLY, schema)

    async def _load(
        self, conn: asyncpg.Connection, key: str, memory_ids: Collection[str]
    ) -> dict[str, dict[str, frozenset[str]]]:
        rows = await conn.fetch(self._support, key, list(memory_ids))
        support: dict[str, dict[str, frozenset[str]]] = {}
        for memory_id, user_id, hashes in rows:
            users = support.setdefault(memory_id, {})
            users[user_id] = users.get(user_id, frozenset()) | frozenset(hashes)
        return support

    async def support(self, key: str, memory_ids: Collection[str]) -> dict[str, Support]:
        """The support of these procedures of the app's procedure key, by id (none: absent)."""
        if not memory_ids:
            return {}
        return dict(await self._db.run(lambda conn: self._load(conn, key, memory_ids)))

    async def record(
        self,
        conn: asyncpg.Connection,
        *,
        key: str,
        app_name: str,
        supporter: tuple[str, str],
        hashes: Collection[str],
        written: Sequence[tuple[str, str]],
        min_users: int,
    ) -> None:
        """In the generation's transaction: `supporter` (user, session) supports each written
        procedure (id, text) with `hashes` (its material; the text's own are kept apart, for
        erasure only); then the procedures' audiences are worked out again."""
        for memory_id, text in written:
            wrote = sorted(material(text))
            await conn.execute(self._record, key, memory_id, *supporter, sorted(hashes), wrote)
        await self._refresh(conn, key, app_name, [m for m, _ in written], min_users)

    async def _refresh(
        self,
        conn: asyncpg.Connection,
        key: str,
        app_name: str,
        memory_ids: Collection[str],
        min_users: int,
    ) -> None:
        support = await self._load(conn, key, memory_ids)
        for memory_id, fact in await self._facts_of(conn, key, memory_ids):
            users = support.get(memory_id, {})
            seen = audience(fact, users, min_users)
            entries = [e if e == PUBLIC else viewer_key(app_name, e) for e in seen]
            for where in _keys(key):
                await conn.execute(self._set_audience, memory_id, where, json.dumps(entries))

    async def erase(
        self, user: Scope, settings: GenerationConfig, request_id: uuid.UUID | None = None
    ) -> dict[str, int]:
        """Remove the support of `user` (`scope.user_scope`) for its app's procedures. A
        procedure left with no support, or whose text holds something only they gave
        (`procedure_rule`), is withdrawn: deleted with every revision. Of the others, each
        revision holding such a token is deleted, and the audience is worked out again (below
        `settings.procedure_min_users` users, a public one turns private)."""
        app_name, user_id = user["app_name"], user["user_id"]
        key = procedure_key(scope_key(app_scope(app_name)))
        min_users = settings.procedure_min_users
        # A replay after a lost reply (or an erasure's re-run, with its step's id) returns the
        # first counts.
        request = request_id or uuid.uuid4()

        async def erase(conn: asyncpg.Connection) -> dict[str, int]:
            async with conn.transaction():
                prior = await conn.fetchval(self._prior, request)
                if prior is not None:
                    return dict(zip(_COUNTS, map(int, prior), strict=True))
                counts = await self._erase(conn, key, app_name, user_id, min_users)
                await conn.execute(self._reply, request, list(counts))
                return dict(zip(_COUNTS, counts, strict=True))

        return await self._db.run(erase)

    async def _erase(
        self, conn: asyncpg.Connection, key: str, app_name: str, user_id: str, min_users: int
    ) -> tuple[int, int, int]:
        rows = await conn.fetch(self._unsupport, key, user_id)
        theirs: dict[str, frozenset[str]] = {}
        for memory_id, hashes in rows:
            theirs[memory_id] = theirs.get(memory_id, frozenset()) | frozenset(hashes)
        ids = set(theirs)
        if not ids:
            return 0, 0, 0
        support = await self._load(conn, key, ids)
        facts = dict(await self._facts_of(conn, key, ids))
        gone = [
            i
            for i in ids
            if not support.get(i)
            or (i in facts and _only_theirs([facts[i]], theirs[i], support[i]))
        ]
        revisions = await conn.fetchval(self._withdraw, gone, key)
        withdrawn = 0
        for where in _keys(key):
            withdrawn += await conn.fetchval(self._delete_procedures, gone, where)
        kept = ids - set(gone)
        stale = [
            revision_id
            for revision_id, memory_id, fact, extracted in await conn.fetch(
                self._revisions, list(kept), key
            )
            if _only_theirs([fact or "", *extracted], theirs[memory_id], support[memory_id])
        ]
        await conn.execute(self._drop_revisions, stale, key)
        await self._refresh(conn, key, app_name, kept, min_users)
        return len(rows), withdrawn, revisions + len(stale)

    async def _facts_of(
        self, conn: asyncpg.Connection, key: str, memory_ids: Collection[str]
    ) -> list[asyncpg.Record]:
        """(id, fact) of these procedures of the app's procedure key, quarantined ones too (one
        statement per key form)."""
        ids = list(memory_ids)
        return [row for where in _keys(key) for row in await conn.fetch(self._facts, ids, where)]

    async def purge(self, key: str) -> int:
        """Delete every support row of an app's procedures (its procedures are being purged)."""
        result = await self._db.run(lambda conn: conn.execute(self._purge, key))
        return int(result.split()[-1])
