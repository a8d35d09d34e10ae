"""Recursive summarization: older events become one persisted ADK compaction, built in background.

Owns: when a session's history needs a summary (raw-event count, token estimate, inactivity),
which events a summary covers, the background model call (tracked, bounded, retried with
backoff, drainable), and writing the result as ADK's own compaction event
(`EventActions(compaction=EventCompaction(...))`) so ADK's content builder sends the summary in
place of the events it covers, on every replica and after every reload.

Recursive: a new summary extends the latest one. The model gets the earlier summary's text and
only the events after it, and the new compaction starts where the earlier one started, so it
supersedes it in ADK's content builder. The model is ADK's `LlmEventSummarizer` (its prompt
already expects "a conversation that may start from a compacted history", keeps the user's
language and the tool names, and caps tool payloads); `prompt_template` replaces the prompt.

With a `redactor`, the model gets redacted copies of the events and of the earlier summary, and
the summary is redacted before it is stored. The plugin does this itself: the session the Runner
holds carries the events as they were said, whatever the session service redacts when it stores
them, and the session service does not look inside a compaction.

Must never: modify or delete a stored event; make a turn wait for the model; send the model events
an earlier summary covers; split a function call from its response; summarize the last
`keep_last` raw events; or write a summary whose base is no longer the session's latest
compaction (so two runs, or two replicas, never write overlapping or duplicate compactions).

Why the write happens inside a turn: the session service rejects a write made against a session
another writer has moved (optimistic concurrency). A summary written from the background while a
turn is running would make that turn's next append fail, so a finished summary waits in memory
and is written by the next turn of its session, through that turn's own session object (before
the turn's first model call, or at its end, where ADK writes its own compactions). Only `drain()`
/ `close()` and the inactivity sweep write directly; call them when the session has no turn
running. Across replicas each process keeps its own guard; the base check at write time means
two replicas may both pay for a summary of the same events, but only the first is written.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from google.adk.agents.invocation_context import InvocationContext
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.errors import StaleSessionError  # ADK's: any session service may raise it
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.models.base_llm import BaseLlm
from google.adk.platform import time as platform_time
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.session import Session
from google.genai import types
from typing_extensions import override

from ..._adk_private import apply_rewinds
from ..._retry import Backoff, RetryPolicy, not_permanent, retry_call
from ...errors import InputValidationError, SummarizationError
from ...memory.generation import resolve_llm
from ...redaction import Redactor, redact_content
from ...telemetry import traced
from ..tokens import content_tokens

logger = logging.getLogger(__name__)

_MAX_RETRY_DELAY = 60.0
"""The longest wait between two summary attempts (unless `retry_delay` itself is longer)."""

SessionKey = tuple[str, str, str]
"""(app name, user id, session id): one session, never shared across users."""


def compaction_of(event: Event) -> EventCompaction | None:
    """The event's compaction, when it is a usable one (ADK ignores those without content)."""
    compaction = event.actions.compaction if event.actions else None
    return compaction if compaction is not None and compaction.compacted_content else None


def latest_compaction(events: Sequence[Event]) -> Event | None:
    """The compaction reaching furthest (the latest written on a tie): the one a new summary
    extends. Each summary this plugin writes contains the previous one, so it is also the only
    compaction ADK's content builder still uses."""
    latest: Event | None = None
    reach = 0.0
    for event in events:
        compaction = compaction_of(event)
        if compaction is not None and (latest is None or (compaction.end_timestamp or 0) >= reach):
            latest, reach = event, compaction.end_timestamp or 0.0
    return latest


def _history(events: Sequence[Event]) -> list[Event]:
    """What the root agent's prompt is built from: rewound invocations dropped (a summary must
    not bring them back) and isolated sub-agent turns left to their own scope, as ADK does."""
    return [e for e in apply_rewinds(list(events)) if e.isolation_scope is None and not e.partial]


def _uncovered(history: Sequence[Event], latest: Event | None) -> list[Event]:
    """The raw events the latest compaction does not cover, oldest first."""
    compaction = compaction_of(latest) if latest is not None else None
    return [
        e
        for e in history
        if compaction_of(e) is None
        and not (
            compaction is not None
            and compaction.start_timestamp <= e.timestamp <= compaction.end_timestamp
        )
    ]


def _unanswerable_call_ids(history: Sequence[Event]) -> set[str]:
    """Calls whose response can never come (the process running the tool died): no response
    anywhere, not long-running, not in the newest invocation. Ignoring them keeps one orphan from
    blocking every later summary."""
    answered = {r.id for e in history for r in e.get_function_responses() if r.id}
    waiting: set[str] = set()
    for event in history:
        waiting |= event.long_running_tool_ids or set()
    newest = next((e.invocation_id for e in reversed(history) if compaction_of(e) is None), None)
    return {
        call.id
        for event in history
        if event.invocation_id != newest
        for call in event.get_function_calls()
        if call.id and call.id not in answered and call.id not in waiting
    }


def _split_index(raw: Sequence[Event], keep_last: int, ignored_calls: set[str]) -> int:
    """How many of the oldest raw events to summarize: at most all but `keep_last`, ending where
    no function call is waiting for its response, and never between two events with the same
    timestamp (ADK decides coverage by timestamp, so the kept one would vanish too)."""
    closed_after: list[bool] = []
    open_calls: set[str] = set()
    for event in raw:
        open_calls -= {r.id for r in event.get_function_responses() if r.id}
        open_calls |= {c.id for c in event.get_function_calls() if c.id} - ignored_calls
        closed_after.append(not open_calls)
    for count in range(len(raw) - keep_last, 0, -1):
        boundary_clear = count == len(raw) or raw[count - 1].timestamp < raw[count].timestamp
        if closed_after[count - 1] and boundary_clear:
            return count
    return 0


@dataclass(frozen=True)
class _Plan:
    """What one summary covers: the model's input and the range the compaction will claim."""

    base_id: str | None
    events: list[Event]
    start: float
    end: float


@dataclass(frozen=True)
class _Summary:
    """A finished summary waiting to be written by the next turn (or by drain/the sweep)."""

    base_id: str | None
    compaction: EventCompaction
    usage: types.GenerateContentResponseUsageMetadata | None
    service: BaseSessionService
    key: SessionKey


def _key(session: Session) -> SessionKey:
    return (session.app_name, session.user_id, session.id)


class RecursiveSummarizationPlugin(BasePlugin):
    """Summarizes a session's older events in the background into one persisted compaction.

    Add it to the Runner (or `App.plugins`) and leave `App.events_compaction_config` unset: this
    plugin is the session's only compaction writer. A turn ends -> if the raw events after the
    latest summary reach `event_threshold` (or their estimated tokens, summary included, reach
    `token_threshold`), a background task asks the model for a new summary. The next turn writes
    it before its first model call. `summarize_idle_sessions()` does the same for sessions idle
    for a while; `drain()` waits for everything in flight and writes what is finished.
    """

    def __init__(
        self,
        model: str | BaseLlm,
        *,
        event_threshold: int | None = 50,
        token_threshold: int | None = None,
        keep_last: int = 10,
        prompt_template: str | None = None,
        max_attempts: int = 3,
        retry_delay: float = 1.0,
        timeout: float | None = 120.0,
        max_concurrent: int = 4,
        redactor: Redactor | None = None,
        name: str = "recursive_summarization",
    ) -> None:
        """Set the triggers, the model and how failures are retried.

        Args:
          model: the summarizing model: a name resolved through ADK's registry (as agents
            resolve theirs) or any `BaseLlm`. A small, fast model is the usual choice.
          event_threshold: summarize once this many raw events sit after the latest summary.
            Must exceed `keep_last` (or nothing would be left to summarize). None: off.
          token_threshold: summarize once the history (latest summary + raw events after it)
            is estimated at this many tokens (`adk_memory.adk.tokens`). None: off.
          keep_last: raw events never summarized, so the model always sees the latest exchange
            verbatim (more are kept when a call/response pair straddles the boundary).
          prompt_template: replaces `LlmEventSummarizer`'s prompt; must contain
            `{conversation_history}`.
          max_attempts: model calls per summary before giving up (the failure is logged; the
            events stay raw and the next trigger tries again).
          retry_delay: seconds before the second attempt, doubling for each later one (half
            jittered, at most a minute); a permanent failure (a rejected key, a 4xx) is not
            retried.
          timeout: seconds one model call may take; None: no limit.
          max_concurrent: summaries computed at once by this plugin (all sessions together).
          redactor: redacts what the model is sent (events, earlier summary) and the summary
            stored, e.g. `PiiRedactor()`: the stack's redactor. None: nothing is redacted.
          name: the plugin's name (unique within a Runner).
        """
        if event_threshold is not None and event_threshold <= keep_last:
            raise InputValidationError("event_threshold must be greater than keep_last.")
        if token_threshold is not None and token_threshold < 1:
            raise InputValidationError("token_threshold must be at least 1.")
        if keep_last < 0:
            raise InputValidationError("keep_last must not be negative.")
        if prompt_template is not None and "{conversation_history}" not in prompt_template:
            raise InputValidationError("prompt_template must contain {conversation_history}.")
        if max_attempts < 1:
            raise InputValidationError("max_attempts must be at least 1.")
        if retry_delay < 0:
            raise InputValidationError("retry_delay must not be negative.")
        if timeout is not None and timeout <= 0:
            raise InputValidationError("timeout must be positive.")
        if max_concurrent < 1:
            raise InputValidationError("max_concurrent must be at least 1.")
        if redactor is not None and not isinstance(redactor, Redactor):
            raise InputValidationError("redactor must have a `redact(text) -> str` method.")
        super().__init__(name)
        self.event_threshold = event_threshold
        self.token_threshold = token_threshold
        self.keep_last = keep_last
        self.max_attempts = max_attempts
        self.retry_delay = retry_delay
        self._retry = RetryPolicy(
            Backoff(base=retry_delay, cap=max(retry_delay, _MAX_RETRY_DELAY)),
            max_attempts=max_attempts,
            retry_on=not_permanent,
        )
        self.timeout = timeout
        self.redactor = redactor
        self._summarizer = LlmEventSummarizer(resolve_llm(model), prompt_template)
        self._slots = asyncio.Semaphore(max_concurrent)
        self._tasks: dict[SessionKey, asyncio.Task[bool]] = {}
        self._ready: dict[SessionKey, _Summary] = {}

    # ADK callbacks ------------------------------------------------------------------------------

    @override
    async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """Write a finished summary before the turn's first model call builds its contents."""
        await self._write_ready(invocation_context.session_service, invocation_context.session)

    @override
    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """Write a summary that finished during the turn, then start the next one if due. Never
        waits for the model."""
        session = invocation_context.session
        await self._write_ready(invocation_context.session_service, session)
        self._start(invocation_context.session_service, session, when_due=True, write=False)

    @override
    async def close(self) -> None:
        """Runner.close(): finish and write the summaries in flight."""
        await self.drain()

    # Public API ---------------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Summaries being computed or waiting to be written."""
        return len(self._tasks.keys() | self._ready.keys())

    async def drain(self) -> None:
        """Wait for every summary in flight and write every finished one (tests, shutdown).

        Writes directly to the session: call it when those sessions have no turn running.
        """
        while self._tasks:
            await asyncio.gather(*self._tasks.values())
        for key in list(self._ready):
            await self._flush(key)

    @traced("compaction.summarize_idle_sessions")
    async def summarize_idle_sessions(
        self,
        session_service: BaseSessionService,
        *,
        app_name: str,
        idle_for: timedelta,
        idle_at_most: timedelta | None = None,
        user_id: str | None = None,
    ) -> int:
        """Summarize sessions nobody has written to for `idle_for`; how many got a new summary.

        Everything but the last `keep_last` raw events is summarized, whatever the thresholds,
        so a conversation resumed later starts small. Each idle session is loaded once, so
        schedule the sweep at an interval and pass `idle_at_most` (= idle_for + interval) to
        visit each session only in the sweep after it went quiet.

        Args:
          session_service: where the sessions live (the Runner's).
          app_name: the app whose sessions are swept.
          idle_for: minimum time since the session's last event.
          idle_at_most: sessions idle longer than this are skipped (already swept).
          user_id: only this user's sessions; None: every user of the app.
        """
        if idle_for <= timedelta(0):
            raise InputValidationError("idle_for must be a positive duration.")
        if idle_at_most is not None and idle_at_most <= idle_for:
            raise InputValidationError("idle_at_most must be longer than idle_for.")
        now = platform_time.get_time()
        listed = await session_service.list_sessions(app_name=app_name, user_id=user_id)
        tasks: list[asyncio.Task[bool]] = []
        written = 0
        for listed_session in listed.sessions:
            idle = timedelta(seconds=now - listed_session.last_update_time)
            if idle < idle_for or (idle_at_most is not None and idle > idle_at_most):
                continue
            session = await session_service.get_session(
                app_name=app_name, user_id=listed_session.user_id, session_id=listed_session.id
            )
            if session is None:
                continue
            if _key(session) in self._ready:  # finished, but no turn came to write it
                written += await self._flush(_key(session))
                continue
            task = self._start(session_service, session, when_due=False, write=True)
            if task is not None:
                tasks.append(task)
        return written + sum(await asyncio.gather(*tasks))

    # Planning -----------------------------------------------------------------------------------

    def _due(self, latest: Event | None, raw: Sequence[Event]) -> bool:
        if self.event_threshold is not None and len(raw) >= self.event_threshold:
            return True
        if self.token_threshold is None:
            return False
        tokens = sum(content_tokens(e.content) for e in raw if e.content)
        earlier = compaction_of(latest) if latest is not None else None
        if earlier is not None:
            tokens += content_tokens(earlier.compacted_content)
        return tokens >= self.token_threshold

    def _plan(self, events: Sequence[Event], *, when_due: bool) -> _Plan | None:
        """The next summary for these events, or None (not due, or nothing safe to cover)."""
        history = _history(events)
        latest = latest_compaction(history)
        raw = _uncovered(history, latest)
        if when_due and not self._due(latest, raw):
            return None
        covered = raw[: _split_index(raw, self.keep_last, _unanswerable_call_ids(history))]
        if not covered:
            return None
        inputs = list(covered)
        earlier = compaction_of(latest) if latest is not None else None
        if latest is not None and earlier is not None:
            seed = Event(
                timestamp=earlier.start_timestamp,
                author="model",
                invocation_id=latest.invocation_id,
                content=earlier.compacted_content,
            )
            inputs = sorted([seed, *covered], key=lambda e: e.timestamp)
        return _Plan(
            base_id=latest.id if latest is not None else None,
            events=inputs,
            start=inputs[0].timestamp,
            end=covered[-1].timestamp,
        )

    # Background work ----------------------------------------------------------------------------

    def _start(
        self, service: BaseSessionService, session: Session, *, when_due: bool, write: bool
    ) -> asyncio.Task[bool] | None:
        """Start summarizing the session unless a summary of it is already in flight (checked and
        registered without yielding to the loop, so two runs of one session cannot both start)."""
        key = _key(session)
        if key in self._tasks or key in self._ready:
            return None
        plan = self._plan(session.events, when_due=when_due)
        if plan is None:
            return None
        task = asyncio.create_task(self._run(key, plan, service, write), name=f"summarize {key}")
        self._tasks[key] = task
        return task

    async def _run(
        self, key: SessionKey, plan: _Plan, service: BaseSessionService, write: bool
    ) -> bool:
        """Compute the summary and hold it for the next turn (or write it now); True once it is
        held or written. Never raises: a drained task must not take its siblings down."""
        try:
            compaction, usage = await self._summarize(plan)
            self._ready[key] = _Summary(plan.base_id, compaction, usage, service, key)
            return await self._flush(key) if write else True
        except Exception:
            logger.error(
                "Summarizing session %s failed; its events stay raw and the next trigger tries "
                "again.",
                key,
                exc_info=True,
            )
            return False
        finally:
            self._tasks.pop(key, None)

    @traced("compaction.summarize", database=False)
    async def _summarize(
        self, plan: _Plan
    ) -> tuple[EventCompaction, types.GenerateContentResponseUsageMetadata | None]:
        """One summary, retried with exponential backoff and jitter on any model failure but a
        permanent one (`adk_memory._retry.is_permanent`: a missing or rejected key, a 4xx, bad
        input), which no further call would fix. The slot is held per call, not while waiting.
        """
        events = self._redacted_events(plan.events)
        tries = 0

        async def attempt() -> tuple[Event, EventCompaction]:
            nonlocal tries
            tries += 1
            async with self._slots:
                event = await asyncio.wait_for(
                    self._summarizer.maybe_summarize_events(events=events), self.timeout
                )
            made = compaction_of(event) if event is not None else None
            content = made.compacted_content if made is not None else None
            if content is not None and self.redactor is not None:
                content = redact_content(content, self.redactor)
            if event is None or content is None or not any(p.text for p in content.parts or ()):
                raise SummarizationError("the model returned no summary text")
            compaction = EventCompaction(
                start_timestamp=plan.start, end_timestamp=plan.end, compacted_content=content
            )
            return event, compaction

        def log_retry(number: int, error: BaseException, delay: float) -> None:
            logger.warning(
                "Summary attempt %d/%d failed (%r); retrying in %.1f s.",
                number,
                self.max_attempts,
                error,
                delay,
            )

        try:
            event, compaction = await retry_call(attempt, self._retry, on_retry=log_retry)
        except Exception as error:
            raise SummarizationError(f"no summary after {tries} attempt(s)") from error
        return compaction, event.usage_metadata

    def _redacted_events(self, events: list[Event]) -> list[Event]:
        """The model's input: copies of the events with their content redacted (the events
        themselves are the live session's and stay as they are); the events without a
        redactor."""
        if self.redactor is None:
            return events
        return [
            e.model_copy(update={"content": redact_content(e.content, self.redactor)})
            if e.content is not None
            else e
            for e in events
        ]

    # Writing ------------------------------------------------------------------------------------

    async def _write_ready(self, service: BaseSessionService, session: Session) -> None:
        """A turn writes its session's finished summary through its own session object."""
        summary = self._ready.pop(_key(session), None)
        if summary is not None:
            await self._append(service, session, summary)

    async def _flush(self, key: SessionKey) -> bool:
        """Write a finished summary outside a turn, on a freshly loaded session."""
        summary = self._ready.pop(key, None)
        if summary is None:
            return False
        app_name, user_id, session_id = key
        session = await summary.service.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        return session is not None and await self._append(summary.service, session, summary)

    async def _append(
        self, service: BaseSessionService, session: Session, summary: _Summary
    ) -> bool:
        """Append the compaction if it still extends the session's latest one; True if written.

        A superseded summary (another run or replica wrote one meanwhile) is dropped. A stale
        session (someone wrote after it was loaded) puts the summary back for the next turn.
        """
        latest = latest_compaction(_history(session.events))
        if (latest.id if latest is not None else None) != summary.base_id:
            logger.info("Dropping a summary of session %s: a newer one was written.", summary.key)
            return False
        event = Event(
            author="user",
            invocation_id=Event.new_id(),
            actions=EventActions(compaction=summary.compaction),
            usage_metadata=summary.usage,
        )
        try:
            await service.append_event(session=session, event=event)
        except StaleSessionError:
            self._ready.setdefault(summary.key, summary)
            logger.info("Session %s moved on; its summary waits for the next turn.", summary.key)
            return False
        return True
