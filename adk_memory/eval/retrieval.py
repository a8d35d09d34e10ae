"""Retrieval-quality harness: how often `PostgresMemoryService.retrieve_memories` finds the
memories a question needs, per retrieval mode (full-text, vector, hybrid).

Owns: the dataset format and its validation, loading a dataset into a memory service, running
its queries, the metrics (Recall@K and MRR) and the report. It reaches the database only through
the service's public API, and it leaves nothing behind (see "Isolation").

Dataset format
--------------

One JSON document (UTF-8) with exactly these keys (unknown keys are errors, so a misspelt
`"relevent"` fails loudly instead of silently scoring zero)::

    {
      "name": "my-dataset",                      # non-empty string, shown in reports
      "description": "...",                      # optional string
      "memories": [                              # at least one
        {
          "id": "m-001",                         # non-empty string, unique among memories
          "scope": {"app_name": "a", "user_id": "u1"},
          "fact": "The user is allergic to penicillin.",
          "topics": ["health"],                  # optional list of strings (default [])
          "importance": 0.8,                     # optional number in [0, 1]
          "metadata": {"source": "session 3"}    # optional JSON object, stored with the memory;
                                                 # its "date" (ISO 8601), if any, is when the
                                                 # memory is from (the entry's timestamp)
        }
      ],
      "queries": [                               # at least one
        {
          "id": "q-001",                         # non-empty string, unique among queries
          "scope": {"app_name": "a", "user_id": "u1"},
          "query": "Which antibiotics should a doctor avoid?",
          "relevant": ["m-001"],                 # at least one memory id, no repeats
          "metadata": {"category": "single-hop"} # optional JSON object, ignored by the metrics
        },
        {
          "id": "q-002",                         # a question no memory answers:
          "scope": {"app_name": "a", "user_id": "u1"},
          "query": "What is my blood type?",
          "relevant": [],                        # empty, which is only allowed with
          "unanswerable": true                   # this marker (optional, default false)
        }
      ]
    }

Rules, checked by `load_dataset` / `parse_dataset`. Every problem is reported with its location
(e.g. ``queries[3].relevant[1]``): all field problems at once, then, once the fields are valid,
all cross-reference problems (duplicate ids, relevant ids) at once. The rules:

- `scope` follows the service's scope rules: 1 to 5 keys, keys and values non-empty strings
  without `*` or NUL. Retrieval matches scopes exactly (same keys, same values), so a query only
  ever sees the memories of its own scope.
- `fact` is non-empty and at most 10,000 characters (the service's limit: a memory is a fact,
  not a document).
- Every id in `relevant` names a memory whose scope is exactly the query's scope (a memory in
  another scope could never be retrieved, so the query would be unanswerable by construction).
- `relevant` is empty exactly when the query is marked `"unanswerable": true`: a question the
  memories do not answer (what a relevance floor should return nothing for). The marker makes
  that a decision written in the data; a forgotten or emptied list stays an error.

Converting public conversational-memory datasets
------------------------------------------------

- LoCoMo (`locomo10.json`): one scope per conversation, e.g.
  ``{"app_name": "locomo", "user_id": sample_id}``. Memories: one per dialogue turn, id
  ``f"{sample_id}:{dia_id}"``, fact ``f"{speaker}: {text}"`` (optionally prefixed with the
  session date). Queries: one per `qa` item, id ``f"{sample_id}:q{i}"``, `relevant` = its
  `evidence` dia_ids with the same prefix. Drop category 5 (adversarial, unanswerable) and items
  whose evidence is empty or names no existing turn; put `category` in the query's `metadata`.
  To evaluate fact-level memories instead, make one memory per `observation` entry (each names
  the dia_id it came from) and mark relevant the observations of the evidence turns.
- LongMemEval (`longmemeval_s.json` / `_m`): every question has its own haystack, so one scope
  per question, e.g. ``{"app_name": "longmemeval", "user_id": question_id}``. Memories: one per
  turn of each haystack session, id ``f"{question_id}:{session_id}:{turn_index}"``, fact
  ``f"{role}: {content}"`` (cut to 10,000 characters). Query: `question`, `relevant` = the turns
  with `has_answer: true` (turn-level recall) or every turn of `answer_session_ids`
  (session-level). Drop abstention questions (ids ending in `_abs`): they have no evidence.

Isolation, clean-up and reproducibility ("Isolation")
-----------------------------------------------------

The harness never writes to the dataset's own scopes: each dataset scope is stored as the user
scope ``{"app_name": "adk-memory-eval-<hash of the dataset name>", "user_id": <hash of the
scope>}``. The mapping is one-to-one, so retrieval sees exactly what it would see in the
dataset's scopes, while real memories (even in a production schema) are neither seen nor
touched. Each mode loads its own copy and purges those scopes (memories and revisions)
when it is done or fails, and once before it starts, in case a killed run left any.

Memories are loaded with ADK's batch `add_memory`, so the service's guard judges them: a
dataset of raw dialogue (questions, requests, "Assistant:" turns, like the shipped
long-conversation set) is quarantined or rejected by the default guard, so evaluate it with a
service built with `guard=NoGuard()` (what the benchmark script does); the run fails rather
than score a partial load. Each memory gets a fixed entry id (UUID 5 of the dataset
name and the memory id) and its dataset id in `metadata["adk_memory_eval_id"]`, which is how
results are mapped back. The store breaks ties (equal relevance, distance or score) by memory
id, so fixed ids make every run give the same figures. The flip side: two
evaluations of datasets with the same name must not run against the same schema at once (the
harness detects the clash and fails; the benchmark script uses a fresh schema per run).

Metrics
-------

Each query retrieves `max(k_values)` memories. Recall@K is the fraction of the query's relevant
memories among the first K results; MRR is the mean over queries of 1 / (rank of the first
relevant result), 0 when none is retrieved. Both are averaged over the answerable queries, so
every query weighs the same whatever its number of relevant memories. Unanswerable queries are
scored apart: the share of them that returned nothing at all (1.0 is ideal: no noise in the
agent's context), and the mean number of results they returned.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Collection, Sequence
from datetime import datetime
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal

from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types
from pydantic import Field, model_validator

from ..config import MemoryBankConfig
from ..errors import (
    EvaluationError,
    GenerationOutputError,
    InputTypeError,
    InputValidationError,
)
from ..memory.checks import MAX_TOP_K
from ..memory.embeddings import Embedder
from ..memory.scope import scope_key
from ..memory.service import PostgresMemoryService
from . import _datasets
from ._datasets import DatasetError as DatasetError  # re-exported: importable here as always
from ._datasets import DatasetScope, Fact, Text
from ._datasets import Frozen as _Frozen

if TYPE_CHECKING:  # importlib.resources.abc is 3.11+; only the annotation needs it
    from importlib.resources.abc import Traversable

RetrievalMode = Literal["text", "vector", "hybrid"]
"""A `RetrievalConfig.mode`."""

ALL_MODES: tuple[RetrievalMode, ...] = ("text", "vector", "hybrid")
DEFAULT_K_VALUES: tuple[int, ...] = (1, 3, 5, 10)

EVAL_APP_PREFIX = "adk-memory-eval-"
"""The `app_name` of every scope the harness stores memories in (see "Isolation")."""

EVAL_NAMESPACE = uuid.UUID("0b6f7a4e-2f1d-5c3b-9e8a-6d4c2b1a0f9e")
"""UUID 5 namespace of the entry ids the harness gives `add_memory`."""

EVAL_ID_KEY = "adk_memory_eval_id"
"""The metadata key holding a stored memory's dataset id (it overrides a dataset's own)."""

LOAD_BATCH_SIZE = 500
"""Memories per `add_memory` call (one transaction each)."""

EMBED_BATCH_SIZE = 100
"""Texts per embedder call when the harness embeds a dataset up front (the Gemini API's limit)."""

SYNTHETIC_DATASET = "data/synthetic_retrieval.json"
"""The shipped synthetic dataset, relative to this package."""

LONG_CONVERSATIONS_DATASET = "data/long_conversations.json"
"""The shipped long-conversation dataset (built by `benchmarks/make_long_conversations.py`),
relative to this package."""

ServiceFactory = Callable[
    [MemoryBankConfig], PostgresMemoryService | Awaitable[PostgresMemoryService]
]
"""Builds the service for one mode from `MemoryBankConfig(retrieval=RetrievalConfig(mode=...))`.
The harness closes every service it gets from the factory."""

Progress = Callable[[str, str, int, int], None]
"""Called as `progress(mode, stage, done, total)`, stage being "load" or "query"."""


# ---------------------------------------------------------------------------------- dataset


class DatasetMemory(_Frozen):
    """One memory to store before the queries run."""

    id: Text
    scope: DatasetScope
    fact: Fact
    topics: list[str] = Field(default_factory=list)
    importance: float | None = Field(default=None, ge=0.0, le=1.0)
    metadata: dict[str, Any] = Field(default_factory=dict)


class DatasetQuery(_Frozen):
    """One search and the memories that answer it."""

    id: Text
    scope: DatasetScope
    query: Text
    relevant: list[Text]
    unanswerable: bool = False
    """No memory answers the query: `relevant` is empty, and the query is scored by whether it
    returns nothing (see "Metrics")."""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _marked(self) -> DatasetQuery:
        # The message starts with its sub-location, which the problem list joins to the query's.
        if self.unanswerable and self.relevant:
            raise ValueError(
                '.relevant: a query marked "unanswerable": true lists no relevant memories'
            )
        if not self.unanswerable and not self.relevant:
            raise ValueError(
                ".relevant: List should have at least 1 item (or mark a question no memory "
                'answers "unanswerable": true)'
            )
        return self


class RetrievalDataset(_Frozen):
    """Memories, queries and the relevance judgements linking them (see the module docs)."""

    name: Text
    description: str = ""
    memories: list[DatasetMemory] = Field(min_length=1)
    queries: list[DatasetQuery] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> RetrievalDataset:
        problems: list[str] = []
        scope_of: dict[str, str] = {}  # memory id -> canonical scope
        for i, memory in enumerate(self.memories):
            if memory.id in scope_of:
                problems.append(f"memories[{i}].id: duplicate memory id {memory.id!r}")
            else:
                scope_of[memory.id] = scope_key(memory.scope)
        if all(query.unanswerable for query in self.queries):
            problems.append("queries: at least one query must be answerable (recall needs one)")
        seen: set[str] = set()
        for i, query in enumerate(self.queries):
            if query.id in seen:
                problems.append(f"queries[{i}].id: duplicate query id {query.id!r}")
            seen.add(query.id)
            key = scope_key(query.scope)
            for j, memory_id in enumerate(query.relevant):
                where = f"queries[{i}].relevant[{j}]"
                if memory_id in query.relevant[:j]:
                    problems.append(f"{where}: {memory_id!r} is listed twice")
                elif memory_id not in scope_of:
                    problems.append(f"{where}: no memory has id {memory_id!r}")
                elif scope_of[memory_id] != key:
                    problems.append(
                        f"{where}: memory {memory_id!r} is in scope {scope_of[memory_id]}, not "
                        f"in the query's scope {key}, so it can never be retrieved"
                    )
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def scopes(self) -> list[dict[str, str]]:
        """Every distinct scope of the dataset's memories and queries, in first-seen order."""
        found: dict[str, dict[str, str]] = {}
        for scope in [*(m.scope for m in self.memories), *(q.scope for q in self.queries)]:
            found.setdefault(scope_key(scope), dict(scope))
        return list(found.values())


def parse_dataset(data: Any, *, source: str = "<dataset>") -> RetrievalDataset:
    """A validated dataset from already-decoded JSON (what converters build in memory).

    Raises:
      DatasetError: listing every problem, each with its location.
    """
    return _datasets.parse(RetrievalDataset, data, kind="retrieval", source=source)


def load_dataset(path: str | os.PathLike[str] | Traversable) -> RetrievalDataset:
    """Read and validate a dataset file (a path, or an `importlib.resources` traversable).

    Raises:
      DatasetError: the file is not JSON, or not a valid dataset (every problem listed).
      OSError: the file cannot be read.
    """
    return _datasets.load(RetrievalDataset, path, kind="retrieval")


def _package_data(relative: str) -> Traversable:
    """A file shipped in this package (package data: works from a wheel or a checkout)."""
    return resources.files(__package__ or "adk_memory.eval").joinpath(relative)


def synthetic_dataset_path() -> Traversable:
    """The shipped synthetic dataset."""
    return _package_data(SYNTHETIC_DATASET)


def load_synthetic_dataset() -> RetrievalDataset:
    """The shipped dataset: 60 personal-assistant facts of 4 users and 30 paraphrased queries."""
    return load_dataset(synthetic_dataset_path())


def long_conversations_dataset_path() -> Traversable:
    """The shipped long-conversation dataset."""
    return _package_data(LONG_CONVERSATIONS_DATASET)


def load_long_conversations_dataset() -> RetrievalDataset:
    """The shipped LoCoMo-like dataset: 6 conversations of 8 dated sessions (one memory per
    turn, one scope each), questions by category with turn-level evidence, and questions no
    turn answers (its description gives the counts)."""
    return load_dataset(long_conversations_dataset_path())


# ---------------------------------------------------------------------------------- metrics


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Fraction of `relevant` found among the first `k` of `ranked`."""
    if not relevant:
        raise InputValidationError("recall is undefined without relevant items")
    return len(set(ranked[:k]) & set(relevant)) / len(set(relevant))


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """1 / (1-based rank of the first relevant item of `ranked`); 0 if there is none."""
    wanted = set(relevant)
    for rank, item in enumerate(ranked, start=1):
        if item in wanted:
            return 1.0 / rank
    return 0.0


def recall_by(dataset: RetrievalDataset, report: ModeReport, key: str, k: int) -> dict[str, float]:
    """Mean Recall@`k` of `report`'s answerable queries grouped by their `metadata[key]` (a
    query without it counts under ""), e.g. per language: a mean over every query can hide one
    group that finds nothing. A group of only unanswerable queries has no recall: left out."""
    groups = scores_by(dataset, report, key).items()
    return {name: figures.recall[k] for name, figures in groups if figures.answerable}


def scores_by(dataset: RetrievalDataset, report: ModeReport, key: str) -> dict[str, Scores]:
    """`report`'s figures recomputed per group of queries with the same `metadata[key]` (a query
    without it counts under ""), in first-seen order. A group of only unanswerable queries has
    no recall (empty dicts, MRR None); one without them has no empty share (None)."""
    group = {q.id: str(q.metadata.get(key, "")) for q in dataset.queries}
    results: dict[str, list[QueryResult]] = {}
    for result in report.queries:
        results.setdefault(group[result.query_id], []).append(result)
    return {name: Scores.of(members) for name, members in results.items()}


def result_of(
    query: DatasetQuery,
    ranked: list[str],
    ks: Sequence[int],
    *,
    scores: list[float],
    distances: list[float | None],
) -> QueryResult:
    """How `ranked` (dataset ids, best first) scores for `query` (see "Metrics")."""
    if query.unanswerable:
        return QueryResult(
            query_id=query.id,
            ranked=ranked,
            recall={},
            reciprocal_rank=0.0,
            answerable=False,
            scores=scores,
            distances=distances,
        )
    return QueryResult(
        query_id=query.id,
        ranked=ranked,
        recall={k: recall_at_k(ranked, query.relevant, k) for k in ks},
        reciprocal_rank=reciprocal_rank(ranked, query.relevant),
        scores=scores,
        distances=distances,
    )


# ----------------------------------------------------------------------------------- report


class QueryResult(_Frozen):
    """What one query retrieved (dataset memory ids, best first) and how it scored. An
    unanswerable query has no recall (an empty dict) and a reciprocal rank of 0."""

    query_id: str
    ranked: list[str]
    recall: dict[int, float]
    reciprocal_rank: float
    answerable: bool = True
    scores: list[float] = Field(default_factory=list)
    """Each result's blended ranking score (higher is better), in `ranked` order."""
    distances: list[float | None] = Field(default_factory=list)
    """Each result's cosine distance to the query (None: no vector), in `ranked` order."""


class Scores(_Frozen):
    """Recall, MRR and the no-answer figures of a set of query results (see "Metrics")."""

    recall: dict[int, float]
    """Mean Recall@K over the answerable queries, by K (empty if there are none)."""
    mrr: float | None
    """Mean reciprocal rank over the answerable queries (None if there are none)."""
    answerable: int
    unanswerable: int
    empty_share: float | None
    """Share of the unanswerable queries that returned nothing (None if there are none)."""
    mean_returned: float | None
    """Mean number of results the unanswerable queries returned (None if there are none)."""

    @classmethod
    def of(cls, results: Sequence[QueryResult]) -> Scores:
        scored = [r for r in results if r.answerable]
        unanswered = [r for r in results if not r.answerable]
        ks = sorted({k for r in scored for k in r.recall})
        n, u = len(scored), len(unanswered)
        return cls(
            recall={k: sum(r.recall[k] for r in scored) / n for k in ks},
            mrr=sum(r.reciprocal_rank for r in scored) / n if n else None,
            answerable=n,
            unanswerable=u,
            empty_share=sum(1 for r in unanswered if not r.ranked) / u if u else None,
            mean_returned=sum(len(r.ranked) for r in unanswered) / u if u else None,
        )


class ModeReport(_Frozen):
    """The figures of one retrieval mode, and each query's result (to see what went wrong)."""

    mode: RetrievalMode
    recall: dict[int, float]
    """Mean Recall@K over the answerable queries, by K."""
    mrr: float
    """Mean reciprocal rank over the answerable queries."""
    unanswerable: int = 0
    """How many queries are marked unanswerable (excluded from recall and MRR)."""
    empty_share: float | None = None
    """Share of the unanswerable queries that returned nothing (None: there are none)."""
    mean_returned: float | None = None
    """Mean number of results the unanswerable queries returned (None: there are none)."""
    load_seconds: float
    """Wall time to embed and store the dataset."""
    query_seconds: float
    """Wall time to run every query (`concurrency` at a time)."""
    queries: list[QueryResult]


class RetrievalReport(_Frozen):
    """The outcome of `evaluate`: one `ModeReport` per mode run, and why others were not."""

    dataset: str
    memories: int
    queries: int
    scopes: int
    k_values: list[int]
    embedder: str | None
    """The embedder's class and dimensions (None: no embedder)."""
    modes: list[ModeReport]
    skipped: dict[str, str] = Field(default_factory=dict)
    """Mode -> why it was not run."""
    notes: list[str] = Field(default_factory=list)

    def mode(self, mode: RetrievalMode) -> ModeReport:
        """The report of `mode`; KeyError if it was skipped or not asked for."""
        for report in self.modes:
            if report.mode == mode:
                return report
        raise KeyError(mode)


def format_report(report: RetrievalReport) -> str:
    """The report as a plain-text table (one row per mode), then skipped modes and notes."""
    lines = [
        f"Retrieval quality: {report.dataset} ({report.memories} memories, {report.queries} "
        f"queries, {report.scopes} scopes)",
        f"Embedder: {report.embedder or 'none'}",
        "",
    ]
    no_answer = any(m.unanswerable for m in report.modes)
    header = [
        "mode",
        *(f"R@{k}" for k in report.k_values),
        "MRR",
        *(["empty", "returned"] if no_answer else []),
        "load s",
        "query s",
    ]
    rows = [
        [
            m.mode,
            *(f"{m.recall[k]:.3f}" for k in report.k_values),
            f"{m.mrr:.3f}",
            *([f"{m.empty_share or 0:.3f}", f"{m.mean_returned or 0:.1f}"] if no_answer else []),
            f"{m.load_seconds:.2f}",
            f"{m.query_seconds:.2f}",
        ]
        for m in report.modes
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest])

    lines.append(line(header))
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(line(row) for row in rows)
    for mode, reason in report.skipped.items():
        lines.append(f"skipped {mode}: {reason}")
    if no_answer:
        lines.append(
            f"no-answer queries ({report.modes[0].unanswerable}, not in R@K or MRR): empty = "
            "share returning nothing, returned = mean results returned"
        )
    lines.extend(f"note: {note}" for note in report.notes)
    return "\n".join(lines)


# ------------------------------------------------------------------------------- evaluation


class _CachingEmbedder:
    """Wraps the service's embedder so each distinct text is embedded once per evaluation: the
    harness embeds every fact and query up front, in batches the embedder's API accepts; the
    service's own calls (`add_memory`, `retrieve_memories`) are then cache hits, and modes
    sharing an embedder share the vectors. With a paid embedder that costs one pass over the
    dataset, whatever the number of modes."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.dimensions = inner.dimensions
        self.similarity_floor: float | None = getattr(inner, "similarity_floor", None)
        """The inner embedder's calibrated relevance floor, which retrieval applies."""
        self._vectors: dict[tuple[str, str], list[float]] = {}

    async def embed(
        self, texts: Sequence[str], *, task: Literal["document", "query"] = "document"
    ) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if (task, t) not in self._vectors))
        for start in range(0, len(missing), EMBED_BATCH_SIZE):
            chunk = missing[start : start + EMBED_BATCH_SIZE]
            vectors = await self.inner.embed(chunk, task=task)
            if len(vectors) != len(chunk):
                raise GenerationOutputError("The embedder returned the wrong number of vectors.")
            self._vectors.update(((task, t), v) for t, v in zip(chunk, vectors, strict=True))
        return [self._vectors[(task, t)] for t in texts]


def _describe(embedder: Embedder | None) -> str | None:
    if embedder is None:
        return None
    inner = embedder.inner if isinstance(embedder, _CachingEmbedder) else embedder
    model = getattr(inner, "model", None)
    name = type(inner).__name__ + (f" {model}" if isinstance(model, str) else "")
    return f"{name} ({inner.dimensions} dimensions)"


def _check_k_values(k_values: Sequence[int]) -> list[int]:
    ks = sorted(set(k_values))
    if not ks or any(not isinstance(k, int) or not 1 <= k <= MAX_TOP_K for k in ks):
        raise InputValidationError(
            f"k_values must be integers between 1 and {MAX_TOP_K}, got {k_values}."
        )
    return ks


def _check_modes(modes: Sequence[str]) -> list[RetrievalMode]:
    chosen: list[RetrievalMode] = []
    for mode in modes:
        if mode not in ALL_MODES:
            raise InputValidationError(f"Unknown retrieval mode {mode!r}: use one of {ALL_MODES}.")
        if mode not in chosen:
            chosen.append(mode)
    if not chosen:
        raise InputValidationError("modes must name at least one retrieval mode.")
    return chosen


async def _service_for(
    target: PostgresMemoryService | ServiceFactory, mode: RetrievalMode
) -> PostgresMemoryService:
    """The service to run `mode` with: the factory's, or a sibling of the given service (same
    engine, schema, embedder, guard, redactor and settings, another mode) so the caller's object
    is untouched."""
    if isinstance(target, PostgresMemoryService):
        config = target.config.model_copy(
            update={"retrieval": target.config.retrieval.model_copy(update={"mode": mode})}
        )
        return PostgresMemoryService(
            engine=await target.database.engine(),
            schema=target.database.schema,
            auto_migrate=target.database.auto_migrate,
            embedder=target.embedder,
            config=config,
            redactor=target.redactor,
            guard=target.guard,
        )
    made = target(MemoryBankConfig.model_validate({"retrieval": {"mode": mode}}))
    service = await made if inspect.isawaitable(made) else made
    if not isinstance(service, PostgresMemoryService):
        raise InputTypeError(f"The service factory returned {type(service).__name__}.")
    if service.config.retrieval.mode != mode:
        raise InputValidationError(
            f"The service factory ignored the config: asked for mode {mode!r}, got "
            f"{service.config.retrieval.mode!r}."
        )
    return service


async def _all(awaitables: Sequence[Awaitable[Any]]) -> list[Any]:
    """Like gather, but only returns (or raises the first error) once every call has ended, so
    the clean-up that follows never races a call still writing."""
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def _digest(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


class _Layout:
    """Where the harness stores a dataset: each dataset scope becomes the user scope
    `{"app_name": "adk-memory-eval-<hash of the dataset name>", "user_id": <hash of the scope>}`
    (one-to-one, so exact-scope matching is unchanged, and no real scope is ever touched).

    Each memory is added with a fixed entry id (UUID 5 of the dataset name and its id) and its
    dataset id in `metadata[EVAL_ID_KEY]`. Fixed ids are what make runs reproducible: the store
    breaks ties (equal relevance, distance or score) by memory id, so random ids would reshuffle
    tied memories, and move the figures, on every run. The store id is whatever the service
    makes of the entry id; the harness reads the dataset id back from the metadata, so it needs
    no knowledge of that derivation."""

    def __init__(self, dataset: RetrievalDataset) -> None:
        self.name = dataset.name
        self.app_name = f"{EVAL_APP_PREFIX}{_digest(dataset.name, 16)}"

    def scope(self, scope: dict[str, str]) -> dict[str, str]:
        return {"app_name": self.app_name, "user_id": _digest(scope_key(scope), 32)}

    def entry(self, memory: DatasetMemory) -> MemoryEntry:
        # A dated memory keeps its date (as an import would), so the times questions name
        # ("in May 2023") can match it.
        date = memory.metadata.get("date")
        return MemoryEntry(
            id=str(uuid.uuid5(EVAL_NAMESPACE, f"{self.name}\n{memory.id}")),
            timestamp=date if isinstance(date, str) else None,
            content=types.Content(role="user", parts=[types.Part(text=memory.fact)]),
            custom_metadata={
                **memory.metadata,
                EVAL_ID_KEY: memory.id,
                "topics": list(memory.topics),
            },
        )


async def _stored_ids(service: PostgresMemoryService, scope: dict[str, str]) -> dict[str, str]:
    """Dataset id -> store id of every memory in a stored scope."""
    found: dict[str, str] = {}
    token = None
    while True:
        page = await service.list_memories(scope, page_size=1000, page_token=token)
        found.update((str(m.metadata.get(EVAL_ID_KEY)), m.id) for m in page.memories)
        token = page.next_page_token
        if token is None:
            return found


async def _load(
    service: PostgresMemoryService,
    layout: _Layout,
    dataset: RetrievalDataset,
    gate: asyncio.Semaphore,
    tick: Callable[[int], None],
) -> None:
    """Store the dataset through ADK's batch `add_memory` (one embedder call and one
    transaction per batch), check every memory is there, then set importances with
    `update_memory` (`add_memory` takes none)."""
    by_scope: dict[str, list[DatasetMemory]] = {}
    for memory in dataset.memories:
        by_scope.setdefault(scope_key(memory.scope), []).append(memory)

    async def load_scope(memories: list[DatasetMemory]) -> None:
        scope = layout.scope(memories[0].scope)
        async with gate:
            for start in range(0, len(memories), LOAD_BATCH_SIZE):
                batch = memories[start : start + LOAD_BATCH_SIZE]
                await service.add_memory(
                    app_name=scope["app_name"],
                    user_id=scope["user_id"],
                    memories=[layout.entry(m) for m in batch],
                )
                tick(len(batch))
            stored = await _stored_ids(service, scope)
            missing = [m.id for m in memories if m.id not in stored]
            if missing or len(stored) != len(memories):
                raise EvaluationError(
                    f"Stored {len(stored)} memories for the {len(memories)} of scope "
                    f"{memories[0].scope} (missing: {missing[:5]}): did the service's guard "
                    "quarantine them (raw dialogue needs guard=NoGuard()), or is another "
                    f"evaluation of dataset {dataset.name!r} running on this schema?"
                )
            for m in memories:
                if m.importance is not None:
                    await service.update_memory(stored[m.id], scope, importance=m.importance)

    await _all([load_scope(memories) for memories in by_scope.values()])


async def _run_mode(
    service: PostgresMemoryService,
    mode: RetrievalMode,
    dataset: RetrievalDataset,
    ks: list[int],
    progress: Progress | None,
    concurrency: int,
    now: datetime | None,
) -> ModeReport:
    layout = _Layout(dataset)
    gate = asyncio.Semaphore(concurrency)
    counts = {"load": 0, "query": 0}
    totals = {"load": len(dataset.memories), "query": len(dataset.queries)}

    def tick(stage: str, n: int = 1) -> None:
        counts[stage] += n
        if progress is not None:
            progress(mode, stage, counts[stage], totals[stage])

    async def search(query: DatasetQuery) -> QueryResult:
        async with gate:
            found = await service.retrieve_memories(
                layout.scope(query.scope), search_query=query.query, top_k=max(ks), now=now
            )
        ranked = [str(r.memory.metadata.get(EVAL_ID_KEY, f"<not {dataset.name}>")) for r in found]
        tick("query")
        return result_of(
            query,
            ranked,
            ks,
            scores=[r.score for r in found],
            distances=[r.distance for r in found],
        )

    async def purge() -> None:
        for scope in dataset.scopes():
            await service.purge(layout.scope(scope))

    await purge()  # what a killed run may have left (same ids, same scopes)
    started = time.perf_counter()
    try:
        if service.embedder is not None:
            facts = [m.fact.strip() for m in dataset.memories]  # as add_memory embeds them
            await service.embedder.embed(facts, task="document")
            if mode != "text":
                await service.embedder.embed([q.query for q in dataset.queries], task="query")
        await _load(service, layout, dataset, gate, lambda n: tick("load", n))
        loaded = time.perf_counter()
        results: list[QueryResult] = await _all([search(q) for q in dataset.queries])
        finished = time.perf_counter()
    finally:
        await purge()
    scores = Scores.of(results)
    if scores.mrr is None:  # the dataset's validation makes one query answerable
        raise EvaluationError(f"Dataset {dataset.name!r} has no answerable query.")
    return ModeReport(
        mode=mode,
        recall=scores.recall,
        mrr=scores.mrr,
        unanswerable=scores.unanswerable,
        empty_share=scores.empty_share,
        mean_returned=scores.mean_returned,
        load_seconds=loaded - started,
        query_seconds=finished - loaded,
        queries=results,
    )


def _notes(dataset: RetrievalDataset, ks: list[int]) -> list[str]:
    sizes: dict[str, int] = {}
    for memory in dataset.memories:
        key = scope_key(memory.scope)
        sizes[key] = sizes.get(key, 0) + 1
    notes = []
    for k in ks:
        answerable = [q for q in dataset.queries if not q.unanswerable]
        small = sum(1 for q in answerable if sizes.get(scope_key(q.scope), 0) <= k)
        if small:
            notes.append(
                f"Recall@{k}: {small} of {len(answerable)} answerable queries search a scope of at "
                f"most {k} memor{'y' if k == 1 else 'ies'}, where returning everything scores 1."
            )
    return notes


async def evaluate(
    target: PostgresMemoryService | ServiceFactory,
    dataset: RetrievalDataset,
    *,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    modes: Sequence[RetrievalMode] = ALL_MODES,
    progress: Progress | None = None,
    concurrency: int = 8,
    now: datetime | None = None,
) -> RetrievalReport:
    """Load `dataset` and run its queries once per retrieval mode; Recall@K and MRR per mode.

    Args:
      target: a service (its engine, schema, embedder and settings are reused, with only the
        mode changed; the service itself is neither modified nor closed), or a factory called
        with `MemoryBankConfig(retrieval=RetrievalConfig(mode=...))` for each mode, whose
        services the harness closes.
      dataset: from `load_dataset`, `parse_dataset` or `load_synthetic_dataset`.
      k_values: the K of Recall@K (1..100); each query retrieves `max(k_values)` memories.
      modes: which of "text", "vector" and "hybrid" to run. Vector and hybrid are skipped, with
        the reason in `report.skipped`, when the service has no embedder (hybrid would then be
        full-text only: the text figures again).
      progress: `progress(mode, "load" | "query", done, total)` after each stored batch of
        memories and after each query.
      concurrency: how many scopes load, and how many queries run, at once (keep it within the
        engine's connection pool).
      now: what relative times in the queries ("last week") are read against (default: the
        clock); a dataset's dated memories are stored with their dates.

    Each mode stores its own copy of the dataset in scopes of its own (never the dataset's
    scopes themselves) and purges them afterwards, even on failure (see the module docs).
    """
    ks = _check_k_values(k_values)
    chosen = _check_modes(modes)
    if concurrency < 1:
        raise InputValidationError("concurrency must be at least 1.")
    caches: dict[int, _CachingEmbedder] = {}
    reports: list[ModeReport] = []
    skipped: dict[str, str] = {}
    embedder_name: str | None = None
    for mode in chosen:
        service = await _service_for(target, mode)
        try:
            embedder = service.embedder
            if embedder is None and mode != "text":
                skipped[mode] = (
                    "needs an embedder"
                    if mode == "vector"
                    else "needs an embedder (without one, hybrid is full-text only)"
                )
                continue
            if embedder is not None:
                if not isinstance(embedder, _CachingEmbedder):
                    embedder = caches.setdefault(id(embedder), _CachingEmbedder(embedder))
                    service.embedder = embedder
                embedder_name = embedder_name or _describe(embedder)
            reports.append(await _run_mode(service, mode, dataset, ks, progress, concurrency, now))
        finally:
            await service.close()
    return RetrievalReport(
        dataset=dataset.name,
        memories=len(dataset.memories),
        queries=len(dataset.queries),
        scopes=len(dataset.scopes()),
        k_values=ks,
        embedder=embedder_name,
        modes=reports,
        skipped=skipped,
        notes=_notes(dataset, ks),
    )
