"""Client-chosen invocation ids on ADK's `/run` and `/run_sse`: honoured only to resume.

Owns: the ASGI middleware the deployment puts in front of ADK's FastAPI app. It reads a run
request's body and drops its `invocation_id` (either spelling ADK accepts) unless an event of
that very session (the app, user and session the same body names) already carries that id.

Why: `RunAgentRequest.invocation_id` is there to resume an invocation of a resumable app (a paused
long-running tool, a human-in-the-loop answer). For a new run, ADK's Runner takes it as the new
invocation's id as given, so a client can give its run any id, another user's included, and
anything in the process keyed by invocation id alone then mixes the two runs (that is how one
user got another's memories). adk-memory's caches are keyed by app, user and session as well;
this guard keeps the same promise for every plugin and callback the agents bring: a new run gets
an id ADK made, and an id a client sends can only name an invocation of its own session. A
request without `app_name` (ADK's default-app mode) cannot be checked, so its id is dropped.

Never: touches another route or any other field, or fails a request by itself: a body that is
not a valid run request is passed on untouched for ADK to reject, and a session lookup that
fails drops the id (logged) and lets ADK answer.
"""

from __future__ import annotations

import json
import logging

from google.adk.cli.api_server import RunAgentRequest
from google.adk.sessions.base_session_service import BaseSessionService
from pydantic import ValidationError

from adk_memory._asgi import ASGIApp, Receive, Scope, Send, read_body, replaying
from adk_memory.identity.routes import RUN_PATHS

logger = logging.getLogger(__name__)

_ID_KEYS = ("invocation_id", "invocationId")
"""The field's name and its camelCase alias: ADK's request model accepts both."""


class ResumeOnlyInvocationIds:
    """Wraps an ASGI app (ADK's FastAPI app) so `/run` and `/run_sse` start every new run with an
    invocation id of ADK's making; see the module docstring.

    Args:
      app: the app to serve.
      session_service: the sessions ADK's app runs on (to check a resumed id belongs to the
        request's own session).
    """

    def __init__(self, app: ASGIApp, session_service: BaseSessionService) -> None:
        self.app = app
        self.session_service = session_service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or scope.get("path") not in RUN_PATHS
        ):
            await self.app(scope, receive, send)
            return
        body, cut_short = await read_body(receive)
        checked = body if cut_short is not None else await self._checked(body)
        if checked is not body:
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(checked)).encode()))
            scope = {**scope, "headers": headers}
        await self.app(scope, replaying(checked, cut_short, receive), send)

    async def _checked(self, body: bytes) -> bytes:
        """`body` as given when it resumes an invocation of its own session (or is no valid run
        request at all); otherwise the same request without its invocation id."""
        try:
            fields = json.loads(body)
            request = RunAgentRequest.model_validate(fields)
        except (ValueError, ValidationError):  # ADK answers 422 for it
            return body
        if request.invocation_id is None or await self._resumes(request):
            return body
        logger.info(
            "Ignoring a client-chosen invocation id on a new run of session %s: it names no "
            "invocation of that session.",
            request.session_id,
        )
        kept = {key: value for key, value in fields.items() if key not in _ID_KEYS}
        return json.dumps(kept).encode()

    async def _resumes(self, request: RunAgentRequest) -> bool:
        """Whether the request's invocation id is that of an event of the request's session."""
        if not request.app_name:
            return False
        try:
            session = await self.session_service.get_session(
                app_name=request.app_name, user_id=request.user_id, session_id=request.session_id
            )
        except Exception:  # the run itself will meet (and report) the same problem
            logger.warning("Could not check a resumed invocation id; dropping it.", exc_info=True)
            return False
        return session is not None and any(
            event.invocation_id == request.invocation_id for event in session.events
        )
