"""`adk-memory db up|url|status|stop`: the embedded PostgreSQL.

Owns: the operator's view of the embedded server (holding it up from a terminal, telling whether
it runs and where, stopping it even when a killed process left it running), and the
`--data-dir` option every command shares. It never starts a server just to look at it (`url`,
`status` and `stop` only read `postmaster.pid`), never migrates, and imports nothing heavy (no
SQLAlchemy, no ADK agents): these commands start in a fraction of a second.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

import click

from ..db import server_user
from ..db.embedded import (
    embedded_url,
    pg_ctl,
    server_data_dir,
    stop_embedded,
    wheel,
)
from ..db.owner import OWNER_ROLE, owner_url
from ..settings.variables import DATA_DIR_ENV
from .failures import user_errors
from .output import note

data_dir_option = click.option(
    "--data-dir",
    envvar=DATA_DIR_ENV,
    type=click.Path(file_okay=False),
    help=f"The embedded server's data directory (default ${DATA_DIR_ENV}, else ./.adk/pgdata).",
)

_HOLDERS_FILE = ".handle_pids.json"
"""The wheel's list of the processes holding a server; the last one to exit stops it."""

NOT_RUNNING_EXIT = 3
"""`db status`'s exit code when the server is not running (what `pg_ctl status` uses)."""


def running_server(data_dir: str | None) -> Any | None:
    """The running server's postmaster record (`pid`, `get_uri()`) for `data_dir`, or None.
    Reads `postmaster.pid`; never starts anything."""
    info = wheel().utils.PostmasterInfo.read_from_pgdata(server_data_dir(data_dir))
    return info if info is not None and info.is_running() else None


def data_shown(data_dir: str | None) -> str:
    """Where the server's data is, for people. As root, a data directory asked for where the
    server's user cannot reach is kept in the runtime location, and the line says so."""
    kept = server_data_dir(data_dir)
    if kept.parent != server_user.RUNTIME_DIR / "data":
        return str(kept)
    return (
        f"{kept}; kept there as root: {server_user.SERVER_USER} cannot reach the directory "
        "asked for, which links there"
    )


def stop_server(data_dir: str | None) -> bool:
    """Stop the server of `data_dir` whatever processes hold it (a fast shutdown: open
    connections are closed); False when none was running. The holder list is cleared too, so a
    holder that was killed (and never said it left) cannot keep the next server up forever."""
    if running_server(data_dir) is None:
        return False
    path = server_data_dir(data_dir)
    pg_ctl(["-w", "-m", "fast", "stop"], path)
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
    note(f"Embedded PostgreSQL up (data: {data_shown(data_dir)}). Ctrl-C to release it.")
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
            f"No embedded server is running for {data_shown(data_dir)}: "
            "start one with `adk-memory db up`."
        )
    click.echo(owner_url(info.get_uri()))


@db.command()
@data_dir_option
@click.pass_context
def status(ctx: click.Context, data_dir: str | None) -> None:
    """Say whether the embedded server runs, with its pid and URL (exit 3 if it does not), and
    that row-level security applies to that URL's role."""
    with user_errors():
        info = running_server(data_dir)
    where = data_shown(data_dir)
    if info is None:
        click.echo(f"not running (data: {where})")
        ctx.exit(NOT_RUNNING_EXIT)
    click.echo(f"running (pid {info.pid}, data: {where})")
    click.echo(owner_url(info.get_uri()))
    click.echo(
        f"row-level security: applies (the URL names {OWNER_ROLE}, the tables' owner, not a "
        "superuser)"
    )


@db.command()
@data_dir_option
def stop(data_dir: str | None) -> None:
    """Stop the embedded server now, even if processes still use it (e.g. one left running by a
    killed process); their connections are closed."""
    with user_errors():
        stopped = stop_server(data_dir)
    click.echo("stopped" if stopped else "not running")
