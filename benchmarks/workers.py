"""Many-workers benchmark: memory generation with 1, 4 and 8 worker processes on one database,
fed by agents' turns at a steady rate, with a model that takes realistic time to answer; with
`--replica`, the same again with a read replica serving the agents' reads.

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
  DB CPU per job       CPU time of every PostgreSQL process of the primary (backends included,
                       the turns' statements too) during the run, divided by the jobs completed;
                       and the same total per turn; needs the server on this machine (psutil)
  replica CPU          the standby's CPU time in the run (replay included) per turn
  retrieval            the agents' `retrieve_memories` latency, p50 and p95, as a turn sees it
  primary re-reads     `get_session` calls the replica could not answer yet (the agent's last
                       append had not replayed there) and the primary answered

The turns: `--scopes` agents (one user scope each), a job every 1/`--rate` seconds for
`--seconds` seconds, 80% of them for a scope drawn uniformly (most scopes see one job) and 20%
for one of 10 busy scopes (many jobs of one scope queued at once: what the lease serialises).
Each turn does against the database what an ADK Runner turn with the memory-context plugin and
a generation trigger does: reads the agent's session (`get_session`; the agent's first turn
creates it), appends the user's message, retrieves the memories relevant to it
(`retrieve_memories`, top 10, as `MemoryContextCallback` does), appends the reply, and enqueues
generation from the turn's two events (`add_events_to_memory`, extraction mode: one insert).
One agent's turns run one after another, different agents' concurrently. The user states a
hobby and a city, tagged with the job, so the model can tell which job each call serves. No
memories are seeded: what a turn retrieves is what its agent's earlier generations stored (most
agents are new, the busy ones accumulate dozens).

With `--replica` every worker count runs twice, on the primary alone and with a hot standby of
the embedded server (`adk_memory.db.standby.temporary_standby`; or `--read-url`, a replica of
`--database-url`) as the agents' services' `read_url`: their session reads and retrievals go
there. The workers always use the primary: consolidation must see the scope's latest memories
(a replica a moment behind would let a generation duplicate or miss the memory the previous
job of the scope just wrote), and the queue's claims and leases are writes.

The model: `generation.FakeModel` (extraction returns the 2 stated facts, consolidation creates
each new one) behind `asyncio.sleep(--latency)` per call, 0.3 s by default; the embedder is
`HashEmbedder` (64 dimensions). Each worker is a separate process (`multiprocessing`, spawn)
running the package's own worker loop (`PostgresMemoryService.make_worker`) with that model.
After the arrival window the workers drain the queue for at most `--drain` seconds.

With no `--database-url` the embedded PostgreSQL is started in a temporary data directory; the
script works in a fresh database (`adk_memory_bench_workers`) it drops at the end.

    python benchmarks/workers.py [--database-url URL [--read-url URL]] [--quick] [--replica]
                                 [--workers 1,4,8]

Interrupted (Ctrl-C, SIGTERM), it stops its worker processes and the servers it started.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import random
import re
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from multiprocessing.context import SpawnProcess
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event as StopEvent
from typing import Any

import _common as common
import asyncpg
import psutil
from _common import ms, percentile, progress, table
from generation import APP, EMBEDDING_DIMENSIONS, FakeModel, _request_text
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions.session import Session
from google.genai import types
from read_replica import Counting
from sqlalchemy.engine import make_url

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.db import normalise_url
from adk_memory.db.standby import temporary_standby
from adk_memory.testing import HashEmbedder, ScriptedLlm

BENCH_DATABASE = "adk_memory_bench_workers"
WARM_UP_SCOPE = 90_000
"""Warm-up jobs are for agents from this number on (never among the measured ones)."""
WARM_UP_INDEX = 10_000_000
BUSY_SCOPES = 10
BUSY_SHARE = 0.2
POLL_SECONDS = 0.1
TOP_K = 10
"""Memories a turn retrieves (`MemoryContextCallback`'s default)."""
READY_TIMEOUT = 300.0
"""Longest wait for a worker process to start and warm up (it failed, if longer)."""
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
QUICK = Plan(scopes=2_000, rate=10.0, seconds=10.0, drain=8.0)


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
    warm_up = (model.calls.total, model.calls.extraction)
    out.put(("ready", None))
    worker.start()
    await asyncio.to_thread(stop.wait)
    await worker.stop()
    await service.close()
    calls = (model.calls.total - warm_up[0], model.calls.extraction - warm_up[1])
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


class Agents:
    """The agents' side of the turns, in the main process: their session and memory services
    (reading from the replica when given one) and what their turns measured."""

    def __init__(self, url: str, read_url: str | None, schema: str, latency: float) -> None:
        self.url, self.schema = url, schema
        self.sessions = PostgresSessionService(url, schema=schema, read_url=read_url)
        self.memory = PostgresMemoryService(
            url,
            schema=schema,
            llm=SlowModel(latency).llm,  # extraction mode: turns only enqueue
            embedder=HashEmbedder(EMBEDDING_DIMENSIONS),
            run_worker=False,
            read_url=read_url,
        )
        self._turns: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.enqueued_at: dict[str, float] = {}
        self.retrievals: list[float] = []
        self.retrieved = 0

    async def warm_up(self) -> None:
        """Both services' schemas migrated and their pools (and the replica's) opened."""
        scope = {"app_name": APP, "user_id": "warm-up"}
        await self.memory.retrieve_memories(scope, search_query="warm up", top_k=TOP_K)
        await self.sessions.get_session(app_name=APP, user_id="warm-up", session_id="none")

    async def turn(self, tag: str, job: Session) -> None:
        """One turn of agent `job.user_id`, saying what `job`'s events say, after its previous
        turn; records when its generation was enqueued and how long retrieval took."""
        async with self._turns[job.user_id]:
            session_id = f"session-{job.user_id}"
            session = await self.sessions.get_session(
                app_name=APP, user_id=job.user_id, session_id=session_id
            )
            if session is None:
                session = await self.sessions.create_session(
                    app_name=APP, user_id=job.user_id, session_id=session_id
                )
            now = time.time()
            said, reply = (
                e.model_copy(update={"timestamp": now + n / 1000}) for n, e in enumerate(job.events)
            )
            await self.sessions.append_event(session, said)
            query = (
                "".join(part.text or "" for part in said.content.parts or ())
                if said.content
                else ""
            )
            started = time.perf_counter()
            found = await self.memory.retrieve_memories(
                {"app_name": APP, "user_id": job.user_id}, search_query=query, top_k=TOP_K
            )
            self.retrievals.append(time.perf_counter() - started)
            self.retrieved += len(found)
            await self.sessions.append_event(session, reply)
            await self.memory.add_events_to_memory(
                app_name=APP, user_id=job.user_id, events=[said, reply], session_id=session_id
            )
            self.enqueued_at[tag] = time.time()

    async def close(self) -> None:
        await self.memory.close()
        await self.sessions.close()


@dataclass
class Run:
    """What one worker count achieved, in one setup."""

    setup: str
    workers: int
    enqueued: int
    done: int = 0
    elapsed: float = 0.0
    waits: list[float] = field(default_factory=list)
    overlaps: int = 0
    model_calls: int = 0
    extractions: int = 0
    failed: int = 0
    db_cpu: list[float] = field(default_factory=list)
    """The primary's CPU seconds in the run, and of those its WAL sender's ([]: not measured)."""
    replica_cpu: list[float] = field(default_factory=list)
    """The replica's CPU seconds in the run, and of those its replay's."""
    retrievals: list[float] = field(default_factory=list)
    retrieved: int = 0
    primary_reads: int = 0


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


REPLICATION = ("walsender", "walreceiver", "startup")
"""A server process doing replication, by its title: streaming WAL on the primary (walsender),
receiving and replaying it on the standby (walreceiver, startup)."""


def server_cpu(server: psutil.Process) -> tuple[float, float]:
    """CPU seconds used so far by the server: the postmaster, the processes it has reaped and
    those still running (backends, autovacuum, checkpointer, ...); and how many of them its
    replication processes used."""
    times = server.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    replication = 0.0
    for child in server.children():
        try:
            own = child.cpu_times()
            title = " ".join(child.cmdline())
        except psutil.Error:  # it just exited: counted in children_* from now on
            continue
        total += own.user + own.system
        if any(f"postgres: {kind}" in title for kind in REPLICATION):
            replication += own.user + own.system
    return total, replication


def cpu_since(server: psutil.Process | None, before: tuple[float, float] | None) -> list[float]:
    """`server_cpu` now less `before` ([] when the server is not on this machine)."""
    if server is None or before is None:
        return []
    return [now - then for now, then in zip(server_cpu(server), before, strict=True)]


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


@contextmanager
def worker_processes(
    workers: int, url: str, schema: str, latency: float
) -> Iterator[tuple[list[SpawnProcess], Queue[Any], StopEvent]]:
    """`workers` worker processes on `schema` (started; each says "ready" on the queue once
    warm), the queue they report on and the event that stops them. However the block ends,
    they are told to stop, and those still running after a few seconds are terminated."""
    context = multiprocessing.get_context("spawn")
    out: Queue[Any] = context.Queue()
    stop = context.Event()
    processes = [
        context.Process(target=_worker_process, args=(number, url, schema, latency, out, stop))
        for number in range(workers)
    ]
    try:
        for process in processes:
            process.start()
        yield processes, out, stop
    finally:
        stop.set()
        for process in processes:
            if process.pid is not None:
                process.join(timeout=10)
            if process.is_alive():
                process.terminate()
                process.join()


async def run_workers(
    url: str,
    read_url: str | None,
    workers: int,
    plan: Plan,
    servers: tuple[psutil.Process | None, psutil.Process | None],
) -> Run:
    """Start `workers` processes on a fresh schema, feed them the agents' turns (reading from
    `read_url` when given), drain, measure. `servers`: the primary's and the replica's main
    processes, when on this machine."""
    setup = "primary + replica" if read_url else "primary only"
    schema = f"bench_workers_{workers}" + ("_replica" if read_url else "")
    agents = Agents(url, read_url, schema, plan.latency)
    try:
        await agents.warm_up()
        with worker_processes(workers, url, schema, plan.latency) as (processes, out, stop):
            return await _measure(agents, setup, workers, plan, servers, processes, out, stop)
    finally:
        await agents.close()


async def _measure(
    agents: Agents,
    setup: str,
    workers: int,
    plan: Plan,
    servers: tuple[psutil.Process | None, psutil.Process | None],
    processes: list[SpawnProcess],
    out: Queue[Any],
    stop: StopEvent,
) -> Run:
    """The run itself, once the worker processes started: see `run_workers`."""
    schema = agents.schema
    jobs = arrivals(plan)
    progress(f"{setup}, {workers} worker(s): starting processes, one warm-up generation each")
    for _ in processes:
        await asyncio.to_thread(out.get, timeout=READY_TIMEOUT)
    conn = await asyncpg.connect(common.asyncpg_dsn(agents.url))
    try:
        warm_ups = (await count_jobs(conn, schema)).get("done", 0)
        run = Run(setup, workers, len(jobs))
        primary, replica = servers
        cpu_before = [server_cpu(s) if s else None for s in servers]
        progress(f"{setup}, {workers} worker(s): {len(jobs)} turns over {plan.seconds:g} s")
        started = time.time()
        turns = []
        with Counting() as counting:
            for offset, tag, session in jobs:
                delay = started + offset - time.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                turns.append(asyncio.create_task(agents.turn(tag, session)))
            await asyncio.gather(*turns)
        deadline = time.time() + plan.drain
        while time.time() < deadline:
            if (await count_jobs(conn, schema)).get("done", 0) - warm_ups == len(jobs):
                break
            await asyncio.sleep(0.25)
        statuses = await count_jobs(conn, schema)
        run.db_cpu = cpu_since(primary, cpu_before[0])
        run.replica_cpu = cpu_since(replica, cpu_before[1])
    finally:
        await conn.close()
    stop.set()
    spans: dict[str, tuple[float, float]] = {}
    for _ in processes:
        kind, payload = await asyncio.to_thread(out.get, timeout=READY_TIMEOUT)
        while kind != "spans":
            kind, payload = await asyncio.to_thread(out.get, timeout=READY_TIMEOUT)
        their_spans, calls, failed = payload
        spans.update(their_spans)
        run.model_calls += calls[0]
        run.extractions += calls[1]
        run.failed += failed
    enqueued_at = agents.enqueued_at
    run.done = statuses.get("done", 0) - warm_ups
    spans = {tag: span for tag, span in spans.items() if tag in enqueued_at}  # no warm-ups
    ends = [end for _, end in spans.values()]
    run.elapsed = (max(ends) if ends else time.time()) - started
    run.waits = [spans[tag][0] - enqueued_at[tag] for tag in spans]
    run.overlaps = overlaps(spans)
    run.retrievals, run.retrieved = agents.retrievals, agents.retrieved
    run.primary_reads = counting.primary_reads
    return run


# ---------------------------------------------------------------------------------------------
# Report


def _per(cpu: list[float], part: int, count: int) -> str:
    """CPU seconds `cpu[part]` per item, in milliseconds ("n/a" when not measured)."""
    return "n/a" if not cpu or not count else f"{1000 * cpu[part] / count:.1f}"


REPLICA_COLUMNS = (
    "WAL sending ms/turn",
    "replica CPU ms/turn",
    "replay ms/turn",
    "primary re-reads",
)


def report(runs: Sequence[Run], plan: Plan) -> None:
    header: tuple[str, ...] = (
        "setup",
        "workers",
        "done",
        "left",
        "jobs/s",
        "model calls/job",
        "queue wait p50 s",
        "p95 s",
        "scope overlaps",
        "primary CPU ms/job",
        "ms/turn",
        "WAL sending ms/turn",
        "replica CPU ms/turn",
        "replay ms/turn",
        "retrieval p50 ms",
        "p95 ms",
        "primary re-reads",
    )
    rows: list[tuple[str, ...]] = []
    for r in runs:
        replica = r.setup != "primary only"
        rows.append(
            (
                r.setup,
                str(r.workers),
                str(r.done),
                str(r.enqueued - r.done),
                f"{r.done / r.elapsed:.1f}",
                f"{r.model_calls / max(r.done, 1):.2f}",
                f"{percentile(r.waits, 50):.2f}",
                f"{percentile(r.waits, 95):.2f}",
                str(r.overlaps),
                _per(r.db_cpu, 0, r.done),
                _per(r.db_cpu, 0, r.enqueued),
                _per(r.db_cpu, 1, r.enqueued) if replica else "-",
                _per(r.replica_cpu, 0, r.enqueued) if replica else "-",
                _per(r.replica_cpu, 1, r.enqueued) if replica else "-",
                ms(percentile(r.retrievals, 50)),
                ms(percentile(r.retrievals, 95)),
                f"{r.primary_reads} of {r.enqueued}" if replica else "-",
            )
        )
    if all(r.setup == "primary only" for r in runs):  # no replica: its columns are empty
        kept = [n for n, name in enumerate(header) if name not in REPLICA_COLUMNS]
        header = tuple(header[n] for n in kept)
        rows = [tuple(row[n] for n in kept) for row in rows]
    table(header, rows)
    turns = runs[0].enqueued
    found = sum(r.retrieved for r in runs) / sum(r.enqueued for r in runs)
    print(
        f"\n{turns} turns: {plan.rate:g} a second for {plan.seconds:g} s over {plan.scopes} "
        f"agents ({BUSY_SHARE:.0%} to {BUSY_SCOPES} busy ones), model {plan.latency:g} s per call;"
        f"\ndrained for at most {plan.drain:g} s. jobs/s = done / (end of the last model call -"
        " first turn): once\nthe workers keep up it is the offered rate. Queue wait counts "
        "the jobs that ran; `left` were\nstill queued. Primary CPU: every PostgreSQL process of "
        "the primary (workers' and turns'\nstatements, WAL sending) over the run, per job done "
        "and per turn; replica: every process\nof the standby (the agents' reads, replay). "
        f"A retrieval found {found:.1f} memories on average."
    )
    if any(r.overlaps for r in runs):
        print("\nFAIL: two workers generated for one scope at once.")
    # (a run stopped with jobs left may stop one in the middle: counted only in drained runs)
    again = sum(r.extractions - r.done for r in runs if r.done == r.enqueued)
    if again > 0:
        print(f"\nNote: {again} more extraction calls than jobs done (jobs tried again).")
    if any(r.failed for r in runs):
        print(f"\nNote: {sum(r.failed for r in runs)} tries failed (retried or dead-lettered).")


# ---------------------------------------------------------------------------------------------
# Entry point


async def bench(
    url: str, read_url: str | None, embedded: bool, plan: Plan, counts: Sequence[int]
) -> None:
    print(f"Server:     {common.server_label(url, embedded)}")
    if read_url is not None:
        replica_label = "hot standby of it" if embedded else common.server_label(read_url, False)
        print(f"Replica:    {replica_label}")
    print(
        f"Software:   Python {sys.version.split()[0]}, google-adk {metadata.version('google-adk')}"
    )
    print(f"Load:       {common.load_average()} at start")
    print(f"Plan:       {plan}\n")
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    bench_read_url = (
        make_url(read_url).set(database=BENCH_DATABASE).render_as_string(hide_password=False)
        if read_url
        else None
    )
    servers = (await postmaster(url), await postmaster(read_url) if read_url else None)
    setups = [None, bench_read_url] if bench_read_url else [None]
    runs = []
    try:
        for workers in counts:
            for setup_read_url in setups:
                runs.append(await run_workers(bench_url, setup_read_url, workers, plan, servers))
    finally:
        await common.drop_database(url, BENCH_DATABASE)
    report(runs, plan)
    print(f"\nLoad:       {common.load_average()} at end")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="a shorter run, for a fast check")
    parser.add_argument(
        "--replica",
        action="store_true",
        help="also run each worker count with a hot standby of the embedded server as read URL",
    )
    parser.add_argument(
        "--read-url", help="a replica of --database-url to run with as well (implies --replica)"
    )
    parser.add_argument("--workers", default="1,4,8", help="worker counts (default 1,4,8)")
    parser.add_argument("--scopes", type=int, help="agents (user scopes)")
    parser.add_argument("--rate", type=float, help="turns per second")
    parser.add_argument("--seconds", type=float, help="how long turns arrive")
    parser.add_argument("--drain", type=float, help="longest wait for the queue to empty")
    parser.add_argument("--latency", type=float, help="seconds per model call (default 0.3)")
    args = parser.parse_args(argv)
    if args.read_url and not args.database_url:
        parser.error("--read-url is a replica of --database-url: give both")
    if args.replica and args.database_url and not args.read_url:
        parser.error("--replica starts a standby of the embedded server: with --database-url, "
                     "give its replica as --read-url")  # fmt: skip
    return args


@contextmanager
def replica_server(primary: str, args: argparse.Namespace) -> Iterator[str | None]:
    """The read URL to run with as well: `--read-url`, a standby of the embedded `primary`
    with `--replica` (stopped and removed afterwards), or None."""
    if args.read_url:
        yield normalise_url(args.read_url)
    elif args.replica:
        with temporary_standby(primary) as standby:
            yield normalise_url(standby)
    else:
        yield None


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM: unwind like Ctrl-C, so the worker processes and servers are stopped."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _terminated)
    plan = QUICK if args.quick else FULL
    given = {
        name: getattr(args, name)
        for name in ("scopes", "rate", "seconds", "drain", "latency")
        if getattr(args, name) is not None
    }
    plan = Plan(**{**plan.__dict__, **given})
    counts = [int(n) for n in args.workers.split(",")]
    started = time.perf_counter()
    try:
        with (
            common.postgres_server(args.database_url) as url,
            replica_server(url, args) as read_url,
        ):
            asyncio.run(bench(url, read_url, args.database_url is None, plan, counts))
    except KeyboardInterrupt:
        print("Interrupted: the worker processes and the servers started are stopped.")
        return 130
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
