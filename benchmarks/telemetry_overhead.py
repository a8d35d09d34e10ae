"""Telemetry overhead: `append_event` and `get_session` with the package's tracing compiled out,
with it on but no OpenTelemetry SDK configured (the API's no-op tracer: every deployment that
does not export traces), and with the SDK recording every span and metric.

Why: every session and memory call runs in a span (`adk_memory/telemetry.py`), so the claim to
check is that this costs nothing measurable when nobody collects traces, and little when
somebody does. The baseline calls the very same methods undecorated (`__wrapped__`), on the same
service and database, so the only difference is the telemetry. Traced and untraced calls
alternate call by call, so background noise falls on both alike; each call is timed on its own
with `time.perf_counter`, warm-up calls discarded. The SDK variant sends
spans to a `BatchSpanProcessor` whose exporter drops them (what a real exporter's queue costs
the caller, without the network) and metrics to an in-memory reader. A microbenchmark times the
decorator alone around a coroutine that does nothing, to give the cost per call in microseconds.

The API allows one global tracer provider per process, so the "no SDK" rounds run first and the
SDK is installed for the second half (with its own baseline rounds).

    python benchmarks/telemetry_overhead.py [--database-url URL] [--quick]

Prints the p50 per variant and its ratio to the untraced baseline (1.00: no overhead).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import _common as common
from _common import expect, ms, percentile, progress, table
from google.adk.events.event import Event
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.session import Session
from google.genai import types
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from adk_memory import PostgresSessionService
from adk_memory.telemetry import traced

BENCH_DATABASE = "adk_memory_bench_telemetry"
APP, USER = "bench-app", "user-1"
UNTRACED, NO_SDK, SDK = "untraced", "traced, no SDK", "traced, SDK"


@dataclass(frozen=True)
class Plan:
    rounds: int
    calls_per_round: int
    session_events: int
    micro_calls: int


FULL = Plan(rounds=20, calls_per_round=50, session_events=100, micro_calls=200_000)
QUICK = Plan(rounds=4, calls_per_round=25, session_events=50, micro_calls=20_000)


@dataclass
class Samples:
    by_variant: dict[str, list[float]] = field(default_factory=dict)

    def add(self, variant: str, seconds: float) -> None:
        self.by_variant.setdefault(variant, []).append(seconds)


class _Dropped(SpanExporter):
    """An exporter that accepts spans and sends them nowhere."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def install_sdk() -> None:
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(_Dropped()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


def said(n: int) -> Event:
    text = f"Message {n}: what will the weather be like in Paris tomorrow afternoon?"
    return Event(
        author="user",
        invocation_id=f"inv-{n}",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


Call = Callable[[], Awaitable[object]]


def calls(service: PostgresSessionService, session: Session, read_id: str) -> dict[str, Call]:
    """Each operation's traced call (the service's method) and untraced one (`__wrapped__`)."""
    cls = PostgresSessionService
    counter = iter(range(10**9))
    last_20 = GetSessionConfig(num_recent_events=20)

    def append(traced_call: bool) -> Call:
        method = service.append_event if traced_call else cls.append_event.__wrapped__
        if traced_call:
            return lambda: method(session, said(next(counter)))
        return lambda: method(service, session, said(next(counter)))

    def read(traced_call: bool, config: GetSessionConfig | None) -> Call:
        keys = {"app_name": APP, "user_id": USER, "session_id": read_id, "config": config}
        if traced_call:
            return lambda: service.get_session(**keys)
        return lambda: cls.get_session.__wrapped__(service, **keys)

    return {
        "append_event": append(True),
        "append_event/untraced": append(False),
        "get_session (all)": read(True, None),
        "get_session (all)/untraced": read(False, None),
        "get_session (last 20)": read(True, last_20),
        "get_session (last 20)/untraced": read(False, last_20),
    }


def baseline(variant: str) -> str:
    """The untraced calls measured alongside `variant` (each half has its own)."""
    return f"{UNTRACED} ({variant} half)"


async def measure(
    operations: dict[str, Call], traced_variant: str, plan: Plan, results: dict[str, Samples]
) -> None:
    """Rounds of each operation, its traced and untraced calls alternating call by call (which
    goes first alternating too), so both see the same moment of a busy machine."""
    names = [n for n in operations if not n.endswith("/untraced")]
    for name in names:
        for _ in range(5):  # warm-up
            await operations[name]()
            await operations[f"{name}/untraced"]()
    for number in range(plan.rounds):
        for name in names:
            pair = [(traced_variant, name), (baseline(traced_variant), f"{name}/untraced")]
            for call in range(plan.calls_per_round):
                for variant, key in pair if call % 2 else pair[::-1]:
                    started = time.perf_counter()
                    await operations[key]()
                    results[name].add(variant, time.perf_counter() - started)
        progress(f"{traced_variant}: round {number + 1}/{plan.rounds}")


async def microseconds_per_call(plan: Plan) -> tuple[float, float]:
    """The decorator alone: (untraced, traced) microseconds per call of an empty coroutine."""

    async def nothing(app_name: str) -> None:
        return None

    decorated = traced("benchmark.nothing")(nothing)
    timings = []
    for fn in (nothing, decorated):
        started = time.perf_counter()
        for _ in range(plan.micro_calls):
            await fn(app_name=APP)
        timings.append((time.perf_counter() - started) / plan.micro_calls * 1e6)
    return timings[0], timings[1]


async def bench(url: str, embedded: bool, plan: Plan) -> None:
    print(f"Server:     {common.server_label(url, embedded)}")
    print(f"Load:       {common.load_average()} at start")
    print(f"Plan:       {plan}\n")
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    service = PostgresSessionService(bench_url)
    results: dict[str, Samples] = {}
    micro: dict[str, tuple[float, float]] = {}
    try:
        appended = await service.create_session(app_name=APP, user_id=USER)
        read = await service.create_session(app_name=APP, user_id=USER)
        for n in range(plan.session_events):
            read = await service.get_session(app_name=APP, user_id=USER, session_id=read.id) or read
            await service.append_event(read, said(n))
        loaded = await service.get_session(app_name=APP, user_id=USER, session_id=appended.id)
        expect(loaded is not None, "the session to append to exists")
        assert loaded is not None
        operations = calls(service, loaded, read.id)
        results = {n: Samples() for n in operations if not n.endswith("/untraced")}
        micro[NO_SDK] = await microseconds_per_call(plan)
        await measure(operations, NO_SDK, plan, results)
        install_sdk()
        micro[SDK] = await microseconds_per_call(plan)
        await measure(operations, SDK, plan, results)
        full = await service.get_session(app_name=APP, user_id=USER, session_id=read.id)
        expect(full is not None and len(full.events) == plan.session_events, "reads are whole")
    finally:
        await service.close()
        await common.drop_database(url, BENCH_DATABASE)
    report(results, micro)
    print(f"Load:       {common.load_average()} at end")


def report(results: dict[str, Samples], micro: dict[str, tuple[float, float]]) -> None:
    rows = []
    for name, samples in results.items():
        for variant in (NO_SDK, SDK):
            base = percentile(samples.by_variant[baseline(variant)], 50)
            p50 = percentile(samples.by_variant[variant], 50)
            rows.append([f"{name}, {UNTRACED}", ms(base), "1.000"])
            rows.append([f"{name}, {variant}", ms(p50), f"{p50 / base:.3f}"])
    print("p50 per call (ms) and ratio to the untraced calls of the same rounds")
    table(["operation", "p50 ms", "ratio"], rows)
    print("\nThe decorator alone, around an empty coroutine (microseconds per call)")
    table(
        ["variant", "untraced us", "traced us", "added us"],
        [[v, f"{u:.2f}", f"{t:.2f}", f"{t - u:.2f}"] for v, (u, t) in micro.items()],
    )
    # What the decorator adds, as a share of each call: steadier than the ratios above on a
    # busy machine, where two p50s of the same call differ by more than the decorator costs.
    print("\nThe decorator's cost as a share of each call's untraced p50")
    shares = []
    for name, samples in results.items():
        row = [name]
        for variant in (NO_SDK, SDK):
            base = percentile(samples.by_variant[baseline(variant)], 50)
            added = micro[variant][1] - micro[variant][0]
            row.append(f"{added / 1e6 / base:.2%}")
        shares.append(row)
    table(["operation", NO_SDK, SDK], shares)


def main(argv: list[str] | None = None) -> int:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer calls, for a fast check")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with common.postgres_server(args.database_url) as url:
        asyncio.run(bench(url, args.database_url is None, QUICK if args.quick else FULL))
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
