"""Generations as operations (Memory Bank's GenerateMemories, self-hosted), read back.

Owns: reading an operation back (only with its scope; its facts from the memories themselves),
waiting for one, the watermarks triggers read, the dead letters, and pushing and reading an
app's stored configuration. Submitting a generation is the service's mode's (`modes.py`); the
work of a job is `pipeline.Generator`'s. It never writes a memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from ...config import AppMemoryConfig, MemoryBankConfig
from ...errors import NotFoundError
from ...telemetry import traced
from ..app_config import AppConfigVersion, check_app_name, parse_app_config
from ..checks import check_count, check_id, check_session_id
from ..jobs import JobQueue, JobRecord
from ..models import GeneratedMemory, GenerateMemoriesOperation, GuardedFact, MemoryAction
from ..scope import scope_key, validate_scope
from ..store import MemoryStore
from ..store.app_configs import AppConfigStore
from .core import Readiness


class Operations:
    """Reading generations back (`PostgresMemoryService.operations`), and the app
    configurations they run with. Built with the job queue, the memory store (an operation's
    memories are read from it), the app configurations and readiness."""

    def __init__(
        self, queue: JobQueue, store: MemoryStore, app_configs: AppConfigStore, ready: Readiness
    ) -> None:
        self._jobs = queue
        self._store = store
        self._app_configs = app_configs
        self._ready = ready

    @traced("memory.get_operation")
    async def get_operation(
        self, operation_id: str, scope: Mapping[str, str]
    ) -> GenerateMemoriesOperation | None:
        """A generation's current state, by id and the scope it was for (None if this scope
        has no such operation: another scope's operation is never returned). A finished one
        lists the memories it changed as they are now (see `GeneratedMemory`)."""
        checked = validate_scope(scope)
        await self._ready()
        record = await self._jobs.get(check_id(operation_id), scope_key(checked))
        return None if record is None else await self._operation(record)

    async def _operation(self, record: JobRecord) -> GenerateMemoriesOperation:
        """An operation from its job: the facts of the memories it changed are read from the
        memories themselves (the job keeps ids and actions only)."""
        changes: list[tuple[str, MemoryAction, GuardedFact | None]] = []
        rejected: list[GuardedFact] = []
        for entry in record.result or []:
            if entry["action"] == "REJECTED":
                rejected.append(GuardedFact(rule=entry["rule"], reason=entry["reason"]))
                continue
            # Jobs finished before results lost their facts carry the memory itself, and
            # before verdicts were kept a quarantined change has no rule: "unknown".
            memory_id = entry.get("memory_id") or entry["memory"]["id"]
            held = (
                GuardedFact(rule=entry.get("rule", "unknown"), reason=entry.get("reason", ""))
                if entry.get("quarantined")
                else None
            )
            changes.append((memory_id, MemoryAction(entry["action"]), held))
        key = scope_key(record.scope)
        live = await self._store.get_many([c[0] for c in changes], key) if changes else {}
        return GenerateMemoriesOperation(
            id=record.id,
            scope=record.scope,
            done=record.status in ("done", "dead"),
            error=record.error if record.status == "dead" else None,
            generated_memories=[
                GeneratedMemory(
                    memory_id=memory_id,
                    action=action,
                    memory=None if held else live.get(memory_id),
                    quarantined=held is not None,
                    guard=held,
                )
                for memory_id, action, held in changes
            ],
            rejected=rejected,
        )

    @traced("memory.wait")
    async def wait(
        self, operation: GenerateMemoriesOperation, *, timeout: float | None = None
    ) -> GenerateMemoriesOperation:
        """Block until the operation is done (or `timeout` seconds pass: TimeoutError)."""

        async def poll() -> GenerateMemoriesOperation:
            delay = 0.02
            while True:
                current = await self.get_operation(operation.id, operation.scope)
                if current is None:
                    raise NotFoundError(f"No operation {operation.id}.")
                if current.done:
                    return current
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)

        return await asyncio.wait_for(poll(), timeout)

    @traced("memory.processed_until")
    async def processed_until(
        self, sources: Sequence[tuple[Mapping[str, str], str]]
    ) -> list[float | None]:
        """For each (scope, session id): the timestamp of the session's last event already turned
        into memories of that scope (its watermark), or None if none was; in the order given, in
        one query. Generation triggers use it to send only new events and to skip sessions with
        nothing new."""
        keys: list[tuple[str, str]] = []
        for scope, session_id in sources:
            keys.append((scope_key(validate_scope(scope)), check_session_id(session_id)))
        store = await self._ready()
        return await store.processed_until(keys)

    @traced("memory.push_config")
    async def push_config(
        self, app_name: str, config: MemoryBankConfig | Mapping[str, Any]
    ) -> tuple[int, bool]:
        """Store `config` as app `app_name`'s memory configuration, the one every worker
        generates its memories with (`adk-memory config push`): a `MemoryBankConfig`, an
        `AppMemoryConfig` (with the guard and redactor by name) or a mapping of either's fields.
        Returns (its version, whether this call created it): a configuration equal to the app's
        latest is that version (replay-safe); any other becomes the next. Generations enqueued
        afterwards by services that do not publish their own use it; queued ones keep theirs."""
        app = check_app_name(app_name)
        if isinstance(config, MemoryBankConfig) and not isinstance(config, AppMemoryConfig):
            config = AppMemoryConfig.of(config)
        checked = parse_app_config(config)
        await self._ready()
        return await self._app_configs.publish(app, checked)

    @traced("memory.app_config")
    async def app_config(
        self, app_name: str, version: int | None = None
    ) -> AppConfigVersion | None:
        """Version `version` of the app's stored memory configuration (None: its latest), or
        None if there is none. Raises `AppConfigError` for one this adk-memory cannot read."""
        app = check_app_name(app_name)
        if version is not None:
            check_count("version", version, 2**31 - 1)
        await self._ready()
        return await self._app_configs.get(app, version)

    @traced("memory.dead_letters")
    async def dead_letters(self, limit: int = 100) -> list[GenerateMemoriesOperation]:
        """Generations that failed for good, newest first, each with its last error."""
        await self._ready()
        return [await self._operation(r) for r in await self._jobs.dead_letters(limit)]
