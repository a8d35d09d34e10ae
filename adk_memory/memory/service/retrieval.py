"""Finding memories: hybrid search over a scope, ADK's `search_memory`, and the text index.

Owns: `PostgresMemoryService.retrieval`: `retrieve_memories` (the query redacted before the
embedding model sees it, the store's search built from this service's retrieval settings and
the time the query names: `plan`, no I/O, which benchmarks use to build the statement the
service runs), ADK's `search_memory` (a blank query finds nothing), and `reindex_text`. It
never writes a memory (reindexing rewrites only the index), never reads another scope's
memories, and never hands a model a quarantined one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone

from google.adk.memory.base_memory_service import SearchMemoryResponse

from ...config import RetrievalConfig, TrustConfig
from ...db.batches import in_batches
from ...errors import InputValidationError, OptedOutError
from ...telemetry import annotate, traced
from ..checks import MAX_TOP_K, as_filter, check_count, check_query, check_time, seconds
from ..entries import to_memory_entry
from ..models import Memory, MemoryFilter, MetadataConjunction, RetrievedMemory
from ..policy.screen import FactScreen
from ..scope import Scope, kind_key, read_for, scope_key, user_scope, validate_scope
from ..store import Search
from ..temporal import find_window
from .core import Embedding, Gate, Readiness, believed
from .memories import Memories

logger = logging.getLogger(__name__)


class Retrieval:
    """Search over one scope's memories (see the module docstring). Built with the screen (a
    query is redacted), the embedding, the gate (`opt_out_hides`), readiness, the retrieval
    and trust settings, and the memories (a search without a query lists them)."""

    def __init__(
        self,
        screen: FactScreen,
        embedding: Embedding,
        gate: Gate,
        ready: Readiness,
        memories: Memories,
        *,
        retrieval: RetrievalConfig,
        trust: TrustConfig,
    ) -> None:
        self._screen = screen
        self._embedding = embedding
        self._gate = gate
        self._ready = ready
        self._memories = memories
        self._retrieval = retrieval
        self._trust = trust

    @traced("memory.retrieve_memories")
    async def retrieve_memories(
        self,
        scope: Mapping[str, str],
        *,
        search_query: str | None = None,
        top_k: int = 3,
        filter: MemoryFilter | str | None = None,
        filter_groups: Sequence[MetadataConjunction] | None = None,
        now: datetime | None = None,
    ) -> list[RetrievedMemory]:
        """Memories of exactly `scope`. With a query: the `top_k` (at most 100) most relevant,
        best first (hybrid vector + full-text, and the memories of a time the query names,
        blended with recency, importance and effective confidence). Without: all of them,
        newest first (score 0). `filter`: a `MemoryFilter`, or Memory Bank's AIP-160 text
        (`memory.filters`: fact, create_time, update_time, topics, metadata.KEY);
        `filter_groups`: Memory Bank's metadata filter groups (an OR of ANDs). Both narrow the
        candidates before ranking, so `top_k` results still come back when enough match. `now`:
        what relative times in the query ("last week") are read against, in its timezone
        (naive: UTC); default the clock, in UTC."""
        checked = validate_scope(scope)
        check_count("top_k", top_k, MAX_TOP_K)
        search_query = check_query(search_query)
        filter = as_filter(filter, filter_groups)
        if self._retrieval.opt_out_hides:
            await self._gate.refuse_opted_out(checked)
        if search_query is None or not search_query.strip():
            return [
                RetrievedMemory(memory=m, score=0.0)
                for m in await self._all_memories(checked, filter)
            ]
        check_time("now", now)
        retrieval = self._retrieval
        if retrieval.mode == "vector" and self._embedding.embedder is None:
            raise InputValidationError("Vector-only retrieval needs an embedder.")
        # The query is often the user's own message: redacted before the embedding model sees
        # it (and so it matches the redacted facts it should find).
        redacted = self._screen.text(search_query)
        vectors = (
            await self._embedding.embed([redacted], "query") if retrieval.mode != "text" else None
        )
        store = await self._ready()
        search = self.plan(
            checked,
            search_query,
            redacted,
            vectors[0] if vectors else None,
            top_k=top_k,
            flt=filter,
            now=now or datetime.now(timezone.utc),
        )
        annotate(
            "retrieval",
            mode=retrieval.mode,
            candidates=search.candidates,
            top_k=top_k,
            time_window=search.window is not None,
        )
        rows = await store.retrieve(search, replica=read_for(checked))
        return [
            RetrievedMemory(memory=believed(m, self._trust), distance=d, score=s)
            for m, d, s in rows
        ]

    def plan(
        self,
        scope: Scope,
        query: str,
        redacted: str,
        vector: Sequence[float] | None,
        *,
        top_k: int,
        flt: MemoryFilter | None,
        now: datetime,
    ) -> Search:
        """The store's search for `query` under this service's retrieval settings: `redacted`
        is searched, the time `query` names (read before redaction, which may mask dates)
        is its window. No I/O: benchmarks build the statement the service runs with it."""
        retrieval = self._retrieval
        window = find_window(query, now) if retrieval.temporal_cues else None
        key, flt = kind_key(scope_key(scope), flt)
        return Search(
            scope_key=key,
            query_text=redacted,
            query_embedding=vector,
            top_k=top_k,
            candidates=max(retrieval.candidates, top_k),
            rrf_k=retrieval.rrf_k,
            weights=(
                retrieval.relevance_weight,
                retrieval.recency_weight,
                retrieval.importance_weight,
            ),
            half_life_seconds=retrieval.recency_half_life.total_seconds(),
            flt=flt,
            use_text=retrieval.mode != "vector",
            floors=(self._similarity_floor(), retrieval.min_text_relevance),
            window=(window.start, window.end) if window else None,
            confidence_weight=retrieval.confidence_weight,
            confidence_half_life_seconds=seconds(self._trust.confidence_half_life),
            turn_length_prior=retrieval.turn_length_prior,
        )

    def _similarity_floor(self) -> float:
        """The configured cosine floor, else the embedder's own calibrated one, else none."""
        configured = self._retrieval.min_similarity
        if configured is not None:
            return configured
        calibrated = getattr(self._embedding.embedder, "similarity_floor", None)
        return -1.0 if calibrated is None else float(calibrated)

    @traced("memory.reindex_text")
    async def reindex_text(
        self, batch_size: int = 1000, *, progress: Callable[[int], None] | None = None
    ) -> int:
        """Rebuild every stored memory's full-text index in this service's form: run once after
        upgrading from a version that indexed text without normalisation and bigrams (those
        memories are otherwise found only by words typed exactly as stored, never in Chinese,
        Japanese or Thai), or after changing `text_search_language`. Runs in batches (one
        statement to read, one to write, each); safe to run again or alongside traffic.
        `progress` gets the running count. Returns how many memories were indexed
        (`adk-memory memories reindex` runs it)."""
        check_count("batch_size", batch_size, 10_000)
        store = await self._ready()
        after: str | None = None

        async def step(size: int) -> tuple[int, bool]:
            nonlocal after
            batch = await store.reindex_text(after, size)
            after = batch[-1] if batch else after
            return len(batch), len(batch) == size

        return await in_batches(step, batch_size, progress)

    async def _all_memories(self, scope: Scope, flt: MemoryFilter | None) -> list[Memory]:
        memories: list[Memory] = []
        token: str | None = None
        while True:
            page = await self._memories.list_memories(
                scope, filter=flt, page_size=1000, page_token=token
            )
            memories.extend(page.memories)
            if page.next_page_token is None:
                return memories
            token = page.next_page_token

    # ------------------------------------------------------------------ ADK's memory service

    @traced("memory.search_memory")
    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's most relevant memories for `query`, as ADK `MemoryEntry`s. A blank query
        finds nothing (it must never hand a model the whole memory bank)."""
        if not isinstance(query, str) or not query.strip():
            user_scope(app_name, user_id)  # still validated
            return SearchMemoryResponse()
        try:
            results = await self.retrieve_memories(
                user_scope(app_name, user_id),
                search_query=query,
                top_k=self._retrieval.top_k,
            )
        except OptedOutError:  # `opt_out_hides`: the turn goes on without memories
            logger.info("No memories searched: the user opted out (opt_out_hides).")
            return SearchMemoryResponse()
        return SearchMemoryResponse(memories=[to_memory_entry(r) for r in results])
