"""adk-memory's typed errors over HTTP: on ADK's own API server (as `adk-memory web` and
`api_server` and the deploy serve it), a bad id in a URL is a 400 naming what is wrong, a
missing session a 404, never a 500; a 5xx names only the kind of failure."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from conftest import TEST_SCHEMA
from google.adk.cli.fast_api import get_fast_api_app
from sqlalchemy.engine import make_url

from adk_memory.adk.http_errors import add_error_responses, status_of
from adk_memory.adk.services import collect_services, register
from adk_memory.errors import (
    AuthenticationError,
    DatabaseUnavailableError,
    ForbiddenError,
    OptedOutError,
    SessionNotFoundError,
)


@pytest.fixture
async def api(database_url: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """ADK's API server app on adk-memory's services (the test schema), with the handlers."""
    agent = tmp_path / "agents" / "hello"
    agent.mkdir(parents=True)
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text(
        "from google.adk.agents import Agent\n"
        "root_agent = Agent(name='hello', model='gemini-2.5-flash', instruction='Say hi.')\n"
    )
    register()
    uri = make_url(database_url).update_query_dict({"schema": TEST_SCHEMA})
    uri_text = uri.render_as_string(hide_password=False)
    with collect_services() as services:
        app = get_fast_api_app(
            agents_dir=str(agent.parent),
            session_service_uri=uri_text,
            memory_service_uri=uri_text,
            use_local_storage=False,
            web=False,
        )
    add_error_responses(app)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
        yield client
    for service in services:
        await service.close()


async def test_bad_ids_in_adk_routes_are_400s_and_a_missing_session_a_404(api):
    for path in (
        "/apps/hello/users/u%00/sessions",
        "/apps/hello/users/u1/sessions/s%00",
        "/apps/hello/users/" + "x" * 300 + "/sessions",
    ):
        response = await api.get(path)
        assert response.status_code == 400, (path, response.text)
        assert response.json()["detail"]  # says what is wrong
    created = await api.post("/apps/hello/users/u1/sessions", json={})
    assert created.status_code == 200
    assert (await api.get(f"/apps/hello/users/u1/sessions/{created.json()['id']}")).is_success


def test_each_error_has_its_status() -> None:
    assert status_of(OptedOutError("x")) == 400
    assert status_of(SessionNotFoundError("x")) == 404
    assert status_of(DatabaseUnavailableError("x")) == 503
    assert status_of(AuthenticationError("x")) == 401
    assert status_of(ForbiddenError("x")) == 403
