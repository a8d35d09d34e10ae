"""The audit of operator access: what is recorded, and who did it.

Owns: `PostgresMemoryService.audit`: the one function every operator surface records through
(`record_access`: the inspector's page views and exports, the commands' exports, opt-out
changes and dead-letter retries), the records a write makes with itself (`entry`: erasures,
quarantine approvals and rejections, which `Privacy` adds in the write's own transaction),
the listing (`list_access`), the kinds, and the principal's name: an operator's subject, or
the process's own (`local:<OS user>`) for a command or a call with no principal. A record is
who, what kind, which scope (its canonical key) and counts: never content.

It never decides who may do what (the front ends' identity and policy do) and never writes
SQL (`store.audit` does).
"""

from __future__ import annotations

import os
import pwd
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Literal, Protocol, get_args

from ..._json import sanitise_text
from ...errors import InputValidationError
from ...telemetry import traced
from ..checks import check_count, check_id, check_time
from ..scope import scope_key, validate_scope
from ..store.audit import AuditEntry, AuditRecord, AuditStore
from .core import Readiness

AuditKind = Literal[
    "page_view", "export", "erasure", "approval", "rejection", "dead_letter_retry", "opt_out"
]
"""What an operator did: read a user's page or memory (`page_view`), exported memories
(`export`), erased a user (`erasure`), approved or rejected a quarantined fact (`approval`,
`rejection`), retried a dead letter (`dead_letter_retry`), changed a user's opt-out
(`opt_out`)."""

KINDS: tuple[str, ...] = get_args(AuditKind)


class Principal(Protocol):
    """Who a request is from, as the front ends' identity resolver names them (only the
    subject is recorded)."""

    @property
    def subject(self) -> str: ...


def process_principal() -> str:
    """The process's own identity, for a command or a call without a principal: the OS user
    it runs as (its uid when the system has no name for it)."""
    uid = os.getuid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = str(uid)
    return f"local:{name}"


def principal_name(principal: Principal | None) -> str:
    """What a record says about who: the principal's subject (as PostgreSQL stores text: a NUL
    or a lone surrogate in a token's claim replaced, never failing the audited action), else
    the process's identity."""
    if principal is None:
        return process_principal()
    subject = principal.subject
    if not isinstance(subject, str) or not subject:
        raise InputValidationError("A principal's subject must be a non-empty string.")
    return sanitise_text(subject)


def entry(
    kind: AuditKind,
    scope: Mapping[str, str] | None,
    counts: Mapping[str, int] | None,
    principal: Principal | None,
    *,
    id: uuid.UUID | None = None,
    memory_id: str | None = None,
) -> AuditEntry:
    """A record to add: checked (a known kind, a valid scope, counts of 0 or more); its id
    chosen here, before any attempt, so a replayed write adds nothing."""
    if kind not in KINDS:
        raise InputValidationError(f"Unknown audit kind {kind!r}; one of {', '.join(KINDS)}.")
    checked = validate_scope(scope) if scope is not None else None
    tally = dict(counts or {})
    for name, count in tally.items():
        if not isinstance(name, str) or not isinstance(count, int) or count < 0:
            raise InputValidationError("Audit counts are names with whole numbers of 0 or more.")
    return AuditEntry(
        id=id or uuid.uuid4(),
        principal=principal_name(principal),
        kind=kind,
        app_name=checked.get("app_name") if checked is not None else None,
        user_id=checked.get("user_id") if checked is not None else None,
        scope_key=scope_key(checked) if checked is not None else None,
        memory_id=check_id(memory_id) if memory_id is not None else None,
        counts=tally,
    )


class Audit:
    """`record_access` and `list_access` (`PostgresMemoryService.audit`)."""

    def __init__(self, store: AuditStore, ready: Readiness) -> None:
        self._store = store
        self._ready = ready

    @traced("memory.record_access")
    async def record_access(
        self,
        kind: AuditKind,
        scope: Mapping[str, str] | None = None,
        *,
        counts: Mapping[str, int] | None = None,
        principal: Principal | None = None,
        memory_id: str | None = None,
    ) -> None:
        """Record that `principal` (None: this process) did `kind` to `scope` (None: no one
        scope, e.g. an export of every user), with `counts` (e.g. `{"memories": 12}`) and the
        one memory it was about (`memory_id`, a page showing one). Called after a read; a
        write records itself in its own transaction. Never pass content."""
        record = entry(kind, scope, counts, principal, memory_id=memory_id)
        await self._ready()
        await self._store.add(record)

    @traced("memory.list_access")
    async def list_access(
        self,
        *,
        kind: AuditKind | None = None,
        since: datetime | None = None,
        principal: str | None = None,
        page_token: str | None = None,
        limit: int = 50,
    ) -> list[AuditRecord]:
        """Audit records newest first: of one `kind`, from `since`, by one `principal` (a
        subject, or `local:<user>`); `page_token`: `next_page_token` of the page before (None:
        the first page). At most `limit` (<= 1000) per call: one bounded query."""
        if kind is not None and kind not in KINDS:
            raise InputValidationError(f"Unknown audit kind {kind!r}; one of {', '.join(KINDS)}.")
        check_count("limit", limit, 1000)
        since = check_time("since", since)
        if principal is not None and not isinstance(principal, str):
            raise InputValidationError("principal must be a string (a subject, or local:<user>).")
        principal = None if principal is None else sanitise_text(principal)  # as it was stored
        before = _parse_token(page_token) if page_token else None
        await self._ready()
        return await self._store.page(
            kind=kind, since=since, principal=principal, before=before, limit=limit
        )


def next_page_token(records: list[AuditRecord], limit: int) -> str | None:
    """The token of the page after `records` (a full page of `limit`), else None: the time and
    id of its last record, the keyset the next query starts below."""
    if len(records) < limit or not records:
        return None
    last = records[-1]
    return f"{last.time.isoformat()}_{last.id}"


def _parse_token(token: str) -> tuple[datetime, uuid.UUID]:
    """A page token back into its keyset (a bad one is the caller's error, said plainly)."""
    at, _, last = token.rpartition("_")
    try:
        return datetime.fromisoformat(at), uuid.UUID(last)
    except ValueError as exc:
        raise InputValidationError(f"Not an audit page token: {token!r}.") from exc
