"""Agent Engine's session resources over HTTP: create, get, list, delete, append an event, list
events, for ADK's `VertexAiSessionService` and the clients' `sessions` / `sessions.events`.

Owns: these routes' reading of Vertex AI's requests and the one `PostgresSessionService` call
each makes (the engine id names the app). A session's resource id carries its user
(`keys.encode`), since adk-memory reads a session by app, user and id; a bare id (one a client
chose and kept) is read as the caller's own session when an identity guard names the caller.
An appended event is rebuilt from its `rawEvent` (ADK's full event, as ADK's Vertex service
sends it) or, without one, from the named fields. It never writes SQL.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from google.adk.events import Event
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import GetSessionConfig

from ...errors import InputValidationError, SessionNotFoundError
from ...sessions.service import PostgresSessionService
from . import keys, wire
from .access import Access
from .filters import events_after, session_user
from .names import ENGINE_PATH, Engine, done, operation_name
from .requests import Engines, body_of

SESSION = ENGINE_PATH + "/sessions/{session}"


class SessionRoutes:
    """The session and event routes on one service (`add_to` puts them on a router)."""

    def __init__(self, service: PostgresSessionService, access: Access, engines: Engines) -> None:
        self.service = service
        self.access = access
        self.engines = engines

    def add_to(self, router: APIRouter) -> None:
        router.add_api_route(ENGINE_PATH + "/sessions", self.create_session, methods=["POST"])
        router.add_api_route(ENGINE_PATH + "/sessions", self.list_sessions, methods=["GET"])
        router.add_api_route(SESSION, self.get_session, methods=["GET"])
        router.add_api_route(SESSION, self.delete_session, methods=["DELETE"])
        router.add_api_route(SESSION + ":appendEvent", self.append_event, methods=["POST"])
        router.add_api_route(SESSION + "/events", self.list_events, methods=["GET"])

    async def load(self, request: Request, session: str, **config: Any) -> Session:
        """The session a resource id names (its events as `config` selects), or a 404."""
        user_id, session_id = self.access.session(request, session)
        found = await self.service.get_session(
            app_name=self.engines.of(request).app_name,
            user_id=user_id,
            session_id=session_id,
            config=GetSessionConfig(**config) if config else None,
        )
        if found is None:
            raise SessionNotFoundError(f"No session {session!r}.")
        return found

    async def create_session(self, request: Request) -> Response:
        engine = self.engines.of(request)
        body = await body_of(request)
        user_id = wire.field(body, "userId")
        if not isinstance(user_id, str) or not user_id:
            raise InputValidationError("A session needs a userId.")
        self.access.user(request, user_id)
        state = wire.field(body, "sessionState")
        created = await self.service.create_session(
            app_name=engine.app_name,
            user_id=user_id,
            state=state if isinstance(state, dict) else None,
            session_id=request.query_params.get("sessionId") or None,
        )
        name = operation_name(engine.name, "session", {"user_id": user_id})
        return JSONResponse(done(name, _session_json(created, engine)))

    async def list_sessions(self, request: Request) -> Response:
        engine = self.engines.of(request)
        user_id = session_user(request.query_params.get("filter"))
        self.access.scope(request, {"user_id": user_id} if user_id is not None else {})
        listed = await self.service.list_sessions(app_name=engine.app_name, user_id=user_id)
        return JSONResponse({"sessions": [_session_json(s, engine) for s in listed.sessions]})

    async def get_session(self, request: Request, session: str) -> Response:
        found = await self.load(request, session, num_recent_events=0)
        return JSONResponse(_session_json(found, self.engines.of(request)))

    async def delete_session(self, request: Request, session: str) -> Response:
        engine = self.engines.of(request)
        user_id, session_id = self.access.session(request, session)
        await self.service.delete_session(
            app_name=engine.app_name, user_id=user_id, session_id=session_id
        )
        return JSONResponse(done(operation_name(engine.name, "delete", {"user_id": user_id})))

    async def append_event(self, request: Request, session: str) -> Response:
        event = _event(await body_of(request))
        stored = await self.load(request, session, num_recent_events=1)
        await self.service.append_event(stored, event)
        return JSONResponse({})

    async def list_events(self, request: Request, session: str) -> Response:
        after = events_after(request.query_params.get("filter"))
        found = await self.load(request, session, **({"after_timestamp": after} if after else {}))
        parent = f"{self.engines.of(request).name}/sessions/{session}"
        return JSONResponse({"sessionEvents": [_event_json(e, parent) for e in found.events]})


def _session_json(session: Session, engine: Engine) -> dict[str, Any]:
    """A session as Agent Engine's `Session` resource (its id carries its user)."""
    return {
        "name": f"{engine.name}/sessions/{keys.encode(session.user_id, session.id)}",
        "userId": session.user_id,
        "sessionState": dict(session.state),
        "updateTime": wire.timestamp(session.last_update_time),
    }


def _event_json(event: Event, parent: str) -> dict[str, Any]:
    """A stored event as Agent Engine's `SessionEvent`, the whole ADK event in `rawEvent`."""
    out: dict[str, Any] = {
        "name": f"{parent}/events/{event.id}",
        "author": event.author,
        "invocationId": event.invocation_id,
        "timestamp": wire.timestamp(event.timestamp),
        "rawEvent": event.model_dump(mode="json", by_alias=True, exclude_none=True),
    }
    if event.content is not None:
        out["content"] = event.content.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


def _event(body: dict[str, Any]) -> Event:
    """The event an `appendEvent` request describes: its `rawEvent` (ADK's whole event), else
    the named fields (`content`, `actions`, `eventMetadata`, `errorCode`, `errorMessage`)."""
    moment = wire.parse_time(wire.field(body, "timestamp"), "timestamp")
    raw = wire.field(body, "rawEvent")
    if raw is not None and not isinstance(raw, dict):
        raise InputValidationError("rawEvent must be an object (an ADK event).")
    fields: dict[str, Any] = dict(raw) if raw else _named_fields(body)
    fields["author"] = wire.field(body, "author") or fields.get("author")
    fields["invocation_id"] = wire.field(body, "invocationId") or fields.get("invocationId", "")
    fields.pop("invocationId", None)
    fields["timestamp"] = (moment or datetime.now(UTC)).timestamp()
    if not fields["author"]:
        raise InputValidationError("An event needs an author.")
    try:
        return Event.model_validate(fields)
    except ValueError as exc:
        raise InputValidationError(f"Not an ADK event: {exc}") from exc


def _named_fields(body: dict[str, Any]) -> dict[str, Any]:
    """An event's fields from Agent Engine's named ones (as ADK's Vertex service reads them)."""
    actions = wire.field(body, "actions") or {}
    metadata = wire.field(body, "eventMetadata") or {}
    if not isinstance(actions, dict) or not isinstance(metadata, dict):
        raise InputValidationError("actions and eventMetadata must be objects.")
    actions = dict(actions)
    if "transfer_agent" in actions:  # Agent Engine's name for ADK's transfer_to_agent
        actions["transfer_to_agent"] = actions.pop("transfer_agent")
    if "transferAgent" in actions:
        actions["transfer_to_agent"] = actions.pop("transferAgent")
    fields = {
        **metadata,
        "content": wire.field(body, "content"),
        "actions": actions,
        "error_code": wire.field(body, "errorCode"),
        "error_message": wire.field(body, "errorMessage"),
    }
    return {key: value for key, value in fields.items() if value is not None}
