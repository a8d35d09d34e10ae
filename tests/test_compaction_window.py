"""SlidingWindowPlugin and keep_last_turns: the model gets the last N turns, never a function call
without its response (or the reverse), the pinned first message and compaction summaries; the
stored session keeps every event.

The conversation builders, the oracles and the Runner scaffolding here are shared with the budget
and delegation tests.
"""

from __future__ import annotations

import itertools

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_memory._adk_private import OTHER_AGENT_CONTEXT_PREAMBLE
from adk_memory.adk.compaction.window import SlidingWindowPlugin, keep_last_turns
from adk_memory.testing import ScriptedLlm, function_call

APP = "window_app"
USER = "u1"
TOOL_EVERY = 3
"""Every third turn of the long conversation makes a tool call."""


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def model(text: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=text)])


def calls(*pairs: tuple[str, int, str | None]) -> types.Content:
    """A model content calling (name, pair number, id) in parallel; the pair number is the
    oracle's link between a call and its response."""
    return types.Content(
        role="model",
        parts=[
            types.Part(function_call=types.FunctionCall(name=name, args={"pair": n}, id=call_id))
            for name, n, call_id in pairs
        ],
    )


def results(*pairs: tuple[str, int, str | None]) -> types.Content:
    return types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    name=name, response={"pair": n}, id=call_id
                )
            )
            for name, n, call_id in pairs
        ],
    )


def relay(*texts: str) -> types.Content:
    """Another agent's turn as ADK relays it to the agent being prompted."""
    parts = [types.Part(text=OTHER_AGENT_CONTEXT_PREAMBLE), *(types.Part(text=t) for t in texts)]
    return types.Content(role="user", parts=parts)


def pair_numbers(contents: list[types.Content]) -> tuple[list[int], list[int]]:
    """The pair numbers of the calls and of the responses sent (the test's own bookkeeping,
    independent of how the plugins match calls to responses)."""
    called = [
        int(p.function_call.args["pair"])
        for c in contents
        for p in c.parts or ()
        if p.function_call and p.function_call.args and "pair" in p.function_call.args
    ]
    answered = [
        int(p.function_response.response["pair"])
        for c in contents
        for p in c.parts or ()
        if p.function_response
        and p.function_response.response
        and "pair" in p.function_response.response
    ]
    return sorted(called), sorted(answered)


def assert_pairs_whole(contents: list[types.Content]) -> None:
    called, answered = pair_numbers(contents)
    assert called == answered


def assert_subsequence(kept: list[types.Content], contents: list[types.Content]) -> None:
    """`kept` is `contents` with some items left out: same objects, same order."""
    positions = iter(range(len(contents)))
    for item in kept:
        assert any(contents[i] is item for i in positions)


def is_summary(content: types.Content) -> bool:
    return bool(content.parts and (content.parts[0].text or "").startswith("SUMMARY"))


@st.composite
def conversations(draw: st.DrawFn) -> list[types.Content]:
    """Conversations of user turns with parallel tool calls (ids or not, repeated names,
    results in one content or several), model answers, and perhaps a compaction summary."""
    pair = itertools.count()
    contents: list[types.Content] = []
    if draw(st.booleans()):
        contents.append(model("SUMMARY of earlier turns"))
    for turn in range(draw(st.integers(1, 10))):
        contents.append(user(f"u{turn}"))
        for _ in range(draw(st.integers(0, 3))):
            with_ids = draw(st.booleans())
            batch = [
                (draw(st.sampled_from(["f", "g"])), n, f"id{n}" if with_ids else None)
                for n in itertools.islice(pair, draw(st.integers(1, 3)))
            ]
            contents.append(calls(*batch))
            if draw(st.booleans()):
                contents.append(results(*batch))
            else:
                contents.extend(results(b) for b in draw(st.permutations(batch)))
        if draw(st.booleans()):
            contents.append(model(f"a{turn}"))
    return contents


def user_texts(contents: list[types.Content]) -> list[str]:
    return [
        c.parts[0].text
        for c in contents
        if c.role == "user" and c.parts and c.parts[0].text and not c.parts[0].function_response
    ]


def turn_starts(contents: list[types.Content]) -> list[int]:
    """Where the generated conversations' turns start: a user's text that follows anything but
    another user text, except trailing user texts right after a tool result (what ADK inserts
    into a running tool loop)."""

    def user_text(i: int) -> bool:
        return contents[i].role == "user" and bool(contents[i].parts[0].text)

    trailing = len(contents)
    while trailing > 0 and user_text(trailing - 1):
        trailing -= 1
    return [
        i
        for i in range(len(contents))
        if user_text(i)
        and (i == 0 or not user_text(i - 1))
        and not (0 < i == trailing and contents[i - 1].parts[0].function_response)
    ]


@settings(max_examples=200, deadline=None)
@given(conversations(), st.integers(1, 4), st.booleans())
def test_window_keeps_pairs_whole_and_the_last_turns(contents, turns, pin):
    kept = keep_last_turns(contents, turns, pin_first_user_message=pin, is_summary=is_summary)

    assert_subsequence(kept, contents)
    assert_pairs_whole(kept)
    starts = turn_starts(contents)
    if len(starts) <= turns:
        assert kept == contents
        return
    window = contents[starts[-turns] :]
    summary = contents[:1] if is_summary(contents[0]) else []
    pinned = contents[:1] if pin and not summary else []
    assert kept == summary + pinned + window


def test_the_first_message_is_pinned_only_while_no_summary_stands_for_it():
    summary = model("SUMMARY of u0..u2")
    contents = [summary, user("u3"), model("a3"), user("u4"), model("a4"), user("u5")]

    kept = keep_last_turns(contents, 1, pin_first_user_message=True, is_summary=is_summary)

    assert kept == [summary, user("u5")]


def test_a_turn_split_by_a_pending_call_is_kept_whole():
    """A long-running call answered after the user spoke again ties the two turns together."""
    contents = [
        user("u0"),
        calls(("slow", 1, "id1")),
        user("u1"),
        results(("slow", 1, "id1")),
        model("a1"),
        user("u2"),
    ]

    assert keep_last_turns(contents, 2) == contents
    assert keep_last_turns(contents, 1) == contents[-1:]


def test_relayed_agents_and_tool_loop_inserts_do_not_start_turns():
    """Other agents' relayed turns belong to the user turn they happened in; a user message
    after a tool result starts a turn, unless it is trailing (ADK's insert into a tool loop)."""
    contents = [
        user("u1"),
        relay("[root] called tool `transfer_to_agent` with parameters: ..."),
        calls(("find", 1, None)),
        results(("find", 1, None)),
        user("u2"),
        relay("[other] said: ..."),
        user("u3"),
        calls(("find", 2, None)),
        results(("find", 2, None)),
        user("dynamic instruction"),
    ]

    assert keep_last_turns(contents, 2) == contents[4:]
    assert keep_last_turns(contents, 1) == contents[6:]


def test_turns_must_be_positive():
    with pytest.raises(InputValidationError):
        SlidingWindowPlugin(turns=0)
    with pytest.raises(InputValidationError):
        keep_last_turns([user("hi")], 0)


def lookup(topic: str) -> dict:
    """Looks a topic up."""
    return {"topic": topic, "facts": f"{topic} facts " * 20}


def scripted_assistant(request: LlmRequest) -> str | types.Part:
    """Answers turn "turn N": every TOOL_EVERY-th turn calls `lookup` first, then answers."""
    last = request.contents[-1]
    if last.parts[0].function_response:
        return f"Here is what I found about {last.parts[0].function_response.response['topic']}."
    number = int(last.parts[0].text.split()[-1])
    if number % TOOL_EVERY == 0:
        return function_call("lookup", topic=f"topic {number}")
    return f"Answer {number}."


def make_runner(session_service, agent: LlmAgent, *plugins: BasePlugin) -> Runner:
    app = App(name=APP, root_agent=agent, plugins=list(plugins))
    return Runner(app=app, session_service=session_service)


async def talk(runner: Runner, session_id: str, turns: range) -> None:
    for number in turns:
        message = user(f"turn {number}")
        async for _ in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
            pass


async def long_conversation(
    session_service, plugin: BasePlugin, turns: int, *, model_name: str = "scripted-llm"
) -> tuple[ScriptedLlm, list[Event]]:
    """`turns` turns through a Runner with `plugin`; the model's requests and the session's
    events as reloaded from PostgreSQL."""
    llm = ScriptedLlm(responder=scripted_assistant, model=model_name)
    agent = LlmAgent(name="assistant", model=llm, instruction="Answer briefly.", tools=[lookup])
    runner = make_runner(session_service, agent, plugin)
    session = await session_service.create_session(app_name=APP, user_id=USER)
    await talk(runner, session.id, range(turns))
    stored = await session_service.get_session(app_name=APP, user_id=USER, session_id=session.id)
    return llm, stored.events


def assert_lookups_answered(contents: list[types.Content]) -> None:
    """Every `lookup` call sent comes with its result and every result with its call."""
    called = [c.parts[0].function_call.args["topic"] for c in contents if c.parts[0].function_call]
    answered = [
        c.parts[0].function_response.response["topic"]
        for c in contents
        if c.parts[0].function_response
    ]
    assert called == answered


def events_of(turns: int) -> int:
    """Events a conversation of `turns` turns stores: the user's message and the answer, plus
    the call and its response on tool turns."""
    return 2 * turns + 2 * len(range(0, turns, TOOL_EVERY))


async def test_200_turns_send_the_window_and_store_everything(session_service):
    window = 4
    llm, events = await long_conversation(
        session_service, SlidingWindowPlugin(turns=window, pin_first_user_message=True), 200
    )

    assert len(events) == events_of(200)
    assert len(llm.requests) == 200 + len(range(0, 200, TOOL_EVERY))
    for request in llm.requests:
        asked = user_texts(request.contents)
        latest = int(asked[-1].split()[-1])
        expected = [f"turn {n}" for n in range(max(0, latest - window + 1), latest + 1)]
        assert asked == (["turn 0"] if latest >= window else []) + expected
        assert_lookups_answered(request.contents)
        assert len(request.contents) <= 1 + 4 * window


async def test_a_compaction_summary_is_kept_as_the_oldest_context(session_service):
    llm = ScriptedLlm(responder=scripted_assistant)
    agent = LlmAgent(name="assistant", model=llm, tools=[lookup])
    runner = make_runner(session_service, agent, SlidingWindowPlugin(turns=2))
    session = await session_service.create_session(app_name=APP, user_id=USER)
    await talk(runner, session.id, range(1, 4))
    session = await session_service.get_session(app_name=APP, user_id=USER, session_id=session.id)
    summary = model("Summary: the user asked about topics 1 and 2.")
    covered = [e for e in session.events if e.invocation_id == session.events[0].invocation_id]
    compaction = EventCompaction(
        start_timestamp=session.events[0].timestamp,
        end_timestamp=covered[-1].timestamp,
        compacted_content=summary,
    )
    await session_service.append_event(
        session, Event(author="user", actions=EventActions(compaction=compaction))
    )

    await talk(runner, session.id, range(4, 8))

    sent = llm.requests[-1].contents
    assert sent[0] == summary
    assert user_texts(sent) == ["turn 6", "turn 7"]


async def test_the_static_instruction_prefix_stays_in_front(session_service):
    """A non-text static instruction makes ADK put instruction contents at the very start of
    the request (a cacheable prefix); the window trims only the conversation after it."""
    image = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))
    llm = ScriptedLlm(responder=scripted_assistant)
    agent = LlmAgent(
        name="assistant",
        model=llm,
        static_instruction=types.Content(role="user", parts=[types.Part(text="Be kind."), image]),
        instruction="Answer briefly.",
        tools=[lookup],
    )
    runner = make_runner(session_service, agent, SlidingWindowPlugin(turns=1))
    session = await session_service.create_session(app_name=APP, user_id=USER)
    await talk(runner, session.id, range(1, 5))

    first = llm.requests[0].contents
    prefix = first[: len(first) - 1]
    assert prefix and all(c.role == "user" for c in prefix)
    last = llm.requests[-1].contents
    assert last[: len(prefix)] == prefix
    assert user_texts(last[len(prefix) :]) == ["turn 4"]
