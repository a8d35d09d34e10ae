"""Compaction plugins: keep long conversations within budget without touching stored events.

Owns: one module a plugin (a sliding window, a token budget, recursive summaries, a delegation
filter, archived tool results), each rewriting only the model request it is handed. The stored
session events are never modified or deleted by any of them, and none of them ever calls the
memory service.
"""

from .archive import ToolResultArchivePlugin
from .budget import (
    DEFAULT_CONTEXT_FRACTION,
    FALLBACK_MAX_MESSAGES,
    FALLBACK_MAX_TOKENS,
    Budget,
    BudgetPolicy,
    TokenBudgetPlugin,
    fit_to_budget,
    request_overhead_tokens,
)
from .delegation import DelegationFilterPlugin, delegation_chain, filter_delegation
from .summarize import RecursiveSummarizationPlugin, SummarizationError
from .window import SlidingWindowPlugin, keep_last_turns

__all__ = [
    "DEFAULT_CONTEXT_FRACTION",
    "FALLBACK_MAX_MESSAGES",
    "FALLBACK_MAX_TOKENS",
    "Budget",
    "BudgetPolicy",
    "DelegationFilterPlugin",
    "RecursiveSummarizationPlugin",
    "SlidingWindowPlugin",
    "SummarizationError",
    "TokenBudgetPlugin",
    "ToolResultArchivePlugin",
    "delegation_chain",
    "filter_delegation",
    "fit_to_budget",
    "keep_last_turns",
    "request_overhead_tokens",
]
