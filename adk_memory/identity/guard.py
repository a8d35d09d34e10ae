"""The identity guard: an ASGI middleware that answers 401 or 403 before the app runs.

Owns: putting a resolver and a policy in front of any FastAPI/Starlette app (ADK's API server
and dev UI, the deploy app, the memory inspector): it resolves the caller's principal, keeps it
in the request's scope (`current_principal`), and refuses, before the wrapped app reads
anything, a request without valid credentials (401), one naming a user the principal may not
act as (403: a path `/apps/{app}/users/{user}/...`, a `/run` / `/run_sse` body, a `/run_live`
query, see `routes`), and an operators' path (the inspector, ADK's `/dev/` tools) for anyone but
an operator (403). Without a resolver it lets everything through unchanged (identity binding
off). It never reads the database and never changes a request it lets through.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.websockets import WebSocket

from .._asgi import ASGIApp, Receive, Scope, Send, read_body, replaying
from ..errors import AuthenticationError, ForbiddenError
from ..settings.identity import IdentitySettings
from .policy import IdentityPolicy
from .principal import PRINCIPAL_KEY, Principal
from .resolvers import Resolver, resolver_for
from .routes import (
    BODY_USERS,
    DEV_PATH,
    PUBLIC_PATHS,
    RUN_LIVE_PATH,
    body_user,
    is_under,
    live_users,
    path_user,
    route_path,
)

_WEBSOCKET_POLICY_VIOLATION = 1008


class IdentityGuard:
    """Wraps an ASGI app; see the module docstring.

    Args:
      app: the app to serve.
      resolver: verifies the caller (None: identity binding off, the guard passes through).
      policy: who may act as whom (default: itself only; no operators).
      operator_paths: path prefixes only operators reach (ADK's `/dev/` tools; add the memory
        inspector's path where it is served).
    """

    def __init__(
        self,
        app: ASGIApp,
        resolver: Resolver | None,
        policy: IdentityPolicy | None = None,
        operator_paths: Sequence[str] = (DEV_PATH,),
    ) -> None:
        self.app = app
        self.resolver = resolver
        self.policy = policy or IdentityPolicy()
        self.operator_paths = tuple(operator_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            self.resolver is None
            or scope["type"] not in ("http", "websocket")
            or route_path(scope) in PUBLIC_PATHS
            or _is_preflight(scope)
        ):
            await self.app(scope, receive, send)
            return
        try:
            principal = await self.resolver.resolve(scope)
            if principal is None:
                raise AuthenticationError("This server needs credentials (identity binding is on).")
            scope = {**scope, PRINCIPAL_KEY: principal}
            users, receive = await self._named_users(scope, receive)
            self._authorise(principal, route_path(scope), users)
        except (AuthenticationError, ForbiddenError) as error:
            await _refuse(scope, receive, send, error)
            return
        await self.app(scope, receive, send)

    async def _named_users(self, scope: Scope, receive: Receive) -> tuple[list[str], Receive]:
        """The users the request names (its path, its body, its live query), and the `receive`
        the app is to read the request with (the body replayed when it was read here)."""
        path = route_path(scope)
        users = [user for user in (path_user(path),) if user is not None]
        if scope["type"] == "websocket" and path == RUN_LIVE_PATH:
            users += live_users(scope)
        if scope["type"] != "http" or scope.get("method") != "POST" or path not in BODY_USERS:
            return users, receive
        body, cut_short = await read_body(receive)
        named = body_user(path, body)
        return users + ([named] if named is not None else []), replaying(body, cut_short, receive)

    def _authorise(self, principal: Principal, path: str, users: list[str]) -> None:
        operators_only = any(is_under(path, prefix) for prefix in self.operator_paths)
        if operators_only and not self.policy.is_operator(principal):
            raise ForbiddenError("Only an operator may open this page.")
        for user in users:
            if not self.policy.may_act_as(principal, user):
                raise ForbiddenError("The caller may not act as the user this request names.")


def _is_preflight(scope: Scope) -> bool:
    """A browser's CORS preflight (`OPTIONS` with `Access-Control-Request-Method`): it never
    carries credentials, and only the app's CORS middleware answers it (no route runs), so a
    401 would only stop browsers from sending the credentialed request that follows."""
    return (
        scope["type"] == "http"
        and scope.get("method") == "OPTIONS"
        and any(
            key.lower() == b"access-control-request-method" for key, _ in scope.get("headers", ())
        )
    )


async def _refuse(
    scope: Scope, receive: Receive, send: Send, error: AuthenticationError | ForbiddenError
) -> None:
    """Answer `error`: 401 (with `WWW-Authenticate`) or 403 for a request, a closed socket
    (policy violation) for a websocket, before it is accepted."""
    if scope["type"] == "websocket":
        await WebSocket(scope, receive, send).close(_WEBSOCKET_POLICY_VIOLATION, str(error))
        return
    status = 401 if isinstance(error, AuthenticationError) else 403
    headers = [(b"content-type", b"application/json")]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    body = json.dumps({"detail": str(error)}).encode()
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def add_identity_guard(
    app: Starlette, settings: IdentitySettings, operator_paths: Sequence[str] = (DEV_PATH,)
) -> None:
    """Put the guard the settings describe in front of every route of `app` (outermost, so it
    answers before any other middleware reads the request); nothing for `none`."""
    resolver = resolver_for(settings)
    if resolver is None:
        return
    policy = IdentityPolicy.from_settings(settings)
    app.add_middleware(
        IdentityGuard, resolver=resolver, policy=policy, operator_paths=operator_paths
    )
