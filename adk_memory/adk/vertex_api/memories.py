"""Memory Bank's memory resources over HTTP: create, get, list, patch, delete, revisions and
rollback.

Owns: these routes' reading of Vertex AI's requests and the one service call each makes
(`PostgresMemoryService`'s Memory Bank API); every scope passes the access check first.
Writes answer as finished long-running operations with the result inline (`names.done`), so
the clients poll nothing. Methods another branch adds to the service (`rollback_memory`,
`get_revision`) are called by name and answer 501 while the service lacks them. It never
writes SQL and never decides what a memory is (the service does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from ...errors import InputValidationError, NotFoundError
from ...memory.service import PostgresMemoryService
from . import keys, wire
from .access import Access, unimplemented
from .filters import filter_options, split_scope
from .names import ENGINE_PATH, done, operation_name
from .requests import Engines, body_of, scope_of, supported

MEMORY = ENGINE_PATH + "/memories/{memory}"


class MemoryRoutes:
    """The memory resource routes on one service (`add_to` puts them on a router)."""

    def __init__(self, service: PostgresMemoryService, access: Access, engines: Engines) -> None:
        self.service = service
        self.access = access
        self.engines = engines

    def add_to(self, router: APIRouter) -> None:
        router.add_api_route(ENGINE_PATH + "/memories", self.create_memory, methods=["POST"])
        router.add_api_route(ENGINE_PATH + "/memories", self.list_memories, methods=["GET"])
        router.add_api_route(MEMORY, self.get_memory, methods=["GET"])
        router.add_api_route(MEMORY, self.update_memory, methods=["PATCH"])
        router.add_api_route(MEMORY, self.delete_memory, methods=["DELETE"])
        router.add_api_route(MEMORY + "/revisions", self.list_revisions, methods=["GET"])
        router.add_api_route(MEMORY + "/revisions/{revision}", self.get_revision, methods=["GET"])
        router.add_api_route(MEMORY + ":rollback", self.rollback, methods=["POST"])

    def owned(self, request: Request, memory: str) -> tuple[dict[str, str], str]:
        """(scope, memory id) of a memory's resource id, checked against the caller."""
        scope, memory_id = keys.memory_key(memory)
        self.access.scope(request, scope)
        return scope, memory_id

    async def create_memory(self, request: Request) -> Response:
        engine = self.engines.of(request)
        body = await body_of(request)
        scope = scope_of(body)
        self.access.scope(request, scope)
        fact = wire.field(body, "fact")
        if not isinstance(fact, str):
            raise InputValidationError("A memory needs a fact (a string).")
        created = await self.service.create_memory(
            fact,
            scope,
            topics=wire.topic_names(wire.field(body, "topics")),
            metadata=wire.metadata_in(wire.field(body, "metadata")),
            ttl=wire.duration(wire.field(body, "ttl"), "ttl"),
            **_revision_options(self.service.create_memory, body),
            **supported(self.service.create_memory, memory_id=request.query_params.get("memoryId")),
        )
        name = operation_name(engine.name, "create", scope)
        return JSONResponse(done(name, wire.memory_json(created, engine.name)))

    async def list_memories(self, request: Request) -> Response:
        engine = self.engines.of(request)
        query = request.query_params
        scope, rest = split_scope(query.get("filter"))
        self.access.scope(request, scope)
        page = await self.service.list_memories(
            scope or None,
            **filter_options(self.service.list_memories, rest, None),
            page_size=wire.integer(query.get("pageSize"), "pageSize", 50),
            page_token=query.get("pageToken") or None,
        )
        out: dict[str, Any] = {
            "memories": [wire.memory_json(m, engine.name) for m in page.memories]
        }
        if page.next_page_token:
            out["nextPageToken"] = page.next_page_token
        return JSONResponse(out)

    async def get_memory(self, request: Request, memory: str) -> Response:
        scope, memory_id = self.owned(request, memory)
        found = await self.service.get_memory(memory_id, scope)
        if found is None:
            raise NotFoundError(f"No memory {memory!r}.")
        return JSONResponse(wire.memory_json(found, self.engines.of(request).name))

    async def update_memory(self, request: Request, memory: str) -> Response:
        engine = self.engines.of(request)
        scope, memory_id = self.owned(request, memory)
        body = await body_of(request)
        mask = _mask(request.query_params.get("updateMask"), body)
        updated = await self.service.update_memory(
            memory_id,
            scope,
            fact=wire.field(body, "fact") if "fact" in mask else None,
            topics=wire.topic_names(wire.field(body, "topics")) if "topics" in mask else None,
            metadata=(
                wire.metadata_in(wire.field(body, "metadata")) if "metadata" in mask else None
            ),
            ttl=wire.duration(wire.field(body, "ttl"), "ttl") if "ttl" in mask else None,
            labels=wire.field(body, "revisionLabels"),
            **_revision_options(self.service.update_memory, body),
        )
        name = operation_name(engine.name, "update", scope)
        return JSONResponse(done(name, wire.memory_json(updated, engine.name)))

    async def delete_memory(self, request: Request, memory: str) -> Response:
        scope, memory_id = self.owned(request, memory)
        if await self.service.get_memory(memory_id, scope) is None:
            raise NotFoundError(f"No memory {memory!r}.")
        await self.service.delete_memory(memory_id=memory_id, scope=scope)
        return JSONResponse(done(operation_name(self.engines.of(request).name, "delete", scope)))

    async def list_revisions(self, request: Request, memory: str) -> Response:
        scope, memory_id = self.owned(request, memory)
        memory_name = wire.memory_name(self.engines.of(request).name, scope, memory_id)
        text = request.query_params.get("filter")
        options = supported(self.service.list_revisions, filter=text)
        if text and not options:
            raise InputValidationError("This adk-memory's service does not filter revisions.")
        revisions = await self.service.list_revisions(memory_id, scope, **options)
        return JSONResponse(
            {"memoryRevisions": [wire.revision_json(r, memory_name) for r in revisions]}
        )

    async def get_revision(self, request: Request, memory: str, revision: str) -> Response:
        scope, memory_id = self.owned(request, memory)
        memory_name = wire.memory_name(self.engines.of(request).name, scope, memory_id)
        getter = getattr(self.service, "get_revision", None)
        if getter is not None:  # the service's own (branch i-mbconfig)
            found = await getter(memory_id, scope, revision)
        else:
            history = await self.service.list_revisions(memory_id, scope)
            found = next((r for r in history if r.id == revision), None)
            if found is None:
                raise NotFoundError(f"Memory {memory!r} has no revision {revision!r}.")
        return JSONResponse(wire.revision_json(found, memory_name))

    async def rollback(self, request: Request, memory: str) -> Response:
        scope, memory_id = self.owned(request, memory)
        target = wire.field(await body_of(request), "targetRevisionId")
        if not isinstance(target, str) or not target:
            raise InputValidationError("targetRevisionId is required.")
        rollback = getattr(self.service, "rollback_memory", None)
        if rollback is None:  # added by branch i-mbconfig (NEW_APIS.md)
            return unimplemented("RollbackMemory")
        await rollback(memory_id, scope, target)
        return JSONResponse(done(operation_name(self.engines.of(request).name, "rollback", scope)))


def _revision_options(method: Any, body: Mapping[str, Any]) -> dict[str, Any]:
    """Memory Bank's per-request revision options the service's `method` takes."""
    return supported(
        method,
        revision_labels=wire.field(body, "revisionLabels"),
        revision_ttl=wire.duration(wire.field(body, "revisionTtl"), "revisionTtl"),
        disable_memory_revisions=wire.field(body, "disableMemoryRevisions"),
    )


def _mask(update_mask: str | None, body: Mapping[str, Any]) -> set[str]:
    """The fields a PATCH changes: its `updateMask` (snake or camel), else every field sent."""
    if not update_mask:
        return {name for name in ("fact", "topics", "metadata", "ttl") if name in body}
    names = {part.strip() for part in update_mask.split(",") if part.strip()}
    return {"".join(f"_{c.lower()}" if c.isupper() else c for c in n) for n in names}
