"""Who may touch what on the Vertex AI REST surface, and how a refusal or failure answers.

Owns: the per-request user check (the identity guard verified the caller and left its
`Principal` in the request; here the user a session belongs to, or the `user_id` of a memory
scope, must be one the policy lets it act as: a scope without a `user_id` is an operator's), and
the error envelope Google's APIs use (`{"error": {"code", "message", "status"}}`), which the
official clients turn into their `ClientError` / `ServerError` with the right code (ADK's
Vertex services read a 404 as "no such session"). It never verifies credentials (the guard
does) and never reads the database.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute

from ...errors import AdkMemoryError, ForbiddenError, SessionNotFoundError
from ...identity import IdentityPolicy, current_principal
from ..http_errors import status_of
from . import keys

logger = logging.getLogger(__name__)

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def google_error(code: int, message: str) -> JSONResponse:
    """Google's error envelope with this HTTP status."""
    status = _STATUS_NAMES.get(code, "INTERNAL")
    body = {"error": {"code": code, "message": message, "status": status}}
    return JSONResponse(body, status_code=code)


def unimplemented(what: str) -> JSONResponse:
    """501 for a Memory Bank method this adk-memory's service does not have (yet)."""
    return google_error(
        501, f"{what} is not available: this adk-memory's memory service has no such method."
    )


class GoogleErrorRoute(APIRoute):
    """A route that answers adk-memory's typed errors in Google's envelope (a 5xx names only
    the kind of failure), so no app-wide handler is needed where the router is mounted."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except AdkMemoryError as error:
                code = status_of(error)
                if code >= 500:
                    logger.warning("Vertex API %s failed: %r", request.url.path, error)
                return google_error(code, str(error) if code < 500 else type(error).__name__)

        return handle


class Access:
    """The user check of every route (see the module docstring)."""

    def __init__(self, policy: IdentityPolicy | None) -> None:
        self.policy = policy or IdentityPolicy()

    def user(self, request: Request, user_id: str) -> None:
        """Raise `ForbiddenError` unless the caller may act as `user_id` (anyone may when no
        identity guard stands in front)."""
        principal = current_principal(request)
        if principal is not None and not self.policy.may_act_as(principal, user_id):
            raise ForbiddenError("The caller may not act as the user this request names.")

    def session(self, request: Request, ref: str) -> tuple[str, str]:
        """(user, session id) of a session's resource id, checked: an id this surface made
        names its user (`keys`); a bare one (a client's own) is the caller's own session."""
        decoded = keys.decode(ref)
        if decoded is None:
            principal = current_principal(request)
            own = self.policy.own_user(principal) if principal is not None else None
            if own is None:
                raise SessionNotFoundError(f"No session {ref!r} (name it as it was returned).")
            decoded = (own, ref)
        self.user(request, decoded[0])
        return decoded

    def scope(self, request: Request, scope: Mapping[str, str]) -> None:
        """The check for a memory scope: its `user_id`, or an operator for a scope with none."""
        principal = current_principal(request)
        if principal is None:
            return
        user_id = scope.get("user_id")
        if user_id is None:
            if not self.policy.is_operator(principal):
                raise ForbiddenError("Only an operator may act on a scope without a user_id.")
            return
        self.user(request, user_id)
