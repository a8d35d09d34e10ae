"""When a conversation's new events are sent to be turned into memories.

Owns: the ADK plugin that enqueues memory generation after every N user turns (N = 1 is the
whitepaper's "real-time" trigger), the explicit end-of-session trigger, the idle-session sweep,
and the per-user opt-out all of them honour. Every trigger only *enqueues*: it reads the
session's memory watermark and inserts one job, so the source it sends is exactly the events not
yet turned into memories; extraction and consolidation run later in the memory service's worker,
which retries them. It never calls a model, never waits for a generation, never writes SQL, and
never lets a failure reach the turn (a failed enqueue is logged; the idle sweep picks the
session up later).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Literal

from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.session import Session
from typing_extensions import override

from ..errors import InputValidationError
from ..memory.models import GenerateMemoriesOperation
from ..memory.policy.opt_out import OPT_OUT_STATE_KEY as OPT_OUT_STATE_KEY
from ..memory.scope import Scope, user_scope
from ..memory.service import PostgresMemoryService
from ..sessions.service import PostgresSessionService
from ..sessions.store import IdleSession

logger = logging.getLogger(__name__)

OptOut = Callable[[Session], bool | Awaitable[bool]]
"""A predicate (sync or async) saying a session's user is opted out of memory generation."""

Trigger = Literal["turn", "session_end", "idle"]
"""What fired a generation; recorded as the `trigger` label of the memory revisions it writes."""

_TICK = timedelta(microseconds=1)
"""`datetime` holds microseconds, event timestamps hold more: the start time is moved back by
one tick so the watermark event itself is always in the source (the job then cuts after it by
id, not by a rounded time)."""


def _user_turns(session: Session) -> list[str]:
    """The invocations the user started, in order: one per message the user sent."""
    turns: dict[str, None] = {}
    for event in session.events:
        if event.author == "user":
            turns.setdefault(event.invocation_id, None)
    return list(turns)


async def _opted_out(
    memory_service: PostgresMemoryService, session: Session, opt_out: OptOut | None
) -> bool:
    """Whether the session's user opted out: by the memory service's record or the session's
    `OPT_OUT_STATE_KEY` (which the service records), or by the app's predicate."""
    if await memory_service.is_opted_out(session.app_name, session.user_id, state=session.state):
        return True
    if opt_out is None:
        return False
    answer = opt_out(session)
    return bool(await answer) if inspect.isawaitable(answer) else bool(answer)


async def _enqueue(
    memory_service: PostgresMemoryService,
    session: Session,
    processed: float | None,
    trigger: Trigger,
) -> GenerateMemoriesOperation | None:
    """Enqueue generation from the session's events after `processed` (its watermark time);
    None, and nothing enqueued, when there are none."""
    if not any(processed is None or e.timestamp > processed for e in session.events):
        return None
    start = None
    if processed is not None:
        start = datetime.fromtimestamp(processed, timezone.utc) - _TICK
    return await memory_service.generate_memories(
        session=session, start_time=start, revision_labels={"trigger": trigger}
    )


@dataclass(frozen=True)
class SweepStats:
    """Running totals of an idle sweep (what `progress` receives after each page)."""

    scanned: int = 0
    """Idle sessions with events looked at."""
    enqueued: int = 0
    """Generations enqueued."""
    up_to_date: int = 0
    """Sessions whose events were all turned into memories already (or that vanished)."""
    opted_out: int = 0
    """Sessions skipped because their user opted out."""
    failed: int = 0
    """Sessions that could not be enqueued (logged; the next sweep tries again)."""


_Outcome = Literal["up_to_date", "opted_out", "enqueued", "failed"]


def _count(stats: SweepStats, outcome: _Outcome) -> SweepStats:
    """`stats` with one more session scanned, and one more of `outcome`."""
    return replace(stats, scanned=stats.scanned + 1, **{outcome: getattr(stats, outcome) + 1})


def _memory_scope(idle: IdleSession) -> Scope | None:
    """The session user's memory scope; None (logged) for ids a scope cannot hold (e.g. with
    a `*`), so one odd user id never stops a sweep."""
    try:
        return user_scope(idle.app_name, idle.user_id)
    except InputValidationError as exc:
        logger.warning("Idle sweep: session %s has no memory scope: %s", idle.session_id, exc)
        return None


async def _sweep_one(
    session_service: PostgresSessionService,
    memory_service: PostgresMemoryService,
    idle: IdleSession,
    processed: float | None,
    opt_out: OptOut | None,
) -> _Outcome:
    """Enqueue one idle session's new events; which `SweepStats` counter it adds to."""
    session = await session_service.get_session(
        app_name=idle.app_name,
        user_id=idle.user_id,
        session_id=idle.session_id,
        # Only the new events (and the watermark event) are read.
        config=GetSessionConfig(after_timestamp=processed) if processed is not None else None,
    )
    if session is None:
        return "up_to_date"
    if await _opted_out(memory_service, session, opt_out):
        return "opted_out"
    operation = await _enqueue(memory_service, session, processed, "idle")
    return "up_to_date" if operation is None else "enqueued"


async def sweep_idle_sessions(
    session_service: PostgresSessionService,
    memory_service: PostgresMemoryService,
    *,
    idle_for: timedelta,
    app_name: str | None = None,
    opt_out: OptOut | None = None,
    batch_size: int = 500,
    progress: Callable[[SweepStats], None] | None = None,
) -> SweepStats:
    """Enqueue generation for every session nobody appended to for longer than `idle_for` whose
    events were not all turned into memories yet (the "after a period of inactivity" trigger).

    Meant for a cron job or a CLI, and the backstop of the other triggers: a session whose
    turn-time enqueue failed, or that never got an explicit end, is picked up here. Sessions are
    read a page of `batch_size` at a time, in key order; one query per page tells which have
    nothing new (their watermark is at their last event), and only the others are loaded (only
    their new events). `progress` gets the running totals after each page, which are also
    logged. A session that fails is logged and counted, and the sweep goes on. Running it again
    after the worker has caught up enqueues nothing; running it again before re-enqueues the
    sessions still waiting (harmless: the later job finds nothing new and calls no model).
    """
    if not isinstance(session_service, PostgresSessionService):
        raise InputValidationError("The idle sweep needs a PostgresSessionService.")
    if not isinstance(memory_service, PostgresMemoryService):
        raise InputValidationError("The idle sweep needs a PostgresMemoryService.")
    if not isinstance(batch_size, int) or not 1 <= batch_size <= 10_000:
        raise InputValidationError("batch_size must be between 1 and 10000.")
    stats = SweepStats()
    after: IdleSession | None = None
    while True:
        page = await session_service.list_idle_sessions(
            idle_for, app_name=app_name, after=after, limit=batch_size
        )
        if not page:
            return stats
        scoped = [(idle, _memory_scope(idle)) for idle in page]
        marks = iter(
            await memory_service.processed_until(
                [(scope, idle.session_id) for idle, scope in scoped if scope is not None]
            )
        )
        for idle, scope in scoped:
            if scope is None:
                stats = _count(stats, "failed")
                continue
            processed = next(marks)
            if processed is not None and processed >= idle.last_update_time:
                stats = _count(stats, "up_to_date")
                continue
            try:
                outcome = await _sweep_one(
                    session_service, memory_service, idle, processed, opt_out
                )
            except Exception:  # one session's failure never stops the sweep
                logger.exception("Idle sweep: could not enqueue session %s.", idle.session_id)
                outcome = "failed"
            stats = _count(stats, outcome)
        logger.info("Idle sweep: %s", stats)
        if progress is not None:
            progress(stats)
        if len(page) < batch_size:
            return stats
        after = page[-1]


class MemoryGenerationPlugin(BasePlugin):
    """Sends each conversation's new events to memory generation, without ever slowing a turn.

    Install it with `App(plugins=[MemoryGenerationPlugin(memory_service)])`. Triggers:
    - after every `every_n_turns`-th user turn of a session (1, the default: after every turn,
      Memory Bank's "real-time"; None: never per turn), once the turn's events are stored;
    - `await plugin.end_session(session)`, from the app's own "end conversation" handler (ADK
      has no session-end event);
    - `await plugin.sweep_idle(session_service, idle_for=...)`, from a cron job, for sessions
      that went quiet with events not yet processed.
    Each sends only the events after the session's memory watermark, so nothing is extracted
    twice however the triggers combine. Deleting a session triggers nothing: deletion usually
    means "forget this conversation" (or a TTL sweep, which should come after the idle one).

    Args:
      memory_service: a `PostgresMemoryService` with a generation model (`llm=...`).
      every_n_turns: the turn cadence; None for end-of-session and idle triggers only.
      opt_out: an extra per-user opt-out predicate (sync or async) on the session, besides the
        `OPT_OUT_STATE_KEY` state key. If it raises, nothing is enqueued (logged).
      name: the plugin's name (unique among a runner's plugins).
    """

    def __init__(
        self,
        memory_service: PostgresMemoryService,
        *,
        every_n_turns: int | None = 1,
        opt_out: OptOut | None = None,
        name: str = "memory_generation",
    ) -> None:
        if not isinstance(memory_service, PostgresMemoryService):
            raise InputValidationError("memory_service must be a PostgresMemoryService.")
        if memory_service.llm is None:
            raise InputValidationError(
                "Memory generation needs a model: build the memory service with llm=... ."
            )
        if every_n_turns is not None and (
            isinstance(every_n_turns, bool)
            or not isinstance(every_n_turns, int)
            or every_n_turns < 1
        ):
            raise InputValidationError("every_n_turns must be a positive integer or None.")
        if opt_out is not None and not callable(opt_out):
            raise InputValidationError("opt_out must be a callable taking the session.")
        super().__init__(name=name)
        self.memory_service = memory_service
        self.every_n_turns = every_n_turns
        self._opt_out = opt_out

    @override
    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """At the end of a user turn whose number is a multiple of `every_n_turns`: enqueue."""
        if self.every_n_turns is None:
            return
        session = invocation_context.session
        turns = _user_turns(session)
        if not turns or turns[-1] != invocation_context.invocation_id:
            return  # not a turn the user started (e.g. resuming a paused invocation)
        if len(turns) % self.every_n_turns == 0:
            await self._trigger(session, "turn")

    async def end_session(self, session: Session) -> GenerateMemoriesOperation | None:
        """Enqueue generation from the session's unprocessed events, as its conversation ended.

        Returns the operation, or None when nothing was enqueued (nothing new, user opted out,
        or the enqueue failed: logged, and the idle sweep will try again). The job carries the
        events, so the session may be deleted right after.
        """
        if not isinstance(session, Session):
            raise InputValidationError("session must be an ADK Session.")
        return await self._trigger(session, "session_end")

    async def sweep_idle(
        self,
        session_service: PostgresSessionService,
        *,
        idle_for: timedelta,
        app_name: str | None = None,
        batch_size: int = 500,
        progress: Callable[[SweepStats], None] | None = None,
    ) -> SweepStats:
        """`sweep_idle_sessions` with this plugin's memory service and opt-out."""
        return await sweep_idle_sessions(
            session_service,
            self.memory_service,
            idle_for=idle_for,
            app_name=app_name,
            opt_out=self._opt_out,
            batch_size=batch_size,
            progress=progress,
        )

    async def _trigger(
        self, session: Session, trigger: Trigger
    ) -> GenerateMemoriesOperation | None:
        """Opt-out check, watermark read, enqueue; any failure logged, never raised."""
        try:
            if await _opted_out(self.memory_service, session, self._opt_out):
                logger.debug("User %s opted out: no memory generation.", session.user_id)
                return None
            scope = user_scope(session.app_name, session.user_id)
            [processed] = await self.memory_service.processed_until([(scope, session.id)])
            operation = await _enqueue(self.memory_service, session, processed, trigger)
        except Exception:  # a memory problem must never break the conversation
            logger.exception(
                "Could not enqueue memory generation (%s) for session %s.", trigger, session.id
            )
            return None
        if operation is not None:
            logger.debug("Enqueued memory generation %s (%s).", operation.id, trigger)
        return operation
