"""OpenTelemetry for the package: its spans and metrics, through the global OpenTelemetry API.

Owns: the tracer and the meter (both named `adk_memory`), every span, attribute and metric name
the package emits (all under `adk_memory.*`, plus the semantic conventions' `db.system` and
`error.type`), and the one rule they all follow: no attribute carries user content or a
personal identifier. Spans and metrics say which operation ran for which app, how long it took,
how it ended (the exception's type, never its message: messages quote facts, queries and
scopes) and how many things it handled. Never a user id, session id, memory id, fact, query,
event or state value. Traces still lead to the conversation: ADK's own invocation span, which
ours nest under, carries the session it served.

It never configures a provider or an exporter: the application does (ADK's `--trace_to_cloud`,
`maybe_set_otel_providers`, or the OpenTelemetry SDK directly), and our spans go wherever ADK's
go. With no tracer provider configured no span is created at all (one check per call), the
metrics go to the API's no-op meter and the queue depth is never queried: the cost is a
microsecond or so a call (`benchmarks/telemetry_overhead.py`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.trace import Span, StatusCode
from opentelemetry.util.types import AttributeValue

from ._cache import CacheStats

NAMESPACE = "adk_memory"
"""The instrumentation scope's name and the prefix of every span, attribute and metric."""

APP_NAME = "adk_memory.app_name"
OPERATION = "adk_memory.operation"
ERROR_TYPE = "error.type"
RESULT_COUNT = "adk_memory.result_count"

_DATABASE: dict[str, AttributeValue] = {"db.system": "postgresql"}

_MAX_APP_NAME = 128
"""An app name longer than this is not a key the services accept: it is not recorded."""

tracer = trace.get_tracer(NAMESPACE)
meter = metrics.get_meter(NAMESPACE)

_operation_duration = meter.create_histogram(
    "adk_memory.operation.duration",
    unit="s",
    description="How long each session, memory, retrieval, generation and compaction call "
    "took (attribute adk_memory.operation names it, error.type says it failed).",
)
_job_duration = meter.create_histogram(
    "adk_memory.job.duration",
    unit="s",
    description="How long a generation job's try ran, by outcome.",
)
_queue_wait = meter.create_histogram(
    "adk_memory.job.queue_wait",
    unit="s",
    description="How long a generation job waited between becoming due and being claimed.",
)
_failed_tries = meter.create_counter(
    "adk_memory.job.failed_tries",
    unit="{try}",
    description="Failed generation tries by what became of the job: retried, dead_lettered, "
    "or lost (its lease ran out or it was erased).",
)
_actions = meter.create_counter(
    "adk_memory.generation.actions",
    unit="{memory}",
    description="What generation did to memories, by action.",
)

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


# ------------------------------------------------------------------------------ spans


def _app_of(value: object) -> str | None:
    """The app name a call argument names: the name itself, a scope's `app_name`, or the
    `app_name` of a session (or of a callback context's session)."""
    if isinstance(value, Mapping):
        value = value.get("app_name")
    elif not isinstance(value, str):
        value = getattr(value, "app_name", None) or getattr(
            getattr(value, "session", None), "app_name", None
        )
    return value if isinstance(value, str) and 0 < len(value) <= _MAX_APP_NAME else None


_APP_PARAMETERS = (
    "app_name",
    "scope",
    "session",
    "context",
    "callback_context",
    "invocation_context",
)
"""Parameters whose value names the app (`_app_of`), first found first used."""


def _app_finder(fn: Callable[..., Any]) -> Callable[[tuple[Any, ...], dict[str, Any]], str | None]:
    """Where `fn`'s arguments name the app, worked out once from its signature so a call only
    indexes its arguments."""
    names = list(inspect.signature(fn).parameters)
    spots = [(name, names.index(name)) for name in _APP_PARAMETERS if name in names]

    def find(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
        for name, index in spots:
            value = kwargs[name] if name in kwargs else args[index] if index < len(args) else None
            app = _app_of(value) if value is not None else None
            if app is not None:
                return app
        return None

    return find


def _counted(value: object) -> int | None:
    """How many things a call returned: a list's items, or the events, sessions or memories of
    a session, a listing or a page."""
    if isinstance(value, list):
        return len(value)
    for name in ("events", "sessions", "memories"):
        items = getattr(value, name, None)
        if isinstance(items, list):
            return len(items)
    return None


_provider_set = False


def _span(name: str, attributes: dict[str, AttributeValue], **options: Any) -> Any:
    """A new current span, or with no tracer provider configured, the invalid span and no
    context change at all: the API's no-op path still costs dozens of calls per span, which
    the hottest calls (an append, a session read) need not pay for nothing. Once set, a
    provider stays (the API refuses to replace it), so the check stops at the first yes."""
    global _provider_set
    if not _provider_set:
        provider = trace.get_tracer_provider()
        _provider_set = not isinstance(
            provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
        )
        if not _provider_set:
            return contextlib.nullcontext(trace.INVALID_SPAN)
    return tracer.start_as_current_span(
        name,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
        **options,
    )


def _failed(span: Span, error: BaseException, labels: dict[str, AttributeValue]) -> None:
    """Mark `span` failed with the exception's type only (its message may quote user text)."""
    labels[ERROR_TYPE] = type(error).__qualname__
    span.set_attribute(ERROR_TYPE, labels[ERROR_TYPE])
    span.set_status(StatusCode.ERROR)


def traced(name: str, *, database: bool = True) -> Callable[[F], F]:
    """Decorate an async method: each call runs in a span `adk_memory.<name>` (a child of the
    current span, e.g. ADK's invocation), with the app it serves, how many things it returned,
    and how it failed, and its duration is recorded in `adk_memory.operation.duration`.
    `database`: the call talks to PostgreSQL (`db.system`)."""
    span_name = f"{NAMESPACE}.{name}"

    def decorate(fn: F) -> F:
        find_app = _app_finder(fn)

        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            # The operation is the span's name, and an attribute of the duration metric.
            labels: dict[str, AttributeValue] = {OPERATION: name}
            attributes: dict[str, AttributeValue] = dict(_DATABASE) if database else {}
            app = find_app(args, kwargs)
            if app is not None:
                labels[APP_NAME] = attributes[APP_NAME] = app
            started = time.perf_counter()
            with _span(span_name, attributes) as span:
                try:
                    value = await fn(*args, **kwargs)
                except BaseException as error:
                    _failed(span, error, labels)
                    raise
                finally:
                    _operation_duration.record(time.perf_counter() - started, labels)
                if span.is_recording() and (count := _counted(value)) is not None:
                    span.set_attribute(RESULT_COUNT, count)
                return value

        return wrapper  # type: ignore[return-value]

    return decorate


def annotate(group: str, **attributes: AttributeValue | None) -> None:
    """Add counts and settings (never user content) to the current span, each named
    `adk_memory.<group>.<key>`; None values are left out."""
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes(
            {
                f"{NAMESPACE}.{group}.{key}": value
                for key, value in attributes.items()
                if value is not None
            }
        )


def count_actions(**counts: int) -> None:
    """Record what a generation did (created=2, updated=1, ...): on the current span as
    `adk_memory.actions.<action>`, and in `adk_memory.generation.actions`."""
    annotate("actions", **counts)
    for action, number in counts.items():
        if number:
            _actions.add(number, {"adk_memory.action": action})


# ------------------------------------------------------------------------------ generation jobs


class Job(Protocol):
    """What the job telemetry reads of a claimed job (`memory.jobs.ClaimedJob`)."""

    @property
    def scope(self) -> dict[str, str]: ...
    @property
    def source(self) -> str: ...
    @property
    def attempt(self) -> int: ...
    @property
    def queue_wait(self) -> float | None: ...


J = TypeVar("J", bound=Job)


def traced_job(handler: Callable[[J], Awaitable[None]]) -> Callable[[J], Awaitable[None]]:
    """The job handler with each try in a span `adk_memory.generation.job`, its duration
    (`adk_memory.job.duration`, by outcome) and queue wait (`adk_memory.job.queue_wait`)
    recorded. A job's span starts its own trace: the worker may run it long after, and in
    another process than, the turn that enqueued it."""

    @functools.wraps(handler)
    async def run(job: J) -> None:
        labels: dict[str, AttributeValue] = {}
        app = _app_of(job.scope)
        if app is not None:
            labels[APP_NAME] = app
        if job.queue_wait is not None:
            _queue_wait.record(max(job.queue_wait, 0.0), labels)
        attributes: dict[str, AttributeValue] = {
            **labels,
            **_DATABASE,
            "adk_memory.job.attempt": job.attempt,
            "adk_memory.job.source": job.source,
        }
        if job.queue_wait is not None:
            attributes["adk_memory.job.queue_wait_s"] = max(job.queue_wait, 0.0)
        started = time.perf_counter()
        with _span(
            f"{NAMESPACE}.generation.job", attributes, context=otel_context.Context()
        ) as span:
            labels["adk_memory.job.outcome"] = "succeeded"
            try:
                await handler(job)
            except BaseException as error:
                labels["adk_memory.job.outcome"] = "failed"
                _failed(span, error, labels)
                raise
            finally:
                _job_duration.record(time.perf_counter() - started, labels)

    return run


def job_failed(status: str | None) -> None:
    """Count a failed try by what `JobQueue.fail` made of its job ('pending': retried, 'dead':
    dead-lettered, None: the try had lost its job)."""
    outcome = {"pending": "retried", "dead": "dead_lettered"}.get(status or "", "lost")
    _failed_tries.add(1, {"adk_memory.job.outcome": outcome})


class QueueDepth:
    """The generation queue's depth, sampled by a worker for the `adk_memory.queue.depth`
    gauge: at most every `interval` seconds, and only once a metrics reader has asked for it
    (with no SDK configured the database is never queried for it)."""

    _latest: weakref.ref[QueueDepth] | None = None
    _observed = False

    def __init__(self, query: Callable[[], Awaitable[Mapping[str, int]]], interval: float = 10.0):
        self._query = query
        self._interval = interval
        self._sampled_at: float | None = None
        self.depth: Mapping[str, int] = {}

    async def sample(self) -> None:
        """Query the depth if a reader wants it and the last sample is `interval` old."""
        now = time.monotonic()
        if not QueueDepth._observed or (
            self._sampled_at is not None and now - self._sampled_at < self._interval
        ):
            return
        self._sampled_at = now
        self.depth = await self._query()
        QueueDepth._latest = weakref.ref(self)

    @staticmethod
    def observe(options: CallbackOptions) -> Iterable[Observation]:
        """The gauge's callback: the latest sample of this process's workers, by job state."""
        QueueDepth._observed = True
        latest = QueueDepth._latest() if QueueDepth._latest is not None else None
        depth = latest.depth if latest is not None else {}
        return [Observation(n, {"adk_memory.job.state": state}) for state, n in depth.items()]


meter.create_observable_gauge(
    "adk_memory.queue.depth",
    callbacks=[QueueDepth.observe],
    unit="{job}",
    description="Generation jobs queued, by state: ready (due), waiting (retry backoff), running.",
)


# ------------------------------------------------------------------------------ caches


_caches: dict[str, CacheStats] = {}


def cache_stats(name: str) -> CacheStats:
    """The counters to give a cache (`LruCache(..., stats=cache_stats("session.events"))`)
    whose lookups `adk_memory.cache.lookups` reports (attributes `adk_memory.cache` = `name`,
    `adk_memory.cache.result` = hit or miss). Every cache of one name in the process shares
    them. The cache only counts; the counts are read when a metrics reader collects, so a
    lookup costs no telemetry call."""
    return _caches.setdefault(name, CacheStats())


def _cache_lookups(options: CallbackOptions) -> Iterable[Observation]:
    observations = []
    for name, stats in _caches.items():
        for result, count in (("hit", stats.hits), ("miss", stats.misses)):
            observations.append(
                Observation(count, {"adk_memory.cache": name, "adk_memory.cache.result": result})
            )
    return observations


meter.create_observable_counter(
    "adk_memory.cache.lookups",
    callbacks=[_cache_lookups],
    unit="{lookup}",
    description="Lookups in the package's in-process caches, by cache and result (hit rate: "
    "hits / all).",
)
