"""Cloud Run entry point: ADK's FastAPI app for the agents in $AGENTS_DIR, with sessions and
memory on PostgreSQL (`python -m deploy.main`).

Owns: building the app from the deployment settings (adk-memory's URI schemes registered, the
services built by ADK from those URIs, their pools released at shutdown, client-chosen invocation
ids honoured only to resume, see `invocations.py`, the memory inspector when configured, on
the same services and behind the same front as the API, Vertex AI's Memory Bank and session
REST API when `ADK_MEMORY_VERTEX_API` is true (`adk_memory.adk.vertex_api`), and identity
binding in front of all
of it: `ADK_MEMORY_AUTH`, IAP's signed header by default, see `adk_memory.identity`) and
serving it on $PORT, with the deployment's database and options in the environment the
agents' own `configure()` reads. It holds no agent code and never sees the database password.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI
from google.adk.cli.fast_api import get_fast_api_app

from adk_memory.adk.http_errors import add_error_responses
from adk_memory.adk.inspector import INSPECTOR_PATH, inspector_router
from adk_memory.adk.services import collect_services, register
from adk_memory.adk.vertex_api import vertex_api_router
from adk_memory.env import environment, export
from adk_memory.identity import DEV_PATH, IdentityPolicy, add_identity_guard, current_principal
from adk_memory.memory.service import PostgresMemoryService
from adk_memory.sessions.service import PostgresSessionService
from adk_memory.settings import identity_settings

from .invocations import ResumeOnlyInvocationIds
from .settings import DEFAULT_AUTH, PORT_ENV, Deployment


def create_app(environ: Mapping[str, str] | None = None) -> FastAPI:
    """The ASGI app for the deployment described by `environ` (default: the process's)."""
    environ = environment(environ)
    deployment = Deployment.from_env(environ)
    identity = identity_settings(environ, default_mode=DEFAULT_AUTH)  # refused here, not later
    register()

    @asynccontextmanager
    async def release_services(app: FastAPI) -> AsyncIterator[None]:
        """Close the services' pools when the server stops (Cloud Run sends SIGTERM first),
        so Postgres sees clean disconnects instead of dropped sockets."""
        yield
        for service in services:
            await service.close()

    with collect_services() as services:
        app = get_fast_api_app(
            agents_dir=deployment.agents_dir,
            session_service_uri=deployment.session_uri(),
            memory_service_uri=deployment.memory_uri(),
            artifact_service_uri=deployment.artifact_uri,
            use_local_storage=False,
            web=deployment.web_ui,
            lifespan=release_services,
        )
    [sessions] = [s for s in services if isinstance(s, PostgresSessionService)]
    app.add_middleware(ResumeOnlyInvocationIds, session_service=sessions)
    add_error_responses(app)  # adk-memory's errors as 4xx (bad input, not found) or 503/504
    [memory] = [s for s in services if isinstance(s, PostgresMemoryService)]
    if deployment.inspector != "off":
        inspector = inspector_router(
            memory,
            session_service=sessions,
            writable=deployment.inspector == "writable",
            token=deployment.inspector_token,
            principal=current_principal,
        )
        app.include_router(inspector)
    if deployment.vertex_api:  # Memory Bank's REST API, for the official clients
        policy = IdentityPolicy.from_settings(identity)
        app.include_router(vertex_api_router(memory, sessions, policy=policy))
    # Outermost: a request for another user is refused before the invocation-id guard looks
    # its session up, and before ADK runs.
    add_identity_guard(app, identity, operator_paths=(INSPECTOR_PATH, DEV_PATH))
    return app


def main() -> None:
    """Serve on $PORT (Cloud Run sets it) on all interfaces. The agents' own `configure()` calls
    read the process's environment: it gets the deployment's database and options first."""
    export(Deployment.from_env(environment()).agent_environment())
    uvicorn.run(create_app(), host="0.0.0.0", port=int(environment().get(PORT_ENV, "8080")))


if __name__ == "__main__":
    main()
