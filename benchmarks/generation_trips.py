"""Generation round trips: database statements, connection checkouts and model calls per
generation job, and jobs/s, for each job kind, on two trees of adk-memory back to back.

Why: the generation pipeline was redesigned to read once, decide, then write once (issue 24);
this checks that a job of each kind (session, contents, facts, procedure) makes no more round
trips to PostgreSQL and no more model calls than the code before, under the same load.

Each tree (`--before`, `--after`: a checkout of the repository) is run in a child process with
that tree first on `PYTHONPATH`, so the script itself uses public APIs only:
`PostgresMemoryService` (`generate_memories`, `learn_procedure`, `worker.run_until_idle`, its
`database`) and `adk_memory.testing` (`ScriptedLlm`, `HashEmbedder`). Statements are counted
with asyncpg's query logger (`Connection.add_query_logger`) on every connection the service's
`Database` lends (`run` and `connection`) while the worker drains the queue: the claims, the
job's reads, its write transaction (BEGIN and COMMIT included) and the final empty claim, so
the per-job figure is the whole cost of a job to the database. Checkouts are the `run` and
`connection` calls. The model is a `ScriptedLlm` whose responder answers at once and counts
calls: extraction gives two facts (one playbook for a procedure job), consolidation UPDATEs
the first memory it is shown (so the trust rule reads a history) and CREATEs the rest.

The load per kind: `--jobs` jobs over `--jobs / 2` user scopes of one app (so half the jobs
find their scope's memories as candidates; procedure jobs all consolidate into the app's
procedures), enqueued first, then drained by one worker. Each tree and kind runs in its own
schema of a fresh database (`adk_memory_bench_trips`, dropped at the end). The trees run in
turn, `--rounds` times each (before, after, before, ...), and each kind's fastest drain is
reported (statement and model-call counts do not vary between rounds).

    python benchmarks/generation_trips.py --before ../pipeline-before [--after .] [--jobs 40]
        [--rounds 3] [--verbose] [--database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import _common as common

BENCH_DATABASE = "adk_memory_bench_trips"
APP = "trips-app"
KINDS = ("session", "contents", "facts", "procedure")
_STATED = re.compile(r"I enjoy (?P<hobby>[^.]+)\. I live in (?P<city>[^.]+)\.")
_NEW_FACT = re.compile(r"^(\d+)\. \([^)]*\) (.+)$", re.MULTILINE)
_CANDIDATE = re.compile(r"^- id: (\S+) ", re.MULTILINE)
_HOBBIES = ("hiking", "jazz piano", "chess", "sailing", "pottery", "astronomy", "bouldering")
_CITIES = ("Lisbon", "Oslo", "Nairobi", "Montreal", "Kyoto", "Hobart")


@dataclass
class Figures:
    """One kind's drain on one tree."""

    jobs: int = 0
    statements: int = 0
    checkouts: int = 0
    model_calls: int = 0
    seconds: float = 0.0
    by_statement: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# The child: one tree, every kind


class FakeModel:
    """An instant generation model that counts its calls (module docstring)."""

    def __init__(self) -> None:
        from adk_memory.testing import ScriptedLlm

        self.calls = 0
        self.llm = ScriptedLlm(responder=self._respond)

    def _respond(self, request: Any) -> str:
        self.llm.requests.clear()
        self.calls += 1
        schema = request.config.response_schema if request.config else None
        fields = getattr(schema, "model_fields", {})
        text = "\n".join(p.text for c in request.contents for p in c.parts or () if p.text)
        if "facts" in fields:
            stated = _STATED.search(text)
            hobby, city = (stated["hobby"], stated["city"]) if stated else ("tea", "Rome")
            facts = [f"The user enjoys {hobby}.", f"The user lives in {city}."]
            return json.dumps({"facts": [{"fact": f, "topic": "USER_PREFERENCES"} for f in facts]})
        if "playbooks" in fields:
            steps = ["Ask for the booking reference", "Search flights on the same day first"]
            playbook = {"task": "Rebook a cancelled flight", "steps": steps, "pitfalls": []}
            return json.dumps({"playbooks": [playbook]})
        if "operations" in fields:
            return self._consolidate(text)
        raise AssertionError(f"unexpected model request (response schema {schema!r})")

    def _consolidate(self, prompt: str) -> str:
        new_facts = _NEW_FACT.findall(prompt.split("## Existing memories")[0])
        candidates = _CANDIDATE.findall(prompt)
        operations = []
        for i, (number, text) in enumerate(new_facts):
            target = candidates[0] if i == 0 and candidates else None
            action = "UPDATE" if target else "CREATE"
            decision = {"action": action, "fact_numbers": [int(number)], "fact": text}
            operations.append({**decision, "target_id": target})
        return json.dumps({"operations": operations})


class Counter:
    """Counts the statements and checkouts of one `Database` while `on`."""

    def __init__(self, db: Any) -> None:
        self.on = False
        self.statements = 0
        self.checkouts = 0
        self.by_statement: dict[str, int] = {}
        self._logged: set[int] = set()
        run, connection = db.run, db.connection

        async def counted_run(statement: Callable[[Any], Awaitable[Any]], **options: Any) -> Any:
            self.checkouts += self.on

            async def logged(conn: Any) -> Any:
                async with self._logging(conn):
                    return await statement(conn)

            return await run(logged, **options)

        @asynccontextmanager
        async def counted_connection(**options: Any) -> AsyncIterator[Any]:
            self.checkouts += self.on
            async with connection(**options) as conn, self._logging(conn):
                yield conn

        db.run, db.connection = counted_run, counted_connection

    @asynccontextmanager
    async def _logging(self, conn: Any) -> AsyncIterator[None]:
        if id(conn) in self._logged:  # `run` lent it through `connection`: counted once
            yield
            return
        self._logged.add(id(conn))
        conn.add_query_logger(self._log)
        try:
            yield
        finally:
            conn.remove_query_logger(self._log)
            self._logged.discard(id(conn))

    def _log(self, record: Any) -> None:
        if self.on:
            self.statements += 1
            first = " ".join(record.query.split())[:48]
            self.by_statement[first] = self.by_statement.get(first, 0) + 1


def _session(index: int, user: str) -> Any:
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session
    from google.genai import types

    hobby, city = _HOBBIES[index % len(_HOBBIES)], _CITIES[index % len(_CITIES)]
    lines = [
        ("user", f"Hi! I enjoy {hobby}. I live in {city}. My flight was cancelled."),
        ("model", "I rebooked you on the next flight the same day."),
    ]
    events = [
        Event(
            author="user" if role == "user" else "agent",
            invocation_id=f"inv{index}",
            timestamp=1_700_000_000.0 + index * 60 + n,
            content=types.Content(role=role, parts=[types.Part(text=text)]),
        )
        for n, (role, text) in enumerate(lines)
    ]
    return Session(id=f"s{index}", app_name=APP, user_id=user, events=events)


async def _enqueue(service: Any, kind: str, index: int, user: str) -> None:
    session = _session(index, user)
    scope = {"app_name": APP, "user_id": user}
    if kind == "session":
        await service.generate_memories(session=session)
    elif kind == "contents":
        contents = [e.content for e in session.events]
        await service.generate_memories(scope=scope, contents=contents)
    elif kind == "facts":
        hobby = _HOBBIES[index % len(_HOBBIES)]
        await service.generate_memories(scope=scope, facts=[f"The user enjoys {hobby}."])
    else:
        await service.learn_procedure(session, outcome="rebooked at no cost")


async def _measure(engine: Any, kind: str, jobs: int) -> Figures:
    from adk_memory import PostgresMemoryService
    from adk_memory.testing import HashEmbedder

    model = FakeModel()
    service = PostgresMemoryService(
        engine=engine,
        schema=f"trips_{kind}",
        llm=model.llm,
        embedder=HashEmbedder(64),
        run_worker=False,
    )
    try:
        for i in range(jobs):
            await _enqueue(service, kind, i, f"u{i % max(jobs // 2, 1)}")
        counter = Counter(service.database)
        model.calls = 0
        counter.on = True
        started = time.perf_counter()
        ran = await service.worker.run_until_idle()
        seconds = time.perf_counter() - started
        counter.on = False
        common.expect(ran == jobs, f"{kind}: {ran} of {jobs} jobs ran")
        common.expect(service.worker.stats.failed == 0, f"{kind}: {service.worker.stats}")
        return Figures(
            jobs=ran,
            statements=counter.statements,
            checkouts=counter.checkouts,
            model_calls=model.calls,
            seconds=seconds,
            by_statement=counter.by_statement,
        )
    finally:
        await service.close()


async def child(url: str, jobs: int) -> None:
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url, pool_size=4)
    try:
        found = {kind: asdict(await _measure(engine, kind, jobs)) for kind in KINDS}
    finally:
        await engine.dispose()
    print(json.dumps(found))


# ---------------------------------------------------------------------------------------------
# The parent: both trees, back to back


def _run_tree(tree: Path, url: str, jobs: int) -> dict[str, Figures]:
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    command = [sys.executable, __file__, "--child", url, "--jobs", str(jobs)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{tree}: {done.stderr[-3000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {kind: Figures(**figures) for kind, figures in found.items()}


def _ratio(after: float, before: float) -> str:
    return f"{after / before:.2f}" if before else "-"


def report(before: dict[str, Figures], after: dict[str, Figures], verbose: bool) -> None:
    rows = []
    for kind in KINDS:
        b, a = before[kind], after[kind]
        rows.append(
            [
                kind,
                f"{b.statements / b.jobs:.2f}",
                f"{a.statements / a.jobs:.2f}",
                _ratio(a.statements, b.statements),
                f"{b.checkouts / b.jobs:.2f}",
                f"{a.checkouts / a.jobs:.2f}",
                f"{b.model_calls / b.jobs:.2f}",
                f"{a.model_calls / a.jobs:.2f}",
                f"{b.jobs / b.seconds:.1f}",
                f"{a.jobs / a.seconds:.1f}",
                _ratio(a.jobs / a.seconds, b.jobs / b.seconds),
            ]
        )
    header = ["kind", "stmts before", "after", "ratio", "checkouts before", "after"]
    header += ["model calls before", "after", "jobs/s before", "after", "ratio"]
    common.table(header, rows)
    verdict = all(
        after[k].statements <= before[k].statements
        and after[k].model_calls <= before[k].model_calls
        for k in KINDS
    )
    print(f"\nRound trips and model calls equal or fewer after: {'PASS' if verdict else 'MISS'}")
    if verbose:
        for label, found in (("before", before), ("after", after)):
            for kind in KINDS:
                print(f"\n{label} {kind}: statements by their first words")
                for text, n in sorted(found[kind].by_statement.items(), key=lambda x: -x[1]):
                    print(f"  {n:5d}  {text}")


async def _fresh(url: str) -> str:
    return await common.fresh_database(url, BENCH_DATABASE)


def main(argv: list[str] | None = None) -> int:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--before", type=Path, help="the tree before (a repository checkout)")
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--jobs", type=int, default=40, help="jobs per kind (default 40)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating runs of each tree; the fastest kept"
    )
    parser.add_argument("--verbose", action="store_true", help="statements by their text")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        asyncio.run(child(args.child, args.jobs))
        return 0
    if args.before is None:
        parser.error("--before is required")
    with common.postgres_server(args.database_url) as url:
        print(f"Server:     {common.server_label(url, args.database_url is None)}")
        print(f"Load:       {common.load_average()} at start")
        print(f"Jobs:       {args.jobs} per kind over {max(args.jobs // 2, 1)} user scopes")
        print(f"Before:     {args.before}\nAfter:      {args.after}\n")
        best: list[dict[str, Figures]] = [{}, {}]
        for n in range(args.rounds):
            for side, tree in enumerate((args.before, args.after)):
                common.progress(f"round {n + 1}/{args.rounds}: {tree}")
                found = _run_tree(tree, asyncio.run(_fresh(url)), args.jobs)
                for kind, figures in found.items():
                    kept = best[side].get(kind)
                    if kept is None or figures.seconds < kept.seconds:
                        best[side][kind] = figures
        asyncio.run(common.drop_database(url, BENCH_DATABASE))
        report(best[0], best[1], args.verbose)
        print(f"\nLoad:       {common.load_average()} at end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
