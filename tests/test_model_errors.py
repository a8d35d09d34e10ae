"""Model errors that no further try can fix fail fast, end to end (issue 13, item 5).

A missing or rejected key, an unknown model or a refused permission dead-letters a job at its
first try with a one-line reason; a rate limit or an unavailable server is retried. The worker
(`adk-memory worker`, `python -m adk_memory.worker`) and `adk-memory backfill` refuse to start
with a Gemini model that has no credentials (unless told to skip the check), a run until idle
prints a summary of a few lines and exits non-zero when jobs failed, and no task's failure is
left for asyncio to print as "Task exception was never retrieved".

The model is the only double: a real ADK Gemini model (google-genai underneath) without any
key, which fails before sending a request, or a `ScriptedLlm` raising the `ClientError` /
`ServerError` google-genai raises for the Gemini API's 4xx / 5xx answers. Nothing here reaches
the network.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import TEST_SCHEMA
from google.adk.events.event import Event
from google.adk.sessions.session import Session
from google.genai import errors, types

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory._retry import describe
from adk_memory.cli import main
from adk_memory.cli.options import Overrides
from adk_memory.config import GenerationConfig, MemoryBankConfig
from adk_memory.env import GEMINI_CREDENTIAL_VARIABLES, GOOGLE_CLOUD_PROJECT_ENV
from adk_memory.errors import InputValidationError, ModelCredentialsError
from adk_memory.memory.generation import resolve_llm
from adk_memory.memory.jobs import WorkerStats
from adk_memory.testing import ScriptedLlm
from adk_memory.worker import (
    DEPRECATION,
    check_model_credentials,
    failure,
    serve,
    summary,
    unretrieved_errors_logged_once,
)

APP = "shop"
UNRETRIEVED = "exception was never retrieved"
CREDENTIALS = (*GEMINI_CREDENTIAL_VARIABLES, GOOGLE_CLOUD_PROJECT_ENV, "GOOGLE_CLOUD_LOCATION")
"""Every variable that could give google-genai credentials: cleared, so nothing can call out."""
UNREACHABLE = "postgresql://nobody@127.0.0.1:9/none"
"""A database no command can reach: a check that passes would fail on connecting instead."""

INVALID_KEY = "API key not valid. Please pass a valid API key."
NO_PERMISSION = "Permission denied on resource project my-project."
UNKNOWN_MODEL = (
    "models/gemini-0.9-pro is not found for API version v1beta, or is not supported for "
    "generateContent."
)


def api_error(code: int, status: str, message: str) -> errors.APIError:
    """What google-genai raises for the Gemini API's answer `code` (with its JSON body)."""
    body = {"error": {"code": code, "message": message, "status": status}}
    kind = errors.ClientError if code < 500 else errors.ServerError
    return kind(code, body)


PERMANENT = [
    pytest.param(api_error(400, "INVALID_ARGUMENT", INVALID_KEY), id="invalid-key"),
    pytest.param(api_error(403, "PERMISSION_DENIED", NO_PERMISSION), id="permission-denied"),
    pytest.param(api_error(404, "NOT_FOUND", UNKNOWN_MODEL), id="unknown-model"),
]
TRANSIENT = [
    pytest.param(api_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded."), id="rate-limited"),
    pytest.param(api_error(503, "UNAVAILABLE", "The model is overloaded."), id="unavailable"),
]
NO_FACTS = '{"facts": []}'

_FAILING_WORKER = """
import runpy
from google.adk.models.registry import LLMRegistry
from google.genai import errors
from adk_memory.testing import ScriptedLlm

def refuse(request):
    message = "API key not valid. Please pass a valid API key."
    body = {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    return errors.ClientError(400, body)

class RejectedKeyLlm(ScriptedLlm):
    def __init__(self, **data):
        super().__init__(responder=refuse, **data)

    @classmethod
    def supported_models(cls):
        return [r"rejected-key-llm"]

LLMRegistry.register(RejectedKeyLlm)
runpy.run_module("adk_memory.worker", run_name="__main__", alter_sys=True)
"""
"""`python -m adk_memory.worker` with a registered model whose every call is refused as the
Gemini API refuses a bad key."""


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CREDENTIALS:
        monkeypatch.delenv(name, raising=False)


def clean_environ(database_url: str) -> dict[str, str]:
    """The test process's environment without any credential or adk-memory setting, naming
    the test database."""
    kept = {
        k: v for k, v in os.environ.items() if k not in CREDENTIALS and not k.startswith("ADK_")
    }
    return {**kept, "ADK_MEMORY_DATABASE_URL": database_url, "ADK_MEMORY_SCHEMA": TEST_SCHEMA}


def conversation(session_id: str, user: str = "u1") -> Session:
    said = Event(
        author="user",
        invocation_id=f"inv-{session_id}",
        timestamp=1.0,
        content=types.Content(role="user", parts=[types.Part(text="I like green tea.")]),
    )
    return Session(id=session_id, app_name=APP, user_id=user, events=[said])


def generating(
    make_memory_service: Callable[..., PostgresMemoryService], llm: Any, **options: Any
) -> PostgresMemoryService:
    """A service that generates with `llm`, enqueueing only (the test runs the worker)."""
    return make_memory_service(llm=llm, run_worker=False, **options)


async def run_until_idle(service: PostgresMemoryService) -> WorkerStats:
    """What `run_worker` does once its service is built: the worker until no job is due. Then
    every object a job left behind is collected, and the tasks their clean-up starts run, while
    the worker's handling of failed tasks nobody awaits is still in place."""
    with unretrieved_errors_logged_once():
        stats = await serve(service, until_idle=True)
        gc.collect()
        for _ in range(3):
            await asyncio.sleep(0)
        return stats


def unretrieved(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if UNRETRIEVED in r.getMessage()]


def lines(*texts: str) -> list[str]:
    return [line for text in texts for line in text.splitlines() if line.strip()]


# ------------------------------------------------------------------------- fail fast, or retry


@pytest.mark.parametrize("error", PERMANENT)
async def test_a_permanent_model_error_dead_letters_at_the_first_try_with_its_reason(
    make_memory_service: Callable[..., PostgresMemoryService], error: errors.APIError
) -> None:
    llm = ScriptedLlm([error])  # a second call would fail the test: the script has one answer
    service = generating(make_memory_service, llm)
    operation = await service.generate_memories(session=conversation("s1"))

    stats = await run_until_idle(service)

    assert (stats.ran, stats.dead_lettered, stats.retried, len(llm.requests)) == (1, 1, 0, 1)
    assert GenerationConfig().max_attempts > 1  # a transient error would have had more tries
    [dead] = await service.dead_letters()
    assert dead.id == operation.id and dead.done
    assert dead.error == (
        f"model error (permanent): {error.message} ({type(error).__name__} {error.code} "
        f"{error.status})"
    )


async def test_a_gemini_model_without_a_key_fails_at_the_first_try_without_tracebacks(
    make_memory_service: Callable[..., PostgresMemoryService],
    no_credentials: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """ADK's own Gemini model, through google-genai, with no key anywhere: google-genai
    refuses before sending anything, and the half-built client it leaves behind closes itself
    in a task that fails too; that failure is logged once, not once per job."""
    llm = resolve_llm("gemini-2.5-flash")
    service = generating(make_memory_service, llm)
    for n in range(3):
        await service.generate_memories(session=conversation(f"s{n}", user=f"u{n}"))

    with caplog.at_level(logging.WARNING):
        stats = await run_until_idle(service)

    assert (stats.ran, stats.dead_lettered, stats.retried) == (3, 3, 0)
    reasons = {dead.error for dead in await service.dead_letters()}
    assert len(reasons) == 1
    [reason] = reasons
    assert reason.startswith("model error (permanent): No API key was provided.")
    assert "\n" not in reason
    assert not [r for r in caplog.records if r.name == "asyncio"]
    assert len([r for r in caplog.records if "nobody awaited it" in r.getMessage()]) == 1
    assert unretrieved(caplog) == []


@pytest.mark.parametrize("error", TRANSIENT)
async def test_a_transient_model_error_is_retried(
    make_memory_service: Callable[..., PostgresMemoryService], error: errors.APIError
) -> None:
    llm = ScriptedLlm([error, NO_FACTS])
    at_once = MemoryBankConfig(generation=GenerationConfig(retry_base_delay=timedelta(0)))
    service = generating(make_memory_service, llm, config=at_once)
    operation = await service.generate_memories(session=conversation("s1"))

    stats = await run_until_idle(service)

    assert (stats.ran, stats.retried, stats.succeeded, stats.dead_lettered) == (2, 1, 1, 0)
    assert len(llm.requests) == 2
    [(reason, tries)] = stats.reasons.items()
    assert tries == 1 and reason.startswith("model error (transient): ")
    done = await service.get_operation(operation.id, operation.scope)
    assert done is not None and done.done and done.error is None
    assert await service.dead_letters() == []


def test_the_reason_is_one_line_without_the_key() -> None:
    """A model error's JSON body is reduced to its message; anything shaped like a Google API
    key is masked (the error text is stored with the job and logged)."""
    key = "AIza" + "x" * 35
    error = api_error(400, "INVALID_ARGUMENT", f"API key not valid:\n  {key}")
    assert describe(error) == (
        "model error (permanent): API key not valid: [API KEY] (ClientError 400 INVALID_ARGUMENT)"
    )
    assert describe(ValueError("No API key was provided. Please pass a valid API key.")) == (
        "model error (permanent): No API key was provided. Please pass a valid API key."
    )
    assert describe(TimeoutError("the model did not answer\nin time")) == (
        "TimeoutError: the model did not answer in time"
    )


# ------------------------------------------------------------------------- the startup checks


def test_the_credential_check_accepts_a_key_or_vertex_ai_and_skips_other_models() -> None:
    gemini = resolve_llm("gemini-2.5-flash")
    for usable in (
        {"GOOGLE_API_KEY": "k"},
        {"GEMINI_API_KEY": "k"},
        {"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"},
        {"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_CLOUD_PROJECT": "p"},
    ):
        check_model_credentials(gemini, usable)
    for unusable in (
        {},
        {"GOOGLE_API_KEY": ""},
        {"GOOGLE_GENAI_USE_VERTEXAI": "true"},  # no project
        {"GOOGLE_GENAI_USE_VERTEXAI": "false", "GOOGLE_CLOUD_PROJECT": "p"},
    ):
        with pytest.raises(ModelCredentialsError, match="GOOGLE_API_KEY") as refused:
            check_model_credentials(gemini, unusable)
        assert isinstance(refused.value, InputValidationError)
    check_model_credentials(ScriptedLlm(), {})  # not a Gemini model: its own business
    check_model_credentials(None, {})


def invoke(args: list[str], env: dict[str, str | None], obj: Any = None) -> Result:
    return CliRunner(env=env).invoke(main, args, obj=obj)


def cli_env(database_url: str) -> dict[str, str | None]:
    """CliRunner's environment: the test database, and every credential removed."""
    return {
        "ADK_MEMORY_DATABASE_URL": database_url,
        "ADK_MEMORY_SCHEMA": TEST_SCHEMA,
        "ADK_MEMORY_MODEL": None,
        **dict.fromkeys(CREDENTIALS),
    }


@pytest.fixture
def migrated(database_url: str, make_memory_service: Callable[..., PostgresMemoryService]) -> None:
    """Emptied test tables, migrated (the commands never migrate)."""
    done = invoke(["migrate"], cli_env(database_url))
    assert done.exit_code == 0, done.output


def assert_refused(result: Result) -> None:
    """One `Error:` line naming what to set, before any connection (the database named is
    unreachable: a check that passed would fail on connecting instead)."""
    assert result.exit_code == 1, result.output
    assert lines(result.stderr) == [result.stderr.strip()]
    assert result.stderr.startswith(
        "Error: No credentials for the Gemini model 'gemini-2.5-flash': set GOOGLE_API_KEY"
    )
    assert "--skip-credential-check" in result.stderr
    assert "Traceback" not in result.output


def test_the_worker_command_refuses_to_start_without_credentials(
    database_url: str, migrated: None
) -> None:
    unreachable = {**cli_env(database_url), "ADK_MEMORY_DATABASE_URL": UNREACHABLE}
    assert_refused(invoke(["worker", "--until-idle"], unreachable))

    skipped = invoke(["worker", "--until-idle", "--skip-credential-check"], cli_env(database_url))
    assert skipped.exit_code == 0, skipped.output
    assert skipped.stdout.splitlines()[0] == "ran 0 generation jobs"
    # A test model (not Gemini) is not checked.
    tested = invoke(["worker", "--until-idle"], cli_env(database_url), Overrides(llm=ScriptedLlm()))
    assert tested.exit_code == 0, tested.output


def test_backfill_refuses_to_generate_without_credentials(
    database_url: str, migrated: None
) -> None:
    unreachable = {**cli_env(database_url), "ADK_MEMORY_DATABASE_URL": UNREACHABLE}
    assert_refused(invoke(["backfill", "--app", APP], unreachable))
    # Enqueueing for other workers, or listing, calls no model: no check.
    for needs_no_model in (["--no-wait"], ["--dry-run"]):
        listed = invoke(["backfill", "--app", APP, *needs_no_model], cli_env(database_url))
        assert listed.exit_code == 0, listed.output
    skipped = invoke(["backfill", "--app", APP, "--skip-credential-check"], cli_env(database_url))
    assert skipped.exit_code == 0, skipped.output


def test_python_dash_m_worker_refuses_to_start_without_credentials(database_url: str) -> None:
    environ = {**clean_environ(database_url), "ADK_MEMORY_DATABASE_URL": UNREACHABLE}
    done = subprocess.run(
        [sys.executable, "-m", "adk_memory.worker", "--until-idle"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 1, done.stderr
    notice, error = done.stderr.split("\n", 1)  # the deprecated alias says so first
    assert notice == DEPRECATION
    assert lines(error) == [error.strip()]
    assert error.startswith("Error: No credentials for the Gemini model 'gemini-2.5-flash'")
    assert done.stdout == ""


# -------------------------------------------------------------------- a run until idle, summed up


async def enqueue(service: PostgresMemoryService, count: int) -> None:
    for n in range(count):
        await service.generate_memories(session=conversation(f"s{n}", user=f"u{n % 7}"))


async def run(command: list[str], environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(
        subprocess.run, command, env=environ, capture_output=True, text=True, timeout=240
    )


def assert_summed_up(done: subprocess.CompletedProcess[str], jobs: int, reason: str) -> None:
    """A failing run until idle: a handful of lines whatever the number of jobs, the counts on
    stdout, the reason once on stderr, an `Error:` line and exit status 1."""
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert UNRETRIEVED not in done.stderr and "Traceback" not in done.stderr
    printed = lines(done.stdout, done.stderr)
    assert len(printed) < 10, printed
    assert done.stdout.splitlines() == [
        f"ran {jobs} generation jobs",
        "succeeded: 0 jobs",
        "failed, to be retried: 0 jobs",
        f"dead-lettered: {jobs} jobs",
    ]
    assert f"{jobs} failed tries: {reason}" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {jobs} of {jobs} generation jobs failed ({jobs} dead-lettered, 0 to be retried)."
    )


async def test_the_worker_command_until_idle_with_no_key_sums_up_and_fails(
    make_memory_service: Callable[..., PostgresMemoryService], database_url: str
) -> None:
    """50 jobs and ADK's Gemini model with no key, the check skipped: each job is dead at its
    first try, and the run prints a few lines (it printed thousands, tracebacks included)."""
    service = generating(make_memory_service, "gemini-2.5-flash")
    await enqueue(service, 50)
    command = [sys.executable, "-m", "adk_memory.cli", "worker", "--until-idle"]
    done = await run([*command, "--skip-credential-check"], clean_environ(database_url))
    assert_summed_up(done, 50, "model error (permanent): No API key was provided.")
    dead = await service.dead_letters(limit=100)
    assert len(dead) == 50


async def test_python_dash_m_worker_until_idle_with_a_rejected_key_sums_up_and_fails(
    make_memory_service: Callable[..., PostgresMemoryService], database_url: str
) -> None:
    service = generating(make_memory_service, ScriptedLlm())
    await enqueue(service, 20)
    command = [sys.executable, "-c", _FAILING_WORKER, "--model", "rejected-key-llm"]
    done = await run([*command, "--until-idle"], clean_environ(database_url))
    reason = f"model error (permanent): {INVALID_KEY} (ClientError 400 INVALID_ARGUMENT)"
    assert_summed_up(done, 20, reason)


def test_the_summary_counts_each_outcome_in_its_own_line() -> None:
    stats = WorkerStats(ran=3, succeeded=1)
    stats.record_failure("pending", "model error (transient): Quota exceeded.")
    stats.record_failure("dead", "model error (permanent): API key not valid.")
    stats.record_failure(None, "lost its job")  # erased meanwhile: run, no outcome
    counts, reasons = summary(stats + WorkerStats(ran=1, succeeded=1))
    assert counts == [
        "ran 4 generation jobs",
        "succeeded: 2 jobs",
        "failed, to be retried: 1 job",
        "dead-lettered: 1 job",
    ]
    assert sorted(reasons) == [
        "1 failed try: model error (permanent): API key not valid.",
        "1 failed try: model error (transient): Quota exceeded.",
    ]
    assert failure(stats) == "2 of 3 generation jobs failed (1 dead-lettered, 1 to be retried)."
    assert failure(WorkerStats(ran=1, succeeded=1)) is None
    many = WorkerStats(ran=30)
    for n in range(30):  # distinct reasons: a bounded tally, and a bounded summary
        many.record_failure("dead", f"GenerationOutputError: answer {n}")
    assert len(many.reasons) == 21 and many.reasons["(other failures)"] == 10
    assert len(summary(many)[1]) == 6 and summary(many)[1][-1] == "... and 16 other reasons"


def test_backfill_with_a_rejected_key_sums_up_and_fails(database_url: str, migrated: None) -> None:
    """Every session fails alike: one line for all of them, each job tried once."""
    llm = ScriptedLlm(responder=lambda request: api_error(403, "PERMISSION_DENIED", NO_PERMISSION))

    async def seed() -> None:
        async with PostgresSessionService(database_url, schema=TEST_SCHEMA) as sessions:
            for n in range(6):
                session = await sessions.create_session(app_name=APP, user_id=f"u{n}")
                await sessions.append_event(session, conversation("x").events[0])

    asyncio.run(seed())
    done = invoke(["backfill", "--app", APP], cli_env(database_url), Overrides(llm=llm))
    assert done.exit_code == 1, done.output
    assert "Traceback" not in done.output
    assert len(llm.requests) == 6  # one try each, no retry
    reason = f"model error (permanent): {NO_PERMISSION} (ClientError 403 PERMISSION_DENIED)"
    failed = [line for line in done.stderr.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 1 and failed[0].startswith("failed: 6 sessions (e.g. session ")
    assert failed[0].endswith(f"): {reason}")
    assert done.stderr.strip().splitlines()[-1] == (
        "Error: 6 sessions failed; the next run tries them again."
    )
    assert len(lines(done.stdout, done.stderr)) < 15
