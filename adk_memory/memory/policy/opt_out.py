"""What a user's state says about memory: the opt-out state key and the wish it states.

Owns: `OPT_OUT_STATE_KEY` (the switch an ADK app sets in a user's state) and reading it
(`stated_wish`). The record that lets a call carrying only a scope honour it is
`store.opt_outs`'s; the service (`service.core.Gate.refuse_opted_out`) weighs the two. It never
touches SQL and never refuses anything itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.adk.sessions.state import State

OPT_OUT_STATE_KEY = "user:adk_memory_generation_opt_out"
"""User-scoped state key: when truthy, nothing is remembered for that user (in any of the
user's sessions: `user:` state is shared by them all). Set it like any state, e.g. from a tool
with `tool_context.state[OPT_OUT_STATE_KEY] = True`; set it to False to opt back in. The memory
service records the value whenever a call brings it a state holding the key (a session, a
tool's context, the generation plugin's turn), so calls that carry only a scope honour it too."""

UserState = Mapping[str, Any] | State
"""A session's state (a dict) or a tool or callback context's (ADK's `State`, with its delta)."""


def stated_wish(state: UserState | None) -> bool | None:
    """What a session's or a tool context's state says: True (opted out), False (opted back
    in), or None when it holds no opt-out key, or holds None (the record decides)."""
    if state is None or OPT_OUT_STATE_KEY not in state:
        return None
    value = state.get(OPT_OUT_STATE_KEY)
    return None if value is None else bool(value)
