"""`adk-memory memories prune`: forget the memories no longer believed.

Owns: the command's options and its report. The scope is one user of one app (`--app A --user
U`) or, asked for by name, every user of it (`--app A --all-users`): never every app, and never
an app's users by omission. The rule and its defaults are the app's stored trust settings
(`PostgresMemoryService.prune_memories`); it never writes SQL.
"""

from __future__ import annotations

from datetime import timedelta

import click

from ..memory.service import PostgresMemoryService
from .options import DURATION, Target, database_options, run, user_errors
from .output import plural, running_count


async def _prune(
    service: PostgresMemoryService,
    app: str,
    user: str | None,
    threshold: float | None,
    min_age: timedelta | None,
    batch_size: int,
) -> int:
    with running_count("memories pruned") as progress:
        async with service:
            return await service.prune_memories(
                app,
                user_id=user,
                all_users=user is None,
                threshold=threshold,
                min_age=min_age,
                batch_size=batch_size,
                progress=progress,
            )


@click.command()
@database_options
@click.option("--app", required=True, help="The app whose memories are pruned.")
@click.option("--user", help="Prune this user's memories only.")
@click.option("--all-users", is_flag=True, help="Prune the memories of every user of --app.")
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    help="Prune below this effective confidence (default: the app's prune_threshold).",
)
@click.option(
    "--min-age",
    type=DURATION,
    help="Only memories not updated or corroborated for this long, e.g. 30d "
    "(default: the app's prune_min_age).",
)
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=1000, show_default=True)
def prune(
    target: Target,
    app: str,
    user: str | None,
    all_users: bool,
    threshold: float | None,
    min_age: timedelta | None,
    batch_size: int,
) -> None:
    """Delete the memories whose effective confidence (decayed since they were last updated or
    corroborated) is below a threshold and that are older than a minimum age, each with a
    revision labelled `low_confidence`. Memories of unknown confidence are kept."""
    if (user is None) == (not all_users):
        raise click.UsageError("Pass --user USER, or --all-users for every user of --app.")
    service = target.memory(run_worker=False)
    with user_errors():
        count = run(_prune(service, app, user, threshold, min_age, batch_size))
    click.echo(f"{plural(count, 'memory', 'memories')} pruned")
