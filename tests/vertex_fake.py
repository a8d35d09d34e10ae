"""A recorded Vertex AI Agent Engine: `AgentEnginePages` serving the list responses in
tests/data/vertex/agent_engine.json (REST bodies as the API returns them, camelCase, paged with
`nextPageToken`), keyed by the GET path each answers. No network.

It can be told to fail once it has served a number of items (an interrupted import), and to
serve changed records (a memory edited in Memory Bank after an import).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from adk_memory.adk.vertex_source import Listing

RECORDING = Path(__file__).parent / "data" / "vertex" / "agent_engine.json"
ENGINE = json.loads(RECORDING.read_text())["engine"]

_PATHS = {
    Listing.MEMORIES: "memories",
    Listing.REVISIONS: "revisions",
    Listing.SESSIONS: "sessions",
    Listing.EVENTS: "events",
}


class RecordedAgentEngine:
    """Serves the recording. `fail_after`: the number of items served before every later call
    raises `error` (a dropped connection by default), as an outage part way through would."""

    def __init__(
        self,
        *,
        fail_after: int | None = None,
        error: Callable[[], Exception] = lambda: ConnectionResetError("connection reset"),
        edit: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.responses: dict[str, list[dict[str, Any]]] = json.loads(RECORDING.read_text())[
            "responses"
        ]
        if edit is not None:
            edit(self.responses)
        self.fail_after = fail_after
        self.error = error
        self.served = 0
        self.calls: list[tuple[str, str | None]] = []

    async def page(
        self, listing: Listing, parent: str, page_token: str | None
    ) -> Mapping[str, Any]:
        path = f"{parent}/{_PATHS[listing]}"
        self.calls.append((path, page_token))
        pages = self.responses.get(path, [{}])  # the API answers an empty listing with {}
        if page_token is None:
            body = pages[0]
        else:
            tokens = [page.get("nextPageToken") for page in pages]
            if page_token not in tokens:
                raise ValueError(f"400 INVALID_ARGUMENT: bad page token {page_token!r}")
            body = pages[tokens.index(page_token) + 1]
        count = len(body.get(listing.value, []))
        if self.fail_after is not None and self.served + count > self.fail_after:
            raise self.error()
        self.served += count
        return copy.deepcopy(body)

    async def engine(self, name: str) -> Mapping[str, Any]:
        """The Agent Engine resource (GET on its name): `{"name": ...}` unless a test set
        `responses[ENGINE]` (one body in a list, as every path here)."""
        self.calls.append((name, None))
        return copy.deepcopy(self.responses.get(name, [{"name": name}])[0])


def memory_record(responses: dict[str, Any], memory_id: str) -> dict[str, Any]:
    """The recorded Memory resource with this id (for tests that edit one)."""
    for page in responses[f"{ENGINE}/memories"]:
        for record in page["memories"]:
            if record["name"].endswith(f"/memories/{memory_id}"):
                return record  # type: ignore[no-any-return]
    raise KeyError(memory_id)
