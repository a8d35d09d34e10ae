"""Which users opted out of memory, and the statements that record it.

Owns: the opt-out state key (`OPT_OUT_STATE_KEY`, the switch an ADK app sets in a user's state)
and the per-user opt-out record (`memory_opt_outs`, ids only), read and written by primary key.
The memory service consults it before every write for a user (`MemoryServiceCore.
_refuse_opted_out`): a record is what lets a call that carries only a scope (the direct API, a
memory tool, an import, a queued job) know what the user's state says. It never refuses
anything itself and never reads sessions: the service hands it the state it was given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.adk.sessions.state import State

from ..db.engine import Database

OPT_OUT_STATE_KEY = "user:adk_memory_generation_opt_out"
"""User-scoped state key: when truthy, nothing is remembered for that user (in any of the
user's sessions: `user:` state is shared by them all). Set it like any state, e.g. from a tool
with `tool_context.state[OPT_OUT_STATE_KEY] = True`; set it to False to opt back in. The memory
service records the value whenever a call brings it a state holding the key (a session, a
tool's context, the generation plugin's turn), so calls that carry only a scope honour it too."""

_OPT_OUT = """
INSERT INTO {schema}.memory_opt_outs (app_name, user_id) VALUES ($1, $2)
ON CONFLICT (app_name, user_id) DO NOTHING
"""
_OPT_IN = "DELETE FROM {schema}.memory_opt_outs WHERE app_name = $1 AND user_id = $2"
_OPTED_OUT = (
    "SELECT EXISTS (SELECT FROM {schema}.memory_opt_outs WHERE app_name = $1 AND user_id = $2)"
)


UserState = Mapping[str, Any] | State
"""A session's state (a dict) or a tool or callback context's (ADK's `State`, with its delta)."""


def stated_wish(state: UserState | None) -> bool | None:
    """What a session's or a tool context's state says: True (opted out), False (opted back
    in), or None when it holds no opt-out key (the record decides)."""
    if state is None or OPT_OUT_STATE_KEY not in state:
        return None
    return bool(state.get(OPT_OUT_STATE_KEY))


class OptOutStore:
    """The opt-out records' statements against one `Database` (each safe to replay)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._opt_out = _OPT_OUT.format(schema=db.schema)
        self._opt_in = _OPT_IN.format(schema=db.schema)
        self._opted_out = _OPTED_OUT.format(schema=db.schema)

    async def set(self, app_name: str, user_id: str, opted_out: bool) -> None:
        statement = self._opt_out if opted_out else self._opt_in
        await self._db.run(lambda conn: conn.execute(statement, app_name, user_id))

    async def get(self, app_name: str, user_id: str) -> bool:
        """Whether the user is recorded as opted out (on the primary: a replica a moment
        behind must never let a write through)."""
        return bool(
            await self._db.run(lambda conn: conn.fetchval(self._opted_out, app_name, user_id))
        )
