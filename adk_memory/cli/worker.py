"""The standalone memory-generation worker: `run_worker`, and the one worker command,
`adk-memory worker` (`python -m adk_memory.worker` is its deprecated alias).

Owns: the one implementation every standalone worker runs (`run_worker`: build the memory
service from its arguments, then run generation jobs until stopped with SIGINT/SIGTERM or, with
`until_idle`, until none is due), which `adk-memory worker` and the deployment's
`deploy/worker.py` wrap, each turning its own flags or settings into the service's arguments.
Any number of workers, in-process or standalone, may serve one database: the queue hands each
job to one of them, and each job runs with its app's stored configuration (the version it was
enqueued with). The command's options are `options.py`'s, defaulting to the `ADK_MEMORY_*`
variables as the agent's `configure()` reads them. It never enqueues.

Also owns what every worker entry point (and `adk-memory backfill`, which runs a worker too)
shares about failing models: the start-up check that refuses a Gemini model without credentials
(`check_model_credentials`), the summary of a run until idle and its exit status (`report`:
counts, each failure reason once, never a line per retry), and logging once a failure that a
task nobody awaited leaves behind (`unretrieved_errors_logged_once`), instead of asyncio's
traceback per task.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import click
from google.adk.models import BaseLlm, Gemini
from google.adk.telemetry.setup import maybe_set_otel_providers

from .._retry import describe
from .._text import plural
from ..errors import InputValidationError, ModelCredentialsError
from ..memory.jobs import WorkerStats
from ..memory.service import PostgresMemoryService
from ..settings.variables import MODEL_ENV, gemini_credentials
from .options import (
    Generation,
    Target,
    database_options,
    generation_options,
    run,
    skip_credential_check_option,
)

logger = logging.getLogger("adk_memory.worker")


_UNRETRIEVED = "exception was never retrieved"
"""How asyncio reports a task or future whose failure nobody retrieved (`Task exception was
never retrieved`, `Future exception ...`)."""

_SHOWN_REASONS = 5
"""The most frequent failure reasons a summary shows, one line each."""


@contextmanager
def unretrieved_errors_logged_once() -> Iterator[None]:
    """While open, in the running loop: a task or future that failed without anyone retrieving
    its exception is logged once per kind (where, and the error's type), in one line, instead of
    once per task with a traceback. google-genai makes such tasks: a client it fails to build
    (e.g. without an API key) closes itself from `__del__` in a task of its own, which fails in
    turn, so a worker would print a traceback per job. Everything else the loop reports goes to
    its previous handler."""
    running = asyncio.get_running_loop()
    previous = running.get_exception_handler()
    seen: set[tuple[str, str]] = set()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if error is None or _UNRETRIEVED not in str(context.get("message", "")):
            if previous is None:
                loop.default_exception_handler(context)
            else:
                previous(loop, context)
            return
        owner = context.get("task") or context.get("future")
        coroutine = owner.get_coro() if isinstance(owner, asyncio.Task) else None
        where = getattr(coroutine, "__qualname__", type(owner).__name__)
        if (where, type(error).__name__) not in seen:
            seen.add((where, type(error).__name__))
            logger.warning(
                "A background task (%s) failed and nobody awaited it (reported once): %s",
                where,
                describe(error),
            )

    running.set_exception_handler(handle)
    try:
        yield
    finally:
        running.set_exception_handler(previous)


async def serve(
    service: PostgresMemoryService, *, concurrency: int = 1, until_idle: bool = False
) -> WorkerStats:
    """Run `concurrency` worker loops for `service`'s database; with `until_idle`, return once
    no job is due, else run until SIGINT/SIGTERM; either way, what the tries came to. With
    `until_idle` the tries are summarised by the caller (`summary`), not logged one by one."""
    workers = [service.make_worker(log_failures=not until_idle) for _ in range(concurrency)]
    if until_idle:
        runs = [asyncio.ensure_future(w.run_until_idle()) for w in workers]
        try:
            await asyncio.gather(*runs)
        finally:  # one loop failed: stop the others rather than leave them running unwatched
            for run in runs:
                run.cancel()
            await asyncio.gather(*runs, return_exceptions=True)
        return sum((w.stats for w in workers), WorkerStats())
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
    return sum((w.stats for w in workers), WorkerStats())


def worker_service(arguments: Mapping[str, Any]) -> PostgresMemoryService:
    """The memory service a standalone worker runs on: `PostgresMemoryService(**arguments)`,
    without an in-process worker of its own (`serve` runs the loops). Refused without a
    generation model, before anything connects."""
    service = PostgresMemoryService(**{**arguments, "run_worker": False})
    if service.llm is None:
        raise InputValidationError(
            f"The worker needs a generation model: set {MODEL_ENV} (e.g. gemini-2.5-flash) or "
            "pass --model."
        )
    return service


def check_model_credentials(llm: BaseLlm | None, environ: Mapping[str, str] | None = None) -> None:
    """Refuse a Gemini model that cannot be called: without an API key or Vertex AI settings
    in `environ` (`settings.variables.gemini_credentials`), google-genai fails every call before
    sending it, and a worker would dead-letter its whole queue. Other models (a registered
    one, a test double) find their credentials their own way and are not checked.

    Raises ModelCredentialsError (an InputValidationError) naming what to set."""
    if isinstance(llm, Gemini) and not gemini_credentials(environ):
        raise ModelCredentialsError(
            f"No credentials for the Gemini model {llm.model!r}: set GOOGLE_API_KEY (or "
            "GEMINI_API_KEY), or GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT "
            "(and GOOGLE_CLOUD_LOCATION). Pass --skip-credential-check to start anyway (when "
            "the model finds its credentials another way)."
        )


async def run_worker(
    arguments: Mapping[str, Any],
    *,
    concurrency: int = 1,
    until_idle: bool = False,
    check_credentials: bool = True,
    environ: Mapping[str, str] | None = None,
) -> WorkerStats:
    """Every standalone worker: the service `arguments` describe (`worker_service`) running
    `concurrency` loops until SIGINT/SIGTERM, or with `until_idle` until no job is due; what
    its tries came to (`summary` words it). Its pool is closed either way. Unless
    `check_credentials` is off, a Gemini model without credentials in `environ` (default: the
    process's environment) is refused before anything connects (`check_model_credentials`).
    Like ADK's servers, it exports its traces and metrics (generation jobs: `telemetry.py`)
    when the standard `OTEL_EXPORTER_OTLP_*ENDPOINT` variables are set, unless the process
    already has a provider (ADK's `maybe_set_otel_providers`).
    """
    maybe_set_otel_providers()
    service = worker_service(arguments)
    if check_credentials:
        check_model_credentials(service.llm, environ)
    with unretrieved_errors_logged_once():
        async with service:
            return await serve(service, concurrency=concurrency, until_idle=until_idle)


def summary(stats: WorkerStats) -> tuple[list[str], list[str]]:
    """An `--until-idle` run in a few lines, worded alike by every entry point: the counts for
    stdout (tries run, succeeded, failed and due again after their backoff, dead-lettered; one
    line each), and for stderr why tries failed (the most frequent reasons, one line each)."""
    counts = [
        f"ran {plural(stats.ran, 'generation job')}",
        f"succeeded: {plural(stats.succeeded, 'job')}",
        f"failed, to be retried: {plural(stats.retried, 'job')}",
        f"dead-lettered: {plural(stats.dead_lettered, 'job')}",
    ]
    reasons = stats.reasons.most_common()
    why = [f"{plural(n, 'failed try', 'failed tries')}: {r}" for r, n in reasons[:_SHOWN_REASONS]]
    if len(reasons) > _SHOWN_REASONS:
        why.append(f"... and {plural(len(reasons) - _SHOWN_REASONS, 'other reason')}")
    return counts, why


def failure(stats: WorkerStats) -> str | None:
    """The one-line error an `--until-idle` run ends with when any try failed (its exit status
    is then non-zero); None when none did."""
    if not stats.failed:
        return None
    return (
        f"{stats.failed} of {plural(stats.ran, 'generation job')} failed "
        f"({stats.dead_lettered} dead-lettered, {stats.retried} to be retried)."
    )


def report(stats: WorkerStats) -> int:
    """Print an `--until-idle` run as every entry point does (the counts on stdout; why tries
    failed, and the `Error:` line when any did, on stderr); the exit status: 1 when any try
    failed, else 0."""
    counts, reasons = summary(stats)
    print("\n".join(counts))
    for line in reasons:
        print(line, file=sys.stderr)
    failed = failure(stats)
    if failed is None:
        return 0
    print(f"Error: {failed}", file=sys.stderr)
    return 1


@click.command()
@database_options
@generation_options
@click.option(
    "--concurrency", type=click.IntRange(1), default=1, show_default=True, help="Worker loops."
)
@click.option("--until-idle", is_flag=True, help="Exit once no job is due (cron, backfills).")
@skip_credential_check_option
@click.option("--migrate", is_flag=True, hidden=True)
def worker(
    target: Target,
    generation: Generation,
    concurrency: int,
    until_idle: bool,
    skip_credential_check: bool,
    migrate: bool,
) -> None:
    """Run memory-generation jobs.

    Runs until Ctrl-C or SIGTERM (or, with --until-idle, until no job is due: then it prints
    how many jobs ran, succeeded, will be retried and were dead-lettered, and exits with 1 if
    any failed). Any number of workers, on any machines, may serve one database: each job runs
    once. The agents' memory services then need no in-process worker (`worker=false` in their
    URI). A Gemini model without credentials is refused at start (--skip-credential-check).
    """
    # --migrate (hidden): the deprecated `python -m adk_memory.worker` passes it, as that
    # entry always created and upgraded the tables; every other command leaves that to
    # `adk-memory migrate`.
    if not until_idle:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    arguments = target.memory_arguments(**generation.memory_options(), auto_migrate=migrate)
    stats = run(
        run_worker(
            arguments,
            concurrency=concurrency,
            until_idle=until_idle,
            check_credentials=not skip_credential_check,
        )
    )
    if until_idle:
        raise click.exceptions.Exit(report(stats))
