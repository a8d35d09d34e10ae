"""Read-replica benchmark: where an agent's turns put their statements with and without a
read replica, on an embedded primary and a real hot standby streaming from it.

Why: a replica is worth adding when it takes reads off the primary without making turns
slower or stale. Each turn here is a real ADK Runner turn (a scripted model, instant) on a
`configure()` stack: the Runner reads the session, the memory-context plugin searches the
user's memories, the user's message and the model's reply are appended. The same turns run
once on the primary alone and once with the standby as read URL, and the script reports:

  statements per turn on the primary, and on the standby  (from pg_stat_database: every
                                                           statement is its own transaction)
  turn latency p50 / p95                                   (wall clock, per turn)
  session reads answered by the primary                    (the replica had not replayed the
                                                           turn's own last append yet)

The replica's lag on one machine is sub-millisecond, so the last figure is low here; on a
real replica a few milliseconds behind, more of the reads right after an append go to the
primary (and none is ever stale). Latency on a shared 2-core machine is noise-prone: the
statement split is the figure that carries over to real servers.

    python benchmarks/read_replica.py [--turns 300] [--users 20]

With no options the embedded PostgreSQL is started in a temporary data directory, and a hot
standby of it (`adk_memory.db.standby.temporary_standby`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import _common as common
import asyncpg
from _common import asyncpg_dsn, ms, percentile, progress, table
from google.adk.agents.llm_agent import LlmAgent
from google.genai import types

from adk_memory import configure
from adk_memory.db import normalise_url
from adk_memory.db import standby as standby_servers
from adk_memory.sessions import service as session_module
from adk_memory.testing import ScriptedLlm

APP = "bench_app"
FACTS = ("likes green tea", "plays the cello", "lives in Lyon", "has a dog called Max")


async def statements(url: str) -> int:
    """Transactions the server has counted in the database so far (statements, here)."""
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        await conn.execute("SELECT pg_stat_force_next_flush()")
        value = await conn.fetchval(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database "
            "WHERE datname = current_database()"
        )
    finally:
        await conn.close()
    return int(value)


class Counting:
    """Counts `get_session` calls whose replica answer was stale (re-read from the primary),
    by wrapping the session service's freshness check for the run."""

    def __init__(self) -> None:
        self.primary_reads = 0
        self._original = session_module.WrittenRevisions.stale

    def __enter__(self) -> Counting:
        original = self._original

        def stale(revisions: Any, *args: Any) -> bool:
            answer = original(revisions, *args)
            self.primary_reads += answer
            return answer

        session_module.WrittenRevisions.stale = stale  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        session_module.WrittenRevisions.stale = self._original  # type: ignore[method-assign]


async def run(primary: str, replica: str | None, turns: int, users: int, schema: str) -> dict:
    """`turns` Runner turns spread over `users` users' sessions; the figures."""
    stack = configure(
        primary,
        read_url=replica,
        schema=schema,
        model=ScriptedLlm(),
        run_worker=False,
        triggers=None,
        environ={},
    )
    agent = LlmAgent(
        name="assistant", model=ScriptedLlm(responder=lambda request: "Noted."), instruction="Hi"
    )
    runner = stack.runner(agent, app_name=APP)
    sessions = []
    for n in range(users):
        scope = {"app_name": APP, "user_id": f"user-{n}"}
        for fact in FACTS:
            await stack.memory_service.create_memory(f"The user {fact}.", scope)
        session = await stack.session_service.create_session(app_name=APP, user_id=f"user-{n}")
        sessions.append(session)
    await asyncio.sleep(1.5)  # the setup's statistics flushed before the count starts
    before = (await statements(primary), await statements(replica) if replica else 0)
    latencies = []
    with Counting() as counting:
        for turn in range(turns):
            session = sessions[turn % users]
            message = types.Content(role="user", parts=[types.Part(text="What do I like?")])
            start = time.perf_counter()
            async for _ in runner.run_async(
                user_id=session.user_id, session_id=session.id, new_message=message
            ):
                pass
            latencies.append(time.perf_counter() - start)
    await stack.close()
    await asyncio.sleep(1.5)  # closed connections' statistics are flushed
    after = (await statements(primary), await statements(replica) if replica else 0)
    return {
        "primary": (after[0] - before[0] - 2) / turns,  # less the two counting queries
        "replica": (after[1] - before[1] - 2) / turns if replica else 0.0,
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "primary_reads": counting.primary_reads,
    }


async def bench(turns: int, users: int) -> None:
    with (
        common.postgres_server(None, prefix="adk-memory-bench-primary-") as primary,
        standby_servers.temporary_standby(primary) as replica,
    ):
        progress("primary only")
        alone = await run(primary, None, turns, users, "bench_alone")
        progress("primary + standby")
        paired = await run(primary, normalise_url(replica), turns, users, "bench_paired")
    print(f"{turns} Runner turns over {users} users' sessions; load {common.load_average()}")
    table(
        [
            "setup",
            "primary stmts/turn",
            "standby stmts/turn",
            "turn p50 ms",
            "turn p95 ms",
            "session reads from primary",
        ],
        [
            [
                name,
                f"{r['primary']:.2f}",
                f"{r['replica']:.2f}",
                ms(r["p50"]),
                ms(r["p95"]),
                "-" if name == "primary only" else f"{r['primary_reads']} of {turns}",
            ]
            for name, r in (("primary only", alone), ("primary + standby", paired))
        ],
    )
    share = paired["replica"] / (paired["replica"] + paired["primary"])
    print(f"\nThe standby served {share:.0%} of a turn's statements; the primary's load per turn "
          f"fell from {alone['primary']:.2f} to {paired['primary']:.2f} statements.")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--users", type=int, default=20)
    args = parser.parse_args(argv)
    asyncio.run(bench(args.turns, args.users))
    return 0


if __name__ == "__main__":
    sys.exit(main())
