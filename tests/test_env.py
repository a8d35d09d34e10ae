"""The `ADK_MEMORY_*` variables (`adk_memory.env`): their parsers, and that every entry point
(`configure()`, the URI schemes, the `adk-memory` command, `python -m adk_memory.worker`) reads
them alike. Nothing here connects: engines are built, never used."""

from __future__ import annotations

import ast
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from google.adk.cli.service_registry import ServiceRegistry
from google.adk.errors.input_validation_error import InputValidationError

from adk_memory import PiiRedactor, PostgresMemoryService, PostgresSessionService
from adk_memory.adk.services import memory_service_from_uri, register
from adk_memory.adk.stack import configure
from adk_memory.cli import main
from adk_memory.cli.options import Target
from adk_memory.env import (
    DATA_DIR_ENV,
    DATABASE_PASSWORD_ENV,
    DATABASE_PASSWORD_FILE_ENV,
    DATABASE_URL_ENV,
    EMBEDDING_MODEL_ENV,
    SCHEMA_ENV,
    environment,
    gemini_credentials,
    parse_duration,
    parse_embedding_model,
    parse_redact,
    with_database_password,
)
from adk_memory.memory import GeminiEmbedder
from adk_memory.worker import worker_service

URL = "postgresql://agent@db.internal:5432/agents"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("3600", 3600),
        ("90s", 90),
        ("15m", 900),
        ("12h", 43_200),
        ("30d", 2_592_000),
        ("2w", 1_209_600),
        ("1d12h", 129_600),
        ("1.5h", 5400),
        (" 12H ", 43_200),
    ],
)
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "soon", "-1d", "0", "0s", "1d90", "12 h", "h", "1y"])
def test_bad_durations_say_what_is_expected(text: str) -> None:
    with pytest.raises(InputValidationError, match="is not a duration such as 3600, 90s"):
        parse_duration(text)


def test_embedding_model_none_means_full_text_only() -> None:
    for text in (None, "", "none", " NONE "):
        assert parse_embedding_model(text) is None
    assert parse_embedding_model(" gemini-embedding-001 ") == "gemini-embedding-001"


def test_redact_names_the_redactor() -> None:
    assert isinstance(parse_redact("pii"), PiiRedactor)
    assert isinstance(parse_redact(" PII "), PiiRedactor)
    assert parse_redact("none") is None
    for text in ("", "all", "pii,none"):
        with pytest.raises(InputValidationError, match="expected one of pii, none"):
            parse_redact(text)


def test_a_password_in_the_url_wins(tmp_path: Path) -> None:
    environ = {DATABASE_PASSWORD_ENV: "p@ss:w/rd?&="}
    assert with_database_password(URL, environ) == (
        "postgresql://agent:p%40ss%3Aw%2Frd%3F%26%3D@db.internal:5432/agents"
    )
    inline = "postgresql://agent:inline@db.internal/agents"
    assert with_database_password(inline, environ) == inline
    assert with_database_password(URL, {}) == URL
    secret = tmp_path / "password"
    secret.write_text("from-file\n")
    assert "agent:from-file@" in with_database_password(
        URL, {DATABASE_PASSWORD_FILE_ENV: str(secret)}
    )


async def _password(service: PostgresSessionService | PostgresMemoryService) -> str | None:
    engine = await service.database.engine()  # built, not connected
    password = engine.url.password
    await service.close()
    return password


async def test_every_entry_point_takes_the_password_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(DATABASE_PASSWORD_ENV, "s3cret")
    stack = configure(URL, run_worker=False)
    built = [
        stack.session_service,
        PostgresSessionService(URL),
        PostgresMemoryService(URL),
        PostgresSessionService(db_url=URL),
        memory_service_from_uri(URL),
        Target(URL, "adk_memory", None).memory(),
        worker_service(Target(URL, "adk_memory", None).memory_arguments(llm="gemini-2.5-flash")),
    ]
    assert [await _password(service) for service in built] == ["s3cret"] * len(built)
    await stack.close()


def test_every_entry_point_reads_the_embedding_model_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(EMBEDDING_MODEL_ENV, "text-embedding-005")
    embedders = [
        configure(URL, run_worker=False).memory_service.embedder,
        memory_service_from_uri(URL).embedder,
    ]
    assert all(isinstance(e, GeminiEmbedder) for e in embedders)
    assert {e.model for e in embedders} == {"text-embedding-005"}
    worker = main.commands["worker"]
    assert worker.make_context("worker", []).params["embedding_model"] == "text-embedding-005"
    for off in (["--embedding-model", "none"], ["--embedding-model", ""]):
        assert worker.make_context("worker", list(off)).params["embedding_model"] is None
    help_text = CliRunner().invoke(main, ["worker", "--help"]).output
    assert "--embedding-model NAME" in help_text and EMBEDDING_MODEL_ENV in help_text


def test_the_environment_is_read_in_one_place() -> None:
    """No module but `adk_memory/env.py` names `os.environ` or `os.getenv` (docstrings aside):
    every read goes through `adk_memory.env.environment()`, so a variable means the same to
    every entry point and a test can pass its own mapping."""
    root = Path(__file__).resolve().parent.parent
    readers = []
    for path in sorted([*root.glob("adk_memory/**/*.py"), *root.glob("deploy/**/*.py")]):
        name = path.relative_to(root).as_posix()
        if name == "adk_memory/settings/variables.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("environ", "getenv", "environb")
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
            ):
                readers.append(f"{name}:{node.lineno}")
    assert readers == []


def test_the_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    assert environment()["GEMINI_API_KEY"] == "k" and gemini_credentials(environment())
    given = {"GOOGLE_API_KEY": ""}
    assert environment(given) is given and not gemini_credentials(given)


async def test_configure_uses_the_database_adk_built_its_services_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """`adk web --session_service_uri postgresql://...`: ADK builds its services first, then
    imports the agents, whose `configure()` names no database. Memory goes to the sessions'
    database, not to a second, embedded one; two databases in one process are a WARNING."""
    for variable in (DATABASE_URL_ENV, DATA_DIR_ENV, SCHEMA_ENV, DATABASE_PASSWORD_ENV):
        monkeypatch.delenv(variable, raising=False)
    registry = ServiceRegistry()
    register(registry)
    with caplog.at_level("WARNING", logger="adk_memory.adk.shared_database"):
        registry.create_session_service(f"{URL}?schema=tenant", agents_dir=str(tmp_path))
        stack = configure(run_worker=False)
        assert stack.data_dir is None
        assert stack.memory_service.database.schema == "tenant"
        engine = await stack.memory_service.database.engine()  # built, not connected
        assert (engine.url.host, engine.url.database) == ("db.internal", "agents")
        await stack.close()
        assert caplog.text == ""
        # A stack on another database (or ADK's services built after the agent, as by `adk
        # run`) is a split: said once, naming both, never the password.
        configure(data_dir=tmp_path / "pgdata", run_worker=False)
    [warning] = caplog.records
    assert "Two databases in one process" in warning.getMessage()
    assert "db.internal" in warning.getMessage() and str(tmp_path) in warning.getMessage()


async def test_a_data_directory_and_a_link_to_it_are_one_database(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """As root, `./.adk/pgdata` becomes a link to the data kept under `/var/lib/adk-memory`:
    `adk-memory web` hands ADK the real directory while the samples' `configure()` names the
    link. One database, so no "Two databases" warning (a first `web --demo` gave two)."""
    for variable in (DATABASE_URL_ENV, DATA_DIR_ENV, SCHEMA_ENV, DATABASE_PASSWORD_ENV):
        monkeypatch.delenv(variable, raising=False)
    kept, link = tmp_path / "kept", tmp_path / "project" / ".adk" / "pgdata"
    registry = ServiceRegistry()
    register(registry)
    with caplog.at_level("WARNING", logger="adk_memory.adk.shared_database"):
        # The demo's own stack names the link before the first start makes it ...
        stack = configure(data_dir=link, run_worker=False)
        await stack.close()
        kept.mkdir()
        link.parent.mkdir(parents=True)
        link.symlink_to(kept)
        # ... then `web` hands ADK the directory the start reported.
        registry.create_session_service(f"adk-memory://?data_dir={kept}", agents_dir=str(tmp_path))
        assert caplog.text == ""
        configure(data_dir=tmp_path / "elsewhere", run_worker=False)  # another one still warns
    [warning] = caplog.records
    assert "Two databases in one process" in warning.getMessage()
