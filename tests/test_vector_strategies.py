"""Vectors of every size through the service: gemini-embedding-001's 1,536 and 3,072 dimensions
(the `quantized` strategy: binary-quantised vectors in a covering index, the nearest re-ranked
by their full-precision vectors) and 8,192 (the `exact` strategy, no index) store, search and
find consolidation candidates; a scope no bigger than the re-ranked pool is searched exactly
(the exact top k, compared with distances computed here); a bigger one still finds a memory by
its own vector and never another scope's; the settled plan is index-only.

On the real test server, each dimension in a schema of its own (dropped afterwards): the
shared test schema's vectors are 64 dimensions wide.
"""

from __future__ import annotations

import math
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from conftest import generic_plan

from adk_memory import MemoryBankConfig, MemoryFilter, PostgresMemoryService
from adk_memory.config import RetrievalConfig
from adk_memory.db.vectors import EXACT, QUANTIZED, vector_strategy
from adk_memory.memory import MemoryFact
from adk_memory.memory.store import retrieval as statements
from adk_memory.memory.store.retrieval import RERANKED_MIN, _retrieve_statement
from adk_memory.testing import HashEmbedder

SCOPE = {"app_name": "app", "user_id": "vera"}
OTHER = {"app_name": "app", "user_id": "otto"}
WORDS = (
    "tea", "coffee", "jazz", "opera", "hiking", "cycling", "python", "rust", "sushi", "pasta",
    "chess", "tennis", "garden", "paint", "yoga", "swim", "ski", "camp", "bake", "wine",
    "cheese", "cat", "dog", "podcast", "novel", "poem", "film", "museum", "star", "japan",
    "italy", "mexico", "kenya", "norway", "peru", "guitar", "piano", "violin", "bird", "knit",
    "pottery", "surf", "climb",
)  # fmt: skip
RELEVANCE_ONLY = RetrievalConfig(mode="vector", recency_weight=0.0, importance_weight=0.0)


def facts(count: int, seed: int) -> list[str]:
    """`count` distinct facts of four random words each (a fixed seed: the same every run)."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < count:
        out["The user likes " + " ".join(rng.sample(WORDS, 4)) + "."] = None
    return list(out)


def distance(a: list[float], b: list[float]) -> float:
    """Cosine distance, as pgvector's `<=>` computes it."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return 1.0 - dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


SIZES = (1536, 3072, 8192)


@pytest.fixture
async def sized(
    make_memory_service: Callable[..., PostgresMemoryService],
) -> AsyncIterator[Callable[..., PostgresMemoryService]]:
    """Makes services with a `HashEmbedder(dimensions)` in a schema of that dimension's own
    (`SIZES`' schemas are dropped before and after)."""
    made: list[PostgresMemoryService] = []

    async def drop_all() -> None:
        for dimensions in SIZES:
            sql = f"DROP SCHEMA IF EXISTS adk_memory_test_v{dimensions} CASCADE"
            await make_memory_service().database.run(lambda conn, sql=sql: conn.execute(sql))

    def make(dimensions: int, **options: Any) -> PostgresMemoryService:
        service = make_memory_service(
            schema=f"adk_memory_test_v{dimensions}",
            embedder=HashEmbedder(dimensions),
            run_worker=False,
            **options,
        )
        made.append(service)
        return service

    await drop_all()
    yield make
    for service in made:
        await service.close()
    await drop_all()


def test_gemini_sizes_are_quantized_and_the_biggest_are_exact() -> None:
    assert [vector_strategy(d) for d in SIZES] == [QUANTIZED, QUANTIZED, EXACT]


@pytest.mark.parametrize("dimensions", SIZES)
async def test_a_scope_no_bigger_than_the_pool_is_searched_exactly(
    sized: Callable[..., PostgresMemoryService], dimensions: int
) -> None:
    """Every memory of the scope is re-ranked, so the results are the exact top k, with their
    exact distances; filters narrow the same search; another scope's memories never come."""
    service = sized(dimensions, config=MemoryBankConfig(retrieval=RELEVANCE_ONLY))
    texts = facts(60, seed=dimensions)
    topics = ["even" if i % 2 == 0 else "odd" for i in range(len(texts))]
    stored = await service.create_memories(
        [MemoryFact(text, topics=[topic]) for text, topic in zip(texts, topics, strict=True)],
        SCOPE,
    )
    await service.create_memories(texts[:10], OTHER)  # the same facts, in another scope
    assert len(stored) < RERANKED_MIN
    embedder = HashEmbedder(dimensions)
    vectors = dict(zip((m.id for m in stored), await embedder.embed(texts), strict=True))
    topic_of = {m.id: topic for m, topic in zip(stored, topics, strict=True)}

    for query in ("tea jazz python chess", "The user likes wine cheese film star", texts[7]):
        [wanted] = await embedder.embed([query])
        exact = sorted(distance(v, wanted) for v in vectors.values())
        found = await service.retrieve_memories(SCOPE, search_query=query, top_k=10)
        assert {r.memory.scope["user_id"] for r in found} == {"vera"}
        got = [distance(vectors[r.memory.id], wanted) for r in found]
        assert got == pytest.approx(exact[:10], abs=1e-6)  # the exact top 10, in order
        assert [r.distance for r in found] == pytest.approx(got, abs=1e-5)

        only = MemoryFilter(topics=["odd"])
        filtered = await service.retrieve_memories(SCOPE, search_query=query, top_k=5, filter=only)
        odd = sorted(distance(v, wanted) for i, v in vectors.items() if topic_of[i] == "odd")
        assert {topic_of[r.memory.id] for r in filtered} == {"odd"}
        assert [distance(vectors[r.memory.id], wanted) for r in filtered] == pytest.approx(
            odd[:5], abs=1e-6
        )
    # A stored fact's own vector finds it first, at distance 0.
    first = (await service.retrieve_memories(SCOPE, search_query=texts[7], top_k=1))[0]
    assert first.memory.id == stored[7].id and first.distance == pytest.approx(0.0, abs=1e-6)


async def test_a_scope_bigger_than_the_pool_finds_a_memory_by_its_own_vector(
    sized: Callable[..., PostgresMemoryService], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a pool smaller than the scope only the nearest bit vectors are re-ranked: a memory's
    own vector (Hamming distance 0) is still found first, results come nearest first, all of
    the scope."""
    monkeypatch.setattr(statements, "RERANKED_MIN", 8)  # before the service builds its statements
    retrieval = RELEVANCE_ONLY.model_copy(update={"candidates": 4})
    service = sized(1536, config=MemoryBankConfig(retrieval=retrieval))
    texts = facts(80, seed=3)
    stored = await service.create_memories(texts, SCOPE)
    await service.create_memories(texts, OTHER)
    for n in (0, 33, 79):
        found = await service.retrieve_memories(SCOPE, search_query=texts[n], top_k=4)
        assert found[0].memory.id == stored[n].id
        assert found[0].distance == pytest.approx(0.0, abs=1e-6)
        assert [r.distance for r in found] == sorted(r.distance or 0.0 for r in found)
        assert {r.memory.scope["user_id"] for r in found} == {"vera"}


async def test_the_settled_plan_reads_the_bit_vectors_from_the_covering_index(
    sized: Callable[..., PostgresMemoryService],
) -> None:
    """Under a generic plan (where a parameter is no constant) the query is quantised once, in
    an InitPlan, and the scope's bit vectors come from the covering index alone."""
    service = sized(1536)
    await service.create_memory("the user likes jazz", SCOPE)  # fixes the store's vectors
    statement = _retrieve_statement(service.database.schema, strategy=QUANTIZED, filtered=False)
    plan = await generic_plan(service.database, statement)
    assert "Index Only Scan using memories_scope_bits" in plan
    assert "InitPlan" in plan and "binary_quantize" not in plan.split("InitPlan")[0]
