"""The private ADK names adk-memory relies on, all in one place, each with why no public one
does the job.

Owns: importing them, and failing loudly, naming what changed, when an ADK release moves one.
`tests/test_adk_private.py` checks that each still exists and still behaves as relied on, so a
new google-adk that breaks one fails there, not deep inside a turn. Nothing else in the package
imports a private ADK module or reads a private ADK attribute.

- `apply_rewinds` (`google.adk.events._rewind_events._apply_rewinds`): the events a session
  means after its rewinds, as ADK's own request builder reads them; the summarizer must
  summarize exactly those.
- `OTHER_AGENT_CONTEXT_PREAMBLE` (`google.adk.flows.llm_flows.context._fencing`): the text ADK
  starts a relayed other agent's turn with; the compaction plugins recognise those contents by
  it (they are not the user's turns).
- `extract_json_safe_state_delta` (`google.adk.sessions._session_util`): ADK's coercion of
  state values that are not JSON, so our stored state equals what ADK's own database service
  would store.
- `static_prefix_end(llm_request)` (`LlmRequest._static_instruction_prefix_end_index`): where
  ADK's static-instruction prefix ends in a request's contents; trimming must keep it in place.
- `storage_marker(session)` / `set_storage_marker(session, value)`
  (`Session._storage_update_marker`): the revision a session object was loaded at, where ADK's
  own database service keeps it too; the optimistic-concurrency check (`StaleSessionError`)
  compares it with the stored one.
- `fast_api_app_built(hook)` (`google.adk.cli.fast_api.get_fast_api_app`, as `adk web` and
  `adk api_server` look it up when they run): the app those commands build and serve, handed to
  `hook` before it serves, so `adk-memory web` adds the memory inspector's routes next to ADK's
  dev UI while every ADK option keeps working as ADK documents it. ADK's commands take no
  routes of their own; the public function is public, the moment they call it is not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.adk.sessions.session import Session

try:
    from google.adk.events._rewind_events import _apply_rewinds as apply_rewinds
    from google.adk.flows.llm_flows.context._fencing import OTHER_AGENT_CONTEXT_PREAMBLE
    from google.adk.sessions._session_util import extract_json_safe_state_delta
except ImportError as exc:  # pragma: no cover - only with an ADK release that moved one
    raise ImportError(
        f"adk-memory relies on a private google-adk name that this google-adk no longer has "
        f"({exc}); see adk_memory/_adk_private.py and pin google-adk to a tested version."
    ) from exc

_STATIC_PREFIX_END = "_static_instruction_prefix_end_index"


def static_prefix_end(llm_request: LlmRequest) -> int:
    """How many of the request's first contents are ADK's static-instruction prefix (0: none)."""
    return getattr(llm_request, _STATIC_PREFIX_END, None) or 0


def storage_marker(session: Session) -> str | None:
    """The storage revision marker a session object carries (None: not loaded from storage)."""
    return session._storage_update_marker


def set_storage_marker(session: Session, value: str) -> None:
    """Record the storage revision a session object now reflects."""
    session._storage_update_marker = value


@contextmanager
def fast_api_app_built(hook: Callable[[Any], None]) -> Iterator[None]:
    """Inside the block, every app ADK's `get_fast_api_app` builds (the one `adk web` and
    `adk api_server` serve) goes to `hook` before it is returned. (ADK's server module is
    imported here, when a server starts: it pulls in FastAPI.)"""
    from google.adk.cli import fast_api

    build = fast_api.get_fast_api_app

    def built(**kwargs: Any) -> Any:
        app = build(**kwargs)
        hook(app)
        return app

    fast_api.get_fast_api_app = built
    try:
        yield
    finally:
        fast_api.get_fast_api_app = build


__all__ = [
    "OTHER_AGENT_CONTEXT_PREAMBLE",
    "apply_rewinds",
    "extract_json_safe_state_delta",
    "fast_api_app_built",
    "set_storage_marker",
    "static_prefix_end",
    "storage_marker",
]
