"""Wire compatibility with Vertex AI: Memory Bank's and Agent Engine sessions' REST API, served
from adk-memory's services, so the official clients (`agentplatform` / `vertexai`, and ADK's
`VertexAiMemoryBankService` and `VertexAiSessionService` on them) work by pointing their base
URL here.

Owns: `vertex_api_router`, a FastAPI `APIRouter` mountable in any app (`adk-memory web` /
`api_server --vertex-api` and the deploy app mount it), and the routes under
`/v1beta1/projects/{p}/locations/{l}/reasoningEngines/{engine}`: memories (create, get, list,
patch, delete, generate, ingest events, retrieve by similarity or simply, retrieve profiles,
purge), revisions (list, get), rollback, sessions (create, get, list, delete, append an event,
list events) and the long-running operations they answer (`memories.py`, `generation.py`,
`sessions.py`; names and ids: `names.py`, `keys.py`; JSON shapes: `wire.py`; filters:
`filters.py`; access and errors: `access.py`).

A front end like the CLI: it calls the services' public API only, never writes SQL, and checks
every user it acts for against the identity guard's principal (`adk_memory.identity`) when one
stands in front.
"""

from __future__ import annotations

from .names import API_VERSION
from .router import vertex_api_router

__all__ = ["API_VERSION", "vertex_api_router"]
