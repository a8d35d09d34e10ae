"""The retrieval harness's metrics and report: Recall@K and MRR of ranked results, figures per
group of queries, and the report's plain-text form. It reads results only: it never runs a
query.

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

from collections.abc import Collection, Sequence
from typing import Literal

from pydantic import Field

from ...errors import InputValidationError
from .._datasets import Frozen as _Frozen
from .dataset import DatasetQuery, RetrievalDataset

RetrievalMode = Literal["text", "vector", "hybrid"]
"""A `RetrievalConfig.mode`."""

ALL_MODES: tuple[RetrievalMode, ...] = ("text", "vector", "hybrid")
DEFAULT_K_VALUES: tuple[int, ...] = (1, 3, 5, 10)


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
