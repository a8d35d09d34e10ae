"""`adk-memory opt-out`: record that a user opted out of memory (or, with --undo, back in),
for an operator handling a request outside the app.

Owns: the command-line side of `PostgresMemoryService.set_opt_out`: checking the ids, recording
the wish, and saying what it changes. It never deletes anything (`adk-memory erase` does) and
never touches sessions or their state.
"""

from __future__ import annotations

import click

from ..memory.scope import user_scope
from .options import Target, database_options, run, user_errors
from .output import note


async def _set(target: Target, app: str, user: str, opted_out: bool) -> None:
    async with target.memory(run_worker=False) as memory:
        await memory.set_opt_out(app, user, opted_out)
        counts = {"opted_out": int(opted_out)}
        await memory.record_access("opt_out", user_scope(app, user), counts=counts)


@click.command("opt-out")
@database_options
@click.option("--app", required=True, help="The app_name of the user.")
@click.option("--user", required=True, help="The user_id.")
@click.option("--undo", is_flag=True, help="The user opts back in.")
def opt_out(target: Target, app: str, user: str, undo: bool) -> None:
    """Record that a user opted out of memory: from now on nothing is remembered for them by
    any path (tools, generation, procedures, imports; queued generations are refused when they
    run). What was remembered before stays until `adk-memory erase`. --undo opts them back in.
    An app's own opt-out state key, when it sets one, wins the next time the app's agent sees
    that user. The change is audited (`adk-memory audit list`)."""
    with user_errors():
        user_scope(app, user)
    run(_set(target, app, user, not undo))
    if undo:
        note(f"User {user!r} of app {app!r} opted back in to memory.")
    else:
        note(f"User {user!r} of app {app!r} opted out of memory: nothing more is remembered.")
