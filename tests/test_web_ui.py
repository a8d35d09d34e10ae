"""`adk api_server` and `adk web` as users start them, on adk-memory's URI schemes: real server
processes on free ports, driven over HTTP and, for the dev UI, by headless Chromium.

The agents directory is `tests/agents` (copied, so nothing is written into the repository): its
one-line `services.py` is the only place the schemes get registered, as in a user's project.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from conftest import TEST_SCHEMA
from rls_checks import all_rows

AGENTS = Path(__file__).parent / "agents"
APP, USER = "memory_echo", "web-user"
READY_TIMEOUT = 60.0


@pytest.fixture
def agents_dir(tmp_path: Path) -> Path:
    skip = shutil.ignore_patterns("__pycache__")
    return Path(shutil.copytree(AGENTS, tmp_path / "agents", ignore=skip))


@pytest.fixture
def service_uri(database_url: str, session_service) -> str:
    """The test database as a user writes it, on emptied tables (`session_service` empties
    them)."""
    plain = database_url.replace("postgresql+asyncpg://", "postgresql://")
    return f"{plain}&schema={TEST_SCHEMA}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@asynccontextmanager
async def adk_server(
    command: str, agents_dir: Path, uri: str, log: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """`adk <command>` with our URIs, as a subprocess; yields a client once it answers, and
    stops it with SIGTERM (the way a terminal or a platform stops it) on exit."""
    port = _free_port()
    args = [
        sys.executable, "-m", "google.adk.cli", command, "--port", str(port), "--no-reload",
        "--session_service_uri", uri, "--memory_service_uri", uri,
        "--artifact_service_uri", "memory://", str(agents_dir),
    ]  # fmt: skip
    async with serving(args, os.environ, log, f"adk {command}", port) as client:
        yield client


@asynccontextmanager
async def serving(
    args: list[str],
    env: Mapping[str, str],
    log: Path,
    name: str,
    port: int,
    ready_timeout: float = READY_TIMEOUT,
) -> AsyncIterator[httpx.AsyncClient]:
    """Run server command `args` (named `name` in failures) with its output in `log`; yield a
    client once it answers `/list-apps` on `port`, and stop it with SIGTERM (the way a terminal
    or a platform stops it) on exit."""
    with log.open("ab") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=dict(env))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            deadline = time.monotonic() + ready_timeout
            while True:
                if process.poll() is not None:
                    pytest.fail(f"{name} exited ({process.returncode}):\n{log.read_text()}")
                try:
                    if (await client.get("/list-apps")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"{name} not ready in {ready_timeout} s:\n{log.read_text()}")
                await asyncio.sleep(0.1)
            yield client
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def say(client: httpx.AsyncClient, session_id: str, text: str) -> str:
    """One turn through ADK's `/run`; the agent's reply text."""
    response = await client.post(
        "/run",
        json={
            "app_name": APP,
            "user_id": USER,
            "session_id": session_id,
            "new_message": {"role": "user", "parts": [{"text": text}]},
        },
    )
    response.raise_for_status()
    return response.json()[-1]["content"]["parts"][0]["text"]


async def new_session(client: httpx.AsyncClient) -> str:
    response = await client.post(f"/apps/{APP}/users/{USER}/sessions", json={})
    response.raise_for_status()
    return response.json()["id"]


async def test_api_server_sessions_and_memories_survive_a_restart(
    agents_dir, service_uri, database_url, tmp_path
):
    log = tmp_path / "server.log"
    async with adk_server("api_server", agents_dir, service_uri, log) as client:
        session_id = await new_session(client)
        assert await say(client, session_id, "My favourite colour is teal.") == (
            "echo: My favourite colour is teal."
        )

    conn = await all_rows(database_url)
    try:
        rows = await conn.fetch(
            f"SELECT s.id, count(e.*) AS events FROM {TEST_SCHEMA}.sessions s "
            f"JOIN {TEST_SCHEMA}.events e ON e.session_id = s.id "
            "WHERE s.app_name = $1 AND s.user_id = $2 GROUP BY s.id",
            APP,
            USER,
        )
    finally:
        await conn.close()
    assert [(r["id"], r["events"]) for r in rows] == [(session_id, 2)]

    async with adk_server("api_server", agents_dir, service_uri, log) as client:
        stored = (await client.get(f"/apps/{APP}/users/{USER}/sessions/{session_id}")).json()
        texts = [e["content"]["parts"][0]["text"] for e in stored["events"]]
        assert texts == ["My favourite colour is teal.", "echo: My favourite colour is teal."]
        # Memory written by the first process is preloaded into a new session's turn.
        reply = await say(client, await new_session(client), "What is my favourite colour?")
        assert "recalled:" in reply and "teal" in reply.split("recalled:")[1]


async def test_dev_ui_shows_a_session_created_through_the_api(agents_dir, service_uri, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium).")
    async with adk_server("web", agents_dir, service_uri, tmp_path / "server.log") as client:
        session_id = await new_session(client)
        await say(client, session_id, "Remember the lighthouse keeper.")
        page = f"{client.base_url}/dev-ui/?app={APP}&userId={USER}&session={session_id}"
        browser = [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-extensions", f"--user-data-dir={tmp_path / 'chromium'}",
            "--virtual-time-budget=5000", "--dump-dom", page,
        ]  # fmt: skip
        dom = subprocess.run(
            browser,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    # The UI fetched the session from the server (and so from Postgres) and rendered it.
    assert session_id in dom
    assert "echo: Remember the lighthouse keeper." in dom


SPLIT_CHECK = """\
from google.adk.agents import Agent
from google.adk.apps.app import App

from adk_memory.adk.stack import configure
from adk_memory.testing import ScriptedLlm

stack = configure(triggers=None, run_worker=False)  # names no database


async def remember(callback_context):
    scope = {"app_name": "split_check", "user_id": callback_context.user_id}
    await stack.memory_service.create_memory("Stored by the agent's own stack.", scope)


agent = Agent(
    name="split_check",
    model=ScriptedLlm(responder=lambda request: "ok"),
    instruction="Say ok.",
    after_agent_callback=remember,
)
app = App(name="split_check", root_agent=agent, plugins=stack.plugins)
"""


async def test_an_agents_own_stack_uses_the_database_of_the_session_uri(
    agents_dir, service_uri, make_memory_service, tmp_path
):
    """`adk web --session_service_uri postgresql://...` on an agent whose `configure()` names
    no database: its memories land in that database (and schema), not in an embedded server
    started beside it."""
    (agents_dir / "split_check").mkdir()
    (agents_dir / "split_check" / "__init__.py").write_text("from . import agent\n")
    (agents_dir / "split_check" / "agent.py").write_text(SPLIT_CHECK)
    log = tmp_path / "server.log"
    async with adk_server("api_server", agents_dir, service_uri, log) as client:
        created = await client.post(f"/apps/split_check/users/{USER}/sessions", json={})
        created.raise_for_status()
        message = {"role": "user", "parts": [{"text": "hello"}]}
        turn = {"app_name": "split_check", "user_id": USER, "session_id": created.json()["id"]}
        response = await client.post("/run", json={**turn, "new_message": message})
        response.raise_for_status()
    memory = make_memory_service()
    listed = await memory.list_memories({"app_name": "split_check", "user_id": USER})
    assert [m.fact for m in listed.memories] == ["Stored by the agent's own stack."]
    assert "Two databases" not in log.read_text()
