"""The read phase of a generation job: everything it needs from the database, before it
decides.

Owns: which reads a job makes and when, so their round trips are counted in one place. A job
reads (statements, each its own connection checkout):

- a session job: its session's watermark (1), before extraction (it decides what the model
  sees);
- when it consolidates: the candidates, the memories most similar to its facts (1, after one
  embedding call: they depend on what extraction found), and for a procedure job their
  support (1);
- with profile schemas and material: the scope's profiles (1);
- when consolidation targeted memories: their trust history (1). The targeted memories
  themselves are candidates already read (consolidation only targets those), so they are not
  read again.

No read is held open across a model call (a connection is never kept while the model thinks).
It never writes and never decides: `decide` does, `write` applies.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timezone
from typing import Any

from ...config import MemoryBankConfig
from ..generation import ExtractedFact
from ..models import Memory
from ..policy import trust
from ..procedure_rule import Support
from ..store import MemoryStore
from ..store.profiles import ProfileStore
from ..store.support import SupportStore

Embed = Callable[[Sequence[str], str], Awaitable[list[list[float]] | None]]
"""The service's embedder: texts and a task ("query" or "document") -> vectors, or None
without one."""


class Reader:
    """A job's reads against the memory, profile and procedure-support stores."""

    def __init__(
        self,
        *,
        store: MemoryStore,
        profiles: ProfileStore,
        support: SupportStore | None,
        embed: Embed,
        config: MemoryBankConfig,
    ) -> None:
        self._store = store
        self._profiles = profiles
        self._support = support
        self._embed = embed
        self._config = config

    async def watermark(self, key: str, session_id: str | None) -> tuple[str, float] | None:
        """The last event of the session already turned into the scope's memories."""
        return None if session_id is None else await self._store.watermark(key, session_id)

    async def candidates(self, key: str, facts: list[ExtractedFact]) -> list[Memory]:
        """The existing memories most similar to each fact: one embedding call and one query
        for all the facts. With an embedder, similarity alone decides (full-text OR-matching
        would rank nearly every memory of a big scope: they all mention "the user"); without,
        full-text search does. Each with its effective confidence (the model is shown it)."""
        texts = [f.fact for f in facts]
        found = await self._store.candidates(
            key,
            facts=texts,
            embeddings=await self._embed(texts, "query"),
            per_fact=self._config.generation.similar_memories,
        )
        now = datetime.now(timezone.utc)
        return [trust.with_effective(m, self._config.trust, now) for m in found]

    async def support(self, key: str, memories: list[Memory]) -> dict[str, Support]:
        """Who supports these procedures (none without a support store or memories)."""
        if self._support is None or not memories:
            return {}
        return await self._support.support(key, [m.id for m in memories])

    async def profiles(self, key: str) -> dict[str, dict[str, Any]]:
        """The scope's structured profiles, by schema id."""
        return await self._profiles.profiles(key)

    async def earlier_facts(
        self, key: str, candidates: list[Memory], count: int
    ) -> dict[str, list[str]]:
        """Each candidate's facts in its latest `count` revisions, newest first, those equal to
        its current fact left out (no read when `count` is 0)."""
        facts = await self._store.revision_facts(key, [m.id for m in candidates], count)
        current = {m.id: m.fact for m in candidates}
        return {
            memory_id: [f for f in found if f != current.get(memory_id)]
            for memory_id, found in facts.items()
        }

    async def history(self, key: str, memory_ids: list[str]) -> dict[str, trust.History]:
        """The trust history of the targeted memories (none targeted: no read)."""
        return await self._store.trust_history(key, memory_ids) if memory_ids else {}
