"""A standalone memory-generation worker: `python -m adk_memory.worker`.

Owns: running generation jobs for a database apart from the agent's processes (its own Cloud Run
job or service), until stopped with SIGINT/SIGTERM. Any number of workers, in-process or
standalone, may serve one database: the queue hands each job to one of them. Its options default
to the `ADK_MEMORY_*` variables of `adk_memory.env`, as the agent's `configure()` reads them. It
never enqueues.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
from collections.abc import Mapping, Sequence

from .config import GenerationConfig
from .db.engine import DEFAULT_SCHEMA
from .env import (
    DATABASE_PASSWORD_ENV,
    DATABASE_PASSWORD_FILE_ENV,
    DATABASE_URL_ENV,
    EMBEDDING_MODEL_ENV,
    MODEL_ENV,
    REDACT_CHOICES,
    REDACT_ENV,
    SCHEMA_ENV,
    parse_embedding_model,
    parse_redact,
    with_database_password,
)
from .memory.embeddings import GeminiEmbedder
from .memory.service import PostgresMemoryService
from .redaction import Redactor

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


def _redactor(text: str) -> Redactor | None:
    """`--redact` (or `$ADK_MEMORY_REDACT`, its default) as a redactor; argparse reports a bad
    value, naming both, before anything starts."""
    try:
        return parse_redact(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} ({REDACT_ENV} or --redact): {exc}") from exc


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m adk_memory.worker", description="Run memory-generation jobs."
    )
    model = GenerationConfig().model
    parser.add_argument(
        "--database-url",
        default=os.environ.get(DATABASE_URL_ENV),
        help=(
            f"postgresql://... (default: ${DATABASE_URL_ENV}, else the embedded server); "
            f"without a password, the one in ${DATABASE_PASSWORD_ENV} (or the file in "
            f"${DATABASE_PASSWORD_FILE_ENV})"
        ),
    )
    parser.add_argument(
        "--model",
        default=os.environ.get(MODEL_ENV) or model,
        help=f"generation model (default: ${MODEL_ENV} or {model})",
    )
    parser.add_argument(
        "--embedding-model",
        type=parse_embedding_model,
        default=os.environ.get(EMBEDDING_MODEL_ENV),
        help=(
            "Gemini embedding model, must match the agent's memory service "
            f"(default: ${EMBEDDING_MODEL_ENV}; unset or none: full-text search only)"
        ),
    )
    parser.add_argument(
        "--redact",
        type=_redactor,
        default=os.environ.get(REDACT_ENV) or "none",
        metavar="{" + ",".join(REDACT_CHOICES) + "}",
        help=(
            "pii: redact e-mail addresses, phone, card and IBAN numbers in what generation "
            f"sends its model and stores; must match the agent's (default: ${REDACT_ENV} or none)"
        ),
    )
    parser.add_argument(
        "--schema",
        default=os.environ.get(SCHEMA_ENV) or DEFAULT_SCHEMA,
        help=f"Postgres schema of the tables (default: ${SCHEMA_ENV} or {DEFAULT_SCHEMA})",
    )
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument(
        "--until-idle", action="store_true", help="exit when no job is due (backfills, cron)"
    )
    return parser


def _service(args: argparse.Namespace, environ: Mapping[str, str]) -> PostgresMemoryService:
    """The memory service the parsed arguments describe; a URL without a password takes the
    environment's (`adk_memory.env.with_database_password`)."""
    url = args.database_url and with_database_password(args.database_url, environ)
    return PostgresMemoryService(
        url,
        llm=args.model,
        embedder=GeminiEmbedder(args.embedding_model) if args.embedding_model else None,
        schema=args.schema,
        run_worker=False,
        redactor=args.redact,
    )


async def _main(args: argparse.Namespace) -> int:
    async with _service(args, os.environ) as service:
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
