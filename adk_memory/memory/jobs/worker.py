"""The worker loop that runs the job queue's jobs: claim, run the handler, record the try.

Owns: `Worker` (claims and runs jobs until stopped, in-process or standalone, any number
against one database), what a failed try becomes (retried with the package's backoff, or
dead-lettered at once when permanent: `adk_memory._retry`), and `WorkerStats`, the tally of
tries a run's summary reports. It knows nothing of what a job does (the handler does) and
never names the jobs table (`queue` does).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..._retry import describe, is_permanent
from ...errors import DatabasePermissionError, JobPayloadError
from ...telemetry import QueueDepth, job_failed, traced_job
from .queue import ClaimedJob, JobQueue, JobStatus, backoff

logger = logging.getLogger(__name__)


Handler = Callable[[ClaimedJob[Any]], Awaitable[None]]
"""Does a job's work and completes it (`JobQueue.finish`) in the transaction that writes its
effects. Raising means the try failed; the worker records it and schedules the retry."""

_KEPT_REASONS = 20
"""Distinct failure reasons a worker counts one by one; later new ones count together (a
worker that runs for weeks keeps a bounded tally)."""

_OTHER_REASONS = "(other failures)"
"""What failures past the first `_KEPT_REASONS` distinct reasons are counted under."""


@dataclass
class WorkerStats:
    """What a worker's tries came to, for a summary (`adk-memory worker --until-idle`): each
    claimed try either succeeded, failed and was put back to be retried after its backoff, or
    failed and was dead-lettered (a try that lost its job to an erasure or an expired lease is
    only counted as run)."""

    ran: int = 0
    succeeded: int = 0
    retried: int = 0
    dead_lettered: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    """Why tries failed: each reason (the error as stored with the job) and how many tries."""

    @property
    def failed(self) -> int:
        """Tries that failed (retried or dead-lettered)."""
        return self.retried + self.dead_lettered

    def __add__(self, other: WorkerStats) -> WorkerStats:
        """Both tallies together (the loops of one worker process)."""
        return WorkerStats(
            ran=self.ran + other.ran,
            succeeded=self.succeeded + other.succeeded,
            retried=self.retried + other.retried,
            dead_lettered=self.dead_lettered + other.dead_lettered,
            reasons=self.reasons + other.reasons,
        )

    def record_failure(self, status: JobStatus | None, reason: str) -> None:
        """Count a failed try by the status it left its job in (`JobQueue.fail`), and why."""
        if status == "dead":
            self.dead_lettered += 1
        elif status == "pending":
            self.retried += 1
        else:
            return
        if reason not in self.reasons and len(self.reasons) >= _KEPT_REASONS:
            reason = _OTHER_REASONS
        self.reasons[reason] += 1


class Worker:
    """Claims and runs jobs until stopped: in-process by default, or standalone
    (`python -m adk_memory.worker`). Any number may run against one database. `redact` is
    applied to a failed try's error before it is stored (an error may quote the job's text).
    Every failed try is logged (one line) unless `log_failures` is off, for a caller that
    reports `stats` instead (a summary, not a line per retry)."""

    def __init__(
        self,
        queue: JobQueue,
        handler: Handler,
        *,
        retry_base_delay: timedelta = timedelta(seconds=2),
        lease: timedelta = timedelta(minutes=5),
        poll_interval: float = 1.0,
        concurrency: int = 1,
        prepare: Callable[[], Awaitable[object]] | None = None,
        redact: Callable[[str], str] | None = None,
        log_failures: bool = True,
    ) -> None:
        self._queue = queue
        self._log_failures = log_failures
        self._redact = redact
        self._handler = traced_job(handler)
        self._queue_depth = QueueDepth(queue.depth)
        self._prepare = prepare
        self._retry_base_delay = retry_base_delay
        self._lease = lease
        self._poll_interval = poll_interval
        self._concurrency = concurrency
        self._tasks: list[asyncio.Task[None]] = []
        self._idle_tasks: list[Callable[[], Awaitable[object]]] = []
        self._stopping = False
        self.stats = WorkerStats()
        """This worker's tries so far."""

    async def run_once(self) -> bool:
        """Claim and run one job; False when none was due. `prepare` (the service's migration
        check) runs first, so a worker started before any agent on a fresh database finds the
        tables instead of failing on them."""
        if self._prepare is not None:
            await self._prepare()
        await self._queue_depth.sample()
        try:
            job = await self._queue.claim(self._lease)
        except JobPayloadError as exc:  # dead-lettered by the claim: no try could run it
            self.stats.ran += 1
            self._failed(exc.job_id, "dead", str(exc), "")
            return True
        if job is None:
            return False
        self.stats.ran += 1
        try:
            await self._handler(job)
        except Exception as exc:  # every failure is recorded, never dropped
            # Retried unless permanent (a rejected key, a 4xx, bad input): that one is
            # dead-lettered at once, to be retried by hand (`retry_dead`) once it is fixed.
            delay = backoff(job.attempt, self._retry_base_delay)
            error = describe(exc)  # one line; may quote the model's input or output
            if self._redact is not None:
                error = self._redact(error)
            status = await self._queue.fail(
                job.id, error, delay, job.attempt, permanent=is_permanent(exc)
            )
            self._failed(job.id, status, error, f" try {job.attempt}/{job.max_attempts}")
        else:
            self.stats.succeeded += 1
        return True

    def _failed(self, job_id: str, status: JobStatus | None, error: str, tries: str) -> None:
        """Count, meter and (unless `log_failures` is off) log one failed try."""
        self.stats.record_failure(status, error)
        job_failed(status)
        if self._log_failures:
            log = logger.error if status == "dead" else logger.warning
            log("Memory job %s%s failed (%s): %s", job_id, tries, status, error)

    def when_idle(self, task: Callable[[], Awaitable[object]]) -> None:
        """Run `task` each time a loop finds no job due, before it waits (the service's sweep
        of IngestEvents streams a time rule made due): work that comes due with time is found
        by polling, never by a task sleeping for it. A failing task is logged, the loop kept."""
        self._idle_tasks.append(task)

    async def _run_idle_tasks(self) -> None:
        for task in list(self._idle_tasks):
            try:
                await task()
            except DatabasePermissionError:  # no retry grants a privilege: say so, once
                logger.exception("Memory worker's role may not run %r: it stops running it.", task)
                self._idle_tasks.remove(task)
            except Exception:  # the next idle pass tries again
                logger.exception("Memory worker's idle task %r failed; retrying later.", task)

    async def run_until_idle(self) -> int:
        """Run due jobs until none is left; how many ran (tests, backfills, benchmarks)."""
        count = 0
        while await self.run_once():
            count += 1
        return count

    async def _loop(self) -> None:
        while not self._stopping:
            # Cleared before the claim, not after it: a job enqueued while the claim runs then
            # either is claimed or sets the event again (never a wake-up lost for a whole
            # poll interval).
            self._queue.enqueued.clear()
            try:
                if await self.run_once():
                    continue
            except DatabasePermissionError:  # no retry grants a privilege: say so, once
                logger.exception(
                    "Memory worker stopped: this process's database role may not run "
                    "generation jobs. Run them in `adk-memory worker` as the worker role "
                    "(run_worker=False here), or grant that role to this process's user."
                )
                return
            except Exception:  # the database may be briefly away: keep the worker alive
                logger.exception("Memory worker could not claim a job; retrying.")
            await self._run_idle_tasks()
            if self._queue.enqueued.is_set():  # an idle task enqueued a job: run it now
                continue
            await self._idle()

    async def _idle(self) -> None:
        """Wait until a job is enqueued in this process or `poll_interval` passes. Not
        `asyncio.wait_for`: on Python < 3.12 it swallows a cancellation that arrives as the
        event is set, and this loop, never cancelled, would keep `stop` waiting forever."""
        woken = asyncio.ensure_future(self._queue.enqueued.wait())
        try:
            await asyncio.wait({woken}, timeout=self._poll_interval)
        finally:
            woken.cancel()

    def start(self) -> None:
        """Run `concurrency` loops in the background of the current event loop; again on
        another event loop once the previous loop's are over (`asyncio.run` ends them with its
        loop), with a new wake-up event (an asyncio event belongs to one loop)."""
        if any(not t.done() and not t.get_loop().is_closed() for t in self._tasks):
            return
        if self._tasks:
            self._queue.enqueued = asyncio.Event()
        self._stopping = False
        self._tasks = [asyncio.create_task(self._loop()) for _ in range(self._concurrency)]

    async def stop(self) -> None:
        """Stop the loops (a job being run is abandoned; its lease makes it due again). They
        are cancelled and also told to stop: a cancellation some awaited library code swallows
        (Python < 3.12's `wait_for` can) must not keep a loop, and this call, running."""
        tasks, self._tasks = self._tasks, []
        self._stopping = True
        running = asyncio.get_running_loop()
        here = [t for t in tasks if t.get_loop() is running]
        for task in here:
            task.cancel()
        for task in tasks:  # loops started on an event loop in another thread
            if task.get_loop() is not running and not task.get_loop().is_closed():
                task.get_loop().call_soon_threadsafe(task.cancel)
        await asyncio.gather(*here, return_exceptions=True)
