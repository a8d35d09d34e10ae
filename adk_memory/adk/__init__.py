"""Everything that touches ADK's runtime: tools, callbacks, plugins, URI schemes, configuration."""

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
