"""The small typed configs `configure()` takes for its plugins, and the plugins they choose.

Owns: `MemoryContextConfig`, `TriggerConfig` and `CompactionConfig` (their defaults taken from
the plugins they configure, so the two never disagree), and the plugins each chooses, in the
order they must run (`memory_plugins`, `compaction_plugins`). It never builds a service and
never reads the environment: `adk_memory.adk.stack` hands it the services and the model.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal

from google.adk.models.base_llm import BaseLlm
from google.adk.plugins.base_plugin import BasePlugin
from pydantic import BaseModel, ConfigDict, Field

from ..config import CustomTopic, ManagedTopic
from ..memory.service import PostgresMemoryService
from ..redaction import Redactor
from .callbacks import MemoryContextCallback, MemoryContextPlugin
from .compaction.archive import ToolResultArchivePlugin
from .compaction.budget import TokenBudgetPlugin
from .compaction.delegation import DelegationFilterPlugin
from .compaction.summarize import RecursiveSummarizationPlugin
from .compaction.window import SlidingWindowPlugin
from .triggers import MemoryGenerationPlugin, OptOut

__all__ = [
    "DEFAULT_CONTEXT",
    "DEFAULT_TRIGGERS",
    "CompactionConfig",
    "MemoryContextConfig",
    "TriggerConfig",
    "compaction_plugins",
    "memory_plugins",
]


def _default(function: Callable[..., Any], parameter: str) -> Any:
    """The default of one of `function`'s parameters: the configs below take their defaults
    from the plugins they configure, so the two can never disagree."""
    return inspect.signature(function).parameters[parameter].default


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MemoryContextConfig(_Config):
    """What `MemoryContextPlugin` puts into every model call's system instruction: the user's
    profile and the memories relevant to the message (see `MemoryContextCallback`)."""

    top_k: int = Field(default=_default(MemoryContextCallback, "top_k"), ge=1)
    """Relevant memories retrieved per invocation, before the budget trims them (10)."""

    max_tokens: int = Field(default=_default(MemoryContextCallback, "max_tokens"), ge=1)
    """Budget of the appended text, estimated locally (1000)."""

    profile_topics: tuple[ManagedTopic | CustomTopic | str, ...] = ()
    """Topics whose memories are always shown, newest first, e.g. `(ManagedTopic.
    USER_PREFERENCES,)`; empty: no profile, only the memories relevant to the message."""

    profile_max_tokens: int | None = Field(default=None, ge=0)
    """The profile's share of `max_tokens` (None: half)."""

    procedure_top_k: int = Field(default=_default(MemoryContextCallback, "procedure_top_k"), ge=1)
    """The app's procedures retrieved per invocation by similarity to the message (3)."""

    procedure_max_tokens: int = Field(
        default=_default(MemoryContextCallback, "procedure_max_tokens"), ge=0
    )
    """The app's procedures' share of `max_tokens` (0: no procedures, no procedure search)."""

    timeout: float | None = Field(default=_default(MemoryContextCallback, "timeout"), gt=0)
    """Seconds a retrieval may take before the model is called without memories (5)."""


class TriggerConfig(_Config):
    """When conversations are sent to memory generation (`MemoryGenerationPlugin`). Every trigger
    only enqueues; the memory service's worker extracts and consolidates in the background."""

    every_n_turns: int | None = Field(
        default=_default(MemoryGenerationPlugin, "every_n_turns"), ge=1
    )
    """Enqueue after every N-th user turn (1: after each turn); None: only at session end
    (`stack.generation.end_session(session)`) and from the idle sweep."""

    opt_out: OptOut | None = None
    """An extra per-user opt-out predicate on the session (sync or async), besides the
    `user:adk_memory_generation_opt_out` state key."""


class CompactionConfig(_Config):
    """Which compaction plugins keep long conversations within the model's budget. Everything
    is off by default: each one changes what the model sees, so each is a deliberate choice.
    None of them modifies or deletes a stored event."""

    summarize: bool = False
    """Summarize older events in the background into one persisted ADK compaction, with the
    stack's model (`RecursiveSummarizationPlugin`). Leave `App.events_compaction_config` unset."""

    summarize_after_events: int | None = Field(
        default=_default(RecursiveSummarizationPlugin, "event_threshold"), ge=1
    )
    """Summarize once this many raw events follow the latest summary (50); None: off."""

    summarize_after_tokens: int | None = Field(
        default=_default(RecursiveSummarizationPlugin, "token_threshold"), ge=1
    )
    """Summarize once the history is estimated at this many tokens (None: off)."""

    keep_last_events: int = Field(default=_default(RecursiveSummarizationPlugin, "keep_last"), ge=0)
    """Raw events never summarized, so the latest exchange stays verbatim (10)."""

    archive_tool_results: bool = False
    """Save large tool results as artifacts and send the model a short reference instead
    (`ToolResultArchivePlugin`; add ADK's `load_artifacts` tool to let the model read one)."""

    archive_threshold_tokens: int = Field(
        default=_default(ToolResultArchivePlugin, "threshold_tokens"), ge=1
    )
    """Tool results estimated above this many tokens are archived (2000)."""

    window_turns: int | None = Field(default=None, ge=1)
    """Send only the last N user turns (`SlidingWindowPlugin`; a cut never splits a tool call
    from its result); None: off."""

    token_budget: int | Literal["auto"] | None = None
    """Trim the oldest whole turns to fit a token budget (`TokenBudgetPlugin`): a number of
    tokens (instructions and tool declarations count); "auto": `context_fraction` of the
    model's context window when `summarize` is on, else a conservative 8000 tokens / 50
    messages; None: off."""

    context_fraction: float = Field(
        default=_default(TokenBudgetPlugin, "context_fraction"), gt=0, le=1
    )
    """The share of the context window the "auto" budget allows (0.5)."""

    filter_delegation: bool = False
    """In a multi-agent app, show each sub-agent the top level of the conversation and its own
    delegation chain, not other sub-agents' tool traffic (`DelegationFilterPlugin`)."""


DEFAULT_CONTEXT = MemoryContextConfig()
"""configure()'s default: memories in the system instruction, no profile."""

DEFAULT_TRIGGERS = TriggerConfig()
"""configure()'s default: generation enqueued after every turn."""


def compaction_plugins(
    config: CompactionConfig, model: BaseLlm, redactor: Redactor | None = None
) -> tuple[BasePlugin, ...]:
    """The plugins `config` chooses, in the order they must run: filtering and archiving first,
    so the window and the budget measure the smaller request; the budget last among the
    request-trimming ones, as it counts everything the others left. `model` writes summaries.
    `redactor` goes to the plugins that store text or send it to a model of their own (the
    archive's artifacts and references, the summarizer's input and summaries); the others only
    choose which contents the agent's model gets."""
    chosen: list[BasePlugin] = []
    if config.filter_delegation:
        chosen.append(DelegationFilterPlugin())
    if config.archive_tool_results:
        chosen.append(
            ToolResultArchivePlugin(
                threshold_tokens=config.archive_threshold_tokens, redactor=redactor
            )
        )
    if config.window_turns is not None:
        chosen.append(SlidingWindowPlugin(config.window_turns))
    if config.token_budget is not None:
        fixed = None if config.token_budget == "auto" else config.token_budget
        chosen.append(
            TokenBudgetPlugin(
                max_tokens=fixed,
                context_fraction=config.context_fraction,
                with_summarizer=config.summarize,
            )
        )
    if config.summarize:
        chosen.append(
            RecursiveSummarizationPlugin(
                model,
                event_threshold=config.summarize_after_events,
                token_threshold=config.summarize_after_tokens,
                keep_last=config.keep_last_events,
                redactor=redactor,
            )
        )
    return tuple(chosen)


def memory_plugins(
    memory_service: PostgresMemoryService,
    context: MemoryContextConfig | None,
    triggers: TriggerConfig | None,
) -> tuple[MemoryContextPlugin | None, MemoryGenerationPlugin | None]:
    """The memory-context plugin and the generation trigger plugin the configs choose."""
    memory_context = None
    if context is not None:
        # dict(), not model_dump(): CustomTopic objects stay objects.
        memory_context = MemoryContextPlugin(MemoryContextCallback(memory_service, **dict(context)))
    generation = None
    if triggers is not None:
        generation = MemoryGenerationPlugin(
            memory_service, every_n_turns=triggers.every_n_turns, opt_out=triggers.opt_out
        )
    return memory_context, generation
