"""How an LLM request's contents are structured: user turns, function call/response pairs,
other agents' relayed messages, compaction summaries and ADK's instruction prefix.

Owns the reading of `LlmRequest.contents` that the request-time compaction plugins share, and
the one place they write the trimmed history back. It never edits a content in place and never
touches session events: trimming only chooses which contents are sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from ..._adk_private import OTHER_AGENT_CONTEXT_PREAMBLE, static_prefix_end

SummaryTest = Callable[[types.Content], bool]
"""Whether a request content is a compaction summary (kept as the oldest context)."""


def never_summary(content: types.Content) -> bool:
    """The summary test for contents that carry no compaction summaries."""
    return False


def has_function_response(content: types.Content) -> bool:
    """Whether the content carries a tool result (role "user", but not the user speaking)."""
    return any(p.function_response is not None for p in content.parts or ())


def has_function_parts(content: types.Content) -> bool:
    """Whether the content carries a function call or response, i.e. belongs to a pair."""
    return any(
        p.function_call is not None or p.function_response is not None for p in content.parts or ()
    )


def is_relay(content: types.Content) -> bool:
    """Whether the content is another agent's turn that ADK relayed as user-role context
    ("For context: ... [agent] said / called tool / tool returned")."""
    parts = content.parts or []
    return bool(parts) and parts[0].text == OTHER_AGENT_CONTEXT_PREAMBLE


def is_user_message(content: types.Content) -> bool:
    """Whether the content is someone speaking to the agent: user role, and neither a tool
    result nor another agent's relayed turn."""
    return content.role == "user" and not has_function_response(content) and not is_relay(content)


def call_response_pairs(contents: Sequence[types.Content]) -> list[tuple[int, int]]:
    """(call index, response index) for every function response whose call precedes it.

    A response matches the oldest open call with its id. ADK strips its own `adk-` ids before
    the request is built, so a response whose id matches no open call matches the oldest open
    call of the same name (ADK places results right after their calls, so that is the call it
    answers). A response with no open call at all (already an orphan) is not paired.
    """
    open_calls: list[tuple[int, types.FunctionCall]] = []
    pairs: list[tuple[int, int]] = []
    for index, content in enumerate(contents):
        for part in content.parts or ():
            if part.function_call is not None:
                open_calls.append((index, part.function_call))
            if part.function_response is not None:
                match = _open_call(open_calls, part.function_response)
                if match is not None:
                    pairs.append((open_calls.pop(match)[0], index))
    return pairs


def _open_call(
    open_calls: list[tuple[int, types.FunctionCall]], response: types.FunctionResponse
) -> int | None:
    """Position in `open_calls` of the call `response` answers: same id, else same name."""
    if response.id:
        for n, (_, call) in enumerate(open_calls):
            if call.id == response.id:
                return n
    for n, (_, call) in enumerate(open_calls):
        if call.name == response.name:
            return n
    return None


def safe_cuts(contents: Sequence[types.Content]) -> list[bool]:
    """`safe[j]` says whether dropping `contents[:j]` leaves every call/response pair whole
    (no kept response whose call was cut). `safe` has `len(contents) + 1` entries."""
    depth = [0] * (len(contents) + 2)
    for call, response in call_response_pairs(contents):
        depth[call + 1] += 1
        depth[response + 1] -= 1
    safe: list[bool] = []
    open_pairs = 0
    for j in range(len(contents) + 1):
        open_pairs += depth[j]
        safe.append(open_pairs == 0)
    return safe


def split_turns(contents: Sequence[types.Content]) -> list[range]:
    """The contents as consecutive turns, oldest first, each safe to drop as a whole.

    A turn starts at a user message and runs to the next one. A user message right after
    another one continues the turn (a batch, or ADK's transient instruction inserted before the
    user's text), and so do the trailing user messages right after a tool result (content ADK
    inserts into a running tool loop); so does any start that would separate a function call
    from its response. Contents before the first user message form a leading group of their own.
    """
    safe = safe_cuts(contents)
    trailing = len(contents)
    while trailing > 0 and is_user_message(contents[trailing - 1]):
        trailing -= 1
    starts = [0]
    for index in range(1, len(contents)):
        previous = contents[index - 1]
        if (
            is_user_message(contents[index])
            and not is_user_message(previous)
            and not (index == trailing and has_function_response(previous))
            and safe[index]
        ):
            starts.append(index)
    ends = [*starts[1:], len(contents)]
    return [range(start, end) for start, end in zip(starts, ends, strict=True) if end > start]


def summary_test(events: Iterable[Event]) -> SummaryTest:
    """A test for the compaction summaries of these session events as they appear in a request.

    ADK renders an event with `actions.compaction` as its `compacted_content` (attributed to the
    agent being prompted, copied for the request), so a request content equal to a
    `compacted_content` is that summary.
    """
    summaries = [
        event.actions.compaction.compacted_content
        for event in events
        if event.actions is not None and event.actions.compaction is not None
    ]
    if not summaries:
        return never_summary
    return lambda content: any(content == summary for summary in summaries)


def pinnable(content: types.Content, is_summary: SummaryTest) -> bool:
    """Whether a content may be kept out of its turn: a compaction summary without function
    parts (a pinned content never belongs to a call/response pair)."""
    return not has_function_parts(content) and is_summary(content)


@dataclass(frozen=True)
class RequestHistory:
    """A request's contents split into ADK's instruction prefix, which stays in place, and the
    conversation history the plugins may trim."""

    prefix: list[types.Content]
    history: list[types.Content]

    @classmethod
    def of(cls, llm_request: LlmRequest) -> RequestHistory:
        """Split `llm_request.contents`.

        With a non-text static instruction, ADK puts the instruction contents at the very start
        and records where they end (`_static_instruction_prefix_end_index`), so providers can
        cache a stable prefix; later inserts are clamped after it. Trimming must not move it.
        """
        end = static_prefix_end(llm_request)
        return cls(prefix=llm_request.contents[:end], history=llm_request.contents[end:])

    def replace(self, llm_request: LlmRequest, kept: list[types.Content]) -> None:
        """Send `kept` as the history (the prefix unchanged, so ADK's prefix index stays right)."""
        if len(kept) != len(self.history):
            llm_request.contents = [*self.prefix, *kept]
