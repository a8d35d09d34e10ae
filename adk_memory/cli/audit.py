"""`adk-memory audit list`: the audit of operator access, from a terminal.

Owns: the command-line side of `PostgresMemoryService.list_access`: the filters (kind, since,
principal), one bounded page per run (newest first) and the token of the next. The records
say who did what to which scope, with counts, and when; they hold no content, so neither does
the listing. It never writes a record (the audited commands and pages do).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timezone
from typing import Any

import click

from ..durations import parse_duration
from ..memory.service.audit import KINDS, AuditKind, next_page_token
from ..memory.store.audit import AuditRecord
from .options import Target, database_options, run, user_errors
from .output import echo_json, echo_table, key_values, note

_MAX_LIMIT = 1000
"""The most the memory service lists in one call."""


@click.group()
def audit() -> None:
    """The audit of operator access: inspector page views, exports, erasures, approvals and
    rejections of quarantined memories, dead-letter retries and opt-out changes."""


def _since(text: str | None) -> datetime | None:
    """`--since`: an ISO time (`2026-11-27T10:00:00+00:00`) or a duration back from now
    (`90m`, `7d`)."""
    if text is None:
        return None
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return datetime.now(timezone.utc) - parse_duration(text)
    return at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)


def _json(record: AuditRecord) -> dict[str, Any]:
    """One record as a JSON object (its time in ISO 8601, its id as text)."""
    return {
        **asdict(record),
        "id": str(record.id),
        "time": record.time.isoformat(),
    }


async def _list(
    target: Target,
    kind: AuditKind | None,
    since: datetime | None,
    principal: str | None,
    page: str | None,
    limit: int,
) -> list[AuditRecord]:
    async with target.memory(run_worker=False) as service:
        return await service.list_access(
            kind=kind, since=since, principal=principal, page_token=page, limit=limit
        )


@audit.command("list")
@database_options
@click.option("--kind", type=click.Choice(KINDS), help="Only records of this kind.")
@click.option("--since", help="Only records from this ISO time, or this long ago (90m, 7d).")
@click.option("--principal", help="Only records of this principal (local:<user> for commands).")
@click.option("--page", help="The next-page token a previous listing printed.")
@click.option("--limit", type=click.IntRange(1, _MAX_LIMIT), default=100, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="A JSON array instead of a table.")
def list_audit(
    target: Target,
    kind: AuditKind | None,
    since: str | None,
    principal: str | None,
    page: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """List audit records, newest first, one page (--limit) per run: when, who (the
    principal), what (the kind), the scope's key (`erased:<id>` once its user was erased), the
    memory a page showed, and counts. Never content."""
    with user_errors():
        after = _since(since)
    found = run(_list(target, kind, after, principal, page, limit))
    if as_json:
        echo_json([_json(r) for r in found])
    else:
        echo_table(
            ["TIME", "PRINCIPAL", "KIND", "SCOPE", "MEMORY", "COUNTS"],
            [
                [
                    r.time.isoformat(timespec="seconds"),
                    r.principal,
                    r.kind,
                    r.scope_key or "-",
                    r.memory_id or "-",
                    key_values(r.counts) or "-",
                ]
                for r in found
            ],
        )
    if not found:
        note("No audit records.")
    token = next_page_token(found, limit)
    if token is not None:
        note(f"More records: --page {token}")
