"""Token budget: send the model as much recent history as fits a token (and message) budget.

Owns the budget policy (`BudgetPolicy`: a fixed budget, a fraction of the model's context
window, or fixed fallback limits), `fit_to_budget` (a pure function on a list of contents) and
`TokenBudgetPlugin`, which applies them to every `LlmRequest` in `before_model_callback`.
Tokens are counted locally (`adk_memory.adk.tokens`), newest first; the system instruction and
tool declarations count against the budget. It must never modify or delete session events, and
never call a model to count tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from ...errors import InputValidationError
from ...telemetry import annotate, traced
from ..tokens import (
    MEDIA_TOKENS,
    TokenCache,
    content_tokens,
    context_window,
    part_tokens,
    text_tokens,
)
from ._turns import RequestHistory, SummaryTest, never_summary, pinnable, split_turns, summary_test

FALLBACK_MAX_TOKENS = 8_000
"""History budget when no model-aware budget applies (no summarizer, or an unknown model)."""

FALLBACK_MAX_MESSAGES = 50
"""Message cap that goes with `FALLBACK_MAX_TOKENS`."""

DEFAULT_CONTEXT_FRACTION = 0.5
"""Share of the model's context window a request may fill when a summarizer is configured."""


def _require_positive(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise InputValidationError(f"{name} must be at least 1, got {value}.")


@dataclass(frozen=True)
class Budget:
    """What one request may carry: tokens (instructions and tools included) and, optionally, a
    number of history contents."""

    max_tokens: int
    max_messages: int | None = None

    def __post_init__(self) -> None:
        _require_positive("max_tokens", self.max_tokens)
        _require_positive("max_messages", self.max_messages)


@dataclass(frozen=True)
class BudgetPolicy:
    """How the budget of a request is chosen, in this order:

    1. `max_tokens`, when given: a fixed budget for every model.
    2. `context_fraction` of the model's context window (`tokens.context_window`), when a
       summarizer is configured (`with_summarizer`) and the model is known. The summarizer keeps
       the history short; the budget is the safety net before the window overflows.
    3. Otherwise the fixed fallback limits, `FALLBACK_MAX_TOKENS` / `FALLBACK_MAX_MESSAGES`:
       without a summarizer, truncation is all that keeps the context small, so it is kept
       small; with an unknown model there is no window to take a fraction of.

    `max_messages` caps the history contents in every case (the fallback's 50 when unset).
    """

    max_tokens: int | None = None
    """A fixed token budget; overrides the model-aware budget and the fallback."""

    context_fraction: float = DEFAULT_CONTEXT_FRACTION
    """Share of the model's context window (0 < fraction <= 1) for the model-aware budget."""

    max_messages: int | None = None
    """At most this many history contents per request (None: no cap, or 50 on the fallback)."""

    with_summarizer: bool = False
    """Whether a summarizer (a summarization plugin, or ADK's events compaction) keeps the
    stored history compact; enables the model-aware budget."""

    def __post_init__(self) -> None:
        _require_positive("max_tokens", self.max_tokens)
        _require_positive("max_messages", self.max_messages)
        if not 0 < self.context_fraction <= 1:
            raise InputValidationError(
                f"context_fraction must be in (0, 1], got {self.context_fraction}."
            )

    def budget_for(self, model: str | None) -> Budget:
        """The budget of a request to `model` (a model name, as in `LlmRequest.model`)."""
        if self.max_tokens is not None:
            return Budget(self.max_tokens, self.max_messages)
        window = context_window(model) if self.with_summarizer else None
        if window is not None:
            return Budget(int(window * self.context_fraction), self.max_messages)
        return Budget(FALLBACK_MAX_TOKENS, self.max_messages or FALLBACK_MAX_MESSAGES)


def _instruction_tokens(instruction: object) -> int:
    """Tokens of a system instruction in any of the shapes `GenerateContentConfig` accepts."""
    if instruction is None:
        return 0
    if isinstance(instruction, str):
        return text_tokens(instruction)
    if isinstance(instruction, types.Content):
        return content_tokens(instruction)
    if isinstance(instruction, types.Part):
        return part_tokens(instruction)
    if isinstance(instruction, list):
        return sum(_instruction_tokens(item) for item in instruction)
    return MEDIA_TOKENS


def request_overhead_tokens(llm_request: LlmRequest) -> int:
    """Tokens a request carries besides its contents: the system instruction and the tool
    declarations (both sent on every call, so both count against the budget)."""
    config = llm_request.config
    tools = sum(
        text_tokens(tool.model_dump_json(exclude_none=True))
        for tool in config.tools or ()
        if isinstance(tool, types.Tool)
    )
    return _instruction_tokens(config.system_instruction) + tools


def _within(limit: int, costs: Iterable[int]) -> bool:
    """Whether `costs` add up to at most `limit`, stopping at the first that goes over."""
    total = 0
    for cost in costs:
        total += cost
        if total > limit:
            return False
    return True


def fit_to_budget(
    contents: Sequence[types.Content],
    budget: Budget,
    *,
    reserved_tokens: int = 0,
    is_summary: SummaryTest = never_summary,
    estimate: Callable[[types.Content], int] = content_tokens,
) -> list[types.Content]:
    """The newest whole turns that fit `budget` once `reserved_tokens` (instructions, tools) are
    taken, in their original order.

    The latest turn (the user's message and the tool calls answering it) is always kept, even
    alone over budget: without it the model has nothing to answer. Next come compaction summaries
    (`is_summary`, newest first), then older turns newest first, each whole, so a function call
    is never sent without its response or a response without its call; the first turn that does
    not fit ends the history (no gaps in the middle of the conversation).

    `estimate` gives a content's tokens (the plugin passes a request's cached estimator). A
    content is estimated at most once, newest first, and only as far as the decision needs: a
    long history over budget costs what is kept, not what is dropped.
    """
    if not contents:
        return []
    tokens_of = cache(lambda index: estimate(contents[index]))
    max_messages = budget.max_messages if budget.max_messages is not None else len(contents)
    if len(contents) <= max_messages and _within(
        budget.max_tokens - reserved_tokens, map(tokens_of, reversed(range(len(contents))))
    ):
        return list(contents)
    turns = split_turns(contents)
    kept: set[int] = set()
    used_tokens = reserved_tokens

    def take(indices: Sequence[int], *, always: bool = False) -> bool:
        nonlocal used_tokens
        cost = sum(map(tokens_of, indices))
        if not always and (
            used_tokens + cost > budget.max_tokens or len(kept) + len(indices) > max_messages
        ):
            return False
        kept.update(indices)
        used_tokens += cost
        return True

    take(turns[-1], always=True)
    for index in reversed(range(turns[-1].start)):
        if pinnable(contents[index], is_summary):
            take([index])
    for turn in reversed(turns[:-1]):
        if not take([i for i in turn if i not in kept]):
            break
    return [contents[i] for i in sorted(kept)]


class TokenBudgetPlugin(BasePlugin):
    """Trims every model request to its budget (see `BudgetPolicy` and `fit_to_budget`).

    Register it after `DelegationFilterPlugin` and `SlidingWindowPlugin` when they are used: it
    then measures what is actually left to send. The JSON of tool calls and results stored in
    the session is measured once per process (`tokens.TokenCache`), not on every model call.
    """

    def __init__(
        self,
        *,
        max_tokens: int | None = None,
        context_fraction: float = DEFAULT_CONTEXT_FRACTION,
        max_messages: int | None = None,
        with_summarizer: bool = False,
        name: str = "token_budget",
    ) -> None:
        super().__init__(name)
        self.policy = BudgetPolicy(
            max_tokens=max_tokens,
            context_fraction=context_fraction,
            max_messages=max_messages,
            with_summarizer=with_summarizer,
        )
        self._tokens = TokenCache()

    @traced("compaction.budget", database=False)
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Trims the request's history; the session's events are left as they are."""
        request = RequestHistory.of(llm_request)
        session = callback_context.session
        estimator = self._tokens.for_request(session, callback_context.invocation_id)
        reserved = request_overhead_tokens(llm_request) + estimator.contents_tokens(request.prefix)
        kept = fit_to_budget(
            request.history,
            self.policy.budget_for(llm_request.model),
            reserved_tokens=reserved,
            is_summary=summary_test(session.events),
            estimate=estimator.content_tokens,
        )
        annotate("compaction", contents=len(request.history), kept=len(kept))
        request.replace(llm_request, kept)
        return None
