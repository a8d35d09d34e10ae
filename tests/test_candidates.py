"""Consolidation's candidates (`MemoryStore.candidates`): the existing memories similar to every
fact a job extracted come from one statement, and are the ones a search per fact (the hybrid
retrieval statement, similarity only) finds, in its order: by fact, then by similarity, each
memory once. Full-text (no embedder), exact covered vectors (64 dimensions), quantised vectors
re-ranked (gemini-embedding-001's 1,536 and 3,072) and exact vectors without an index (8,192)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import pytest

from adk_memory import MemoryBankConfig
from adk_memory.config import GenerationConfig
from adk_memory.db.engine import Database
from adk_memory.memory.scope import scope_key
from adk_memory.memory.store import MemoryStore, Search
from adk_memory.testing import HashEmbedder, ScriptedLlm

SCOPE = {"app_name": "app", "user_id": "u1"}
OTHER = {"app_name": "app", "user_id": "u2"}
MEMORIES = [
    "The user lives in Paris.",
    "The user drinks green tea every morning.",
    "The user has a cat called Tom.",
    "The user works as a nurse in Lyon.",
    "The user plays the violin.",
    "The user is allergic to peanuts.",
]
FACTS = [
    "The user moved to Lyon and still works as a nurse.",
    "The user drinks black tea now.",
    "The user lives in Paris with a cat.",
    "The user drinks green tea.",
]
MODES = {
    "full-text": None,
    "covered vectors": 64,
    "quantized vectors": 1536,
    "quantized 3072": 3072,
    "exact vectors": 8192,
}


@asynccontextmanager
async def statements(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[list[str]]:
    """The statements `Database.run` sends while the block runs (asyncpg's query log: the
    database is real, the calls only observed)."""
    sent: list[str] = []
    run = Database.run

    async def logged(self: Database, statement: Any) -> Any:
        async def observed(conn: asyncpg.Connection) -> Any:
            def log(query: Any) -> None:
                sent.append(query.query)

            conn.add_query_logger(log)
            try:
                return await statement(conn)
            finally:
                conn.remove_query_logger(log)

        return await run(self, observed)

    with monkeypatch.context() as patch:
        patch.setattr(Database, "run", logged)
        yield sent
    await asyncio.sleep(0)  # asyncpg calls its loggers soon after each statement, not in it


def _schema(dimensions: int) -> str:
    """A mode's own schema above 64 dimensions: the test schema's vectors are 64 wide."""
    return f"adk_memory_test_candidates_{dimensions}"


@pytest.fixture(params=list(MODES))
async def seeded(request, make_memory_service):
    """(service, its scripted model) with `MEMORIES` stored in the scope (and another user's
    memory, which must never be a candidate), in the retrieval mode of the parameter."""
    dimensions = MODES[request.param]
    llm = ScriptedLlm()
    options: dict[str, Any] = {
        "llm": llm,
        "run_worker": False,
        "config": MemoryBankConfig(generation=GenerationConfig(similar_memories=2)),
    }
    if dimensions is not None:
        options["embedder"] = HashEmbedder(dimensions)
    own = dimensions is not None and dimensions > 64
    drop = f"DROP SCHEMA IF EXISTS {_schema(dimensions or 0)} CASCADE"
    if own:
        options["schema"] = _schema(dimensions or 0)
        await make_memory_service().database.run(lambda conn: conn.execute(drop))
    service = make_memory_service(**options)
    for fact in MEMORIES:
        await service.create_memory(fact, SCOPE)
    await service.create_memory("The user drinks black tea now.", OTHER)
    yield service, llm
    await service.close()
    if own:
        await make_memory_service().database.run(lambda conn: conn.execute(drop))


async def _vectors(service: Any, texts: list[str]) -> list[list[float]] | None:
    embedder = service.embedder
    return None if embedder is None else await embedder.embed(texts, task="query")


async def _per_fact(
    store: MemoryStore, texts: list[str], vectors: list[list[float]] | None, limit: int
) -> list[str]:
    """What consolidation was shown before: one retrieval per fact, similarity only."""
    found: dict[str, None] = {}
    for i, text in enumerate(texts):
        rows = await store.retrieve(
            Search(
                scope_key(SCOPE),
                query_text=text,
                query_embedding=vectors[i] if vectors else None,
                top_k=limit,
                candidates=limit,
                rrf_k=60,
                weights=(1.0, 0.0, 0.0),
                half_life_seconds=86_400.0,
                flt=None,
                use_text=vectors is None,
            )
        )
        found.update((memory.id, None) for memory, _, _ in rows)
    return list(found)


@pytest.mark.parametrize("per_fact", [1, 2, 10])
async def test_one_statement_finds_what_a_search_per_fact_finds(
    seeded: Any, monkeypatch: pytest.MonkeyPatch, per_fact: int
) -> None:
    service, _ = seeded
    store = await service._parts.ready()
    vectors = await _vectors(service, FACTS)
    async with statements(monkeypatch) as sent:
        found = await store.candidates(
            scope_key(SCOPE), facts=FACTS, embeddings=vectors, per_fact=per_fact
        )

    assert len([s for s in sent if "set_config" not in s]) == 1  # one statement for all facts
    ids = [memory.id for memory in found]
    assert ids == await _per_fact(store, FACTS, vectors, per_fact)
    assert len(set(ids)) == len(ids) <= per_fact * len(FACTS)
    assert {memory.fact for memory in found} <= set(MEMORIES)  # never another user's
    if per_fact == 10:  # every memory shares "the user" (full-text) or is some distance away
        assert len(found) == len(MEMORIES)


async def test_no_facts_no_statement(seeded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store = await seeded[0]._parts.ready()
    async with statements(monkeypatch) as sent:
        assert await store.candidates(scope_key(SCOPE), facts=[], embeddings=None, per_fact=5) == []
    assert sent == []


async def test_a_job_looks_its_candidates_up_once(
    seeded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the job: four facts, one candidate statement (no retrieval per fact), and the
    consolidation model is shown exactly those candidates, each once."""
    service, llm = seeded
    llm.add(json.dumps({"operations": []}))  # the consolidation: nothing to change
    store = await service._parts.ready()
    expected = await store.candidates(
        scope_key(SCOPE), facts=FACTS, embeddings=await _vectors(service, FACTS), per_fact=2
    )
    async with statements(monkeypatch) as sent:
        await service.generate_memories(facts=FACTS, scope=SCOPE)
        assert await service.worker.run_until_idle() == 1

    assert len([s for s in sent if "WITH ORDINALITY AS f(fact" in s]) == 1
    assert not [s for s in sent if "fused AS" in s]  # the retrieval statement never ran
    [request] = llm.requests
    shown = " ".join(p.text for c in request.contents for p in c.parts or [] if p.text)
    assert re.findall(r"id: ([0-9a-f-]{36})", shown) == [m.id for m in expected]
