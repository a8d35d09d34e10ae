"""The deployment's sweep job (`python -m deploy.sweep`): a Cloud Run job run on a schedule
(daily is plenty) that deletes what the deployment's settings say has expired.

Owns: building the session and memory services from the URIs the app uses, so the sweep keeps
exactly what the app keeps (`ADK_MEMORY_SESSION_TTL` or `session_ttl=`, each memory's own
expiry, `revision_ttl=`), and running their sweeps: sessions idle past the TTL (their events
with them), expired memories and revisions, and generation jobs finished longer ago than the
job retention (a dead-lettered job keeps the conversation until then). Without it the TTL
settings delete nothing. The deleting is the services' (the same sweeps as `adk-memory
sweep`): in batches that never hold long locks, safe to run twice or concurrently.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping, Sequence
from datetime import timedelta

from adk_memory.adk.services import memory_service_from_uri, session_service_from_uri
from adk_memory.config import GenerationConfig
from adk_memory.env import environment, parse_duration

from .failures import run_job
from .settings import Deployment

SweepCounts = dict[str, int | None]
"""What each sweep deleted: `sessions` (None without a session TTL), `memories`, `jobs`."""


async def sweep(deployment: Deployment, *, job_retention: timedelta | None = None) -> SweepCounts:
    """Run every sweep once against the deployment's database; what each deleted.
    `job_retention` defaults to `GenerationConfig.job_retention` (7 days), as the app's."""
    sessions = session_service_from_uri(deployment.session_uri())
    memory = memory_service_from_uri(deployment.memory_uri())
    if job_retention is not None:
        generation = memory.config.generation.model_copy(update={"job_retention": job_retention})
        memory.config = memory.config.model_copy(update={"generation": generation})
    async with sessions, memory:
        expired_sessions = (
            await sessions.sweep_expired_sessions() if sessions.session_ttl is not None else None
        )
        return {
            "sessions": expired_sessions,
            "memories": await memory.sweep_expired(),
            "jobs": await memory.sweep_jobs(),
        }


def _duration(text: str) -> timedelta:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Command-line entry point: one line per sweep, for the job's logs."""
    parser = argparse.ArgumentParser(prog="python -m deploy.sweep", description=__doc__)
    default = GenerationConfig().job_retention
    parser.add_argument(
        "--job-retention",
        type=_duration,
        default=default,
        help=f"how long a finished generation job is kept (default {default.days}d)",
    )
    args = parser.parse_args(argv)

    def body() -> int:
        deployment = Deployment.from_env(environment(environ), "maintenance")
        counts = asyncio.run(sweep(deployment, job_retention=args.job_retention))
        for kind, count in counts.items():
            done = "not swept (no session TTL)" if count is None else f"{count} deleted"
            print(f"{kind}: {done}")
        return 0

    return run_job(body)


if __name__ == "__main__":
    raise SystemExit(main())
