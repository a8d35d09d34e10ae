"""Memory Bank's IngestEvents (`ingest_events`), against the semantics its SDK types document
(`IngestionDirectContentsSourceEvent.event_id`: an event ingested again is deduplicated;
`MemoryGenerationTriggerConfig.generation_rule`: event count, fixed interval, idle duration,
overlap; no rule: flushed at once; `IngestEventsConfig.force_flush`).

The database is the real test server; the worker is off, so each flush is read as the
generation job it enqueued (its contents, in order). Time is passed as `now`: no clock.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from google.adk.events import Event
from google.genai import types
from rls_checks import for_all

from adk_memory import PostgresMemoryService
from adk_memory.config import GenerationConfig, GenerationTrigger, MemoryBankConfig
from adk_memory.errors import InputValidationError
from adk_memory.testing import ScriptedLlm

ALICE = {"app_name": "shop", "user_id": "alice"}
BOB = {"app_name": "shop", "user_id": "bob"}
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def said(event_id: str, text: str, minute: float = 0) -> Event:
    return Event(
        id=event_id,
        author="user",
        timestamp=(T0 + timedelta(minutes=minute)).timestamp(),
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


@pytest.fixture
async def service(make_memory_service: Any) -> AsyncIterator[PostgresMemoryService]:
    built: PostgresMemoryService = make_memory_service(llm=ScriptedLlm(), run_worker=False)
    yield built
    await built.close()


async def flushed(service: PostgresMemoryService) -> list[list[str]]:
    """The texts each queued generation job was given, oldest job first."""
    schema = service.database.schema
    statement = (
        f"SELECT payload FROM {schema}.memory_jobs WHERE {for_all(schema)} ORDER BY create_time"
    )
    rows = await service.database.run(lambda conn: conn.fetch(statement))
    payloads = [json.loads(r[0]) if isinstance(r[0], str) else r[0] for r in rows]
    return [[c["parts"][0]["text"] for c in p["contents"]] for p in payloads]


async def test_event_count_dedup_and_overlap(service: PostgresMemoryService) -> None:
    rule = GenerationTrigger(event_count=2, overlap_event_count=1)
    first = await service.ingest_events(ALICE, [said("e1", "a")], trigger=rule, now=at(0))
    assert (first.ingested, first.waiting, first.operation) == (1, 1, None)

    # e1 again is the same event: one new, one duplicate, and the count of 2 flushes.
    second = await service.ingest_events(ALICE, [said("e1", "a"), said("e2", "b", 1)], now=at(1))
    assert (second.ingested, second.duplicates, second.waiting) == (1, 1, 0)
    assert second.operation is not None and second.operation.scope == ALICE
    assert await flushed(service) == [["a", "b"]]

    # The rule stays the stream's; the next window opens with the last processed event.
    third = await service.ingest_events(
        ALICE, [said("e3", "c", 2), said("e2", "b", 1), said("e4", "d", 3)], now=at(3)
    )
    assert (third.ingested, third.duplicates) == (2, 1)
    assert await flushed(service) == [["a", "b"], ["b", "c", "d"]]

    # Another stream of the scope, and the same stream id of another scope, are their own.
    other = await service.ingest_events(
        ALICE, [said("e1", "x"), said("e1", "x")], stream_id="s2", trigger=rule
    )
    assert (other.ingested, other.duplicates, other.waiting) == (1, 1, 1)
    bob = await service.ingest_events(BOB, [said("e5", "y")], trigger=rule)
    assert (bob.ingested, bob.waiting) == (1, 1)


async def test_time_rules_are_flushed_by_the_sweep(service: PostgresMemoryService) -> None:
    idle = {"generation_rule": {"idle_duration": "300s"}}  # Memory Bank's shape
    await service.ingest_events(ALICE, [said("e1", "a")], trigger=idle, now=at(0))
    await service.ingest_events(ALICE, [said("e2", "b", 3)], now=at(3))  # activity: later
    assert await service.flush_due_streams(now=at(7)) == 0
    assert await service.flush_due_streams(now=at(8)) == 1
    assert await flushed(service) == [["a", "b"]]
    assert await service.flush_due_streams(now=at(60)) == 0  # nothing waits: nothing due

    # A fixed interval runs from the window's first event, however busy the stream.
    interval = GenerationTrigger(fixed_interval=timedelta(minutes=10))
    for minute in (20, 23, 26, 29):
        result = await service.ingest_events(
            BOB, [said(f"b{minute}", str(minute), minute)], trigger=interval, now=at(minute)
        )
        assert result.operation is None
    assert await service.flush_due_streams(now=at(29.5)) == 0
    assert await service.flush_due_streams(now=at(30)) == 1
    # A request past the interval flushes itself.
    await service.ingest_events(BOB, [said("b31", "31", 31)], now=at(31))
    late = await service.ingest_events(BOB, [said("b41", "41", 41)], now=at(41))
    assert late.operation is not None
    assert (await flushed(service))[1:] == [["20", "23", "26", "29"], ["31", "41"]]


async def test_force_flush_trigger_only_requests_and_defaults(
    make_memory_service: Any, service: PostgresMemoryService
) -> None:
    rule = GenerationTrigger(event_count=10)
    await service.ingest_events(ALICE, [said("e1", "a")], trigger=rule, now=at(0))
    # A request without events may name the trigger; force_flush sends what waits.
    only = await service.ingest_events(ALICE, trigger=GenerationTrigger(event_count=5))
    assert (only.ingested, only.waiting, only.operation) == (0, 1, None)
    forced = await service.ingest_events(ALICE, force_flush=True, revision_labels={"k": "v"})
    assert forced.operation is not None
    assert await service.ingest_events(ALICE, force_flush=True) == forced.model_copy(
        update={"operation": None}
    )  # nothing waits: nothing flushed
    # No rule anywhere: each request's events are flushed at once.
    at_once = await service.ingest_events(BOB, [types.Content(parts=[types.Part(text="c")])])
    assert at_once.operation is not None
    assert await flushed(service) == [["a"], ["c"]]

    configured = MemoryBankConfig(
        generation=GenerationConfig(trigger=GenerationTrigger(event_count=2))
    )
    other: PostgresMemoryService = make_memory_service(
        llm=ScriptedLlm(), run_worker=False, config=configured
    )
    try:
        waiting = await other.ingest_events(ALICE, [said("e9", "z")], stream_id="cfg")
        assert (waiting.waiting, waiting.operation) == (1, None)
    finally:
        await other.close()


async def test_bad_requests_and_purge(make_memory_service: Any) -> None:
    plain: PostgresMemoryService = make_memory_service()
    try:
        with pytest.raises(InputValidationError, match="generation model"):
            await plain.ingest_events(ALICE, [said("e1", "a")])
    finally:
        await plain.close()
    service: PostgresMemoryService = make_memory_service(llm=ScriptedLlm(), run_worker=False)
    try:
        with pytest.raises(InputValidationError, match="whole number of minutes"):
            await service.ingest_events(ALICE, trigger={"generation_rule": {"idle_duration": "5s"}})
        with pytest.raises(InputValidationError, match="stream_id"):
            await service.ingest_events(ALICE, stream_id="x" * 200)
        await service.ingest_events(
            ALICE, [said("e1", "a")], trigger=GenerationTrigger(event_count=3)
        )
        # A user who opts out before the sweep: the waiting events go, nothing is generated.
        await service.ingest_events(
            BOB, [said("b1", "x")], trigger={"generation_rule": {"idle_duration": "60s"}}
        )
        await service.set_opt_out("shop", "bob")
        assert (
            await service.flush_due_streams(now=datetime.now(timezone.utc) + timedelta(hours=1))
            == 0
        )
        await service.set_opt_out("shop", "bob", False)
        assert (await service.ingest_events(BOB, force_flush=True)).waiting == 0
        assert await flushed(service) == []

        assert await service.purge(ALICE) >= 2  # the stream and its event go with the scope
        again = await service.ingest_events(ALICE, [said("e1", "a")])
        assert (again.ingested, again.waiting) == (1, 0)  # a new stream: flushed at once
        assert again.operation is not None
    finally:
        await service.close()


async def test_a_time_rule_starts_the_worker_whose_idle_pass_sweeps(
    make_memory_service: Any,
) -> None:
    service: PostgresMemoryService = make_memory_service(llm=ScriptedLlm())  # worker on
    swept = asyncio.Event()

    async def sweep() -> None:
        swept.set()

    service.worker.when_idle(sweep)  # beside the service's own `flush_due_streams`
    try:
        await service.ingest_events(
            ALICE, [said("e1", "a")], trigger=GenerationTrigger(idle_duration=timedelta(hours=1))
        )
        await asyncio.wait_for(swept.wait(), timeout=30)  # no job was enqueued: the rule did it
    finally:
        await service.close()
