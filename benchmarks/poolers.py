"""Connection-pooler benchmark: what `?pooler=transaction` costs a session service's calls, and
what a PgBouncer in between costs, in transaction and in session mode.

Why: behind a transaction-mode pooler every statement is sent unnamed, parsed and planned on
each call (`statement_cache_size=0`), where a direct connection reuses a prepared statement;
and a pooler adds a hop. This script measures both on the same server in one run, per call of
`PostgresSessionService` (p50 and p95 in milliseconds, one caller, on a session that starts
with 20 events and grows by one per `append_event`):

  get_session     read the session with all its events
  append_event    append one user message
  create_session  create an empty session

Setups (interleaved in rounds whose order alternates, so background noise falls on all alike):
  direct                the server itself, prepared statements cached
  direct, unnamed       the server itself with `?pooler=transaction` (the statements' cost alone)
  pgbouncer session     Debian's PgBouncer in session mode, `?pooler=session`
  pgbouncer transaction PgBouncer in transaction mode, `?pooler=transaction`
The PgBouncer rows need `pgbouncer` installed (`apt-get install pgbouncer`); without it they are
left out. With no `--database-url` the embedded PostgreSQL is started in a temporary directory.

    python benchmarks/poolers.py [--database-url URL] [--quick]
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import _common as common
from _common import ms, percentile, table
from telemetry_overhead import said  # a user message, as that benchmark appends

from adk_memory import PostgresSessionService

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from pgbouncer_server import BINARY, pgbouncer

EVENTS = 20
OPERATIONS = ("get_session", "append_event", "create_session")


async def one_round(url: str, schema: str, calls: int) -> dict[str, list[float]]:
    """`calls` timed calls of each operation on a service built from `url` (after warm-up)."""
    service = PostgresSessionService(url, schema=schema)
    times: dict[str, list[float]] = {name: [] for name in OPERATIONS}
    try:
        session = await service.create_session(app_name="bench", user_id="u")
        for n in range(EVENTS):
            await service.append_event(session, said(n))
        for n in range(calls + 5):
            get = service.get_session(app_name="bench", user_id="u", session_id=session.id)
            took, _ = await common.timed(get)
            if n >= 5:
                times["get_session"].append(took)
            took, _ = await common.timed(service.append_event(session, said(EVENTS + n)))
            if n >= 5:
                times["append_event"].append(took)
            took, _ = await common.timed(service.create_session(app_name="bench", user_id="v"))
            if n >= 5:
                times["create_session"].append(took)
    finally:
        await service.close()
    return times


def setups(url: str, stack: ExitStack) -> Iterator[tuple[str, str]]:
    """Each setup's name and URL (PgBouncer started in `stack` when installed)."""
    yield "direct", url
    yield "direct, unnamed", f"{url}{'&' if '?' in url else '?'}pooler=transaction"
    if BINARY is None:
        common.progress("pgbouncer is not installed: its rows are left out")
        return
    for mode in ("session", "transaction"):
        pooled = stack.enter_context(pgbouncer(url, mode, pool_size=20))
        yield f"pgbouncer {mode}", f"{pooled}?pooler={mode}"


def main() -> None:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer calls, for a fast check")
    args = parser.parse_args()
    rounds, calls = (2, 100) if args.quick else (6, 300)
    with common.postgres_server(args.database_url) as url, ExitStack() as stack:
        found = list(setups(url, stack))
        samples: dict[str, dict[str, list[float]]] = {
            name: {op: [] for op in OPERATIONS} for name, _ in found
        }
        for r in range(rounds):
            for n, (name, setup_url) in enumerate(found if r % 2 == 0 else found[::-1]):
                common.progress(f"round {r + 1}/{rounds}: {name}")
                schema = f"bench_poolers_{r}_{n}"
                got = asyncio.run(one_round(setup_url, schema, calls))
                for op in OPERATIONS:
                    samples[name][op].extend(got[op])
        rows = []
        for op in OPERATIONS:
            base = percentile(samples["direct"][op], 50)
            for name, _ in found:
                p50 = percentile(samples[name][op], 50)
                p95 = percentile(samples[name][op], 95)
                rows.append([op if name == "direct" else "", name, ms(p50), ms(p95),
                             f"{p50 / base:.2f}x"])  # fmt: skip
        table(["operation", "setup", "p50", "p95", "p50 vs direct"], rows)
        print(f"\nTimes in milliseconds per call, {rounds * calls} calls per cell.")
        print(f"Load: {common.load_average()} at end")


if __name__ == "__main__":
    main()
