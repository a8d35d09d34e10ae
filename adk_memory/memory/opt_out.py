"""Which users opted out of memory, and the statements that record it.

Owns: the opt-out state key (`OPT_OUT_STATE_KEY`, the switch an ADK app sets in a user's state)
and the per-user opt-out record (`memory_opt_outs`: a hash of the user's scope, no ids, no
content), read and written by primary key.
The memory service consults it before every write for a user (`core.Gate.
refuse_opted_out`): a record is what lets a call that carries only a scope (the direct API, a
memory tool, an import, a queued job) know what the user's state says. It never refuses
anything itself and never reads sessions: the service hands it the state it was given.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from google.adk.sessions.state import State

from ..db.engine import Database
from .scope import scope_key, user_scope

OPT_OUT_STATE_KEY = "user:adk_memory_generation_opt_out"
"""User-scoped state key: when truthy, nothing is remembered for that user (in any of the
user's sessions: `user:` state is shared by them all). Set it like any state, e.g. from a tool
with `tool_context.state[OPT_OUT_STATE_KEY] = True`; set it to False to opt back in. The memory
service records the value whenever a call brings it a state holding the key (a session, a
tool's context, the generation plugin's turn), so calls that carry only a scope honour it too."""

_OPT_OUT = """
INSERT INTO {schema}.memory_opt_outs (user_hash) VALUES ($1) ON CONFLICT (user_hash) DO NOTHING
"""
_OPT_IN = "DELETE FROM {schema}.memory_opt_outs WHERE user_hash = $1"
_OPTED_OUT = "SELECT EXISTS (SELECT FROM {schema}.memory_opt_outs WHERE user_hash = $1)"


def _user_hash(app_name: str, user_id: str) -> bytes:
    """What a record is keyed by: a SHA-256 of the user's canonical scope, so the table names
    nobody in clear (the lookup needs only equality)."""
    return hashlib.sha256(scope_key(user_scope(app_name, user_id)).encode()).digest()


UserState = Mapping[str, Any] | State
"""A session's state (a dict) or a tool or callback context's (ADK's `State`, with its delta)."""


def stated_wish(state: UserState | None) -> bool | None:
    """What a session's or a tool context's state says: True (opted out), False (opted back
    in), or None when it holds no opt-out key, or holds None (the record decides)."""
    if state is None or OPT_OUT_STATE_KEY not in state:
        return None
    value = state.get(OPT_OUT_STATE_KEY)
    return None if value is None else bool(value)


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
