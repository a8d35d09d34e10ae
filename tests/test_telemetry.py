"""OpenTelemetry: the package's spans nest under ADK's invocation spans, carry counts and
settings but no user content or identifiers, and its metrics (operation and job latency, job
outcomes, queue wait and depth, generation actions, cache lookups) are recorded.

The OpenTelemetry API has one global tracer provider per process, and ADK's tracer binds to it
for good, so this module installs an SDK provider once, behind a sampler that records only while
one of these tests runs: before and after them every span is the API's non-recording span, as
with no SDK at all, and the rest of the suite sees no difference. (When an earlier test built
ADK's FastAPI app, ADK installed its own provider: the exporter is then added to that one, and
exports only while these tests run.) The meter provider stays installed too; its in-memory reader
only aggregates (bounded by the SDK's cardinality limit).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.events.event import Event, EventActions
from google.adk.runners import Runner
from google.adk.sessions.session import Session
from google.genai import types
from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind, StatusCode
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes

from adk_memory import (
    MemoryBankConfig,
    NotFoundError,
    PostgresMemoryService,
    PostgresSessionService,
)
from adk_memory.adk.callbacks import MemoryContextPlugin
from adk_memory.adk.compaction import SlidingWindowPlugin
from adk_memory.config import GenerationConfig
from adk_memory.testing import HashEmbedder, ScriptedLlm

FAST_RETRIES = MemoryBankConfig(
    generation=GenerationConfig(max_attempts=2, retry_base_delay=timedelta())
)


class _Gate(Sampler):
    """Records spans only while open (while a test of this module runs)."""

    open = False
    processor_added = False
    reader_installed = False

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        if not self.open:
            return SamplingResult(Decision.DROP)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    def get_description(self) -> str:
        return "open only during tests/test_telemetry.py"


@dataclass
class Telemetry:
    spans: InMemorySpanExporter
    reader: InMemoryMetricReader

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name == name]

    def points(self, metric: str) -> list[Any]:
        """Every data point of `metric` collected now (cumulative since the provider started)."""
        data = self.reader.get_metrics_data()
        return [
            point
            for resource in (data.resource_metrics if data else [])
            for scope in resource.scope_metrics
            for m in scope.metrics
            if m.name == metric
            for point in m.data.data_points
        ]


_GATE = _Gate()
_EXPORTER = InMemorySpanExporter()
_READER = InMemoryMetricReader()


class _GatedProcessor(SimpleSpanProcessor):
    """Exports finished spans only while the gate is open."""

    def on_end(self, span: ReadableSpan) -> None:
        if _GATE.open:
            super().on_end(span)


def _install() -> None:
    """The SDK providers and the exporter, once per process (the API refuses a second global
    provider): ours, or the tracer provider ADK installed when an earlier test built its app."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider(sampler=_GATE)
        trace.set_tracer_provider(provider)
    if not _GATE.processor_added:
        provider.add_span_processor(_GatedProcessor(_EXPORTER))
        _GATE.processor_added = True
    if not isinstance(metrics.get_meter_provider(), MeterProvider):
        metrics.set_meter_provider(MeterProvider(metric_readers=[_READER]))
        _GATE.reader_installed = True


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    _install()
    if not _GATE.reader_installed:  # a meter provider without our reader came first
        pytest.skip("another meter provider was installed in this process")
    _EXPORTER.clear()
    _GATE.open = True
    try:
        yield Telemetry(_EXPORTER, _READER)
    finally:
        _GATE.open = False
        _EXPORTER.clear()


def said(text: str, ts: float, delta: dict[str, Any] | None = None) -> Event:
    return Event(
        author="user",
        invocation_id="inv",
        timestamp=ts,
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=delta or {}),
    )


def extraction(*facts: str) -> str:
    return json.dumps(
        {"facts": [{"fact": f, "topic": "USER_PREFERENCES", "forget": False} for f in facts]}
    )


def ancestors(span: ReadableSpan, spans: list[ReadableSpan]) -> list[str]:
    """The names of `span`'s parents, nearest first."""
    by_id = {s.context.span_id: s for s in spans}
    names = []
    parent = span.parent
    while parent is not None and parent.span_id in by_id:
        found = by_id[parent.span_id]
        names.append(found.name)
        parent = found.parent
    return names


async def test_a_runner_turn_nests_our_spans_under_adks_invocation(
    telemetry, make_session_service, make_memory_service
):
    sessions = make_session_service()
    memory = make_memory_service(embedder=HashEmbedder(64))
    await memory.create_memory("The user likes jazz.", {"app_name": "otel_turn", "user_id": "u"})
    llm = ScriptedLlm(["Hello."])
    agent = LlmAgent(name="assistant", model=llm, instruction="Be brief.")
    plugins = [MemoryContextPlugin(), SlidingWindowPlugin(turns=5)]
    app = App(name="otel_turn", root_agent=agent, plugins=plugins)
    runner = Runner(app=app, session_service=sessions, memory_service=memory)
    session = await sessions.create_session(app_name="otel_turn", user_id="u")
    telemetry.spans.clear()

    message = types.Content(role="user", parts=[types.Part(text="What music do I like?")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass

    spans = telemetry.finished()
    [invocation] = [s for s in spans if s.parent is None and s.name.startswith("invoke_")]
    nested = [
        "adk_memory.session.append_event",
        "adk_memory.memory_context",
        "adk_memory.memory.retrieve_memories",
        "adk_memory.compaction.window",
    ]
    for name in nested:
        found = [s for s in spans if s.name == name]
        assert found, name
        for span in found:
            assert span.context.trace_id == invocation.context.trace_id
            assert invocation.name in ancestors(span, spans), (name, ancestors(span, spans))
            assert span.attributes["adk_memory.app_name"] == "otel_turn"
    # The retrieval runs inside the memory-context callback, which runs inside ADK's agent.
    [retrieval] = telemetry.named("adk_memory.memory.retrieve_memories")
    assert ancestors(retrieval, spans)[0] == "adk_memory.memory_context"
    [window] = telemetry.named("adk_memory.compaction.window")
    assert window.attributes["adk_memory.compaction.contents"] == 1  # the user's message
    assert window.attributes["adk_memory.compaction.kept"] == 1
    [context] = telemetry.named("adk_memory.memory_context")
    assert context.attributes["adk_memory.memory_context.relevant"] == 1
    assert context.attributes["adk_memory.memory_context.profile"] == 0
    assert context.attributes["adk_memory.memory_context.reused"] is False
    assert retrieval.attributes["db.system"] == "postgresql"
    assert retrieval.attributes["adk_memory.retrieval.mode"] == "hybrid"
    assert retrieval.attributes["adk_memory.retrieval.top_k"] == 10
    assert retrieval.attributes["adk_memory.retrieval.candidates"] >= 10
    assert retrieval.attributes["adk_memory.result_count"] == 1
    assert all(s.status.status_code is not StatusCode.ERROR for s in spans)

    durations = telemetry.points("adk_memory.operation.duration")
    operations = {p.attributes["adk_memory.operation"] for p in durations}
    assert {"session.append_event", "memory.retrieve_memories", "memory_context"} <= operations
    await memory.close()


# Distinctive strings for every kind of user content and identifier the calls below handle.
USER = "user-7f3q-private"
SESSION = "session-7f3q-private"
FACT = "7f3q-fact: the user is allergic to penicillin"
QUERY = "7f3q-query what medicines should I avoid"
STATE = "7f3q-state-value"
SAID = "7f3q-said I am allergic to penicillin"
SECRETS = ("7f3q", "penicillin", USER, SESSION)


def texts_of(value: Any) -> Iterator[str]:
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from texts_of(item)
    elif value is not None:
        yield str(value)


def everything_recorded(telemetry: Telemetry) -> list[str]:
    """Every string a span or metric carries: names, attributes, events, statuses, links."""
    recorded: list[str] = []
    for span in telemetry.finished():
        recorded.append(span.name)
        recorded.append(span.status.description or "")
        for attributes in [span.attributes, *(e.attributes for e in span.events)]:
            for key, value in (attributes or {}).items():
                recorded.append(key)
                recorded.extend(texts_of(value))
    data = telemetry.reader.get_metrics_data()
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                recorded.append(metric.name)
                for point in metric.data.data_points:
                    for key, value in (point.attributes or {}).items():
                        recorded.append(key)
                        recorded.extend(texts_of(value))
    return recorded


async def test_spans_and_metrics_carry_no_user_content_or_identifiers(
    telemetry, make_session_service, make_memory_service
):
    app, scope = "otel_private", {"app_name": "otel_private", "user_id": USER}
    sessions = make_session_service()
    llm = ScriptedLlm([extraction(FACT)])
    memory = make_memory_service(llm=llm, embedder=HashEmbedder(64), run_worker=False)

    session = await sessions.create_session(
        app_name=app, user_id=USER, session_id=SESSION, state={"user:diet": STATE}
    )
    await sessions.append_event(session, said(SAID, 1.0, {"allergy": STATE}))
    loaded = await sessions.get_session(app_name=app, user_id=USER, session_id=SESSION)
    await sessions.list_sessions(app_name=app, user_id=USER)
    await sessions.get_user_state(app_name=app, user_id=USER)
    await memory.generate_memories(session=loaded)
    assert await memory.worker.run_until_idle() == 1
    created = await memory.create_memory(FACT + " (direct)", scope)
    await memory.update_memory(created.id, scope, fact=FACT + " (updated)")
    assert await memory.retrieve_memories(scope, search_query=QUERY)
    await memory.search_memory(app_name=app, user_id=USER, query=QUERY)
    await memory.list_revisions(created.id, scope)
    with pytest.raises(NotFoundError):  # its message names the scope: the span must not
        await memory.update_memory("00000000-0000-0000-0000-000000000000", scope, fact=FACT)
    await memory.delete_memory(app_name=app, user_id=USER, memory_id=created.id)
    await memory.erase_user(app, USER)
    await sessions.delete_session(app_name=app, user_id=USER, session_id=SESSION)

    recorded = everything_recorded(telemetry)
    assert any(r == "adk_memory.generation.job" for r in recorded)  # the calls were traced
    for text in recorded:
        for secret in SECRETS:
            assert secret not in text, (secret, text)
    [failed] = [
        s
        for s in telemetry.named("adk_memory.memory.update_memory")
        if s.status.status_code is StatusCode.ERROR
    ]
    assert failed.attributes["error.type"] == "NotFoundError"
    assert not failed.events  # no exception event: its message would quote the scope
    await memory.close()


async def test_a_generation_job_is_traced_and_measured(telemetry, make_memory_service):
    app = "otel_jobs"
    llm = ScriptedLlm([extraction("The user likes jazz.")])
    memory = make_memory_service(llm=llm, run_worker=False, config=FAST_RETRIES)
    session = Session(id="s1", app_name=app, user_id="u", events=[said("I like jazz", 1.0)])
    await memory.generate_memories(session=session)
    telemetry.reader.get_metrics_data()  # a reader asks for the queue depth: now it is sampled
    await memory.worker.run_until_idle()

    spans = telemetry.finished()
    [job] = telemetry.named("adk_memory.generation.job")
    assert job.parent is None  # its own trace: the worker runs it apart from the turn
    assert job.attributes["adk_memory.app_name"] == app
    assert job.attributes["adk_memory.job.attempt"] == 1
    assert job.attributes["adk_memory.job.source"] == "session"
    assert job.attributes["adk_memory.job.queue_wait_s"] >= 0
    for step in ("extract", "guard", "apply", "model_call"):
        [span] = telemetry.named(f"adk_memory.generation.{step}")
        assert "adk_memory.generation.job" in ancestors(span, spans), step
    [model_call] = telemetry.named("adk_memory.generation.model_call")
    assert model_call.attributes["adk_memory.model.name"] == llm.model
    assert model_call.attributes["adk_memory.model.schema"]
    assert ancestors(model_call, spans)[0] == "adk_memory.generation.extract"
    [apply] = telemetry.named("adk_memory.generation.apply")
    assert apply.attributes["adk_memory.actions.created"] == 1
    assert apply.attributes["adk_memory.actions.rejected"] == 0

    def ours(metric: str) -> list[Any]:
        return [
            p for p in telemetry.points(metric) if p.attributes.get("adk_memory.app_name") == app
        ]

    [succeeded] = ours("adk_memory.job.duration")
    assert succeeded.attributes["adk_memory.job.outcome"] == "succeeded"
    assert succeeded.count == 1
    assert ours("adk_memory.job.queue_wait")[0].count == 1
    actions = {
        p.attributes["adk_memory.action"]: p.value
        for p in telemetry.points("adk_memory.generation.actions")
    }
    assert actions["created"] >= 1
    depth = {
        p.attributes["adk_memory.job.state"]: p.value
        for p in telemetry.points("adk_memory.queue.depth")
    }
    assert depth == {"ready": 1, "waiting": 0, "running": 0}  # sampled before the claim

    # A failing try: its span says so by type, and the failed try is counted as retried.
    before = {
        p.attributes["adk_memory.job.outcome"]: p.value
        for p in telemetry.points("adk_memory.job.failed_tries")
    }
    llm.add("not json", "still not json")  # both tries of the job fail
    await memory.generate_memories(
        session=Session(id="s2", app_name=app, user_id="u", events=[said("I like blues", 2.0)])
    )
    await memory.worker.run_until_idle()
    await asyncio.sleep(0.05)  # the retry is due at once (no backoff): past the first's now()
    await memory.worker.run_until_idle()
    failed = [
        s
        for s in telemetry.named("adk_memory.generation.job")
        if s.status.status_code is StatusCode.ERROR
    ]
    assert [s.attributes["error.type"] for s in failed] == ["GenerationOutputError"] * 2
    after = {
        p.attributes["adk_memory.job.outcome"]: p.value
        for p in telemetry.points("adk_memory.job.failed_tries")
    }
    assert after["retried"] == before.get("retried", 0) + 1
    assert after["dead_lettered"] == before.get("dead_lettered", 0) + 1
    outcomes = {p.attributes["adk_memory.job.outcome"] for p in ours("adk_memory.job.duration")}
    assert outcomes == {"succeeded", "failed"}
    await memory.close()


async def test_an_in_process_workers_jobs_are_traces_of_their_own(telemetry, make_memory_service):
    """The in-process worker starts inside the first enqueue's span (its loop inherits that
    context): its jobs must still not be filed under that turn, nor under each other."""
    app = "otel_inprocess"
    llm = ScriptedLlm([extraction("The user likes jazz."), extraction("The user likes tea.")])
    memory = make_memory_service(llm=llm, run_worker=True)
    turn = trace.get_tracer("tests").start_as_current_span("turn")
    with turn as span:
        first = await memory.generate_memories(
            session=Session(id="s1", app_name=app, user_id="u", events=[said("jazz", 1.0)])
        )
    await memory.wait(first, timeout=30)
    second = await memory.generate_memories(
        session=Session(id="s2", app_name=app, user_id="v", events=[said("tea", 1.0)])
    )
    await memory.wait(second, timeout=30)
    jobs = telemetry.named("adk_memory.generation.job")
    assert len(jobs) == 2 and all(job.parent is None for job in jobs)
    trace_ids = {job.context.trace_id for job in jobs}
    assert len(trace_ids) == 2 and span.get_span_context().trace_id not in trace_ids
    await memory.close()


async def test_the_session_event_cache_reports_hits_and_misses(telemetry, make_session_service):
    sessions = make_session_service()

    def lookups() -> dict[str, int]:
        return {
            p.attributes["adk_memory.cache.result"]: p.value
            for p in telemetry.points("adk_memory.cache.lookups")
            if p.attributes["adk_memory.cache"] == "session.events"
        }

    session = await sessions.create_session(app_name="otel_cache", user_id="u")
    for i in range(3):
        session = await sessions.get_session(
            app_name="otel_cache", user_id="u", session_id=session.id
        )
        await sessions.append_event(session, said(f"message {i}", float(i + 1)))
    await sessions.get_session(app_name="otel_cache", user_id="u", session_id=session.id)
    before = lookups()
    await sessions.get_session(app_name="otel_cache", user_id="u", session_id=session.id)
    after = lookups()
    # The three events were decoded by the read before: this one finds all of them.
    assert after.get("hit", 0) - before.get("hit", 0) == 3
    assert after.get("miss", 0) == before.get("miss", 0)
    reads = telemetry.named("adk_memory.session.get_session")
    assert [s.attributes["adk_memory.result_count"] for s in reads] == [0, 1, 2, 3, 3]
    assert {s.attributes["adk_memory.app_name"] for s in reads} == {"otel_cache"}


async def test_outside_these_tests_nothing_is_exported(make_session_service):
    """Outside these tests the spans are the API's non-recording ones (or, under ADK's own
    provider, not exported here): the rest of the suite is untouched."""
    _install()
    _EXPORTER.clear()
    sessions = make_session_service()
    session = await sessions.create_session(app_name="otel_off", user_id="u")
    await sessions.append_event(session, said("hello", 1.0))
    assert _EXPORTER.get_finished_spans() == ()


def test_every_public_call_of_both_services_is_traced():
    """A call added later without `@traced` would be invisible in traces: every public async
    method of both services is wrapped (closing them is not a call worth a span)."""
    untraced = [
        f"{service.__name__}.{name}"
        for service in (PostgresMemoryService, PostgresSessionService)
        for name, method in inspect.getmembers(service, inspect.iscoroutinefunction)
        if not name.startswith("_")
        and name not in {"close", "flush"}
        and not hasattr(method, "__wrapped__")
    ]
    assert untraced == []
