"""A standalone memory-generation worker: `python -m adk_memory.worker`.

Owns: running generation jobs for a database apart from the agent's processes (its own Cloud Run
job or service), until stopped with SIGINT/SIGTERM. Any number of workers, in-process or
standalone, may serve one database: the queue hands each job to one of them. It never enqueues.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
from collections.abc import Sequence

from .memory.embeddings import GeminiEmbedder
from .memory.service import PostgresMemoryService

logger = logging.getLogger("adk_memory.worker")


async def serve(
    service: PostgresMemoryService, *, concurrency: int = 1, until_idle: bool = False
) -> int:
    """Run `concurrency` worker loops for `service`'s database; with `until_idle`, return once
    no job is due (how many ran), else run until cancelled."""
    workers = [service.make_worker() for _ in range(concurrency)]
    if until_idle:
        counts = await asyncio.gather(*(w.run_until_idle() for w in workers))
        return sum(counts)
    for worker in workers:
        worker.start()
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopped.set)
    logger.info("Memory worker running (%d loops); Ctrl-C to stop.", concurrency)
    try:
        await stopped.wait()
    finally:
        await asyncio.gather(*(w.stop() for w in workers))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m adk_memory.worker", description="Run memory-generation jobs."
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("ADK_MEMORY_DATABASE_URL"),
        help="postgresql://... (default: $ADK_MEMORY_DATABASE_URL, else the embedded server)",
    )
    parser.add_argument(
        "--model",
        default=os.environ.get("ADK_MEMORY_MODEL", "gemini-2.5-flash"),
        help="generation model (default: $ADK_MEMORY_MODEL or gemini-2.5-flash)",
    )
    parser.add_argument(
        "--embedder",
        choices=["gemini", "none"],
        default=os.environ.get("ADK_MEMORY_EMBEDDER", "none"),
        help="must match the agent's memory service (default: $ADK_MEMORY_EMBEDDER or none)",
    )
    parser.add_argument("--schema", default=os.environ.get("ADK_MEMORY_SCHEMA", "adk_memory"))
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument(
        "--until-idle", action="store_true", help="exit when no job is due (backfills, cron)"
    )
    return parser


async def _main(args: argparse.Namespace) -> int:
    embedder = GeminiEmbedder() if args.embedder == "gemini" else None
    async with PostgresMemoryService(
        args.database_url,
        llm=args.model,
        embedder=embedder,
        schema=args.schema,
        run_worker=False,
    ) as service:
        ran = await serve(service, concurrency=args.concurrency, until_idle=args.until_idle)
    if args.until_idle:
        print(f"ran {ran} generation jobs")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    return asyncio.run(_main(_parser().parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
