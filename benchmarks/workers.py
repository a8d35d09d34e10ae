"""Many-workers benchmark: memory generation with 1, 4 and 8 worker processes on one database,
fed by agents' turns at a steady rate, with a model that takes realistic time to answer.

Why: the queue hands each job to one worker (`FOR UPDATE SKIP LOCKED`) and each scope to one
job at a time (a lease per scope), so adding workers should add throughput until the database
is the bottleneck, and never let two workers generate for one scope at once. This script
measures that, per worker count, on a fresh schema:

  jobs/s               completed generations per second, from the first enqueue to the end of
                       the last job's model calls (capped by the offered rate once the
                       workers keep up)
  queue wait           enqueue -> the job's first model call (claim + reading its events), p50
                       and p95 over the jobs that ran; `left` counts those still queued when
                       the run stopped (their wait is longer than any measured)
  scope overlaps       pairs of jobs of one scope whose spans overlapped (must be 0: the scope
                       lease forbids it); a job's span runs from its first model call to the
                       end of its last, across processes (wall clock), which is where two
                       workers inside one scope would meet (the claim before it and the
                       commit after it take milliseconds, the calls 0.3 s each)
  DB CPU per job       CPU time of every PostgreSQL process of the server (backends included,
                       enqueues too) during the run, divided by the jobs completed; needs the
                       server on this machine (psutil)

The turns: `--scopes` agents (one user scope each), a job every 1/`--rate` seconds for
`--seconds` seconds, 80% of them for a scope drawn uniformly (most scopes see one job) and 20%
for one of 10 busy scopes (many jobs of one scope queued at once: what the lease serialises).
Each job is one session (`add_session_to_memory`, extraction mode: one insert); the user states
a hobby and a city, tagged with the job, so the model can tell which job each call serves.

The model: `generation.FakeModel` (extraction returns the 2 stated facts, consolidation creates
each new one) behind `asyncio.sleep(--latency)` per call, 0.3 s by default; the embedder is
`HashEmbedder` (64 dimensions). Each worker is a separate process (`multiprocessing`, spawn)
running the package's own worker loop (`PostgresMemoryService.make_worker`) with that model.
After the arrival window the workers drain the queue for at most `--drain` seconds.

With no `--database-url` the embedded PostgreSQL is started in a temporary data directory; the
script works in a fresh database (`adk_memory_bench_workers`) it drops at the end.

    python benchmarks/workers.py [--database-url URL] [--quick] [--workers 1,4,8]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event as StopEvent
from typing import Any

import _common as common
import asyncpg
import psutil
from _common import percentile, progress, table
from generation import APP, EMBEDDING_DIMENSIONS, FakeModel, _request_text
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions.session import Session
from google.genai import types

from adk_memory import PostgresMemoryService
from adk_memory.testing import HashEmbedder, ScriptedLlm

BENCH_DATABASE = "adk_memory_bench_workers"
WARM_UP_SCOPE = 90_000
"""Warm-up jobs are for agents from this number on (never among the measured ones)."""
WARM_UP_INDEX = 10_000_000
BUSY_SCOPES = 10
BUSY_SHARE = 0.2
POLL_SECONDS = 0.1
"""How often an idle worker process looks for a job (enqueues happen in another process, so
the in-process wake-up does not reach it)."""

_HOBBIES = ("hiking", "jazz piano", "sourdough baking", "bouldering", "chess", "sailing")
_CITIES = ("Lisbon", "Oslo", "Nairobi", "Montreal", "Kyoto", "Hobart")
_TAG = re.compile(r"club (?P<tag>A\d+-T\d+)")


@dataclass(frozen=True)
class Plan:
    """How much work each run does."""

    scopes: int
    rate: float
    seconds: float
    drain: float
    latency: float = 0.3


FULL = Plan(scopes=5_000, rate=12.0, seconds=60.0, drain=30.0)
QUICK = Plan(scopes=2_000, rate=10.0, seconds=15.0, drain=10.0)


# ---------------------------------------------------------------------------------------------
# The model, in each worker process


class SlowModel(FakeModel):
    """`FakeModel` answering after `latency` seconds, recording when each job's calls ran:
    the job's tag (in the conversation, and in the facts consolidation is shown) -> (first
    call's start, last call's end), wall-clock seconds."""

    def __init__(self, latency: float) -> None:
        super().__init__()
        self.latency = latency
        self.spans: dict[str, tuple[float, float]] = {}
        self.llm = ScriptedLlm(responder=self._respond_later)

    async def _respond_later(self, request: LlmRequest) -> str:
        started = time.time()
        new_part = _request_text(request).split("## Existing memories")[0]
        found = _TAG.search(new_part)
        if found is None:
            raise AssertionError("a model request without its job's tag")
        await asyncio.sleep(self.latency)
        reply = self._respond(request)
        first = self.spans.get(found["tag"], (started, started))[0]
        self.spans[found["tag"]] = (first, time.time())
        return reply


def _worker_process(
    number: int, url: str, schema: str, latency: float, out: Queue[Any], stop: StopEvent
) -> None:
    """Worker process `number`: warms up, says it is ready on `out`, runs the package's worker
    loop until `stop`, then puts its spans, model calls and failed tries on `out`."""
    asyncio.run(_work(number, url, schema, latency, out, stop))


async def _work(
    number: int, url: str, schema: str, latency: float, out: Queue[Any], stop: StopEvent
) -> None:
    model = SlowModel(latency)
    service = PostgresMemoryService(
        url,
        schema=schema,
        llm=model.llm,
        embedder=HashEmbedder(EMBEDDING_DIMENSIONS),
        run_worker=False,
    )
    worker = service.make_worker(poll_interval=POLL_SECONDS)
    # A process's first generation builds what google-genai and pydantic build lazily (about
    # a second of CPU): run one in a scope of its own before the clock starts.
    turn = 0
    while worker.stats.ran == 0:  # another process may take this one's warm-up job
        turn += 1
        index = WARM_UP_INDEX + 100 * number + turn
        _, session = job_session(WARM_UP_SCOPE + number, turn, index)
        await service.add_session_to_memory(session)
        await worker.run_until_idle()
    warm_up_calls = model.calls.total
    out.put(("ready", None))
    worker.start()
    await asyncio.to_thread(stop.wait)
    await worker.stop()
    await service.close()
    calls = model.calls.total - warm_up_calls
    out.put(("spans", (model.spans, calls, worker.stats.failed)))


# ---------------------------------------------------------------------------------------------
# The turns, in the main process


def job_session(scope: int, turn: int, index: int) -> tuple[str, Session]:
    """Job `index`: turn `turn` of agent `scope`, tagged; (tag, session)."""
    tag = f"A{scope:05d}-T{turn}"
    hobby, city = _HOBBIES[index % len(_HOBBIES)], _CITIES[scope % len(_CITIES)]
    start = 1_700_000_000.0 + index
    lines = [
        ("user", f"Hi! I enjoy {hobby} with club {tag}. I live in {city}. Any plans?"),
        ("assistant", f"How about {hobby} in {city} on Saturday morning?"),
    ]
    events = [
        Event(
            author=author,
            invocation_id=f"inv-{index}",
            timestamp=start + n,
            content=types.Content(
                role="user" if author == "user" else "model", parts=[types.Part(text=text)]
            ),
        )
        for n, (author, text) in enumerate(lines)
    ]
    session = Session(
        id=f"session-{index:06d}",
        app_name=APP,
        user_id=f"agent-{scope:05d}",
        events=events,
        last_update_time=events[-1].timestamp,
    )
    return tag, session


def arrivals(plan: Plan, seed: int = 7) -> list[tuple[float, str, Session]]:
    """Every job of a run: (seconds after the start to enqueue it, tag, session)."""
    rng = random.Random(seed)
    turns: dict[int, int] = defaultdict(int)
    jobs = []
    for index in range(int(plan.rate * plan.seconds)):
        if rng.random() < BUSY_SHARE:
            scope = rng.randrange(BUSY_SCOPES)
        else:
            scope = rng.randrange(BUSY_SCOPES, plan.scopes)
        turns[scope] += 1
        tag, session = job_session(scope, turns[scope], index)
        jobs.append((index / plan.rate, tag, session))
    return jobs


@dataclass
class Run:
    """What one worker count achieved."""

    workers: int
    enqueued: int
    done: int = 0
    elapsed: float = 0.0
    waits: list[float] = field(default_factory=list)
    overlaps: int = 0
    model_calls: int = 0
    failed: int = 0
    db_cpu: float | None = None


# ---------------------------------------------------------------------------------------------
# Database server CPU


async def postmaster(url: str) -> psutil.Process | None:
    """The server's main process, when it runs on this machine (else None): the parent of
    this connection's backend, looked up while the backend lives."""
    conn = await asyncpg.connect(common.asyncpg_dsn(url))
    try:
        parent = psutil.Process(int(await conn.fetchval("SELECT pg_backend_pid()"))).parent()
    except psutil.Error:
        return None
    finally:
        await conn.close()
    return parent if parent is not None and "postgres" in parent.name() else None


def server_cpu(server: psutil.Process) -> float:
    """CPU seconds used so far by the server: the postmaster, the processes it has reaped and
    those still running (backends, autovacuum, checkpointer, ...)."""
    times = server.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in server.children():
        try:
            own = child.cpu_times()
        except psutil.Error:  # it just exited: counted in children_* from now on
            continue
        total += own.user + own.system
    return total


# ---------------------------------------------------------------------------------------------
# One run


async def count_jobs(conn: asyncpg.Connection, schema: str) -> dict[str, int]:
    rows = await conn.fetch(f"SELECT status, count(*) FROM {schema}.memory_jobs GROUP BY 1")
    return {r[0]: r[1] for r in rows}


def overlaps(spans: dict[str, tuple[float, float]]) -> int:
    """Pairs of consecutive jobs of one scope whose model calls overlapped."""
    by_scope: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for tag, span in spans.items():
        by_scope[tag.split("-")[0]].append(span)
    clashes = 0
    for runs in by_scope.values():
        runs.sort()
        clashes += sum(1 for a, b in itertools.pairwise(runs) if b[0] < a[1])
    return clashes


async def run_workers(url: str, workers: int, plan: Plan, server: psutil.Process | None) -> Run:
    """Start `workers` processes on a fresh schema, feed them the turns, drain, measure."""
    schema = f"bench_workers_{workers}"
    producer = PostgresMemoryService(
        url,
        schema=schema,
        llm=SlowModel(plan.latency).llm,  # extraction mode: turns only enqueue
        embedder=HashEmbedder(EMBEDDING_DIMENSIONS),
        run_worker=False,
    )
    await producer.list_memories({"app_name": APP, "user_id": "warm-up"}, page_size=1)
    jobs = arrivals(plan)
    context = multiprocessing.get_context("spawn")
    out: Queue[Any] = context.Queue()
    stop = context.Event()
    processes = [
        context.Process(target=_worker_process, args=(number, url, schema, plan.latency, out, stop))
        for number in range(workers)
    ]
    for process in processes:
        process.start()
    progress(f"{workers} worker(s): starting processes, one warm-up generation each")
    for _ in processes:
        await asyncio.to_thread(out.get)
    conn = await asyncpg.connect(common.asyncpg_dsn(url))
    warm_ups = (await count_jobs(conn, schema)).get("done", 0)
    run = Run(workers, len(jobs))
    cpu_before = server_cpu(server) if server else None
    progress(f"{workers} worker(s): {len(jobs)} turns over {plan.seconds:g} s, then draining")
    enqueued_at: dict[str, float] = {}
    started = time.time()
    for offset, tag, session in jobs:
        delay = started + offset - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        await producer.add_session_to_memory(session)
        enqueued_at[tag] = time.time()
    deadline = time.time() + plan.drain
    while time.time() < deadline:
        if (await count_jobs(conn, schema)).get("done", 0) - warm_ups == len(jobs):
            break
        await asyncio.sleep(0.25)
    statuses = await count_jobs(conn, schema)
    if server is not None and cpu_before is not None:
        run.db_cpu = server_cpu(server) - cpu_before
    stop.set()
    spans: dict[str, tuple[float, float]] = {}
    for _ in processes:
        kind, payload = await asyncio.to_thread(out.get)
        while kind != "spans":
            kind, payload = await asyncio.to_thread(out.get)
        their_spans, calls, failed = payload
        spans.update(their_spans)
        run.model_calls += calls
        run.failed += failed
    for process in processes:
        process.join()
    await conn.close()
    await producer.close()
    run.done = statuses.get("done", 0) - warm_ups
    spans = {tag: span for tag, span in spans.items() if tag in enqueued_at}  # no warm-ups
    ends = [end for _, end in spans.values()]
    run.elapsed = (max(ends) if ends else time.time()) - started
    run.waits = [spans[tag][0] - enqueued_at[tag] for tag in spans]
    run.overlaps = overlaps(spans)
    return run


# ---------------------------------------------------------------------------------------------
# Report


def report(runs: Sequence[Run], plan: Plan) -> None:
    header = (
        "workers",
        "turns",
        "done",
        "left",
        "jobs/s",
        "model calls/job",
        "queue wait p50 s",
        "p95 s",
        "scope overlaps",
        "DB CPU ms/job",
    )
    rows = []
    for r in runs:
        cpu = "n/a" if r.db_cpu is None or not r.done else f"{1000 * r.db_cpu / r.done:.1f}"
        rows.append(
            (
                str(r.workers),
                str(r.enqueued),
                str(r.done),
                str(r.enqueued - r.done),
                f"{r.done / r.elapsed:.1f}",
                f"{r.model_calls / max(r.done, 1):.2f}",
                f"{percentile(r.waits, 50):.2f}",
                f"{percentile(r.waits, 95):.2f}",
                str(r.overlaps),
                cpu,
            )
        )
    table(header, rows)
    print(
        f"\n{plan.rate:g} turns/s offered for {plan.seconds:g} s over {plan.scopes} agents "
        f"({BUSY_SHARE:.0%} to {BUSY_SCOPES} busy ones), model {plan.latency:g} s per call;"
        f"\ndrained for at most {plan.drain:g} s. jobs/s = done / (end of the last model call -"
        " first enqueue): once\nthe workers keep up it is the offered rate. Queue wait counts "
        "the jobs that ran; `left` were\nstill queued."
    )
    if any(r.overlaps for r in runs):
        print("\nFAIL: two workers generated for one scope at once.")
    if any(r.failed for r in runs):
        print(f"\nNote: {sum(r.failed for r in runs)} tries failed (retried or dead-lettered).")


# ---------------------------------------------------------------------------------------------
# Entry point


async def bench(url: str, embedded: bool, plan: Plan, counts: Sequence[int]) -> None:
    print(f"Server:     {common.server_label(url, embedded)}")
    print(
        f"Software:   Python {sys.version.split()[0]}, google-adk {metadata.version('google-adk')}"
    )
    print(f"Load:       {common.load_average()} at start")
    print(f"Plan:       {plan}\n")
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    server = await postmaster(url)
    runs = []
    try:
        for workers in counts:
            runs.append(await run_workers(bench_url, workers, plan, server))
    finally:
        await common.drop_database(url, BENCH_DATABASE)
    report(runs, plan)
    print(f"\nLoad:       {common.load_average()} at end")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="a shorter run, for a fast check")
    parser.add_argument("--workers", default="1,4,8", help="worker counts (default 1,4,8)")
    parser.add_argument("--scopes", type=int, help="agents (user scopes)")
    parser.add_argument("--rate", type=float, help="turns enqueued per second")
    parser.add_argument("--seconds", type=float, help="how long turns arrive")
    parser.add_argument("--drain", type=float, help="longest wait for the queue to empty")
    parser.add_argument("--latency", type=float, help="seconds per model call (default 0.3)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    given = {
        name: getattr(args, name)
        for name in ("scopes", "rate", "seconds", "drain", "latency")
        if getattr(args, name) is not None
    }
    plan = Plan(**{**plan.__dict__, **given})
    counts = [int(n) for n in args.workers.split(",")]
    started = time.perf_counter()
    with common.postgres_server(args.database_url) as url:
        asyncio.run(bench(url, args.database_url is None, plan, counts))
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
