"""The retrieval-quality harness: dataset validation, exact metrics on a dataset small enough to
rank by hand, isolation and clean-up, and the shipped dataset end to end on the real database."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from math import ceil
from pathlib import Path
from typing import Any, Literal

import pytest
from conftest import TEST_SCHEMA as SCHEMA
from sqlalchemy.ext.asyncio import AsyncEngine

from adk_memory import MemoryBankConfig, PostgresMemoryService, RetrievalConfig
from adk_memory.eval import (
    DatasetError,
    RetrievalDataset,
    evaluate,
    format_report,
    load_dataset,
    load_synthetic_dataset,
    parse_dataset,
    recall_at_k,
    reciprocal_rank,
)
from adk_memory.eval.retrieval import EMBED_BATCH_SIZE, EVAL_APP_PREFIX
from adk_memory.testing import HashEmbedder

MakeService = Callable[..., PostgresMemoryService]


@pytest.fixture
def make_service(make_memory_service: MakeService) -> MakeService:
    """Memory services on conftest's emptied test tables (their vector dimension, 64, kept)."""
    return make_memory_service


A = {"app_name": "eval-test", "user_id": "a"}
B = {"app_name": "eval-test", "user_id": "b"}

# Ranked by hand for full-text search (english stemming, OR over the query's words):
#   q-peanut   "peanuts"               -> a-peanut                  R@1 1    R@3 1  RR 1
#   q-two      "dog bicycle"           -> a-dog, a-bike (one word   R@1 0.5  R@3 1  RR 1
#                                         each: either order)
#   q-second   "allergic peanuts dog"  -> a-peanut (2 words), a-dog R@1 0    R@3 1  RR 0.5
#   q-none     "volcano"               -> nothing                   R@1 0    R@3 0  RR 0
#   q-b        "peanuts" in scope B    -> b-peanut only (a-peanut   R@1 1    R@3 1  RR 1
#                                         is in another scope)
TINY: dict[str, Any] = {
    "name": "tiny",
    "memories": [
        {"id": "a-dog", "scope": A, "fact": "The user's dog is called Biscuit."},
        {"id": "a-bike", "scope": A, "fact": "The user cycles to work on a red bicycle."},
        {
            "id": "a-peanut",
            "scope": A,
            "fact": "The user is allergic to peanuts.",
            "topics": ["health"],
            "importance": 0.5,
        },
        {"id": "b-peanut", "scope": B, "fact": "Peanuts make the user sick."},
    ],
    "queries": [
        {"id": "q-peanut", "scope": A, "query": "peanuts", "relevant": ["a-peanut"]},
        {"id": "q-two", "scope": A, "query": "dog bicycle", "relevant": ["a-dog", "a-bike"]},
        {"id": "q-second", "scope": A, "query": "allergic peanuts dog", "relevant": ["a-dog"]},
        {"id": "q-none", "scope": A, "query": "volcano", "relevant": ["a-bike"]},
        {"id": "q-b", "scope": B, "query": "peanuts", "relevant": ["b-peanut"]},
    ],
}


def tiny() -> RetrievalDataset:
    return parse_dataset(TINY)


def factory(make: MakeService, embedder: HashEmbedder | None = None) -> Any:
    """A service factory on the test tables (the 64-dimension HashEmbedder they are fixed to)."""

    def build(config: MemoryBankConfig) -> PostgresMemoryService:
        return make(config=config, embedder=embedder)

    return build


def problems_of(data: dict[str, Any]) -> str:
    with pytest.raises(DatasetError) as caught:
        parse_dataset(data, source="bad.json")
    return str(caught.value)


def edited(**changes: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(TINY))
    data.update(changes)
    return data


# ---------------------------------------------------------------------------------- dataset


def test_field_problems_are_all_reported_with_their_locations():
    memories = json.loads(json.dumps(TINY["memories"]))
    memories[0]["fact"] = "   "
    memories[1]["importance"] = 1.5
    memories[2]["scope"] = {"app_name": "x*"}
    queries = json.loads(json.dumps(TINY["queries"]))
    queries[0]["relevent"] = queries[0].pop("relevant")
    queries[1]["relevant"] = []
    message = problems_of(edited(memories=memories, queries=queries))
    assert message.startswith("bad.json: invalid retrieval dataset (6 problems):")
    assert "memories[0].fact: must not be empty or blank" in message
    assert "memories[1].importance: Input should be less than or equal to 1" in message
    assert "memories[2].scope: Scope value 'x*' contains '*' or NUL." in message
    assert "queries[0].relevant: Field required" in message
    assert "queries[0].relevent: Extra inputs are not permitted" in message
    assert "queries[1].relevant: List should have at least 1 item" in message


def test_cross_references_are_checked():
    memories = [*TINY["memories"], {"id": "a-dog", "scope": A, "fact": "A second dog."}]
    queries = [
        *TINY["queries"],
        {"id": "q-b", "scope": B, "query": "again", "relevant": ["b-peanut"]},
        {"id": "q-x", "scope": A, "query": "x", "relevant": ["nope", "b-peanut", "a-dog", "a-dog"]},
    ]
    message = problems_of(edited(memories=memories, queries=queries))
    assert "memories[4].id: duplicate memory id 'a-dog'" in message
    assert "queries[5].id: duplicate query id 'q-b'" in message
    assert "queries[6].relevant[0]: no memory has id 'nope'" in message
    assert (
        "queries[6].relevant[1]: memory 'b-peanut' is in scope "
        '{"app_name":"eval-test","user_id":"b"}, not in the query\'s scope '
        '{"app_name":"eval-test","user_id":"a"}, so it can never be retrieved' in message
    )
    assert "queries[6].relevant[3]: 'a-dog' is listed twice" in message
    assert "(5 problems)" in message


def test_other_shape_problems():
    assert "memories: List should have at least 1 item" in problems_of(edited(memories=[]))
    assert "name: must not be empty or blank" in problems_of(edited(name=""))
    too_many = {f"k{i}": "v" for i in range(6)}
    message = problems_of(edited(memories=[{"id": "m", "scope": too_many, "fact": "f"}]))
    assert "memories[0].scope: A scope has 1 to 5 keys" in message
    long_fact = edited(memories=[{"id": "m", "scope": A, "fact": "x" * 10_001}])
    assert "a fact is at most 10000 characters" in problems_of(long_fact)
    assert "Input should be a valid dictionary" in problems_of([])  # type: ignore[arg-type]


def test_load_dataset_reads_files_and_rejects_bad_json(tmp_path: Path):
    good = tmp_path / "tiny.json"
    good.write_text(json.dumps(TINY), encoding="utf-8")
    assert load_dataset(good) == tiny()
    assert load_dataset(str(good)).name == "tiny"
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x",', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad\.json: not valid JSON: .*line 1"):
        load_dataset(bad)
    with pytest.raises(FileNotFoundError):
        load_dataset(tmp_path / "missing.json")


def test_the_shipped_dataset_is_valid_package_data():
    dataset = load_synthetic_dataset()
    assert dataset.name == "synthetic-personal-assistant"
    assert len(dataset.memories) == 60
    assert len(dataset.queries) == 30
    assert {s["user_id"] for s in dataset.scopes()} == {"maya", "daniel", "priya", "tom"}


# ---------------------------------------------------------------------------------- metrics


def test_recall_and_reciprocal_rank():
    ranked = ["x", "a", "y", "b"]
    assert recall_at_k(ranked, ["a", "b"], 1) == 0.0
    assert recall_at_k(ranked, ["a", "b"], 2) == 0.5
    assert recall_at_k(ranked, ["a", "b"], 10) == 1.0
    assert recall_at_k([], ["a"], 3) == 0.0
    assert reciprocal_rank(ranked, ["b", "a"]) == 0.5
    assert reciprocal_rank(ranked, ["z"]) == 0.0
    with pytest.raises(ValueError):
        recall_at_k(ranked, [], 1)


# ------------------------------------------------------------------------------- evaluation


async def test_exact_figures_on_a_hand_ranked_dataset(make_service: MakeService):
    report = await evaluate(factory(make_service), tiny(), k_values=(1, 3))
    text = report.mode("text")
    assert text.recall == {1: pytest.approx(2.5 / 5), 3: pytest.approx(4 / 5)}
    assert text.mrr == pytest.approx(3.5 / 5)
    ranked = {q.query_id: q.ranked for q in text.queries}
    assert ranked["q-peanut"] == ["a-peanut"]
    assert sorted(ranked["q-two"]) == ["a-bike", "a-dog"]
    assert ranked["q-second"] == ["a-peanut", "a-dog"]
    assert ranked["q-none"] == []
    assert ranked["q-b"] == ["b-peanut"]
    assert [m.mode for m in report.modes] == ["text"]
    assert set(report.skipped) == {"vector", "hybrid"}
    assert report.embedder is None
    table = format_report(report)
    assert "text  0.500  0.800  0.700" in table
    assert "skipped vector: needs an embedder" in table


async def test_vector_mode_returns_the_whole_small_scope(make_service: MakeService):
    # Every memory with a vector is a vector candidate: with 3 memories in scope A and 1 in B,
    # Recall@3 is 1 for every query that has a relevant memory, whatever the vectors.
    report = await evaluate(
        factory(make_service, HashEmbedder()), tiny(), k_values=(3,), modes=("vector",)
    )
    assert report.mode("vector").recall == {3: 1.0}
    assert all(len(q.ranked) == (1 if q.query_id == "q-b" else 3) for q in report.modes[0].queries)
    assert report.embedder == "HashEmbedder (64 dimensions)"
    assert report.notes == [
        "Recall@3: 5 of 5 queries search a scope of at most 3 memories, where returning "
        "everything scores 1."
    ]


async def test_real_memories_are_neither_seen_nor_touched_and_nothing_is_left(
    make_service: MakeService,
):
    real = make_service()
    mine = await real.create_memory("Peanuts, peanuts, peanuts everywhere.", A)
    report = await evaluate(factory(make_service), tiny(), k_values=(3,), modes=("text",))
    assert {q.query_id: q.ranked for q in report.modes[0].queries}["q-peanut"] == ["a-peanut"]
    everything = await real.list_memories(None)
    assert [m.id for m in everything.memories] == [mine.id]
    left = await real.database.run(
        lambda conn: conn.fetchval(
            f"SELECT count(*) FROM {SCHEMA}.memory_revisions WHERE scope->>'app_name' LIKE $1",
            f"{EVAL_APP_PREFIX}%",
        )
    )
    assert left == 0


async def test_a_given_service_is_reused_but_not_changed(make_service: MakeService):
    embedder = HashEmbedder()
    config = MemoryBankConfig(retrieval=RetrievalConfig(mode="hybrid", recency_weight=0.0))
    service = make_service(embedder=embedder, config=config)
    report = await evaluate(service, tiny(), k_values=(1, 3), modes=("vector", "text"))
    assert [m.mode for m in report.modes] == ["vector", "text"]
    assert service.config is config and service.embedder is embedder
    await service.create_memory("still usable", A)  # not closed


async def test_each_text_is_embedded_once_whatever_the_modes(make_service: MakeService):
    class Counting(HashEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.texts: list[tuple[str, str]] = []

        async def embed(
            self, texts: Sequence[str], *, task: Literal["document", "query"] = "document"
        ) -> list[list[float]]:
            self.texts.extend((task, t) for t in texts)
            return await super().embed(texts, task=task)

    embedder = Counting()
    dataset = tiny()
    await evaluate(factory(make_service, embedder), dataset)
    wanted = {("document", m.fact) for m in dataset.memories}
    wanted |= {("query", q.query) for q in dataset.queries}  # "peanuts" twice: embedded once
    assert sorted(embedder.texts) == sorted(wanted)


async def test_progress(make_service: MakeService):
    seen: list[tuple[str, str, int, int]] = []
    await evaluate(
        factory(make_service),
        tiny(),
        modes=("text",),
        progress=lambda *event: seen.append(event),
    )
    assert ("text", "load", 4, 4) in seen
    assert seen[-1] == ("text", "query", 5, 5)


async def test_a_memory_that_was_not_stored_fails_the_run(
    make_service: MakeService, engine: AsyncEngine
):
    # What another evaluation of the same dataset on the same schema would cause (it purges and
    # reloads the same scopes): figures computed on a partial load would be silently wrong.
    class Lossy(PostgresMemoryService):
        async def add_memory(self, **kwargs: Any) -> None:
            kwargs["memories"] = kwargs["memories"][1:]
            await super().add_memory(**kwargs)

    def lossy(config: MemoryBankConfig) -> PostgresMemoryService:
        return Lossy(engine=engine, schema=SCHEMA, config=config)

    with pytest.raises(RuntimeError, match=r"Stored 2 memories for the 3 .*'a-dog'.*'tiny'"):
        await evaluate(lossy, tiny(), modes=("text",))
    assert (await make_service().list_memories(None)).memories == []


async def test_arguments_are_checked(make_service: MakeService):
    with pytest.raises(ValueError, match="k_values must be integers between 1 and 100"):
        await evaluate(factory(make_service), tiny(), k_values=(0, 3))
    with pytest.raises(ValueError, match="Unknown retrieval mode 'bm25'"):
        await evaluate(factory(make_service), tiny(), modes=("bm25",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ignored the config"):
        await evaluate(lambda config: make_service(), tiny())


async def test_the_shipped_dataset_end_to_end(make_service: MakeService):
    dataset = load_synthetic_dataset()
    embedders = [HashEmbedder(), HashEmbedder()]
    report = await evaluate(factory(make_service, embedders[0]), dataset)
    again = await evaluate(factory(make_service, embedders[1]), dataset)
    # Cheap, measured without a clock: each run embeds the dataset once, in full batches,
    # whatever the number of modes and questions (no embedding call per question or mode).
    facts = {m.fact.strip() for m in dataset.memories}
    queries = {q.query for q in dataset.queries}
    one_pass = ceil(len(facts) / EMBED_BATCH_SIZE) + ceil(len(queries) / EMBED_BATCH_SIZE)
    assert [embedder.calls for embedder in embedders] == [one_pass, one_pass]
    assert [m.mode for m in report.modes] == ["text", "vector", "hybrid"]
    assert report.skipped == {} and report.notes == []
    # Reproducible: fixed ids break ties the same way on every run.
    assert [(m.recall, m.mrr) for m in again.modes] == [(m.recall, m.mrr) for m in report.modes]
    text, vector, hybrid = report.modes
    # Paraphrased questions: full text alone misses a good share of them...
    assert 0.3 < text.recall[10] < 0.9
    # ...and hybrid, even with lexical hash vectors, finds more than either list alone.
    assert hybrid.recall[10] >= max(text.recall[10], vector.recall[10])
    assert hybrid.mrr > 0.4
    for mode in report.modes:
        recalls = [mode.recall[k] for k in report.k_values]
        assert recalls == sorted(recalls) and 0 < mode.mrr <= 1
    print(format_report(report))
