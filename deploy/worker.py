"""The deployment's memory-generation worker (`python -m deploy.worker`): a Cloud Run worker
pool, or a Cloud Run job with `--until-idle` run on a schedule.

Owns: building the memory service from the same settings the app uses (so both agree on the
database, the schema, the model, the embedder and the redactor) and running adk-memory's worker
loops on it until SIGTERM. It never serves HTTP and never enqueues.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from collections.abc import Mapping, Sequence

from google.adk.errors.input_validation_error import InputValidationError

from adk_memory.adk.services import memory_service_from_uri
from adk_memory.env import MODEL_ENV
from adk_memory.worker import serve

from .settings import Deployment


async def run(deployment: Deployment, *, concurrency: int = 1, until_idle: bool = False) -> int:
    """Run generation jobs for the deployment's database; with `until_idle`, return how many
    ran once none is due, else run until cancelled."""
    service = memory_service_from_uri(deployment.memory_uri())
    if service.llm is None:
        raise InputValidationError(
            f"The worker needs a generation model: set {MODEL_ENV} (e.g. gemini-2.5-flash)."
        )
    async with service:
        return await serve(service, concurrency=concurrency, until_idle=until_idle)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m deploy.worker", description=__doc__)
    parser.add_argument("--concurrency", type=int, default=1, help="worker loops (default 1)")
    parser.add_argument("--until-idle", action="store_true", help="exit when no job is due")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    deployment = Deployment.from_env(os.environ if environ is None else environ)
    ran = asyncio.run(run(deployment, concurrency=args.concurrency, until_idle=args.until_idle))
    if args.until_idle:
        print(f"ran {ran} generation jobs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
