"""adk-memory: durable sessions and long-term memory for Google ADK agents on PostgreSQL."""

from .config import (
    CustomizationConfig,
    CustomTopic,
    GenerationConfig,
    ManagedTopic,
    MemoryBankConfig,
    RetrievalConfig,
    TtlConfig,
)
from .db.embedded import EmbeddedPostgresUnavailableError, embedded_url
from .db.engine import DEFAULT_SCHEMA, normalise_url
from .db.migrations import MigrationError, SchemaVersionError
from .memory.embeddings import Embedder, GeminiEmbedder, LocalEmbedder
from .memory.models import (
    GeneratedMemory,
    GenerateMemoriesOperation,
    Memory,
    MemoryAction,
    MemoryFilter,
    MemoryPage,
    MemoryRevision,
    RetrievedMemory,
    SourceType,
)
from .memory.service import PostgresMemoryService, to_memory_entry
from .memory.store import EmbeddingDimensionError
from .sessions.redaction import PiiRedactor, Redactor
from .sessions.service import PostgresSessionService

__all__ = [
    "DEFAULT_SCHEMA",
    "CustomTopic",
    "CustomizationConfig",
    "EmbeddedPostgresUnavailableError",
    "Embedder",
    "EmbeddingDimensionError",
    "GeminiEmbedder",
    "GenerateMemoriesOperation",
    "GeneratedMemory",
    "GenerationConfig",
    "LocalEmbedder",
    "ManagedTopic",
    "Memory",
    "MemoryAction",
    "MemoryBankConfig",
    "MemoryFilter",
    "MemoryPage",
    "MemoryRevision",
    "MigrationError",
    "PiiRedactor",
    "PostgresMemoryService",
    "PostgresSessionService",
    "Redactor",
    "RetrievalConfig",
    "RetrievedMemory",
    "SchemaVersionError",
    "SourceType",
    "TtlConfig",
    "embedded_url",
    "normalise_url",
    "to_memory_entry",
]
