"""Session-service benchmark: adk-memory's `PostgresSessionService` against ADK's own
`DatabaseSessionService`, both on the same PostgreSQL server, in the same run.

Why: the point of `PostgresSessionService` is that every call is one prepared statement on a raw
asyncpg connection where ADK's service runs an ORM unit of work of several round trips. This
script checks that claim against the targets set for it:

  append_event            p50 at least 10x faster than ADK (one live session handle, N appends
                          of realistic events: user text, function call/response pairs, ~200
                          character model replies, some with session and `user:` state deltas)
  get_session, last 20    p50 at least 5x faster (a 500-event session, GetSessionConfig)
  get_session, all 500    p50 at least 4x faster; and at least 2x with the decoded-event cache
                          off (`event_cache_size=0`: every read decodes every event)
  list_sessions           reported only (one user with 1,000 sessions, each with a little state)
  create_session          reported only (timed while building the list_sessions data)

Our service runs three times, as contenders in their own schemas: with its default decoded-event
cache ("ours"), with the cache off ("ours, no cache"), and with row-level security off ("ours,
RLS off": `ADK_MEMORY_ROW_LEVEL_SECURITY=off`, the policies disabled on its tables); the ratios of
each to ADK are printed, and the cost of row-level security as ours / ours-RLS-off per
operation (issue 26). On the embedded server every contender connects as its owner role, a
non-superuser the policies apply to (the default setup).

Both services build their own data through their own public API and then do exactly the same
calls on it. Measurements are interleaved in short rounds whose order alternates, so background
noise (autovacuum, checkpoints, the OS) falls on both alike. Every call is timed on its own with
`time.perf_counter`; warm-up calls are made first and discarded.

With no `--database-url` the embedded PostgreSQL is started in a temporary data directory. Both
services run in a fresh database (`adk_memory_bench_sessions`, dropped and recreated at start and
dropped at the end): ADK's tables go to its `public` schema, ours to `adk_memory` (and
`adk_memory_nocache` for the contender without the cache).

    python benchmarks/sessions.py [--database-url URL] [--quick]

The exit status is 0 whether or not the targets are met; PASS/MISS is printed per target.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from importlib import metadata

import _common as common
import asyncpg
from _common import expect, ms, percentile, progress, table, timed
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import BaseSessionService, DatabaseSessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from adk_memory import PostgresSessionService
from adk_memory.settings.variables import ROW_LEVEL_SECURITY_ENV

BENCH_DATABASE = "adk_memory_bench_sessions"
APP = "bench-app"
USER = "user-1"
LIST_USER = "user-with-many-sessions"
AGENT = "weather_agent"
ADK, OURS, NO_CACHE, RLS_OFF = "ADK", "ours", "ours, no cache", "ours, RLS off"

Probe = Callable[[int], Awaitable[float]]
"""One measured call: given the call's index, make it and return how long it took (seconds)."""


@dataclass(frozen=True)
class Plan:
    """How much work each measurement does."""

    appends: int
    reads: int
    lists: int
    append_warmup: int = 50
    read_warmup: int = 5
    list_warmup: int = 3
    history: int = 500
    recent: int = 20
    sessions: int = 1000
    round_size: int = 10


FULL = Plan(appends=1000, reads=50, lists=20)
QUICK = Plan(appends=200, reads=15, lists=10)


@dataclass(frozen=True)
class Contender:
    """A session service under test and how to release it."""

    name: str
    service: BaseSessionService
    close: Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Result:
    """Latency samples of one operation for every contender, by name, and the speed-up over
    ADK each of ours should reach (by contender name; none: reported only)."""

    operation: str
    tail: int
    samples: dict[str, list[float]]
    targets: dict[str, float]


# ---------------------------------------------------------------------------------------------
# Realistic events


_CITIES = ("Lisbon", "Oslo", "Nairobi", "Montreal", "Kyoto", "Valparaíso", "Tbilisi")
_QUESTIONS = (
    "What's the weather like in {city} today? I'm deciding whether to cycle to work.",
    "Will it rain in {city} this afternoon? I have an outdoor meeting at three.",
    "How cold is it in {city} right now, and should I bring a jacket tonight?",
)
_ANSWER = (
    "Right now in {city} it is {temp:.1f}°C with {conditions}, humidity around {humidity}% and "
    "a light breeze from the west. If you cycle, take a waterproof layer: showers are likely "
    "after {hour}:00. Turn {turn} summary saved."
)
_FOLLOW_UP = (
    "Anything else for {city}? I can check the hourly forecast, air quality or sunset time, or "
    "compare it with another city you are travelling to this week. Just tell me which one and "
    "when you leave; turn {turn}."
)


def _usage() -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=812, candidates_token_count=64, total_token_count=876
    )


def make_event(index: int) -> Event:
    """Event `index` of a conversation whose turns are: user question, tool call, tool result,
    model answer (with session and `user:` state deltas), model follow-up."""
    turn, step = divmod(index, 5)
    city = _CITIES[turn % len(_CITIES)]
    invocation_id = f"inv-{turn:05d}"
    call_id = f"call-{turn:05d}"
    if step == 0:
        text = _QUESTIONS[turn % len(_QUESTIONS)].format(city=city)
        content = types.Content(role="user", parts=[types.Part(text=text)])
        return Event(author="user", invocation_id=invocation_id, content=content)
    if step == 1:
        call = types.FunctionCall(
            id=call_id, name="get_weather", args={"city": city, "unit": "celsius"}
        )
        content = types.Content(role="model", parts=[types.Part(function_call=call)])
        return Event(
            author=AGENT, invocation_id=invocation_id, content=content, usage_metadata=_usage()
        )
    if step == 2:
        response = types.FunctionResponse(
            id=call_id,
            name="get_weather",
            response={"city": city, "temperature_c": 14.5 + turn % 9, "conditions": "showers"},
        )
        content = types.Content(role="user", parts=[types.Part(function_response=response)])
        return Event(author=AGENT, invocation_id=invocation_id, content=content)
    if step == 3:
        text = _ANSWER.format(
            city=city,
            temp=14.5 + turn % 9,
            conditions="light showers",
            humidity=82,
            hour=15 + turn % 5,
            turn=turn,
        )
        delta = {"last_city": city, "turns": turn, "user:preferred_unit": "celsius"}
        return Event(
            author=AGENT,
            invocation_id=invocation_id,
            content=types.Content(role="model", parts=[types.Part(text=text)]),
            actions=EventActions(state_delta=delta),
            usage_metadata=_usage(),
        )
    text = _FOLLOW_UP.format(city=city, turn=turn)
    content = types.Content(role="model", parts=[types.Part(text=text)])
    return Event(
        author=AGENT, invocation_id=invocation_id, content=content, usage_metadata=_usage()
    )


# ---------------------------------------------------------------------------------------------
# Measurement


async def measure(
    probes: dict[str, Probe], calls: int, warmup: int, round_size: int
) -> dict[str, list[float]]:
    """Run `warmup` discarded calls of each probe, then `calls` measured ones, interleaved in
    rounds of `round_size` whose order alternates; every probe's samples in seconds."""
    names = list(probes)
    for name in names:
        for index in range(warmup):
            await probes[name](index)
    gc.collect()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_no, first in enumerate(range(0, calls, round_size)):
        order = names if round_no % 2 == 0 else names[::-1]
        for name in order:
            for index in range(first, min(first + round_size, calls)):
                samples[name].append(await probes[name](warmup + index))
    return samples


# ---------------------------------------------------------------------------------------------
# Workloads: each sets up its data through the service's own API and returns a probe.


async def append_probe(svc: BaseSessionService) -> Probe:
    """Appends to one live session handle, as a runner does during a conversation."""
    session = await svc.create_session(app_name=APP, user_id=USER, session_id="appends")

    async def probe(index: int) -> float:
        seconds, _ = await timed(svc.append_event(session, make_event(index)))
        return seconds

    return probe


async def fill_session(svc: BaseSessionService, session_id: str, events: int) -> None:
    """A session holding `events` events, written through the service."""
    session = await svc.create_session(app_name=APP, user_id=USER, session_id=session_id)
    for index in range(events):
        await svc.append_event(session, make_event(index))


def get_probe(
    svc: BaseSessionService, session_id: str, config: GetSessionConfig | None, expected: int
) -> Probe:
    """Reads of one session, checking the expected number of events comes back."""

    async def probe(_: int) -> float:
        seconds, session = await timed(
            svc.get_session(app_name=APP, user_id=USER, session_id=session_id, config=config)
        )
        expect(session is not None and len(session.events) == expected, "get_session events")
        return seconds

    return probe


def create_probe(svc: BaseSessionService) -> Probe:
    """Creates the sessions `list_probe` lists, each with a little session and user state."""

    async def probe(index: int) -> float:
        state = {"topic": _CITIES[index % len(_CITIES)], "turns": index % 7, "user:plan": "pro"}
        seconds, _ = await timed(
            svc.create_session(
                app_name=APP, user_id=LIST_USER, session_id=f"s-{index:05d}", state=state
            )
        )
        return seconds

    return probe


def list_probe(svc: BaseSessionService, expected: int) -> Probe:
    """Lists every session of the user with many sessions."""

    async def probe(_: int) -> float:
        seconds, response = await timed(svc.list_sessions(app_name=APP, user_id=LIST_USER))
        expect(len(response.sessions) == expected, "list_sessions count")
        return seconds

    return probe


def probes_for(
    contenders: list[Contender], make: Callable[[BaseSessionService], Probe]
) -> dict[str, Probe]:
    """The same probe for every contender, by name."""
    return {c.name: make(c.service) for c in contenders}


def as_result(
    operation: str,
    samples: dict[str, list[float]],
    tail: int,
    target: float | None = None,
    no_cache_target: float | None = None,
) -> Result:
    """The samples with their targets: `target` for ours with the cache, `no_cache_target` for
    ours without it."""
    targets = {OURS: target, NO_CACHE: no_cache_target}
    return Result(operation, tail, samples, {k: v for k, v in targets.items() if v is not None})


async def run_all(contenders: list[Contender], plan: Plan) -> list[Result]:
    """Every measurement, in order; progress goes to stderr."""
    results: list[Result] = []
    progress(f"append_event: {plan.append_warmup} warm-up + {plan.appends} appends each")
    appenders = {c.name: await append_probe(c.service) for c in contenders}
    samples = await measure(appenders, plan.appends, plan.append_warmup, plan.round_size)
    results.append(as_result(f"append_event (x{plan.appends})", samples, 99, 10.0))

    progress(f"get_session: writing a {plan.history}-event session for each service")
    for c in contenders:
        await fill_session(c.service, "history", plan.history)
    recent = GetSessionConfig(num_recent_events=plan.recent)
    for label, config, expected, target, no_cache_target in (
        (f"get_session last {plan.recent} of {plan.history}", recent, plan.recent, 5.0, None),
        (f"get_session all {plan.history}", None, plan.history, 4.0, 2.0),
    ):
        progress(f"{label}: {plan.read_warmup} warm-up + {plan.reads} reads each")
        read = partial(get_probe, session_id="history", config=config, expected=expected)
        readers = probes_for(contenders, read)
        samples = await measure(readers, plan.reads, plan.read_warmup, plan.round_size)
        results.append(as_result(f"{label} (x{plan.reads})", samples, 95, target, no_cache_target))

    progress(f"create_session: {plan.sessions} sessions each (list_sessions data)")
    samples = await measure(probes_for(contenders, create_probe), plan.sessions, 0, 50)
    results.append(as_result(f"create_session (x{plan.sessions})", samples, 99))

    progress(f"list_sessions of {plan.sessions}: {plan.lists} calls each")
    listers = probes_for(contenders, partial(list_probe, expected=plan.sessions))
    samples = await measure(listers, plan.lists, plan.list_warmup, 1)
    results.append(
        as_result(f"list_sessions, {plan.sessions} sessions (x{plan.lists})", samples, 95)
    )
    return results


# ---------------------------------------------------------------------------------------------
# Report


def report(results: list[Result]) -> None:
    """The results table: for each of ours, its times, its ratios to ADK (how many times faster
    it is) and PASS/MISS against its target."""
    header = ("operation", "service", "p50", "tail", "x p50", "x tail", "target (p50)")
    rows: list[tuple[str, ...]] = []
    for r in results:
        adk50, adk_tail = percentile(r.samples[ADK], 50), percentile(r.samples[ADK], r.tail)
        rows.append((r.operation, ADK, ms(adk50), f"{ms(adk_tail)} p{r.tail}", "", "", ""))
        for name in (OURS, NO_CACHE, RLS_OFF):
            p50, tail = percentile(r.samples[name], 50), percentile(r.samples[name], r.tail)
            target = r.targets.get(name)
            verdict = "-"
            if target is not None:
                verdict = f">= {target:g}x {'PASS' if adk50 / p50 >= target else 'MISS'}"
            rows.append(
                (
                    "",
                    name,
                    ms(p50),
                    f"{ms(tail)} p{r.tail}",
                    f"{adk50 / p50:.1f}x",
                    f"{adk_tail / tail:.1f}x",
                    verdict,
                )
            )
    table(header, rows)
    print("\nTimes in milliseconds per call; x = ADK time / ours (how many times faster ours is).")
    print("\nRow-level security: ours (on) against ours with it off, same server, interleaved.")
    cost = []
    for r in results:
        on50, off50 = percentile(r.samples[OURS], 50), percentile(r.samples[RLS_OFF], 50)
        on_tail = percentile(r.samples[OURS], r.tail)
        off_tail = percentile(r.samples[RLS_OFF], r.tail)
        cost.append(
            (
                r.operation,
                ms(on50),
                ms(off50),
                f"{(on50 / off50 - 1) * 100:+.1f} %",
                f"{(on_tail / off_tail - 1) * 100:+.1f} % p{r.tail}",
            )
        )
    table(("operation", "RLS on p50", "RLS off p50", "cost p50", "cost tail"), cost)


# ---------------------------------------------------------------------------------------------
# Server and database


async def server_settings(url: str) -> dict[str, str]:
    """The server's version and the settings that decide what a durable commit costs."""
    conn = await asyncpg.connect(common.asyncpg_dsn(url))
    try:
        settings = {"version": str(await conn.fetchval("SELECT version()"))}
        for name in ("fsync", "synchronous_commit", "shared_buffers"):
            settings[name] = str(await conn.fetchval(f"SHOW {name}"))
        return settings
    finally:
        await conn.close()


def describe(url: str, embedded: bool, settings: dict[str, str], plan: Plan) -> None:
    print(f"PostgreSQL: {settings['version']}")
    print(f"Server:     {common.server_label(url, embedded)}")
    print(
        f"Settings:   fsync={settings['fsync']}, "
        f"synchronous_commit={settings['synchronous_commit']}, "
        f"shared_buffers={settings['shared_buffers']}"
    )
    print(
        f"Software:   Python {sys.version.split()[0]}, "
        f"google-adk {metadata.version('google-adk')}, "
        f"SQLAlchemy {metadata.version('sqlalchemy')}, asyncpg {metadata.version('asyncpg')}"
    )
    print(f"Load:       {common.load_average()} at start")
    print(f"Plan:       {plan}\n")


# ---------------------------------------------------------------------------------------------
# Entry point


async def bench(url: str, embedded: bool, plan: Plan) -> None:
    describe(url, embedded, await server_settings(url), plan)
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    adk_service = DatabaseSessionService(db_url=bench_url)
    our_service = PostgresSessionService(bench_url)
    no_cache = PostgresSessionService(bench_url, schema="adk_memory_nocache", event_cache_size=0)
    with row_level_security_off():
        rls_off = PostgresSessionService(bench_url, schema="adk_memory_norls")
    contenders = [
        Contender(ADK, adk_service, adk_service.close),
        Contender(OURS, our_service, our_service.close),
        Contender(NO_CACHE, no_cache, no_cache.close),
        Contender(RLS_OFF, rls_off, rls_off.close),
    ]
    try:
        results = await run_all(contenders, plan)
    finally:
        for c in contenders:
            await c.close()
        await common.drop_database(url, BENCH_DATABASE)
    report(results)
    print(f"Load:       {common.load_average()} at end")


@contextmanager
def row_level_security_off() -> Iterator[None]:
    """The setting a user turns row-level security off with, for the services built inside."""
    before = os.environ.get(ROW_LEVEL_SECURITY_ENV)
    os.environ[ROW_LEVEL_SECURITY_ENV] = "off"
    try:
        yield
    finally:
        if before is None:
            del os.environ[ROW_LEVEL_SECURITY_ENV]
        else:
            os.environ[ROW_LEVEL_SECURITY_ENV] = before


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer calls, for a fast check")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    started = time.perf_counter()
    with common.postgres_server(args.database_url) as url:
        asyncio.run(bench(url, args.database_url is None, plan))
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
