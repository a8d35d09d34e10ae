"""Where a Vertex AI import reads from: one Agent Engine through `google-cloud-aiplatform`'s
client, or a JSON-lines file in the same shape (what `adk-memory export vertex-jsonl` writes).

Owns: the seam, `AgentEnginePages`: one call that returns one page of one listing (memories,
a memory's revisions, sessions, a session's events) as the REST API's list response (`{"memories":
[...], "nextPageToken": "..."}`, camelCase fields), so the importer, a recorded fake and a file
are read alike; the client adapter (`VertexClientPages`: the `vertexai` client's Agent Engine
`memories`, `memories.revisions`, `sessions` and `sessions.events` listings, each item dumped by
its API field names); the file reader (`JsonlPages`); and the lazy import of the optional
`vertex` extra with an error naming it. It never writes anything and never decides what to
import.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import AsyncIterator, Mapping
from enum import Enum
from typing import IO, Any, Protocol

from ..errors import InputValidationError

PAGE_SIZE = 100
"""Items asked for per page (the API's own maximum for these listings is 100)."""


class Listing(str, Enum):
    """The four listings an import reads, by the key of their items in a list response."""

    MEMORIES = "memories"
    REVISIONS = "memoryRevisions"
    SESSIONS = "sessions"
    EVENTS = "sessionEvents"


class AgentEnginePages(Protocol):
    """One page of a listing: `parent` is the Agent Engine's resource name for memories and
    sessions, a memory's for its revisions, a session's for its events; `page_token` the
    previous page's `nextPageToken` (None: the first page). Returns the list response body.
    `engine`: the Agent Engine resource itself (a `ReasoningEngine`, camelCase; its
    `contextSpec.memoryBankConfig` is Memory Bank's configuration), `{}` when unknown."""

    async def page(
        self, listing: Listing, parent: str, page_token: str | None
    ) -> Mapping[str, Any]: ...

    async def engine(self, name: str) -> Mapping[str, Any]: ...


def memory_bank_config(engine: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """An Agent Engine resource's Memory Bank configuration (either case), None without one."""
    for spec_key in ("contextSpec", "context_spec"):
        spec = engine.get(spec_key)
        if isinstance(spec, Mapping):
            for key in ("memoryBankConfig", "memory_bank_config"):
                if isinstance(spec.get(key), Mapping):
                    return dict(spec[key])
    return None


async def items(
    pages: AgentEnginePages, listing: Listing, parent: str
) -> AsyncIterator[list[Mapping[str, Any]]]:
    """Every page's items of one listing, following `nextPageToken` to the end."""
    token: str | None = None
    while True:
        body = await pages.page(listing, parent, token)
        yield list(body.get(listing.value) or [])
        token = body.get("nextPageToken") or None
        if token is None:
            return


def engine_name(project: str, location: str, agent_engine: str) -> str:
    """`projects/P/locations/L/reasoningEngines/ID`; an InputValidationError for parts that
    cannot be one (empty, or holding a `/`, the mistake of passing a full name as the id)."""
    for label, part in (
        ("--project", project),
        ("--location", location),
        ("--agent-engine", agent_engine),
    ):
        if not part or not part.strip() or "/" in part or part != part.strip():
            raise InputValidationError(
                f"{label} must be a bare id (e.g. --agent-engine 1234567890), got {part!r}."
            )
    return f"projects/{project}/locations/{location}/reasoningEngines/{agent_engine}"


def import_vertexai() -> Any:
    """The `vertexai` package, or an ImportError saying which extra installs it."""
    try:
        return importlib.import_module("vertexai")
    except ImportError as exc:
        raise ImportError(
            "Importing from Vertex AI needs google-cloud-aiplatform, which is not installed: "
            'pip install "adk-memory[vertex]"'
        ) from exc


class VertexClientPages:
    """`AgentEnginePages` on `vertexai.Client(project=, location=).aio.agent_engines` (built
    on first use with Application Default Credentials, or pass `client`): each listing's pager
    gives one page (`pager.page`) and the next page's token (`pager.config["page_token"]`)."""

    def __init__(self, project: str, location: str, client: Any = None) -> None:
        self._project = project
        self._location = location
        self._client = client

    def _engines(self) -> Any:
        if self._client is None:
            vertexai = import_vertexai()
            self._client = vertexai.Client(project=self._project, location=self._location)
        return self._client.aio.agent_engines

    async def page(
        self, listing: Listing, parent: str, page_token: str | None
    ) -> Mapping[str, Any]:
        engines = self._engines()
        api = {
            Listing.MEMORIES: lambda: engines.memories,
            Listing.REVISIONS: lambda: engines.memories.revisions,
            Listing.SESSIONS: lambda: engines.sessions,
            Listing.EVENTS: lambda: engines.sessions.events,
        }[listing]()
        config: dict[str, Any] = {"page_size": PAGE_SIZE}
        if page_token:
            config["page_token"] = page_token
        pager = await api.list(name=parent, config=config)
        return {
            listing.value: [
                item.model_dump(mode="json", by_alias=True, exclude_none=True)
                for item in pager.page
            ],
            "nextPageToken": (pager.config or {}).get("page_token"),
        }

    async def engine(self, name: str) -> Mapping[str, Any]:
        found = await self._engines().get(name=name)
        resource = getattr(found, "api_resource", found)  # the SDK's AgentEngine wraps it
        dumped: Mapping[str, Any] = resource.model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        return dumped


class JsonlPages:
    """`AgentEnginePages` on a JSON-lines file: each line `{"memory": {...}, "revisions":
    [...]}` or `{"session": {...}, "events": [...]}` (a Memory or Session resource with its
    revisions or events, oldest first), or one `{"engine": {...}}` (the Agent Engine resource,
    for its configuration), served as one page per listing. The file is read once, whole, and
    checked line by line before anything is served."""

    def __init__(self, source: IO[str]) -> None:
        self._engine: Mapping[str, Any] = {}
        self._memories: list[Mapping[str, Any]] = []
        self._sessions: list[Mapping[str, Any]] = []
        self._children: dict[tuple[Listing, str], list[Mapping[str, Any]]] = {}
        for number, line in enumerate(source, start=1):
            if line.strip():
                try:
                    self._add(json.loads(line))
                except (ValueError, InputValidationError) as exc:
                    raise InputValidationError(f"Line {number}: {exc}") from exc

    def _add(self, line: object) -> None:
        if isinstance(line, dict) and line.keys() == {"engine"}:
            if not isinstance(line["engine"], dict):
                raise InputValidationError('"engine" must be an object.')
            self._engine = line["engine"]
            return
        if not isinstance(line, dict) or len({"memory", "session"} & line.keys()) != 1:
            raise InputValidationError('a line is an object with "memory", "session" or "engine".')
        kind, listing, children = (
            ("memory", Listing.REVISIONS, "revisions")
            if "memory" in line
            else ("session", Listing.EVENTS, "events")
        )
        record = line[kind]
        if not isinstance(record, dict) or not isinstance(record.get("name"), str):
            raise InputValidationError(f'"{kind}" must be an object with a "name".')
        if not isinstance(line.get(children, []), list):
            raise InputValidationError(f'"{children}" must be a list.')
        (self._memories if kind == "memory" else self._sessions).append(record)
        self._children[(listing, record["name"])] = line.get(children, [])

    async def page(
        self, listing: Listing, parent: str, page_token: str | None
    ) -> Mapping[str, Any]:
        if listing is Listing.MEMORIES:
            found = self._memories
        elif listing is Listing.SESSIONS:
            found = self._sessions
        else:
            found = self._children.get((listing, parent), [])
        return {listing.value: found}

    async def engine(self, name: str) -> Mapping[str, Any]:
        return self._engine
