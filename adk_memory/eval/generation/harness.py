"""Running a generation golden set through `PostgresMemoryService.generate_memories` and scoring
what each case leaves (`evaluate_generation`).

Owns: where each case runs, its clean-up, and turning what a scope ends with into a case's
result. It reaches the database only through the service's public API and never writes SQL.

Isolation, clean-up and reproducibility ("Isolation")
-----------------------------------------------------

Each case runs in a scope of its own: the case's scope keys, each value replaced by
``"adk-memory-eval-gen-" + sha256(dataset name, case id, key, value)[:24]``. Real memories
(even in a production schema) are neither seen nor touched, the service still picks the same
customization, and cases never see each other's memories. The scope is purged (memories and
revisions) before the case (what a killed run may have left) and after it, even on failure.
The generation jobs themselves stay in the job table, as every finished job does. Two
evaluations of datasets with the same name must not run against the same schema at once.

A case whose generation fails for good (dead-lettered after the configured retries) or does not
finish within `timeout` is still scored, on what the scope holds (its existing memories), and
its error is reported. A timed-out job may still write later, into a scope that the next run
purges first.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from ...errors import InputValidationError
from ...memory.models import MemoryAction, SourceType
from ...memory.service import PostgresMemoryService
from .._datasets import digest
from .dataset import GenerationCase, GenerationDataset, one_line
from .matching import Matcher, lexical_match, match_facts, matcher_name, precision_recall_f1
from .report import CaseResult, FactPair, GenerationReport

EVAL_SCOPE_PREFIX = "adk-memory-eval-gen-"
"""The start of every scope value the harness writes to (see "Isolation")."""

DEFAULT_TIMEOUT = 300.0
"""Seconds one case's generation may take (two model calls, plus retries) before it is an
error."""

Progress = Callable[[str, int, int], None]
"""Called as `progress(case_id, done, total)` after each case."""


def eval_scope(dataset: GenerationDataset, case: GenerationCase) -> dict[str, str]:
    """Where a case runs: its scope's keys, each value replaced by a hash of (dataset name,
    case id, key, value) behind `EVAL_SCOPE_PREFIX` (see "Isolation")."""
    return {
        key: EVAL_SCOPE_PREFIX + digest(f"{dataset.name}\n{case.id}\n{key}\n{value}", 24)
        for key, value in case.scope.items()
    }


async def _final_facts(service: PostgresMemoryService, scope: dict[str, str]) -> list[str]:
    facts: list[str] = []
    token: str | None = None
    while True:
        page = await service.list_memories(scope, page_size=1000, page_token=token)
        facts.extend(m.fact for m in page.memories)
        token = page.next_page_token
        if token is None:
            return sorted(facts)


async def _run_case(
    service: PostgresMemoryService,
    dataset: GenerationDataset,
    case: GenerationCase,
    matcher: Matcher,
    timeout: float | None,
) -> CaseResult:
    scope = eval_scope(dataset, case)
    await service.purge(scope)  # what a killed run may have left (same scope)
    try:
        for fact in case.existing_memories:
            await service.create_memory(fact, scope, source_type=SourceType.IMPLICIT)
        error: str | None = None
        actions: list[MemoryAction] = []
        started = time.perf_counter()
        try:
            operation = await asyncio.wait_for(
                service.generate_memories(
                    contents=case.conversation, scope=scope, wait_for_completion=True
                ),
                timeout,
            )
            error = operation.error
            actions = [g.action for g in operation.generated_memories]
        except asyncio.TimeoutError:  # an alias of TimeoutError only from Python 3.11
            error = f"generation did not finish within {timeout:g} seconds"
        seconds = time.perf_counter() - started
        generated = await _final_facts(service, scope)
    finally:
        await service.purge(scope)
    expected = [one_line(f) for f in case.expected_memories]
    pairs = await match_facts(generated, expected, matcher)
    paired_g = {g for g, _ in pairs}
    paired_e = {e for _, e in pairs}
    tp = len(pairs)
    fp, fn = len(generated) - tp, len(expected) - tp
    precision, recall, f1 = precision_recall_f1(tp, fp, fn)
    return CaseResult(
        case_id=case.id,
        expected=expected,
        generated=generated,
        matched=[FactPair(generated=generated[g], expected=expected[e]) for g, e in pairs],
        missed=[f for i, f in enumerate(expected) if i not in paired_e],
        extra=[f for i, f in enumerate(generated) if i not in paired_g],
        true_positives=tp,
        false_positives=fp,
        false_negatives=fn,
        precision=precision,
        recall=recall,
        f1=f1,
        created=actions.count(MemoryAction.CREATED),
        updated=actions.count(MemoryAction.UPDATED),
        deleted=actions.count(MemoryAction.DELETED),
        seconds=seconds,
        error=error,
    )


async def evaluate_generation(
    service: PostgresMemoryService,
    dataset: GenerationDataset,
    *,
    matcher: Matcher | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    progress: Progress | None = None,
) -> GenerationReport:
    """Run every case through `service.generate_memories` and score the memories it leaves.

    Args:
      service: a service with a generation model (`llm=...`) and a worker to run its jobs (the
        default `run_worker=True`, or a standalone worker on the same database). Its settings
        (customizations, embedder, retries) are what is evaluated; it is neither modified nor
        closed.
      dataset: from `load_generation_dataset`, `parse_generation_dataset` or
        `load_golden_dataset`.
      matcher: decides whether a generated fact states an expected one; default
        `lexical_match`, or e.g. `llm_judge_matcher("gemini-2.5-flash")`.
      timeout: seconds one case's generation may take before it is scored as an error (None:
        wait for ever).
      progress: `progress(case_id, done, total)` after each case.

    Cases run one after the other (the in-process worker runs one job at a time anyway), each
    in a scope of its own that is purged before and after (see the module docs).
    """
    if service.llm is None:
        raise InputValidationError(
            "evaluate_generation needs a service with a generation model (llm=...)."
        )
    chosen = matcher or lexical_match
    started = time.perf_counter()
    results: list[CaseResult] = []
    for case in dataset.cases:
        results.append(await _run_case(service, dataset, case, chosen, timeout))
        if progress is not None:
            progress(case.id, len(results), len(dataset.cases))
    tp = sum(r.true_positives for r in results)
    fp = sum(r.false_positives for r in results)
    fn = sum(r.false_negatives for r in results)
    precision, recall, f1 = precision_recall_f1(tp, fp, fn)
    abstentions = [r for r in results if r.abstention]
    abstained = sum(r.abstained for r in abstentions)
    return GenerationReport(
        dataset=dataset.name,
        model=service.llm.model,
        matcher=matcher_name(chosen),
        embedder=type(service.embedder).__name__ if service.embedder is not None else None,
        cases=results,
        expected=sum(len(r.expected) for r in results),
        generated=sum(len(r.generated) for r in results),
        true_positives=tp,
        false_positives=fp,
        false_negatives=fn,
        precision=precision,
        recall=recall,
        f1=f1,
        abstention_cases=len(abstentions),
        abstained=abstained,
        abstention_accuracy=abstained / len(abstentions) if abstentions else None,
        errors=sum(r.error is not None for r in results),
        seconds=time.perf_counter() - started,
    )
