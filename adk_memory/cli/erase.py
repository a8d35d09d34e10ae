"""`adk-memory erase`: the right to be forgotten from a terminal or a script.

Owns: the command-line side of an erasure: checking the ids, asking before anything is deleted,
and printing the counts. `adk_memory.adk.erasure.erase_user` does the erasing, in its order, and
records it. It never deletes without a yes: `--yes`, or "y" answered on stdin; a no, or no
stdin at all (a script, CI), refuses at once instead of waiting for an answer nobody can give.
It has no artifact store, so it never erases artifacts: the app does (`MemoryStack.erase_user`).
"""

from __future__ import annotations

import click

from ..adk.erasure import erase_user
from ..memory.scope import user_scope
from .options import Target, database_options, run, user_errors
from .output import echo_json, note

_WHAT = (
    "sessions with their events, compaction summaries and user state; memories (quarantined ones "
    "too) with their revisions and watermarks; and generation jobs"
)
"""What an erasure deletes, for the question asked before it."""


def _confirm(app: str, user: str) -> None:
    """Ask on stdin (a terminal, or an answer piped in); no yes (a no, or no stdin at all, as in
    CI) refuses with exit 1 and deletes nothing: it never waits on a closed stdin."""
    question = f"Erase user {user!r} of app {app!r}: their {_WHAT}? This cannot be undone."
    try:
        agreed = click.confirm(question, default=False, err=True)
    except click.Abort:  # end of input: nobody answered
        click.echo(err=True)  # the error goes on a line of its own, after the question
        agreed = False
    if not agreed:
        raise click.ClickException("Not erased: answer yes, or pass --yes.")


async def _erase(target: Target, app: str, user: str) -> dict[str, int]:
    async with target.sessions() as sessions, target.memory() as memory:
        return await erase_user(
            app_name=app, user_id=user, session_service=sessions, memory_service=memory
        )


@click.command()
@database_options
@click.option("--app", required=True, help="The app_name of the user to erase.")
@click.option("--user", required=True, help="The user_id to erase.")
@click.option("--yes", "-y", is_flag=True, help="Erase without asking (scripts, CI).")
@click.option("--json", "as_json", is_flag=True, help="The counts as a JSON object.")
def erase(target: Target, app: str, user: str, yes: bool, as_json: bool) -> None:
    """Erase one user of one app: sessions, events, compaction summaries, user state, memories
    (every scope naming the user, quarantined ones too), revisions, watermarks and generation
    jobs. Prints how many of each were deleted. The erasure is recorded with its counts and
    times, never the user's id. Running it again finishes an interrupted erasure (counting what
    both runs deleted); a finished one counts zeros. The user, their sessions and memories are
    tombstoned first (keyed hashes, no text): no later import brings them back unless
    --allow-erased.

    Asks first, unless --yes; with no answer on stdin (a script, CI) and no --yes it refuses.

    Archived tool results in an artifact store (ToolResultArchivePlugin) are not erased here:
    this command has no artifact store. Erase them from the app, with
    `MemoryStack.erase_user(app, user)` or `adk_memory.adk.erasure.erase_user(...,
    artifact_service=...)`, which do all of the above too.
    """
    with user_errors():
        user_scope(app, user)  # a bad id is an error before the question, not after it
    if not yes:
        _confirm(app, user)
    counts = run(_erase(target, app, user))
    if as_json:
        echo_json(counts)
    else:
        for kind, count in counts.items():
            click.echo(f"{kind}: {count} deleted")
    note(f"Erased user {user!r} of app {app!r}; the erasure is recorded (counts only).")
