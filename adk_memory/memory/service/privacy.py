"""Forgetting and holding back: the memory service's privacy operations.

Owns: `PostgresMemoryService.privacy`: `purge` (a scope), `erase_user` (every scope naming
one user of one app; structured profiles included), the erasure record and its tombstones
(`memory.tombstones`), the retention sweeps (expired memories, profile fields and revisions,
finished generation jobs, and pruning memories no longer believed: `prune_memories`,
replay-safe), and the operators' review of the quarantine (list, approve, reject). Jobs always
go before memories, so a generation running for what is being forgotten finds its job gone
and writes nothing. "None" never means "all" here: every deletion names its scope or its user.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

from ...config import MemoryBankConfig
from ...db.batches import in_batches
from ...db.engine import Database
from ...errors import InputValidationError, NotFoundError
from ...telemetry import traced
from ..app_config import check_app_name
from ..checks import check_count, check_id, check_unit
from ..jobs import JobQueue
from ..models import GuardedFact, Memory, MemoryFilter, MemoryType, QuarantinedMemory
from ..scope import kind_key, procedure_key, quarantine_key, scope_key, user_scope, validate_scope
from ..store.app_configs import AppConfigStore
from ..store.audit import AuditStore, erased_key
from ..store.profiles import ProfileStore
from ..store.support import SupportStore
from ..store.tombstones import Kind, Tombstones
from .audit import Principal, entry
from .core import Gate, Readiness


@dataclass(frozen=True)
class UserStores:
    """The stores besides the memories' that keep something of a user, which forgetting
    empties (the memory store is readiness's; the operators' audit loses the user's name)."""

    jobs: JobQueue
    support: SupportStore
    profiles: ProfileStore
    tombstones: Tombstones
    audit: AuditStore


def _kind_key(key: str, memory_type: MemoryType) -> str:
    """Where the scope's memories of this kind are kept (see `store.kind_key`)."""
    if memory_type not in ("fact", "procedure"):
        raise InputValidationError('memory_type must be "fact" or "procedure".')
    return kind_key(key, MemoryFilter(memory_type=memory_type))[0]


class Privacy:
    """`purge`, `erase_user`, the sweeps and the quarantine (`PostgresMemoryService.privacy`).
    Built with every store that keeps something of a user (memories, jobs, procedures'
    support, profiles, tombstones), the app configurations (pruning follows the app's trust
    policy), the database (an erasure fences the read replica), the gate, and the settings."""

    def __init__(
        self,
        stores: UserStores,
        app_configs: AppConfigStore,
        database: Database,
        gate: Gate,
        ready: Readiness,
        config: MemoryBankConfig,
    ) -> None:
        self._jobs = stores.jobs
        self._support = stores.support
        self._profiles = stores.profiles
        self._tombstones = stores.tombstones
        self._audit = stores.audit
        self._app_configs = app_configs
        self._database = database
        self._gate = gate
        self._ready = ready
        self._config = config
        self._revision_ttl = config.ttl.revision_seconds()

    @traced("memory.purge")
    async def purge(self, scope: Mapping[str, str]) -> int:
        """Forget a scope entirely: its memories (quarantined ones and procedures too), their
        revisions, its generation jobs (payloads and results), its watermarks and its structured
        profiles (fields and their revisions). Returns rows deleted. The jobs go first, so a
        generation running for the scope finds its job gone and writes nothing."""
        checked = validate_scope(scope)
        key = scope_key(checked)
        store = await self._ready()
        jobs = await self._jobs.purge(key)
        return (
            jobs
            + await store.purge(key)
            + await store.purge(procedure_key(key))
            + await self._support.purge(procedure_key(key))
            + sum(await self._profiles.purge(key))
        )

    @traced("memory.erase_user")
    async def erase_user(
        self,
        app_name: str,
        user_id: str,
        *,
        erasure_id: uuid.UUID | None = None,
        principal: Principal | None = None,
    ) -> dict[str, int]:
        """Forget one user of one app everywhere in memory: for every scope that contains
        `{"app_name": app_name, "user_id": user_id}` (ADK's scope, and any narrower one such as
        `{..., "agent": "a1"}`), its generation jobs, memories (quarantined ones too), revisions,
        watermarks and structured profiles (fields and their revisions). Scopes without an
        `app_name` are not touched. Idempotent: a second call counts zeros; an interrupted one
        is finished by calling again. With the `erasure_id` of `begin_erasure`, a call made
        again for the same erasure (a re-run after a crash) counts what the first deleted, not
        zeros. Returns counts per kind (`MemoryStack.erase_user` also erases sessions and
        artifacts). Without an `erasure_id` (an app whose sessions live elsewhere), this call
        is the whole erasure: it tombstones the user and their memory ids first, records the
        counts and fences the read replica, as the stack's does, so no import brings them
        back. The erasure is audited when it finishes (`principal`: who asked; None: this
        process), and the user's name leaves the audit's earlier records."""
        containing = user_scope(app_name, user_id)
        if erasure_id is None:
            start = datetime.now(timezone.utc)
            erasure, _ = await self.begin_erasure(app_name, user_id, [], start)
            counts = await self.erase_user(app_name, user_id, erasure_id=erasure)
            await self.count_erasure(erasure, counts)
            await self.finish_erasure(
                erasure, app_name=app_name, user_id=user_id, principal=principal
            )
            await self._database.fence_replica(app_name, user_id)
            return counts
        store = await self._ready()

        def step(name: str) -> uuid.UUID:
            return uuid.uuid5(erasure_id, name)

        jobs = await self._jobs.erase(containing, step("generation_jobs"))
        memories, revisions, watermarks = await store.erase(containing, step("memories"))
        fields, field_revisions = await self._profiles.erase(containing, step("profiles"))
        procedures = await self._support.erase(
            containing, self._config.generation, step("procedures")
        )
        return {
            "generation_jobs": jobs,
            "memories": memories,
            "revisions": revisions,
            "watermarks": watermarks,
            "profile_fields": fields,
            "profile_revisions": field_revisions,
            **procedures,
        }

    @traced("memory.begin_erasure")
    async def begin_erasure(
        self, app_name: str, user_id: str, session_ids: Sequence[str], start_time: datetime
    ) -> tuple[uuid.UUID, dict[str, int]]:
        """Before anything of the user is deleted: tombstone them, their `session_ids` and
        every memory id they have (`memory.tombstones`: keyed hashes, no text), and open the
        erasure's record. Returns its id and the counts it holds already: an erasure of this
        user that never finished (a crash) goes on under its own record."""
        user_scope(app_name, user_id)
        await self._ready()
        return await self._tombstones.begin(app_name, user_id, session_ids, start_time)

    @traced("memory.count_erasure")
    async def count_erasure(self, erasure_id: uuid.UUID, counts: Mapping[str, int]) -> None:
        """One step's counts, kept in the erasure's record (a step counted again overwrites
        its kinds with the same counts: a re-run's steps count what the first run deleted)."""
        await self._ready()
        await self._tombstones.count(erasure_id, counts)

    @traced("memory.finish_erasure")
    async def finish_erasure(
        self,
        erasure_id: uuid.UUID,
        *,
        app_name: str | None = None,
        user_id: str | None = None,
        principal: Principal | None = None,
    ) -> None:
        """The erasure is complete: its record gets its finish time (it holds the app, the
        counts and the times, nothing that says who), and in the same transaction the
        operators' audit records it: `principal` (None: this process) erased someone of
        `app_name`, with the counts; its scope is the erasure's marker, never the user. With
        `app_name` and `user_id`, the audit's records naming the user are scrubbed again (as
        `begin_erasure` did), so one written while the erasure ran loses the name too."""
        await self._ready()
        scope = {"app_name": check_app_name(app_name)} if app_name is not None else None
        erased = user_scope(app_name, user_id) if app_name and user_id is not None else None
        record = entry("erasure", scope, None, principal, id=uuid.uuid5(erasure_id, "audit"))
        record = replace(record, scope_key=erased_key(erasure_id))
        await self._tombstones.finish(erasure_id, record, erased)

    @traced("memory.erased_among")
    async def erased_among(
        self,
        kind: Kind,
        app_name: str,
        user_id: str,
        times: Mapping[str, datetime | None],
    ) -> set[str]:
        """The tombstone rule every import follows: which of one user's session or memory ids
        (each with the time its source says it was created or last updated; None: unknown)
        an erasure removed. An id is erased when its tombstone says so, or when the user was
        erased at or after its time (an unknown time counts as before): what the user does
        after an erasure is theirs to keep."""
        user_scope(app_name, user_id)
        await self._ready()
        return await self._tombstones.erased_among(kind, app_name, user_id, times)

    @traced("memory.lift_tombstones")
    async def lift_tombstones(
        self, kind: Kind, app_name: str, user_id: str, ids: Sequence[str]
    ) -> None:
        """An operator brought these erased ids back on purpose (`allow_erased`): their
        tombstones go, so the memory generation for a restored session is allowed again."""
        user_scope(app_name, user_id)
        await self._ready()
        await self._tombstones.lift(kind, app_name, user_id, ids)

    @traced("memory.sweep_expired")
    async def sweep_expired(
        self, *, batch_size: int = 1000, progress: Callable[[int], None] | None = None
    ) -> int:
        """Delete expired memories and structured-profile fields (each with a DELETED revision
        labelled "expired") and expired revisions of both, in batches; `progress` gets the
        running count of memories and fields. Returns it. (Finished generation jobs past their
        retention: `sweep_jobs`.)"""
        store = await self._ready()

        async def step(size: int) -> tuple[int, bool]:
            memories, revisions = await store.sweep(size, self._revision_ttl)
            fields, field_revisions = await self._profiles.sweep(size, self._revision_ttl)
            full = size in (memories, revisions, fields, field_revisions)
            return memories + fields, full

        return await in_batches(step, batch_size, progress)

    @traced("memory.sweep_jobs")
    async def sweep_jobs(
        self, *, batch_size: int = 1000, progress: Callable[[int], None] | None = None
    ) -> int:
        """Delete finished generation jobs (done, and dead-lettered ones whose payload was kept
        for diagnosis) older than `config.generation.job_retention`, in batches; `progress`
        gets the running count. Returns it. Their operations are then unknown."""
        await self._ready()
        retention = self._config.generation.job_retention

        async def step(size: int) -> tuple[int, bool]:
            deleted = await self._jobs.sweep(retention, size)
            return deleted, deleted == size

        return await in_batches(step, batch_size, progress)

    @traced("memory.list_quarantined")
    async def list_quarantined(
        self, scope: Mapping[str, str] | None = None, *, limit: int = 100
    ) -> list[QuarantinedMemory]:
        """Memories the guard quarantined, newest first, with its reason: of `scope`, or of
        every scope (`None`: the operator's review queue). Never shown to a model."""
        key = scope_key(validate_scope(scope)) if scope is not None else None
        check_count("limit", limit, 1000)
        store = await self._ready()
        held = []
        for memory, labels in await store.quarantined(key, limit):
            verdict = GuardedFact(
                rule=labels.get("guard_rule", ""), reason=labels.get("guard_reason", "")
            )
            marked = memory.model_copy(update={"quarantined": True, "guard": verdict})
            held.append(QuarantinedMemory(memory=marked, rule=verdict.rule, reason=verdict.reason))
        return held

    @traced("memory.approve_quarantined")
    async def approve_quarantined(
        self,
        memory_id: str,
        scope: Mapping[str, str],
        *,
        memory_type: MemoryType = "fact",
        principal: Principal | None = None,
    ) -> Memory:
        """An operator's approval: the quarantined memory becomes live in its scope (an UPDATED
        revision labelled `guard: approved`); a procedure's with `memory_type="procedure"`.
        Audited in the same transaction (`principal`: the operator; None: this process).

        Raises:
          LookupError: no quarantined memory with this id in this scope.
          OptedOutError: the scope's user opted out (approving would remember it now).
        """
        checked = validate_scope(scope)
        await self._gate.refuse_opted_out(checked)
        store = await self._ready()
        labels = {"guard": "approved"}
        key = _kind_key(scope_key(checked), memory_type)
        memory_id = check_id(memory_id)
        record = entry("approval", checked, {"memories": 1}, principal, memory_id=memory_id)
        also = self._audit.alongside(record)
        memory = await store.release(memory_id, key, labels, self._revision_ttl, also)
        if memory is None:
            raise NotFoundError(f"No quarantined memory {memory_id} in scope {checked}.")
        return memory

    @traced("memory.reject_quarantined")
    async def reject_quarantined(
        self,
        memory_id: str,
        scope: Mapping[str, str],
        *,
        memory_type: MemoryType = "fact",
        principal: Principal | None = None,
    ) -> bool:
        """An operator's rejection: the quarantined memory is deleted (a DELETED revision
        labelled `guard_rejected`); a procedure's with `memory_type="procedure"`. False if there
        was no such quarantined memory. Audited in the same transaction (`principal`: the
        operator; None: this process)."""
        checked = validate_scope(scope)
        store = await self._ready()
        key = quarantine_key(_kind_key(scope_key(checked), memory_type))
        labels = {"reason": "guard_rejected"}
        memory_id = check_id(memory_id)
        record = entry("rejection", checked, {"memories": 1}, principal, memory_id=memory_id)
        also = self._audit.alongside(record)
        return await store.delete(key, memory_id, labels, self._revision_ttl, also) > 0

    @traced("memory.prune_memories")
    async def prune_memories(
        self,
        app_name: str,
        *,
        user_id: str | None = None,
        all_users: bool = False,
        threshold: float | None = None,
        min_age: timedelta | None = None,
        batch_size: int = 1000,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Forget what is no longer believed: delete the live memories of one user of the app
        (`user_id`: every scope containing the app and user), or of all its users
        (`all_users=True`, asked for by name), whose effective confidence (`memory.trust`) is
        below `threshold` and that were not updated or corroborated for `min_age`. The trust
        settings (these defaults: `prune_threshold`, `prune_min_age`; the half-life) are those
        of the app's latest stored configuration (the policy every worker of the app follows),
        else this service's. Each memory goes with a DELETED revision labelled
        `reason: low_confidence`. Memories of unknown confidence are never pruned, nor
        quarantined ones. In batches; `progress` gets the running count. Returns it."""
        if (user_id is None) == (not all_users):
            raise InputValidationError("Pass a user_id, or all_users=True (not both).")
        containing = (
            user_scope(app_name, user_id)
            if user_id is not None
            else {"app_name": check_app_name(app_name)}
        )
        store = await self._ready()
        stored = await self._app_configs.get(containing["app_name"])
        trust = stored.config.trust if stored is not None else self._config.trust
        threshold = check_unit(
            "threshold", trust.prune_threshold if threshold is None else threshold
        )
        min_age = trust.prune_min_age if min_age is None else min_age
        if not isinstance(min_age, timedelta) or min_age < timedelta(0):
            raise InputValidationError("min_age must be a duration of 0 or more.")
        half_life = trust.confidence_half_life

        async def step(size: int) -> tuple[int, bool]:
            deleted = await store.prune(
                containing,
                threshold=threshold or 0.0,
                min_age_seconds=min_age.total_seconds(),
                half_life_seconds=half_life.total_seconds() if half_life else None,
                batch_size=size,
                revision_ttl=self._revision_ttl,
            )
            return deleted, deleted == size

        return await in_batches(step, batch_size, progress)
