"""Temporal cues: the time window a query names (`memory.temporal.find_window`, read against a
fixed `now`), matched against memory time in retrieval on the real database, and ADK
`MemoryEntry.timestamp` kept by `add_memory` as the memory's time.

Every service here has no recency weight: memory times are fixed dates, and recency would
otherwise move with the wall clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from conftest import TEST_SCHEMA, generic_plan
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from adk_memory import MemoryBankConfig, MemoryFilter, PostgresMemoryService
from adk_memory.config import RetrievalConfig
from adk_memory.db.vectors import COVERED
from adk_memory.memory.entries import to_memory_entry
from adk_memory.memory.guard import NoGuard
from adk_memory.memory.store.retrieval import _retrieve_statement
from adk_memory.memory.temporal import find_window
from adk_memory.testing import HashEmbedder

UTC = timezone.utc
NOW = datetime(2026, 11, 24, 15, 30, tzinfo=UTC)  # a Tuesday
APP, USER = "app", "u1"
SCOPE = {"app_name": APP, "user_id": USER}

MakeService = Callable[..., PostgresMemoryService]


def day(y: int, m: int, d: int, h: int = 0) -> datetime:
    return datetime(y, m, d, h, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("what did I say today?", day(2026, 11, 24), day(2026, 11, 25)),
        ("yesterday", day(2026, 11, 23), day(2026, 11, 24)),
        ("the day before yesterday", day(2026, 11, 22), day(2026, 11, 23)),
        ("this morning", day(2026, 11, 24), day(2026, 11, 24, 12)),
        ("last night", day(2026, 11, 23, 18), day(2026, 11, 24, 6)),
        ("this week", day(2026, 11, 23), day(2026, 11, 30)),
        ("what did I say last week?", day(2026, 11, 16), day(2026, 11, 23)),
        ("this month", day(2026, 11, 1), day(2026, 12, 1)),
        ("last month", day(2026, 10, 1), day(2026, 11, 1)),
        ("this year", day(2026, 1, 1), day(2027, 1, 1)),
        ("last year", day(2025, 1, 1), day(2026, 1, 1)),
        ("3 days ago", day(2026, 11, 21), day(2026, 11, 22)),
        ("two weeks ago", day(2026, 11, 9), day(2026, 11, 16)),
        ("2 months ago", day(2026, 9, 1), day(2026, 10, 1)),
        ("last Monday", day(2026, 11, 23), day(2026, 11, 24)),
        ("last Tuesday", day(2026, 11, 17), day(2026, 11, 18)),
        ("in May 2023", day(2023, 5, 1), day(2023, 6, 1)),
        ("March 2023", day(2023, 3, 1), day(2023, 4, 1)),
        ("in December", day(2025, 12, 1), day(2026, 1, 1)),
        ("in November", day(2026, 11, 1), day(2026, 12, 1)),
        ("in 2023", day(2023, 1, 1), day(2024, 1, 1)),
        ("on 2023-05-08", day(2023, 5, 8), day(2023, 5, 9)),
        ("8 May 2023", day(2023, 5, 8), day(2023, 5, 9)),
        ("May 8, 2023", day(2023, 5, 8), day(2023, 5, 9)),
        ("the 8th of May 2023", day(2023, 5, 8), day(2023, 5, 9)),
        ("on May 8th", day(2026, 5, 8), day(2026, 5, 9)),
        ("on 30 December", day(2025, 12, 30), day(2025, 12, 31)),
        ("summer of 2023", day(2023, 6, 1), day(2023, 9, 1)),
        ("Christmas 2022", day(2022, 12, 20), day(2023, 1, 3)),
        ("Easter 2023", day(2023, 4, 6), day(2023, 4, 13)),  # Easter Sunday: 9 April
        ("Was habe ich letzte Woche gesagt?", day(2026, 11, 16), day(2026, 11, 23)),
        ("gestern", day(2026, 11, 23), day(2026, 11, 24)),
        ("vor 3 Tagen", day(2026, 11, 21), day(2026, 11, 22)),
        ("am 8. Mai 2023", day(2023, 5, 8), day(2023, 5, 9)),
        ("la semaine dernière", day(2026, 11, 16), day(2026, 11, 23)),
        ("il y a deux jours", day(2026, 11, 22), day(2026, 11, 23)),
        ("en mai 2023", day(2023, 5, 1), day(2023, 6, 1)),
        ("aujourd'hui", day(2026, 11, 24), day(2026, 11, 25)),
        ("la semana pasada", day(2026, 11, 16), day(2026, 11, 23)),
        ("hace 3 días", day(2026, 11, 21), day(2026, 11, 22)),
        ("el 8 de mayo de 2023", day(2023, 5, 8), day(2023, 5, 9)),
        ("el lunes pasado", day(2026, 11, 23), day(2026, 11, 24)),
    ],
)
def test_the_window_each_expression_names(query: str, start: datetime, end: datetime) -> None:
    window = find_window(query, NOW)
    assert window is not None
    assert (window.start, window.end) == (start, end)


@pytest.mark.parametrize(
    "query",
    ["what did Ben say about running?", "I may go", "Ben ran 10 km", "room 2023", "I had a week"],
)
def test_a_query_without_a_time_has_no_window(query: str) -> None:
    assert find_window(query, NOW) is None


def test_the_span_is_the_expression_as_written() -> None:
    query = "Was hat Ben la SEMAINE dernière gesagt?"
    window = find_window(query, NOW)
    assert window is not None and query[window.span[0] : window.span[1]] == "la SEMAINE dernière"


def test_days_are_the_user_s_days() -> None:
    """`now`'s timezone decides where a day starts; a naive `now` is UTC."""
    tokyo = timezone(timedelta(hours=9))
    window = find_window("yesterday", datetime(2026, 11, 24, 1, 0, tzinfo=tokyo))
    assert window is not None
    assert window.start == datetime(2026, 11, 23, tzinfo=tokyo) == day(2026, 11, 22, 15)
    naive = find_window("today", datetime(2026, 11, 24, 23, 0))
    assert naive is not None and naive.start == day(2026, 11, 24)


def entry(text: str, when: datetime | str | None, entry_id: str | None = None) -> MemoryEntry:
    return MemoryEntry(
        id=entry_id,
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        timestamp=when.isoformat() if isinstance(when, datetime) else when,
    )


def service_with(
    make: MakeService, embedder: HashEmbedder | None = None, **retrieval: Any
) -> PostgresMemoryService:
    config = RetrievalConfig(recency_weight=0, **retrieval)
    return make(config=MemoryBankConfig(retrieval=config), guard=NoGuard(), embedder=embedder)


@pytest.fixture
def make(make_memory_service: MakeService) -> MakeService:
    return make_memory_service


async def add(service: PostgresMemoryService, *entries: MemoryEntry) -> None:
    await service.add_memory(app_name=APP, user_id=USER, memories=list(entries))


async def facts(
    service: PostgresMemoryService, query: str, top_k: int = 5, **kwargs: Any
) -> list[str]:
    found = await service.retrieve_memories(
        SCOPE, search_query=query, top_k=top_k, now=NOW, **kwargs
    )
    return [r.memory.fact for r in found]


@pytest.mark.parametrize("embedder", [None, HashEmbedder(64)], ids=["text", "hybrid"])
async def test_last_week_s_memories_are_found_with_no_content_word(
    make: MakeService, embedder: HashEmbedder | None
) -> None:
    service = service_with(make, embedder)
    await add(
        service,
        entry("Ben ran ten kilometres along the canal", day(2026, 11, 18, 9)),
        entry("Ana adopted a grey cat called Luna", day(2026, 10, 5, 9)),
        entry("Sam bought a second-hand road bike", day(2026, 11, 20, 17)),
        entry("Grace planted tulips in the allotment", day(2026, 11, 23, 8)),
    )
    found = await facts(service, "what did I say last week?")
    assert set(found[:2]) == {
        "Ben ran ten kilometres along the canal",
        "Sam bought a second-hand road bike",
    }
    if embedder is None:  # without the window, no word of the question matches
        off = service_with(make, temporal_cues=False)
        assert await facts(off, "what did I say last week?") == []


async def test_a_memory_matching_the_words_and_the_time_ranks_first(make: MakeService) -> None:
    service = service_with(make)
    older = "Ben loves running"
    recent = "Ben went running with friends along the canal after work on Wednesday evening"
    await add(
        service,
        entry(older, day(2026, 10, 1, 9)),
        entry(recent, day(2026, 11, 18, 19)),
        entry("Ana baked bread on Sunday", day(2026, 11, 22, 10)),
    )
    question = "What did Ben say about running last week?"
    off = service_with(make, temporal_cues=False)
    assert (await facts(off, question))[:2] == [older, recent]
    found = await facts(service, question)
    assert found[:2] == [recent, older]
    # In the window but matching no word: after the memory matching both.
    assert found.index("Ana baked bread on Sunday") > found.index(recent)


@pytest.mark.parametrize("embedder", [None, HashEmbedder(64)], ids=["text", "hybrid"])
async def test_a_query_naming_no_time_ranks_as_without_cues(
    make: MakeService, embedder: HashEmbedder | None
) -> None:
    on = service_with(make, embedder)
    off = service_with(make, embedder, temporal_cues=False)
    await add(
        on,
        entry("Ben loves running", day(2026, 10, 1, 9)),
        entry("Ben went running along the canal", day(2026, 11, 18, 19)),
        entry("Ana runs a bakery in Leeds", day(2026, 11, 22, 10)),
    )
    for question in ("What does Ben say about running?", "bakery", "canal running"):
        with_cues = await on.retrieve_memories(SCOPE, search_query=question, top_k=5, now=NOW)
        without = await off.retrieve_memories(SCOPE, search_query=question, top_k=5, now=NOW)
        assert [(r.memory.id, r.score) for r in with_cues] == [
            (r.memory.id, r.score) for r in without
        ]


async def test_the_window_keeps_to_the_filter(make: MakeService) -> None:
    service = service_with(make)
    swim = MemoryEntry(
        content=types.Content(role="user", parts=[types.Part(text="Ben swam in the lake")]),
        timestamp=day(2026, 11, 19).isoformat(),
        custom_metadata={"topics": ["swimming"]},
    )
    await add(service, entry("Ben ran by the canal", day(2026, 11, 18)), swim)
    question = "what happened last week?"
    assert set(await facts(service, question)) == {"Ben ran by the canal", "Ben swam in the lake"}
    swimming = MemoryFilter(topics=["swimming"])
    assert await facts(service, question, filter=swimming) == ["Ben swam in the lake"]


@pytest.mark.parametrize("filtered", [False, True])
async def test_the_window_is_read_from_the_scope_s_time_index(
    make: MakeService, filtered: bool
) -> None:
    """The window's memories come from `memories_by_time` (scope, create time), not from a
    scan of the whole scope (here two years of daily memories)."""
    await add(service_with(make, HashEmbedder(64)), entry("Ben ran", day(2026, 11, 18)))
    service = service_with(make)  # the vectors are fixed: text-only writes are quicker
    days = [day(2025, 1, 1) + timedelta(days=n) for n in range(730)]
    await add(service, *(entry(f"note {n}", when) for n, when in enumerate(days)))
    statement = _retrieve_statement(TEST_SCHEMA, strategy=COVERED, filtered=filtered)
    plan = await generic_plan(service.database, statement)
    assert "using memories_by_time" in plan


async def test_add_memory_keeps_the_entry_s_time(make: MakeService) -> None:
    service = service_with(make)
    when = datetime(2023, 5, 8, 14, 30, tzinfo=timezone(timedelta(hours=2)))
    await add(
        service,
        entry("Ben ran the Manchester half marathon", when, "e1"),
        entry("Ana moved to a new flat", "2023-01-15", "e2"),  # a date: midnight UTC
        entry("Sam has a bike", None, "e3"),
    )
    stored = {m.fact: m for m in (await service.list_memories(SCOPE)).memories}
    marathon = stored["Ben ran the Manchester half marathon"]
    assert marathon.create_time == marathon.update_time == when
    assert stored["Ana moved to a new flat"].create_time == day(2023, 1, 15)
    undated = stored["Sam has a bike"]
    assert undated.create_time.year >= 2026 and undated.create_time == undated.update_time
    # ADK's entry shows the same time back, and a search for the month finds it.
    shown = to_memory_entry(marathon).timestamp
    assert shown is not None and datetime.fromisoformat(shown) == when
    response = await service.search_memory(app_name=APP, user_id=USER, query="marathon")
    assert [datetime.fromisoformat(m.timestamp or "") for m in response.memories] == [when]
    assert (await facts(service, "what happened in May 2023?"))[0] == marathon.fact


@pytest.mark.parametrize("bad", ["yesterday-ish", "2023-13-01", ""])
async def test_a_bad_timestamp_names_its_entry_and_stores_nothing(
    make: MakeService, bad: str
) -> None:
    service = service_with(make)
    with pytest.raises(InputValidationError, match=r"MemoryEntry 'e2'.*timestamp"):
        await add(service, entry("fine", day(2023, 1, 1), "e1"), entry("bad", bad, "e2"))
    with pytest.raises(InputValidationError, match=r"MemoryEntry #0.*timestamp"):
        await add(service, entry("bad", bad))
    assert (await service.list_memories(SCOPE)).memories == []
