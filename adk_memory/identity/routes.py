"""Which user an HTTP request of ADK's API names, read before ADK sees it.

Owns: where ADK's routes carry a user id (a path `/apps/{app}/users/{user}/...`, under `/dev/`
too: sessions, artifacts, memory, event graphs; the body of `/run`, `/run_sse` and
`/agent-identity/finalize`; the query of the `/run_live` websocket) and which paths are
operators' (ADK's dev tools under `/dev/`: builder, evals, traces by session id across users)
or open to anyone
(`/health`). tests/test_identity_routes.py lists every route of ADK's own app against these
rules, so a new ADK route naming a user fails a test until it is covered. It never decides
who may do what (`policy`) and never changes a request.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs

from google.adk.cli.api_server import FinalizeAgentIdentityCredentialsRequest, RunAgentRequest
from pydantic import BaseModel, ValidationError

from .._asgi import Scope

RUN_PATHS = frozenset({"/run", "/run_sse"})
"""ADK's routes whose body is a `RunAgentRequest` (its `user_id`)."""

BODY_USERS: dict[str, type[BaseModel]] = {
    **dict.fromkeys(RUN_PATHS, RunAgentRequest),
    "/agent-identity/finalize": FinalizeAgentIdentityCredentialsRequest,
}
"""ADK's POST routes whose JSON body names the user (`user_id`), with the body's model: a run,
and storing an Agent Identity credential for a user."""

RUN_LIVE_PATH = "/run_live"
"""ADK's websocket route; the user is its `user_id` query parameter."""

DEV_PATH = "/dev/"
"""ADK's dev tools (`adk web`): operators' only, with identity binding on."""

PUBLIC_PATHS = frozenset({"/health"})
"""Paths any caller may reach, credentials or not (a load balancer's health check)."""

_USER_PATH = re.compile(r"(?:^|/)apps/[^/]+/users/([^/]+)(?:/|$)")


def route_path(scope: Scope) -> str:
    """The path the app routes on: the request's, less the `root_path` a proxy or ADK's
    `--url_prefix` put before it (as Starlette's router strips it), so `/adk/run` is `/run`."""
    path: str = scope["path"]
    root = str(scope.get("root_path", "")).rstrip("/")
    if root and (path == root or path.startswith(root + "/")):
        return path[len(root) :] or "/"
    return path


def path_user(path: str) -> str | None:
    """The user id a path names (`.../apps/APP/users/USER/...`), or None."""
    found = _USER_PATH.search(path)
    return found.group(1) if found else None


def live_users(scope: Scope) -> list[str]:
    """Every `user_id` of a `/run_live` websocket's query (a repeated one included: each must
    be allowed); none, and ADK refuses the socket itself."""
    query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
    return query.get("user_id", [])


def body_user(path: str, body: bytes) -> str | None:
    """The `user_id` of the body of a `BODY_USERS` route, read with ADK's own model of it, or
    None when it is no valid request (ADK answers 422 for it and runs nothing)."""
    try:
        user = BODY_USERS[path].model_validate(json.loads(body)).user_id  # type: ignore[attr-defined]
    except (ValueError, ValidationError, RecursionError):  # deep nesting: no request either
        return None
    return user if isinstance(user, str) else None


def is_under(path: str, prefix: str) -> bool:
    """Whether `path` is `prefix` or below it (`/memory-inspector`, `/memory-inspector/x`)."""
    prefix = prefix.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")
