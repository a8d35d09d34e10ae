"""Delegation filtering: in a multi-agent app, a sub-agent sees the conversation's top level and
its own work, not the tool traffic and chatter of unrelated delegations.

ADK sends an agent every other agent's turns, rewritten as user-role context ("For context:
... [agent] said ... / [agent] called tool `x` ... / [agent] `x` tool returned result ...").
Owns `filter_delegation` (a pure function on a list of contents) and `DelegationFilterPlugin`,
which applies it in `before_model_callback` for every agent below the root, with the agent's
delegation chain (itself and its ancestors up to the root) as the visible agents. The root agent
sees everything. It must never modify or delete session events, and it only ever drops relayed
text: an agent's own function calls and responses are untouched, so no call/response pair can be
split.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from ...telemetry import traced
from ._turns import is_relay

_ATTRIBUTION = re.compile(r"\[(?P<author>[^\]\n]+)\] (?P<said>said:|thought:)?")
"""The attribution ADK's `_present_other_agent_message` starts each relayed text part with:
"[agent] said:", "[agent] thought:", "[agent] called tool ...", "[agent] `tool` tool returned"."""


def _relay_author(content: types.Content) -> str | None:
    for part in content.parts or ():
        match = _ATTRIBUTION.match(part.text or "")
        if match:
            return match["author"]
    return None


def _is_reply(part: types.Part) -> bool:
    """Whether a relayed part is what the agent said (text, thoughts, media), not tool traffic."""
    match = _ATTRIBUTION.match(part.text or "")
    return match is None or match["said"] is not None


def filter_delegation(
    contents: Sequence[types.Content],
    visible_agents: Collection[str],
    *,
    keep_other_agents_replies: bool = False,
) -> list[types.Content]:
    """The contents without what unrelated agents did.

    User messages, the prompted agent's own turns (model contents, function calls and
    responses) and everything relayed from `visible_agents` (their words, tool calls, results
    and hand-offs) are kept. Of any other agent nothing is kept, or with
    `keep_other_agents_replies` only what it said (its tool calls and results never). A relayed
    content with nothing left is dropped; one whose author cannot be read (an unknown relay
    format) is kept whole.
    """
    kept: list[types.Content] = []
    for content in contents:
        author = _relay_author(content) if is_relay(content) else None
        if author is None or author in visible_agents:
            kept.append(content)
            continue
        if not keep_other_agents_replies:
            continue
        preamble, *relayed = content.parts or []
        replies = [part for part in relayed if _is_reply(part)]
        if len(replies) == len(relayed):
            kept.append(content)
        elif replies:
            kept.append(content.model_copy(update={"parts": [preamble, *replies]}))
    return kept


def delegation_chain(agent: BaseAgent) -> list[str]:
    """The agent's name and its ancestors' names, up to the root agent."""
    chain: list[str] = []
    current: BaseAgent | None = agent
    while current is not None:
        chain.append(current.name)
        current = current.parent_agent
    return chain


class DelegationFilterPlugin(BasePlugin):
    """Filters what a sub-agent sees to its delegation chain (see `filter_delegation`).

    Register it before `SlidingWindowPlugin` / `TokenBudgetPlugin`, so they count only what the
    agent will see.
    """

    def __init__(
        self, *, keep_other_agents_replies: bool = False, name: str = "delegation_filter"
    ) -> None:
        super().__init__(name)
        self.keep_other_agents_replies = keep_other_agents_replies

    @traced("compaction.delegation", database=False)
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Filters the request of a sub-agent; the root agent's request is left whole."""
        agent = callback_context.get_invocation_context().agent
        if not isinstance(agent, BaseAgent) or agent.parent_agent is None:
            return None
        llm_request.contents = filter_delegation(
            llm_request.contents,
            delegation_chain(agent),
            keep_other_agents_replies=self.keep_other_agents_replies,
        )
        return None
