"""How adk-memory's typed errors answer over HTTP, on any FastAPI app that serves its services
(ADK's API server and dev UI as `adk-memory web` / `api_server` and the deploy serve them).

Owns: the status code of each `AdkMemoryError` (bad input 400, no or bad credentials 401,
another user's data 403, not found 404, a conflict 409, the database away 503 or too slow 504)
and the handler that answers with it. Without it, ADK's
routes turn every error a service raises into a 500 (a NUL or a 300-character user id in a
URL, a session id that cannot be one). It handles only adk-memory's errors: anything else keeps
the app's own handling. A 5xx names only the kind of failure, never its message.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from ..errors import (
    AdkMemoryError,
    AlreadyExistsError,
    AuthenticationError,
    DatabaseTimeoutError,
    DatabaseUnavailableError,
    ForbiddenError,
    InputValidationError,
    NotFoundError,
    SessionNotFoundError,
    StaleSessionError,
)

_STATUS: tuple[tuple[type[AdkMemoryError], int], ...] = (
    (SessionNotFoundError, 404),
    (NotFoundError, 404),
    (AlreadyExistsError, 409),
    (StaleSessionError, 409),
    (InputValidationError, 400),
    (AuthenticationError, 401),
    (ForbiddenError, 403),
    (DatabaseUnavailableError, 503),
    (DatabaseTimeoutError, 504),
)


def status_of(error: AdkMemoryError) -> int:
    """The HTTP status an error answers with (500 for a failure of ours with no better one)."""
    return next((status for kind, status in _STATUS if isinstance(error, kind)), 500)


async def _respond(request: Request, error: Exception) -> Response:
    if not isinstance(error, AdkMemoryError):  # registered for AdkMemoryError only
        raise error  # any other error goes on to the app's own handling, unchanged
    status = status_of(error)
    detail = str(error) if status < 500 else type(error).__name__
    return JSONResponse({"detail": detail}, status_code=status)


def add_error_responses(app: FastAPI) -> None:
    """Answer adk-memory's errors with their status codes on `app` (every route, ADK's too)."""
    app.add_exception_handler(AdkMemoryError, _respond)
