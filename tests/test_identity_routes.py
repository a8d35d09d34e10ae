"""Every route of ADK's own FastAPI app (the API server and the dev UI, as `adk web` builds it)
that names a user or a session is one the identity guard reads the user of, or an operators'
one: a new ADK route with a user in it fails here until `adk_memory.identity.routes` covers it."""

from __future__ import annotations

import warnings
from pathlib import Path

from fastapi.routing import APIRoute, APIWebSocketRoute
from pydantic import BaseModel

from adk_memory.identity.routes import (
    BODY_USERS,
    DEV_PATH,
    RUN_LIVE_PATH,
    is_under,
    path_user,
)

SCOPED = {"user_id", "userId", "session_id", "sessionId"}
"""Parameters or body fields that name a user's data."""


def _fields(route: APIRoute | APIWebSocketRoute) -> set[str]:
    """Every query, path and body parameter name of a route, a body model's fields included."""
    dependant = route.dependant
    names = {p.name for p in (*dependant.path_params, *dependant.query_params)}
    for param in dependant.body_params:
        names.add(param.name)
        annotation = param.field_info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            for name, info in annotation.model_fields.items():
                names |= {name, info.alias or name}
    return names


def _adk_routes(tmp_path: Path) -> list[APIRoute | APIWebSocketRoute]:
    from google.adk.cli.fast_api import get_fast_api_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ADK's experimental-feature warnings
        app = get_fast_api_app(agents_dir=str(tmp_path), web=True)
    return [r for r in app.routes if isinstance(r, APIRoute | APIWebSocketRoute)]


def test_every_adk_route_naming_a_user_is_covered(tmp_path: Path) -> None:
    covered: dict[str, str] = {}
    uncovered = []
    for route in _adk_routes(tmp_path):
        named = _fields(route) & SCOPED
        if not named:
            continue
        concrete = route.path.replace("{user_id}", "bob").replace("{app_name}", "app")
        if "{user_id}" in route.path and path_user(concrete) == "bob":
            how = "path"
        elif route.path in BODY_USERS or route.path == RUN_LIVE_PATH:
            how = "body" if route.path in BODY_USERS else "query"
        elif is_under(route.path, DEV_PATH):
            how = "operators only"
        else:
            uncovered.append(f"{route.path} {sorted(named)}")
            continue
        covered[route.path] = how
    assert not uncovered, "ADK routes naming a user the guard does not read:\n" + "\n".join(
        uncovered
    )
    # The routes the issue names are among them, each read where ADK reads it.
    sessions = "/apps/{app_name}/users/{user_id}/sessions"
    assert covered[sessions] == covered[f"{sessions}/{{session_id}}"] == "path"
    assert covered[f"{sessions}/{{session_id}}/artifacts"] == "path"
    assert covered["/apps/{app_name}/users/{user_id}/memory"] == "path"
    assert covered["/run"] == covered["/run_sse"] == "body"
    assert covered["/run_live"] == "query"
    assert covered["/agent-identity/finalize"] == "body"
    assert covered["/dev/apps/{app_name}/debug/trace/session/{session_id}"] == "operators only"


def test_user_paths_are_read_as_the_router_reads_them() -> None:
    assert path_user("/apps/a/users/bob/sessions") == "bob"
    assert path_user("/apps/a/users/bob") == "bob"
    assert path_user("/dev/apps/a/users/bob/sessions/s/events/e/graph") == "bob"
    assert path_user("/apps/a/users/alice@example.com/sessions/s/artifacts/x/y") == (
        "alice@example.com"
    )
    assert path_user("/apps/users/bob") is None
    assert path_user("/list-apps") is None
    assert is_under("/memory-inspector", "/memory-inspector")
    assert is_under("/memory-inspector/user", "/memory-inspector/")
    assert not is_under("/memory-inspectorx", "/memory-inspector")
