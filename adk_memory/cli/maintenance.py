"""`adk-memory sweep`: the job a deployment runs beside its agents (its worker is `worker.py`'s).

Owns: the command-line side of the TTL sweeps (the services' `sweep_expired_sessions`,
`sweep_expired` and `sweep_jobs` do the deleting). It never deletes anything the services would
not: expiry is decided by the same TTLs, and a generation job only once it is finished.
"""

from __future__ import annotations

from datetime import timedelta

import click

from ..config import GenerationConfig, MemoryBankConfig, TtlConfig
from ..settings.variables import SESSION_TTL_ENV
from .options import (
    DURATION,
    Target,
    database_options,
    run,
)
from .output import plural, running_count


async def _sweep_sessions(target: Target, ttl: timedelta, batch_size: int) -> int:
    with running_count("expired sessions deleted") as progress:
        async with target.sessions(session_ttl=ttl) as service:
            return await service.sweep_expired_sessions(batch_size=batch_size, progress=progress)


async def _sweep_memories(target: Target, revision_ttl: timedelta | None, batch_size: int) -> int:
    config = MemoryBankConfig(ttl=TtlConfig(revision_ttl=revision_ttl))
    with running_count("expired memories deleted") as progress:
        async with target.memory(config=config) as service:
            return await service.sweep_expired(batch_size=batch_size, progress=progress)


async def _sweep_jobs(target: Target, retention: timedelta, batch_size: int) -> int:
    config = MemoryBankConfig(generation=GenerationConfig(job_retention=retention))
    with running_count("finished generation jobs deleted") as progress:
        async with target.memory(config=config) as service:
            return await service.sweep_jobs(batch_size=batch_size, progress=progress)


_JOB_RETENTION = f"{GenerationConfig().job_retention.total_seconds() / 86_400:g}d"
"""The config's default in days (`7d`), so that the command and an app's `sweep_jobs` keep
jobs as long."""


@click.command()
@database_options
@click.option(
    "--session-ttl",
    envvar=SESSION_TTL_ENV,
    type=DURATION,
    help=(
        f"Delete sessions idle longer than this, e.g. 30d (${SESSION_TTL_ENV}, what the app's "
        "configure() reads); unset: sessions are not swept."
    ),
)
@click.option(
    "--memories/--no-memories",
    "sweep_memories",
    default=True,
    show_default=True,
    help="Delete memories past their expiry (and revisions past theirs).",
)
@click.option(
    "--revision-ttl",
    type=DURATION,
    help="Expiry of the DELETED revisions the memory sweep writes (the app's revision_ttl).",
)
@click.option(
    "--jobs/--no-jobs",
    "sweep_jobs",
    default=True,
    show_default=True,
    help="Delete finished (done or dead-lettered) generation jobs older than --job-retention.",
)
@click.option(
    "--job-retention",
    type=DURATION,
    default=_JOB_RETENTION,
    show_default=True,
    help="How long a finished generation job is kept (the app's generation.job_retention).",
)
@click.option("--batch-size", type=click.IntRange(1), default=1000, show_default=True)
def sweep(
    target: Target,
    session_ttl: timedelta | None,
    sweep_memories: bool,
    revision_ttl: timedelta | None,
    sweep_jobs: bool,
    job_retention: timedelta,
    batch_size: int,
) -> None:
    """Delete expired sessions and memories, and finished generation jobs.

    Idle sessions go with --session-ttl; memories past their expiry always (unless
    --no-memories); generation jobs finished longer than --job-retention ago always (unless
    --no-jobs: a dead-lettered job keeps its payload, the conversation, until then). Deletes in
    batches that never hold long locks. Run it from cron; running it twice is harmless."""
    if session_ttl is None:
        click.echo("sessions: not swept (no --session-ttl)")
    else:
        count = run(_sweep_sessions(target, session_ttl, batch_size))
        click.echo(f"sessions: {plural(count, 'expired session')} deleted")
    if sweep_memories:
        count = run(_sweep_memories(target, revision_ttl, batch_size))
        click.echo(f"memories: {plural(count, 'expired memory', 'expired memories')} deleted")
    if sweep_jobs:
        count = run(_sweep_jobs(target, job_retention, batch_size))
        click.echo(f"jobs: {plural(count, 'finished generation job')} deleted")
