"""Sliding window: send the model only the last N turns of the conversation.

Owns `keep_last_turns` (a pure function on a list of contents) and `SlidingWindowPlugin`, which
applies it to every `LlmRequest` in `before_model_callback`. Unlike ADK's
`ContextFilterPlugin`, a cut never separates a function call from its response (ADK strips its
own call ids from requests, so pairs are matched by name as well as id), the first user message
can be pinned, and compaction summaries are kept as the oldest context. It must never modify or
delete session events: only what is sent to the model changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from ...errors import InputValidationError
from ...telemetry import annotate, traced
from ._turns import (
    RequestHistory,
    SummaryTest,
    is_user_message,
    never_summary,
    pinnable,
    split_turns,
    summary_test,
)


def _check_turns(turns: int) -> None:
    if turns < 1:
        raise InputValidationError(f"turns must be at least 1, got {turns}.")


def keep_last_turns(
    contents: Sequence[types.Content],
    turns: int,
    *,
    pin_first_user_message: bool = False,
    is_summary: SummaryTest = never_summary,
) -> list[types.Content]:
    """The contents of the last `turns` user turns, plus what is pinned ahead of them.

    A turn is a user message and everything after it up to the next user message (tool calls
    and results, the model's answers). Older turns are dropped whole, so every function call
    that is sent has its response and every response its call. Ahead of the window, in their
    original order, stay:
    - compaction summaries (`is_summary`): they stand for the history before them, so they are
      the oldest context the model gets;
    - with `pin_first_user_message`, the conversation's first user message, which usually
      states the task. It is pinned only while it is still in the contents: once a summary
      precedes it, the summary carries it and the first message left is not the conversation's.
    """
    _check_turns(turns)
    user_turns = [turn for turn in split_turns(contents) if is_user_message(contents[turn.start])]
    if len(user_turns) <= turns:
        return list(contents)
    window_start = user_turns[-turns].start
    pinned = {i for i in range(window_start) if pinnable(contents[i], is_summary)}
    if pin_first_user_message:
        first = next(i for i, content in enumerate(contents) if is_user_message(content))
        if first < window_start and not any(i < first for i in pinned):
            pinned.add(first)
    return [contents[i] for i in sorted(pinned)] + list(contents[window_start:])


class SlidingWindowPlugin(BasePlugin):
    """Keeps the last `turns` turns of every model request (see `keep_last_turns`).

    Register it after `DelegationFilterPlugin` when both are used, so the window counts the
    turns the agent actually sees.
    """

    def __init__(
        self,
        turns: int,
        *,
        pin_first_user_message: bool = False,
        name: str = "sliding_window",
    ) -> None:
        _check_turns(turns)
        super().__init__(name)
        self.turns = turns
        self.pin_first_user_message = pin_first_user_message

    @traced("compaction.window", database=False)
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Trims the request's history; the session's events are left as they are."""
        request = RequestHistory.of(llm_request)
        kept = keep_last_turns(
            request.history,
            self.turns,
            pin_first_user_message=self.pin_first_user_message,
            is_summary=summary_test(callback_context.session.events),
        )
        annotate("compaction", contents=len(request.history), kept=len(kept))
        request.replace(llm_request, kept)
        return None
