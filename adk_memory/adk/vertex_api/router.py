"""The router of the Vertex AI REST surface: every route, on the services it is given.

Owns: assembling the memory, generation and session routes under `/v1beta1` with Google's
error envelope (`access.GoogleErrorRoute`) and the access check's policy. It never serves
anything itself: an app includes the router (`app.include_router(vertex_api_router(...))`).
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter

from ...identity import IdentityPolicy
from ...memory.service import PostgresMemoryService
from ...sessions.service import PostgresSessionService
from .access import Access, GoogleErrorRoute
from .generation import GenerationRoutes
from .memories import MemoryRoutes
from .names import API_VERSION
from .requests import Engines
from .sessions import SessionRoutes


def vertex_api_router(
    memory: PostgresMemoryService | None = None,
    sessions: PostgresSessionService | None = None,
    *,
    policy: IdentityPolicy | None = None,
    engines: Mapping[str, str] | None = None,
) -> APIRouter:
    """Vertex AI's Memory Bank and session routes on these services (either may be None: its
    routes are then not served).

    Args:
      memory: serves the memories, revisions, generation and retrieval routes.
      sessions: serves the sessions and events routes.
      policy: who may act as which user, as the identity guard in front of the app decides
        (the same `IdentityPolicy`); without a guard every caller is trusted, as ADK's API
        server trusts its callers.
      engines: reasoning engine id -> app name, for sessions (default: the engine id is the app
        name). Memory scopes are the requests' own, as in Memory Bank.
    """
    router = APIRouter(prefix=f"/{API_VERSION}", route_class=GoogleErrorRoute)
    access = Access(policy)
    apps = Engines(engines or {})
    if memory is not None:  # generate, retrieve, ... before the `memories/{memory}` routes
        GenerationRoutes(memory, access, apps, sessions).add_to(router)
        MemoryRoutes(memory, access, apps).add_to(router)
    if sessions is not None:
        SessionRoutes(sessions, access, apps).add_to(router)
    return router
