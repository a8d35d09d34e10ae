"""The retrieval-quality harness: dataset validation, exact metrics on a dataset small enough to
rank by hand, isolation and clean-up, and the shipped dataset end to end on the real database."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from math import ceil
from pathlib import Path
from typing import Any, Literal

import pytest
from conftest import TEST_SCHEMA as SCHEMA
from sqlalchemy.ext.asyncio import AsyncEngine

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.config import RetrievalConfig
from adk_memory.eval import (
    DatasetError,
    ModeReport,
    QueryResult,
    RetrievalDataset,
    Scores,
    candidate_floors,
    evaluate,
    floor_scores,
    floor_tradeoff,
    format_report,
    load_dataset,
    load_long_conversations_dataset,
    load_synthetic_dataset,
    parse_dataset,
    recall_at_k,
    recall_by,
    reciprocal_rank,
    scores_by,
)
from adk_memory.eval.retrieval import EMBED_BATCH_SIZE, EVAL_APP_PREFIX
from adk_memory.memory.guard import NoGuard
from adk_memory.testing import HashEmbedder

MakeService = Callable[..., PostgresMemoryService]
ROOT = Path(__file__).resolve().parent.parent


CATEGORIES = {"single-hop", "multi-hop", "temporal", "paraphrase", "knowledge-update", "no-answer"}
"""The long-conversation set's question categories."""


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


def factory(make: MakeService, embedder: HashEmbedder | None = None, **options: Any) -> Any:
    """A service factory on the test tables (the 64-dimension HashEmbedder they are fixed to)."""

    def build(config: MemoryBankConfig) -> PostgresMemoryService:
        return make(config=config, embedder=embedder, **options)

    return build


def script(*args: str) -> subprocess.CompletedProcess[str]:
    """A script of `benchmarks/` run on this checkout's package."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


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


def test_a_query_without_relevant_memories_must_be_marked_unanswerable():
    marked = {"id": "q-x", "scope": A, "query": "volcano", "relevant": [], "unanswerable": True}
    dataset = parse_dataset(edited(queries=[*TINY["queries"], marked]))
    assert dataset.queries[-1].unanswerable and not dataset.queries[0].unanswerable
    queries = [
        {**TINY["queries"][0], "relevant": []},
        {**TINY["queries"][1], "unanswerable": True},
        {**TINY["queries"][2], "unanswerable": "yes please"},
        {**TINY["queries"][3], "no_answer": True},
    ]
    message = problems_of(edited(queries=queries))
    assert (
        "queries[0].relevant: List should have at least 1 item (or mark a question no memory "
        'answers "unanswerable": true)' in message
    )
    assert (
        'queries[1].relevant: a query marked "unanswerable": true lists no relevant memories'
        in message
    )
    assert "queries[2].unanswerable: Input should be a valid boolean" in message
    assert "queries[3].no_answer: Extra inputs are not permitted" in message
    assert "(4 problems)" in message
    only_unanswerable = edited(queries=[marked])
    assert "queries: at least one query must be answerable" in problems_of(only_unanswerable)


def test_the_long_conversation_set_is_valid_package_data_built_from_its_sources():
    dataset = load_long_conversations_dataset()
    assert dataset.name == "long-conversations"
    conversations = dataset.scopes()
    assert len(conversations) >= 6
    for scope in conversations:
        turns = [m for m in dataset.memories if m.scope == scope]
        assert len(turns) >= 120
        assert len({m.metadata["session"] for m in turns}) >= 8
    by_id = {m.id: m for m in dataset.memories}
    for memory in dataset.memories:  # "[<session date>] <speaker>: <text>"
        match = re.fullmatch(r"\[(\d{1,2} [A-Z][a-z]+ \d{4})\] ([^:]+): .+", memory.fact)
        assert match and match.group(2) == memory.metadata["speaker"], memory.fact
    categories = Counter(str(q.metadata["category"]) for q in dataset.queries)
    answerable = [q for q in dataset.queries if not q.unanswerable]
    assert len(answerable) >= 250 and categories["no-answer"] >= 60
    assert {c for c in categories if categories[c] >= 40} == CATEGORIES
    for query in dataset.queries:
        assert query.unanswerable == (query.metadata["category"] == "no-answer")
        assert (len(query.relevant) > 1) == (query.metadata["category"] == "multi-hop")
        assert all(by_id[m].scope == query.scope for m in query.relevant)
    built = script("benchmarks/make_long_conversations.py", "--check")
    assert built.returncode == 0, built.stderr


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


async def test_unanswerable_queries_are_scored_apart(make_service: MakeService):
    # "volcano" and "peanut butter sandwiches" (in B, whose only memory mentions peanuts) have
    # no relevant memory: recall and MRR are the hand-ranked figures of the five answerable
    # queries, and full-text search returns nothing for one of the two, b-peanut for the other.
    extra = [
        {"id": "u-volcano", "scope": A, "query": "volcano", "relevant": [], "unanswerable": True},
        {
            "id": "u-sandwich",
            "scope": B,
            "query": "peanut butter sandwiches",
            "relevant": [],
            "unanswerable": True,
            "metadata": {"category": "no-answer"},
        },
    ]
    dataset = parse_dataset(edited(queries=[*TINY["queries"], *extra]))
    report = await evaluate(factory(make_service), dataset, k_values=(1, 3), modes=("text",))
    text = report.mode("text")
    assert text.recall == {1: pytest.approx(2.5 / 5), 3: pytest.approx(4 / 5)}
    assert text.mrr == pytest.approx(3.5 / 5)
    assert (text.unanswerable, text.empty_share, text.mean_returned) == (2, 0.5, 0.5)
    results = {q.query_id: q for q in text.queries}
    assert results["u-sandwich"].ranked == ["b-peanut"] and not results["u-sandwich"].answerable
    assert results["u-sandwich"].recall == {} and results["u-sandwich"].reciprocal_rank == 0
    groups = scores_by(dataset, text, "category")
    assert groups["no-answer"].recall == {} and groups["no-answer"].mrr is None
    assert (groups["no-answer"].empty_share, groups["no-answer"].mean_returned) == (0.0, 1.0)
    assert groups[""].answerable == 5 and groups[""].empty_share == 1.0
    assert groups[""].recall == text.recall
    assert recall_by(dataset, text, "category", 3) == {"": pytest.approx(4 / 5)}
    assert results["u-sandwich"].scores and results["u-sandwich"].distances == [None]
    lowest = min(score for q in text.queries for score in q.scores)
    assert floor_scores(dataset, text, lowest) == Scores.of(text.queries)  # drops nothing
    table = format_report(report)
    assert "text  0.500  0.800  0.700  0.500       0.5" in table
    assert "no-answer queries (2, not in R@K or MRR)" in table


async def test_the_long_conversation_set_passes_the_default_guard_and_is_scored_per_category(
    make_service: MakeService,
):
    dataset = load_long_conversations_dataset()
    friends = parse_dataset(  # the conversations between people (no "Assistant:" role markers)
        {
            "name": "friends-only",
            "memories": [m.model_dump() for m in dataset.memories if "assistant" not in m.id],
            "queries": [q.model_dump() for q in dataset.queries if "assistant" not in q.id],
        }
    )
    # People's turns say "you" to each other: the default guard (intent towards the model, not
    # grammar) holds none of them back, so they are evaluated as users run them (`evaluate`
    # refuses a run whose memories the guard held back).
    await evaluate(factory(make_service), friends, modes=("text",))
    report = await evaluate(
        factory(make_service, guard=NoGuard()), dataset, k_values=(5, 10), modes=("text",)
    )
    text = report.mode("text")
    assert text.unanswerable == sum(1 for q in dataset.queries if q.unanswerable)
    assert 0.3 < text.recall[10] < 0.95 and text.empty_share is not None
    groups = scores_by(dataset, text, "category")
    assert set(groups) == CATEGORIES
    # Paraphrases share few words with their evidence: full text finds them least.
    assert groups["paraphrase"].recall[10] == min(
        g.recall[10] for name, g in groups.items() if name != "no-answer"
    )


async def test_the_benchmark_runs_datasets_with_settings_from_the_command_line(
    tmp_path: Path, database_url: str
):
    data = edited(queries=[*TINY["queries"], {**TINY["queries"][3], "id": "u", "relevant": []}])
    data["queries"][-1]["unanswerable"] = True
    data["queries"][-1]["metadata"] = {"category": "no-answer"}
    (tmp_path / "tiny.json").write_text(json.dumps(data), encoding="utf-8")
    run = script(
        "benchmarks/memory_recall.py",
        "--database-url",
        database_url,
        "--dataset",
        str(tmp_path / "tiny.json"),
        "--modes",
        "text",
        "--set",
        "retrieval.rrf_k=20",
        "--set",
        "retrieval.recency_weight=0",
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert 'settings: {"retrieval": {"recency_weight": 0, "rrf_k": 20}}' in lines
    assert re.search(
        r"^tiny\s+text\s+5\s+0\.800\s+0\.800\s+0\.700\s+1\s+1\.000\s+0\.0$", run.stdout, re.M
    )
    assert "tiny by category:" in run.stdout and re.search(
        r"^no-answer\s+text\s+0\s+-", run.stdout, re.M
    )
    for bad, message in [
        ("retrieval.rrf_k=0", "invalid settings"),
        ("retrieval.mode=text", "use --modes instead"),
        ("nonsense", "expected dotted.key=value"),
    ]:
        failed = script("benchmarks/memory_recall.py", "--set", bad)
        assert failed.returncode != 0 and message in failed.stderr


def test_a_relevance_floor_is_replayed_on_recorded_scores():
    unanswerable = {"id": "u", "scope": A, "query": "volcano", "relevant": [], "unanswerable": True}
    dataset = parse_dataset(edited(queries=[*TINY["queries"][:2], unanswerable]))

    def result(query_id: str, ranked: list[str], scores: list[float], **more: Any) -> QueryResult:
        distances = [1.0 - s / 2 for s in scores]  # similarity = score / 2
        return QueryResult(
            query_id=query_id,
            ranked=ranked,
            recall={},
            reciprocal_rank=0.0,
            scores=scores,
            distances=distances,
            **more,
        )

    report = ModeReport(
        mode="hybrid",
        recall={1: 0.0, 3: 0.0},  # only its K values matter to the replay
        mrr=0.0,
        load_seconds=0.0,
        query_seconds=0.0,
        queries=[
            result("q-peanut", ["a-peanut", "a-dog"], [0.9, 0.3]),
            result("q-two", ["a-bike", "a-peanut", "a-dog"], [0.8, 0.5, 0.2]),
            result("u", ["a-dog"], [0.4], answerable=False),
        ],
    )
    none_dropped = floor_scores(dataset, report, 0.0)
    assert none_dropped.recall == {1: 0.75, 3: 1.0} and none_dropped.mrr == 1.0
    assert (none_dropped.empty_share, none_dropped.mean_returned) == (0.0, 1.0)
    at_half = floor_scores(dataset, report, 0.5)  # drops a-dog everywhere
    assert at_half.recall == {1: 0.75, 3: 0.75} and at_half.empty_share == 1.0
    assert floor_scores(dataset, report, 0.25, on="similarity") == at_half
    assert candidate_floors(report, 3) == [0.2, 0.4, 0.9]
    assert candidate_floors(report, 1) == [0.2]
    assert candidate_floors(report, 2) == [0.2, 0.9]
    assert [f for f, _ in floor_tradeoff(dataset, report, [0.5, 0.0])] == [0.5, 0.0]
    unscored = report.model_copy(
        update={
            "queries": [
                *report.queries[:2],
                QueryResult(
                    query_id="u", ranked=["a-dog"], recall={}, reciprocal_rank=0.0, answerable=False
                ),
            ]
        }
    )
    with pytest.raises(ValueError, match="'u' has no recorded scores"):
        floor_scores(dataset, unscored, 0.1)


async def test_vector_mode_returns_the_whole_small_scope(make_service: MakeService):
    # Without a relevance floor every memory with a vector is a vector candidate: with 3
    # memories in scope A and 1 in B, Recall@3 is 1 for every query that has a relevant memory,
    # whatever the vectors.
    def no_floor(config: MemoryBankConfig) -> PostgresMemoryService:
        retrieval = config.retrieval.model_copy(update={"min_similarity": -1.0})
        return make_service(
            config=config.model_copy(update={"retrieval": retrieval}), embedder=HashEmbedder()
        )

    report = await evaluate(no_floor, tiny(), k_values=(3,), modes=("vector",))
    assert report.mode("vector").recall == {3: 1.0}
    assert all(len(q.ranked) == (1 if q.query_id == "q-b" else 3) for q in report.modes[0].queries)
    assert report.embedder == "HashEmbedder (64 dimensions)"
    assert report.notes == [
        "Recall@3: 5 of 5 answerable queries search a scope of at most 3 memories, where returning "
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
