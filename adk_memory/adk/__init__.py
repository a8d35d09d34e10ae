"""Everything that touches ADK's runtime: the edge where adk-memory meets an ADK agent.

Owns: the memory tools (`tools.py`, `procedures.py`, `profiles.py`), the callbacks and plugins
that put memories into a model request (`callbacks.py`) or generate them from a session
(`triggers.py`), the compaction plugins (`compaction/`), ADK's service URI schemes and registry
(`services.py`), the one-call wiring (`stack.py`: `configure`), the memory inspector and HTTP
error mapping for ADK's servers, Vertex AI's REST API served from both services (`vertex_api/`,
imported on its own: not part of this face), and the operator flows that need both services
(erasure, Vertex AI import/export). Importing this face loads ADK (its modules subclass ADK's
types).

It never writes SQL or opens a connection of its own (the services in `memory/` and
`sessions/` do), never uses ADK's private modules (`_adk_private.py` is the one shim), and is
imported by nothing in `memory/`, `sessions/` or `db/` (arrows point from here to them).
"""

from .callbacks import (
    DEFAULT_PREAMBLE,
    ContextMemory,
    MemoryBlock,
    MemoryContextCallback,
    MemoryContextPlugin,
    MemoryTemplate,
)
from .compaction import (
    Budget,
    BudgetPolicy,
    DelegationFilterPlugin,
    RecursiveSummarizationPlugin,
    SlidingWindowPlugin,
    SummarizationError,
    TokenBudgetPlugin,
    ToolResultArchivePlugin,
    fit_to_budget,
    keep_last_turns,
)
from .procedures import ProcedureFeedbackPlugin, RememberHowTool
from .profiles import LoadProfilesTool, load_profiles
from .services import (
    collect_services,
    memory_service_from_uri,
    register,
    session_service_from_uri,
)
from .stack import (
    CompactionConfig,
    MemoryContextConfig,
    MemoryStack,
    TriggerConfig,
    compaction_plugins,
    configure,
)
from .tools import (
    CreateMemoryTool,
    ForgetMemoryTool,
    LoadMemoryTool,
    PreloadMemoryTool,
    create_memory,
    forget_memory,
    load_memory,
    preload_memory,
)
from .triggers import OPT_OUT_STATE_KEY, MemoryGenerationPlugin, SweepStats, sweep_idle_sessions

__all__ = [
    "DEFAULT_PREAMBLE",
    "OPT_OUT_STATE_KEY",
    "Budget",
    "BudgetPolicy",
    "CompactionConfig",
    "ContextMemory",
    "CreateMemoryTool",
    "DelegationFilterPlugin",
    "ForgetMemoryTool",
    "LoadMemoryTool",
    "LoadProfilesTool",
    "MemoryBlock",
    "MemoryContextCallback",
    "MemoryContextConfig",
    "MemoryContextPlugin",
    "MemoryGenerationPlugin",
    "MemoryStack",
    "MemoryTemplate",
    "PreloadMemoryTool",
    "ProcedureFeedbackPlugin",
    "RecursiveSummarizationPlugin",
    "RememberHowTool",
    "SlidingWindowPlugin",
    "SummarizationError",
    "SweepStats",
    "TokenBudgetPlugin",
    "ToolResultArchivePlugin",
    "TriggerConfig",
    "collect_services",
    "compaction_plugins",
    "configure",
    "create_memory",
    "fit_to_budget",
    "forget_memory",
    "keep_last_turns",
    "load_memory",
    "load_profiles",
    "memory_service_from_uri",
    "preload_memory",
    "register",
    "session_service_from_uri",
    "sweep_idle_sessions",
]
