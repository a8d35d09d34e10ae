"""The deployment's memory-generation worker (`python -m deploy.worker`): a Cloud Run worker
pool, or a Cloud Run job with `--until-idle` run on a schedule.

Owns: the worker's settings: the memory service URI the app uses (so both agree on the
database, the schema, the model, the embedder and the redactor), handed to adk-memory's one
worker implementation (`adk_memory.worker.run_worker`), which runs until SIGTERM. Each job runs
with its app's stored configuration (`adk-memory config push`). It never serves HTTP and never
enqueues.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Mapping, Sequence

from adk_memory.env import environment
from adk_memory.memory.jobs import WorkerStats
from adk_memory.memory.service.uri import memory_arguments
from adk_memory.worker import report, run_worker

from .failures import run_job
from .settings import Deployment


async def run(
    deployment: Deployment,
    *,
    concurrency: int = 1,
    until_idle: bool = False,
    environ: Mapping[str, str] | None = None,
    check_credentials: bool = True,
) -> WorkerStats:
    """Run generation jobs for the deployment's database; with `until_idle` until none is
    due, else until cancelled; what the tries came to. Unless `check_credentials` is off, a
    Gemini model without credentials in `environ` (default: the process's environment) is
    refused before anything connects."""
    arguments = memory_arguments(deployment.memory_uri(), None)
    return await run_worker(
        arguments,
        concurrency=concurrency,
        until_idle=until_idle,
        check_credentials=check_credentials,
        environ=environ,
    )


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Command-line entry point. A setting it refuses (no model, no credentials, a bad
    variable, an unreachable database) is one `Error:` line and exit status 1."""
    parser = argparse.ArgumentParser(prog="python -m deploy.worker", description=__doc__)
    parser.add_argument("--concurrency", type=int, default=1, help="worker loops (default 1)")
    parser.add_argument("--until-idle", action="store_true", help="exit when no job is due")
    parser.add_argument(
        "--skip-credential-check",
        action="store_true",
        help="start with a Gemini model even without GOOGLE_API_KEY or Vertex AI settings",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    env = environment(environ)

    def body() -> int:
        stats = asyncio.run(
            run(
                Deployment.from_env(env, "worker"),
                concurrency=args.concurrency,
                until_idle=args.until_idle,
                environ=env,
                check_credentials=not args.skip_credential_check,
            )
        )
        # As `adk-memory worker --until-idle` says it; a failed job fails the Cloud Run job.
        return report(stats) if args.until_idle else 0

    return run_job(body)


if __name__ == "__main__":
    raise SystemExit(main())
