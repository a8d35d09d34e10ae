"""`adk-memory memories list|show|search|revisions|export`: an operator's read-only view of
memories (`memories rollback` and `memories purge`, which write, are `memory_bank.py`'s).

Owns: the scope options (`--app`, `--user`, `--scope KEY=VALUE`) and how a listing is bounded
by them. A scope is matched exactly, as the memory service matches it, so `--app A --user U`
shows that user's memories and nobody else's; reading across users takes the explicit
`--all-users` (`--app` alone is a usage error saying so, not an empty listing, and so is
`--user` alone: memories are kept per app). `search` ranks a scope's memories for a query as
the agent's own search does. It never
writes: no command here creates, changes or deletes a memory (`memories import` and `memories
reindex` live in `ingest.py`, `memories prune` in `prune.py`). A memory the guard quarantined is
not live, so `list` and `export` leave it out unless asked (`--include-quarantined`), and then
mark it (a STATUS column, `"quarantined": true`); its review queue is `memories quarantine`.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from typing import IO, Any

import click

from ..memory.checks import MAX_TOP_K
from ..memory.embeddings import GeminiEmbedder
from ..memory.models import Memory, MemoryFilter, MemoryRevision, RetrievedMemory
from ..memory.scope import Scope, validate_scope
from ..memory.service import PostgresMemoryService
from .options import (
    Overrides,
    Target,
    database_options,
    embedding_model_option,
    run,
    user_errors,
    with_options,
)
from .output import echo_json, echo_table, key_values, note, plural, shorten, to_json

_PAGE = 1000


def _pair(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{value!r} is not KEY=VALUE", ctx=ctx, param=param)
        pairs[key] = item
    return pairs


def _scope(app: str | None, user: str | None, extra: dict[str, str]) -> Scope:
    """The scope the options name; an InputValidationError (exit 1) if it is not a valid one."""
    named = {"app_name": app, "user_id": user}
    scope = {k: v for k, v in named.items() if v is not None}
    for key in extra:
        if key in scope:
            raise click.UsageError(f"Use --{'app' if key == 'app_name' else 'user'} for {key}.")
    with user_errors():
        return validate_scope({**scope, **extra})


def scope_options(
    *, across_users: bool, every_scope: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--app`, `--user`, `--scope` (and `--all-users` where reading across users makes sense).
    The command receives `scope` (exact) or, with `--all-users`, `within` (keys every listed
    memory's scope must have, user aside). `every_scope` adds `--all`: `scope=None`, every scope
    of the database, asked for explicitly (an operator's review queue; None never means all by
    default)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def wrapper(
            *args: Any,
            app: str | None,
            user: str | None,
            extra: dict[str, str],
            all_users: bool = False,
            all_scopes: bool = False,
            **kwargs: Any,
        ) -> Any:
            if all_scopes:
                if app is not None or user is not None or extra:
                    raise click.UsageError("--all takes no --app, --user or --scope.")
                return command(*args, scope=None, **kwargs)
            if user is not None and app is None and not extra:
                # The exact scope {user_id: U} is not where an agent keeps U's memories: each
                # app keeps its own, so listing it would say "No memories." while U has some.
                raise click.UsageError(
                    "--user without --app: memories are kept per app; add --app APP."
                )
            if not across_users:
                return command(*args, scope=_scope(app, user, extra), **kwargs)
            if not all_users:
                if app is not None and user is None:
                    # The exact scope {app_name: A} is rarely what is meant, and listing it
                    # would say "No memories." while the app's users have some.
                    raise click.UsageError(
                        "--app without --user: add --user USER for one user's memories, or "
                        "--all-users for every user of the app."
                    )
                return command(*args, scope=_scope(app, user, extra), within=None, **kwargs)
            if app is None or user is not None:
                raise click.UsageError("--all-users needs --app and no --user.")
            return command(*args, scope=None, within=_scope(app, None, extra), **kwargs)

        options = [
            click.option("--app", help="The app_name of the scope."),
            click.option("--user", help="The user_id of the scope."),
            click.option(
                "--scope",
                "extra",
                multiple=True,
                callback=_pair,
                metavar="KEY=VALUE",
                help="Another key of the scope (repeatable), for scopes beyond app and user.",
            ),
        ]
        if across_users:
            options.append(
                click.option(
                    "--all-users",
                    is_flag=True,
                    help="Every scope of --app (an operator's view across users).",
                )
            )
        if every_scope:
            options.append(
                click.option("--all", "all_scopes", is_flag=True, help="Every scope of every app.")
            )
        return with_options(wrapper, options)

    return decorate


async def _memories(
    service: PostgresMemoryService,
    scope: Scope | None,
    within: Scope | None,
    flt: MemoryFilter | None,
    quarantined: bool = False,
) -> AsyncIterator[Memory]:
    """Every live memory of `scope` (exactly) or, with `within`, of every scope containing those
    keys and values (and with `quarantined` the quarantined ones, marked); newest update
    first."""
    token: str | None = None
    while True:
        page = await service.list_memories(
            scope, filter=flt, page_size=_PAGE, page_token=token, include_quarantined=quarantined
        )
        for memory in page.memories:
            if within is None or within.items() <= memory.scope.items():
                yield memory
        if page.next_page_token is None:
            return
        token = page.next_page_token


_INCLUDE_QUARANTINED = click.option(
    "--include-quarantined",
    is_flag=True,
    help="The memories the guard holds back too, marked (left out by default: not live).",
)


@click.group()
def memories() -> None:
    """Read memories (list, show, search, revisions, export), import them (import), rebuild their
    full-text index (reindex); review quarantined ones (quarantine); forget those no longer
    believed (prune); roll one back to a revision (rollback); delete those a filter matches
    (purge)."""


async def _list(
    target: Target,
    scope: Scope | None,
    within: Scope | None,
    flt: MemoryFilter | None,
    limit: int,
    quarantined: bool,
) -> tuple[list[Memory], bool]:
    found: list[Memory] = []
    async with target.memory() as service:
        async for memory in _memories(service, scope, within, flt, quarantined):
            if len(found) == limit:
                return found, True
            found.append(memory)
    return found, False


@memories.command("list")
@database_options
@scope_options(across_users=True)
@click.option("--topic", "topics", multiple=True, help="Only memories with one of these topics.")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="A JSON array instead of a table.")
@_INCLUDE_QUARANTINED
def list_memories(
    target: Target,
    scope: Scope | None,
    within: Scope | None,
    topics: tuple[str, ...],
    limit: int,
    as_json: bool,
    include_quarantined: bool,
) -> None:
    """List a scope's live memories, newest first."""
    flt = MemoryFilter(topics=list(topics)) if topics else None
    found, more = run(_list(target, scope, within, flt, limit, include_quarantined))
    if as_json:
        echo_json(found)
    else:
        headers = ["ID", "UPDATED", "TOPICS", "FACT"]
        rows = [
            [m.id, f"{m.update_time:%Y-%m-%d %H:%M}", ",".join(m.topics), shorten(m.fact)]
            for m in found
        ]
        if include_quarantined:
            headers.insert(1, "STATUS")
            for row, memory in zip(rows, found, strict=True):
                row.insert(1, "quarantined" if memory.quarantined else "live")
        if within is not None:
            headers.insert(1, "USER")
            for row, memory in zip(rows, found, strict=True):
                row.insert(1, memory.scope.get("user_id", "-"))
        echo_table(headers, rows)
    if not found:
        note("No memories.")
    if more:
        note(f"More than {limit} memories: raise --limit, or use `adk-memory memories export`.")


async def _show(target: Target, memory_id: str, scope: Scope) -> Memory | None:
    async with target.memory() as service:
        return await service.get_memory(memory_id, scope)


@memories.command()
@database_options
@scope_options(across_users=False)
@click.argument("memory_id")
def show(target: Target, scope: Scope, memory_id: str) -> None:
    """Show one memory of the scope with all its fields, as JSON."""
    memory = run(_show(target, memory_id, scope))
    if memory is None:
        raise click.ClickException(f"No memory {memory_id} in scope {scope}.")
    click.echo(memory.model_dump_json(indent=2))


async def _search(
    target: Target, scope: Scope, query: str, limit: int, embedding_model: str | None
) -> list[RetrievedMemory]:
    """The `limit` best of the scope for `query`, embedded as the agent's memory service
    embeds (the same `--embedding-model`), else by full text alone."""
    overrides = click.get_current_context().find_object(Overrides) or Overrides()
    embedder = overrides.embedder
    if embedder is None and embedding_model is not None:
        embedder = GeminiEmbedder(embedding_model)
    async with target.memory(embedder=embedder) as service:
        return await service.retrieve_memories(scope, search_query=query, top_k=limit)


@memories.command()
@database_options
@scope_options(across_users=False)
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, MAX_TOP_K), default=10, show_default=True)
@embedding_model_option
@click.option("--json", "as_json", is_flag=True, help="A JSON array instead of a table.")
def search(
    target: Target,
    scope: Scope,
    query: str,
    limit: int,
    embedding_model: str | None,
    as_json: bool,
) -> None:
    """Search a scope's memories for QUERY, best first, as the agent's search ranks them."""
    found = run(_search(target, scope, query, limit, embedding_model))
    if as_json:
        echo_json(found)
    else:
        echo_table(
            ["SCORE", "ID", "UPDATED", "TOPICS", "FACT"],
            [
                [
                    f"{r.score:.3f}",
                    r.memory.id,
                    f"{r.memory.update_time:%Y-%m-%d %H:%M}",
                    ",".join(r.memory.topics),
                    shorten(r.memory.fact),
                ]
                for r in found
            ],
        )
    if not found:
        note("No memories match.")


async def _revisions(
    target: Target, memory_id: str, scope: Scope, labels: dict[str, str]
) -> list[MemoryRevision]:
    async with target.memory() as service:
        return await service.list_revisions(memory_id, scope, labels=labels)


@memories.command()
@database_options
@scope_options(across_users=False)
@click.argument("memory_id")
@click.option(
    "--label",
    "labels",
    multiple=True,
    callback=_pair,
    metavar="KEY=VALUE",
    help="Only revisions with this label (repeatable: all of them).",
)
@click.option("--json", "as_json", is_flag=True, help="A JSON array instead of a table.")
def revisions(
    target: Target, scope: Scope, memory_id: str, labels: dict[str, str], as_json: bool
) -> None:
    """A memory's history, oldest first (kept after the memory is deleted); each revision's id
    is what `memories rollback` takes."""
    history = run(_revisions(target, memory_id, scope, labels))
    if not history:
        which = f" labelled {key_values(labels)}" if labels else ""
        raise click.ClickException(f"No revisions{which} of memory {memory_id} in scope {scope}.")
    if as_json:
        echo_json(history)
        return
    echo_table(
        ["TIME", "REVISION", "ACTION", "LABELS", "FACT"],
        [
            [
                f"{r.create_time:%Y-%m-%d %H:%M:%S}",
                r.id,
                r.action.value,
                key_values(r.labels),
                shorten(r.fact or ""),
            ]
            for r in history
        ],
    )


async def _export(
    target: Target,
    scope: Scope | None,
    within: Scope | None,
    with_revisions: bool,
    out: IO[str],
    quarantined: bool,
) -> int:
    count = 0
    async with target.memory() as service:
        async for memory in _memories(service, scope, within, None, quarantined):
            record: dict[str, Any] = memory.model_dump(mode="json")
            if with_revisions:
                history = await service.list_revisions(memory.id, memory.scope)
                record["revisions"] = [r.model_dump(mode="json") for r in history]
            out.write(to_json(record) + "\n")
            count += 1
        await service.record_access("export", scope or within, counts={"memories": count})
    return count


@memories.command()
@database_options
@scope_options(across_users=True)
@click.option("--revisions", "with_revisions", is_flag=True, help="Add each memory's history.")
@click.option(
    "--output",
    "-o",
    type=click.File("w", encoding="utf-8", lazy=True),
    default="-",
    help="Write to this file instead of stdout.",
)
@_INCLUDE_QUARANTINED
def export(
    target: Target,
    scope: Scope | None,
    within: Scope | None,
    with_revisions: bool,
    output: IO[str],
    include_quarantined: bool,
) -> None:
    """Export a scope's (or with --all-users an app's) live memories as JSON lines (with
    --include-quarantined the held ones too, each `"quarantined": true`). The export is
    audited (`adk-memory audit list`): this process's user, the scope, the count."""
    count = run(_export(target, scope, within, with_revisions, output, include_quarantined))
    note(f"Exported {plural(count, 'memory', 'memories')}.")
