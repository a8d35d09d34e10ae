"""`adk-memory memories quarantine list|approve|reject`: an operator's review of the memories the
guard held back.

Owns: the command-line side of the quarantine (the memory service's `list_quarantined`,
`approve_quarantined` and `reject_quarantined` decide and write). Approving and rejecting name
the memory's exact scope, as every memory call does, so an id alone never releases or deletes
another user's memory; listing every scope takes the explicit `--all`. It never changes a live
memory: only quarantined ones are approved (made live) or rejected (deleted).
"""

from __future__ import annotations

import click

from ..memory.models import Memory, QuarantinedMemory
from ..memory.scope import Scope
from .memories import scope_options
from .options import Target, database_options, run
from .output import echo_json, echo_table, key_values, note, shorten

_MAX_LIMIT = 1000
"""The most the memory service lists in one call."""


@click.group()
def quarantine() -> None:
    """Review the memories the guard quarantined: list, approve, reject.

    A quarantined memory is stored but never retrieved or shown to a model until it is approved.
    """


async def _list(target: Target, scope: Scope | None, limit: int) -> list[QuarantinedMemory]:
    async with target.memory() as service:
        return await service.list_quarantined(scope, limit=limit)


@quarantine.command("list")
@database_options
@scope_options(across_users=False, every_scope=True)
@click.option("--limit", type=click.IntRange(1, _MAX_LIMIT), default=100, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="A JSON array instead of a table.")
def list_quarantined(target: Target, scope: Scope | None, limit: int, as_json: bool) -> None:
    """List quarantined memories, newest first, with the guard's rule and reason: of one scope
    (--app, --user, --scope) or, with --all, of every scope."""
    # One more than asked for says whether there are more, without a second query.
    found = run(_list(target, scope, min(limit + 1, _MAX_LIMIT)))
    more = len(found) > limit
    found = found[:limit]
    if as_json:
        echo_json(found)
    else:
        echo_table(
            ["ID", "SCOPE", "RULE", "REASON", "FACT"],
            [
                [
                    q.memory.id,
                    key_values(q.memory.scope),
                    q.rule or "-",
                    shorten(q.reason, 50) or "-",
                    shorten(q.memory.fact),
                ]
                for q in found
            ],
        )
    if not found:
        note("No quarantined memories.")
    if more:
        note(f"More than {limit} quarantined memories: raise --limit.")


async def _approve(target: Target, memory_id: str, scope: Scope) -> Memory:
    async with target.memory() as service:
        return await service.approve_quarantined(memory_id, scope)


@quarantine.command()
@database_options
@scope_options(across_users=False)
@click.argument("memory_id")
def approve(target: Target, scope: Scope, memory_id: str) -> None:
    """Approve a quarantined memory of the scope: it becomes live (retrieved and shown to the
    agent), with an UPDATED revision labelled `guard=approved`."""
    memory = run(_approve(target, memory_id, scope))  # NotFoundError: one Error: line
    click.echo(f"approved {memory.id}")


async def _reject(target: Target, memory_id: str, scope: Scope) -> bool:
    async with target.memory() as service:
        return await service.reject_quarantined(memory_id, scope)


@quarantine.command()
@database_options
@scope_options(across_users=False)
@click.argument("memory_id")
def reject(target: Target, scope: Scope, memory_id: str) -> None:
    """Reject a quarantined memory of the scope: it is deleted, with a DELETED revision labelled
    `reason=guard_rejected` (the revisions keep its history until they expire)."""
    if not run(_reject(target, memory_id, scope)):
        raise click.ClickException(f"No quarantined memory {memory_id} in scope {scope}.")
    click.echo(f"rejected {memory_id}")
