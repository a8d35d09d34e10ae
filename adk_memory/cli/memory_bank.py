"""`adk-memory memories rollback|purge`: Memory Bank's RollbackMemory and PurgeMemories for an
operator.

Owns: the two commands' options and output. `rollback` sets one memory of one scope back to a
revision's fact (`PostgresMemoryService.rollback_memory`); `purge` deletes the memories a
Memory Bank filter matches (an AIP-160 `--filter`, metadata `--filter-groups` as Memory Bank's
JSON) in one scope, or with `--all` in every scope, and is a dry run that only counts unless
`--force` (`purge_memories`). It never writes SQL.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ..errors import InputValidationError
from ..memory.models import PurgeResult
from ..memory.scope import Scope
from .memories import scope_options
from .options import Target, database_options, run, user_errors
from .output import echo_json, plural


async def _rollback(target: Target, scope: Scope, memory_id: str, revision_id: str) -> str:
    async with target.memory(run_worker=False) as service:
        memory = await service.rollback_memory(memory_id, scope, revision_id)
        return memory.fact


@click.command()
@database_options
@scope_options(across_users=False)
@click.argument("memory_id")
@click.argument("revision_id")
def rollback(target: Target, scope: Scope, memory_id: str, revision_id: str) -> None:
    """Set MEMORY_ID's fact back to what it was at REVISION_ID (one of its revisions:
    `memories revisions`). The change is an UPDATED revision labelled rolled_back_to."""
    fact = run(_rollback(target, scope, memory_id, revision_id))
    click.echo(f"{memory_id}: {fact}")


def _groups(text: str | None) -> list[Any] | None:
    """`--filter-groups`: Memory Bank's JSON (a list of `{"filters": [...]}`)."""
    if text is None:
        return None
    with user_errors():
        try:
            groups = json.loads(text)
        except ValueError as exc:
            raise InputValidationError(f"--filter-groups is not JSON: {exc}") from exc
        if not isinstance(groups, list):
            raise InputValidationError('--filter-groups is a JSON list of {"filters": [...]}.')
    return groups


async def _purge(
    target: Target, scope: Scope | None, flt: str | None, groups: list[Any] | None, force: bool
) -> PurgeResult:
    async with target.memory(run_worker=False) as service:
        return await service.purge_memories(scope, filter=flt, filter_groups=groups, force=force)


@click.command()
@database_options
@scope_options(across_users=False, every_scope=True)
@click.option(
    "--filter",
    "flt",
    metavar="EXPR",
    help="An AIP-160 filter: fact, create_time, update_time, topics, metadata.KEY, scope.KEY, "
    'e.g. \'update_time < "2025-01-01T00:00:00Z" AND topics:"USER_PREFERENCES"\'.',
)
@click.option(
    "--filter-groups",
    metavar="JSON",
    help="Metadata filter groups as Memory Bank writes them (an OR of ANDs), e.g. "
    '\'[{"filters": [{"key": "author", "value": {"stringValue": "agent 1"}}]}]\'.',
)
@click.option("--force", is_flag=True, help="Delete them (without it: count them only).")
@click.option("--json", "as_json", is_flag=True, help="The result as JSON (with the ids).")
def purge(
    target: Target,
    scope: Scope | None,
    flt: str | None,
    filter_groups: str | None,
    force: bool,
    as_json: bool,
) -> None:
    """Delete the memories a filter matches, in one scope (--app, --user, --scope) or every
    scope (--all). A dry run unless --force: it prints how many would go. Each memory purged
    keeps its history, with a DELETED revision labelled reason: purged."""
    result = run(_purge(target, scope, flt, _groups(filter_groups), force))
    if as_json:
        echo_json(result)
        return
    count = plural(result.purge_count, "memory", "memories")
    click.echo(f"{count} purged." if result.purged else f"{count} would be purged (add --force).")
