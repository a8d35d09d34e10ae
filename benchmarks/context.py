"""Context benchmark: the tokens the compaction plugins save over a long conversation, and the
time the memory-context callback adds to a turn, with ADK's built-ins doing the same work on the
same PostgreSQL in the same run.

Why: a long conversation costs more tokens every turn unless something compacts it, and memory
in the system instruction is one more database call before every model call. The targets:

  memory callback, cache miss   p95 < 20 ms on the embedded PostgreSQL, retrieval included and
                                embedding excluded, with `--memories` (1,000) memories for the
                                user and `--other-memories` (20,000) of other users in the table
  compaction                    reported only: tokens per turn against no compaction, ADK's
                                `ContextFilterPlugin` and ADK's events compaction

Part 1, tokens per turn: a real ADK `Runner` on `PostgresSessionService` holds a `--turns`
(200) turn conversation once per configuration. ADK's: no compaction (its default),
`ContextFilterPlugin(num_invocations_to_keep=10)`, and its events compaction
(`App.events_compaction_config`) both ways: on a token threshold (8,000 tokens, 10 events kept)
and every 10 invocations (overlap 1). Ours: `SlidingWindowPlugin(10)`, `TokenBudgetPlugin` on its
fallback limits (8,000 tokens / 50 messages) and with `max_tokens=4000`,
`RecursiveSummarizationPlugin` (the same trigger and tail as ADK's token threshold),
`ToolResultArchivePlugin` (results over 2,000 tokens to an `InMemoryArtifactService`) and a
stack of archive + budget (8,000 tokens) + summarization, in the order `configure()` puts them.
Each turn the user writes about 55 tokens and the model answers in about 145; on every fifth
turn (2, 7, 12, ...) the model first calls a documentation search whose result is about 3,400
tokens. The agent's model and the summarizers are `ScriptedLlm`s (no network); a summary is a
fixed 200 tokens, and the agent's model reports its prompt size in `usage_metadata`, as a real
one does (ADK's token trigger reads it). The tokens of every request the agent's model receives
(contents + system instruction + tool declarations, estimated with `adk_memory.adk.tokens`) are
summed per turn as they are sent; the summarizers' input is counted apart.

The configurations take their turns in lock-step (turn t of each, in alternating order), so
background noise falls on all alike. A turn's wall time runs from `run_async` to its last event,
less the scripted models' own token counting. For our summarization plugin it also includes
`drain()`, which computes and writes the summary the background task would otherwise hand to the
next turn: that makes the token counts deterministic and the time an upper bound. ADK's events
compaction runs inside the turn anyway (before the model call and after the invocation), so with
a real summarizer model its latency lands on the turn; ours does not. "plugins" is the time spent
in the configuration's plugin callbacks (and in drain) per turn.

Part 2, memory callback latency: one user of one app holds `--memories` memories written through
`create_memory` (a fact each, one of Memory Bank's four topics, `--dims`-dimension vectors from
`HashEmbedder`; 768 by default, the size a Gemini embedding is usually cut to); `--other-memories`
copies of them are spread over other users (100 each) in SQL, so the scope filter has work to
do. Each measured call builds a fresh invocation (a cache miss: the callback retrieves) outside
the clock and times `MemoryContextCallback(...)(callback_context, llm_request)`: hybrid and
text-only retrieval, each with and without the profile block (`USER_PERSONAL_INFO`,
`USER_PREFERENCES`); then the cached call (the second model call of an invocation). Embedding is
excluded: the embedder returns query vectors computed before the clock starts. For scale, ADK's
`PreloadMemoryTool` does the same job (`process_llm_request`, top 10) against ADK's
`InMemoryMemoryService` holding the same facts (ADK has no PostgreSQL memory service; the
in-memory one is a keyword matcher, so this compares latency, not results), and against our
service through `search_memory`. Calls are interleaved in rounds of 10 of alternating order
after 20 warm-up calls each.

With no `--database-url` the embedded PostgreSQL is started in a temporary data directory. Both
parts run in a fresh database (`adk_memory_bench_context`, dropped and recreated at start and
dropped at the end).

    python benchmarks/context.py [--database-url URL] [--turns 200] [--memories 1000]
        [--other-memories 20000] [--dims 768] [--calls 300]

The exit status is 0 whether or not the target is met; PASS/MISS is printed.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
import uuid
import warnings
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import _common as common
import asyncpg
from _common import expect, ms, percentile, progress, table, timed
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App, EventsCompactionConfig
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.artifacts import InMemoryArtifactService
from google.adk.events.event import Event
from google.adk.memory import InMemoryMemoryService
from google.adk.memory.base_memory_service import BaseMemoryService
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.context_filter_plugin import ContextFilterPlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService, Session
from google.adk.tools.preload_memory_tool import PreloadMemoryTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

# Shared with the sibling benchmarks, not copied: the fact vocabulary of the search benchmark,
# and the session benchmark's interleaved measuring loop and server facts.
from memory_search import CONTEXTS, QUESTIONS, TOPICS, VERBS
from sessions import describe, measure, server_settings

from adk_memory import MemoryBankConfig, PostgresMemoryService, PostgresSessionService
from adk_memory.adk import (
    MemoryContextCallback,
    RecursiveSummarizationPlugin,
    SlidingWindowPlugin,
    TokenBudgetPlugin,
    ToolResultArchivePlugin,
)
from adk_memory.adk.compaction import request_overhead_tokens
from adk_memory.adk.tokens import contents_tokens, part_tokens
from adk_memory.config import ManagedTopic, RetrievalConfig
from adk_memory.db import DEFAULT_SCHEMA
from adk_memory.memory.embeddings import EmbeddingTask
from adk_memory.memory.scope import scope_key, user_scope
from adk_memory.testing import HashEmbedder, ScriptedLlm, function_call

BENCH_DATABASE = "adk_memory_bench_context"
USER = "user-1"
AGENT = "assistant"
NONE = "none (ADK default)"

WINDOW_TURNS = 10
SUMMARY_THRESHOLD_TOKENS = 8_000
KEEP_LAST_EVENTS = 10
BUDGET_TOKENS = 4_000
STACK_BUDGET_TOKENS = 8_000
TOOL_EVERY = 5
TOOL_RESULTS = 40
CHECKPOINTS = (1, 50, 100, 200)

MEMORY_APP = "memory_bench"
PROFILE_TOPICS = (ManagedTopic.USER_PERSONAL_INFO, ManagedTopic.USER_PREFERENCES)
MEMORIES_PER_OTHER_USER = 100
TOP_K = 10
WARMUP = 20
ROUND_SIZE = 10
P95_TARGET_MS = 20.0

INSTRUCTION = (
    "You are the project assistant of a small product team. Answer in short paragraphs a "
    "manager can paste into a weekly update. Use the documentation search when the user asks "
    "about something the team has written down, and say which document an answer comes from. "
    "If something is unclear, ask one precise question instead of guessing."
)

_SUBJECTS = (
    "the billing export",
    "the onboarding flow",
    "the search index",
    "the mobile release",
    "the data retention policy",
    "the API rate limits",
    "the support rota",
)
_ASKS = (
    "what changed since last week",
    "which risks are still open",
    "how to explain it to the sales team",
    "what the next three steps are",
    "who should review it before Friday",
)
SUMMARY = (
    "Conversation Language: English. The user is a product manager preparing weekly updates "
    "about the team's projects (billing export, onboarding flow, search index, mobile release, "
    "data retention policy, API rate limits, support rota). For each, the agent reported what "
    "changed, the open risks, the next steps and the reviewers, and used the tool search_docs "
    "to quote the internal documentation. Decisions so far: the billing export ships behind a "
    "flag, the onboarding flow keeps the three-step form, the mobile release waits for the "
    "crash fix, and the retention policy is reviewed by legal. Open questions: the rate limits "
    "for enterprise customers, and who covers the support rota during the holidays. The user "
    "wants short paragraphs they can paste into the update, with the source document named."
)  # about 200 tokens


@dataclass(frozen=True)
class Plan:
    """How long the conversation is, what the memory bank holds and how much is measured."""

    turns: int
    memories: int
    other_memories: int
    dims: int
    calls: int
    seed: int


# ---------------------------------------------------------------------------------------------
# Part 1: the conversation


def is_tool_turn(turn: int) -> bool:
    """Turns 2, 7, 12, ... start with a documentation search (the checkpoints are plain turns)."""
    return turn % TOOL_EVERY == 2


def subject(turn: int) -> str:
    return _SUBJECTS[turn % len(_SUBJECTS)]


def user_message(turn: int) -> str:
    """About 55 tokens from the user."""
    return (
        f"Turn {turn}. About {subject(turn)}: can you tell me "
        f"{_ASKS[turn % len(_ASKS)]}? Keep in mind the deadline we agreed on and the "
        "constraints from the planning meeting; I need a short answer for the weekly update."
    )


def model_reply(turn: int) -> str:
    """About 145 tokens from the model."""
    return (
        f"Here is the update on {subject(turn)} for turn {turn}. Since last week the team "
        "finished the review of the open tickets, merged the two pending changes and agreed on "
        "the rollout order with the platform group. The main risk left is the dependency on the "
        "vendor's next release, which may slip by a week; the fallback is to ship behind a "
        "feature flag and enable it per customer. Next steps: confirm the vendor date on "
        "Tuesday, run the load test on Wednesday, and send the summary to the reviewers by "
        "Thursday noon. Suggested reviewers: the tech lead and the support manager."
    )


def search_docs(query: str) -> dict[str, Any]:
    """Searches the team's internal documentation and returns the matching passages."""
    passage = (
        "The rollout plan lists the owners, the milestones and the checks that must pass before "
        "each stage; exceptions need the tech lead's approval and are recorded in the change log "
        "with the reason, the date and the person who approved them."
    )
    return {
        "query": query,
        "results": [
            {
                "title": f"{query}: section {i + 1}",
                "url": f"https://docs.example.com/search/{i + 1}",
                "snippet": passage,
            }
            for i in range(TOOL_RESULTS)
        ],
    }  # about 3,400 tokens: over the archive plugin's 2,000


def request_tokens(request: LlmRequest) -> int:
    """What a request sends the model: its contents, system instruction and tool declarations."""
    return contents_tokens(request.contents) + request_overhead_tokens(request)


class CountingModel:
    """A scripted model that counts the tokens of the requests it receives as they are sent,
    and how long the counting took (`bookkeeping`: not part of a turn, so subtracted)."""

    def __init__(self) -> None:
        self.bookkeeping = 0.0

    def count(self, request: LlmRequest) -> int:
        started = time.perf_counter()
        tokens = request_tokens(request)
        self.bookkeeping += time.perf_counter() - started
        return tokens


class ConversationModel(CountingModel):
    """The agent's model: answers from the script above (a tool call first on tool turns),
    summing the tokens of its requests by turn."""

    def __init__(self) -> None:
        super().__init__()
        self.turn = 0
        self.tokens: dict[int, int] = defaultdict(int)
        self.llm = ScriptedLlm(responder=self.reply)

    def reply(self, request: LlmRequest) -> LlmResponse:
        prompt = self.count(request)
        self.tokens[self.turn] += prompt
        last = request.contents[-1].parts or [] if request.contents else []
        answered = any(p.function_response is not None for p in last)
        if is_tool_turn(self.turn) and not answered:
            part = function_call("search_docs", query=f"{subject(self.turn)}, turn {self.turn}")
        else:
            part = types.Part(text=model_reply(self.turn))
        # A real model reports its prompt size; ADK's token-threshold compaction reads it.
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt,
            candidates_token_count=part_tokens(part),
            total_token_count=prompt + part_tokens(part),
        )
        return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


class SummarizerModel(CountingModel):
    """A summarizer's model: the fixed `SUMMARY`, counting calls and input tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.tokens = 0
        self.llm = ScriptedLlm(responder=self.reply)

    def reply(self, request: LlmRequest) -> str:
        self.calls += 1
        self.tokens += self.count(request)
        return SUMMARY


@dataclass(frozen=True)
class Setup:
    """What one configuration adds to the agent's App."""

    plugins: list[BasePlugin] = field(default_factory=list)
    compaction: EventsCompactionConfig | None = None
    summarizer: SummarizerModel | None = None


def adk_events_compaction(**trigger: int) -> Setup:
    """ADK's events compaction with these `EventsCompactionConfig` trigger settings."""
    summarizer = SummarizerModel()
    config = EventsCompactionConfig(summarizer=LlmEventSummarizer(summarizer.llm), **trigger)
    return Setup(compaction=config, summarizer=summarizer)


def ours_summarizing(*before: BasePlugin) -> Setup:
    """`RecursiveSummarizationPlugin` (last, as `configure()` orders it) after `before`."""
    summarizer = SummarizerModel()
    plugin = RecursiveSummarizationPlugin(
        summarizer.llm,
        event_threshold=None,
        token_threshold=SUMMARY_THRESHOLD_TOKENS,
        keep_last=KEEP_LAST_EVENTS,
        retry_delay=0,
    )
    return Setup(plugins=[*before, plugin], summarizer=summarizer)


def setups() -> dict[str, Setup]:
    """Every configuration, ADK's first."""
    return {
        NONE: Setup(),
        f"ADK ContextFilterPlugin({WINDOW_TURNS})": Setup(
            plugins=[ContextFilterPlugin(num_invocations_to_keep=WINDOW_TURNS)]
        ),
        "ADK compaction, tokens": adk_events_compaction(
            token_threshold=SUMMARY_THRESHOLD_TOKENS, event_retention_size=KEEP_LAST_EVENTS
        ),
        f"ADK compaction, every {WINDOW_TURNS}": adk_events_compaction(
            compaction_interval=WINDOW_TURNS, overlap_size=1
        ),
        f"SlidingWindowPlugin({WINDOW_TURNS})": Setup(plugins=[SlidingWindowPlugin(WINDOW_TURNS)]),
        "TokenBudgetPlugin (fallback)": Setup(plugins=[TokenBudgetPlugin()]),
        f"TokenBudgetPlugin({BUDGET_TOKENS})": Setup(
            plugins=[TokenBudgetPlugin(max_tokens=BUDGET_TOKENS)]
        ),
        "RecursiveSummarizationPlugin": ours_summarizing(),
        "ToolResultArchivePlugin": Setup(plugins=[ToolResultArchivePlugin()]),
        "stack: archive+budget+summary": ours_summarizing(
            ToolResultArchivePlugin(), TokenBudgetPlugin(max_tokens=STACK_BUDGET_TOKENS)
        ),
    }


class Stopwatch:
    """Seconds spent in a configuration's plugin callbacks since the last reset."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def timed_call(**kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await call(**kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return timed_call


def instrument(plugin: BasePlugin, stopwatch: Stopwatch) -> None:
    """Time every callback the plugin implements (ADK looks callbacks up on the instance)."""
    for name in dir(BasePlugin):
        if name.endswith("_callback") and getattr(type(plugin), name) is not getattr(
            BasePlugin, name
        ):
            setattr(plugin, name, stopwatch.wrap(getattr(plugin, name)))


@dataclass
class Conversation:
    """One configuration's agent, session and measurements."""

    name: str
    setup: Setup
    runner: Runner
    model: ConversationModel
    session_id: str
    stopwatch: Stopwatch
    turn_seconds: list[float] = field(default_factory=list)
    plugin_seconds: list[float] = field(default_factory=list)

    @property
    def per_turn(self) -> list[int]:
        return [self.model.tokens[t] for t in sorted(self.model.tokens)]


async def start(
    number: int,
    name: str,
    setup: Setup,
    sessions: PostgresSessionService,
    artifacts: InMemoryArtifactService,
) -> Conversation:
    """The configuration's Runner (its own App) and an empty session."""
    model = ConversationModel()
    agent = LlmAgent(name=AGENT, model=model.llm, instruction=INSTRUCTION, tools=[search_docs])
    app = App(
        name=f"context_bench_{number}",
        root_agent=agent,
        plugins=setup.plugins,
        events_compaction_config=setup.compaction,
    )
    runner = Runner(app=app, session_service=sessions, artifact_service=artifacts)
    session = await sessions.create_session(app_name=app.name, user_id=USER)
    stopwatch = Stopwatch()
    for plugin in setup.plugins:
        instrument(plugin, stopwatch)
    return Conversation(name, setup, runner, model, session.id, stopwatch)


async def take_turn(conversation: Conversation, turn: int) -> None:
    """One user turn, timed less the scripted models' token counting; our summaries in flight
    are drained inside the timed span (and counted as plugin time)."""
    model, summarizer = conversation.model, conversation.setup.summarizer
    model.bookkeeping = 0.0
    if summarizer is not None:
        summarizer.bookkeeping = 0.0
    model.turn = turn
    conversation.stopwatch.seconds = 0.0
    message = types.Content(role="user", parts=[types.Part(text=user_message(turn))])
    started = time.perf_counter()
    async for _ in conversation.runner.run_async(
        user_id=USER, session_id=conversation.session_id, new_message=message
    ):
        pass
    for plugin in conversation.setup.plugins:
        if isinstance(plugin, RecursiveSummarizationPlugin):
            await conversation.stopwatch.wrap(plugin.drain)()
    seconds = time.perf_counter() - started
    summarizing = summarizer.bookkeeping if summarizer is not None else 0.0
    conversation.turn_seconds.append(seconds - model.bookkeeping - summarizing)
    # Our summarizer's model runs inside drain(), so inside the plugin time; ADK's in the turn.
    in_plugins = summarizing if conversation.setup.compaction is None else 0.0
    conversation.plugin_seconds.append(conversation.stopwatch.seconds - in_plugins)


async def converse(sessions: PostgresSessionService, turns: int) -> list[Conversation]:
    """Every configuration's conversation, in lock-step; progress on stderr."""
    artifacts = InMemoryArtifactService()
    conversations = [
        await start(number, name, setup, sessions, artifacts)
        for number, (name, setup) in enumerate(setups().items())
    ]
    progress(f"conversations: {len(conversations)} configurations x {turns} turns")
    try:
        for turn in range(1, turns + 1):
            order = conversations if turn % 2 else conversations[::-1]
            for conversation in order:
                await take_turn(conversation, turn)
            if turn % 25 == 0 or turn == turns:
                progress(f"turn {turn}/{turns}, load {common.load_average()}")
    finally:
        for conversation in conversations:
            await conversation.runner.close()
    for conversation in conversations:
        expect(len(conversation.per_turn) == turns, f"{conversation.name}: a turn made no call")
        summarizer = conversation.setup.summarizer
        expect(summarizer is None or summarizer.calls > 0, f"{conversation.name}: no summary")
    return conversations


def token_report(conversations: list[Conversation], turns: int) -> None:
    """Tokens per turn at the checkpoints, mean, max, total, and the share of no compaction."""
    checkpoints = sorted({t for t in CHECKPOINTS if t <= turns} | {turns})
    base = sum(conversations[0].per_turn)
    rows = []
    for c in conversations:
        tokens = c.per_turn
        total = sum(tokens)
        summarizer = c.setup.summarizer
        spent = summarizer.tokens if summarizer is not None else 0
        rows.append(
            (
                c.name,
                *(f"{tokens[t - 1]:,}" for t in checkpoints),
                f"{statistics.fmean(tokens):,.0f}",
                f"{max(tokens):,}",
                f"{total:,}",
                f"{total / base:.3f}",
                f"{spent:,} ({summarizer.calls})" if summarizer is not None else "-",
                f"{(total + spent) / base:.3f}",
            )
        )
    header = (
        "configuration",
        *(f"turn {t}" for t in checkpoints),
        "mean",
        "max",
        "total",
        "x none",
        "summarizer in (calls)",
        "x none, all",
    )
    print(f"\nTokens sent to the agent's model per turn, {turns} turns (estimated locally)\n")
    table(header, rows)
    print(
        "\nA turn's tokens are the sum over its model calls (two on tool turns: the call, then "
        "the\nanswer with the result). x none = total / total without compaction; 'all' adds "
        "the\nsummarizer's input tokens. Summaries are a fixed 200 tokens."
    )


def time_report(conversations: list[Conversation]) -> None:
    """Turn wall time and time in plugin callbacks per configuration, against no compaction."""
    base = conversations[0].turn_seconds
    rows = []
    for c in conversations:
        turn = c.turn_seconds
        rows.append(
            (
                c.name,
                ms(percentile(turn, 50)),
                ms(percentile(turn, 95)),
                f"{(percentile(turn, 50) - percentile(base, 50)) * 1000:+.2f}",
                f"{(percentile(turn, 95) - percentile(base, 95)) * 1000:+.2f}",
                ms(percentile(c.plugin_seconds, 50)) if c.setup.plugins else "-",
                ms(percentile(c.plugin_seconds, 95)) if c.setup.plugins else "-",
            )
        )
    header = ("configuration", "turn p50", "turn p95", "d p50", "d p95", "plugins p50", "p95")
    print("\nWall time per turn (ms; d = difference from no compaction)\n")
    table(header, rows)
    print(
        "\nA turn is Runner.run_async on PostgresSessionService with scripted models (no "
        "network), so\nthe times are ADK's, the plugins' and the database's. 'plugins' is the "
        "time inside the\nconfiguration's plugin callbacks (for our summarization plugin also "
        "drain(), which computes\nand writes the summary that would otherwise be written by the "
        "next turn). ADK's events\ncompaction is not a plugin: it runs inside the turn, and "
        "with a real summarizer model the\nsummary's latency would be added to those turns."
    )


# ---------------------------------------------------------------------------------------------
# Part 2: the memory callback


class PresetQueryEmbedder:
    """Documents embedded by `HashEmbedder`; a query's vector is the one computed for it before
    the clock started (`prepare`), so embedding time is not measured."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self._hash = HashEmbedder(dimensions)
        self._queries: dict[str, list[float]] = {}

    async def prepare(self, texts: Sequence[str]) -> None:
        self._queries.update(zip(texts, await self._hash.embed(texts), strict=True))

    async def embed(
        self, texts: Sequence[str], *, task: EmbeddingTask = "document"
    ) -> list[list[float]]:
        if task == "query":
            return [self._queries[text] for text in texts]
        return await self._hash.embed(texts)


def make_facts(count: int, rng: random.Random) -> list[tuple[str, str]]:
    """(fact, topic) pairs in the search benchmark's vocabulary, topics spread evenly."""
    topics = [t.value for t in ManagedTopic]
    return [
        (
            f"{rng.choice(VERBS)} {rng.choice(TOPICS)} {rng.choice(CONTEXTS)}; "
            f"also mentioned {rng.choice(TOPICS)}.",
            topics[n % len(topics)],
        )
        for n in range(count)
    ]


def make_queries(count: int, rng: random.Random) -> list[str]:
    """User messages that start invocations: a question about a topic, with some context."""
    return [
        "Quick one before my trip: "
        + rng.choice(QUESTIONS).format(topic=rng.choice(TOPICS), context=rng.choice(CONTEXTS))
        for _ in range(count)
    ]


_COPY = f"""
INSERT INTO {DEFAULT_SCHEMA}.memories (id, scope_key, scope, fact, topics, importance,
    confidence, source_type, embedding, fts, create_time, update_time, expire_time)
SELECT gen_random_uuid(), c.key, c.key::jsonb, m.fact, m.topics, m.importance, m.confidence,
       m.source_type, m.embedding, m.fts, m.create_time, m.update_time, m.expire_time
FROM unnest($1::text[], $2::uuid[]) AS c(key, source)
JOIN {DEFAULT_SCHEMA}.memories m ON m.id = c.source
"""
"""Copies memories (by id) into other scopes, embeddings and full-text vectors included."""


async def load_memories(
    service: PostgresMemoryService, dsn: str, memories: int, others: int, rng: random.Random
) -> dict[str, list[str]]:
    """The user's memories through `create_memory`, then copies for other users in SQL; the
    facts each user holds (the measured user first)."""
    scope = user_scope(MEMORY_APP, USER)
    facts = make_facts(memories, rng)
    started = time.perf_counter()
    created = [
        await service.create_memory(fact, scope, topics=[topic], importance=0.5)
        for fact, topic in facts
    ]
    progress(f"created {len(created):,} memories in {time.perf_counter() - started:.1f} s")
    facts_of = {USER: [m.fact for m in created]}
    keys: list[str] = []
    sources: list[uuid.UUID] = []
    per_user = min(MEMORIES_PER_OTHER_USER, memories)
    for n in range(-(-others // per_user)):
        user_id = f"other-{n}"
        chosen = rng.sample(created, min(per_user, others - n * per_user))
        facts_of[user_id] = [m.fact for m in chosen]
        keys += [scope_key(user_scope(MEMORY_APP, user_id))] * len(chosen)
        sources += [uuid.UUID(m.id) for m in chosen]
    started = time.perf_counter()
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(_COPY, keys, sources)
        await conn.execute(f"VACUUM (ANALYZE) {DEFAULT_SCHEMA}.memories")
        total = await conn.fetchval(f"SELECT count(*) FROM {DEFAULT_SCHEMA}.memories")
    finally:
        await conn.close()
    expect(total == memories + others, f"{total} memories loaded, not {memories + others}")
    progress(
        f"copied {len(keys):,} memories to {len(facts_of) - 1} other users in "
        f"{time.perf_counter() - started:.1f} s"
    )
    return facts_of


async def load_adk(facts_of: dict[str, list[str]]) -> InMemoryMemoryService:
    """ADK's in-memory service holding the same facts, one user event each."""
    service = InMemoryMemoryService()
    for user_id, facts in facts_of.items():
        events = [
            Event(author="user", content=types.Content(role="user", parts=[types.Part(text=f)]))
            for f in facts
        ]
        await service.add_events_to_memory(
            app_name=MEMORY_APP, user_id=user_id, events=events, session_id="bench"
        )
    return service


Step = Callable[[LlmRequest], Awaitable[object]]
"""A memory step bound to one invocation: adds the user's memories to a model request."""

Binder = Callable[[InvocationContext], Step]
"""Binds a memory step to an invocation, building the context object ADK would hand it."""

_SESSIONS = InMemorySessionService()
"""`InvocationContext` needs a session service; the memory steps never call it."""


def our_callback(callback: MemoryContextCallback) -> Binder:
    """`MemoryContextCallback` as an agent's before-model callback, on a `CallbackContext`."""

    def bind(invocation: InvocationContext) -> Step:
        context = CallbackContext(invocation)
        return lambda request: callback(context, request)

    return bind


def adk_preload(tool: PreloadMemoryTool) -> Binder:
    """ADK's `PreloadMemoryTool` as ADK runs it before a model call, on a `ToolContext`."""

    def bind(invocation: InvocationContext) -> Step:
        context = ToolContext(invocation)
        return lambda request: tool.process_llm_request(tool_context=context, llm_request=request)

    return bind


def fresh_request(message: types.Content) -> LlmRequest:
    """A model request as ADK builds it before the memory step: instruction and message."""
    config = types.GenerateContentConfig(system_instruction=INSTRUCTION)
    return LlmRequest(contents=[message], config=config)


class MemoryProbe:
    """One measured configuration: a fresh invocation per call (built before the clock starts),
    the memory step timed on a fresh request, and the tokens it added recorded."""

    def __init__(
        self,
        queries: Sequence[str],
        memory_service: BaseMemoryService,
        binder: Binder,
        *,
        cached: bool = False,
    ) -> None:
        self.queries = queries
        self.memory_service = memory_service
        self.binder = binder
        self.cached = cached
        self.added: list[int] = []
        self.session = Session(id="memory-bench", app_name=MEMORY_APP, user_id=USER)

    async def __call__(self, index: int) -> float:
        message = types.Content(role="user", parts=[types.Part(text=self.queries[index])])
        invocation = InvocationContext(
            session_service=_SESSIONS,
            memory_service=self.memory_service,
            invocation_id=Event.new_id(),
            session=self.session,
            user_content=message,
        )
        step = self.binder(invocation)
        if self.cached:
            await step(fresh_request(message))  # the invocation's first model call retrieves
        request = fresh_request(message)
        before = request_tokens(request)
        seconds, _ = await timed(step(request))
        self.added.append(request_tokens(request) - before)
        return seconds


HYBRID = "ours: callback, hybrid"
HYBRID_PROFILE = "ours: callback, hybrid + profile"
TEXT = "ours: callback, text"
TEXT_PROFILE = "ours: callback, text + profile"
CACHED = "ours: callback, cached (2nd call)"
ADK_PRELOAD = "ADK PreloadMemoryTool + ADK InMemory"
ADK_PRELOAD_OURS = "ADK PreloadMemoryTool + ours"
TARGETED = (HYBRID, HYBRID_PROFILE, TEXT, TEXT_PROFILE)
"""The cache-miss configurations the p95 target is for."""


def memory_probes(
    queries: Sequence[str],
    hybrid: PostgresMemoryService,
    text: PostgresMemoryService,
    adk: InMemoryMemoryService,
) -> dict[str, MemoryProbe]:
    """Every configuration measured, each with callbacks of its own (no shared cache)."""

    def callback(service: PostgresMemoryService, profile: bool) -> Binder:
        topics = PROFILE_TOPICS if profile else ()
        return our_callback(MemoryContextCallback(service, top_k=TOP_K, profile_topics=topics))

    return {
        HYBRID: MemoryProbe(queries, hybrid, callback(hybrid, False)),
        HYBRID_PROFILE: MemoryProbe(queries, hybrid, callback(hybrid, True)),
        TEXT: MemoryProbe(queries, text, callback(text, False)),
        TEXT_PROFILE: MemoryProbe(queries, text, callback(text, True)),
        CACHED: MemoryProbe(queries, hybrid, callback(hybrid, True), cached=True),
        ADK_PRELOAD: MemoryProbe(queries, adk, adk_preload(PreloadMemoryTool())),
        ADK_PRELOAD_OURS: MemoryProbe(queries, hybrid, adk_preload(PreloadMemoryTool())),
    }


async def memory_latency(
    bench_url: str, plan: Plan
) -> tuple[dict[str, list[float]], dict[str, MemoryProbe]]:
    """Load the memories, then measure every configuration: the samples (seconds) and the
    probes (tokens added) by configuration."""
    rng = random.Random(plan.seed)
    queries = make_queries(WARMUP + plan.calls, rng)
    embedder = PresetQueryEmbedder(plan.dims)
    await embedder.prepare(queries)

    def service(mode: str) -> PostgresMemoryService:
        config = MemoryBankConfig(retrieval=RetrievalConfig(mode=mode, top_k=TOP_K))
        return PostgresMemoryService(bench_url, embedder=embedder, config=config, run_worker=False)

    hybrid, text = service("hybrid"), service("text")
    try:
        dsn = common.asyncpg_dsn(bench_url)
        facts_of = await load_memories(hybrid, dsn, plan.memories, plan.other_memories, rng)
        adk = await load_adk(facts_of)
        probes = memory_probes(queries, hybrid, text, adk)
        progress(f"memory steps: {WARMUP} warm-up + {plan.calls} calls x {len(probes)} configs")
        samples = await measure(dict(probes), plan.calls, WARMUP, ROUND_SIZE)
    finally:
        await hybrid.close()
        await text.close()
    for name, probe in probes.items():
        # Our callback logs and swallows retrieval errors: a step that never added anything
        # measured a failure, not a retrieval.
        expect(name == ADK_PRELOAD or any(probe.added), f"{name}: no memories were ever added")
    return samples, probes


def memory_report(
    samples: dict[str, list[float]], probes: dict[str, MemoryProbe], plan: Plan
) -> None:
    """p50/p95/p99 per configuration, the tokens each added, the target, ADK's ratios."""
    rows = []
    for name, seconds in samples.items():
        added = probes[name].added[WARMUP:]
        p95 = percentile(seconds, 95) * 1000
        verdict = ("PASS" if p95 < P95_TARGET_MS else "MISS") if name in TARGETED else "-"
        rows.append(
            (
                name,
                ms(percentile(seconds, 50)),
                ms(percentile(seconds, 95)),
                ms(percentile(seconds, 99)),
                ms(statistics.fmean(seconds)),
                f"{statistics.fmean(added):.0f}",
                f"{sum(1 for a in added if a) / len(added):.0%}",
                verdict,
            )
        )
    print(
        f"\nMemory step before a model call, {plan.calls} calls per configuration (ms; "
        f"embedding excluded;\n{plan.memories:,} memories for the user, "
        f"{plan.other_memories:,} for other users, {plan.dims} dims, top {TOP_K})\n"
    )
    header = ("configuration", "p50", "p95", "p99", "mean", "tokens added", "found", "p95 < 20 ms")
    table(header, rows)
    adk = samples[ADK_PRELOAD]
    print()
    for name in (HYBRID, TEXT, ADK_PRELOAD_OURS):
        ours = samples[name]
        print(
            f"ADK InMemory / {name}: p50 {percentile(adk, 50) / percentile(ours, 50):.1f}x, "
            f"p95 {percentile(adk, 95) / percentile(ours, 95):.1f}x (above 1: ours is faster)"
        )
    print(
        "\nEvery call but 'cached' is a new invocation, so the callback retrieves (a cache "
        "miss);\n'cached' is the second model call of an invocation (a tool loop), served from "
        "the\ncallback's per-invocation cache. ADK has no PostgreSQL memory service: its "
        "InMemoryMemoryService\nis a keyword matcher over the user's events held in the "
        "process (no ranking, no vectors,\nno persistence), so the comparison is of latency, "
        "not of what is found. Our callback puts\nthe memories in the system instruction; "
        "ADK's tool adds them as a user content.\n'found' is the share of calls that added "
        "any memory."
    )


# ---------------------------------------------------------------------------------------------
# Entry point


async def bench(url: str, embedded: bool, plan: Plan) -> None:
    describe(url, embedded, await server_settings(url), plan)
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    try:
        sessions = PostgresSessionService(bench_url)
        try:
            conversations = await converse(sessions, plan.turns)
        finally:
            await sessions.close()
        token_report(conversations, plan.turns)
        time_report(conversations)
        print(f"\nLoad:       {common.load_average()} after the conversations")
        samples, probes = await memory_latency(bench_url, plan)
        memory_report(samples, probes, plan)
    finally:
        await common.drop_database(url, BENCH_DATABASE)
    print(f"\nLoad:       {common.load_average()} at end")


def parse_args(argv: list[str] | None = None) -> tuple[Plan, str | None]:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--turns", type=int, default=200, help="turns per conversation")
    parser.add_argument("--memories", type=int, default=1000, help="the user's memories")
    parser.add_argument(
        "--other-memories", type=int, default=20_000, help="memories of other users"
    )
    parser.add_argument("--dims", type=int, default=768, help="embedding dimensions")
    parser.add_argument("--calls", type=int, default=300, help="measured calls per configuration")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if args.turns < 1 or args.memories < 1 or args.other_memories < 0 or args.calls < 1:
        parser.error("--turns, --memories and --calls must be positive, --other-memories >= 0")
    plan = Plan(
        turns=args.turns,
        memories=args.memories,
        other_memories=args.other_memories,
        dims=args.dims,
        calls=args.calls,
        seed=args.seed,
    )
    return plan, args.database_url


def main(argv: list[str] | None = None) -> int:
    plan, database_url = parse_args(argv)
    # ADK marks its events compaction experimental; the warning says nothing about the numbers.
    warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\] EventsCompactionConfig")
    started = time.perf_counter()
    with common.postgres_server(database_url) as url:
        asyncio.run(bench(url, database_url is None, plan))
    print(f"\nTotal runtime: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
