"""adk-memory: durable sessions and long-term memory for Google ADK agents on PostgreSQL.

The public API is the names in `__all__`: the two services and how to wire them into ADK
(`configure`, `register`, the URI factories), the plugins, tools and callbacks the README's
examples use, the configuration types, the memory guards, and the base errors. Everything else
has a home in a room's face: `adk_memory.adk` (everything that touches ADK's runtime),
`adk_memory.memory` (long-term memory: the service, its models and embedders),
`adk_memory.memory.guard`, `adk_memory.sessions`, `adk_memory.db`, `adk_memory.config` and
`adk_memory.errors` (every exception).

The names are imported on first use (PEP 562, see `_faces.py`), not when the package is: the
`adk-memory` command and every `adk_memory.*` module import this package first, and importing
all of it loads all of ADK (over a second), which `adk-memory --version` or `--help` never
needs. The first `TYPE_CHECKING` block below is the one list of what is exported from where:
type checkers read it, and `__getattr__` resolves a name from it. The second lists the names
this package exported before it had faces: still importable from here for one release, each
with a `DeprecationWarning` naming its new home.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._faces import lazy_face, type_checking_imports

if TYPE_CHECKING:
    from .adk import (
        CompactionConfig,
        DelegationFilterPlugin,
        LoadProfilesTool,
        MemoryContextCallback,
        MemoryContextConfig,
        MemoryContextPlugin,
        MemoryGenerationPlugin,
        ProcedureFeedbackPlugin,
        RecursiveSummarizationPlugin,
        RememberHowTool,
        SlidingWindowPlugin,
        TokenBudgetPlugin,
        ToolResultArchivePlugin,
        TriggerConfig,
        configure,
        memory_service_from_uri,
        register,
        session_service_from_uri,
    )
    from .config import (
        ConsolidationConfig,
        CustomizationConfig,
        CustomTopic,
        MemoryBankConfig,
        StructuredMemoryConfig,
        StructuredMemorySchemaConfig,
        TtlConfig,
    )
    from .errors import (
        AdkMemoryError,
        DatabaseTimeoutError,
        DatabaseUnavailableError,
        InputValidationError,
        MemoryRejectedError,
        NotFoundError,
    )
    from .memory.guard import (
        ChainedGuard,
        DefaultMemoryGuard,
        GuardAction,
        GuardVerdict,
        ModelMemoryGuard,
    )
    from .memory.models import MemoryFilter
    from .memory.service import PostgresMemoryService
    from .redaction import PiiRedactor
    from .sessions.service import PostgresSessionService

if TYPE_CHECKING:  # moved: deprecated here, removed in the next release
    from .adk import OPT_OUT_STATE_KEY as OPT_OUT_STATE_KEY
    from .adk import BudgetPolicy as BudgetPolicy
    from .adk import CreateMemoryTool as CreateMemoryTool
    from .adk import ForgetMemoryTool as ForgetMemoryTool
    from .adk import LoadMemoryTool as LoadMemoryTool
    from .adk import MemoryBlock as MemoryBlock
    from .adk import MemoryStack as MemoryStack
    from .adk import PreloadMemoryTool as PreloadMemoryTool
    from .adk import SweepStats as SweepStats
    from .adk import collect_services as collect_services
    from .adk import sweep_idle_sessions as sweep_idle_sessions
    from .config import AppMemoryConfig as AppMemoryConfig
    from .config import DatabaseTimeouts as DatabaseTimeouts
    from .config import GenerationConfig as GenerationConfig
    from .config import ManagedTopic as ManagedTopic
    from .config import RetrievalConfig as RetrievalConfig
    from .db import DEFAULT_SCHEMA as DEFAULT_SCHEMA
    from .db import make_engine as make_engine
    from .db import normalise_url as normalise_url
    from .errors import AlreadyExistsError as AlreadyExistsError
    from .errors import AppConfigError as AppConfigError
    from .errors import EmbeddedPostgresUnavailableError as EmbeddedPostgresUnavailableError
    from .errors import EmbeddingDimensionError as EmbeddingDimensionError
    from .errors import ErasedError as ErasedError
    from .errors import GenerationOutputError as GenerationOutputError
    from .errors import MigrationError as MigrationError
    from .errors import SchemaVersionError as SchemaVersionError
    from .errors import SessionNotFoundError as SessionNotFoundError
    from .errors import StaleSessionError as StaleSessionError
    from .errors import SummarizationError as SummarizationError
    from .memory import AppConfigVersion as AppConfigVersion
    from .memory import Embedder as Embedder
    from .memory import GeminiEmbedder as GeminiEmbedder
    from .memory import GeneratedMemory as GeneratedMemory
    from .memory import GenerateMemoriesOperation as GenerateMemoriesOperation
    from .memory import GuardedFact as GuardedFact
    from .memory import LocalEmbedder as LocalEmbedder
    from .memory import Memory as Memory
    from .memory import MemoryAction as MemoryAction
    from .memory import MemoryFact as MemoryFact
    from .memory import MemoryPage as MemoryPage
    from .memory import MemoryProfile as MemoryProfile
    from .memory import MemoryRevision as MemoryRevision
    from .memory import MemoryType as MemoryType
    from .memory import ProfileRevision as ProfileRevision
    from .memory import QuarantinedMemory as QuarantinedMemory
    from .memory import RetrievedMemory as RetrievedMemory
    from .memory import SourceType as SourceType
    from .memory import neutralise as neutralise
    from .memory import to_memory_entry as to_memory_entry
    from .memory.guard import MemoryGuard as MemoryGuard
    from .memory.guard import ModelArmorGuard as ModelArmorGuard
    from .memory.guard import NoGuard as NoGuard
    from .redaction import Redactor as Redactor
    from .sessions import IdleSession as IdleSession
    from .settings import embedded_url as embedded_url


def _sources() -> dict[str, str]:
    """Each public name and the module it comes from, read from the first block above."""
    return type_checking_imports(__file__)[0]


__getattr__, __dir__ = lazy_face(__name__, __file__, globals())

__all__ = [
    "AdkMemoryError",
    "ChainedGuard",
    "CompactionConfig",
    "ConsolidationConfig",
    "CustomTopic",
    "CustomizationConfig",
    "DatabaseTimeoutError",
    "DatabaseUnavailableError",
    "DefaultMemoryGuard",
    "DelegationFilterPlugin",
    "GuardAction",
    "GuardVerdict",
    "InputValidationError",
    "LoadProfilesTool",
    "MemoryBankConfig",
    "MemoryContextCallback",
    "MemoryContextConfig",
    "MemoryContextPlugin",
    "MemoryFilter",
    "MemoryGenerationPlugin",
    "MemoryRejectedError",
    "ModelMemoryGuard",
    "NotFoundError",
    "PiiRedactor",
    "PostgresMemoryService",
    "PostgresSessionService",
    "ProcedureFeedbackPlugin",
    "RecursiveSummarizationPlugin",
    "RememberHowTool",
    "SlidingWindowPlugin",
    "StructuredMemoryConfig",
    "StructuredMemorySchemaConfig",
    "TokenBudgetPlugin",
    "ToolResultArchivePlugin",
    "TriggerConfig",
    "TtlConfig",
    "configure",
    "memory_service_from_uri",
    "register",
    "session_service_from_uri",
]
