"""Embedders: the one protocol the memory service needs, and its implementations.

Owns: turning texts into vectors, in batches, for documents (stored facts) and queries. It never
touches the database; the store fixes the dimension per schema and rejects a mismatch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

EmbeddingTask = Literal["document", "query"]


@runtime_checkable
class Embedder(Protocol):
    """Makes vectors of a fixed size. Implementations batch: one call per `embed`."""

    dimensions: int

    async def embed(
        self, texts: Sequence[str], *, task: EmbeddingTask = "document"
    ) -> list[list[float]]:
        """One vector of `dimensions` floats per text, in order."""
        ...
