"""The relevance-floor trade-off, measured on a retrieval report: what a floor (results below a
score are not returned) would cost in recall and gain in silence on questions no memory answers.

Owns: replaying an `evaluate` report's results under a series of floors, and choosing floors to
try from the scores a report saw. It never runs a search: every figure is recomputed from the
scores and distances the report recorded, so one run of the harness yields the whole curve, and
a floor the service later implements can be checked against it (same results, same figures).

A floor on the blended `score` is what a fused-score floor does in text and hybrid modes; in
vector mode the natural floor is on cosine similarity (1 - distance). Results are cut, never
reordered, so recall can only fall and the empty share only rise as the floor goes up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..errors import InputValidationError
from .retrieval.dataset import RetrievalDataset
from .retrieval.report import ModeReport, QueryResult, Scores, result_of

FloorOn = Literal["score", "similarity"]
"""What a floor is compared with: the blended ranking score, or cosine similarity."""


def _values(result: QueryResult, on: FloorOn) -> list[float]:
    if on == "score":
        return result.scores
    # A result without a vector cannot pass a similarity floor.
    return [-1.0 if d is None else 1.0 - d for d in result.distances]


def floor_scores(
    dataset: RetrievalDataset, report: ModeReport, floor: float, *, on: FloorOn = "score"
) -> Scores:
    """`report`'s figures had every result whose score (or similarity) is below `floor` been
    dropped.

    Raises:
      ValueError: the report has no scores (it was made before they were recorded).
    """
    queries = {q.id: q for q in dataset.queries}
    kept: list[QueryResult] = []
    for result in report.queries:
        values = _values(result, on)
        if len(values) != len(result.ranked):
            raise InputValidationError(
                f"Query {result.query_id!r} has no recorded {on}s to apply a floor to."
            )
        keep = [i for i, value in enumerate(values) if value >= floor]
        kept.append(
            result_of(
                queries[result.query_id],
                [result.ranked[i] for i in keep],
                list(report.recall),
                scores=[result.scores[i] for i in keep],
                distances=[result.distances[i] for i in keep],
            )
        )
    return Scores.of(kept)


def candidate_floors(report: ModeReport, count: int, *, on: FloorOn = "score") -> list[float]:
    """Up to `count` distinct floors worth trying, lowest first: the lowest value any result
    has (drops nothing), then quantiles of the best result's value over the report's queries,
    up to the highest (leaves only the queries whose best result reaches it)."""
    if count < 1:
        raise InputValidationError("count must be at least 1.")
    values = [_values(r, on) for r in report.queries]
    tops = sorted(v[0] for v in values if v)
    if not tops:
        return []
    picks = [min(min(v) for v in values if v)]
    quantiles = count - 1
    if quantiles == 1:
        picks.append(tops[-1])
    elif quantiles > 1:
        picks += [tops[round(i * (len(tops) - 1) / (quantiles - 1))] for i in range(quantiles)]
    return sorted(set(picks))


def floor_tradeoff(
    dataset: RetrievalDataset,
    report: ModeReport,
    floors: Sequence[float],
    *,
    on: FloorOn = "score",
) -> list[tuple[float, Scores]]:
    """`floor_scores` at each of `floors`, in the order given."""
    return [(floor, floor_scores(dataset, report, floor, on=on)) for floor in floors]
