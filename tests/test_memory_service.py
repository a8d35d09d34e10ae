"""PostgresMemoryService on the real database: the Memory Bank-style API (create / get / list /
update / delete / revisions / purge / retrieve), TTLs, validation, embeddings, and ADK's memory
calls (raw-events mode, add_memory, search_memory).

Every test runs on conftest's emptied test tables; the vector dimension the store was fixed to
(64) survives between tests, as it does in production.
"""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from conftest import TEST_SCHEMA as SCHEMA
from conftest import generic_plan
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types
from rls_checks import for_all

from adk_memory import MemoryBankConfig, MemoryFilter, PostgresMemoryService, TtlConfig
from adk_memory.config import RetrievalConfig
from adk_memory.db.vectors import COVERED
from adk_memory.errors import EmbeddingDimensionError
from adk_memory.memory import MemoryAction, SourceType
from adk_memory.memory.store.retrieval import _retrieve_statement
from adk_memory.testing import HashEmbedder

APP = "app"
SCOPE = {"app_name": APP, "user_id": "u1"}
OTHER = {"app_name": APP, "user_id": "u2"}

MakeService = Callable[..., PostgresMemoryService]


@pytest.fixture
def make_service(make_memory_service) -> MakeService:
    """Memory services on conftest's emptied test tables (their vector dimension, 64, kept)."""
    return make_memory_service


@pytest.fixture
def service(make_service: MakeService) -> PostgresMemoryService:
    """Full-text only (no embedder)."""
    return make_service()


@pytest.fixture
def embedded(make_service: MakeService) -> PostgresMemoryService:
    """Hybrid retrieval with the deterministic 64-dimension HashEmbedder."""
    return make_service(embedder=HashEmbedder(64))


def text_mode(**retrieval: Any) -> MemoryBankConfig:
    return MemoryBankConfig(retrieval=RetrievalConfig(mode="text", **retrieval))


async def row_counts(service: PostgresMemoryService) -> tuple[int, int]:
    """(memories, revisions) rows in the whole schema, live or not."""
    row = await service.database.run(
        lambda conn: conn.fetchrow(
            f"SELECT (SELECT count(*) FROM {SCHEMA}.memories WHERE {for_all(SCHEMA)}),"
            f" (SELECT count(*) FROM {SCHEMA}.memory_revisions WHERE {for_all(SCHEMA)})"
        )
    )
    return int(row[0]), int(row[1])


async def hours_pass(service: PostgresMemoryService, hours: int) -> None:
    """Every stored expiry moves `hours` back, so a test sees what a TTL does later without
    sleeping (a short sleep-sized TTL would race a slow machine)."""
    back = f"expire_time - interval '{hours} hours'"
    await service.database.run(
        lambda conn: conn.execute(
            f"UPDATE {SCHEMA}.memories SET expire_time = {back} WHERE {for_all(SCHEMA)}; "
            f"UPDATE {SCHEMA}.memory_revisions SET expire_time = {back} WHERE {for_all(SCHEMA)}"
        )
    )


async def facts(service: PostgresMemoryService, scope: dict[str, str]) -> list[str]:
    return [m.fact for m in (await service.list_memories(scope, page_size=1000)).memories]


async def found(service: PostgresMemoryService, scope: dict[str, str], query: str) -> list[str]:
    results = await service.retrieve_memories(scope, search_query=query, top_k=100)
    return [r.memory.fact for r in results]


# ------------------------------------------------------------------------- create / get / list


async def test_create_then_get_returns_every_field(service):
    memory = await service.create_memory(
        "The user prefers window seats.",
        SCOPE,
        topics=["travel", "preferences"],
        metadata={"source": "import", "nested": {"k": [1, 2]}},
        content={"seat": "window"},
        importance=0.75,
        confidence=0.5,
    )
    assert uuid.UUID(memory.id)
    assert memory.scope == SCOPE
    assert memory.fact == "The user prefers window seats."
    assert memory.topics == ["travel", "preferences"]
    assert memory.metadata == {"source": "import", "nested": {"k": [1, 2]}}
    assert memory.content == {"seat": "window"}
    assert memory.importance == 0.75 and memory.confidence == 0.5
    assert memory.source_type is SourceType.BOOTSTRAPPED
    assert memory.create_time == memory.update_time
    assert memory.create_time.tzinfo is not None
    assert memory.expire_time is None

    assert await service.get_memory(memory.id, SCOPE) == memory
    # The same scope with its keys in another order is the same scope.
    assert await service.get_memory(memory.id, {"user_id": "u1", "app_name": APP}) == memory
    # Upper-case spelling of the id is the same id.
    assert await service.get_memory(memory.id.upper(), SCOPE) == memory
    assert await service.get_memory(str(uuid.uuid4()), SCOPE) is None


async def test_list_pages_newest_first_with_page_tokens(service):
    created = [await service.create_memory(f"fact number {i}", SCOPE) for i in range(7)]
    await service.create_memory("someone else's", OTHER)

    pages, token = [], None
    while True:
        page = await service.list_memories(SCOPE, page_size=3, page_token=token)
        pages.append([m.id for m in page.memories])
        token = page.next_page_token
        if token is None:
            break
    assert [len(p) for p in pages] == [3, 3, 1]
    assert [i for p in pages for i in p] == [m.id for m in reversed(created)]

    exact = await service.list_memories(SCOPE, page_size=7)
    assert len(exact.memories) == 7 and exact.next_page_token is None
    everything = await service.list_memories(page_size=100)  # operator view: every scope
    assert len(everything.memories) == 8


async def test_list_pages_are_stable_when_update_times_tie(service):
    """Memories added in one batch share their update time: the id breaks the tie, so paging
    neither skips nor repeats one."""
    entries = [
        MemoryEntry(content=types.Content(parts=[types.Part(text=f"t{i}")])) for i in range(9)
    ]
    await service.add_memory(app_name=APP, user_id="u1", memories=entries)
    seen, token = [], None
    while True:
        page = await service.list_memories(SCOPE, page_size=2, page_token=token)
        seen.extend(m.fact for m in page.memories)
        token = page.next_page_token
        if token is None:
            break
    assert sorted(seen) == sorted(f"t{i}" for i in range(9))


async def test_list_filters_topics_metadata_and_update_time(service):
    a = await service.create_memory("a", SCOPE, topics=["x"], metadata={"k": 1, "tag": "red"})
    b = await service.create_memory("b", SCOPE, topics=["y"], metadata={"k": 1, "n": {"d": 2}})
    c = await service.create_memory("c", SCOPE, topics=["x", "z"], metadata={})

    async def listed(flt: MemoryFilter) -> set[str]:
        return {m.fact for m in (await service.list_memories(SCOPE, filter=flt)).memories}

    assert await listed(MemoryFilter(topics=["x"])) == {"a", "c"}
    assert await listed(MemoryFilter(topics=["y", "z"])) == {"b", "c"}
    assert await listed(MemoryFilter(topics=["nope"])) == set()
    assert await listed(MemoryFilter(metadata={"k": 1})) == {"a", "b"}
    assert await listed(MemoryFilter(metadata={"n": {"d": 2}})) == {"b"}
    assert await listed(MemoryFilter(metadata={"k": 1, "tag": "red"})) == {"a"}
    assert await listed(MemoryFilter(metadata={"k": "1"})) == set()
    assert await listed(MemoryFilter(updated_after=a.update_time)) == {"b", "c"}
    assert await listed(MemoryFilter(updated_before=c.update_time)) == {"a", "b"}
    assert await listed(
        MemoryFilter(updated_after=a.update_time, updated_before=c.update_time)
    ) == {"b"}
    assert await listed(MemoryFilter(topics=["x"], metadata={"k": 1})) == {"a"}
    # Filters narrow retrieval too.
    results = await service.retrieve_memories(SCOPE, filter=MemoryFilter(topics=["z"]))
    assert [r.memory.fact for r in results] == ["c"]
    assert b.id  # b was created between a and c


# ------------------------------------------------------------------------------------ update


async def test_update_fact_re_embeds_and_rewrites_full_text(make_service):
    embedder = HashEmbedder(64)
    hybrid = make_service(embedder=embedder)
    text_only = make_service(embedder=embedder, config=text_mode())
    vector_only = make_service(
        embedder=embedder, config=MemoryBankConfig(retrieval=RetrievalConfig(mode="vector"))
    )
    memory = await hybrid.create_memory(
        "giraffes are tall", SCOPE, topics=["zoo"], metadata={"m": 1}, importance=0.25
    )
    await hybrid.create_memory("an unrelated note about invoices", SCOPE)
    calls = embedder.calls

    updated = await hybrid.update_memory(memory.id, SCOPE, fact="penguins waddle")
    assert embedder.calls == calls + 1
    assert updated.fact == "penguins waddle"
    assert updated.update_time > memory.update_time
    assert updated.create_time == memory.create_time
    # Fields left None are kept.
    assert (updated.topics, updated.metadata, updated.importance) == (["zoo"], {"m": 1}, 0.25)

    assert await found(text_only, SCOPE, "penguins") == ["penguins waddle"]
    assert await found(text_only, SCOPE, "giraffes") == []
    # The stored vector is the new fact's: the same text is at distance 0.
    best = (await vector_only.retrieve_memories(SCOPE, search_query="penguins waddle"))[0]
    assert best.memory.id == memory.id
    assert best.distance == pytest.approx(0.0, abs=1e-6)

    # Changing other fields does not embed again and keeps the fact.
    calls = embedder.calls
    again = await hybrid.update_memory(memory.id, SCOPE, topics=[], metadata={"m": 2})
    assert embedder.calls == calls
    assert (again.fact, again.topics, again.metadata, again.importance) == (
        "penguins waddle",
        [],
        {"m": 2},
        0.25,
    )
    assert await hybrid.get_memory(memory.id, SCOPE) == again


async def test_update_of_a_missing_memory_raises_lookup_error(service):
    with pytest.raises(LookupError):
        await service.update_memory(str(uuid.uuid4()), SCOPE, fact="x")
    assert await row_counts(service) == (0, 0)


# ------------------------------------------------------------------------------------ delete


async def test_delete_one_adk_form_and_memory_bank_form(service):
    a = await service.create_memory("a", SCOPE)
    b = await service.create_memory("b", SCOPE)
    c = await service.create_memory("c", SCOPE)
    o = await service.create_memory("o", OTHER)

    await service.delete_memory(app_name=APP, user_id="u1", memory_id=a.id)
    assert await facts(service, SCOPE) == ["c", "b"]
    await service.delete_memory(scope={"user_id": "u1", "app_name": APP}, memory_id=b.id)
    assert await facts(service, SCOPE) == ["c"]
    assert await service.get_memory(a.id, SCOPE) is None
    assert await service.get_memory(c.id, SCOPE) is not None
    # Deleting again, or an unknown id, is a no-op.
    await service.delete_memory(app_name=APP, user_id="u1", memory_id=a.id)
    await service.delete_memory(scope=SCOPE, memory_id=str(uuid.uuid4()))
    assert await facts(service, SCOPE) == ["c"]
    assert await service.get_memory(o.id, OTHER) is not None


async def test_delete_without_an_id_deletes_nothing_in_both_forms(service, caplog):
    """ "None" never means "all": ADK's delete_memory deletes one memory by id, and without one
    nothing (a warning says so); a whole scope goes only through purge."""
    for i in range(3):
        await service.create_memory(f"mine {i}", SCOPE)
        await service.create_memory(f"theirs {i}", OTHER)
    with caplog.at_level("WARNING"):
        await service.delete_memory(app_name=APP, user_id="u1")
        await service.delete_memory(app_name=APP, user_id="u1", memory_id="")
        await service.delete_memory(scope=OTHER)
    assert await facts(service, SCOPE) == ["mine 2", "mine 1", "mine 0"]
    assert await facts(service, OTHER) == ["theirs 2", "theirs 1", "theirs 0"]
    assert caplog.text.count("deletes nothing") == 3
    assert await row_counts(service) == (6, 6)

    assert await service.purge(OTHER) == 6  # 3 memories + 3 revisions
    assert await facts(service, OTHER) == []
    assert await facts(service, SCOPE) == ["mine 2", "mine 1", "mine 0"]


async def test_delete_needs_exactly_one_way_of_naming_the_scope(service):
    await service.create_memory("a", SCOPE)
    with pytest.raises(InputValidationError):
        await service.delete_memory(app_name=APP, user_id="u1", scope=SCOPE)
    with pytest.raises(InputValidationError):
        await service.delete_memory(app_name=APP)
    with pytest.raises(InputValidationError):
        await service.delete_memory()
    assert await facts(service, SCOPE) == ["a"]


# --------------------------------------------------------------------------------- revisions


async def test_revisions_record_every_change_and_outlive_the_memory(service):
    memory = await service.create_memory("v1", SCOPE)
    await service.update_memory(memory.id, SCOPE, fact="v2", labels={"by": "tester"})
    await service.update_memory(memory.id, SCOPE, topics=["t"])
    await service.delete_memory(scope=SCOPE, memory_id=memory.id)

    revisions = await service.list_revisions(memory.id, SCOPE)
    assert [r.action for r in revisions] == [
        MemoryAction.CREATED,
        MemoryAction.UPDATED,
        MemoryAction.UPDATED,
        MemoryAction.DELETED,
    ]
    assert [r.fact for r in revisions] == ["v1", "v2", "v2", "v2"]
    assert [r.labels for r in revisions] == [{}, {"by": "tester"}, {}, {}]
    assert {r.memory_id for r in revisions} == {memory.id}
    assert all(r.scope == SCOPE for r in revisions)
    assert all(r.source_type is SourceType.BOOTSTRAPPED for r in revisions)
    times = [r.create_time for r in revisions]
    assert times == sorted(times)
    assert len({r.id for r in revisions}) == 4
    # Another scope never sees them, even with the id.
    assert await service.list_revisions(memory.id, OTHER) == []
    assert await service.list_revisions(str(uuid.uuid4()), SCOPE) == []


async def test_purge_forgets_the_scope_and_only_it(service):
    mine = [await service.create_memory(f"m{i}", SCOPE) for i in range(2)]
    await service.update_memory(mine[0].id, SCOPE, fact="m0 changed")
    gone = await service.create_memory("deleted before the purge", SCOPE)
    await service.delete_memory(scope=SCOPE, memory_id=gone.id)
    theirs = await service.create_memory("t", OTHER)
    await service.update_memory(theirs.id, OTHER, fact="t changed")
    nested = await service.create_memory("n", {**SCOPE, "agent": "x"})

    # 2 memories + (2 CREATED + 1 UPDATED + 1 CREATED + 1 DELETED) revisions.
    assert await service.purge({"user_id": "u1", "app_name": APP}) == 7
    assert await facts(service, SCOPE) == []
    for memory in [*mine, gone]:
        assert await service.list_revisions(memory.id, SCOPE) == []
    assert await facts(service, OTHER) == ["t changed"]
    assert [r.action for r in await service.list_revisions(theirs.id, OTHER)] == [
        MemoryAction.CREATED,
        MemoryAction.UPDATED,
    ]
    assert await service.get_memory(nested.id, {**SCOPE, "agent": "x"}) is not None
    assert await service.purge(SCOPE) == 0
    assert await row_counts(service) == (2, 3)


# --------------------------------------------------------------------------------- retrieval


async def test_retrieve_without_query_returns_all_newest_first(service):
    created = [await service.create_memory(f"fact {i}", SCOPE) for i in range(5)]
    await service.create_memory("other", OTHER)
    for query in (None, "", "   "):
        results = await service.retrieve_memories(SCOPE, search_query=query, top_k=1)
        assert [r.memory.id for r in results] == [m.id for m in reversed(created)]
        assert all(r.score == 0.0 and r.distance is None for r in results)


async def test_retrieve_respects_top_k_up_to_100(service):
    entries = [
        MemoryEntry(content=types.Content(parts=[types.Part(text=f"apple number {i}")]))
        for i in range(105)
    ]
    await service.add_memory(app_name=APP, user_id="u1", memories=entries)
    assert len(await service.retrieve_memories(SCOPE, search_query="apple", top_k=2)) == 2
    assert len(await service.retrieve_memories(SCOPE, search_query="apple")) == 3  # default
    assert len(await service.retrieve_memories(SCOPE, search_query="apple", top_k=100)) == 100
    for bad in (0, 101, -1):
        with pytest.raises(InputValidationError):
            await service.retrieve_memories(SCOPE, search_query="apple", top_k=bad)
        with pytest.raises(InputValidationError):
            await service.retrieve_memories(SCOPE, top_k=bad)


FACTS = (
    "user prefers window seats on flights",
    "user prefers aisle seats on trains",
    "user prefers green tea",
    "a dog named Rex",
)


async def test_ranking_in_hybrid_text_and_vector_modes(make_service):
    embedder = HashEmbedder(64)
    hybrid = make_service(embedder=embedder)
    text = make_service(embedder=embedder, config=text_mode())
    vector = make_service(
        embedder=embedder,
        config=MemoryBankConfig(retrieval=RetrievalConfig(mode="vector", min_similarity=-1)),
    )
    for fact in FACTS:
        await hybrid.create_memory(fact, SCOPE)
    query = "window seats flights"

    both = await hybrid.retrieve_memories(SCOPE, search_query=query, top_k=10)
    assert both[0].memory.fact == FACTS[0]
    # The relevance floor keeps out the memories that share nothing with the query; without
    # it, vector search brings every memory with an embedding. All have distances and scores.
    assert {r.memory.fact for r in both} == set(FACTS[:2])  # "seats" is shared
    no_floor = make_service(
        embedder=embedder,
        config=MemoryBankConfig(retrieval=RetrievalConfig(min_similarity=-1)),
    )
    both = await no_floor.retrieve_memories(SCOPE, search_query=query, top_k=10)
    assert {r.memory.fact for r in both} == set(FACTS)
    assert all(isinstance(r.distance, float) for r in both)
    assert [r.score for r in both] == sorted((r.score for r in both), reverse=True)
    # First in both lists scores the full relevance weight (1) plus recency and importance.
    assert both[0].score == pytest.approx(1.0 + 0.1 + 0.05, abs=1e-3)

    lexical = await text.retrieve_memories(SCOPE, search_query=query, top_k=10)
    assert [r.memory.fact for r in lexical] == [FACTS[0], FACTS[1]]
    assert all(r.distance is None for r in lexical)
    assert lexical[0].score > lexical[1].score > 0

    semantic = await vector.retrieve_memories(SCOPE, search_query=query, top_k=10)
    assert semantic[0].memory.fact == FACTS[0]
    assert len(semantic) == 4
    distances = [r.distance for r in semantic]
    assert distances == sorted(distances)
    assert all(0.0 <= d <= 2.0 for d in distances)

    # The exact text of a memory ranks it first in every mode.
    for svc in (hybrid, text, vector):
        results = await svc.retrieve_memories(SCOPE, search_query=FACTS[1], top_k=10)
        assert results[0].memory.fact == FACTS[1]
    exact = await vector.retrieve_memories(SCOPE, search_query=FACTS[2])
    assert exact[0].distance == pytest.approx(0.0, abs=1e-6)


async def test_without_an_embedder_hybrid_is_full_text_and_vector_mode_is_refused(make_service):
    plain = make_service()
    for fact in FACTS:
        await plain.create_memory(fact, SCOPE)
    results = await plain.retrieve_memories(SCOPE, search_query="green tea please", top_k=10)
    assert [r.memory.fact for r in results] == [FACTS[2]]
    assert results[0].distance is None and results[0].score > 0
    # Stop words only: nothing to match.
    assert await found(plain, SCOPE, "the of and") == []

    vector_only = make_service(config=MemoryBankConfig(retrieval=RetrievalConfig(mode="vector")))
    with pytest.raises(InputValidationError):
        await vector_only.retrieve_memories(SCOPE, search_query="tea")


@pytest.mark.parametrize("filtered", [False, True])
async def test_the_settled_plan_casts_the_query_vector_once(embedded, filtered):
    """A prepared search settles on a generic plan, where a parameter is no constant: a cast of
    the query vector written per row would run once per memory of the scope (it doubled a big
    scope's search). It runs once, as an InitPlan; without filters the scope's vectors come
    from the covering index alone."""
    await embedded.create_memory("the user likes jazz", SCOPE)  # fixes the store's vectors
    statement = _retrieve_statement(SCHEMA, strategy=COVERED, filtered=filtered)
    plan = await generic_plan(embedded.database, statement)
    assert "InitPlan" in plan and "::halfvec" not in plan.split("InitPlan")[0]
    scan = "Index Only Scan" if not filtered else "Index Scan"
    assert f"{scan} using memories_scope_vectors" in plan


async def test_importance_decides_between_equally_relevant_memories(service):
    for high_first in (True, False):
        await service.purge(SCOPE)
        order = (1.0, 0.0) if high_first else (0.0, 1.0)
        for importance in order:
            await service.create_memory("the user likes jazz", SCOPE, importance=importance)
        results = await service.retrieve_memories(SCOPE, search_query="jazz", top_k=2)
        assert [r.memory.importance for r in results] == [1.0, 0.0]


async def test_importance_decides_a_tie_whatever_the_ids(service):
    """Equally relevant memories share a rank, so importance (not id order) decides; the
    important one is created first so recency cannot explain the order either."""
    high = await service.create_memory("the user likes jazz", SCOPE, importance=0.9)
    low = await service.create_memory("the user likes jazz", SCOPE, importance=0.1)
    results = await service.retrieve_memories(SCOPE, search_query="jazz", top_k=2)
    assert [r.memory.id for r in results] == [high.id, low.id]
    assert results[0].score - results[1].score > 0.07


async def test_recency_decides_between_equally_relevant_memories(make_service):
    config = MemoryBankConfig(
        retrieval=RetrievalConfig(
            recency_weight=1.0, recency_half_life=timedelta(seconds=0.1), importance_weight=0.0
        )
    )
    service = make_service(config=config)
    older = await service.create_memory("the user likes jazz", SCOPE)
    await asyncio.sleep(0.3)
    newer = await service.create_memory("the user likes jazz", SCOPE)
    results = await service.retrieve_memories(SCOPE, search_query="jazz", top_k=2)
    assert [r.memory.id for r in results] == [newer.id, older.id]
    # Touching the older one (a while later) makes it the most recent.
    await asyncio.sleep(0.3)
    await service.update_memory(older.id, SCOPE, topics=["music"])
    results = await service.retrieve_memories(SCOPE, search_query="jazz", top_k=2)
    assert [r.memory.id for r in results] == [older.id, newer.id]


# --------------------------------------------------------------------------------------- TTL


def assert_expires_after(memory, ttl: timedelta) -> None:
    assert memory.expire_time is not None
    assert memory.expire_time - memory.update_time == ttl


async def test_default_ttl_applies_to_creates_and_each_update_resets_it(make_service):
    service = make_service(config=MemoryBankConfig(ttl=TtlConfig(default_ttl=timedelta(hours=1))))
    memory = await service.create_memory("f", SCOPE)
    assert_expires_after(memory, timedelta(hours=1))
    await service.add_memory(
        app_name=APP,
        user_id="u1",
        memories=[MemoryEntry(content=types.Content(parts=[types.Part(text="g")]))],
    )
    added = next(m for m in (await service.list_memories(SCOPE)).memories if m.fact == "g")
    assert_expires_after(added, timedelta(hours=1))

    updated = await service.update_memory(memory.id, SCOPE, topics=["t"])
    assert updated.update_time > memory.update_time
    assert_expires_after(updated, timedelta(hours=1))
    assert updated.expire_time > memory.expire_time
    # A per-call ttl overrides the default, on update and on create.
    overridden = await service.update_memory(memory.id, SCOPE, ttl=timedelta(minutes=5))
    assert_expires_after(overridden, timedelta(minutes=5))
    short = await service.create_memory("h", SCOPE, ttl=timedelta(days=2))
    assert_expires_after(short, timedelta(days=2))


async def test_create_ttl_wins_for_creates_and_granular_ttls_leave_updates_alone(make_service):
    config = MemoryBankConfig(
        ttl=TtlConfig(default_ttl=timedelta(hours=1), create_ttl=timedelta(minutes=10))
    )
    service = make_service(config=config)
    memory = await service.create_memory("f", SCOPE)
    assert_expires_after(memory, timedelta(minutes=10))
    # An update resets to default_ttl (Memory Bank: a direct update uses the default TTL).
    assert_expires_after(
        await service.update_memory(memory.id, SCOPE, fact="g"), timedelta(hours=1)
    )

    granular = make_service(config=MemoryBankConfig(ttl=TtlConfig(create_ttl=timedelta(hours=3))))
    kept = await granular.create_memory("k", SCOPE)
    assert_expires_after(kept, timedelta(hours=3))
    updated = await granular.update_memory(kept.id, SCOPE, fact="k2")
    assert updated.expire_time == kept.expire_time
    assert updated.update_time > kept.update_time
    overridden = await granular.update_memory(kept.id, SCOPE, ttl=timedelta(hours=7))
    assert_expires_after(overridden, timedelta(hours=7))

    forever = await make_service().create_memory("no ttl", SCOPE)
    assert forever.expire_time is None
    with pytest.raises(InputValidationError):
        await service.create_memory("bad", SCOPE, ttl=timedelta(0))
    with pytest.raises(InputValidationError):
        await service.update_memory(memory.id, SCOPE, ttl=timedelta(seconds=-1))


async def test_expired_memories_vanish_and_sweep_records_why(make_service):
    config = MemoryBankConfig(ttl=TtlConfig(default_ttl=timedelta(seconds=0.3)))
    service = make_service(config=config)
    lasting = make_service()  # same tables, no TTL
    doomed = await service.create_memory("the ephemeral fact about kiwis", SCOPE)
    kept = await lasting.create_memory("the lasting fact about kiwis", SCOPE)
    survivor = await service.create_memory("kiwis again", SCOPE, ttl=timedelta(hours=1))
    await asyncio.sleep(0.45)

    assert await service.get_memory(doomed.id, SCOPE) is None
    assert await service.get_memory(kept.id, SCOPE) is not None
    assert set(await facts(service, SCOPE)) == {kept.fact, survivor.fact}
    listed = await service.retrieve_memories(SCOPE)
    assert {r.memory.id for r in listed} == {kept.id, survivor.id}
    assert set(await found(service, SCOPE, "ephemeral kiwis")) == {kept.fact, survivor.fact}
    response = await service.search_memory(app_name=APP, user_id="u1", query="ephemeral kiwis")
    assert doomed.id not in {m.id for m in response.memories}
    with pytest.raises(LookupError):
        await service.update_memory(doomed.id, SCOPE, fact="revived")
    assert await row_counts(service) == (3, 3)  # still stored until swept

    progress: list[int] = []
    assert await service.sweep_expired(progress=progress.append) == 1
    assert progress[-1] == 1
    assert await row_counts(service) == (2, 4)
    revisions = await service.list_revisions(doomed.id, SCOPE)
    assert [(r.action, r.fact, r.labels) for r in revisions] == [
        (MemoryAction.CREATED, doomed.fact, {}),
        (MemoryAction.DELETED, doomed.fact, {"reason": "expired"}),
    ]
    assert await service.sweep_expired() == 0


async def test_sweep_works_in_batches(make_service):
    service = make_service(
        config=MemoryBankConfig(ttl=TtlConfig(create_ttl=timedelta(seconds=0.2)))
    )
    entries = [
        MemoryEntry(content=types.Content(parts=[types.Part(text=f"e{i}")])) for i in range(5)
    ]
    await service.add_memory(app_name=APP, user_id="u1", memories=entries)
    await asyncio.sleep(0.3)
    progress: list[int] = []
    assert await service.sweep_expired(batch_size=2, progress=progress.append) == 5
    assert progress == [2, 4, 5]
    assert await row_counts(service) == (0, 10)
    with pytest.raises(InputValidationError):
        await service.sweep_expired(batch_size=0)


async def test_revision_ttl_hides_then_sweeps_old_revisions(make_service):
    service = make_service(config=MemoryBankConfig(ttl=TtlConfig(revision_ttl=timedelta(hours=1))))
    memory = await service.create_memory("f", SCOPE)
    assert len(await service.list_revisions(memory.id, SCOPE)) == 1
    await hours_pass(service, 2)  # the CREATED revision's hour is up; nothing races a clock
    await service.update_memory(memory.id, SCOPE, fact="g")
    revisions = await service.list_revisions(memory.id, SCOPE)
    assert [r.action for r in revisions] == [MemoryAction.UPDATED]  # the CREATED one expired
    assert revisions[0].expire_time is not None
    assert await service.get_memory(memory.id, SCOPE) is not None  # memories do not expire
    assert await row_counts(service) == (1, 2)
    assert await service.sweep_expired() == 0
    assert await row_counts(service) == (1, 1)


# -------------------------------------------------------------------------------- validation

BAD_SCOPES: list[Any] = [
    {},
    {f"k{i}": "v" for i in range(6)},
    {"app_name": "*"},
    {"app_name": "a*"},
    {"*": "v"},
    {"app_name": 1},
    {"app_name": None},
    {1: "v"},
    {"app_name": ""},
    {"": "v"},
    {"app_name": "a\x00"},
    {"app_name": "x" * 257},
    None,
    ["app_name", "u"],
    "app_name=u",
]


@pytest.mark.parametrize("scope", BAD_SCOPES, ids=repr)
async def test_bad_scopes_are_refused_by_every_call_and_write_nothing(service, scope):
    memory = await service.create_memory("kept", SCOPE)
    calls = [
        service.create_memory("f", scope),
        service.get_memory(memory.id, scope),
        service.update_memory(memory.id, scope, fact="changed"),
        service.delete_memory(scope=scope, memory_id=memory.id),
        service.list_revisions(memory.id, scope),
        service.purge(scope),
        service.retrieve_memories(scope, search_query="kept"),
    ]
    if scope is not None:  # list_memories(None) is the operator's listing of every scope
        calls.append(service.list_memories(scope))
    for call in calls:
        with pytest.raises(InputValidationError):
            await call
    assert await row_counts(service) == (1, 1)
    assert await service.get_memory(memory.id, SCOPE) == memory


async def test_bad_user_names_in_adk_calls(service):
    for app_name, user_id in (("", "u"), (APP, ""), ("a*", "u"), (APP, "u\x00")):
        with pytest.raises(InputValidationError):
            await service.search_memory(app_name=app_name, user_id=user_id, query="q")
        with pytest.raises(InputValidationError):
            await service.delete_memory(app_name=app_name, user_id=user_id)
        with pytest.raises(InputValidationError):
            await service.add_memory(
                app_name=app_name,
                user_id=user_id,
                memories=[MemoryEntry(content=types.Content(parts=[types.Part(text="x")]))],
            )
    assert await row_counts(service) == (0, 0)


async def test_five_scope_keys_are_fine(service):
    scope = {f"k{i}": "v" for i in range(5)}
    memory = await service.create_memory("f", scope)
    assert await service.get_memory(memory.id, dict(reversed(scope.items()))) == memory


@pytest.mark.parametrize("fact", ["", "   ", "\n\t", "x" * 10_001, 42, None], ids=repr)
async def test_bad_facts_write_nothing(service, fact):
    memory = await service.create_memory("kept", SCOPE)
    with pytest.raises(InputValidationError):
        await service.create_memory(fact, SCOPE)
    if fact is not None:  # None means "keep the fact" on update
        with pytest.raises(InputValidationError):
            await service.update_memory(memory.id, SCOPE, fact=fact)
    with pytest.raises(InputValidationError):
        await service.add_memory(
            app_name=APP,
            user_id="u1",
            memories=[
                MemoryEntry(content=types.Content(parts=[types.Part(text="fine")])),
                MemoryEntry(content=types.Content(parts=[types.Part(text=str(fact or ""))])),
            ]
            if isinstance(fact, str)
            else [MemoryEntry(content=types.Content(parts=[]))],
        )
    assert await row_counts(service) == (1, 1)
    assert await service.get_memory(memory.id, SCOPE) == memory


async def test_longest_fact_is_accepted(service):
    memory = await service.create_memory("x" * 10_000, SCOPE)
    assert len(memory.fact) == 10_000


@pytest.mark.parametrize(
    # A fixed UUID with a character too many: a random one would name the test differently in
    # every collection, and parallel workers (pytest-xdist) must collect the same tests.
    "memory_id",
    ["", "not-a-uuid", "123", "0" * 31, "5b0f6f3e-2a4c-4d8e-9f1a-7c3e2b1d0a960"],
    ids=repr,
)
async def test_bad_memory_ids_are_refused(service, memory_id):
    await service.create_memory("kept", SCOPE)
    calls = [
        service.get_memory(memory_id, SCOPE),
        service.update_memory(memory_id, SCOPE, fact="x"),
        service.delete_memory(scope=SCOPE, memory_id=memory_id),
        service.delete_memory(app_name=APP, user_id="u1", memory_id=memory_id),
        service.list_revisions(memory_id, SCOPE),
    ]
    if memory_id == "":  # ADK's "no id": delete_memory deletes nothing (see above)
        for delete in calls[2:4]:
            assert await delete is None
        calls = [*calls[:2], calls[4]]
    for call in calls:
        with pytest.raises(InputValidationError):
            await call
    assert await row_counts(service) == (1, 1)


@pytest.mark.parametrize(
    "token",
    [
        "garbage!",
        "YWJj",  # "abc": no separator
        "__58eA==",  # not UTF-8
        "bm90YWRhdGV8eA==",  # "notadate|x"
        "MjAyNC0wMS0wMXxub3QtYS11dWlk",  # "2024-01-01|not-a-uuid"
    ],
)
async def test_bad_page_tokens_and_sizes(service, token):
    await service.create_memory("kept", SCOPE)
    with pytest.raises(InputValidationError):
        await service.list_memories(SCOPE, page_token=token)
    for size in (0, 1001):
        with pytest.raises(InputValidationError):
            await service.list_memories(SCOPE, page_size=size)


@pytest.mark.parametrize("value", [-0.01, 1.01, math.nan, math.inf])
async def test_importance_and_confidence_outside_0_1_write_nothing(service, value):
    memory = await service.create_memory("kept", SCOPE, importance=0.5)
    for field in ("importance", "confidence"):
        with pytest.raises(InputValidationError):
            await service.create_memory("f", SCOPE, **{field: value})
        with pytest.raises(InputValidationError):
            await service.update_memory(memory.id, SCOPE, fact="changed", **{field: value})
    assert await row_counts(service) == (1, 1)
    assert await service.get_memory(memory.id, SCOPE) == memory
    for edge in (0.0, 1.0):
        await service.update_memory(memory.id, SCOPE, importance=edge, confidence=edge)


async def test_importance_and_confidence_round_trip_exactly(service):
    memory = await service.create_memory("f", SCOPE, importance=0.2, confidence=0.7)
    assert (memory.importance, memory.confidence) == (0.2, 0.7)
    stored = await service.get_memory(memory.id, SCOPE)
    assert (stored.importance, stored.confidence) == (0.2, 0.7)


@pytest.mark.parametrize(
    "fields",
    [
        {"topics": ["a\x00b"]},
        {"metadata": {"k": "a\x00"}},
        {"metadata": {"k": math.nan}},
        {"content": {"k": "\x00"}},
    ],
    ids=["topic-nul", "metadata-nul", "metadata-nan", "content-nul"],
)
async def test_unstorable_field_values_are_sanitised_or_rejected_never_half_written(
    service, fields
):
    try:
        await service.create_memory("f", SCOPE, **fields)
    except InputValidationError:
        assert await row_counts(service) == (0, 0)


# ------------------------------------------------------------------------------- embeddings


async def test_embedder_dimension_mismatch_raises_at_first_use(make_memory_service):
    schema = "adk_memory_dims"
    bootstrap = make_memory_service(schema=schema)
    await bootstrap.database.run(
        lambda conn: conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    )
    first = make_memory_service(schema=schema, embedder=HashEmbedder(64))
    memory = await first.create_memory("stored with 64 dimensions", SCOPE)

    second = make_memory_service(schema=schema, embedder=HashEmbedder(32))  # builds fine
    with pytest.raises(EmbeddingDimensionError, match="64"):
        await second.create_memory("would be 32", SCOPE)
    with pytest.raises(EmbeddingDimensionError):
        await second.get_memory(memory.id, SCOPE)  # and on every later call
    with pytest.raises(EmbeddingDimensionError):
        await second.retrieve_memories(SCOPE, search_query="stored")
    assert [m.fact for m in (await first.list_memories(SCOPE)).memories] == [memory.fact]
    # The 64-dimension service, and one without an embedder, keep working.
    assert (await first.retrieve_memories(SCOPE, search_query="stored"))[0].memory.id == memory.id
    plain = make_memory_service(schema=schema)
    assert await plain.get_memory(memory.id, SCOPE) == memory
    await bootstrap.database.run(lambda conn: conn.execute(f"DROP SCHEMA {schema} CASCADE"))


def test_an_object_that_is_not_an_embedder_is_refused():
    with pytest.raises(InputValidationError):
        PostgresMemoryService(embedder=object(), schema=SCHEMA)  # type: ignore[arg-type]


# ------------------------------------------------------------------- raw-events mode (ADK)

T0 = 1_750_000_000.5


def event(eid: str, author: str, *parts: types.Part, partial: bool | None = None, at: float = 0):
    return Event(
        id=eid,
        invocation_id="inv-" + eid,
        author=author,
        content=types.Content(role="user" if author == "user" else "model", parts=list(parts))
        if parts
        else None,
        partial=partial,
        timestamp=T0 + at,
    )


def text(value: str) -> types.Part:
    return types.Part(text=value)


def session_with(*events: Event, user_id: str = "u1", session_id: str = "s1") -> Session:
    return Session(id=session_id, app_name=APP, user_id=user_id, events=list(events))


RAW_EVENTS = (
    event("e1", "user", text("I live in Lisbon."), at=1),
    event("e2", "assistant", text("Noted, Lisbon."), at=2),
    event("e3", "assistant", types.Part(text="thinking hard", thought=True), at=3),
    event("e4", "assistant", types.Part.from_function_call(name="lookup", args={"q": 1}), at=4),
    event(
        "e5",
        "assistant",
        types.Part.from_function_response(name="lookup", response={"r": "x"}),
        at=5,
    ),
    event("e6", "assistant", text("partial chunk"), partial=True, at=6),
    event(
        "e7",
        "assistant",
        types.Part(text="hidden thought", thought=True),
        text("Visible answer."),
        types.Part.from_function_call(name="lookup", args={}),
        at=7,
    ),
    event("e8", "assistant", at=8),  # no content
    event("e9", "user", text("   "), at=9),  # blank
)


async def test_add_session_stores_one_memory_per_event_with_text(service):
    await service.add_session_to_memory(session_with(*RAW_EVENTS))
    memories = (await service.list_memories(SCOPE)).memories
    by_event = {m.metadata["event_id"]: m for m in memories}
    assert set(by_event) == {"e1", "e2", "e7"}
    assert by_event["e1"].fact == "I live in Lisbon."
    assert by_event["e7"].fact == "Visible answer."
    assert by_event["e1"].source_type is SourceType.USER_INPUT
    assert by_event["e2"].source_type is SourceType.AGENT
    assert by_event["e2"].metadata == {
        "author": "assistant",
        "event_id": "e2",
        "invocation_id": "inv-e2",
        "session_id": "s1",
    }
    assert by_event["e1"].source_session_id == "s1"
    assert by_event["e1"].source_event_ids == ["e1"]
    assert by_event["e1"].create_time == datetime.fromtimestamp(T0 + 1, timezone.utc)
    assert by_event["e1"].scope == SCOPE


async def test_adding_a_session_again_adds_only_new_events_and_never_revives(service):
    session = session_with(*RAW_EVENTS[:2])
    await service.add_session_to_memory(session)
    await service.add_session_to_memory(session)
    assert sorted(await facts(service, SCOPE)) == ["I live in Lisbon.", "Noted, Lisbon."]

    lisbon = next(m for m in (await service.list_memories(SCOPE)).memories if "live" in m.fact)
    await service.delete_memory(app_name=APP, user_id="u1", memory_id=lisbon.id)
    session.events.append(event("e10", "user", text("I moved to Porto."), at=10))
    await service.add_session_to_memory(session)
    assert sorted(await facts(service, SCOPE)) == ["I moved to Porto.", "Noted, Lisbon."]
    assert [r.action for r in await service.list_revisions(lisbon.id, SCOPE)] == [
        MemoryAction.CREATED,
        MemoryAction.DELETED,
    ]
    # The same events through add_events_to_memory are recognised as well.
    await service.add_events_to_memory(
        app_name=APP, user_id="u1", events=session.events, session_id="s1"
    )
    assert len(await facts(service, SCOPE)) == 2
    assert await row_counts(service) == (2, 4)

    # The same event ids in another session, or for another user, are other memories.
    await service.add_session_to_memory(session_with(*RAW_EVENTS[:1], session_id="s2"))
    await service.add_session_to_memory(session_with(*RAW_EVENTS[:1], user_id="u2"))
    assert len(await facts(service, SCOPE)) == 3
    assert await facts(service, OTHER) == ["I live in Lisbon."]


async def test_add_events_to_memory_with_custom_metadata_and_no_session(service):
    await service.add_events_to_memory(
        app_name=APP,
        user_id="u1",
        events=[RAW_EVENTS[0], RAW_EVENTS[2]],
        custom_metadata={"channel": "sms"},
    )
    [memory] = (await service.list_memories(SCOPE)).memories
    assert memory.metadata["channel"] == "sms"
    assert "session_id" not in memory.metadata
    assert memory.source_session_id is None


async def test_add_session_refuses_non_sessions(service):
    with pytest.raises(InputValidationError):
        await service.add_session_to_memory({"id": "s1"})  # type: ignore[arg-type]


# ------------------------------------------------------------- add_memory and search_memory


async def test_add_memory_and_search_memory_round_trip(embedded):
    given_id = str(uuid.uuid4())
    await embedded.add_memory(
        app_name=APP,
        user_id="u1",
        memories=[
            MemoryEntry(
                id=given_id,
                author="user",
                content=types.Content(parts=[text("My cat is called"), text("Miso.")]),
                custom_metadata={"topics": ["pets"], "origin": "crm"},
            ),
            MemoryEntry(id="not-a-uuid", content=types.Content(parts=[text("Coffee, black.")])),
        ],
        custom_metadata={"batch": 7, "origin": "default"},
    )
    # An entry's id names the memory per scope: adding the same entries again changes nothing.
    listed = (await embedded.list_memories(SCOPE)).memories
    cat = next(m for m in listed if m.fact.startswith("My cat"))
    assert cat.id != given_id
    assert cat.fact == "My cat is called\nMiso."
    assert cat.topics == ["pets"]
    assert cat.metadata == {"batch": 7, "origin": "crm", "author": "user"}
    assert cat.source_type is SourceType.BOOTSTRAPPED
    coffee = next(m for m in listed if m.id != cat.id)
    assert uuid.UUID(coffee.id) and coffee.metadata == {"batch": 7, "origin": "default"}

    response = await embedded.search_memory(app_name=APP, user_id="u1", query="cat Miso")
    entry = response.memories[0]
    assert isinstance(entry, MemoryEntry)
    assert entry.id == cat.id
    # What ADK's memory tools show a model is neutralised: one line (see memory/rendering.py).
    assert [p.text for p in entry.content.parts] == ["My cat is called Miso."]
    assert entry.author == "user"
    when = datetime.fromisoformat(entry.timestamp)
    assert when.utcoffset() == timedelta(0) and entry.timestamp.endswith("+00:00")
    assert when == cat.update_time
    meta = entry.custom_metadata
    assert meta["topics"] == ["pets"]
    assert meta["scope"] == SCOPE
    assert isinstance(meta["score"], float) and meta["score"] > 0
    assert set(meta) == {"topics", "scope", "score"}  # what reaches a model: no internals
    # Adding the same entries again changes nothing (their ids name the same memories).
    await embedded.add_memory(
        app_name=APP,
        user_id="u1",
        memories=[
            MemoryEntry(id=given_id, content=types.Content(parts=[text("My cat is called")]))
        ],
    )
    assert len((await embedded.list_memories(SCOPE)).memories) == 2
    # Another user finds nothing.
    assert (
        await embedded.search_memory(app_name=APP, user_id="u2", query="cat Miso")
    ).memories == []


async def test_search_memory_returns_the_configured_top_k(make_service):
    service = make_service(config=text_mode(top_k=2))
    for i in range(4):
        await service.create_memory(f"note {i} about rain", SCOPE)
    response = await service.search_memory(app_name=APP, user_id="u1", query="rain")
    assert len(response.memories) == 2


async def test_search_memory_with_a_blank_query_finds_nothing(service):
    """A model calling load_memory(query="") must not receive the whole memory bank."""
    for i in range(5):
        await service.create_memory(f"note {i}", SCOPE)
    for query in ("", "  "):
        response = await service.search_memory(app_name=APP, user_id="u1", query=query)
        assert response.memories == []


async def test_add_memory_with_ids_of_another_users_memories_is_not_silently_lost(service):
    await service.create_memory("shared team fact about deadlines", SCOPE)
    entries = (await service.search_memory(app_name=APP, user_id="u1", query="deadlines")).memories
    assert len(entries) == 1
    try:
        await service.add_memory(app_name=APP, user_id="u2", memories=entries)
    except (InputValidationError, ValueError):
        return  # refusing loudly is acceptable too
    assert await facts(service, OTHER) == ["shared team fact about deadlines"]
    assert await facts(service, SCOPE) == ["shared team fact about deadlines"]


async def test_add_memory_refuses_what_is_not_a_memory_entry(service):
    with pytest.raises(InputValidationError):
        await service.add_memory(app_name=APP, user_id="u1", memories=[{"text": "x"}])  # type: ignore[list-item]
    assert await row_counts(service) == (0, 0)


async def test_a_deleted_event_memory_stays_deleted_after_its_revisions_expire(make_service):
    config = MemoryBankConfig(ttl=TtlConfig(revision_ttl=timedelta(seconds=0.3)))
    service = make_service(config=config)
    session = session_with(RAW_EVENTS[0])
    await service.add_session_to_memory(session)
    [memory] = (await service.list_memories(SCOPE)).memories
    await service.delete_memory(app_name=APP, user_id="u1", memory_id=memory.id)
    await asyncio.sleep(0.4)
    await service.sweep_expired()
    await service.add_session_to_memory(session)
    assert await facts(service, SCOPE) == []
    # What is left of the history is a tombstone: the deletion, without the fact.
    [tombstone] = await service.list_revisions(memory.id, SCOPE)
    assert (tombstone.action, tombstone.fact) == (MemoryAction.DELETED, None)


async def test_hostile_queries_and_ill_typed_arguments_get_typed_errors(service):
    """What a user types reaches retrieval as the query (ADK's load_memory): NUL and lone
    surrogates are sanitised as in facts, never a driver error mid-turn. Ill-typed arguments
    are ADK's InputValidationError, and nothing is written."""
    await service.create_memory("the user likes tea", SCOPE)
    for query in ("tea\x00", "tea \ud800", "\x00"):
        found = await service.retrieve_memories(SCOPE, search_query=query)
        assert all(r.memory.fact == "the user likes tea" for r in found)
    found = await service.search_memory(app_name=APP, user_id="u1", query="tea\x00")
    assert [e.content.parts[0].text for e in found.memories] == ["the user likes tea"]
    bad_calls = [
        service.retrieve_memories(SCOPE, search_query="tea", top_k="3"),
        service.retrieve_memories(SCOPE, search_query="tea", top_k=True),
        service.retrieve_memories(SCOPE, search_query=3),
        service.list_memories(SCOPE, page_size="3"),
        service.create_memory("x", SCOPE, metadata={"a": object()}),
        service.list_quarantined(limit=0),
    ]
    for call in bad_calls:
        with pytest.raises(InputValidationError):
            await call
    assert await row_counts(service) == (1, 1)
