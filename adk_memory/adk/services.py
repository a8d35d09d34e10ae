"""URI schemes for ADK's service registry: `adk web`, `adk api_server` and `adk run` on PostgreSQL.

Owns: registering adk-memory's URI schemes with ADK's service registry, so a
`--session_service_uri` / `--memory_service_uri` becomes a `PostgresSessionService` or
`PostgresMemoryService`, and building those services from URIs in code. It parses nothing
itself: every path (these factories, a `services.yaml` naming the classes, which ADK constructs
with `uri=`, and the `*_from_uri` functions) goes through one parser, `adk_memory.settings.uri` (the
scheme, the driver URL, the password taken from the environment), with the options tables of
`sessions/uri.py` and `memory/service/uri.py`. An option the URI leaves out is read from the
`ADK_MEMORY_*` variable `configure()` reads (`SESSION_VARIABLES`, `MEMORY_VARIABLES`); the URI
wins over the environment.

A factory only constructs: it never opens a connection, starts the embedded server or calls a
model. The pool, the migrations and the embedded server start on first use, in the server's
event loop; a model or embedder named in the URI is called only when memories are generated or
searched. It records the database it points at (`shared_database`), so an agent whose
`configure()` names none uses the same one, and two databases in one process are a WARNING.

URIs (`?` options are listed in `sessions.uri.SESSION_OPTIONS`, `memory.uri.MEMORY_OPTIONS`
and `uri.DRIVER_PARAMETERS`):

    postgresql://USER@HOST:5432/DB?schema=adk_memory&pool_size=10
    postgresql://USER@/DB?host=/cloudsql/PROJECT:REGION:INSTANCE      (Unix socket)
    adk-memory://                                                     (the embedded server)
    adk-memory://?data_dir=/var/lib/adk/pgdata

`adk-memory://` without `data_dir` uses `$ADK_MEMORY_DATA_DIR`, else `./.adk/pgdata` in the
working directory: the database `configure()` and the `adk-memory` command use from there.

`postgres://` and `postgresql+asyncpg://` mean the same as `postgresql://`: asyncpg always.

Instead of a `services.py` calling `register()`, an agents directory may hold ADK's
`services.yaml`, naming the classes for any of `SCHEMES`:

    services:
      - {scheme: postgresql, type: session, class: adk_memory.PostgresSessionService}
      - {scheme: postgresql, type: memory, class: adk_memory.PostgresMemoryService}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.adk.cli.service_registry import ServiceRegistry, get_service_registry

from ..db.embedded import exit_on_sigterm
from ..memory.service import PostgresMemoryService
from ..memory.service.uri import MEMORY_VARIABLES, memory_arguments, memory_settings_from_uri
from ..sessions.service import PostgresSessionService
from ..sessions.uri import SESSION_VARIABLES, session_arguments
from ..settings.database import DatabaseSettings
from ..settings.uri import EMBEDDED_SCHEME, SCHEMES, announce, collect_services
from .shared_database import Where, uses

__all__ = [
    "EMBEDDED_SCHEME",
    "MEMORY_VARIABLES",
    "SCHEMES",
    "SESSION_VARIABLES",
    "collect_services",
    "memory_service_from_uri",
    "register",
    "session_service_from_uri",
]


def session_service_from_uri(
    uri: str, *, environ: Mapping[str, str] | None = None, **engine_kwargs: Any
) -> PostgresSessionService:
    """A `PostgresSessionService` for a session service URI (see the module docstring).

    `engine_kwargs` go to `create_async_engine` (what ADK's `session_db_kwargs` carry).
    `environ` (default `os.environ`) is read for the password, the data directory and the
    options the URI leaves out (`SESSION_VARIABLES`).
    """
    return announce(PostgresSessionService(**session_arguments(uri, environ, engine_kwargs)))


def memory_service_from_uri(
    uri: str, *, environ: Mapping[str, str] | None = None
) -> PostgresMemoryService:
    """A `PostgresMemoryService` for a memory service URI (see the module docstring).

    Without `model` it remembers raw events; with one (e.g. `model=gemini-2.5-flash`) it
    generates memories. Without `embedding_model` (or with `none`) it searches full text only
    and needs no API key; `embedding_model=gemini-embedding-001` adds vector search
    (`GeminiEmbedder`). `environ` (default `os.environ`) is read for the password, the data
    directory and the options the URI leaves out (`MEMORY_VARIABLES`).
    """
    return announce(PostgresMemoryService(**memory_arguments(uri, environ)))


def _session_factory(uri: str, **kwargs: Any) -> PostgresSessionService:
    """What ADK calls for a registered scheme: the very construction a `services.yaml` naming
    the class makes, so both routes build the same service from the same URI. Its database is
    recorded for the agents' `configure()` (`shared_database`)."""
    service = PostgresSessionService(uri=uri, **kwargs)
    _record("ADK's session service", service.settings.database)
    return service


def _memory_factory(uri: str, **kwargs: Any) -> PostgresMemoryService:
    """As `_session_factory`, for memory."""
    service = PostgresMemoryService(uri=uri, **kwargs)
    _record("ADK's memory service", memory_settings_from_uri(uri, None, {}).database)
    return service


def _record(who: str, database: DatabaseSettings) -> None:
    uses(who, Where(database.url, database.data_dir, database.schema), adk=True)


def register(registry: ServiceRegistry | None = None) -> None:
    """Make ADK build adk-memory's services for `SCHEMES`, replacing ADK's own `postgresql`
    session factory. Idempotent. An agents directory's `services.py` needs only:

        from adk_memory.adk.services import register
        register()

    It also lets SIGTERM unwind this process (`adk_memory.db.embedded.exit_on_sigterm`), so an
    embedded server that the agents' own stacks start later is stopped on exit: ADK loads
    `services.py` before uvicorn serves, and uvicorn hands the signal back to the handler it
    found once it has shut down; an agent imported while uvicorn serves is too late to set it.
    """
    exit_on_sigterm()
    registry = registry or get_service_registry()
    for scheme in SCHEMES:
        registry.register_session_service(scheme, _session_factory)
        registry.register_memory_service(scheme, _memory_factory)
