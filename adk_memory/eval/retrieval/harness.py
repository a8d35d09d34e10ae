"""Running a retrieval dataset against `PostgresMemoryService.retrieve_memories`, once per
retrieval mode (`evaluate`).

Owns: loading a dataset into a memory service, running its queries and turning what they
returned into a report. It reaches the database only through the service's public API, and it
leaves nothing behind (see "Isolation").

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
"""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any, Literal

from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from ...config import MemoryBankConfig
from ...errors import EvaluationError, GenerationOutputError, InputTypeError, InputValidationError
from ...memory.checks import MAX_TOP_K
from ...memory.embeddings import Embedder
from ...memory.scope import scope_key
from ...memory.service import PostgresMemoryService
from .._datasets import digest
from .dataset import DatasetMemory, DatasetQuery, RetrievalDataset
from .report import (
    ALL_MODES,
    DEFAULT_K_VALUES,
    ModeReport,
    QueryResult,
    RetrievalMode,
    RetrievalReport,
    Scores,
    result_of,
)

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

ServiceFactory = Callable[
    [MemoryBankConfig], PostgresMemoryService | Awaitable[PostgresMemoryService]
]
"""Builds the service for one mode from `MemoryBankConfig(retrieval=RetrievalConfig(mode=...))`.
The harness closes every service it gets from the factory."""

Progress = Callable[[str, str, int, int], None]
"""Called as `progress(mode, stage, done, total)`, stage being "load" or "query"."""


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
        self.app_name = f"{EVAL_APP_PREFIX}{digest(dataset.name, 16)}"

    def scope(self, scope: dict[str, str]) -> dict[str, str]:
        return {"app_name": self.app_name, "user_id": digest(scope_key(scope), 32)}

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
