"""TokenBudgetPlugin, BudgetPolicy and fit_to_budget: the newest whole turns that fit the budget
(instructions and tools included) are sent, the latest turn always, pairs never split; the
stored session keeps every event."""

from __future__ import annotations

import pytest
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.models.llm_request import LlmRequest
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compaction_window import (
    assert_lookups_answered,
    assert_pairs_whole,
    assert_subsequence,
    conversations,
    events_of,
    is_summary,
    long_conversation,
    model,
    turn_starts,
    user,
    user_texts,
)

from adk_memory.adk.compaction.budget import (
    FALLBACK_MAX_MESSAGES,
    FALLBACK_MAX_TOKENS,
    Budget,
    BudgetPolicy,
    TokenBudgetPlugin,
    fit_to_budget,
    request_overhead_tokens,
)
from adk_memory.adk.tokens import contents_tokens, text_tokens


def fits(contents: list[types.Content], budget: Budget, reserved: int) -> bool:
    return reserved + contents_tokens(contents) <= budget.max_tokens and (
        budget.max_messages is None or len(contents) <= budget.max_messages
    )


@settings(max_examples=200, deadline=None)
@given(
    conversations(),
    st.integers(1, 400),
    st.one_of(st.none(), st.integers(1, 20)),
    st.integers(0, 60),
)
def test_budget_keeps_the_newest_whole_turns_that_fit(contents, max_tokens, max_messages, reserved):
    budget = Budget(max_tokens, max_messages)

    kept = fit_to_budget(contents, budget, reserved_tokens=reserved, is_summary=is_summary)

    assert_subsequence(kept, contents)
    assert_pairs_whole(kept)
    starts = turn_starts(contents)
    latest = contents[starts[-1] :]
    assert kept[-len(latest) :] == latest
    if kept == contents:
        return
    summary = kept[:1] if kept[0] is contents[0] and is_summary(contents[0]) else []
    first = len(contents) - len(kept) + len(summary)
    assert kept == summary + contents[first:] and first in starts
    if len(kept) > len(latest):
        assert fits(kept, budget, reserved)
    older = [s for s in starts if s < first]
    if older:
        assert not fits(summary + contents[older[-1] :], budget, reserved)


def test_a_summary_is_kept_before_older_turns():
    summary = model("SUMMARY of everything before u1")
    contents = [summary, user("u1"), model("a" * 400), user("u2"), model("a2"), user("u3")]

    kept = fit_to_budget(contents, Budget(max_tokens=40), is_summary=is_summary)

    assert kept == [summary, user("u2"), model("a2"), user("u3")]


def test_the_latest_turn_is_sent_even_over_budget():
    contents = [user("u1"), model("a1"), user("x" * 4000)]

    assert fit_to_budget(contents, Budget(max_tokens=10)) == contents[-1:]
    assert fit_to_budget(contents, Budget(max_tokens=10_000), reserved_tokens=10_000) == [
        contents[-1]
    ]


def test_the_policy_picks_a_fixed_a_model_aware_or_the_fallback_budget():
    assert BudgetPolicy(max_tokens=1234).budget_for("gemini-2.5-flash") == Budget(1234)
    assert BudgetPolicy(with_summarizer=True).budget_for("gemini-2.5-flash") == Budget(524_288)
    assert BudgetPolicy(with_summarizer=True, context_fraction=0.25).budget_for(
        "models/gemini-1.5-pro-002"
    ) == Budget(524_288)
    fallback = Budget(FALLBACK_MAX_TOKENS, FALLBACK_MAX_MESSAGES)
    assert BudgetPolicy(with_summarizer=True).budget_for("my-local-model") == fallback
    assert BudgetPolicy().budget_for("gemini-2.5-flash") == fallback
    assert BudgetPolicy(max_messages=10).budget_for(None) == Budget(FALLBACK_MAX_TOKENS, 10)


@pytest.mark.parametrize(
    "options",
    [{"max_tokens": 0}, {"max_messages": 0}, {"context_fraction": 0}, {"context_fraction": 1.5}],
)
def test_bad_budgets_are_rejected(options):
    with pytest.raises(InputValidationError):
        TokenBudgetPlugin(**options)


def test_instructions_and_tools_count_against_the_budget():
    tool = types.Tool(
        function_declarations=[types.FunctionDeclaration(name="lookup", description="d" * 400)]
    )
    request = LlmRequest(
        config=types.GenerateContentConfig(system_instruction="s" * 400, tools=[tool])
    )

    tool_tokens = text_tokens(tool.model_dump_json(exclude_none=True))
    assert request_overhead_tokens(request) == 100 + tool_tokens


async def test_200_turns_stay_within_a_model_aware_budget(session_service):
    plugin = TokenBudgetPlugin(with_summarizer=True, context_fraction=0.002)
    budget = plugin.policy.budget_for("gemini-2.5-flash")
    llm, events = await long_conversation(
        session_service, plugin, 200, model_name="gemini-2.5-flash"
    )

    assert len(events) == events_of(200)
    for request in llm.requests:
        sent = request_overhead_tokens(request) + contents_tokens(request.contents)
        assert sent <= budget.max_tokens
        assert_lookups_answered(request.contents)
    last = user_texts(llm.requests[-1].contents)
    assert last[-1] == "turn 199" and "turn 150" not in last
    assert len(last) > 10


async def test_without_a_summarizer_the_fallback_limits_apply(session_service):
    llm, events = await long_conversation(session_service, TokenBudgetPlugin(), 60)

    assert len(events) == events_of(60)
    for request in llm.requests:
        assert len(request.contents) <= FALLBACK_MAX_MESSAGES
        assert contents_tokens(request.contents) <= FALLBACK_MAX_TOKENS
        assert_lookups_answered(request.contents)
    assert len(llm.requests[-1].contents) > FALLBACK_MAX_MESSAGES - 5
