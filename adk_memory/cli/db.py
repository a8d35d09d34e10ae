"""`adk-memory db up|url|status|stop` (the embedded PostgreSQL) and `adk-memory migrate`.

Owns: the operator's view of the embedded server (holding it up from a terminal, telling whether
it runs and where, stopping it even when a killed process left it running) and the migration
command, the only command that changes a schema. It never starts a server just to look at it
(`url`, `status` and `stop` only read `postmaster.pid`), and never migrates on its own.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
import click

from ..db.embedded import (
    SERVER_USER,
    embedded_url,
    resolve_data_dir,
    running_as_root,
    stop_embedded,
    wheel,
)
from ..db.migrations import MIGRATIONS, current_version
from ..db.migrations import migrate as migrate_component
from ..db.vectors import VECTOR_MAX_DIMENSIONS, migrate_vectors, vector_state
from ..memory.embeddings import GeminiEmbedder
from .options import (
    Overrides,
    Target,
    data_dir_option,
    database_options,
    embedding_model_option,
    run,
    user_errors,
)
from .output import echo_table, note

_HOLDERS_FILE = ".handle_pids.json"
"""The wheel's list of the processes holding a server; the last one to exit stops it."""

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
    wheel().pg_ctl(
        ["-w", "-m", "fast", "stop"], pgdata=path, user=SERVER_USER if running_as_root() else None
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
    command: str = "adk-memory migrate"
    """What brings it up to date."""
    detail: str = ""
    """More on its state (the vectors' dimension and index strategy, what they lack)."""
    leftovers: bool = False
    """Whether another index strategy's column or index is still there (vectors only)."""

    @property
    def behind(self) -> bool:
        return self.after < self.latest or self.leftovers


async def _vectors(
    conn: asyncpg.Connection, schema: str, dimensions: int | None, apply: bool
) -> ComponentVersion | None:
    """The vector column and index, for `dimensions` or else the dimension the stored vectors
    have (so a plain `migrate` upgrades an existing schema's index strategy); None when neither
    is known."""
    before = await vector_state(conn, schema, dimensions)
    if before is None:
        return None
    after = await migrate_vectors(conn, schema, before.dimensions) if apply else before
    detail = f"{after.dimensions} dims, {after.strategy} index"
    if after.pending:
        needs = ", ".join([*after.missing, *(f"removing {x}" for x in after.leftovers)])
        detail += f"; needs {needs}"
    if after.interrupted:
        detail += f"; resumes the interrupted {', '.join(after.interrupted)}"
    return ComponentVersion(
        "vectors",
        before.done,
        after.done,
        len(after.steps),
        command=f"adk-memory migrate --embedding-dimensions {after.dimensions}",
        detail=detail,
        leftovers=bool(after.retired),
    )


async def _migrate(
    target: Target, components: Sequence[str], apply: bool, dimensions: int | None
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
            vectors = (
                await _vectors(conn, target.schema, dimensions, apply)
                if "memory" in components
                else None
            )
    finally:
        await database.close()
    if vectors is not None:
        versions.append(vectors)
    elif "memory" in components:
        note(
            "vectors: no embedding dimension given and none stored yet; pass "
            "--embedding-dimensions (or --embedding-model) to prepare them now."
        )
    return versions


def _state(version: ComponentVersion) -> str:
    if version.after > version.latest:
        state = "newer than this adk-memory: upgrade adk-memory"
    elif version.behind:
        state = f"behind: run `{version.command}`"
    elif version.before == version.after:
        state = "up to date"
    else:
        state = f"migrated from {version.before}"
    return f"{state} ({version.detail})" if version.detail else state


def _dimensions(embedding_model: str | None, embedding_dimensions: int | None) -> int | None:
    """The embedding dimension the options give: `--embedding-dimensions`, else the embedder's
    (the test hook's, or `--embedding-model`'s default size); None without either."""
    if embedding_dimensions is not None:
        return embedding_dimensions
    overrides = click.get_current_context().find_object(Overrides)
    if overrides is not None and overrides.embedder is not None:
        return overrides.embedder.dimensions
    if embedding_model is not None:
        return GeminiEmbedder(embedding_model).dimensions
    return None


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
@embedding_model_option
@click.option(
    "--embedding-dimensions",
    type=click.IntRange(1, VECTOR_MAX_DIMENSIONS),
    metavar="N",
    help=(
        "Prepare (with --check: check) the vector column and index for embeddings of N "
        "dimensions (default: --embedding-model's size; else the size the stored vectors have)."
    ),
)
def migrate(
    target: Target,
    check: bool,
    components: tuple[str, ...],
    embedding_model: str | None,
    embedding_dimensions: int | None,
) -> None:
    """Create or upgrade the tables, and the vector column and index.

    Each component migrates in one transaction, exactly once however many processes run this at
    the same time; the versions are printed. The vectors' steps depend on the embedding
    dimension: they run when it is known (an option, or the stored vectors'), each index built
    without blocking writes, and an interrupted build is resumed. Agents' services migrate on
    first use by default, but every other `adk-memory` command only checks, so run this first
    on a new database."""
    chosen = components or tuple(MIGRATIONS)
    dimensions = _dimensions(embedding_model, embedding_dimensions)
    versions = run(_migrate(target, chosen, not check, dimensions))
    echo_table(
        ["COMPONENT", "VERSION", "LATEST", "STATE"],
        [[v.component, str(v.after), str(v.latest), _state(v)] for v in versions],
    )
    if check and any(v.behind or v.after > v.latest for v in versions):
        raise click.ClickException(f"Schema {target.schema!r} is not current.")
