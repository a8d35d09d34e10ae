"""Wire compatibility (issue 27): the official Vertex AI clients, unmodified, against adk-memory's
REST surface (`adk_memory.adk.vertex_api`) over 127.0.0.1.

The `agentplatform` client (what ADK's Vertex services build) talks HTTP to a uvicorn server on
a free port, in the test's own event loop; its credentials are a fixed bearer token, or, for
ADK's `VertexAiSessionService` (which takes none), Application Default Credentials from a file
holding an unexpired token: no call leaves the machine. ADK's two services are
pointed at the server the one way google-adk 2.13 allows (the endpoint hooks it documents);
nothing else of them changes.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import socket
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

agentplatform = pytest.importorskip("agentplatform")

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.memory.vertex_ai_memory_bank_service import VertexAiMemoryBankService  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions.vertex_ai_session_service import VertexAiSessionService  # noqa: E402
from google.adk.tools.preload_memory_tool import PreloadMemoryTool  # noqa: E402
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types  # noqa: E402
from google.oauth2.credentials import Credentials  # noqa: E402

from adk_memory.adk.vertex_api import vertex_api_router  # noqa: E402
from adk_memory.identity import (  # noqa: E402
    CallableResolver,
    IdentityGuard,
    IdentityPolicy,
    Principal,
)
from adk_memory.testing import HashEmbedder, ScriptedLlm  # noqa: E402

ENGINE = "4242"
APP = "travel"
ENGINE_NAME = f"projects/p/locations/us-central1/reasoningEngines/{ENGINE}"
ALICE = {"app_name": APP, "user_id": "alice"}


def extraction(*facts: str, topic: str = "USER_PREFERENCES") -> str:
    return json.dumps({"facts": [{"fact": f, "topic": topic, "forget": False} for f in facts]})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


Serve = Callable[..., Awaitable[str]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Serve the surface on a free 127.0.0.1 port in this event loop; the base URL."""
    servers: list[tuple[uvicorn.Server, asyncio.Task[None]]] = []

    async def start(memory: Any = None, sessions: Any = None, *, guard: bool = False) -> str:
        app = FastAPI()
        policy = _operators() if guard else None
        app.include_router(
            vertex_api_router(memory, sessions, policy=policy, engines={ENGINE: APP})
        )

        served: Any = app
        if guard:  # bearer "<user>-token" is that user; "ops-token" an operator
            served = IdentityGuard(app, CallableResolver(_principal), policy)
        port = free_port()
        config = uvicorn.Config(served, host="127.0.0.1", port=port, log_level="warning")
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        servers.append((server, task))
        deadline = asyncio.get_running_loop().time() + 10
        while not server.started:
            assert asyncio.get_running_loop().time() < deadline, "server did not start"
            await asyncio.sleep(0.01)
        return f"http://127.0.0.1:{port}/"

    yield start
    for server, task in servers:
        server.should_exit = True
        await task


def _principal(headers: Mapping[str, str]) -> Principal | None:
    token = headers.get("authorization", "").removeprefix("Bearer ")
    if not token.endswith("-token"):
        return None
    user = token.removesuffix("-token")
    return Principal(subject=user, claims={"email": user, "role": user})


def _operators() -> IdentityPolicy:
    return IdentityPolicy(operators=(("role", "ops"),))


def client(base_url: str, token: str = "alice-token") -> Any:
    """The official client, pointed at `base_url` (its `http_options`); keep it while its
    `.aio` is used (dropping it closes the connection pool they share)."""
    return agentplatform.Client(
        project="p",
        location="us-central1",
        credentials=Credentials(token=token),
        http_options={"base_url": base_url},
    )


async def until(check: Callable[[], Awaitable[Any]], what: str) -> Any:
    """Poll `check` until it returns something truthy (a deadline, no fixed sleep)."""
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        found = await check()
        if found:
            return found
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def test_google_cloud_aiplatforms_vertexai_client_works_too(
    make_memory_service: Any, serve: Serve
) -> None:
    """google-cloud-aiplatform's `vertexai.Client` (the same `_genai` code under the
    `agent_engines` name, deprecated for `agentplatform`'s but still what many teams run): create,
    retrieve by similarity, revisions, a purge, pointed at the server by `http_options` alone."""
    vertexai = pytest.importorskip("vertexai")
    memory = make_memory_service(embedder=HashEmbedder(64))
    base = await serve(memory)
    with warnings.catch_warnings():  # FutureWarning: "use agentplatform.Client instead"
        warnings.simplefilter("ignore", FutureWarning)
        sdk = vertexai.Client(
            project="p",
            location="us-central1",
            credentials=Credentials(token="alice-token"),
            http_options={"base_url": base},
        )
    memories = sdk.aio.agent_engines.memories
    created = await memories.create(
        name=f"reasoningEngines/{ENGINE}",
        fact="The user prefers aisle seats.",
        scope=ALICE,
        config={"wait_for_completion": True},
    )
    assert created.done and created.response.name.startswith(ENGINE_NAME + "/memories/")
    found = [
        r.memory.fact
        async for r in await memories.retrieve(
            name=f"reasoningEngines/{ENGINE}",
            scope=ALICE,
            similarity_search_params={"search_query": "aisle seat", "top_k": 1},
        )
    ]
    assert found == ["The user prefers aisle seats."]
    revisions = [r async for r in await memories.revisions.list(name=created.response.name)]
    assert [r.fact for r in revisions] == ["The user prefers aisle seats."]
    purged = await memories.purge(
        name=f"reasoningEngines/{ENGINE}",
        filter='scope.app_name="travel" AND scope.user_id="alice"',
        force=True,
    )
    assert purged.response.purge_count == 1
    assert await memory.retrieve_memories(ALICE) == []


async def test_the_sdk_retrieves_a_scopes_structured_profiles(
    make_memory_service: Any, serve: Serve
) -> None:
    """`memories.retrieve_profiles`: each schema's profile of the scope, keyed by schema id; an
    empty scope has none."""
    memory = make_memory_service(embedder=HashEmbedder(64))
    await memory.import_profile(ALICE, "traveller", {"home_airport": "LYS", "seat": "aisle"})
    sdk = client(await serve(memory))
    name = f"reasoningEngines/{ENGINE}"
    found = await sdk.aio.memory_banks.memories.retrieve_profiles(name=name, scope=ALICE)
    assert found.profiles is not None and set(found.profiles) == {"traveller"}
    assert found.profiles["traveller"].profile == {"home_airport": "LYS", "seat": "aisle"}
    bob = {"app_name": APP, "user_id": "bob"}
    none = await sdk.aio.memory_banks.memories.retrieve_profiles(name=name, scope=bob)
    assert not none.profiles


async def test_the_sdk_creates_retrieves_revises_and_purges_memories(
    make_memory_service: Any, serve: Serve
) -> None:
    memory = make_memory_service(embedder=HashEmbedder(64))
    sdk = client(await serve(memory))
    memories = sdk.aio.memory_banks.memories
    try:
        created = await memories.create(
            name=f"reasoningEngines/{ENGINE}",
            fact="The user prefers window seats.",
            scope=ALICE,
            config={"wait_for_completion": True, "metadata": {"source": {"string_value": "crm"}}},
        )
        assert created.done and created.response.fact == "The user prefers window seats."
        name = created.response.name
        assert name.startswith(ENGINE_NAME + "/memories/")
        await memories.create(
            name=f"reasoningEngines/{ENGINE}", fact="The user is vegetarian.", scope=ALICE
        )

        got = await memories.get(name=name)
        assert got.scope == ALICE and got.metadata["source"].string_value == "crm"

        found = [
            r.memory.fact
            async for r in await memories.retrieve(
                name=f"reasoningEngines/{ENGINE}",
                scope=ALICE,
                similarity_search_params={"search_query": "window seat", "top_k": 1},
            )
        ]
        assert found == ["The user prefers window seats."]
        by_filter = [
            r.memory.fact
            async for r in await memories.retrieve(
                name=f"reasoningEngines/{ENGINE}",
                scope=ALICE,
                simple_retrieval_params={"page_size": 10},
                config={
                    "filter_groups": [
                        {"filters": [{"key": "source", "value": {"string_value": "crm"}}]}
                    ]
                },
            )
        ]
        assert by_filter == ["The user prefers window seats."]
        listed = [m.fact async for m in await memories.list(name=f"reasoningEngines/{ENGINE}")]
        assert sorted(listed) == ["The user is vegetarian.", "The user prefers window seats."]

        revisions = [r async for r in await memories.revisions.list(name=name)]
        assert [r.fact for r in revisions] == ["The user prefers window seats."]
        one = await memories.revisions.get(name=revisions[0].name)
        assert one.name == revisions[0].name

        dry = await memories.purge(
            name=f"reasoningEngines/{ENGINE}",
            filter='scope.app_name="travel" AND scope.user_id="alice"',
        )
        assert dry.done and dry.response.purge_count == 2
        assert len(await memory.retrieve_memories(ALICE)) == 2  # a dry run deletes nothing
        purged = await memories.purge(
            name=f"reasoningEngines/{ENGINE}",
            filter='scope.app_name="travel" AND scope.user_id="alice"',
            force=True,
        )
        assert purged.response.purge_count == 2
        assert await memory.retrieve_memories(ALICE) == []
        with pytest.raises(genai_errors.ClientError) as missing:
            await memories.get(name=name)
        assert missing.value.code == 404
    finally:
        await memory.close()


async def test_the_sdk_generates_memories_with_a_scripted_model(
    make_memory_service: Any, serve: Serve
) -> None:
    llm = ScriptedLlm([extraction("The user prefers aisle seats.")])
    memory = make_memory_service(llm=llm, embedder=HashEmbedder(64))
    sdk = client(await serve(memory))
    memories = sdk.aio.memory_banks.memories
    try:
        operation = await memories.generate(
            name=f"reasoningEngines/{ENGINE}",
            direct_contents_source={
                "events": [
                    {"content": {"role": "user", "parts": [{"text": "Aisle seats, always."}]}}
                ]
            },
            scope=ALICE,
            config={
                "wait_for_completion": True,
                "allowed_topics": [{"managed_memory_topic": "USER_PREFERENCES"}],
                "metadata": {"source": {"string_value": "sdk"}},
                "metadata_merge_strategy": "MERGE",
            },
        )
        assert operation.done and operation.error is None
        [generated] = operation.response.generated_memories
        assert generated.memory.metadata["source"].string_value == "sdk"
        assert generated.action == "CREATED"
        assert generated.memory.fact == "The user prefers aisle seats."
        stored = await memories.get(name=generated.memory.name)
        assert stored.fact == "The user prefers aisle seats."
    finally:
        await memory.close()


async def test_the_sdk_generates_from_a_session_it_wrote(
    make_memory_service: Any, make_session_service: Any, serve: Serve
) -> None:
    llm = ScriptedLlm([extraction("The user has a cat named Miso.")])
    memory = make_memory_service(llm=llm, embedder=HashEmbedder(64))
    sdk = client(await serve(memory, make_session_service()))
    try:
        created = await sdk.aio.sessions.create(
            name=f"reasoningEngines/{ENGINE}", user_id="alice", config={"session_state": {"a": 1}}
        )
        session = created.response.name
        await sdk.aio.sessions.events.append(  # the named fields, no rawEvent
            name=session,
            author="user",
            invocation_id="inv-1",
            timestamp=datetime.now(UTC),
            config={
                "content": {"role": "user", "parts": [{"text": "My cat Miso."}]},
                "actions": {"state_delta": {"pet": "Miso"}},
                "event_metadata": {"turn_complete": True},
            },
        )
        [event] = [e async for e in await sdk.aio.sessions.events.list(name=session)]
        assert event.content.parts[0].text == "My cat Miso." and event.invocation_id == "inv-1"
        assert (await sdk.aio.sessions.get(name=session)).session_state == {"a": 1, "pet": "Miso"}
        assert event.raw_event["turnComplete"] is True
        operation = await sdk.aio.memory_banks.memories.generate(
            name=f"reasoningEngines/{ENGINE}",
            vertex_session_source={"session": session},
            config={"wait_for_completion": True},
        )
        [generated] = operation.response.generated_memories
        assert generated.memory.fact == "The user has a cat named Miso."
        assert generated.memory.scope == ALICE  # the session's app (engine) and user
    finally:
        await memory.close()


async def test_ingested_events_are_remembered_once_without_a_model(
    make_memory_service: Any, serve: Serve
) -> None:
    memory = make_memory_service()  # no model: each event with text is remembered as it is
    sdk = client(await serve(memory))
    events = {
        "events": [
            {
                "content": {"role": "user", "parts": [{"text": "I moved to Porto."}]},
                "eventId": "e-1",
                "eventTime": "2026-01-02T03:04:05Z",
            }
        ]
    }
    try:
        for _ in range(2):  # ADK sends the whole session every time
            operation = await sdk.aio.memory_banks.ingest_events(
                name=f"reasoningEngines/{ENGINE}", scope=ALICE, direct_contents_source=events
            )
            assert operation.done
        [remembered] = await memory.retrieve_memories(ALICE)
        assert remembered.memory.fact == "I moved to Porto."
    finally:
        await memory.close()


async def test_the_sdk_ingests_a_stream_flushed_by_event_count(
    make_memory_service: Any, serve: Serve
) -> None:
    llm = ScriptedLlm([extraction("The user moved to Porto.")])
    memory = make_memory_service(llm=llm, embedder=HashEmbedder(64))
    sdk = client(await serve(memory))

    def event(event_id: str, text: str) -> dict[str, Any]:
        return {"content": {"role": "user", "parts": [{"text": text}]}, "event_id": event_id}

    ingest = functools.partial(
        sdk.aio.memory_banks.ingest_events,
        name=f"reasoningEngines/{ENGINE}",
        scope=ALICE,
        stream_id="chat-1",
    )
    try:
        waiting = await ingest(
            direct_contents_source={"events": [event("e-1", "I moved.")]},
            generation_trigger_config={"generation_rule": {"event_count": 2}},
        )
        assert waiting.done  # buffered: one event of two
        flushed = await ingest(  # e-1 again is deduplicated; e-2 makes two
            direct_contents_source={
                "events": [event("e-1", "I moved."), event("e-2", "To Porto.")]
            },
            config={"wait_for_completion": True, "revision_labels": {"via": "ingest"}},
        )
        assert flushed.done and flushed.error is None
        [remembered] = await memory.retrieve_memories(ALICE)
        assert remembered.memory.fact == "The user moved to Porto."
        [revision] = await memory.list_revisions(remembered.memory.id, ALICE)
        assert revision.labels == {"via": "ingest"}
        sent = " ".join(p.text or "" for c in llm.requests[0].contents for p in c.parts or [])
        assert sent.count("I moved.") == 1 and "To Porto." in sent
    finally:
        await memory.close()


async def test_a_patch_then_a_rollback_to_the_first_revision(
    make_memory_service: Any, serve: Serve
) -> None:
    memory = make_memory_service()
    base = await serve(memory)
    sdk = client(base)
    memories = sdk.aio.memory_banks.memories
    try:
        created = await memories.create(
            name=f"reasoningEngines/{ENGINE}",
            fact="The user lives in Lyon.",
            scope=ALICE,
            config={"wait_for_completion": True},
        )
        name = created.response.name
        async with httpx.AsyncClient(base_url=base) as http:  # this SDK has no public update
            patched = await http.patch(
                f"v1beta1/{name}",
                params={"updateMask": "fact"},
                json={"fact": "The user lives in Paris."},
            )
        assert patched.json()["response"]["fact"] == "The user lives in Paris."
        first, second = [r async for r in await memories.revisions.list(name=name)]
        assert (first.fact, second.fact) == ("The user lives in Lyon.", "The user lives in Paris.")
        target = first.name.split("/")[-1]
        if not hasattr(memory, "rollback_memory"):  # the service's own, from branch i-mbconfig
            with pytest.raises(genai_errors.ServerError) as refused:
                await memories.rollback(name=name, target_revision_id=target)
            assert refused.value.code == 501
            return
        rolled = await memories.rollback(name=name, target_revision_id=target)
        assert rolled.done
        assert (await memories.get(name=name)).fact == "The user lives in Lyon."
    finally:
        await memory.close()


async def test_another_users_scope_is_a_403_behind_the_identity_guard(
    make_memory_service: Any, make_session_service: Any, serve: Serve
) -> None:
    memory = make_memory_service()
    base = await serve(memory, make_session_service(), guard=True)
    try:
        sdks = {who: client(base, f"{who}-token") for who in ("alice", "bob", "ops")}
        sdks["no"] = client(base, "no credentials")
        alices = sdks["alice"].aio.memory_banks.memories
        await alices.create(name=f"reasoningEngines/{ENGINE}", fact="Alice's fact.", scope=ALICE)
        bobs = sdks["bob"].aio.memory_banks.memories
        for call in (
            bobs.create(name=f"reasoningEngines/{ENGINE}", fact="x", scope=ALICE),
            bobs.retrieve(name=f"reasoningEngines/{ENGINE}", scope=ALICE),
            bobs.list(name=f"reasoningEngines/{ENGINE}"),  # every scope: operators only
        ):
            with pytest.raises(genai_errors.ClientError) as refused:
                await call
            assert refused.value.code == 403
        with pytest.raises(genai_errors.ClientError) as anonymous:
            await sdks["no"].aio.memory_banks.memories.retrieve(
                name=f"reasoningEngines/{ENGINE}", scope=ALICE
            )
        assert anonymous.value.code == 401
        ops = sdks["ops"].aio.memory_banks.memories
        assert [m.fact async for m in await ops.list(name=f"reasoningEngines/{ENGINE}")] == [
            "Alice's fact."
        ]
        # Sessions: a session id the client chose is its caller's own; another's is a 403.
        bob_sessions = sdks["bob"].aio.sessions
        created = await bob_sessions.create(
            name=f"reasoningEngines/{ENGINE}", user_id="bob", config={"session_id": "trip"}
        )
        bare = await bob_sessions.get(name=f"reasoningEngines/{ENGINE}/sessions/trip")
        assert bare.user_id == "bob" and bare.name == created.response.name
        for refused_call in (
            sdks["alice"].aio.sessions.get(name=created.response.name),
            sdks["alice"].aio.sessions.create(name=f"reasoningEngines/{ENGINE}", user_id="bob"),
        ):
            with pytest.raises(genai_errors.ClientError) as refused:
                await refused_call
            assert refused.value.code == 403
    finally:
        await memory.close()


class _SessionsHere(VertexAiSessionService):
    """ADK's service, its endpoint set with the hook ADK documents for one."""

    base_url = ""

    def _api_client_http_options_override(self) -> Any:
        return {"base_url": self.base_url}


class _MemoryBankHere(VertexAiMemoryBankService):
    """ADK's service, its endpoint set with the hook ADK documents for one."""

    base_url = ""

    def _build_api_client(self) -> Any:
        return agentplatform.Client(
            project=self._project,
            location=self._location,
            credentials=self._credentials,
            http_options={"base_url": self.base_url},
        ).aio


def _adc_file(tmp_path: Path) -> Path:
    """Application Default Credentials holding a token valid for years: never refreshed, so no
    call to Google's token endpoint (google-auth always sends refreshes there)."""
    path = tmp_path / "adc.json"
    path.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "test",
                "client_secret": "test",
                "refresh_token": "test",
                "token": "adc-token",
                "expiry": "2099-01-01T00:00:00Z",
            }
        )
    )
    return path


async def test_an_adk_agent_on_adks_vertex_services_remembers_across_sessions(
    make_memory_service: Any,
    make_session_service: Any,
    serve: Serve,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory_llm = ScriptedLlm([extraction("The user prefers window seats.")])
    memory = make_memory_service(llm=memory_llm, embedder=HashEmbedder(64))
    base = await serve(memory, make_session_service())
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(_adc_file(tmp_path)))
    for variable in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(variable, raising=False)
    sessions = _SessionsHere(project="p", location="us-central1", agent_engine_id=ENGINE)
    sessions.base_url = base
    bank = _MemoryBankHere(
        project="p",
        location="us-central1",
        agent_engine_id=ENGINE,
        credentials=Credentials(token="adk-token"),
    )
    bank.base_url = base
    try:
        first_llm = ScriptedLlm(["Noted: a window seat."])
        first = await _turn(first_llm, sessions, bank, "I always take a window seat.")
        stored = await sessions.get_session(app_name=APP, user_id="alice", session_id=first)
        assert stored is not None and [e.author for e in stored.events] == ["user", "assistant"]
        await bank.add_session_to_memory(stored)  # ingestEvents, fire and forget, as ADK does

        async def remembered() -> list[str]:
            found = await bank.search_memory(app_name=APP, user_id="alice", query="window seat")
            return [str(part.text) for m in found.memories for part in m.content.parts or []]

        assert await until(remembered, "the generated memory") == ["The user prefers window seats."]
        second_llm = ScriptedLlm(["A window seat, as you like."])
        await _turn(second_llm, sessions, bank, "Book my seat to Tokyo: window seat please.")
        request = json.dumps(
            [c.model_dump(mode="json") for c in second_llm.requests[0].contents]
        ) + str(second_llm.requests[0].config.system_instruction)
        assert "The user prefers window seats." in request
        listed = await sessions.list_sessions(app_name=APP, user_id="alice")
        assert len(listed.sessions) == 2
        await sessions.delete_session(app_name=APP, user_id="alice", session_id=first)
        assert await sessions.get_session(app_name=APP, user_id="alice", session_id=first) is None
    finally:
        await memory.close()


async def _turn(llm: ScriptedLlm, sessions: Any, bank: Any, text: str) -> str:
    """One turn of a new session of alice's, with ADK's preload-memory tool; the session id."""
    agent = LlmAgent(name="assistant", model=llm, instruction="Help.", tools=[PreloadMemoryTool()])
    runner = Runner(app_name=APP, agent=agent, session_service=sessions, memory_service=bank)
    session = await sessions.create_session(app_name=APP, user_id="alice")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(user_id="alice", session_id=session.id, new_message=message):
        pass
    return str(session.id)


async def test_bad_requests_answer_in_googles_error_envelope(make_memory_service: Any) -> None:
    memory = make_memory_service()  # no model: generation is refused
    app = FastAPI()
    app.include_router(vertex_api_router(memory))
    engine = f"/v1beta1/{ENGINE_NAME}"
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://local") as http:
            no_scope = await http.post(f"{engine}/memories", json={"fact": "x"})
            assert no_scope.status_code == 400
            assert no_scope.json()["error"]["status"] == "INVALID_ARGUMENT"
            no_model = await http.post(
                f"{engine}/memories:generate",
                json={"scope": ALICE, "directMemoriesSource": {"directMemories": [{"fact": "x"}]}},
            )
            assert no_model.status_code == 400 and "model" in no_model.json()["error"]["message"]
            bad_page = await http.get(
                f"{engine}/memories", params={"pageSize": "ten", "filter": 'scope.user_id="a"'}
            )
            assert bad_page.status_code == 400 and "pageSize" in bad_page.json()["error"]["message"]
            created = await http.post(f"{engine}/memories", json={"fact": "x.", "scope": ALICE})
            polled = await http.get(f"/v1beta1/{created.json()['name']}")  # done: read back
            assert polled.status_code == 200 and polled.json()["done"] is True
            junk = await http.get(f"{engine}/operations/not-a-token")
            assert junk.status_code == 404 and junk.json()["error"]["status"] == "NOT_FOUND"
            forged = await http.get(f"{engine}/memories/616263-1")  # not a scope: no memory
            assert forged.status_code == 404
            unscoped = await http.post(f"{engine}/memories:purge", json={"force": True})
            assert unscoped.status_code == 400 and "scope" in unscoped.json()["error"]["message"]
            filtered = await http.post(
                f"{engine}/memories:purge",
                json={"filter": 'scope.user_id="alice" AND fact="x"', "force": True},
            )
            wanted = 200 if hasattr(memory, "purge_memories") else 501
            assert filtered.status_code == wanted
            by_text = await http.post(  # AIP-160: the service's own filters (i-mbconfig)
                f"{engine}/memories:retrieve",
                json={"scope": ALICE, "filter": 'fact="x"', "simpleRetrievalParams": {}},
            )
            flt = inspect.signature(memory.list_memories).parameters["filter"]
            reads_text = "str" in str(flt.annotation)
            assert by_text.status_code == (200 if reads_text else 400)
    finally:
        await memory.close()


def test_the_servers_serve_it_on_request() -> None:
    from click.testing import CliRunner

    from adk_memory.cli import main

    for command in ("web", "api_server"):
        result = CliRunner().invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "--vertex-api" in result.output
