"""IngestEvents latency: one `ingest_events` request (a few new events, the rest sent again, as
ADK's `add_session_to_memory` sends the whole session each turn) against a stream that already
holds many processed event ids.

Why: a stream keeps every event id it ever had (deduplication), so its history only grows; a
request must cost what its own events cost, not what the stream's history does. Each history
size gets a fresh scope whose stream is filled with `--history` processed events (flushed by
`force_flush`, enqueued generations left in the queue: no worker, no model call), then
`--requests` requests each send the last 20 events again plus 2 new ones under an
`event_count` rule of 4 (every other request flushes), timed one by one. The stream's table
is vacuumed and analysed after the fill, as autovacuum would have done by then in a running
deployment (`--no-vacuum`: right after the fill, dead index entries and no statistics).

    python benchmarks/ingest_events.py [--database-url URL] [--history 100,10000,100000]
        [--requests 50] [--no-vacuum]

Prints p50 / p95 per history size, and the machine's load.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import _common as common
from google.adk.events import Event
from google.genai import types

from adk_memory import PostgresMemoryService
from adk_memory.config import GenerationTrigger
from adk_memory.testing import ScriptedLlm

BENCH_DATABASE = "adk_memory_bench_ingest_events"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
BATCH = 1000


def event(n: int) -> Event:
    content = types.Content(role="user", parts=[types.Part(text=f"Turn {n} of the chat.")])
    return Event(id=f"e{n}", author="user", timestamp=T0.timestamp() + n, content=content)


async def fill(service: PostgresMemoryService, scope: dict[str, str], history: int) -> None:
    """`history` processed events in the scope's stream, `BATCH` a request."""
    for start in range(0, history, BATCH):
        batch = [event(n) for n in range(start, min(history, start + BATCH))]
        await service.ingest_events(scope, batch, force_flush=True, now=T0)


async def measure(url: str, sizes: list[int], requests: int, vacuum: bool) -> list[list[str]]:
    service = PostgresMemoryService(url, llm=ScriptedLlm(), run_worker=False)
    rule = GenerationTrigger(event_count=4)
    rows = []
    try:
        for history in sizes:
            scope = {"app_name": "bench", "user_id": f"h{history}"}
            common.progress(f"history {history:,}: filling")
            await fill(service, scope, history)
            if vacuum:  # what autovacuum does to a stream's table in a running deployment
                table = f"{service.database.schema}.memory_ingest_events"
                await common.admin(url, f"VACUUM ANALYZE {table}")
            samples = []
            for i in range(requests):
                top = history + 2 * (i + 1)
                events = [event(n) for n in range(max(0, top - 22), top)]
                now = T0 + timedelta(minutes=i)
                took, result = await common.timed(
                    service.ingest_events(scope, events, trigger=rule, now=now)
                )
                common.expect(result.ingested == 2, "two new events a request")
                samples.append(took)
            rows.append(
                [
                    f"{history:,}",
                    common.ms(common.percentile(samples, 50)),
                    common.ms(common.percentile(samples, 95)),
                ]
            )
    finally:
        await service.close()
    return rows


async def main() -> None:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--history", default="100,10000,100000")
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--no-vacuum", action="store_true", help="measure before autovacuum")
    args = parser.parse_args()
    sizes = [int(s) for s in args.history.split(",")]
    with common.postgres_server(args.database_url) as server:
        url = await common.fresh_database(server, BENCH_DATABASE)
        try:
            rows = await measure(url, sizes, args.requests, not args.no_vacuum)
        finally:
            await common.drop_database(server, BENCH_DATABASE)
        print(f"server: {common.server_label(server, args.database_url is None)}")
    print(f"load: {common.load_average()}")
    common.table(["stream history", "p50 ms", "p95 ms"], rows)


if __name__ == "__main__":
    asyncio.run(main())
