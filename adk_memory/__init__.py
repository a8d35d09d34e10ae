"""adk-memory: durable sessions and long-term memory for Google ADK agents on PostgreSQL.

The public names below are imported on first use (PEP 562), not when the package is: the
`adk-memory` command and every `adk_memory.*` module import this package first, and importing
all of it loads all of ADK (over a second), which `adk-memory --version` or `--help` never
needs. The imports under `TYPE_CHECKING` are the one list of what is exported from where: type
checkers read them, and `__getattr__` resolves a name from them.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adk import (
        OPT_OUT_STATE_KEY,
        BudgetPolicy,
        CompactionConfig,
        CreateMemoryTool,
        DelegationFilterPlugin,
        ForgetMemoryTool,
        LoadMemoryTool,
        LoadProfilesTool,
        MemoryBlock,
        MemoryContextCallback,
        MemoryContextConfig,
        MemoryContextPlugin,
        MemoryGenerationPlugin,
        MemoryStack,
        PreloadMemoryTool,
        ProcedureFeedbackPlugin,
        RecursiveSummarizationPlugin,
        RememberHowTool,
        SlidingWindowPlugin,
        SummarizationError,
        SweepStats,
        TokenBudgetPlugin,
        ToolResultArchivePlugin,
        TriggerConfig,
        collect_services,
        configure,
        memory_service_from_uri,
        register,
        session_service_from_uri,
        sweep_idle_sessions,
    )
    from .config import (
        AppMemoryConfig,
        ConsolidationConfig,
        CustomizationConfig,
        CustomTopic,
        DatabaseTimeouts,
        GenerationConfig,
        ManagedTopic,
        MemoryBankConfig,
        RetrievalConfig,
        StructuredMemoryConfig,
        StructuredMemorySchemaConfig,
        TtlConfig,
    )
    from .db.embedded import EmbeddedPostgresUnavailableError
    from .db.engine import DEFAULT_SCHEMA, make_engine, normalise_url
    from .db.migrations import MigrationError, SchemaVersionError
    from .db.vectors import EmbeddingDimensionError
    from .errors import (
        AdkMemoryError,
        AlreadyExistsError,
        DatabaseTimeoutError,
        DatabaseUnavailableError,
        ErasedError,
        InputValidationError,
        NotFoundError,
        SessionNotFoundError,
        StaleSessionError,
    )
    from .memory.app_config import AppConfigError, AppConfigVersion
    from .memory.embeddings import Embedder, GeminiEmbedder, LocalEmbedder
    from .memory.entries import to_memory_entry
    from .memory.generation.llm import GenerationOutputError
    from .memory.guard import (
        ChainedGuard,
        DefaultMemoryGuard,
        GuardAction,
        GuardVerdict,
        MemoryGuard,
        ModelArmorGuard,
        ModelMemoryGuard,
        NoGuard,
    )
    from .memory.models import (
        GeneratedMemory,
        GenerateMemoriesOperation,
        GuardedFact,
        Memory,
        MemoryAction,
        MemoryFact,
        MemoryFilter,
        MemoryPage,
        MemoryRevision,
        MemoryType,
        QuarantinedMemory,
        RetrievedMemory,
        SourceType,
    )
    from .memory.profiles import MemoryProfile, ProfileRevision
    from .memory.rendering import neutralise
    from .memory.screen import MemoryRejectedError
    from .memory.service import PostgresMemoryService
    from .redaction import PiiRedactor, Redactor
    from .sessions.service import PostgresSessionService
    from .sessions.store import IdleSession
    from .settings.database import embedded_url


@functools.cache
def _sources() -> dict[str, str]:
    """Each exported name and the module it comes from, read from the imports above."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    [block] = [node for node in tree.body if isinstance(node, ast.If)]
    return {
        alias.asname or alias.name: "." * node.level + (node.module or "")
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def __getattr__(name: str) -> Any:
    source = _sources().get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(source, __name__), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "DEFAULT_SCHEMA",
    "OPT_OUT_STATE_KEY",
    "AdkMemoryError",
    "AlreadyExistsError",
    "AppConfigError",
    "AppConfigVersion",
    "AppMemoryConfig",
    "BudgetPolicy",
    "ChainedGuard",
    "CompactionConfig",
    "ConsolidationConfig",
    "CreateMemoryTool",
    "CustomTopic",
    "CustomizationConfig",
    "DatabaseTimeoutError",
    "DatabaseTimeouts",
    "DatabaseUnavailableError",
    "DefaultMemoryGuard",
    "DelegationFilterPlugin",
    "EmbeddedPostgresUnavailableError",
    "Embedder",
    "EmbeddingDimensionError",
    "ErasedError",
    "ForgetMemoryTool",
    "GeminiEmbedder",
    "GenerateMemoriesOperation",
    "GeneratedMemory",
    "GenerationConfig",
    "GenerationOutputError",
    "GuardAction",
    "GuardVerdict",
    "GuardedFact",
    "IdleSession",
    "InputValidationError",
    "LoadMemoryTool",
    "LoadProfilesTool",
    "LocalEmbedder",
    "ManagedTopic",
    "Memory",
    "MemoryAction",
    "MemoryBankConfig",
    "MemoryBlock",
    "MemoryContextCallback",
    "MemoryContextConfig",
    "MemoryContextPlugin",
    "MemoryFact",
    "MemoryFilter",
    "MemoryGenerationPlugin",
    "MemoryGuard",
    "MemoryPage",
    "MemoryProfile",
    "MemoryRejectedError",
    "MemoryRevision",
    "MemoryStack",
    "MemoryType",
    "MigrationError",
    "ModelArmorGuard",
    "ModelMemoryGuard",
    "NoGuard",
    "NotFoundError",
    "PiiRedactor",
    "PostgresMemoryService",
    "PostgresSessionService",
    "PreloadMemoryTool",
    "ProcedureFeedbackPlugin",
    "ProfileRevision",
    "QuarantinedMemory",
    "RecursiveSummarizationPlugin",
    "Redactor",
    "RememberHowTool",
    "RetrievalConfig",
    "RetrievedMemory",
    "SchemaVersionError",
    "SessionNotFoundError",
    "SlidingWindowPlugin",
    "SourceType",
    "StaleSessionError",
    "StructuredMemoryConfig",
    "StructuredMemorySchemaConfig",
    "SummarizationError",
    "SweepStats",
    "TokenBudgetPlugin",
    "ToolResultArchivePlugin",
    "TriggerConfig",
    "TtlConfig",
    "collect_services",
    "configure",
    "embedded_url",
    "make_engine",
    "memory_service_from_uri",
    "neutralise",
    "normalise_url",
    "register",
    "session_service_from_uri",
    "sweep_idle_sessions",
    "to_memory_entry",
]
