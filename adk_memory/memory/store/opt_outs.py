"""The statements that record which users opted out of memory.

Owns: the per-user opt-out record (`memory_opt_outs`: a hash of the user's scope, no ids, no
content), read and written by primary key.
The memory service consults it before every write for a user (`core.Gate.
refuse_opted_out`): a record is what lets a call that carries only a scope (the direct API, a
memory tool, an import, a queued job) know what the user's state says. What a user's state says
(`OPT_OUT_STATE_KEY`, `stated_wish`) is `policy.opt_out`'s. It never refuses anything itself
and never reads sessions.
"""

from __future__ import annotations

import hashlib

from ...db.engine import Database
from ..scope import scope_key, user_scope

_OPT_OUT = """
INSERT INTO {schema}.memory_opt_outs (user_hash) VALUES ($1) ON CONFLICT (user_hash) DO NOTHING
"""
_OPT_IN = "DELETE FROM {schema}.memory_opt_outs WHERE user_hash = $1"
_OPTED_OUT = "SELECT EXISTS (SELECT FROM {schema}.memory_opt_outs WHERE user_hash = $1)"


def _user_hash(app_name: str, user_id: str) -> bytes:
    """What a record is keyed by: a SHA-256 of the user's canonical scope, so the table names
    nobody in clear (the lookup needs only equality)."""
    return hashlib.sha256(scope_key(user_scope(app_name, user_id)).encode()).digest()


class OptOutStore:
    """The opt-out records' statements against one `Database` (each safe to replay)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._opt_out = _OPT_OUT.format(schema=db.schema)
        self._opt_in = _OPT_IN.format(schema=db.schema)
        self._opted_out = _OPTED_OUT.format(schema=db.schema)

    async def set(self, app_name: str, user_id: str, opted_out: bool) -> None:
        statement, key = self._opt_out if opted_out else self._opt_in, _user_hash(app_name, user_id)
        await self._db.run(lambda conn: conn.execute(statement, key))

    async def get(self, app_name: str, user_id: str) -> bool:
        """Whether the user is recorded as opted out (on the primary: a replica a moment
        behind must never let a write through)."""
        key = _user_hash(app_name, user_id)
        return bool(await self._db.run(lambda conn: conn.fetchval(self._opted_out, key)))
