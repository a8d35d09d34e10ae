"""What an operator looks at: the scopes that have memories, a scope's generations, and
retrying one that failed for good.

Owns: `PostgresMemoryService.inspection`, the memory service's read-outs for an inspector
(`adk_memory.adk.inspector`, the CLI): listing scopes by what they contain (a loose index
scan, one probe per scope), a scope's generation jobs as `GenerationJob` summaries (status,
tries, error, how many memories changed, how many of them the guard quarantined and how many
facts it refused: never the conversation), and `retry_operation`, which names the
operation's scope, so an id alone never restarts another scope's generation. It never writes
a memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ...errors import InputValidationError
from ...telemetry import traced
from ..checks import check_count, check_id
from ..jobs import JobQueue
from ..models import GenerationJob, ScopePage
from ..scope import scope_key, validate_scope
from .core import Readiness


def _token_key(page_token: str) -> str:
    """The scope key a page token names (the previous page's last scope), checked as a scope."""
    try:
        scope = json.loads(page_token)
    except (TypeError, ValueError) as exc:
        raise InputValidationError(f"Not a page token: {page_token!r}.") from exc
    return scope_key(validate_scope(scope))


class Inspection:
    """`list_scopes`, `list_operations` and `retry_operation` (`PostgresMemoryService.
    inspection`). Built with the job queue and readiness (which hands out the memory store)."""

    def __init__(self, queue: JobQueue, ready: Readiness) -> None:
        self._jobs = queue
        self._ready = ready

    @traced("memory.list_scopes")
    async def list_scopes(
        self,
        containing: Mapping[str, str] | None = None,
        *,
        page_size: int = 100,
        page_token: str | None = None,
    ) -> ScopePage:
        """The scopes that have memories (live or not yet swept), in their canonical order, one
        page at a time: those that contain `containing` (e.g. `{"app_name": "support"}`: every
        user of the app), or every scope (None). An operator's view, never a model's. Scopes
        whose only memories are quarantined are in `list_quarantined` instead."""
        wanted = validate_scope(containing) if containing is not None else {}
        check_count("page_size", page_size, 1000)
        after = _token_key(page_token) if page_token else ""
        store = await self._ready()
        keys = await store.scopes(wanted, after, page_size + 1)
        more = len(keys) > page_size
        keys = keys[:page_size]
        return ScopePage(
            scopes=[json.loads(key) for key in keys],
            next_page_token=keys[-1] if more and keys else None,
        )

    @traced("memory.list_operations")
    async def list_operations(
        self, scope: Mapping[str, str], *, limit: int = 50
    ) -> list[GenerationJob]:
        """The scope's generations, newest first, whatever their state (finished ones until
        `sweep_jobs` deletes them)."""
        key = scope_key(validate_scope(scope))
        check_count("limit", limit, 1000)
        await self._ready()
        return [
            GenerationJob(
                id=record.id,
                scope=record.scope,
                status=record.status,
                attempts=record.attempts,
                max_attempts=record.max_attempts,
                error=record.error,
                changes=sum(e["action"] != "REJECTED" for e in record.result or []),
                quarantined=sum(bool(e.get("quarantined")) for e in record.result or []),
                rejected=sum(e["action"] == "REJECTED" for e in record.result or []),
                create_time=record.create_time,
                update_time=record.update_time,
            )
            for record in await self._jobs.of_scope(key, limit)
        ]

    @traced("memory.retry_operation")
    async def retry_operation(self, operation_id: str, scope: Mapping[str, str]) -> bool:
        """Give a generation of `scope` that failed for good (dead-lettered) a fresh set of
        tries, after fixing what killed it. False if the scope has no such dead operation."""
        key = scope_key(validate_scope(scope))
        await self._ready()
        return await self._jobs.retry_dead(check_id(operation_id), key)
