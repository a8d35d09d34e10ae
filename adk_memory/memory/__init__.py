"""Long-term memory on PostgreSQL + pgvector: ADK's `BaseMemoryService` and Memory Bank's API.

Owns: the memory service (`PostgresMemoryService`), what it takes and returns (memories, facts,
revisions and their options, filters with Memory Bank's metadata conditions, pages, purge
results, generation operations, quarantined facts, profiles, stored app configurations), the
embedders, scopes, and the rooms behind the service, each with its own
face: `service/` (the service composed of its components) over the pipeline room
(`pipeline/`: the typed job and its generator; `generation/`: the model calls; `jobs/`: the
queue and worker), over `store/` (every statement on the memory tables) and `policy/` (the
screen, trust, the anonymiser) over `guard/`; the flat modules are the vocabulary they share.
The arrows point that way only (`tests/test_architecture.py`). Its names below resolve on first
use, so importing one module of this package never loads the service (and with it ADK).

It never imports `adk_memory.sessions` or `adk_memory.adk` (arrows point from `adk/` to here and
from here to `db/`), never reads a session's events from the session tables, and never writes a
table outside its migrations in `db/migrations.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._faces import lazy_face

if TYPE_CHECKING:
    from .app_config import AppConfigVersion
    from .embeddings import Embedder, EmbeddingTask, GeminiEmbedder, LocalEmbedder
    from .entries import to_memory_entry
    from .models import (
        GeneratedMemory,
        GenerateMemoriesOperation,
        GuardedFact,
        IngestEventsResult,
        Memory,
        MemoryAction,
        MemoryFact,
        MemoryFilter,
        MemoryPage,
        MemoryRevision,
        MemoryType,
        MetadataCondition,
        MetadataConjunction,
        PurgeResult,
        QuarantinedMemory,
        RetrievedMemory,
        RevisionOptions,
        SourceType,
    )
    from .rendering import neutralise
    from .scope import Scope, user_scope
    from .service.profiles import MemoryProfile, ProfileRevision
    from .service.service import PostgresMemoryService

__getattr__, __dir__ = lazy_face(__name__, __file__, globals())

__all__ = [
    "AppConfigVersion",
    "Embedder",
    "EmbeddingTask",
    "GeminiEmbedder",
    "GenerateMemoriesOperation",
    "GeneratedMemory",
    "GuardedFact",
    "IngestEventsResult",
    "LocalEmbedder",
    "Memory",
    "MemoryAction",
    "MemoryFact",
    "MemoryFilter",
    "MemoryPage",
    "MemoryProfile",
    "MemoryRevision",
    "MemoryType",
    "MetadataCondition",
    "MetadataConjunction",
    "PostgresMemoryService",
    "ProfileRevision",
    "PurgeResult",
    "QuarantinedMemory",
    "RetrievedMemory",
    "RevisionOptions",
    "Scope",
    "SourceType",
    "neutralise",
    "to_memory_entry",
    "user_scope",
]
