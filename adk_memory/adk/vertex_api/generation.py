"""Memory Bank's engine-level memory methods over HTTP: generate, ingest events, retrieve,
retrieve profiles, purge, and the generation operations they start.

Owns: these routes' reading of Vertex AI's requests and the service call each makes; a
generation answers an operation that is not done (the job runs on the worker) and whose `GET`
reads the job back by id and scope (`names.read_operation`). Ingestion, with a model, is the
service's `ingest_events` (a stream per scope and `streamId`, events deduplicated by
`eventId`, the `generationTriggerConfig` and `forceFlush` deciding when a generation starts:
its operation is answered, else a done one); without a model, ADK's scope (`{app_name,
user_id}`) remembers each event with text at once, once by event id, through
`add_events_to_memory`, and another scope is refused. A `vertexSessionSource`
names a session this surface serves (the router's session service). Methods another branch
adds (`purge_memories` with a filter and a dry run) are called by name; without them a purge
names its exact scope with `scope.KEY="VALUE"` terms only. It never writes SQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from google.adk.events import Event
from google.genai import types

from ...errors import InputValidationError, NotFoundError, SessionNotFoundError
from ...memory.models import GenerateMemoriesOperation
from ...memory.service import PostgresMemoryService
from ...sessions.service import PostgresSessionService
from . import wire
from .access import Access, unimplemented
from .filters import filter_options, split_scope
from .names import ENGINE_PATH, Engine, done, operation_name, read_operation
from .requests import Engines, body_of, scope_of, supported

MAX_TOP_K = 100


class GenerationRoutes:
    """The engine-level memory routes on one service (`add_to` puts them on a router)."""

    def __init__(
        self,
        service: PostgresMemoryService,
        access: Access,
        engines: Engines,
        sessions: PostgresSessionService | None = None,
    ) -> None:
        self.service = service
        self.access = access
        self.engines = engines
        self.sessions = sessions

    def add_to(self, router: APIRouter) -> None:
        memories = ENGINE_PATH + "/memories"
        router.add_api_route(memories + ":generate", self.generate, methods=["POST"])
        router.add_api_route(memories + ":ingestEvents", self.ingest, methods=["POST"])
        router.add_api_route(memories + ":retrieve", self.retrieve, methods=["POST"])
        router.add_api_route(memories + ":retrieveProfiles", self.profiles, methods=["POST"])
        router.add_api_route(memories + ":purge", self.purge, methods=["POST"])
        router.add_api_route(ENGINE_PATH + "/operations/{token}", self.operation, methods=["GET"])

    async def scoped(self, request: Request) -> tuple[dict[str, Any], dict[str, str]]:
        """The request's body and its scope, checked against the caller."""
        body = await body_of(request)
        scope = scope_of(body)
        self.access.scope(request, scope)
        return body, scope

    async def generate(self, request: Request) -> Response:
        body = await body_of(request)
        source = _source(body)
        if "session" in source:
            source, scope = await self.session_source(request, body, source["session"])
        else:
            scope = scope_of(body)
        self.access.scope(request, scope)
        operation = await self.service.generate_memories(
            scope=scope,
            disable_consolidation=bool(wire.field(body, "disableConsolidation")),
            metadata=wire.metadata_in(wire.field(body, "metadata")),
            **source,
            **supported(
                self.service.generate_memories,
                revision_labels=wire.field(body, "revisionLabels"),
                revision_ttl=wire.duration(wire.field(body, "revisionTtl"), "revisionTtl"),
                disable_memory_revisions=wire.field(body, "disableMemoryRevisions"),
                allowed_topics=wire.topic_names(wire.field(body, "allowedTopics")),
                metadata_merge_strategy=wire.field(body, "metadataMergeStrategy"),
            ),
        )
        return self.started(request, scope, operation)

    async def session_source(
        self, request: Request, body: Mapping[str, Any], source: Any
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """A `vertexSessionSource` as `generate_memories` keywords, and the scope: the
        request's, else the session's user in its app (ADK's scope; Memory Bank's default is
        `{"user_id": ...}` alone)."""
        name = wire.field(source, "session") if isinstance(source, Mapping) else None
        engine_id, _, ref = (name or "").rpartition("/sessions/")
        if self.sessions is None or not ref or "reasoningEngines/" not in engine_id:
            raise InputValidationError(
                "vertexSessionSource needs a session name (reasoningEngines/E/sessions/S) "
                "and a router serving sessions too."
            )
        user_id, session_id = self.access.session(request, ref)
        app_name = self.engines.app_of(engine_id.rpartition("reasoningEngines/")[2])
        session = await self.sessions.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise SessionNotFoundError(f"No session {name!r}.")
        given = body.get("scope")
        scope = scope_of(body) if given is not None else {"app_name": app_name, "user_id": user_id}
        times = {
            key: wire.parse_time(wire.field(source, camel), camel)
            for key, camel in (("start_time", "startTime"), ("end_time", "endTime"))
        }
        return {"session": session, **times}, scope

    async def ingest(self, request: Request) -> Response:
        body, scope = await self.scoped(request)
        events = _events(wire.field(body, "directContentsSource"))
        ingested = done(operation_name(self.engines.of(request).name, "ingest", scope))
        if self.service.llm is None:  # no model, no streams: ADK's scope remembers at once
            if events and scope.keys() == {"app_name", "user_id"}:
                await self.service.add_events_to_memory(
                    app_name=scope["app_name"], user_id=scope["user_id"], events=events
                )
            elif events:
                raise InputValidationError("Ingesting events here needs a generation model.")
            return JSONResponse(ingested)
        result = await self.service.ingest_events(
            scope,
            events,
            stream_id=wire.field(body, "streamId") or "",
            trigger=wire.field(body, "generationTriggerConfig"),
            force_flush=bool(wire.field(body, "forceFlush")),
            metadata=wire.metadata_in(wire.field(body, "metadata")),
            metadata_merge_strategy=wire.field(body, "metadataMergeStrategy"),
            revision_labels=wire.field(body, "revisionLabels"),
            revision_ttl=wire.duration(wire.field(body, "revisionTtl"), "revisionTtl"),
            disable_memory_revisions=bool(wire.field(body, "disableMemoryRevisions")),
        )
        if result.operation is None:  # buffered: the stream's trigger has not flushed it
            return JSONResponse(ingested)
        return self.started(request, scope, result.operation)

    def started(
        self, request: Request, scope: dict[str, str], operation: GenerateMemoriesOperation
    ) -> Response:
        engine = self.engines.of(request)
        name = operation_name(engine.name, "generate", scope, operation.id)
        return JSONResponse(_operation_json(name, operation, engine))

    async def operation(self, request: Request, token: str) -> Response:
        engine = self.engines.of(request)
        read = read_operation(token)
        self.access.scope(request, read.scope)
        name = f"{engine.name}/operations/{token}"
        if read.kind != "generate":
            return JSONResponse(done(name))
        operation = await self.service.get_operation(read.job, read.scope)
        if operation is None:
            raise NotFoundError(f"No operation {token!r}.")
        return JSONResponse(_operation_json(name, operation, engine))

    async def retrieve(self, request: Request) -> Response:
        engine = self.engines.of(request)
        body, scope = await self.scoped(request)
        text, groups = wire.field(body, "filter"), wire.field(body, "filterGroups")
        similarity = wire.field(body, "similaritySearchParams")
        if similarity is not None:
            flt = filter_options(self.service.retrieve_memories, text, groups)
            return JSONResponse(await _similar(self.service, scope, similarity, flt, engine))
        simple = wire.field(body, "simpleRetrievalParams") or {}
        page = await self.service.list_memories(
            scope,
            **filter_options(self.service.list_memories, text, groups),
            page_size=wire.integer(wire.field(simple, "pageSize"), "pageSize", 50),
            page_token=wire.field(simple, "pageToken") or None,
        )
        out: dict[str, Any] = {
            "retrievedMemories": [
                {"memory": wire.memory_json(m, engine.name)} for m in page.memories
            ]
        }
        if page.next_page_token:
            out["nextPageToken"] = page.next_page_token
        return JSONResponse(out)

    async def profiles(self, request: Request) -> Response:
        _, scope = await self.scoped(request)
        found = await self.service.retrieve_profiles(scope=scope)
        profiles = {p.schema_id: {"schemaId": p.schema_id, "profile": p.profile} for p in found}
        return JSONResponse({"profiles": profiles})

    async def purge(self, request: Request) -> Response:
        body = await body_of(request)
        text = wire.field(body, "filter")
        scope = split_scope(text)[0]
        if not scope:
            raise InputValidationError("A purge names its scope: filter='scope.user_id=\"123\"'.")
        self.access.scope(request, scope)
        force = bool(wire.field(body, "force"))
        count = await _purge(self.service, scope, text, wire.field(body, "filterGroups"), force)
        if count is None:
            return unimplemented("Purging memories by a filter other than their scope")
        name = operation_name(self.engines.of(request).name, "purge", scope)
        return JSONResponse(done(name, {"purgeCount": count}))


def _source(body: Mapping[str, Any]) -> dict[str, Any]:
    """The one source of a generation, as `generate_memories` keywords."""
    direct = wire.field(body, "directContentsSource")
    facts = wire.field(body, "directMemoriesSource")
    session = wire.field(body, "vertexSessionSource")
    given = [s for s in (direct, facts, session) if s is not None]
    if len(given) != 1:
        raise InputValidationError(
            "A generation needs exactly one of directContentsSource, directMemoriesSource "
            "and vertexSessionSource."
        )
    if session is not None:
        return {"session": session}  # read by `GenerationRoutes.session_source`
    if direct is not None:
        return {"contents": _contents(direct)}
    items = wire.field(facts, "directMemories") if isinstance(facts, Mapping) else None
    if not isinstance(items, list) or not items:
        raise InputValidationError("directMemoriesSource needs directMemories.")
    return {"facts": [_fact(item) for item in items]}


def _fact(item: Any) -> str:
    fact = item.get("fact") if isinstance(item, Mapping) else None
    if not isinstance(fact, str) or not fact.strip():
        raise InputValidationError(f"A direct memory needs a fact: {item!r}.")
    return fact


def _source_events(source: Any) -> list[Mapping[str, Any]]:
    """The events of a `directContentsSource`, each with a `content` object."""
    if source is None:
        return []
    events = wire.field(source, "events") if isinstance(source, Mapping) else None
    if not isinstance(events, list):
        raise InputValidationError("directContentsSource needs a list of events.")
    for event in events:
        content = event.get("content") if isinstance(event, Mapping) else None
        if not isinstance(content, Mapping):
            raise InputValidationError(f"An event needs a content: {event!r}.")
    return events


def _content(event: Mapping[str, Any]) -> types.Content:
    try:
        return types.Content.model_validate(event["content"])
    except ValueError as exc:
        raise InputValidationError(f"Not a content: {exc}") from exc


def _contents(source: Any) -> list[types.Content]:
    """The contents of a `directContentsSource` (its events' `content`)."""
    return [_content(event) for event in _source_events(source)]


def _events(source: Any) -> list[Event]:
    """An ingestion's events as ADK events: their ids (`eventId`: an event sent again is
    the same event) and times kept, authored by their content's role."""
    events = []
    for event in _source_events(source):
        content = _content(event)
        moment = wire.parse_time(wire.field(event, "eventTime"), "eventTime")
        fields: dict[str, Any] = {"author": content.role or "user", "content": content}
        if wire.field(event, "eventId"):
            fields["id"] = str(wire.field(event, "eventId"))
        if moment is not None:
            fields["timestamp"] = moment.timestamp()
        events.append(Event(**fields))
    return events


def _operation_json(
    name: str, operation: GenerateMemoriesOperation, engine: Engine
) -> dict[str, Any]:
    """A generation as Memory Bank's `GenerateMemoriesOperation`."""
    if not operation.done:
        return {"name": name, "done": False}
    if operation.error:
        return {"name": name, "done": True, "error": {"code": 13, "message": operation.error}}
    return done(name, wire.generated_json(operation, engine.name))


async def _similar(
    service: PostgresMemoryService,
    scope: dict[str, str],
    params: Any,
    flt: Mapping[str, Any],
    engine: Engine,
) -> dict[str, Any]:
    query = wire.field(params, "searchQuery") if isinstance(params, Mapping) else None
    if not isinstance(query, str) or not query.strip():
        raise InputValidationError("similaritySearchParams needs a searchQuery.")
    top_k = min(wire.integer(wire.field(params, "topK"), "topK", 3), MAX_TOP_K)  # as Memory Bank
    if top_k < 1:
        raise InputValidationError(f"topK is at least 1, got {top_k}.")
    found = await service.retrieve_memories(scope, search_query=query, top_k=top_k, **flt)
    return {
        "retrievedMemories": [
            {
                "memory": wire.memory_json(r.memory, engine.name),
                "distance": r.distance if r.distance is not None else 1.0 - r.score,
            }
            for r in found
        ]
    }


async def _purge(
    service: PostgresMemoryService,
    scope: dict[str, str],
    text: str,
    groups: Any,
    force: bool,
) -> int | None:
    """How many memories of exactly `scope` the purge deletes (or would: `force` false is a
    dry run); None when `text` filters by more than the scope and the service cannot. The
    whole filter goes to a service that reads filters (its scope terms hold in the exact
    scope anyway)."""
    rest = split_scope(text)[1]
    purge_memories = getattr(service, "purge_memories", None)
    if purge_memories is not None:  # branch i-mbconfig: filters and dry runs of its own
        result = await purge_memories(scope, filter=text, filter_groups=groups or None, force=force)
        return int(result.purge_count)
    if rest or groups:
        return None
    counted = await service.retrieve_memories(scope)
    if force:
        await service.purge(scope)
    return len(counted)
