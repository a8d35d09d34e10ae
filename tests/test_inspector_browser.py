"""The memory inspector in a real browser: `adk-memory web --memory-inspector writable` as a
user starts it (a server process on the test database, next to ADK's dev UI), rendered and
driven by headless Chromium over the DevTools protocol (issue 16).

The browser lists the memories a conversation through ADK's API created, shows a memory's
revision timeline after an update, approves a quarantined memory by clicking its button, and
erases the user through the confirmation form. Skipped when Chromium is not installed.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import TEST_SCHEMA
from test_web_ui import AGENTS, APP, USER, _free_port, new_session, say, serving
from websockets.asyncio.client import ClientConnection, connect

from adk_memory import PostgresMemoryService
from adk_memory.memory.guard import GuardAction, GuardVerdict
from adk_memory.memory.scope import user_scope

READY_TIMEOUT = 90.0
LOAD_TIMEOUT = 30.0
SCOPE = user_scope(APP, USER)


class QuarantineMarked:
    """Quarantines facts that say HOLD (the test's own writes only)."""

    async def check(self, fact: str, *, scope: Mapping[str, str], source: str) -> GuardVerdict:
        if "HOLD" in fact:
            return GuardVerdict(GuardAction.QUARANTINE, reason="held for review", rule="test")
        return GuardVerdict(GuardAction.ALLOW)


@pytest.fixture
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium).")
    return found


@asynccontextmanager
async def adk_memory_web(
    database_url: str, agents_dir: Path, log: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """`adk-memory web --memory-inspector writable`, as a subprocess on the test database."""
    port = _free_port()
    args = [
        sys.executable, "-m", "adk_memory.cli", "web", "--memory-inspector", "writable",
        "--port", str(port), "--artifact_service_uri", "memory://", str(agents_dir),
    ]  # fmt: skip
    env = {**os.environ, "ADK_MEMORY_DATABASE_URL": database_url, "ADK_MEMORY_SCHEMA": TEST_SCHEMA}
    async with serving(
        args, env, log, "adk-memory web", port, ready_timeout=READY_TIMEOUT
    ) as client:
        yield client


class Page:
    """One Chromium tab over the DevTools protocol: navigate, click, read the DOM."""

    def __init__(self, socket: ClientConnection) -> None:
        self._socket = socket
        self._next = 0
        self._loads = 0

    async def _receive(self) -> dict[str, Any]:
        message = json.loads(await asyncio.wait_for(self._socket.recv(), LOAD_TIMEOUT))
        if message.get("method") == "Page.loadEventFired":
            self._loads += 1
        return message

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        await self._socket.send(json.dumps({"id": self._next, "method": method, "params": params}))
        while True:
            message = await self._receive()
            if message.get("id") == self._next:
                assert "error" not in message, message
                return message.get("result", {})

    async def _loaded_after(self, loads: int) -> None:
        while self._loads <= loads:
            await self._receive()

    async def open(self, url: str) -> str:
        loads = self._loads
        await self.call("Page.navigate", url=url)
        await self._loaded_after(loads)
        return await self.dom()

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    async def submit(self, script: str) -> str:
        """Run `script` (which clicks a form's button) and wait for the page it leads to."""
        loads = self._loads
        await self.evaluate(script)
        await self._loaded_after(loads)
        return await self.dom()

    async def dom(self) -> str:
        return str(await self.evaluate("document.documentElement.outerHTML"))


@asynccontextmanager
async def browser(chromium: str, profile: Path) -> AsyncIterator[Page]:
    """Headless Chromium with the DevTools protocol on a free port; one page of it."""
    args = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}",
        "--remote-debugging-port=0", "about:blank",
    ]  # fmt: skip
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        announced = profile / "DevToolsActivePort"
        deadline = time.monotonic() + READY_TIMEOUT
        while not announced.exists() or len(announced.read_text().split()) < 2:
            assert process.poll() is None, "Chromium exited"
            assert time.monotonic() < deadline, "Chromium did not open its DevTools port"
            await asyncio.sleep(0.1)
        port = announced.read_text().split()[0]
        async with httpx.AsyncClient() as http:
            targets = (await http.get(f"http://127.0.0.1:{port}/json/list")).json()
        [tab] = [t for t in targets if t["type"] == "page"]
        async with connect(tab["webSocketDebuggerUrl"], max_size=None) as socket:
            page = Page(socket)
            await page.call("Page.enable")
            yield page
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_the_inspector_in_chromium_lists_traces_approves_and_erases(
    chromium, database_url, session_service, make_memory_service, tmp_path
):
    agents = Path(shutil.copytree(AGENTS, tmp_path / "agents"))
    service: PostgresMemoryService = make_memory_service(guard=QuarantineMarked())
    async with (
        adk_memory_web(database_url, agents, tmp_path / "server.log") as client,
        browser(chromium, tmp_path / "chromium") as page,
    ):
        base = f"{client.base_url}/memory-inspector"
        # Memories created through ADK's API: a conversation the agent adds to memory.
        session_id = await new_session(client)
        await say(client, session_id, "My favourite colour is teal.")
        assert (await client.get("/dev-ui/")).status_code == 200  # ADK's UI, next door

        home = await page.open(f"{base}/")
        assert f"user={USER}" in home and APP in home
        listed = await page.open(f"{base}/user?app={APP}&user={USER}")
        assert "My favourite colour is teal." in listed
        assert session_id in listed  # the session that produced it

        # The revision timeline after an update.
        [remembered] = [
            m
            for m in (await service.list_memories(SCOPE)).memories
            if m.fact == "My favourite colour is teal."
        ]
        await service.update_memory(remembered.id, SCOPE, fact="My favourite colour is navy.")
        history = await page.submit(
            f"document.querySelector(\"a[href*='{remembered.id}']\").click()"
        )
        timeline = history.split("Revision timeline")[1]
        assert "CREATED" in timeline and "UPDATED" in timeline
        assert "<del>My favourite colour is teal.</del>" in timeline
        assert "<ins>My favourite colour is navy.</ins>" in timeline

        # Approve a quarantined memory by clicking its button.
        held = await service.create_memory("HOLD: the user is a lighthouse keeper.", SCOPE)
        before = await page.open(f"{base}/user?app={APP}&user={USER}")
        assert "held for review" in before
        after = await page.submit(
            "document.querySelector(\"form[action$='/quarantine/approve'] button\").click()"
        )
        assert "Approved: the memory is live." in after
        assert await service.list_quarantined(SCOPE) == []
        assert (await service.get_memory(held.id, SCOPE)) is not None

        # Erase the user: the link, the confirmation typed in, the button.
        confirm = await page.submit("document.querySelector(\"a[href*='/erase?']\").click()")
        assert "Type the user id to confirm" in confirm
        erased = await page.submit(
            f'document.querySelector("input[name=confirm]").value = {json.dumps(USER)};'
            "document.querySelector(\"form[action$='/erase'] button\").click()"
        )
        assert "Erased" in erased
        assert (await service.list_memories(SCOPE)).memories == []
        sessions = await client.get(f"/apps/{APP}/users/{USER}/sessions")
        assert sessions.json() == []
        gone = await page.open(f"{base}/user?app={APP}&user={USER}")
        assert "teal" not in gone and "navy" not in gone and "lighthouse" not in gone
