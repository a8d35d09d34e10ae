"""Memory-generation benchmark: the job queue and the generation pipeline of
`PostgresMemoryService`, with an instant fake model, so what is measured is adk-memory itself.

Why: in extraction mode an agent turn only enqueues a job (`add_session_to_memory`); workers then
run each job: claim -> extraction call -> candidate search -> consolidation call -> one
transaction. This script checks that machinery against the targets set for it:

  queue + pipeline throughput   >= 50 jobs/s (N session jobs over 100 user scopes, drained by
                                1 worker and, on fresh data, by 4 concurrent workers)
  enqueue latency               p50 / p99 reported, next to ADK's InMemoryMemoryService
                                add_session_to_memory (both are what a turn pays)
  model calls per generation    at most 2 (extraction + consolidation) and not growing with the
                                store: scopes holding 0, 1k and 10k memories; per-job latency too

The model is `adk_memory.testing.ScriptedLlm` with a responder that answers at once: extraction
requests (response schema with `facts`) with the 2 facts the session's user states, and
consolidation requests (schema with `operations`) with a CREATE per new fact. Calls are counted
per kind, with how many candidate memories each consolidation request showed the model. The
embedder is `HashEmbedder` (64 dimensions, deterministic, instant), so the hybrid candidate
search (vector + full-text) runs as it does in production.

Each phase uses its own schema in a fresh database (`adk_memory_bench_generation`, dropped and
recreated at start and dropped at the end). With no `--database-url` the embedded PostgreSQL is
started in a temporary data directory. `--profile` runs the 1-worker drain under cProfile and
prints where the time goes.

    python benchmarks/generation.py [--database-url URL] [--jobs 500] [--quick] [--profile]

The exit status is 0 whether or not the targets are met; PASS/MISS is printed per target.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import pstats
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from importlib import metadata

import _common as common
import asyncpg
from _common import expect, ms, percentile, progress, timed
from google.adk.events.event import Event
from google.adk.memory import InMemoryMemoryService
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions.session import Session
from google.genai import types
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from adk_memory import PostgresMemoryService
from adk_memory.testing import HashEmbedder, ScriptedLlm

BENCH_DATABASE = "adk_memory_bench_generation"
APP = "bench-app"
TARGET_JOBS_PER_SECOND = 50.0
MAX_CALLS_PER_JOB = 2
FILL_BATCH = 500
EMBEDDING_DIMENSIONS = 64


@dataclass(frozen=True)
class Plan:
    """How much work each measurement does."""

    jobs: int
    growth_jobs: int
    store_sizes: tuple[int, ...] = (0, 1_000, 10_000)
    scopes: int = 100
    workers: int = 4
    turns: int = 2
    """User/agent exchanges per session (2 events each)."""


FULL = Plan(jobs=500, growth_jobs=50)
QUICK = Plan(jobs=100, growth_jobs=10, scopes=20)


# ---------------------------------------------------------------------------------------------
# The fake model


_HOBBIES = (
    "hiking",
    "jazz piano",
    "sourdough baking",
    "bouldering",
    "birdwatching",
    "chess",
    "trail running",
    "watercolour painting",
    "sailing",
    "pottery",
    "salsa dancing",
    "astronomy",
)
_CITIES = ("Lisbon", "Oslo", "Nairobi", "Montreal", "Kyoto", "Valparaiso", "Tbilisi", "Hobart")
_STATED = re.compile(r"I enjoy (?P<hobby>[^.]+)\. I live in (?P<city>[^.]+)\.")
_NEW_FACT = re.compile(r"^(\d+)\. \([^)]*\) (.+)$", re.MULTILINE)
_CANDIDATE = re.compile(r"^- id: ", re.MULTILINE)


@dataclass
class ModelCalls:
    """What the fake model was asked, by kind."""

    extraction: int = 0
    consolidation: int = 0
    candidates: list[int] = field(default_factory=list)
    """How many existing memories each consolidation request showed the model."""

    @property
    def total(self) -> int:
        return self.extraction + self.consolidation


def _request_text(request: LlmRequest) -> str:
    return "\n".join(p.text for c in request.contents for p in c.parts or () if p.text)


class FakeModel:
    """An instant generation model: a `ScriptedLlm` whose responder tells extraction from
    consolidation by the response schema the request carries, and counts both."""

    def __init__(self) -> None:
        self.calls = ModelCalls()
        self.llm = ScriptedLlm(responder=self._respond)

    def _respond(self, request: LlmRequest) -> str:
        self.llm.requests.clear()  # the benchmark makes thousands of calls: keep none
        schema = request.config.response_schema if request.config else None
        fields = getattr(schema, "model_fields", {})
        if "facts" in fields:
            return self._extract(_request_text(request))
        if "operations" in fields:
            return self._consolidate(_request_text(request))
        raise AssertionError(f"unexpected model request (response schema {schema!r})")

    def _extract(self, conversation: str) -> str:
        """Two facts: what the user enjoys and where they live."""
        self.calls.extraction += 1
        stated = _STATED.search(conversation)
        if stated is None:
            raise AssertionError("the extraction request did not carry the conversation")
        facts = [
            {
                "fact": f"The user enjoys {stated['hobby']}.",
                "topic": "USER_PREFERENCES",
                "forget": False,
            },
            {
                "fact": f"The user lives in {stated['city']}.",
                "topic": "USER_PERSONAL_INFO",
                "forget": False,
            },
        ]
        return json.dumps({"facts": facts})

    def _consolidate(self, prompt: str) -> str:
        """A CREATE for every new fact (the most writes a consolidation can ask for)."""
        self.calls.consolidation += 1
        new_facts = _NEW_FACT.findall(prompt.split("## Existing memories")[0])
        self.calls.candidates.append(len(_CANDIDATE.findall(prompt)))
        operations = [
            {"action": "CREATE", "fact_numbers": [int(n)], "target_id": None, "fact": text}
            for n, text in new_facts
        ]
        return json.dumps({"operations": operations})


# ---------------------------------------------------------------------------------------------
# Data


def _said(author: str, text: str, invocation: str, timestamp: float) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        invocation_id=invocation,
        timestamp=timestamp,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


def make_session(index: int, user_id: str, turns: int) -> Session:
    """Session `index` of `user_id`: the user states a hobby and a city, then chats on."""
    hobby = _HOBBIES[index % len(_HOBBIES)]
    city = _CITIES[(index // len(_HOBBIES)) % len(_CITIES)]
    start = 1_700_000_000.0 + index * 60
    lines = [
        ("user", f"Hi! I enjoy {hobby}. I live in {city}. Any ideas for this weekend?"),
        ("assistant", f"How about a {hobby} meetup in {city} on Saturday morning?"),
        ("user", "Sounds good, but I would rather go somewhere quieter."),
        ("assistant", f"Then try the parks north of {city}; they are calm early in the day."),
    ]
    while len(lines) < 2 * turns:
        lines += lines[2:4]
    events = [
        _said(author, text, f"inv-{index}-{n // 2}", start + n)
        for n, (author, text) in enumerate(lines[: 2 * turns])
    ]
    return Session(
        id=f"session-{index:06d}",
        app_name=APP,
        user_id=user_id,
        events=events,
        last_update_time=events[-1].timestamp,
    )


def make_sessions(count: int, scopes: int, turns: int) -> list[Session]:
    """`count` sessions spread round-robin over `scopes` users."""
    return [make_session(i, f"user-{i % scopes:04d}", turns) for i in range(count)]


def fill_fact(index: int) -> str:
    """An existing memory that shares words with what extraction finds (realistic overlap)."""
    hobby = _HOBBIES[index % len(_HOBBIES)]
    city = _CITIES[(index // 7) % len(_CITIES)]
    return f"The user enjoys {hobby} with friend number {index} when visiting {city}."


# ---------------------------------------------------------------------------------------------
# Measurement


@dataclass(frozen=True)
class Throughput:
    """One drain of the queue."""

    workers: int
    jobs: int
    enqueue_seconds: float
    drain_seconds: float
    calls: ModelCalls
    memories: int

    @property
    def drain_rate(self) -> float:
        return self.jobs / self.drain_seconds

    @property
    def end_to_end_rate(self) -> float:
        return self.jobs / (self.enqueue_seconds + self.drain_seconds)


@dataclass(frozen=True)
class Growth:
    """Generations in a scope that already holds `stored` memories."""

    stored: int
    fill_seconds: float
    calls_per_job: list[int]
    calls: ModelCalls
    latencies: list[float]


@dataclass
class Results:
    """Everything measured, for the report."""

    enqueue: list[float] = field(default_factory=list)
    adk_add_session: list[float] = field(default_factory=list)
    throughput: list[Throughput] = field(default_factory=list)
    growth: list[Growth] = field(default_factory=list)
    profile: str | None = None


# ---------------------------------------------------------------------------------------------
# Services


def make_services(
    engine: AsyncEngine, schema: str, model: FakeModel, count: int
) -> list[PostgresMemoryService]:
    """`count` services on one engine and schema (as `count` worker processes would be), none
    running a background worker: the benchmark drives the workers itself."""
    return [
        PostgresMemoryService(
            engine=engine,
            schema=schema,
            llm=model.llm,
            embedder=HashEmbedder(EMBEDDING_DIMENSIONS),
            run_worker=False,
        )
        for _ in range(count)
    ]


async def prepare(services: Sequence[PostgresMemoryService]) -> None:
    """Migrate the schema and fix the vector dimension before anything is timed."""
    for service in services:
        await service.list_memories({"app_name": APP, "user_id": "warm-up"}, page_size=1)


async def job_statuses(conn: asyncpg.Connection, schema: str) -> dict[str, int]:
    rows = await conn.fetch(f"SELECT status, count(*) FROM {schema}.memory_jobs GROUP BY 1")
    return {r[0]: r[1] for r in rows}


async def memory_count(conn: asyncpg.Connection, schema: str) -> int:
    return int(await conn.fetchval(f"SELECT count(*) FROM {schema}.memories"))


# ---------------------------------------------------------------------------------------------
# 1. Queue + pipeline throughput


async def enqueue_all(service: PostgresMemoryService, sessions: Sequence[Session]) -> list[float]:
    """`add_session_to_memory` for every session (extraction mode: one job insert each)."""
    latencies = []
    for session in sessions:
        seconds, _ = await timed(service.add_session_to_memory(session))
        latencies.append(seconds)
    return latencies


async def drain(services: Sequence[PostgresMemoryService]) -> int:
    """Every service's worker runs jobs concurrently until none is left; how many ran."""
    counts = await asyncio.gather(*(s.worker.run_until_idle() for s in services))
    return sum(counts)


async def throughput_run(
    engine: AsyncEngine,
    conn: asyncpg.Connection,
    schema: str,
    workers: int,
    plan: Plan,
    results: Results,
    profiler: cProfile.Profile | None = None,
) -> Throughput:
    """Enqueue `plan.jobs` session jobs into an empty schema, then drain them with `workers`
    workers; checks every job is done and wrote its 2 memories."""
    model = FakeModel()
    services = make_services(engine, schema, model, workers)
    await prepare(services)
    sessions = make_sessions(plan.jobs, plan.scopes, plan.turns)
    progress(f"{workers} worker(s): enqueueing {plan.jobs} jobs over {plan.scopes} scopes")
    started = time.perf_counter()
    latencies = await enqueue_all(services[0], sessions)
    enqueue_seconds = time.perf_counter() - started
    if not results.enqueue:
        results.enqueue = latencies
    progress(f"{workers} worker(s): draining")
    if profiler is not None:
        profiler.enable()
    drain_seconds, ran = await timed(drain(services))
    if profiler is not None:
        profiler.disable()
    statuses = await job_statuses(conn, schema)
    expect(statuses == {"done": plan.jobs}, f"every job done, got {statuses} ({ran} runs)")
    memories = await memory_count(conn, schema)
    expect(memories == 2 * plan.jobs, f"2 memories per job, got {memories}")
    expect(model.calls.extraction == plan.jobs, "one extraction call per job")
    return Throughput(workers, plan.jobs, enqueue_seconds, drain_seconds, model.calls, memories)


async def adk_add_session(plan: Plan) -> list[float]:
    """ADK's `InMemoryMemoryService.add_session_to_memory` on the same sessions."""
    service = InMemoryMemoryService()
    latencies = []
    for session in make_sessions(plan.jobs, plan.scopes, plan.turns):
        seconds, _ = await timed(service.add_session_to_memory(session))
        latencies.append(seconds)
    return latencies


# ---------------------------------------------------------------------------------------------
# 2. Model calls and latency as the store grows


async def fill_scope(service: PostgresMemoryService, user_id: str, count: int) -> None:
    """`count` memories in the user's scope, through ADK's `add_memory` in batches."""
    for start in range(0, count, FILL_BATCH):
        entries = [
            MemoryEntry(content=types.Content(role="user", parts=[types.Part(text=fill_fact(i))]))
            for i in range(start, min(start + FILL_BATCH, count))
        ]
        await service.add_memory(app_name=APP, user_id=user_id, memories=entries)


async def one_generation(
    service: PostgresMemoryService, model: FakeModel, session: Session
) -> tuple[float, int]:
    """Enqueue a session and run its job; the job's latency (claim to commit) and model calls."""
    await service.add_session_to_memory(session)
    before = model.calls.total
    seconds, ran = await timed(service.worker.run_once())
    expect(ran, "a job was due")
    return seconds, model.calls.total - before


async def growth_run(
    service: PostgresMemoryService, model: FakeModel, stored: int, plan: Plan
) -> Growth:
    """`plan.growth_jobs` generations, one at a time, in a scope holding `stored` memories. For
    0 every generation gets a scope of its own, so each really meets an empty store."""
    user = f"growth-{stored}"
    fill_seconds, _ = await timed(fill_scope(service, user, stored))
    model.calls = ModelCalls()
    latencies: list[float] = []
    calls: list[int] = []
    for j in range(plan.growth_jobs):
        owner = f"{user}-{j}" if stored == 0 else user
        session = make_session(10_000 + j, owner, plan.turns)
        seconds, made = await one_generation(service, model, session)
        latencies.append(seconds)
        calls.append(made)
    expect(model.calls.extraction == plan.growth_jobs, "one extraction call per job")
    return Growth(stored, fill_seconds, calls, model.calls, latencies)


async def growth_all(engine: AsyncEngine, plan: Plan) -> list[Growth]:
    """The growth measurement at every store size, in one schema (other scopes' memories are
    in the same table, as in production)."""
    model = FakeModel()
    [service] = make_services(engine, "bench_gen_growth", model, 1)
    await prepare([service])
    runs = []
    for stored in plan.store_sizes:
        progress(f"store of {stored} memories: filling, then {plan.growth_jobs} generations")
        runs.append(await growth_run(service, model, stored, plan))
    return runs


# ---------------------------------------------------------------------------------------------
# Report


def table(rows: Sequence[Sequence[str]], left: frozenset[int] = frozenset({0})) -> None:
    """Print rows as a table: the first is the header; columns in `left` are left-aligned,
    the others right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for n, row in enumerate(rows):
        cells = [
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def report_throughput(runs: Sequence[Throughput]) -> None:
    print("1. Queue + pipeline throughput (claim -> extraction -> candidates -> consolidation ->")
    print("   one transaction), session jobs spread round-robin over the scopes\n")
    rows = [
        (
            "workers",
            "jobs",
            "drain s",
            "drain jobs/s",
            "enqueue+drain jobs/s",
            "model calls/job",
            "memories",
            f"target >= {TARGET_JOBS_PER_SECOND:g} jobs/s",
        )
    ]
    for r in runs:
        rows.append(
            (
                str(r.workers),
                str(r.jobs),
                f"{r.drain_seconds:.2f}",
                f"{r.drain_rate:.1f}",
                f"{r.end_to_end_rate:.1f}",
                f"{r.calls.total / r.jobs:.2f}",
                str(r.memories),
                verdict(r.drain_rate >= TARGET_JOBS_PER_SECOND),
            )
        )
    table(rows)
    print(
        "\ndrain jobs/s = jobs / time for the workers to run every queued job (the target);"
        "\nenqueue+drain also counts the time the turns spent enqueueing. Each scope's first"
        "\njob finds no candidate memories, so its consolidation makes no model call (every"
        "\nfact is created as is): hence fewer than 2 model calls per job on average.\n"
    )


def report_enqueue(ours: Sequence[float], adk: Sequence[float]) -> None:
    print("   What a turn pays to remember a session (add_session_to_memory, per call)\n")
    rows = [("service", "p50 ms", "p99 ms", "max ms", "what the call does")]
    rows.append(
        (
            "ours: PostgresMemoryService (extraction mode)",
            ms(percentile(ours, 50)),
            ms(percentile(ours, 99)),
            ms(max(ours)),
            "serialise events + one durable INSERT into the job queue",
        )
    )
    rows.append(
        (
            "ADK: InMemoryMemoryService",
            ms(percentile(adk, 50)),
            ms(percentile(adk, 99)),
            ms(max(adk)),
            "deep-copies the events into a dict (no LLM, lost on restart)",
        )
    )
    table(rows, left=frozenset({0, 4}))
    print(
        "\nNeither makes a model call on the turn; ADK's in-memory service never extracts facts"
        "\n(search is keyword matching over raw events), so it has no generation to compare.\n"
    )


def report_growth(runs: Sequence[Growth]) -> None:
    print("2. Model calls and latency per generation as the scope's store grows")
    print("   (one worker, one job at a time; latency = claim to commit of one job)\n")
    rows = [
        (
            "stored",
            "fill s",
            "jobs",
            "extraction/job",
            "consolidation/job",
            "max calls/job",
            "candidates shown",
            "p50 ms",
            "p95 ms",
            "max ms",
            "jobs/s/worker",
            f"<= {MAX_CALLS_PER_JOB} calls",
        )
    ]
    for g in runs:
        jobs = len(g.latencies)
        shown = g.calls.candidates
        rows.append(
            (
                f"{g.stored:,}",
                f"{g.fill_seconds:.1f}",
                str(jobs),
                f"{g.calls.extraction / jobs:.2f}",
                f"{g.calls.consolidation / jobs:.2f}",
                str(max(g.calls_per_job)),
                f"{statistics.mean(shown):.1f} (max {max(shown)})" if shown else "0",
                ms(percentile(g.latencies, 50)),
                ms(percentile(g.latencies, 95)),
                ms(max(g.latencies)),
                f"{jobs / sum(g.latencies):.1f}",
                verdict(max(g.calls_per_job) <= MAX_CALLS_PER_JOB),
            )
        )
    table(rows)
    counts = [max(g.calls_per_job) for g in runs if g.stored > 0]
    constant = len(set(counts)) <= 1
    print(
        f"\nCalls per job with memories stored: {sorted(set(counts))} at every size -> "
        f"{'constant' if constant else 'NOT constant'} ({verdict(constant)}). With an empty "
        "store\nthe consolidation call is skipped (no candidates), so a job makes 1 call. "
        "Candidates shown\n= existing memories in the consolidation prompt (at most 5 per "
        "extracted fact). jobs/s/worker\n= 1 / mean job latency: one worker's rate on scopes "
        "of that size.\n"
    )


def report(results: Results) -> None:
    report_throughput(results.throughput)
    report_enqueue(results.enqueue, results.adk_add_session)
    report_growth(results.growth)
    if results.profile:
        print("cProfile of the 1-worker drain (top functions by cumulative time):\n")
        print(results.profile)


def profile_text(profiler: cProfile.Profile, limit: int = 30) -> str:
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(limit)
    return out.getvalue()


# ---------------------------------------------------------------------------------------------
# Server and database


async def describe(url: str, embedded: bool, plan: Plan) -> None:
    conn = await asyncpg.connect(common.asyncpg_dsn(url))
    try:
        version = await conn.fetchval("SELECT version()")
        settings = {n: await conn.fetchval(f"SHOW {n}") for n in ("fsync", "synchronous_commit")}
    finally:
        await conn.close()
    print(f"PostgreSQL: {version}")
    print(f"Server:     {common.server_label(url, embedded)}")
    print("Settings:   " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    print(
        f"Software:   Python {sys.version.split()[0]}, "
        f"google-adk {metadata.version('google-adk')}, asyncpg {metadata.version('asyncpg')}"
    )
    print(
        "Model:      ScriptedLlm responder (instant); "
        f"embedder HashEmbedder({EMBEDDING_DIMENSIONS})"
    )
    print(f"Load:       {common.load_average()} at start")
    print(f"Plan:       {plan}\n")


# ---------------------------------------------------------------------------------------------
# Entry point


async def run_all(bench_url: str, plan: Plan, profile: bool) -> Results:
    """Every measurement, in order, each phase in a schema of its own."""
    results = Results()
    engine = create_async_engine(bench_url, pool_size=plan.workers + 2)
    conn = await asyncpg.connect(common.asyncpg_dsn(bench_url))
    try:
        profiler = cProfile.Profile() if profile else None
        for workers in (1, plan.workers):
            run = await throughput_run(
                engine,
                conn,
                f"bench_gen_{workers}w",
                workers,
                plan,
                results,
                profiler if workers == 1 else None,
            )
            results.throughput.append(run)
        if profiler is not None:
            results.profile = profile_text(profiler)
        progress(f"ADK InMemoryMemoryService: {plan.jobs} add_session_to_memory calls")
        results.adk_add_session = await adk_add_session(plan)
        results.growth = await growth_all(engine, plan)
    finally:
        await conn.close()
        await engine.dispose()
    return results


async def bench(url: str, embedded: bool, plan: Plan, profile: bool) -> None:
    await describe(url, embedded, plan)
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    try:
        results = await run_all(bench_url, plan, profile)
    finally:
        await common.drop_database(url, BENCH_DATABASE)
    report(results)
    print(f"Load:       {common.load_average()} at end")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--jobs", type=int, help="generation jobs per throughput run")
    parser.add_argument("--quick", action="store_true", help="fewer jobs, for a fast check")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the 1-worker drain and print it"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    if args.jobs is not None:
        if args.jobs < 1:
            raise SystemExit("--jobs must be at least 1")
        plan = replace(plan, jobs=args.jobs)
    started = time.perf_counter()
    with common.postgres_server(args.database_url) as url:
        asyncio.run(bench(url, args.database_url is None, plan, args.profile))
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
