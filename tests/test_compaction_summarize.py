"""RecursiveSummarizationPlugin behind a real ADK Runner on PostgresSessionService.

A long conversation stays within its token budget while every raw event stays stored; the
compaction events are ADK's own, persisted, and reused after a reload; a summary of a summary
gets the earlier summary and only newer events; the turn never waits for the summarizer; model
failures are retried; two replicas never write overlapping summaries; idle sessions are swept.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
from datetime import timedelta

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.genai import errors, types

from adk_memory.adk.compaction.summarize import RecursiveSummarizationPlugin, compaction_of
from adk_memory.adk.tokens import contents_tokens
from adk_memory.testing import ScriptedLlm, function_call

APP = "chat_app"
PADDING = " ".join(["detail"] * 25)
"""Makes each message about 40 tokens, so the history grows measurably every turn."""


def texts(contents: list[types.Content]) -> list[str]:
    return [p.text for c in contents for p in (c.parts or []) if p.text]


def request_text(request: LlmRequest) -> str:
    return "\n".join(texts(request.contents))


def replying(request: LlmRequest) -> str:
    """The agent's scripted model: answer the latest 'message N' with 'reply N'."""
    numbers = re.findall(r"message (\d+):", request_text(request))
    return f"reply {numbers[-1]}: {PADDING}"


def summarizing(llm_holder: list[ScriptedLlm]):
    """The summarizer's scripted model: the k-th summary is 'SUMMARY-k'."""
    return lambda request: f"SUMMARY-{len(llm_holder[0].requests) - 1}"


def summarizer() -> ScriptedLlm:
    holder: list[ScriptedLlm] = []
    llm = ScriptedLlm(responder=summarizing(holder))
    holder.append(llm)
    return llm


def make_runner(llm: ScriptedLlm, service, plugin, tools=()) -> Runner:
    agent = LlmAgent(name="assistant", model=llm, instruction="Answer briefly.", tools=list(tools))
    return Runner(app=App(name=APP, root_agent=agent, plugins=[plugin]), session_service=service)


async def ask(runner: Runner, session_id: str, text: str, user_id: str = "u1") -> list[Event]:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [
        event
        async for event in runner.run_async(
            user_id=user_id, session_id=session_id, new_message=message
        )
    ]


def compactions(events: list[Event]) -> list[Event]:
    return [e for e in events if compaction_of(e) is not None]


def assert_chain(events: list[Event]) -> None:
    """Each summary extends the previous one: same start, later end (no overlap, no duplicate)."""
    ranges = [(compaction_of(e).start_timestamp, compaction_of(e).end_timestamp) for e in events]
    assert ranges, "no compaction was written"
    assert all(start == ranges[0][0] for start, _ in ranges)
    assert all(a[1] < b[1] for a, b in itertools.pairwise(ranges))


async def test_200_turns_stay_in_budget_and_summaries_persist_and_recurse(make_session_service):
    service = make_session_service()
    model = summarizer()
    plugin = RecursiveSummarizationPlugin(
        model, event_threshold=None, token_threshold=800, keep_last=6, retry_delay=0
    )
    agent = ScriptedLlm(responder=replying)
    runner = make_runner(agent, service, plugin)
    session = await service.create_session(app_name=APP, user_id="u1")

    for turn in range(200):
        await ask(runner, session.id, f"message {turn}: {PADDING}")
    await plugin.drain()

    # In budget: the threshold plus what one turn adds while its summary is being written.
    sizes = [contents_tokens(r.contents) for r in agent.requests]
    turn_tokens = contents_tokens(agent.requests[1].contents) - contents_tokens(
        agent.requests[0].contents
    )
    assert max(sizes) <= 800 + turn_tokens

    # Stored: every raw event, and the summaries as ADK compaction events (a fresh service).
    stored = await make_session_service().get_session(
        app_name=APP, user_id="u1", session_id=session.id
    )
    summaries = compactions(stored.events)
    assert len(stored.events) - len(summaries) == 400
    assert len(summaries) == len(model.requests) > 5
    assert_chain(summaries)
    assert compaction_of(summaries[0]).start_timestamp == stored.events[0].timestamp

    # Recursive: summary k gets summary k-1 and only events after it, never covered ones.
    seen_up_to = -1
    for k, request in enumerate(model.requests):
        prompt = request_text(request)
        numbers = [int(n) for n in re.findall(r"message (\d+):", prompt)]
        assert numbers and min(numbers) > seen_up_to
        seen_up_to = max(numbers)
        assert ("SUMMARY-" in prompt) == (k > 0)
        if k:
            assert f"SUMMARY-{k - 1}" in prompt

    # Reused after a reload: a new process (service, plugin, runner) sends the latest summary
    # and the kept events, not the covered ones.
    later_agent = ScriptedLlm(responder=replying)
    later_plugin = RecursiveSummarizationPlugin(summarizer(), event_threshold=None)
    later_runner = make_runner(later_agent, make_session_service(), later_plugin)
    await ask(later_runner, session.id, f"message 200: {PADDING}")
    sent = request_text(later_agent.requests[0])
    assert f"SUMMARY-{len(summaries) - 1}" in sent
    assert "message 0:" not in sent and "reply 0:" not in sent
    assert "message 199:" in sent and "message 200:" in sent
    await later_plugin.drain()


async def test_the_turn_does_not_wait_for_the_summarizer(make_session_service):
    service = make_session_service()
    gate = asyncio.Event()

    async def blocked(request: LlmRequest) -> str:
        await gate.wait()
        return "SUMMARY of the trip planning"

    model = ScriptedLlm(responder=blocked)
    plugin = RecursiveSummarizationPlugin(model, event_threshold=4, keep_last=2)
    runner = make_runner(ScriptedLlm(responder=replying), service, plugin)
    session = await service.create_session(app_name=APP, user_id="u1")

    for turn in range(4):  # the summary starts after turn 1 and blocks through turns 2 and 3
        events = await asyncio.wait_for(ask(runner, session.id, f"message {turn}: hi"), 5)
        assert events[-1].content.parts[0].text.startswith(f"reply {turn}")
    assert plugin.pending == 1
    assert len(model.requests) == 1  # one summary in flight per session, not one per turn

    gate.set()
    await plugin.drain()
    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    [summary] = compactions(stored.events)
    assert compaction_of(summary).compacted_content.parts[0].text.startswith("SUMMARY")
    assert compaction_of(summary).end_timestamp == stored.events[1].timestamp  # keep_last=2
    assert plugin.pending == 0


async def test_model_failures_are_retried_then_logged_and_retried_at_the_next_trigger(
    make_session_service, caplog
):
    service = make_session_service()
    model = ScriptedLlm([RuntimeError("503 overloaded"), "SUMMARY one"])
    plugin = RecursiveSummarizationPlugin(
        model, event_threshold=4, keep_last=2, max_attempts=2, retry_delay=0
    )
    runner = make_runner(ScriptedLlm(responder=replying), service, plugin)
    session = await service.create_session(app_name=APP, user_id="u1")
    for turn in range(2):
        await ask(runner, session.id, f"message {turn}: hi")
    await plugin.drain()
    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert len(compactions(stored.events)) == 1 and len(model.requests) == 2

    model.add(RuntimeError("timeout"), RuntimeError("timeout"))
    for turn in range(2, 4):
        await ask(runner, session.id, f"message {turn}: hi")
    with caplog.at_level(logging.ERROR):
        await plugin.drain()
    assert "no summary after 2 attempt(s)" in caplog.text
    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert len(compactions(stored.events)) == 1  # nothing written, nothing lost
    assert len(stored.events) == 1 + 8

    model.add("SUMMARY two")
    await ask(runner, session.id, "message 4: hi")
    await plugin.drain()
    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert_chain(compactions(stored.events))
    assert len(compactions(stored.events)) == 2


async def test_a_permanent_model_failure_is_not_retried(make_session_service, caplog):
    """A rejected key (a 4xx) fails every call alike: one call, logged, the events stay raw."""
    service = make_session_service()
    rejected = errors.ClientError(403, {"error": {"code": 403, "message": "API key not valid"}})
    model = ScriptedLlm([rejected, "SUMMARY never asked for"])
    plugin = RecursiveSummarizationPlugin(model, event_threshold=4, keep_last=2, retry_delay=0)
    runner = make_runner(ScriptedLlm(responder=replying), service, plugin)
    session = await service.create_session(app_name=APP, user_id="u1")
    for turn in range(2):
        await ask(runner, session.id, f"message {turn}: hi")
    with caplog.at_level(logging.ERROR):
        await plugin.drain()
    assert "no summary after 1 attempt(s)" in caplog.text
    assert len(model.requests) == 1  # max_attempts is 3, but no call could succeed
    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert compactions(stored.events) == []


async def test_two_replicas_never_write_overlapping_summaries(make_session_service):
    """Both replicas summarize the same events; the second summary no longer extends the latest
    compaction when its turn comes, so it is dropped."""
    service = make_session_service()
    models = [summarizer(), summarizer()]
    plugins = [
        RecursiveSummarizationPlugin(m, event_threshold=4, keep_last=2, retry_delay=0)
        for m in models
    ]
    runners = [
        make_runner(ScriptedLlm(responder=replying), make_session_service(), p) for p in plugins
    ]
    session = await service.create_session(app_name=APP, user_id="u1")
    for turn in range(12):
        await ask(runners[turn % 2], session.id, f"message {turn}: hi")
        await asyncio.sleep(0)  # let the background summary finish before the next turn
    for plugin in plugins:
        await plugin.drain()

    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    written = compactions(stored.events)
    assert_chain(written)
    assert len(written) < len(models[0].requests) + len(models[1].requests)


async def test_a_function_call_and_its_response_are_never_split(make_session_service):
    def lookup(city: str) -> dict:
        """Weather for a city."""
        return {"city": city, "forecast": "sunny"}

    service = make_session_service()
    script = []
    for turn in range(3):
        script += [function_call("lookup", city=f"city{turn}"), f"reply {turn}: sunny"]
    agent = ScriptedLlm(script)
    plugin = RecursiveSummarizationPlugin(summarizer(), event_threshold=6, keep_last=2)
    runner = make_runner(agent, service, plugin, tools=[lookup])
    session = await service.create_session(app_name=APP, user_id="u1")
    for turn in range(3):  # 4 events a turn: message, call, response, answer
        await ask(runner, session.id, f"message {turn}: weather?")
        await plugin.drain()

    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    raw = [e for e in stored.events if compaction_of(e) is None]
    for summary in compactions(stored.events):
        end = compaction_of(summary).end_timestamp
        covered_calls = {c.id for e in raw if e.timestamp <= end for c in e.get_function_calls()}
        later_responses = {
            r.id for e in raw if e.timestamp > end for r in e.get_function_responses()
        }
        assert not covered_calls & later_responses
    # keep_last=2 would keep [response, answer]; the split moved back to keep the call too.
    last_end = compaction_of(compactions(stored.events)[-1]).end_timestamp
    kept = [e for e in raw if e.timestamp > last_end]
    assert kept[0].get_function_calls() and len(kept) == 3


async def test_idle_sessions_are_swept_per_app_and_user(make_session_service):
    service = make_session_service()
    model = summarizer()
    plugin = RecursiveSummarizationPlugin(model, event_threshold=None, keep_last=2)
    runner = make_runner(ScriptedLlm(responder=replying), service, plugin)
    quiet = await service.create_session(app_name=APP, user_id="u1")
    for turn in range(3):
        await ask(runner, quiet.id, f"message {turn}: hi")
    await asyncio.sleep(0.3)
    busy = await service.create_session(app_name=APP, user_id="u2")
    await ask(runner, busy.id, "message 9: hi", user_id="u2")

    swept = await plugin.summarize_idle_sessions(
        service, app_name=APP, idle_for=timedelta(milliseconds=200)
    )
    assert swept == 1
    stored = await service.get_session(app_name=APP, user_id="u1", session_id=quiet.id)
    [summary] = compactions(stored.events)
    assert compaction_of(summary).end_timestamp == stored.events[3].timestamp  # 2 kept raw
    untouched = await service.get_session(app_name=APP, user_id="u2", session_id=busy.id)
    assert not compactions(untouched.events)

    # Already swept (just written to, and nothing left beyond keep_last): nothing to do.
    await asyncio.sleep(0.3)
    assert (
        await plugin.summarize_idle_sessions(
            service, app_name=APP, idle_for=timedelta(milliseconds=200)
        )
        == 0
    )
    assert (
        await plugin.summarize_idle_sessions(
            service,
            app_name=APP,
            idle_for=timedelta(milliseconds=10),
            idle_at_most=timedelta(milliseconds=20),
        )
        == 0
    )
    assert len(model.requests) == 1


async def test_the_sweep_writes_a_finished_summary_that_no_turn_came_to_write(
    make_session_service,
):
    service = make_session_service()
    model = summarizer()
    plugin = RecursiveSummarizationPlugin(model, event_threshold=4, keep_last=2)
    runner = make_runner(ScriptedLlm(responder=replying), service, plugin)
    session = await service.create_session(app_name=APP, user_id="u1")
    for turn in range(2):
        await ask(runner, session.id, f"message {turn}: hi")
    await asyncio.sleep(0.3)  # the summary finishes in the background; the user has left
    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert not compactions(stored.events) and plugin.pending == 1

    swept = await plugin.summarize_idle_sessions(
        service, app_name=APP, idle_for=timedelta(milliseconds=200)
    )
    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert swept == 1 and len(compactions(stored.events)) == 1
    assert len(model.requests) == 1 and plugin.pending == 0


@pytest.mark.parametrize(
    "options",
    [
        {"event_threshold": 5, "keep_last": 5},
        {"token_threshold": 0},
        {"keep_last": -1},
        {"prompt_template": "Summarize please."},
        {"max_attempts": 0},
        {"timeout": 0},
        {"max_concurrent": 0},
    ],
)
def test_bad_settings_are_rejected(options):
    with pytest.raises(InputValidationError):
        RecursiveSummarizationPlugin(ScriptedLlm(), **options)


async def test_a_model_name_resolves_through_adks_registry(session_service):
    plugin = RecursiveSummarizationPlugin("gemini-2.5-flash")
    assert plugin._summarizer._llm.model == "gemini-2.5-flash"
    with pytest.raises(InputValidationError):
        await plugin.summarize_idle_sessions(session_service, app_name=APP, idle_for=timedelta(0))
