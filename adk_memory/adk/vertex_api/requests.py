"""Reading a Vertex AI REST request: its JSON body, its scope, and the engine its path names.

Owns: the few readers every route of this surface shares, each refusing bad input with
`InputValidationError` (a 400 in Google's envelope) before any service is called. It never
calls a service.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import Request

from ...errors import InputValidationError
from ...memory.scope import validate_scope
from .names import Engine

logger = logging.getLogger(__name__)


class Engines:
    """The `Engine` of a request's path, its app named by `apps` (default: the engine id)."""

    def __init__(self, apps: Mapping[str, str]) -> None:
        self.apps = dict(apps)

    def of(self, request: Request) -> Engine:
        path = request.path_params
        return Engine.of(path["project"], path["location"], path["engine"], self.apps)

    def app_of(self, engine_id: str) -> str:
        """The app an engine id stands for."""
        return self.apps.get(engine_id, engine_id)


async def body_of(request: Request) -> dict[str, Any]:
    """The request's JSON object ({} for an empty body)."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InputValidationError("The request body is not JSON.") from exc
    if not isinstance(body, dict):
        raise InputValidationError("The request body must be a JSON object.")
    return body


def scope_of(body: Mapping[str, Any]) -> dict[str, str]:
    """The request's `scope`, validated (1 to 5 string keys and values)."""
    scope = body.get("scope")
    if scope is None:
        raise InputValidationError("The request needs a scope, e.g. {'user_id': '123'}.")
    return validate_scope(scope)


def supported(method: Callable[..., Any], **options: Any) -> dict[str, Any]:
    """The options given (not None) that `method` takes. Memory Bank's per-request revision
    options reach a service that has them (branch i-mbconfig adds them); one without them
    still serves the request (ADK's Vertex service sends revision labels with every create),
    and says at debug level which it did not apply."""
    parameters = inspect.signature(method).parameters
    given = {name: value for name, value in options.items() if value is not None}
    dropped = sorted(name for name in given if name not in parameters)
    if dropped:
        logger.debug("Not applied (this memory service has no such option): %s", dropped)
    return {name: value for name, value in given.items() if name in parameters}
