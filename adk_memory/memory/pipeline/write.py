"""The write phase of a generation job: its plan applied in one transaction with its
completion.

Owns: the order of a job's writes on one connection (the memories and the watermark through
`MemoryStore.apply_generation`, the profile changes through `ProfileStore.apply`, a procedure
job's support through `SupportStore.record`, then the job's result), all inside the job queue's
`finish`, which checks that the try still owns its job and completes it in the same
transaction: a worker killed at any point leaves no partial writes, the retried job produces
the same memories once, and a try whose lease another worker took writes nothing. It never
decides anything (`decide` did) and never names the jobs table (`jobs` does).
"""

from __future__ import annotations

from typing import Any

import asyncpg

from ...telemetry import count_actions, traced
from ..jobs import ClaimedJob, JobQueue
from ..models import Memory, MemoryAction
from ..store import MemoryStore
from ..store.profiles import ProfileStore
from ..store.support import SupportStore
from .decide import Plan, result
from .kinds import Target
from .payload import JobPayload


class Writer:
    """Applies plans against the memory, profile and support stores, through the queue."""

    def __init__(
        self,
        *,
        store: MemoryStore,
        profiles: ProfileStore,
        support: SupportStore | None,
        queue: JobQueue[Any],
        revision_ttl: float | None,
        procedure_min_users: int,
    ) -> None:
        self._store = store
        self._profiles = profiles
        self._support = support
        self._queue = queue
        self._revision_ttl = revision_ttl
        self._min_users = procedure_min_users

    @traced("generation.apply")
    async def write(self, job: ClaimedJob[JobPayload], target: Target, plan: Plan) -> None:
        """Apply `plan` and complete `job` (nothing when the try no longer owns it)."""

        revision_ttl = job.payload.revision_seconds(self._revision_ttl)

        async def effects(
            conn: asyncpg.Connection,
        ) -> tuple[list[tuple[MemoryAction, Memory]], Any]:
            applied = await self._store.apply_generation(conn, plan.memories, revision_ttl)
            if plan.profile is not None:
                await self._profiles.apply(
                    conn,
                    scope_key=target.key,
                    scope=target.scope,
                    changes=plan.profile.changes,
                    source=plan.profile.source,
                    ttl_seconds=plan.profile.ttl_seconds,
                    labels=plan.labels,
                    revision_ttl=revision_ttl,
                )
            await self._record_support(conn, target, plan, applied)
            return applied, result(applied, plan)

        await self._queue.finish(job, effects)
        writes = plan.memories
        count_actions(
            created=len(writes.creates) - len(plan.quarantined),
            updated=len(writes.updates),
            deleted=len(writes.deletes),
            quarantined=len(plan.quarantined),
            rejected=len(plan.refused),
        )

    async def _record_support(
        self,
        conn: asyncpg.Connection,
        target: Target,
        plan: Plan,
        applied: list[tuple[MemoryAction, Memory]],
    ) -> None:
        """A procedure job's user and session support what it wrote (`procedure_support`)."""
        written = [(m.id, m.fact) for action, m in applied if action != MemoryAction.DELETED]
        if plan.support is None or not written or self._support is None:
            return
        await self._support.record(
            conn,
            key=target.key,
            app_name=plan.support.app_name,
            supporter=plan.support.supporter,
            hashes=plan.support.hashes,
            written=written,
            min_users=self._min_users,
        )
