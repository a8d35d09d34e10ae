"""`adk-memory backfill`: generate memories from the sessions an app stored before memory
generation was on (or while it was off).

Owns: choosing the sessions to send, sending them, and reporting progress. Resuming needs no
checkpoint of its own: the memory watermark (the last event of each session already turned into
memories, committed in the same transaction as those memories) is the checkpoint. A session whose
watermark is at its last event is skipped without being loaded, so a rerun after an interrupt or
a crash sends only what was not processed, and no event is extracted twice. Users who opted out
of memory generation are skipped, as every trigger skips them. It never calls a model itself:
the memory service's jobs do.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import click
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.session import Session

from ..memory.scope import user_scope
from ..memory.service import PostgresMemoryService
from ..sessions.service import PostgresSessionService
from .options import (
    Generation,
    Target,
    database_options,
    generation_options,
    run,
    skip_credential_check_option,
)
from .output import note, plural
from .worker import check_model_credentials, unretrieved_errors_logged_once

if TYPE_CHECKING:  # click's bar type, only named in annotations (no public alias)
    from click._termui_impl import ProgressBar

_SHOWN_REASONS = 5
"""The most frequent failure reasons a report shows, one line each (with an example session)."""

INTERRUPTED_EXIT = 130
"""The exit code after Ctrl-C (128 + SIGINT, as shells report it)."""


@dataclass
class Outcome:
    """What a backfill found and did."""

    listed: int = 0
    """Sessions of the app (and user)."""
    pending: int = 0
    """Of those, sessions with events not yet turned into memories."""
    chosen: list[Session] = field(default_factory=list)
    """The pending sessions this run sends (the first --limit of them)."""
    results: Counter[str] = field(default_factory=Counter)
    """How each chosen session ended: sent, opted_out, empty, failed."""
    errors: dict[str, list[Session]] = field(default_factory=dict)
    """The failed sessions by why they failed (their job's dead-letter reason)."""

    @property
    def handled(self) -> int:
        return sum(self.results.values())


@contextmanager
def _first_interrupt_stops(stopping: asyncio.Event) -> Iterator[None]:
    """The first Ctrl-C (or SIGTERM) lets the sessions in progress finish and starts no new one;
    a second Ctrl-C aborts at once (a job it abandons runs again when its lease expires)."""
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []

    def stop(sig: signal.Signals) -> None:
        stopping.set()
        for each in installed:
            loop.remove_signal_handler(each)
        installed.clear()
        note("\nStopping after the sessions in progress (Ctrl-C again to abort)...")

    for sig in (signal.SIGINT, signal.SIGTERM):
        with suppress(NotImplementedError):  # no signal handlers in asyncio on Windows
            loop.add_signal_handler(sig, stop, sig)
            installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


class _Backfill:
    """One run: the two services, the options, and the outcome so far."""

    def __init__(
        self,
        sessions: PostgresSessionService,
        memory: PostgresMemoryService,
        *,
        wait: bool,
        concurrency: int,
    ) -> None:
        self.sessions = sessions
        self.memory = memory
        self.wait = wait
        self.window = concurrency if wait else 1
        self.outcome = Outcome()

    async def choose(self, app: str, user: str | None, limit: int | None, *, look: bool) -> None:
        """List the sessions, oldest update first, and keep those with events not turned into
        memories yet: one watermark query for all of them, no session loaded. With `look` (dry
        runs), sessions without any event are dropped too (one single-event read each)."""
        listed = (await self.sessions.list_sessions(app_name=app, user_id=user)).sessions
        marks = await self.memory.processed_until(
            [(user_scope(s.app_name, s.user_id), s.id) for s in listed]
        )
        pending = [
            s
            for s, mark in zip(listed, marks, strict=True)
            if mark is None or mark < s.last_update_time
        ]
        if look:
            pending = [s for s in pending if await self._has_events(s)]
        self.outcome.listed = len(listed)
        self.outcome.pending = len(pending)
        self.outcome.chosen = pending[:limit] if limit else pending

    async def _has_events(self, listed: Session) -> bool:
        session = await self.sessions.get_session(
            app_name=listed.app_name,
            user_id=listed.user_id,
            session_id=listed.id,
            config=GetSessionConfig(num_recent_events=1),
        )
        return session is not None and bool(session.events)

    async def send(self, listed: Session) -> str:
        """Load one session and send it to generation (and wait for it with --wait)."""
        session = await self.sessions.get_session(
            app_name=listed.app_name, user_id=listed.user_id, session_id=listed.id
        )
        if session is None or not session.events:
            return "empty"
        if await self.memory.is_opted_out(session.app_name, session.user_id, state=session.state):
            return "opted_out"
        operation = await self.memory.generate_memories(
            session=session, revision_labels={"trigger": "backfill"}
        )
        if self.wait:
            operation = await self.memory.wait(operation)
            if operation.error:
                self.outcome.errors.setdefault(operation.error, []).append(session)
                return "failed"
        return "sent"

    async def send_all(self, stopping: asyncio.Event, bar: ProgressBar[int]) -> None:
        """Send the chosen sessions, `window` at a time, until done or `stopping` is set."""
        in_flight: set[asyncio.Task[str]] = set()

        async def settle(when: str) -> None:
            nonlocal in_flight
            finished, in_flight = await asyncio.wait(in_flight, return_when=when)
            # Every finished task's failure is retrieved (none is left for asyncio to report as
            # never retrieved) before the first one is raised.
            ended = [(task, task.exception()) for task in finished]
            for task, failure in ended:
                if failure is None:
                    self.outcome.results[task.result()] += 1
                    bar.update(1)
            for _, failure in ended:
                if failure is not None:
                    raise failure

        try:
            for listed in self.outcome.chosen:
                if stopping.is_set():
                    break
                in_flight.add(asyncio.create_task(self.send(listed)))
                if len(in_flight) >= self.window:
                    await settle(asyncio.FIRST_COMPLETED)
            if in_flight:
                await settle(asyncio.ALL_COMPLETED)
        finally:
            for task in in_flight:
                task.cancel()
            await asyncio.gather(*in_flight, return_exceptions=True)


async def _backfill(
    target: Target,
    generation: Generation,
    *,
    app: str,
    user: str | None,
    limit: int | None,
    dry_run: bool,
    wait: bool,
    concurrency: int,
    check_credentials: bool,
) -> tuple[Outcome, bool]:
    """The outcome, and whether a Ctrl-C stopped the run before every chosen session was sent.
    Generating here (`wait`, not `dry_run`) with a Gemini model that has no credentials is
    refused before anything connects (`check_credentials`)."""
    if wait and not dry_run and check_credentials:
        check_model_credentials(generation.llm)
    async with (
        target.sessions(event_cache_size=0, redactor=generation.redactor) as sessions,
        target.memory(**generation.memory_options(), run_worker=False) as memory,
    ):
        plan = _Backfill(sessions, memory, wait=wait, concurrency=concurrency)
        await plan.choose(app, user, limit, look=dry_run)
        outcome = plan.outcome
        if dry_run or not outcome.chosen:
            return outcome, False
        # Failed tries are not logged one by one: the report sums them up, by reason.
        worker = memory.make_worker(concurrency=concurrency, log_failures=False) if wait else None
        stopping = asyncio.Event()
        label = "Generating" if wait else "Enqueueing"
        with (
            click.progressbar(length=len(outcome.chosen), label=label, file=sys.stderr) as bar,
            _first_interrupt_stops(stopping),
            unretrieved_errors_logged_once(),
        ):
            if worker is not None:
                worker.start()
            try:
                await plan.send_all(stopping, bar)
            finally:
                if worker is not None:
                    await worker.stop()
        return outcome, outcome.handled < len(outcome.chosen)


def _report(outcome: Outcome, wait: bool) -> None:
    results = outcome.results
    lines = [
        ("sessions", outcome.listed),
        ("already processed", outcome.listed - outcome.pending),
        ("processed now" if wait else "enqueued now (a worker generates them)", results["sent"]),
        ("without events", results["empty"]),
        ("opted out", results["opted_out"]),
        ("failed", results["failed"]),
        ("left for a later run", outcome.pending - outcome.handled),
    ]
    for label, count in lines:
        click.echo(f"{label + ':':<40}{count:>8}")


def _failures(errors: dict[str, list[Session]]) -> list[str]:
    """Why sessions failed, the most frequent reason first: one line per reason, naming one of
    its sessions (a model without a valid key fails every session alike: one line, not one
    per session)."""
    ranked = sorted(errors.items(), key=lambda item: -len(item[1]))
    lines = [
        f"failed: {plural(len(sessions), 'session')} (e.g. session {sessions[0].id} of user "
        f"{sessions[0].user_id}): {reason}"
        for reason, sessions in ranked[:_SHOWN_REASONS]
    ]
    if len(ranked) > _SHOWN_REASONS:
        lines.append(f"failed: ... and {plural(len(ranked) - _SHOWN_REASONS, 'other reason')}")
    return lines


@click.command()
@database_options
@generation_options
@click.option("--app", required=True, help="The app whose sessions are sent.")
@click.option("--user", help="Only this user's sessions.")
@click.option("--limit", type=click.IntRange(1), help="Send at most this many sessions.")
@click.option("--dry-run", is_flag=True, help="List the sessions that would be sent; send none.")
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Generate here (a worker in this process) and wait, or only enqueue for the workers.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1),
    default=4,
    show_default=True,
    help="Sessions generated at once with --wait.",
)
@skip_credential_check_option
def backfill(
    target: Target,
    generation: Generation,
    app: str,
    user: str | None,
    limit: int | None,
    dry_run: bool,
    wait: bool,
    concurrency: int,
    skip_credential_check: bool,
) -> None:
    """Generate memories from stored sessions.

    Sends an app's sessions (oldest first) to memory generation, e.g. after turning it on. Only
    events not turned into memories yet are sent, so running it again after Ctrl-C (or a
    crash) resumes where it stopped, and a finished backfill finds nothing to do. Users who opted
    out of memory generation are skipped.
    """
    outcome, interrupted = run(
        _backfill(
            target,
            generation,
            app=app,
            user=user,
            limit=limit,
            dry_run=dry_run,
            wait=wait,
            concurrency=concurrency,
            check_credentials=not skip_credential_check,
        )
    )
    if dry_run:
        have = "has" if outcome.pending == 1 else "have"
        listed = plural(outcome.listed, "session")
        click.echo(f"{outcome.pending} of {listed} {have} events not processed yet.")
        for session in outcome.chosen:
            click.echo(f"would send: user {session.user_id} session {session.id}")
        return
    _report(outcome, wait)
    for line in _failures(outcome.errors):
        note(line)
    if interrupted:
        note("Interrupted: run the same command again to resume.")
        raise click.exceptions.Exit(INTERRUPTED_EXIT)
    if outcome.errors:
        failed = sum(len(sessions) for sessions in outcome.errors.values())
        raise click.ClickException(
            f"{plural(failed, 'session')} failed; the next run tries them again."
        )
