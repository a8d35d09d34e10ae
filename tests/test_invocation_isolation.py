"""A client-chosen invocation id never selects another user's memories: ADK's own FastAPI app
(`get_fast_api_app`, on adk-memory's URI schemes and the real Postgres), driven in-process over
ASGI, serving three ScriptedLlm agents that show memories in the system instruction through
`MemoryContextCallback` as a before-model callback, through `MemoryContextPlugin`, and through
adk-memory's `PreloadMemoryTool`.

Two users each have their own memories; user B sends user A's invocation id to `/run` and
`/run_sse`, after A's run and while A's run is in flight. B's model requests must only ever hold
B's memories. (This is ADK's raw app, without the deployment's invocation-id guard: the caches
themselves must be safe.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from conftest import TEST_SCHEMA
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.cli.fast_api import get_fast_api_app
from google.adk.cli.utils.base_agent_loader import BaseAgentLoader
from google.adk.models.llm_request import LlmRequest

from adk_memory.adk.callbacks import MemoryContextCallback, MemoryContextPlugin
from adk_memory.adk.services import collect_services, register
from adk_memory.adk.tools import PreloadMemoryTool
from adk_memory.testing import ScriptedLlm

ALICE, BOB = "alice", "bob"
FACTS = {
    ALICE: "The user keeps a diary of Lisbon trips.",
    BOB: "The user plans Oslo trips every winter.",
}
SHARED_INVOCATION = "e-chosen-by-the-client"
DEADLINE = 30.0
"""Seconds a model call waits for the other run to reach its model call (a safety net only)."""


class Overlap:
    """Holds every model call until `parties` calls are in flight at once, so concurrent runs
    are provably inside their model calls (their cache entries alive) at the same time."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.all_in = asyncio.Event()

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived >= self.parties:
            self.all_in.set()
        await asyncio.wait_for(self.all_in.wait(), DEADLINE)


class Agents(BaseAgentLoader):
    """Three apps, one per way of showing memories, each with its own recording model."""

    FORMS = ("with_callback", "with_plugin", "with_tool")

    def __init__(self) -> None:
        self.overlap: Overlap | None = None
        self.llms = {form: ScriptedLlm(responder=self._reply) for form in self.FORMS}
        self.plugin = MemoryContextPlugin()
        self.apps = {
            "with_callback": App(
                name="with_callback",
                root_agent=self._agent("with_callback", callback=MemoryContextCallback()),
            ),
            "with_plugin": App(
                name="with_plugin",
                root_agent=self._agent("with_plugin"),
                plugins=[self.plugin],
            ),
            "with_tool": App(
                name="with_tool", root_agent=self._agent("with_tool", tools=[PreloadMemoryTool()])
            ),
        }

    def _agent(self, form: str, *, callback=None, tools=()) -> LlmAgent:
        return LlmAgent(
            name=form,
            model=self.llms[form],
            instruction="Help the user.",
            before_model_callback=callback,
            tools=list(tools),
        )

    async def _reply(self, request: LlmRequest) -> str:
        if self.overlap is not None:
            await self.overlap.wait()
        return "ok"

    def load_agent(self, agent_name: str) -> App:
        if agent_name not in self.apps:
            raise ValueError(f"No agent {agent_name}.")
        return self.apps[agent_name]

    def list_agents(self) -> list[str]:
        return sorted(self.apps)


@pytest.fixture
def service_uri(database_url: str, session_service) -> str:
    """The test database as a deployment names it, on emptied tables."""
    plain = database_url.replace("postgresql+asyncpg://", "postgresql://")
    return f"{plain}&schema={TEST_SCHEMA}"


@pytest.fixture
async def memories(service_uri: str, make_memory_service) -> None:
    """Each user's own memory, in every app."""
    memory = make_memory_service()
    try:
        for form in Agents.FORMS:
            for user, fact in FACTS.items():
                await memory.create_memory(fact, {"app_name": form, "user_id": user})
    finally:
        await memory.close()


@asynccontextmanager
async def serving(agents: Agents, uri: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """ADK's FastAPI app for `agents`, sessions and memory from adk-memory's URI schemes."""
    register()
    with collect_services() as services:
        app = get_fast_api_app(
            agents_dir=str(tmp_path),
            agent_loader=agents,
            session_service_uri=uri,
            memory_service_uri=f"{uri}&retrieval_mode=text&worker=false",
            artifact_service_uri="memory://",
            use_local_storage=False,
            web=False,
        )
    transport = httpx.ASGITransport(app=app)
    try:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://agent", timeout=60) as client,
        ):
            yield client
    finally:
        for service in services:
            await service.close()


async def new_session(client: httpx.AsyncClient, form: str, user: str) -> str:
    response = await client.post(f"/apps/{form}/users/{user}/sessions", json={})
    response.raise_for_status()
    return response.json()["id"]


async def run(client: httpx.AsyncClient, route: str, form: str, user: str) -> str:
    """One turn of `user` in a new session of `form`, sent with the shared invocation id; the
    invocation id ADK ran it under."""
    body = {
        "app_name": form,
        "user_id": user,
        "session_id": await new_session(client, form, user),
        "invocation_id": SHARED_INVOCATION,
        "new_message": {"role": "user", "parts": [{"text": f"{user} asks about trips"}]},
    }
    response = await client.post(route, json=body)
    response.raise_for_status()
    if route == "/run":
        events = response.json()
    else:
        lines = response.text.splitlines()
        events = [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data:")]
    assert events and "error" not in events[-1], events
    return events[-1]["invocationId"]


def instructions_of(llm: ScriptedLlm, user: str) -> list[str]:
    """The system instructions of `user`'s model calls."""
    said = f"{user} asks about trips"
    return [
        str(request.config.system_instruction or "")
        for request in llm.requests
        if any(p.text == said for c in request.contents for p in c.parts or ())
    ]


def assert_each_user_saw_only_their_own(agents: Agents) -> None:
    for form, llm in agents.llms.items():
        for user, other in ((ALICE, BOB), (BOB, ALICE)):
            seen = instructions_of(llm, user)
            assert seen, (form, user)
            for instruction in seen:
                assert FACTS[user] in instruction, (form, user)
                assert FACTS[other] not in instruction, (form, user)


@pytest.mark.parametrize("route", ["/run", "/run_sse"])
async def test_a_reused_invocation_id_after_the_run_gets_the_users_own_memories(
    route, service_uri, memories, tmp_path
):
    agents = Agents()
    async with serving(agents, service_uri, tmp_path) as client:
        for form in Agents.FORMS:
            # ADK's raw app takes the client's id as is: the precondition of the attack.
            assert await run(client, route, form, ALICE) == SHARED_INVOCATION
            assert await run(client, route, form, BOB) == SHARED_INVOCATION
    assert_each_user_saw_only_their_own(agents)


@pytest.mark.parametrize("route", ["/run", "/run_sse"])
async def test_a_reused_invocation_id_during_the_run_gets_the_users_own_memories(
    route, service_uri, memories, tmp_path
):
    agents = Agents()
    async with serving(agents, service_uri, tmp_path) as client:
        for form in Agents.FORMS:
            agents.overlap = Overlap(parties=2)  # both runs inside their model call at once
            await asyncio.gather(run(client, route, form, ALICE), run(client, route, form, BOB))
    assert_each_user_saw_only_their_own(agents)


async def test_the_plugin_drops_a_runs_cache_entry_when_the_run_ends(
    service_uri, memories, make_memory_service, tmp_path
):
    """After a run, the same app, user, session and invocation id build the block anew: a memory
    added after the run shows up, so nothing of the finished run was kept."""
    agents = Agents()
    async with serving(agents, service_uri, tmp_path) as client:
        session_id = await new_session(client, "with_plugin", ALICE)
        body = {
            "app_name": "with_plugin",
            "user_id": ALICE,
            "session_id": session_id,
            "invocation_id": SHARED_INVOCATION,
            "new_message": {"role": "user", "parts": [{"text": f"{ALICE} asks about trips"}]},
        }
        (await client.post("/run", json=body)).raise_for_status()
        memory = make_memory_service()
        try:
            await memory.create_memory(
                "The user packs light for trips.", {"app_name": "with_plugin", "user_id": ALICE}
            )
        finally:
            await memory.close()
        (await client.post("/run", json=body)).raise_for_status()
    first, second = instructions_of(agents.llms["with_plugin"], ALICE)
    assert "packs light" not in first and "packs light" in second
