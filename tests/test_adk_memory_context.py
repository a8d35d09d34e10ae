"""Memories in the system instruction: `MemoryContextCallback` as an agent callback, as a plugin
and called directly, behind a real ADK Runner on the real Postgres.

A preference said in one session is generated into a memory in the background and shows up in
the next session's system instruction (for that user only); retrieval runs once per invocation;
the block keeps to its token budget; failures leave the turn alone.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta, timezone

import pytest
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.genai import types

from adk_memory.adk.callbacks import (
    DEFAULT_PREAMBLE,
    MemoryBlock,
    MemoryContextCallback,
    MemoryContextPlugin,
    describe_age,
)
from adk_memory.adk.tokens import text_tokens
from adk_memory.memory import Memory, RetrievedMemory
from adk_memory.testing import HashEmbedder, ScriptedLlm, function_call

APP = "travel_app"
INSTRUCTION = "You are a travel assistant."
PREFERENCE_FACT = "The user prefers window seats on long flights."


def alice_scope(user: str = "alice") -> dict[str, str]:
    return {"app_name": APP, "user_id": user}


def extraction(*facts: str, topic: str = "USER_PREFERENCES") -> str:
    return json.dumps({"facts": [{"fact": f, "topic": topic, "forget": False} for f in facts]})


def get_weather(city: str) -> dict:
    """Returns the weather for a city."""
    return {"city": city, "forecast": "sunny"}


def make_runner(llm, sessions, memory, *, callback=None, plugins=()) -> Runner:
    agent = LlmAgent(
        name="assistant",
        model=llm,
        instruction=INSTRUCTION,
        tools=[get_weather],
        before_model_callback=callback,
    )
    app = App(name=APP, root_agent=agent, plugins=list(plugins))
    return Runner(app=app, session_service=sessions, memory_service=memory)


async def ask(runner: Runner, user_id: str, text: str) -> str:
    """One turn in a new session; the session id."""
    session = await runner.session_service.create_session(app_name=APP, user_id=user_id)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(user_id=user_id, session_id=session.id, new_message=message):
        pass
    return session.id


def system(request: LlmRequest) -> str:
    return str(request.config.system_instruction or "")


def context_for(sessions, memory, user_id: str, text: str, invocation_id: str, session_id=None):
    """A `CallbackContext` and `LlmRequest` as ADK builds them for a model call (for calling the
    callback directly, as a benchmark or another framework would), in a new session or in the
    session `session_id` of `user_id`."""

    async def build() -> tuple[CallbackContext, LlmRequest]:
        if session_id is None:
            session = await sessions.create_session(app_name=APP, user_id=user_id)
        else:
            session = await sessions.get_session(
                app_name=APP, user_id=user_id, session_id=session_id
            )
        message = types.Content(role="user", parts=[types.Part(text=text)])
        invocation = InvocationContext(
            session_service=sessions,
            memory_service=memory,
            invocation_id=invocation_id,
            session=session,
            user_content=message,
        )
        return CallbackContext(invocation), LlmRequest(contents=[message])

    return build()


async def test_a_preference_from_one_session_is_in_the_next_sessions_system_instruction(
    make_session_service, make_memory_service
):
    sessions = make_session_service()
    memory_llm = ScriptedLlm([extraction(PREFERENCE_FACT)])
    memory = make_memory_service(llm=memory_llm, embedder=HashEmbedder(64))
    callback = MemoryContextCallback()
    try:
        # Session 1: the preference is said; nothing is remembered yet.
        llm = ScriptedLlm(["Noted."])
        runner = make_runner(llm, sessions, memory, callback=callback)
        first = await ask(runner, "alice", "I always take a window seat on long flights.")
        plain = system(llm.requests[0])  # the agent's instruction as ADK builds it
        assert plain.startswith(INSTRUCTION) and DEFAULT_PREAMBLE not in plain

        # Generation runs in the background, on the service's own worker.
        stored = await sessions.get_session(app_name=APP, user_id="alice", session_id=first)
        operation = await memory.generate_memories(session=stored)
        done = await memory.wait(operation, timeout=10)
        assert [g.memory.fact for g in done.generated_memories] == [PREFERENCE_FACT]

        # Session 2: the fact is in the system instruction, after the agent's own instruction.
        llm = ScriptedLlm(["A window seat, as you like."])
        runner = make_runner(llm, sessions, memory, callback=callback)
        await ask(runner, "alice", "Book my seat on the flight to Tokyo.")
        instruction = system(llm.requests[0])
        assert instruction.startswith(plain + "\n\n" + DEFAULT_PREAMBLE)
        assert f'- "{PREFERENCE_FACT}" (today, confidence 0.60)' in instruction  # implied
        assert "<RELEVANT_MEMORIES>" in instruction and "<USER_PROFILE>" not in instruction

        # Another user of the same app: nothing appended at all.
        llm = ScriptedLlm(["Which seat would you like?"])
        runner = make_runner(llm, sessions, memory, callback=callback)
        await ask(runner, "bob", "Book my seat on the flight to Tokyo.")
        assert system(llm.requests[0]) == plain
    finally:
        await memory.close()


async def test_the_plugin_retrieves_once_per_invocation_and_shows_the_profile(
    make_session_service, make_memory_service
):
    sessions = make_session_service()
    embedder = HashEmbedder(64)
    memory = make_memory_service(embedder=embedder)
    await memory.create_memory(
        "The user's name is Alice.", alice_scope(), topics=["USER_PERSONAL_INFO"]
    )
    await memory.create_memory(
        "The user likes sunny weather in Paris.", alice_scope(), topics=["USER_PREFERENCES"]
    )
    await memory.create_memory(
        "Bob lives in Oslo.", alice_scope("bob"), topics=["USER_PERSONAL_INFO"]
    )
    plugin = MemoryContextPlugin(MemoryContextCallback(profile_topics=["USER_PERSONAL_INFO"]))
    llm = ScriptedLlm([function_call("get_weather", city="Paris"), "Sunny, Alice."])
    runner = make_runner(llm, sessions, memory, plugins=[plugin])

    calls_before = embedder.calls
    await ask(runner, "alice", "What is the weather in Paris?")

    assert len(llm.requests) == 2  # a tool loop: two model calls in one invocation
    assert embedder.calls == calls_before + 1  # ... and one retrieval (one query embedding)
    first, second = (system(r) for r in llm.requests)
    assert first == second  # byte-identical: the cached prefix survives the tool loop
    profile = first.index("<USER_PROFILE>")
    relevant = first.index("<RELEVANT_MEMORIES>")
    assert profile < relevant  # stable profile before the per-message memories
    assert '- "The user\'s name is Alice." (today)' in first[profile:relevant]
    assert "The user likes sunny weather in Paris." in first[relevant:]
    assert first.count("The user's name is Alice.") == 1  # not repeated in the relevant block
    assert "Oslo" not in first

    # The run is over: the plugin dropped its cache entry, so the same invocation (same app,
    # user and session) retrieves anew.
    [session] = (await sessions.list_sessions(app_name=APP, user_id="alice")).sessions
    stored = await sessions.get_session(app_name=APP, user_id="alice", session_id=session.id)
    invocation_id = stored.events[-1].invocation_id
    context, request = await context_for(
        sessions, memory, "alice", "Paris?", invocation_id, session_id=session.id
    )
    await plugin.callback(context, request)
    assert embedder.calls == calls_before + 2


async def test_direct_calls_cache_by_invocation_and_forget_the_oldest(
    make_session_service, make_memory_service
):
    sessions = make_session_service()
    embedder = HashEmbedder(64)
    memory = make_memory_service(embedder=embedder)
    await memory.create_memory("The user flies from Berlin.", alice_scope())
    callback = MemoryContextCallback(max_cached_invocations=2)
    calls = embedder.calls
    session = await sessions.create_session(app_name=APP, user_id="alice")

    async def call(invocation_id: str) -> str:
        context, request = await context_for(
            sessions, memory, "alice", "Berlin flights", invocation_id, session_id=session.id
        )
        await callback(context, request)
        return system(request)

    first = await call("a")
    assert "The user flies from Berlin." in first and embedder.calls == calls + 1
    assert await call("a") == first and embedder.calls == calls + 1  # cached
    await call("b")
    await call("c")  # "a" is the least recently used of three: dropped
    assert embedder.calls == calls + 3
    await call("a")
    assert embedder.calls == calls + 4


async def test_the_cache_is_keyed_by_app_user_and_session_not_the_invocation_id_alone(
    make_session_service, make_memory_service
):
    """An invocation id is the client's to choose over ADK's HTTP API: the same id in another
    user's (or another session's) invocation never gets the cached block."""
    sessions = make_session_service()
    memory = make_memory_service(embedder=HashEmbedder(64))
    await memory.create_memory("The user flies from Berlin.", alice_scope())
    await memory.create_memory("The user flies from Madrid.", alice_scope("bob"))
    callback = MemoryContextCallback()

    async def block(user_id: str) -> str:
        context, request = await context_for(
            sessions, memory, user_id, "flights from Berlin or Madrid", "same-id"
        )
        await callback(context, request)
        return system(request)

    alice, bob = await block("alice"), await block("bob")
    assert "Berlin" in alice and "Madrid" not in alice
    assert "Madrid" in bob and "Berlin" not in bob


async def test_the_block_keeps_to_its_budget_and_keeps_the_most_relevant(
    make_session_service, make_memory_service
):
    sessions = make_session_service()
    memory = make_memory_service(embedder=HashEmbedder(64))
    hobbies = ["gardens on weekends", "reads novels", "owns a red bicycle"]
    facts = [f"Note {i}: the user {hobbies[i % 3]}." for i in range(300)]
    aisle = "The user always books an aisle seat on flights."
    facts.insert(150, aisle)
    entries = [MemoryEntry(content=types.Content(parts=[types.Part(text=f)])) for f in facts]
    await memory.add_memory(app_name=APP, user_id="alice", memories=entries)
    callback = MemoryContextCallback(top_k=100, max_tokens=120)
    context, request = await context_for(
        sessions, memory, "alice", "Which seat do I book on flights?", "budget"
    )
    await callback(context, request)
    block = system(request)
    assert text_tokens(block) <= 120
    lines = [line for line in block.splitlines() if line.startswith("- ")]
    assert lines[0] == f'- "{aisle}" (today)'  # most relevant first
    assert 1 < len(lines) < 100  # the budget, not top_k, decided how many


def test_rendering_ages_confidence_and_templates():
    now = datetime(2025, 6, 10, 12, tzinfo=timezone.utc)

    def memory(fact: str, days: float, confidence: float | None = None) -> Memory:
        when = now - timedelta(days=days)
        return Memory(
            id=f"id-{fact}",
            scope=alice_scope(),
            fact=fact,
            confidence=confidence,
            create_time=when,
            update_time=when,
        )

    profile = [memory("The user is called Ana.", 400)]
    relevant = [
        RetrievedMemory(memory=memory("The user likes tea.", 3, 0.8), score=0.9),
        RetrievedMemory(memory=memory("The user   dislikes\ncoffee.", 0.2), score=0.5),
    ]
    text = MemoryContextCallback(preamble="Known:").render(profile, relevant, now=now)
    assert text == (
        'Known:\n\n<USER_PROFILE>\n- "The user is called Ana." (1 year ago)\n</USER_PROFILE>'
        '\n\n<RELEVANT_MEMORIES>\n- "The user likes tea." (3 days ago, confidence 0.80)\n'
        '- "The user dislikes coffee." (today)\n</RELEVANT_MEMORIES>'
    )
    fmt = MemoryContextCallback(template="About the user:\n{profile}\n{memories}")
    assert fmt.render(profile, relevant[:1], now=now) == (
        'About the user:\n- "The user is called Ana." (1 year ago)\n'
        '- "The user likes tea." (3 days ago, confidence 0.80)'
    )

    def facts_only(block: MemoryBlock) -> str:
        return "; ".join(m.fact for m in (*block.profile, *block.relevant))

    assert MemoryContextCallback(template=facts_only).render([], relevant[:1], now=now) == (
        "The user likes tea."
    )
    assert MemoryContextCallback().render([], [], now=now) == ""  # nothing: nothing appended
    assert [describe_age(now - timedelta(days=d), now) for d in (0, 1, 45, 800)] == [
        "today",
        "1 day ago",
        "1 month ago",
        "2 years ago",
    ]
    with pytest.raises(InputValidationError, match="fields"):
        MemoryContextCallback(template="{user_id}")
    with pytest.raises(InputValidationError):
        MemoryContextCallback(max_tokens=0)


async def test_a_failing_retrieval_is_logged_and_the_turn_goes_on(
    make_session_service, make_memory_service, caplog
):
    sessions = make_session_service()
    await make_memory_service(embedder=HashEmbedder(64)).create_memory("x", alice_scope())
    broken = make_memory_service(embedder=HashEmbedder(32))  # wrong dimension for the tables
    llm = ScriptedLlm(["Hello."])
    runner = make_runner(llm, sessions, broken, callback=MemoryContextCallback())
    with caplog.at_level(logging.WARNING, logger="adk_memory.adk.callbacks"):
        await ask(runner, "alice", "Hi")
    assert DEFAULT_PREAMBLE not in system(llm.requests[0])
    assert "Memory retrieval failed" in caplog.text


async def test_without_a_memory_service_the_configuration_error_is_raised(make_session_service):
    sessions = make_session_service()
    runner = make_runner(ScriptedLlm(["Hi."]), sessions, None, callback=MemoryContextCallback())
    with pytest.raises(ValueError, match="No memory service"):
        await ask(runner, "alice", "Hi")
