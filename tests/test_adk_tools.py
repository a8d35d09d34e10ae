"""The memory tools behind a real ADK Runner on the real Postgres, called by a scripted model:
create_memory (consolidated into existing memories), load_memory (facts with their ages),
forget_memory (by id, after a search), preload_memory; always for the invocation's user only.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.genai import types

from adk_memory import MemoryBankConfig
from adk_memory.adk.callbacks import DEFAULT_PREAMBLE
from adk_memory.adk.tools import (
    CreateMemoryTool,
    ForgetMemoryTool,
    LoadMemoryTool,
    create_memory,
    forget_memory,
    load_memory,
    preload_memory,
)
from adk_memory.memory import MemoryAction, SourceType
from adk_memory.testing import HashEmbedder, ScriptedLlm, function_call

APP = "travel_app"
ALICE = {"app_name": APP, "user_id": "alice"}
BOB = {"app_name": APP, "user_id": "bob"}
WINDOW = "The user prefers window seats."


def plan(*operations: dict) -> str:
    return json.dumps({"operations": list(operations)})


async def run_turn(llm: ScriptedLlm, tools: list, sessions, memory, user_id: str, text: str):
    """One turn of an agent with `tools`; the tool responses the model was sent, in order."""
    agent = LlmAgent(name="assistant", model=llm, instruction="Help the user.", tools=tools)
    runner = Runner(app_name=APP, agent=agent, session_service=sessions, memory_service=memory)
    session = await sessions.create_session(app_name=APP, user_id=user_id)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(user_id=user_id, session_id=session.id, new_message=message):
        pass
    return [
        part.function_response.response
        for part in (llm.requests[-1].contents[-1].parts or [])
        if part.function_response
    ]


async def facts(memory, scope) -> list[str]:
    return sorted(m.fact for m in (await memory.list_memories(scope)).memories)


async def test_create_memory_updates_a_contradicting_memory_instead_of_duplicating_it(
    make_session_service, make_memory_service
):
    sessions = make_session_service()
    memory_llm = ScriptedLlm()
    memory = make_memory_service(llm=memory_llm, embedder=HashEmbedder(64))
    try:
        seat = await memory.create_memory(  # saved by this tool in an earlier conversation
            WINDOW, ALICE, topics=["USER_PREFERENCES"], source_type=SourceType.IMPLICIT
        )
        await memory.create_memory(WINDOW, BOB)
        memory_llm.add(
            plan(
                {
                    "action": "UPDATE",
                    "fact_numbers": [1],
                    "target_id": seat.id,
                    "fact": "The user prefers aisle seats.",
                }
            )
        )
        llm = ScriptedLlm(
            [
                function_call(
                    "create_memory",
                    fact="The user now prefers aisle seats.",
                    topic="USER_PREFERENCES",
                ),
                "Noted: aisle seats from now on.",
            ]
        )
        [response] = await run_turn(
            llm, [create_memory], sessions, memory, "alice", "Aisle seats from now on, please."
        )
        assert response == {
            "status": "saved",
            "changes": [
                {"action": "updated", "id": seat.id, "fact": "The user prefers aisle seats."}
            ],
        }
        assert await facts(memory, ALICE) == ["The user prefers aisle seats."]
        assert await facts(memory, BOB) == [WINDOW]  # another user's memory is untouched
        # The consolidation model saw only alice's memories as candidates.
        [consolidation] = memory_llm.requests
        shown = json.dumps([c.model_dump(mode="json") for c in consolidation.contents])
        assert seat.id in shown and shown.count("window seats") == 1
        revisions = await memory.list_revisions(seat.id, ALICE)
        assert [r.action for r in revisions] == [MemoryAction.CREATED, MemoryAction.UPDATED]
        assert revisions[-1].labels == {"tool": "create_memory"}
    finally:
        await memory.close()


async def test_create_memory_with_nothing_similar_creates_it_with_its_topic(
    make_session_service, make_memory_service
):
    sessions = make_session_service()
    memory_llm = ScriptedLlm()  # no candidates, so no consolidation call is expected
    memory = make_memory_service(llm=memory_llm)
    tool = CreateMemoryTool(memory)  # topics from the service's config
    try:
        llm = ScriptedLlm(
            [function_call("create_memory", fact=WINDOW, topic="USER_PREFERENCES"), "Noted."]
        )
        [response] = await run_turn(llm, [tool], sessions, None, "alice", "Window seats.")
        [created] = (await memory.list_memories(ALICE)).memories
        assert response == {
            "status": "saved",
            "changes": [{"action": "created", "id": created.id, "fact": WINDOW}],
        }
        assert created.topics == ["USER_PREFERENCES"]
        assert created.metadata["tool"] == "create_memory"
        assert memory_llm.requests == []
        # The declaration names the configured topics and accepts only them.
        declaration = tool._get_declaration()
        assert "USER_PREFERENCES" in declaration.description
        assert declaration.parameters_json_schema["properties"]["topic"]["enum"] == [
            "USER_PERSONAL_INFO",
            "USER_PREFERENCES",
            "KEY_CONVERSATION_DETAILS",
            "EXPLICIT_INSTRUCTIONS",
        ]
    finally:
        await memory.close()


async def test_create_memory_without_a_model_stores_the_fact_as_given(
    make_session_service, make_memory_service
):
    sessions = make_session_service()
    memory = make_memory_service()
    llm = ScriptedLlm(
        [
            function_call("create_memory", fact="  "),
            function_call("create_memory", fact=WINDOW, topic="NOT_A_TOPIC"),
            function_call("create_memory", fact=WINDOW, topic="USER_PREFERENCES"),
            "Noted.",
        ]
    )
    tool = CreateMemoryTool(topics=MemoryBankConfig())
    await run_turn(llm, [tool], sessions, memory, "alice", "Window seats, always.")
    blank, unknown, saved = (
        r.contents[-1].parts[0].function_response.response for r in llm.requests[1:]
    )
    assert blank == {"error": "fact must be a non-empty sentence."}
    assert "topic must be one of" in unknown["error"]
    assert saved["status"] == "saved" and saved["changes"][0]["action"] == "created"
    [stored] = (await memory.list_memories(ALICE)).memories
    assert (stored.fact, stored.topics) == (WINDOW, ["USER_PREFERENCES"])


async def test_forget_memory_finds_then_deletes_by_id_and_only_the_users_own(
    make_session_service, make_memory_service
):
    sessions = make_session_service()
    memory = make_memory_service(embedder=HashEmbedder(64))
    seat = await memory.create_memory(WINDOW, ALICE)
    tea = await memory.create_memory("The user drinks green tea.", ALICE)
    bobs = await memory.create_memory(WINDOW, BOB)

    llm = ScriptedLlm(
        [
            function_call("forget_memory"),  # no argument: an error, never "delete everything"
            function_call("forget_memory", query="window seats"),
            function_call("forget_memory", memory_id=seat.id),
            function_call("forget_memory", memory_id=bobs.id),  # bob's id, from alice's session
            "Forgotten.",
        ]
    )
    await run_turn(llm, [forget_memory], sessions, memory, "alice", "Forget my seat preference.")
    nothing, found, deleted, foreign = (
        r.contents[-1].parts[0].function_response.response for r in llm.requests[1:]
    )
    assert "either memory_id or query" in nothing["error"]
    assert found["status"] == "nothing_deleted_yet"
    assert found["matches"][0]["id"] == seat.id and found["matches"][0]["fact"] == WINDOW
    assert bobs.id not in json.dumps(found)
    assert deleted == {
        "status": "deleted",
        "changes": [{"action": "deleted", "id": seat.id, "fact": WINDOW}],
    }
    assert foreign == {"error": f"No memory {bobs.id} of this user."}
    assert await facts(memory, ALICE) == [tea.fact]
    assert await facts(memory, BOB) == [WINDOW]


async def test_load_memory_returns_facts_with_their_ages_for_the_user_only(
    make_session_service, make_memory_service
):
    sessions = make_session_service()
    memory = make_memory_service()  # raw events: a memory is from when it was said
    said = datetime.now(timezone.utc) - timedelta(days=3, hours=1)
    for user, text in (("alice", "I prefer window seats."), ("bob", "I prefer window seats too.")):
        event = Event(
            author="user",
            invocation_id="old",
            timestamp=said.timestamp(),
            content=types.Content(role="user", parts=[types.Part(text=text)]),
        )
        await memory.add_events_to_memory(app_name=APP, user_id=user, events=[event])
    tool = LoadMemoryTool(topics=MemoryBankConfig(), top_k=5)
    assert "USER_PREFERENCES" in tool.description

    llm = ScriptedLlm([function_call("load_memory", query="window seats"), "Window."])
    [response] = await run_turn(llm, [tool], sessions, memory, "alice", "Which seat do I like?")
    [found] = response["memories"]
    assert found["fact"] == "I prefer window seats."
    assert found["age"] == "3 days ago"
    assert abs(datetime.fromisoformat(found["time"]) - said) < timedelta(milliseconds=1)
    assert "confidence" not in found  # unknown, so not claimed

    llm = ScriptedLlm([function_call("load_memory", query=""), "?"])
    [response] = await run_turn(llm, [load_memory], sessions, memory, "alice", "Hm?")
    assert response == {"error": "query must say what to look for."}


async def test_preload_memory_writes_the_callbacks_block_into_the_system_instruction(
    make_session_service, make_memory_service
):
    sessions = make_session_service()
    memory = make_memory_service()
    await memory.create_memory(WINDOW, ALICE)
    llm = ScriptedLlm(["A window seat."])
    await run_turn(llm, [preload_memory], sessions, memory, "alice", "Which seats do I prefer?")
    [request] = llm.requests
    instruction = str(request.config.system_instruction)
    assert f'{DEFAULT_PREAMBLE}\n\n<RELEVANT_MEMORIES>\n- "{WINDOW}" (today)' in instruction
    assert not request.config.tools  # nothing for the model to call


async def test_tools_without_a_memory_service_raise_a_configuration_error(make_session_service):
    llm = ScriptedLlm([function_call("load_memory", query="seat")])
    with pytest.raises(ValueError, match="No memory service"):
        await run_turn(llm, [load_memory], make_session_service(), None, "alice", "Seat?")
    with pytest.raises(ValueError):
        ForgetMemoryTool(candidates=0)
