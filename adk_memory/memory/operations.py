"""Memory generation as operations: Memory Bank's GenerateMemories, self-hosted.

Owns: turning one source (a session, contents, or pre-extracted facts) into a durable job (its
payload redacted, direct facts guarded first, the app configuration version it runs with
recorded), pushing and reading an app's stored configuration, reading an operation back (only
with its scope; its facts from the memories themselves), waiting for one, withdrawing a session
as a source, the watermarks triggers read, and the dead letters. The work of a job is
`generator.Generator`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.session import Session
from google.genai import types

from ..config import AppMemoryConfig, MemoryBankConfig
from ..errors import InputValidationError, NotFoundError
from ..telemetry import traced
from .app_config import AppConfigVersion, check_app_name, parse_app_config
from .checks import (
    MAX_DIRECT_FACTS,
    check_count,
    check_id,
    check_mapping,
    check_session_id,
    check_topics,
)
from .core import MemoryServiceCore
from .jobs import JobRecord
from .models import (
    GeneratedMemory,
    GenerateMemoriesOperation,
    GuardedFact,
    MemoryAction,
    SourceType,
)
from .pipeline import contents_payload, facts_payload, session_payload
from .scope import scope_key, user_scope, validate_scope
from .trust import fact_source


class GenerationOperations(MemoryServiceCore):
    """Generation and its operations, for `PostgresMemoryService`."""

    @traced("memory.generate_memories")
    async def generate_memories(
        self,
        *,
        session: Session | None = None,
        start_time: datetime | None = None,
        end_time: datetime | None = None,
        contents: Sequence[Event | types.Content] | None = None,
        facts: Sequence[str] | None = None,
        topic: str | None = None,
        scope: Mapping[str, str] | None = None,
        session_id: str | None = None,
        disable_consolidation: bool = False,
        wait_for_completion: bool = False,
        metadata: Mapping[str, Any] | None = None,
        revision_labels: Mapping[str, str] | None = None,
        source_type: SourceType = SourceType.BOOTSTRAPPED,
    ) -> GenerateMemoriesOperation:
        """Turn one source into memories of `scope`, in the background (Memory Bank's
        GenerateMemories). Exactly one source: a `session` (optionally only its events between
        `start_time` and `end_time`; only events not processed before are used), direct
        `contents` (events or `types.Content`, a delta; images, audio and files reach the model),
        or up to 5 pre-extracted `facts` to consolidate (with the memory `topic` they are
        about, if known: extraction gives the others theirs). `scope` defaults to the session's
        user. Returns at once with an operation to poll, unless `wait_for_completion`.
        `source_type`: where direct `facts` come from, for the trust rule (`memory.trust`;
        the application's own data by default); a conversation's facts get theirs from
        extraction. A session an erasure removed is refused (`ErasedError`)."""
        if self.llm is None:
            raise InputValidationError("Memory generation needs a model: pass llm=... .")
        if sum(source is not None for source in (session, contents, facts)) != 1:
            raise InputValidationError("Pass exactly one of session, contents or facts.")
        if topic is not None:
            if facts is None:
                raise InputValidationError("A topic goes with direct facts only.")
            [topic] = check_topics([topic]) or [""]
        if scope is None:
            if session is None:
                raise InputValidationError("A scope is required unless a session is given.")
            scope = user_scope(session.app_name, session.user_id)
        checked = validate_scope(scope)
        if session_id is not None:
            session_id = check_session_id(session_id)
        own = session is not None and user_scope(session.app_name, session.user_id).items() <= (
            checked.items()
        )
        await self._refuse_opted_out(checked, session.state if own and session else None)
        options = {
            "disable_consolidation": disable_consolidation,
            "metadata": self._screen.json(check_mapping("metadata", metadata) or {}),
            "revision_labels": {str(k): str(v) for k, v in (revision_labels or {}).items()},
        }
        if session is not None:
            kept = await self._refuse_erased_session(
                session.app_name, session.user_id, session.id, session.events
            )
            events = [
                e
                for e in kept
                if (start_time is None or e.timestamp >= start_time.timestamp())
                and (end_time is None or e.timestamp < end_time.timestamp())
            ]
            payload = session_payload(session.id, events, options, self._screen)
        elif contents is not None:
            given = list(contents)
            if session_id is not None and "user_id" in checked and "app_name" in checked:
                given = await self._refuse_erased_session(
                    checked["app_name"], checked["user_id"], session_id, given
                )
            payload = contents_payload(given, session_id, options, self._screen)
        else:
            if not 1 <= len(facts or ()) <= MAX_DIRECT_FACTS:
                raise InputValidationError(f"Pass 1 to {MAX_DIRECT_FACTS} facts.")
            source = "tool" if "tool" in options["metadata"] else "api"
            try:
                kind = fact_source(SourceType(source_type))
            except ValueError as exc:
                raise InputValidationError(f"Unknown source_type {source_type!r}.") from exc
            screened = await self._screen_all(facts or (), checked, source, direct=True)
            payload = facts_payload([s.fact for s in screened], topic or "", options, kind)
        await self._ready()
        job_id = await self._jobs.enqueue(
            scope_key(checked),
            checked,
            payload,
            self.config.generation.max_attempts,
            config_version=await self._config_version(checked),
        )
        if self._run_worker:
            self.worker.start()
        operation = GenerateMemoriesOperation(id=job_id, scope=checked)
        return await self.wait(operation) if wait_for_completion else operation

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

    @traced("memory.revoke_source")
    async def revoke_source(
        self, session_id: str, scope: Mapping[str, str]
    ) -> list[GenerateMemoriesOperation]:
        """Withdraw a session as a source: every memory of `scope` derived from it, even in
        part, is deleted (its revision labelled `source_revoked`), and what its other sources
        said (their extracted facts, kept in the revisions) is generated again. Returns those
        regenerations; a memory with no other source is simply gone."""
        checked = validate_scope(scope)
        session_id = check_session_id(session_id)
        store = await self._ready()
        key = scope_key(checked)
        derived = await store.derived_from(key, session_id)
        labels = {"reason": "source_revoked", "session_id": session_id}
        remaining: list[str] = []
        for memory_id, other_facts in derived:
            await store.delete(key, memory_id, labels, self._revision_ttl)
            remaining.extend(f for f in other_facts if f not in remaining)
        if not remaining or self.llm is None:
            return []
        return [
            await self.generate_memories(
                facts=remaining[i : i + MAX_DIRECT_FACTS],
                scope=checked,
                revision_labels={"reason": "regenerated_after_revocation"},
                source_type=SourceType.IMPLICIT,  # what remains was said, not bootstrapped
            )
            for i in range(0, len(remaining), MAX_DIRECT_FACTS)
        ]

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
