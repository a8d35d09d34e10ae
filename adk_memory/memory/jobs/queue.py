"""The durable job queue that runs memory generation, in the same Postgres as the memories.

Owns: enqueueing (one insert), claiming (`FOR UPDATE SKIP LOCKED`, plus a lease per scope so two
generations for one scope never interleave), completing (inside the caller's transaction, so
the memories a job writes and its completion commit together or not at all), retrying with
exponential backoff and jitter (the package's schedule, `adk_memory._retry`), and
dead-lettering after the last try (or at the first permanent failure, with a one-line reason);
the loop that runs jobs is `worker`'s. A job whose worker died is claimed again when its lease
runs out: nothing is silently dropped. It knows nothing of what a job does: the worker calls a
handler. It is the only module that names the jobs table: whether a try still owns its job is
checked here (`finish`), in the transaction that writes the job's effects.

Typed payloads: given a pydantic `TypeAdapter` (the generation pipeline's `JOB_PAYLOADS`), the
queue writes payloads through it and validates each one when it claims the job; a payload that
does not validate is dead-lettered at that claim with a one-line reason (`JobPayloadError`),
never handed to a handler nor retried. Without one, payloads are plain JSON objects.

Exactly once: every statement is safe to replay after a lost reply (`Database.run`). Job ids
are chosen before the first attempt; a claim, a failed try and a retry of a dead job stamp the
job with their request id (`request_id`), so their replay recognises its own change.

Privacy: a job's payload is the conversation it generates from, so it lives only as long as it
is needed: completing a job empties it (the result keeps memory ids and actions, no text), a
dead job keeps it for diagnosis until `sweep` deletes finished jobs past their retention, and
`purge` / `erase` delete a scope's or a user's jobs outright. A job is read back only with its
scope (`get`), so an operation id never reveals another scope's generation.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, Literal, TypeVar

import asyncpg
from pydantic import TypeAdapter, ValidationError

from ..._retry import Backoff
from ...db import rls
from ...db.engine import Database
from ...db.replies import FIRST_ATTEMPT, recorded
from ...errors import JobPayloadError
from ..scope import ALL_SCOPES_GATE, scope_gate, scope_or_all_gate

JobStatus = Literal["pending", "running", "done", "dead"]

P = TypeVar("P")
"""A queue's payload type (`dict[str, Any]` without a `TypeAdapter`)."""

T = TypeVar("T")

# Row-level security (`db.rls`): a statement on one scope's jobs (enqueue, get, purge, a scope's
# list) is gated by that scope; the worker's own bookkeeping (claiming the next job of any
# scope, a try's ownership, completion and failure, by job id), the sweep, the erasure and the
# operators' listings act for every scope (`ALL_SCOPES_GATE`). A job's effects are written
# under its target's gate (`memory.store`), in `finish`'s transaction.

# The job's id is chosen by the caller before the first attempt: a replay finds it queued.
_ENQUEUE = f"""
INSERT INTO {{schema}}.memory_jobs (id, scope_key, scope, payload, max_attempts, config_version)
SELECT $1::uuid, $2, $3::jsonb, $4::json, $5::integer, $6::integer WHERE {scope_gate("$2")}
ON CONFLICT (id) DO NOTHING
"""

# Picks the oldest due job whose scope no other job holds, takes the scope's lease and marks the
# job running, in one statement. A running job whose lease ran out (its worker died) is due too,
# unless that was its last try: then it is dead-lettered here (a job that kills every worker
# that runs it is not claimed forever), and its scope's lease is released. $2 is the claim's
# request id: a claim replayed after a lost reply gets back the job it claimed (`mine`) and
# claims no other.
_CLAIM = f"""
WITH mine AS (
    SELECT j.id::text, j.scope_key, j.scope::text, j.payload::text, j.attempts, j.max_attempts,
           j.config_version, extract(epoch FROM now() - j.run_after)::float8
      FROM {{schema}}.memory_jobs j
     WHERE j.request_id = $2::uuid AND j.status = 'running' AND {ALL_SCOPES_GATE}
), reaped AS (
    UPDATE {{schema}}.memory_jobs
       SET status = 'dead', lease_until = NULL, update_time = now(),
           error = concat_ws(' / ', error,
                             'the worker running its last try stopped (its lease expired)')
     WHERE status = 'running' AND lease_until < now() AND attempts >= max_attempts
       AND {ALL_SCOPES_GATE}
    RETURNING id, scope_key
), released AS (
    DELETE FROM {{schema}}.memory_scope_leases l USING reaped
     WHERE l.scope_key = reaped.scope_key AND l.job_id = reaped.id AND {ALL_SCOPES_GATE}
), candidate AS (
    SELECT j.id, j.scope_key FROM {{schema}}.memory_jobs j
     WHERE ((j.status = 'pending' AND j.run_after <= now())
            OR (j.status = 'running' AND j.lease_until < now()
                AND j.attempts < j.max_attempts))
       AND NOT EXISTS (SELECT 1 FROM {{schema}}.memory_scope_leases l
                        WHERE l.scope_key = j.scope_key AND l.lease_until > now()
                          AND l.job_id <> j.id AND {ALL_SCOPES_GATE})
       AND NOT EXISTS (SELECT 1 FROM mine) AND {ALL_SCOPES_GATE}
     ORDER BY j.run_after, j.create_time
     LIMIT 1
     FOR UPDATE OF j SKIP LOCKED
), lease AS (
    INSERT INTO {{schema}}.memory_scope_leases AS l (scope_key, job_id, lease_until)
    SELECT scope_key, id, now() + make_interval(secs => $1) FROM candidate WHERE {ALL_SCOPES_GATE}
    ON CONFLICT (scope_key) DO UPDATE
        SET job_id = EXCLUDED.job_id, lease_until = EXCLUDED.lease_until
        WHERE l.lease_until <= now() OR l.job_id = EXCLUDED.job_id
    RETURNING job_id
), claimed AS (
    UPDATE {{schema}}.memory_jobs j
       SET status = 'running', attempts = j.attempts + 1, request_id = $2::uuid,
           lease_until = now() + make_interval(secs => $1), update_time = now()
      FROM lease
     WHERE j.id = lease.job_id AND {ALL_SCOPES_GATE}
    RETURNING j.id::text, j.scope_key, j.scope::text, j.payload::text, j.attempts,
              j.max_attempts, j.config_version, extract(epoch FROM now() - j.run_after)::float8
)
SELECT * FROM claimed UNION ALL SELECT * FROM mine
"""

# A try writes its job's effects only while it still owns the job: a retried commit, or a worker
# whose lease ran out and whose job another worker took (or an erasure deleted), writes nothing.
# The row stays locked until the transaction ends, so the job cannot move under the write.
_OWNED = f"""
SELECT 1 FROM {{schema}}.memory_jobs
WHERE id = $1::uuid AND status = 'running' AND attempts = $2 AND {ALL_SCOPES_GATE}
FOR UPDATE
"""

_COMPLETE = f"""
WITH done AS (
    UPDATE {{schema}}.memory_jobs
       SET status = 'done', payload = '{{{{}}}}', result = $2::json, error = NULL,
           lease_until = NULL, update_time = now()
     WHERE id = $1::uuid AND status = 'running' AND attempts = $3 AND {ALL_SCOPES_GATE}
    RETURNING scope_key
)
DELETE FROM {{schema}}.memory_scope_leases l USING done
 WHERE l.scope_key = done.scope_key AND l.job_id = $1::uuid AND {ALL_SCOPES_GATE}
"""

# $6 is the request id: a replay after a lost reply finds the job moved by this very request
# and returns the status it moved it to.
_FAIL = f"""
WITH failed AS (
    UPDATE {{schema}}.memory_jobs
       SET status = CASE WHEN $5 OR attempts >= max_attempts THEN 'dead' ELSE 'pending' END,
           run_after = now() + make_interval(secs => $3), error = $2, lease_until = NULL,
           update_time = now(), request_id = $6::uuid
     WHERE id = $1::uuid AND status = 'running' AND attempts = $4 AND {ALL_SCOPES_GATE}
    RETURNING scope_key, status
), released AS (
    DELETE FROM {{schema}}.memory_scope_leases l USING failed
     WHERE l.scope_key = failed.scope_key AND l.job_id = $1::uuid AND {ALL_SCOPES_GATE}
)
SELECT status FROM failed
UNION ALL
SELECT status FROM {{schema}}.memory_jobs
 WHERE id = $1::uuid AND request_id = $6::uuid AND NOT EXISTS (SELECT 1 FROM failed)
   AND {ALL_SCOPES_GATE}
"""

_GET = f"""
SELECT id::text, scope::text, status, attempts, max_attempts, error, result::text,
       create_time, update_time
FROM {{schema}}.memory_jobs WHERE id = $1::uuid AND scope_key = $2 AND {scope_gate("$2")}
"""

_DEAD = f"""
SELECT id::text, scope::text, status, attempts, max_attempts, error, result::text,
       create_time, update_time
FROM {{schema}}.memory_jobs WHERE status = 'dead' AND {ALL_SCOPES_GATE}
ORDER BY update_time DESC LIMIT $1
"""

# One scope's jobs ($1 scope key), newest first, $2 at most: its generations as an operator
# reviews them.
_OF_SCOPE = f"""
SELECT id::text, scope::text, status, attempts, max_attempts, error, result::text,
       create_time, update_time
FROM {{schema}}.memory_jobs WHERE scope_key = $1 AND {scope_gate("$1")}
ORDER BY create_time DESC, id LIMIT $2
"""

# Finished jobs (done, or dead-lettered with their payload kept for diagnosis) past their
# retention, a batch at a time.
_SWEEP = f"""
DELETE FROM {{schema}}.memory_jobs WHERE {ALL_SCOPES_GATE} AND ctid = ANY(ARRAY(
    SELECT ctid FROM {{schema}}.memory_jobs
     WHERE status IN ('done', 'dead') AND update_time < now() - make_interval(secs => $1)
       AND {ALL_SCOPES_GATE}
     LIMIT $2))
"""

# A scope's jobs and its lease ($1 scope key): what `purge` forgets with the memories. Counted
# under request id $2 (see `db.replies`), as is `_ERASE`.
_PURGE = recorded(
    "{schema}.memory_replies",
    "$2",
    f"""
j AS (DELETE FROM {{schema}}.memory_jobs
       WHERE scope_key = $1 AND {FIRST_ATTEMPT} AND {scope_gate("$1")} RETURNING 1),
l AS (DELETE FROM {{schema}}.memory_scope_leases
       WHERE scope_key = $1 AND {FIRST_ATTEMPT} AND {scope_gate("$1")} RETURNING 1)""",
    ["(SELECT count(*) FROM j)"],
)

# Every job and lease of every scope containing $1 (e.g. {"app_name": A, "user_id": U}).
_ERASE = recorded(
    "{schema}.memory_replies",
    "$2",
    f"""
j AS (DELETE FROM {{schema}}.memory_jobs
       WHERE scope @> $1::jsonb AND {FIRST_ATTEMPT} AND {ALL_SCOPES_GATE} RETURNING 1),
l AS (DELETE FROM {{schema}}.memory_scope_leases
       WHERE scope_key::jsonb @> $1::jsonb AND {FIRST_ATTEMPT} AND {ALL_SCOPES_GATE}
      RETURNING 1)""",
    ["(SELECT count(*) FROM j)"],
)

# Whether the dead job $1 was given new tries by this request ($2): by this attempt, or (for a
# replay after a lost reply) by its first.
_RETRY_DEAD = f"""
WITH retried AS (
    UPDATE {{schema}}.memory_jobs
       SET status = 'pending', attempts = 0, run_after = now(), error = NULL,
           update_time = now(), request_id = $2::uuid
     WHERE id = $1::uuid AND status = 'dead' AND ($3::text IS NULL OR scope_key = $3)
       AND {scope_or_all_gate("$3")}
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM retried)
    OR EXISTS (SELECT 1 FROM {{schema}}.memory_jobs
                WHERE id = $1::uuid AND request_id = $2::uuid AND {scope_or_all_gate("$3")})
"""

# The queue's depth by state, read through the partial index of active jobs.
_DEPTH = f"""
SELECT count(*) FILTER (WHERE status = 'pending' AND run_after <= now()),
       count(*) FILTER (WHERE status = 'pending' AND run_after > now()),
       count(*) FILTER (WHERE status = 'running')
  FROM {{schema}}.memory_jobs WHERE status IN ('pending', 'running') AND {ALL_SCOPES_GATE}
"""


@dataclass(frozen=True)
class ClaimedJob(Generic[P]):
    """A job this worker now holds (until its lease runs out), its payload validated."""

    id: str
    scope_key: str
    scope: dict[str, str]
    payload: P
    attempt: int
    max_attempts: int
    config_version: int | None = None
    """The version of its app's stored configuration the job was enqueued with (see
    `memory.app_config`); None: the worker's own configuration."""
    queue_wait: float | None = None
    """Seconds between the job becoming due and this claim (its queue wait, for telemetry)."""

    @property
    def source(self) -> str:
        """The payload's kind (its `source`, "" when it has none), for telemetry."""
        payload: Any = self.payload
        found = payload.get("source") if isinstance(payload, dict) else payload.source
        return str(found or "")


@dataclass(frozen=True)
class JobRecord:
    """What is known of a job: its status, its error (dead jobs keep the last one), its result."""

    id: str
    scope: dict[str, str]
    status: JobStatus
    attempts: int
    max_attempts: int
    error: str | None
    result: Any
    create_time: datetime
    update_time: datetime


def _record(row: asyncpg.Record) -> JobRecord:
    return JobRecord(
        id=row[0],
        scope=json.loads(row[1]),
        status=row[2],
        attempts=row[3],
        max_attempts=row[4],
        error=row[5],
        result=json.loads(row[6]) if row[6] is not None else None,
        create_time=row[7],
        update_time=row[8],
    )


def _first_error(exc: ValidationError) -> str:
    """A payload's validation failure in one line: where and what (never the value: it may be
    the conversation)."""
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "payload"
    more = exc.error_count() - 1
    return f"{where}: {first['msg']}" + (f" (and {more} more)" if more else "")


def backoff(attempt: int, base: timedelta, *, cap: timedelta = timedelta(minutes=10)) -> float:
    """Seconds to wait before try `attempt + 1`: the package's retry schedule
    (`adk_memory._retry.Backoff`: base * 2^(attempt-1), capped, half jittered, so a burst of
    failures does not come back as a burst), with the wait itself persisted in the job row."""
    return Backoff(base=base.total_seconds(), cap=cap.total_seconds()).delay(attempt)


class JobQueue(Generic[P]):
    """The queue's statements against one `Database`; `payloads` types the jobs' payloads
    (module docstring), None: plain JSON objects."""

    def __init__(self, db: Database, payloads: TypeAdapter[P] | None = None) -> None:
        self._db = db
        self._payloads = payloads
        schema = db.schema
        self._owned = rls.render(_OWNED, schema)
        self._enqueue = rls.render(_ENQUEUE, schema)
        self._claim = rls.render(_CLAIM, schema)
        self._complete = rls.render(_COMPLETE, schema)
        self._fail = rls.render(_FAIL, schema)
        self._get = rls.render(_GET, schema)
        self._dead = rls.render(_DEAD, schema)
        self._of_scope = rls.render(_OF_SCOPE, schema)
        self._retry_dead = rls.render(_RETRY_DEAD, schema)
        self._sweep = rls.render(_SWEEP, schema)
        self._purge = rls.render(_PURGE, schema)
        self._erase = rls.render(_ERASE, schema)
        self._depth = rls.render(_DEPTH, schema)
        self.enqueued = asyncio.Event()
        """Set on every enqueue in this process, so an in-process worker wakes at once."""

    async def enqueue(
        self,
        scope_key: str,
        scope: dict[str, str],
        payload: P,
        max_attempts: int,
        *,
        config_version: int | None = None,
    ) -> str:
        """Add a job (one insert); its id is the operation id callers poll. The id is chosen
        here, so a replay after a lost reply finds the job queued and returns the same id.
        `config_version` is the app configuration the job runs with (None: the worker's)."""
        job_id = str(uuid.uuid4())
        stored = (
            payload if self._payloads is None else self._payloads.dump_python(payload, mode="json")
        )
        args = (job_id, scope_key, json.dumps(scope), json.dumps(stored), max_attempts)
        await self._db.run(lambda conn: conn.execute(self._enqueue, *args, config_version))
        self.enqueued.set()
        return job_id

    async def claim(self, lease: timedelta) -> ClaimedJob[P] | None:
        """The next due job whose scope is free, now running under a lease; None if none. A
        replay after a lost reply returns the job the first attempt claimed. A payload that
        does not validate dead-letters its job here and raises `JobPayloadError` (the worker
        counts it as a failed try)."""
        args = (lease.total_seconds(), uuid.uuid4())
        row = await self._db.run(lambda conn: conn.fetchrow(self._claim, *args))
        if row is None:
            return None
        return ClaimedJob(
            id=row[0],
            scope_key=row[1],
            scope=json.loads(row[2]),
            payload=await self._payload(row[0], row[4], json.loads(row[3])),
            attempt=row[4],
            max_attempts=row[5],
            config_version=row[6],
            queue_wait=row[7],
        )

    async def _payload(self, job_id: str, attempt: int, stored: Any) -> P:
        """The claimed job's payload, validated; a malformed one is dead-lettered at once."""
        if self._payloads is None:
            return stored  # P is the stored JSON's own type (`dict[str, Any]`)
        try:
            return self._payloads.validate_python(stored)
        except ValidationError as exc:
            error = JobPayloadError(job_id, _first_error(exc))
            await self.fail(job_id, str(error), 0.0, attempt, permanent=True)
            raise error from None

    async def finish(
        self,
        job: ClaimedJob[P],
        effects: Callable[[asyncpg.Connection], Awaitable[tuple[T, Any]]],
    ) -> T | None:
        """Write a try's effects and complete its job in one transaction: `effects` runs on
        its connection once this try is found to still own the job (else nothing is written:
        None), and returns (its value, the job's result). Completing drops the payload and
        frees the scope; the result must hold no conversation text. `effects` is replayed
        whole after a lost connection (`Database.run`): a replay of a committed try finds the
        job done and writes nothing."""

        async def run(conn: asyncpg.Connection) -> T | None:
            async with conn.transaction():
                if await conn.fetchval(self._owned, job.id, job.attempt) is None:
                    return None
                value, result = await effects(conn)
                await self.complete(conn, job.id, result, job.attempt)
                return value

        return await self._db.run(run)

    async def complete(
        self, conn: asyncpg.Connection, job_id: str, result: Any, attempt: int
    ) -> None:
        """Mark try `attempt` of the job done, drop its payload and free its scope, on `conn`:
        call it inside the transaction that writes the job's effects (`finish` does). `result`
        must hold no conversation text. A try that no longer owns the job (its lease ran out
        and another worker took it) changes nothing."""
        await conn.execute(self._complete, job_id, json.dumps(result), attempt)

    async def fail(
        self, job_id: str, error: str, retry_in: float, attempt: int, *, permanent: bool = False
    ) -> JobStatus | None:
        """Record that try `attempt` failed: back to pending after `retry_in` seconds, or dead
        after the last try, or at once when the failure is `permanent` (no further try could
        succeed). Returns the new status; None if that try no longer owns the job (it finished,
        or its lease ran out and another worker's try is running: that try is never
        dead-lettered by this one). A replay after a lost reply returns the status this call
        moved the job to."""
        args = (job_id, error[:4000], retry_in, attempt, permanent, uuid.uuid4())
        return await self._db.run(lambda conn: conn.fetchval(self._fail, *args))

    async def get(self, job_id: str, scope_key: str) -> JobRecord | None:
        """A job by id, only if it is of this scope (the operation behind `get_operation`)."""
        row = await self._db.run(lambda conn: conn.fetchrow(self._get, job_id, scope_key))
        return None if row is None else _record(row)

    async def dead_letters(self, limit: int = 100) -> list[JobRecord]:
        """Jobs that used up their tries, newest first, with their last error."""
        rows = await self._db.run(lambda conn: conn.fetch(self._dead, limit))
        return [_record(r) for r in rows]

    async def sweep(self, retention: timedelta, batch_size: int) -> int:
        """Delete up to `batch_size` finished jobs older than `retention`; how many went."""
        status = await self._db.run(
            lambda conn: conn.execute(self._sweep, retention.total_seconds(), batch_size)
        )
        return int(status.split()[-1])

    async def purge(self, scope_key: str) -> int:
        """Delete a scope's jobs (whatever their state) and its lease; how many jobs went (a
        replay after a lost reply counts the same)."""
        request_id = uuid.uuid4()
        counts = await self._db.run(lambda conn: conn.fetchval(self._purge, scope_key, request_id))
        return int(counts[0])

    async def erase(self, containing: dict[str, str], request_id: uuid.UUID | None = None) -> int:
        """Delete the jobs and leases of every scope that contains `containing`; how many jobs
        went. A generation running for one of them then finds its job gone and writes nothing
        (`finish` checks that its try still owns the job). The same
        `request_id` again (a re-run of an erasure) returns the first run's count."""
        args = (json.dumps(containing), request_id or uuid.uuid4())
        counts = await self._db.run(lambda conn: conn.fetchval(self._erase, *args))
        return int(counts[0])

    async def depth(self) -> dict[str, int]:
        """Jobs queued now, by state: ready (due), waiting (backing off before a retry),
        running (the queue depth metric, `telemetry.QueueDepth`)."""
        row = await self._db.run(lambda conn: conn.fetchrow(self._depth))
        return {"ready": row[0], "waiting": row[1], "running": row[2]}

    async def of_scope(self, scope_key: str, limit: int) -> list[JobRecord]:
        """A scope's jobs, newest first (whatever their state)."""
        rows = await self._db.run(lambda conn: conn.fetch(self._of_scope, scope_key, limit))
        return [_record(r) for r in rows]

    async def retry_dead(self, job_id: str, scope_key: str | None = None) -> bool:
        """Give a dead job a fresh set of tries (after fixing what killed it); False if it was
        not dead, or (with `scope_key`) is not that scope's."""
        args = (job_id, uuid.uuid4(), scope_key)
        return bool(await self._db.run(lambda conn: conn.fetchval(self._retry_dead, *args)))
