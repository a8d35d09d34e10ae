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

import re
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from google.adk.events import Event
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import GetSessionConfig

from ...errors import InputValidationError, SessionNotFoundError
from ...identity import current_principal
from ...sessions.service import PostgresSessionService
from . import keys, wire
from .access import Access
from .names import ENGINE_PATH, Engine, done, operation_name
from .requests import EngineOf, body_of

SESSION = ENGINE_PATH + "/sessions/{session}"
_USER_FILTER = re.compile(r'^\s*user_id\s*=\s*"((?:[^"\\]|\\.)*)"\s*$')
_AFTER_FILTER = re.compile(r'^\s*timestamp\s*>=\s*"([^"]+)"\s*$')


def session_routes(
    router: APIRouter, service: PostgresSessionService, access: Access, engine_of: EngineOf
) -> None:
    """Add the session and event routes to `router`."""
    engine_dep = Depends(engine_of)

    def owner(request: Request, ref: str) -> tuple[str, str]:
        """(user, session id) of a session's resource id, checked against the caller."""
        decoded = keys.decode(ref)
        if decoded is None:
            principal = current_principal(request)
            own = access.policy.own_user(principal) if principal is not None else None
            if own is None:
                raise SessionNotFoundError(f"No session {ref!r} (name it as it was returned).")
            decoded = (own, ref)
        access.user(request, decoded[0])
        return decoded

    async def load(engine: Engine, user_id: str, session_id: str, **config: Any) -> Session:
        found = await service.get_session(
            app_name=engine.app_name,
            user_id=user_id,
            session_id=session_id,
            config=GetSessionConfig(**config) if config else None,
        )
        if found is None:
            raise SessionNotFoundError(f"No session {session_id!r}.")
        return found

    @router.post(ENGINE_PATH + "/sessions")
    async def create_session(request: Request, engine: Engine = engine_dep) -> Response:
        body = await body_of(request)
        user_id = wire.field(body, "userId")
        if not isinstance(user_id, str) or not user_id:
            raise InputValidationError("A session needs a userId.")
        access.user(request, user_id)
        state = wire.field(body, "sessionState")
        created = await service.create_session(
            app_name=engine.app_name,
            user_id=user_id,
            state=state if isinstance(state, dict) else None,
            session_id=request.query_params.get("sessionId") or None,
        )
        response = _session_json(created, engine)
        return JSONResponse(done(operation_name(response["name"], "session", {}), response))

    @router.get(ENGINE_PATH + "/sessions")
    async def list_sessions(request: Request, engine: Engine = engine_dep) -> Response:
        text = request.query_params.get("filter")
        match = _USER_FILTER.match(text) if text else None
        if text and match is None:
            raise InputValidationError(f'Sessions filter by user_id="..." only, not {text!r}.')
        user_id = re.sub(r"\\(.)", r"\1", match.group(1)) if match else None
        access.scope(request, {"user_id": user_id} if user_id is not None else {})
        listed = await service.list_sessions(app_name=engine.app_name, user_id=user_id)
        return JSONResponse({"sessions": [_session_json(s, engine) for s in listed.sessions]})

    @router.get(SESSION)
    async def get_session(request: Request, session: str, engine: Engine = engine_dep) -> Response:
        user_id, session_id = owner(request, session)
        found = await load(engine, user_id, session_id, num_recent_events=0)
        return JSONResponse(_session_json(found, engine))

    @router.delete(SESSION)
    async def delete_session(
        request: Request, session: str, engine: Engine = engine_dep
    ) -> Response:
        user_id, session_id = owner(request, session)
        await service.delete_session(
            app_name=engine.app_name, user_id=user_id, session_id=session_id
        )
        return JSONResponse(done(operation_name(f"{engine.name}/sessions/{session}", "delete", {})))

    @router.post(SESSION + ":appendEvent")
    async def append_event(request: Request, session: str, engine: Engine = engine_dep) -> Response:
        user_id, session_id = owner(request, session)
        event = _event(await body_of(request))
        stored = await load(engine, user_id, session_id, num_recent_events=1)
        await service.append_event(stored, event)
        return JSONResponse({})

    @router.get(SESSION + "/events")
    async def list_events(request: Request, session: str, engine: Engine = engine_dep) -> Response:
        user_id, session_id = owner(request, session)
        config = _events_config(request.query_params.get("filter"))
        found = await load(engine, user_id, session_id, **config)
        parent = f"{engine.name}/sessions/{session}"
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
    """The event an `appendEvent` request describes."""
    moment = wire.parse_time(wire.field(body, "timestamp"), "timestamp")
    fields: dict[str, Any] = dict(wire.field(body, "rawEvent") or {})
    if not fields:
        fields = {"content": wire.field(body, "content")}
        actions = wire.field(body, "actions") or {}
        if isinstance(actions, dict) and "transfer_agent" in actions:
            actions = {**actions, "transfer_to_agent": actions.pop("transfer_agent")}
        fields["actions"] = actions
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


def _events_config(text: str | None) -> dict[str, Any]:
    """`GetSessionConfig` keywords of an events filter (`timestamp>="..."` only)."""
    if not text:
        return {}
    match = _AFTER_FILTER.match(text)
    if match is None:
        raise InputValidationError(f'Events filter by timestamp>="..." only, not {text!r}.')
    after = wire.parse_time(match.group(1), "timestamp")
    return {"after_timestamp": after.timestamp()} if after is not None else {}

