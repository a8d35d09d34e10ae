"""PostgresMemoryService behind a real ADK Runner: ADK's own memory tools, `preload_memory` (which
searches memory with the user's message before every model call and puts what it finds into the
request) and `load_memory` (a function the model calls with a query), on PostgresSessionService.

User A states a preference in one session; the session is added to memory; in a second session
the model sees it (preloaded into the request, and returned by a scripted `load_memory` call).
User B, in the same app, sees none of it.
"""

from __future__ import annotations

import json

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.memory.in_memory_memory_service import InMemoryMemoryService
from google.adk.runners import Runner
from google.adk.tools import load_memory, preload_memory
from google.adk.tools.load_memory_tool import LoadMemoryResponse
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic_core import to_jsonable_python

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.errors import EmbeddingDimensionError
from adk_memory.testing import HashEmbedder, ScriptedLlm, function_call

APP = "travel_app"
PREFERENCE = "I always prefer a window seat on long flights."
QUESTION = "Which seat should you book on my flight to Tokyo?"


@pytest.fixture
def make_memory(make_memory_service):
    """Memory services on conftest's emptied test tables (their vector dimension, 64, kept)."""
    return make_memory_service


def make_runner(
    llm: ScriptedLlm,
    sessions: PostgresSessionService,
    memory: PostgresMemoryService | None,
) -> Runner:
    agent = LlmAgent(
        name="assistant",
        model=llm,
        instruction="You are a travel assistant.",
        tools=[load_memory, preload_memory],
    )
    return Runner(app_name=APP, agent=agent, session_service=sessions, memory_service=memory)


async def ask(runner: Runner, user_id: str, session_id: str, text: str) -> list:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [
        event
        async for event in runner.run_async(
            user_id=user_id, session_id=session_id, new_message=message
        )
    ]


def request_texts(request) -> list[str]:
    return [p.text for c in request.contents for p in (c.parts or []) if p.text]


def preloaded(request) -> str:
    """The text preload_memory added to a request ('' if none)."""
    return "\n".join(t for t in request_texts(request) if "<PAST_CONVERSATIONS>" in t)


def raw_memory_responses(contents: list[types.Content]) -> list[dict]:
    """The `response` dicts of load_memory calls in `contents`, as ADK built them."""
    return [
        p.function_response.response
        for c in contents
        for p in (c.parts or [])
        if p.function_response and p.function_response.name == "load_memory"
    ]


def memory_responses(contents: list[types.Content]) -> list[dict]:
    """The responses of load_memory calls, as JSON (what a model API receives).

    load_memory returns a pydantic `LoadMemoryResponse`, not a dict, so ADK wraps it: the
    response is `{"result": LoadMemoryResponse(memories=[...])}`, a live pydantic object in the
    request (JSON `{"result": {"memories": [...]}}` once serialised or stored)."""
    return [
        to_jsonable_python(r, exclude_none=True, by_alias=False)
        for r in raw_memory_responses(contents)
    ]


def remembered(response: dict) -> list[dict]:
    assert set(response) == {"result"}
    return response["result"]["memories"]


def remembered_texts(response: dict) -> list[str]:
    return [
        part["text"]
        for memory in remembered(response)
        for part in memory["content"]["parts"]
        if part.get("text")
    ]


async def remember_first_session(make_session_service, memory: PostgresMemoryService):
    """Session 1 of user A: the preference is stated; then the session goes to memory."""
    sessions = make_session_service()
    llm = ScriptedLlm(["Noted: window seats."])
    runner = make_runner(llm, sessions, memory)
    first = await sessions.create_session(app_name=APP, user_id="alice")
    await ask(runner, "alice", first.id, PREFERENCE)
    # Nothing was remembered yet when that turn ran.
    assert preloaded(llm.requests[0]) == ""
    stored = await sessions.get_session(app_name=APP, user_id="alice", session_id=first.id)
    await memory.add_session_to_memory(stored)
    return sessions, first


async def test_a_preference_from_one_session_reaches_the_model_in_the_next(
    make_session_service, make_memory
):
    memory = make_memory(embedder=HashEmbedder(64))
    sessions, first = await remember_first_session(make_session_service, memory)
    stored_memories = (await memory.list_memories({"app_name": APP, "user_id": "alice"})).memories
    assert sorted(m.fact for m in stored_memories) == sorted([PREFERENCE, "Noted: window seats."])

    # Session 2 of user A: preloaded memory, then an explicit load_memory call.
    llm = ScriptedLlm(
        [function_call("load_memory", query="seat preference"), "A window seat, as you prefer."]
    )
    runner = make_runner(llm, sessions, memory)
    second = await sessions.create_session(app_name=APP, user_id="alice")
    events = await ask(runner, "alice", second.id, QUESTION)
    assert events[-1].content.parts[0].text == "A window seat, as you prefer."
    assert len(llm.requests) == 2

    first_request = llm.requests[0]
    context = preloaded(first_request)
    assert f"user: {PREFERENCE}" in context
    assert "The following content is from your previous conversations" in context
    # Timestamps come along (the memories' UTC update times).
    assert "Time: " in context and "+00:00" in context
    # The memory goes just before the user's message, as a transient user content.
    texts = request_texts(first_request)
    assert texts[-1] == QUESTION
    assert "<PAST_CONVERSATIONS>" in texts[-2]
    # load_memory tells the model it has memory (system instruction) and declares itself.
    system = str(first_request.config.system_instruction)
    assert "You are a travel assistant." in system
    assert "call load_memory function with a query" in system
    declared = [d.name for t in first_request.config.tools or [] for d in t.function_declarations]
    assert declared == ["load_memory"]  # preload_memory is not a function the model can call

    # The load_memory call's response carries the remembered text back to the model.
    [response] = memory_responses(llm.requests[1].contents)
    [raw] = raw_memory_responses(llm.requests[1].contents)
    assert isinstance(raw["result"], LoadMemoryResponse)
    assert PREFERENCE in remembered_texts(response)
    entry = next(m for m in remembered(response) if PREFERENCE in json.dumps(m))
    assert entry["author"] == "user"
    assert entry["custom_metadata"]["scope"] == {"app_name": APP, "user_id": "alice"}
    # Only what helps the model weigh a memory reaches it; internal ids and provenance do not.
    assert set(entry["custom_metadata"]) == {"topics", "scope", "score"}
    assert first.id not in json.dumps(entry)
    # preload runs again for the follow-up model call, with the same user message.
    assert f"user: {PREFERENCE}" in preloaded(llm.requests[1])

    # The stored session keeps the tool round trip (the response as plain JSON), not the
    # preloaded text.
    stored = await sessions.get_session(app_name=APP, user_id="alice", session_id=second.id)
    calls = [c for e in stored.events for c in e.get_function_calls()]
    assert [(c.name, c.args) for c in calls] == [("load_memory", {"query": "seat preference"})]
    stored_contents = [e.content for e in stored.events if e.content]
    assert memory_responses(stored_contents) == [response]
    stored_texts = [p.text or "" for c in stored_contents for p in c.parts or []]
    assert not any("<PAST_CONVERSATIONS>" in t for t in stored_texts)


async def test_another_user_sees_none_of_it(make_session_service, make_memory):
    memory = make_memory(embedder=HashEmbedder(64))
    sessions, _ = await remember_first_session(make_session_service, memory)

    llm = ScriptedLlm([function_call("load_memory", query="seat preference"), "No idea."])
    runner = make_runner(llm, sessions, memory)
    bob = await sessions.create_session(app_name=APP, user_id="bob")
    await ask(runner, "bob", bob.id, QUESTION)

    assert all(preloaded(request) == "" for request in llm.requests)
    assert all(PREFERENCE not in json.dumps(request_texts(r)) for r in llm.requests)
    [response] = memory_responses(llm.requests[1].contents)
    assert response == {"result": {"memories": []}}


async def test_full_text_only_memory_works_the_same(make_session_service, make_memory):
    memory = make_memory()  # no embedder: full-text search
    sessions, _ = await remember_first_session(make_session_service, memory)
    llm = ScriptedLlm([function_call("load_memory", query="window seat"), "Window."])
    runner = make_runner(llm, sessions, memory)
    second = await sessions.create_session(app_name=APP, user_id="alice")
    await ask(runner, "alice", second.id, "Do you remember my seat preference on flights?")
    assert f"user: {PREFERENCE}" in preloaded(llm.requests[0])
    [response] = memory_responses(llm.requests[1].contents)
    assert PREFERENCE in remembered_texts(response)
    assert all(m["custom_metadata"]["score"] > 0 for m in remembered(response))


async def test_without_a_memory_service_preload_is_silent_and_load_memory_fails(
    make_session_service,
):
    sessions = make_session_service()
    llm = ScriptedLlm(["Hello."])
    runner = make_runner(llm, sessions, None)
    session = await sessions.create_session(app_name=APP, user_id="alice")
    await ask(runner, "alice", session.id, QUESTION)
    assert preloaded(llm.requests[0]) == ""  # the failed search is only logged

    llm = ScriptedLlm([function_call("load_memory", query="seat")])
    runner = make_runner(llm, sessions, None)
    with pytest.raises(ValueError, match="Memory service is not available"):
        await ask(runner, "alice", session.id, QUESTION)


async def test_a_failing_memory_search_is_hidden_by_preload_but_not_by_load_memory(
    make_session_service, make_memory
):
    """preload_memory logs and swallows any search error: a misconfigured memory service (here
    an embedder of the wrong dimension) just means no memories, silently."""
    memory = make_memory(embedder=HashEmbedder(64))
    sessions, _ = await remember_first_session(make_session_service, memory)
    broken = make_memory(embedder=HashEmbedder(32))
    llm = ScriptedLlm(["I don't remember."])
    runner = make_runner(llm, sessions, broken)
    second = await sessions.create_session(app_name=APP, user_id="alice")
    await ask(runner, "alice", second.id, QUESTION)
    assert preloaded(llm.requests[0]) == ""

    llm = ScriptedLlm([function_call("load_memory", query="seat")])
    with pytest.raises(EmbeddingDimensionError):
        await ask(make_runner(llm, sessions, broken), "alice", second.id, QUESTION)


async def forget_everything(tool_context: ToolContext) -> dict:
    """Forgets what you know about the user."""
    await tool_context.delete_memory()
    return {"status": "forgotten"}


async def test_tool_context_delete_memory_without_an_id_deletes_nothing(
    make_session_service, make_memory, caplog
):
    """ToolContext.delete_memory's memory_id defaults to None. ADK's contract is "delete one
    memory by id" and its InMemoryMemoryService does nothing for None: so does this service
    (with a warning). Forgetting a whole scope is only ever `purge`."""
    memory = make_memory()
    sessions, _ = await remember_first_session(make_session_service, memory)
    alice = {"app_name": APP, "user_id": "alice"}
    before = [m.id for m in (await memory.list_memories(alice)).memories]
    assert before
    await memory.create_memory("bob's fact", {"app_name": APP, "user_id": "bob"})
    llm = ScriptedLlm([function_call("forget_everything"), "Done."])
    agent = LlmAgent(name="assistant", model=llm, tools=[forget_everything])
    runner = Runner(app_name=APP, agent=agent, session_service=sessions, memory_service=memory)
    session = await sessions.create_session(app_name=APP, user_id="alice")
    with caplog.at_level("WARNING"):
        await ask(runner, "alice", session.id, "Forget me.")

    assert [m.id for m in (await memory.list_memories(alice)).memories] == before
    bobs = (await memory.list_memories({"app_name": APP, "user_id": "bob"})).memories
    assert [m.fact for m in bobs] == ["bob's fact"]
    assert "deletes nothing" in caplog.text

    # The same operations on ADK's own reference service: nothing deleted there either.
    reference = InMemoryMemoryService()
    await reference.add_session_to_memory(
        await sessions.get_session(app_name=APP, user_id="alice", session_id=session.id)
    )
    found = await reference.search_memory(app_name=APP, user_id="alice", query="Forget")
    await reference.delete_memory(app_name=APP, user_id="alice")
    again = await reference.search_memory(app_name=APP, user_id="alice", query="Forget")
    assert len(again.memories) == len(found.memories) > 0
