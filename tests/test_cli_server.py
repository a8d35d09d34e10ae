"""`adk-memory web` / `api_server`: the service URIs built from the database options, the
command line ADK's own commands receive (parsed by ADK, server not started), and one real API
server process whose sessions land in the test database."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import click
import pytest
import test_cli
from click.testing import CliRunner
from conftest import TEST_SCHEMA
from google.adk.cli.cli_tools_click import main as adk_main
from test_cli import Cli, arun, services

from adk_memory import PiiRedactor
from adk_memory.adk.services import memory_service_from_uri, session_service_from_uri
from adk_memory.cli import main
from adk_memory.cli.options import Target
from adk_memory.cli.server import adk_arguments, service_uris
from adk_memory.cli.startup import banner
from adk_memory.env import EMBEDDING_MODEL_ENV, REDACT_ENV, credentials_warning
from adk_memory.memory import GeminiEmbedder

cli = test_cli.cli
"""The `adk-memory` invoker fixture, shared with test_cli.py."""

URL = "postgresql://app:secret@db.internal:5432/agents"


def test_service_uris_name_our_database_schema_and_options(tmp_path: Path) -> None:
    session, memory = service_uris(Target(URL, "tenant_a", None), None, None)
    assert session == f"{URL}?redact=none&schema=tenant_a"
    assert memory == f"{URL}?embedding_model=none&redact=none&schema=tenant_a"
    built = session_service_from_uri(session)
    assert built.database.schema == "tenant_a"
    # `--embedding-model none` and `--redact none` are spelled out, so they win over the
    # server's environment.
    environ = {EMBEDDING_MODEL_ENV: "gemini-embedding-001", REDACT_ENV: "pii"}
    plain = memory_service_from_uri(memory, environ=environ)
    assert plain.embedder is None and plain.redactor is None
    # `--redact pii` reaches both services.
    session, memory = service_uris(Target(URL, "tenant_a", None), None, None, "pii")
    assert "redact=pii" in session
    assert isinstance(memory_service_from_uri(memory, environ={}).redactor, PiiRedactor)

    _, generating = service_uris(Target(URL, "s", None), "gemini-2.5-flash", "gemini-embedding-001")
    service = memory_service_from_uri(generating)
    assert service.llm is not None and service.llm.model == "gemini-2.5-flash"
    assert isinstance(service.embedder, GeminiEmbedder) and service.database.schema == "s"
    assert service.embedder.model == "gemini-embedding-001"

    # No URL: the embedded server, in the same data directory every other command uses.
    data = tmp_path / "pgdata"
    session, memory = service_uris(Target(None, "adk_memory", str(data)), None, None)
    assert session.startswith("adk-memory://?data_dir=")
    assert session_service_from_uri(session).database._data_dir == str(data.resolve())

    with pytest.raises(click.BadParameter, match="not in the URL"):
        service_uris(Target(f"{URL}?schema=x", "adk_memory", None), None, None)


@pytest.mark.parametrize("command", ["web", "api_server"])
def test_adk_parses_the_arguments_it_is_handed(command: str, tmp_path: Path) -> None:
    passed = ["--port", "8123", "--host", "0.0.0.0", str(tmp_path)]
    argv = adk_arguments(passed, "adk-memory://", "adk-memory://?model=m")
    ctx = adk_main.commands[command].make_context(command, argv)
    assert ctx.params["port"] == 8123 and ctx.params["host"] == "0.0.0.0"
    assert ctx.params["agents_dir"] == str(tmp_path)
    assert ctx.params["session_service_uri"] == "adk-memory://"
    assert ctx.params["memory_service_uri"] == "adk-memory://?model=m"
    assert ctx.params["reload"] is False  # ADK's reloader cannot restart an in-process app
    chosen = adk_arguments(["--reload", str(tmp_path)], "s://", "m://")
    assert adk_main.commands[command].make_context(command, chosen).params["reload"] is True


def test_service_uri_options_are_ours() -> None:
    result = CliRunner().invoke(main, ["web", "--session_service_uri=memory://", "."])
    assert result.exit_code == 2
    assert "--session_service_uri is set by adk-memory: use --database-url" in result.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _request(
    url: str, body: dict[str, object] | None = None, timeout: float = 10
) -> dict[str, object] | list[object]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url,
        data=data,
        headers={"Content-Type": "application/json"},
        method="POST" if data else "GET",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def test_api_server_keeps_its_sessions_in_postgres(
    cli: Cli, database_url: str, tmp_path: Path
) -> None:
    agent = tmp_path / "agents" / "hello"
    agent.mkdir(parents=True)
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text(
        "from google.adk.agents import Agent\n"
        "root_agent = Agent(name='hello', model='gemini-2.5-flash', instruction='Say hi.')\n"
    )
    port = _free_port()
    log = tmp_path / "server.log"
    env = {**os.environ, "ADK_MEMORY_DATABASE_URL": database_url, "ADK_MEMORY_SCHEMA": TEST_SCHEMA}
    command = ["api_server", "--port", str(port), str(agent.parent)]
    with log.open("w") as out:  # the child keeps its own copy of the file descriptor
        server = subprocess.Popen(
            [sys.executable, "-m", "adk_memory.cli", *command],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                assert _request(f"{base}/list-apps") == ["hello"]
                break
            except (urllib.error.URLError, ConnectionError):
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "the API server did not start"
                time.sleep(0.3)
        created = _request(f"{base}/apps/hello/users/u1/sessions", {"state": {"k": "v"}})
        assert isinstance(created, dict)
    finally:
        server.terminate()
        server.wait(timeout=30)

    async def stored() -> list[tuple[str, object]]:
        async with services(database_url) as (sessions, _):
            listed = await sessions.list_sessions(app_name="hello", user_id="u1")
            return [(s.id, s.state.get("k")) for s in listed.sessions]

    assert arun(stored) == [(created["id"], "v")]


def test_the_memory_inspector_is_read_only_in_web_and_off_in_api_server() -> None:
    from adk_memory.cli.server import api_server, web

    def default(command: click.Command) -> object:
        [option] = [p for p in command.params if p.name == "inspector"]
        return option.default

    assert (default(web), default(api_server)) == ("read-only", "off")
    result = CliRunner().invoke(main, ["web", "--memory-inspector", "sometimes", "."])
    assert result.exit_code == 2 and "'read-only', 'writable'" in result.stderr


def test_a_start_without_gemini_credentials_warns_and_names_the_demo(tmp_path: Path) -> None:
    for keyless in ({}, {"GOOGLE_GENAI_USE_VERTEXAI": "true"}, {"GOOGLE_CLOUD_PROJECT": "p"}):
        warning = credentials_warning(keyless)
        assert warning is not None and warning.startswith("WARNING: no Gemini credentials")
        assert "adk-memory web samples --demo" in warning
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        assert credentials_warning({key: "k"}) is None
    vertex = {"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_CLOUD_PROJECT": "p"}
    nowhere = {**vertex, "CLOUDSDK_CONFIG": str(tmp_path)}
    assert "no Application Default Credentials" in (credentials_warning(nowhere) or "")
    adc = tmp_path / "adc.json"
    adc.write_text("{}")
    assert credentials_warning({**vertex, "GOOGLE_APPLICATION_CREDENTIALS": str(adc)}) is None


def test_the_banner_links_the_dev_ui_and_the_inspector() -> None:
    params = {"host": "0.0.0.0", "port": 8080, "url_prefix": "/adk"}
    lines = banner("web", params, "read-only", demo=False).splitlines()
    assert lines == [
        "ADK dev UI:       http://0.0.0.0:8080/adk/dev-ui/",
        "Memory inspector: http://0.0.0.0:8080/adk/memory-inspector/ (read-only)",
    ]
    assert banner("api_server", {"host": "::1", "port": 8000}, "off", demo=False) == ""
    demo = banner("web", {"host": "127.0.0.1", "port": 8000}, "writable", demo=True)
    assert "memory-inspector/user?app=personal_assistant&user=demo-user" in demo
    assert "keyless demo model" in demo
