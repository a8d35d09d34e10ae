"""The memory job queue on a real Postgres: claiming, per-scope exclusion, completion inside the
effect's transaction, retries with backoff, dead letters, and recovery from a dead worker."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

import pytest
from google.genai import errors
from rls_checks import for_all

from adk_memory.db.engine import Database
from adk_memory.db.migrations import MEMORY_MIGRATIONS
from adk_memory.memory.jobs import ClaimedJob, JobQueue, Worker, backoff

LEASE = timedelta(seconds=30)
A = {"app_name": "app", "user_id": "a"}
B = {"app_name": "app", "user_id": "b"}


@pytest.fixture
async def queue(engine, database_url, make_memory_service) -> JobQueue:
    make_memory_service()  # empties the test tables
    db = Database(engine=engine, schema="adk_memory_test")
    await db.ensure_migrated("memory", MEMORY_MIGRATIONS)
    return JobQueue(db)


async def an_hour_passes(queue: JobQueue) -> None:
    """Every wait and lease the queue holds moves an hour back, so a test sees what comes due
    later without sleeping: a short sleep-sized wait would race a slow machine (the job could
    come due before the test checks that it is not due yet)."""
    schema = queue._db.schema
    await queue._db.run(
        lambda conn: conn.execute(
            f"UPDATE {schema}.memory_jobs SET run_after = run_after - interval '1 hour', "
            f"lease_until = lease_until - interval '1 hour' WHERE {for_all(schema)}; "
            f"UPDATE {schema}.memory_scope_leases SET lease_until = lease_until - interval '1 hour'"
            f" WHERE {for_all(schema)}"
        )
    )


async def complete(queue: JobQueue, job: ClaimedJob, result: object = None) -> None:
    async with queue._db.connection() as conn, conn.transaction():
        await queue.complete(conn, job.id, result, job.attempt)


async def test_jobs_of_one_scope_never_run_at_once(queue):
    first = await queue.enqueue("a", A, {"n": 1}, 3)
    await queue.enqueue("a", A, {"n": 2}, 3)
    other = await queue.enqueue("b", B, {"n": 3}, 3)

    one = await queue.claim(LEASE)
    two = await queue.claim(LEASE)
    assert (one.id, two.id) == (first, other)  # scope a is busy, so b's job comes next
    assert await queue.claim(LEASE) is None

    await complete(queue, one, {"ok": True})
    three = await queue.claim(LEASE)
    assert three.payload == {"n": 2} and three.scope == A
    record = await queue.get(first, "a")
    assert (record.status, record.result, record.attempts) == ("done", {"ok": True}, 1)
    assert await queue.get(first, "b") is None  # only with its own scope


async def test_a_failed_try_is_retried_after_its_backoff_then_dead_lettered(queue):
    job_id = await queue.enqueue("a", A, {}, 2)
    job = await queue.claim(LEASE)
    assert await queue.fail(job.id, "TimeoutError: slow model", 600, job.attempt) == "pending"
    assert await queue.claim(LEASE) is None  # not due for ten minutes
    await an_hour_passes(queue)
    job = await queue.claim(LEASE)
    assert job.attempt == 2
    assert await queue.fail(job.id, "ValueError: bad JSON", 0.0, job.attempt) == "dead"
    assert await queue.claim(LEASE) is None

    [dead] = await queue.dead_letters()
    assert (dead.id, dead.status, dead.attempts, dead.error) == (
        job_id,
        "dead",
        2,
        "ValueError: bad JSON",
    )
    assert await queue.retry_dead(job_id)
    assert (await queue.claim(LEASE)).id == job_id


async def test_a_job_whose_worker_died_is_claimed_again_when_its_lease_runs_out(queue):
    job_id = await queue.enqueue("a", A, {}, 3)
    assert (await queue.claim(LEASE)).id == job_id  # ...and the worker dies
    assert await queue.claim(LEASE) is None  # while its lease holds
    await an_hour_passes(queue)
    again = await queue.claim(LEASE)
    assert (again.id, again.attempt) == (job_id, 2)


async def test_effects_and_completion_commit_together(queue):
    """A worker killed between its work and its commit leaves no trace: the job runs again."""
    job_id = await queue.enqueue("a", A, {}, 3)
    job = await queue.claim(timedelta(seconds=0.2))
    with pytest.raises(RuntimeError):
        async with queue._db.connection() as conn, conn.transaction():
            await queue.complete(conn, job.id, {"written": True}, job.attempt)
            raise RuntimeError("killed before commit")
    assert (await queue.get(job_id, "a")).status == "running"
    await asyncio.sleep(0.3)
    assert (await queue.claim(LEASE)).id == job_id


async def test_workers_run_every_job_once_and_record_failures(queue):
    seen: list[int] = []

    async def handler(job: ClaimedJob) -> None:
        if job.payload["n"] == 3 and job.attempt == 1:
            raise RuntimeError("flaky model")
        seen.append(job.payload["n"])
        await complete(queue, job)

    for n in range(6):
        await queue.enqueue(f"s{n % 3}", {"user_id": f"s{n % 3}"}, {"n": n}, 3)
    workers = [Worker(queue, handler, retry_base_delay=timedelta(0)) for _ in range(3)]
    await asyncio.gather(*(w.run_until_idle() for w in workers))
    await asyncio.sleep(0.05)
    await workers[0].run_until_idle()
    assert sorted(seen) == [0, 1, 2, 3, 4, 5]


async def test_an_in_process_worker_wakes_on_enqueue(queue):
    done = asyncio.Event()

    async def handler(job: ClaimedJob) -> None:
        await complete(queue, job)
        done.set()

    worker = Worker(queue, handler, poll_interval=3600)  # only the wake-up can run the job
    worker.start()
    try:
        await asyncio.sleep(0.05)
        await queue.enqueue("a", A, {}, 1)
        await asyncio.wait_for(done.wait(), 60)  # a hang guard, far below the poll interval
    finally:
        await worker.stop()


async def test_stop_ends_a_worker_whose_job_swallowed_the_cancellation(queue):
    """A cancellation some library code swallows (Python < 3.12's `wait_for` can, when what it
    waits for finishes at the same moment) must not keep the worker, and `stop`, running: the
    loop is told to stop as well as cancelled (a hang seen once in 30 runs before)."""
    entered = asyncio.Event()

    async def handler(job: ClaimedJob) -> None:
        entered.set()
        with contextlib.suppress(asyncio.CancelledError):  # swallowed: the loop would go on
            await asyncio.sleep(3600)
        await complete(queue, job)

    worker = Worker(queue, handler, poll_interval=0.05)
    worker.start()
    await queue.enqueue("a", A, {}, 1)
    await asyncio.wait_for(entered.wait(), 60)
    await asyncio.wait_for(worker.stop(), 60)  # a hang guard: before, it never returned


def test_backoff_doubles_with_jitter_and_a_cap():
    base = timedelta(seconds=2)
    for attempt, full in [(1, 2), (2, 4), (3, 8)]:
        assert full / 2 <= backoff(attempt, base) <= full
    assert backoff(30, base) <= 600


async def test_a_stale_try_never_fails_or_completes_the_next_workers_try(queue):
    """A worker whose lease ran out comes back late: its failure or its completion must not
    touch the try another worker is running now (it would lose that generation)."""
    job_id = await queue.enqueue("a", A, {}, 3)
    stale = await queue.claim(timedelta(seconds=0.2))
    await asyncio.sleep(0.3)
    current = await queue.claim(LEASE)
    assert (current.id, current.attempt) == (job_id, 2)

    assert await queue.fail(stale.id, "TimeoutError: too late", 0.0, stale.attempt) is None
    await complete(queue, stale, {"stale": True})
    record = await queue.get(job_id, "a")
    assert (record.status, record.attempts, record.error) == ("running", 2, None)

    await complete(queue, current, {"current": True})
    record = await queue.get(job_id, "a")
    assert (record.status, record.result) == ("done", {"current": True})


async def test_a_job_whose_last_try_lost_its_worker_is_dead_lettered_not_claimed_again(queue):
    job_id = await queue.enqueue("a", A, {}, 2)
    for attempt in (1, 2):
        job = await queue.claim(timedelta(seconds=0.2))  # ...and the worker dies
        assert (job.id, job.attempt) == (job_id, attempt)
        await asyncio.sleep(0.3)
    assert await queue.claim(LEASE) is None
    [dead] = await queue.dead_letters()
    assert (dead.id, dead.status, dead.attempts) == (job_id, "dead", 2)
    assert "lease expired" in dead.error
    # The scope is free again: its next job runs.
    later = await queue.enqueue("a", A, {}, 2)
    assert (await queue.claim(LEASE)).id == later


_KILLER = """
import asyncio, os, sys
from datetime import timedelta
from sqlalchemy.ext.asyncio import create_async_engine
from adk_memory.db.engine import Database
from adk_memory.memory.jobs import JobQueue, Worker

async def main():
    db = Database(engine=create_async_engine(sys.argv[1]), schema="adk_memory_test")
    async def handler(job):
        os._exit(17)  # the job kills its worker, as a segfault or an OOM kill would
    await Worker(JobQueue(db), handler, lease=timedelta(seconds=0.2)).run_once()
    os._exit(0)  # nothing was due

asyncio.run(main())
"""


async def test_a_job_that_kills_its_worker_is_dead_lettered_after_its_last_try(queue, database_url):
    """Real processes die mid-job: the job is tried `max_attempts` times, then dead-lettered
    (it is not claimed again and again by every worker that comes along)."""
    import sys

    job_id = await queue.enqueue("a", A, {}, 3)
    codes = []
    for _ in range(4):
        process = await asyncio.create_subprocess_exec(sys.executable, "-c", _KILLER, database_url)
        codes.append(await asyncio.wait_for(process.wait(), 60))
        await asyncio.sleep(0.3)  # past the dead worker's lease
    assert codes == [17, 17, 17, 0]
    record = await queue.get(job_id, "a")
    assert (record.status, record.attempts) == ("dead", 3)


async def test_a_permanent_failure_is_dead_lettered_at_once(queue):
    """A rejected key (a 4xx) fails every try alike: dead at the first failure, where a
    transient one would be tried `max_attempts` times."""
    tries = 0

    async def handler(job: ClaimedJob) -> None:
        nonlocal tries
        tries += 1
        raise errors.ClientError(403, {"error": {"code": 403, "message": "API key not valid"}})

    job_id = await queue.enqueue("a", A, {}, 5)
    assert await Worker(queue, handler, retry_base_delay=timedelta(0)).run_until_idle() == 1
    record = await queue.get(job_id, "a")
    assert (record.status, record.attempts, tries) == ("dead", 1, 1)
    assert record.error == "model error (permanent): API key not valid (ClientError 403)"
