"""The settings resolver (`adk_memory.settings`): for every spelling of a setting, the argument
wins over its `ADK_MEMORY_*` variable, which wins over the default; ADK's spellings resolve as
adk-memory's own; `db/` receives resolved values and never reads the environment; the old
import paths and the old worker entry keep working for one release."""

from __future__ import annotations

import ast
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

import adk_memory.env
import adk_memory.uri
from adk_memory.cli import main
from adk_memory.config import DatabaseTimeouts
from adk_memory.db.engine import DEFAULT_SCHEMA, make_engine
from adk_memory.errors import InputValidationError
from adk_memory.memory.service.uri import memory_settings_from_uri
from adk_memory.redaction import PiiRedactor
from adk_memory.sessions.uri import session_settings_from_uri
from adk_memory.settings import DatabaseSettings, database_settings, variables
from adk_memory.settings import uri as settings_uri
from adk_memory.settings.stack import StackSettings, stack_settings
from adk_memory.settings.variables import (
    DATA_DIR_ENV,
    DATABASE_PASSWORD_ENV,
    DATABASE_URL_ENV,
    EMBEDDING_MODEL_ENV,
    MEMORY_TTL_ENV,
    MODEL_ENV,
    READ_DATABASE_URL_ENV,
    REDACT_ENV,
    SCHEMA_ENV,
    SESSION_TTL_ENV,
    STATEMENT_TIMEOUT_ENV,
    chosen,
    parse_duration,
)

URL = "postgresql://agent@db.internal:5432/agents"
OTHER = "postgresql://agent@other.internal:5432/agents"
ROOT = Path(__file__).resolve().parent.parent


def password(url: str | None) -> str | None:
    assert url is not None
    return make_url(url).password


def test_chosen_is_the_argument_else_the_variable_else_none() -> None:
    environ = {SESSION_TTL_ENV: "1h"}
    assert chosen(timedelta(minutes=5), environ, SESSION_TTL_ENV, parse_duration) == timedelta(
        minutes=5
    )
    assert chosen(None, environ, SESSION_TTL_ENV, parse_duration) == timedelta(hours=1)
    assert chosen(None, {}, SESSION_TTL_ENV, parse_duration) is None
    with pytest.raises(InputValidationError, match="Invalid ADK_MEMORY_SESSION_TTL"):
        chosen(None, {SESSION_TTL_ENV: "soon"}, SESSION_TTL_ENV, parse_duration)


@pytest.mark.parametrize("spelling", ["database_url", "db_url"])
def test_a_url_takes_the_environment_password_unless_it_carries_one(spelling: str) -> None:
    environ = {DATABASE_PASSWORD_ENV: "from-env"}
    bare = database_settings(**{spelling: URL}, environ=environ)
    assert password(bare.url) == "from-env" and bare.data_dir is None
    written = URL.replace("agent@", "agent:written@")
    assert password(database_settings(**{spelling: written}, environ=environ).url) == "written"
    assert password(database_settings(**{spelling: URL}, environ={}).url) is None


def test_the_data_directory_is_the_argument_else_the_variable_else_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    environ = {DATA_DIR_ENV: "from-env"}
    given = database_settings(data_dir="given", environ=environ)
    assert given.data_dir == str(tmp_path / "given")
    assert database_settings(environ=environ).data_dir == str(tmp_path / "from-env")
    assert database_settings(environ={}).data_dir == str(tmp_path / ".adk" / "pgdata")
    # With a URL or an engine, no embedded server: nothing to resolve.
    assert database_settings(URL, environ=environ).data_dir is None


async def test_adk_spellings_resolve_as_adk_memorys_own() -> None:
    engine = make_engine(URL, DatabaseTimeouts())
    try:
        assert database_settings(db_engine=engine, environ={}).engine is engine
        assert database_settings(engine=engine, environ={}).engine is engine
        with pytest.raises(InputValidationError, match="db_engine"):
            database_settings(engine=engine, db_engine=engine, environ={})
    finally:
        await engine.dispose()
    with pytest.raises(InputValidationError, match="db_url"):
        database_settings(URL, db_url=URL, environ={})
    pooled = database_settings(URL, extra={"pool_size": 3}, environ={})
    assert pooled.engine_kwargs == {"pool_size": 3}
    with pytest.raises(TypeError, match="unexpected keyword arguments: colour"):
        database_settings(URL, extra={"colour": "blue"}, owner="PostgresSessionService")


def test_settings_are_frozen_and_build_the_handle_they_describe() -> None:
    settings = database_settings(URL, schema="tenant", auto_migrate=False, environ={})
    with pytest.raises(AttributeError):
        settings.schema = "other"  # type: ignore[misc]
    database = settings.database()
    assert (database.schema, database.auto_migrate) == ("tenant", False)
    assert DatabaseSettings(**_fields(settings)) == settings


def _fields(settings: DatabaseSettings) -> dict[str, object]:
    arguments = settings.arguments()
    arguments["url"] = arguments.pop("database_url")
    return arguments


def stack(environ: dict[str, str], **arguments: object) -> StackSettings:
    given: dict[str, object] = {
        "read_url": None,
        "schema": None,
        "data_dir": None,
        "session_ttl": None,
        "redactor": None,
        "auto_migrate": True,
        "engine_kwargs": None,
        "timeouts": None,
        "shared": None,
        **arguments,
    }
    database_url = given.pop("database_url", None)
    return stack_settings(database_url, environ=environ, **given)  # type: ignore[arg-type]


def test_configure_settings_argument_over_environment_over_default(tmp_path: Path) -> None:
    environ = {
        DATABASE_URL_ENV: URL,
        READ_DATABASE_URL_ENV: URL.replace("db.internal", "replica.internal"),
        SCHEMA_ENV: "env_schema",
        SESSION_TTL_ENV: "2h",
        REDACT_ENV: "pii",
        STATEMENT_TIMEOUT_ENV: "5s",
        MODEL_ENV: "env-model",
        EMBEDDING_MODEL_ENV: "text-embedding-005",
        MEMORY_TTL_ENV: "30d",
    }
    from_env = stack(environ)
    assert make_url(from_env.database.url).host == "db.internal"
    assert make_url(from_env.database.read_url).host == "replica.internal"
    assert from_env.database.schema == "env_schema"
    assert from_env.database.timeouts.statement == timedelta(seconds=5)
    assert from_env.session_ttl == timedelta(hours=2)
    assert isinstance(from_env.redactor, PiiRedactor)
    assert from_env.model == "env-model"
    assert from_env.embedding_model == "text-embedding-005"
    assert from_env.memory_ttl == timedelta(days=30)

    mine = PiiRedactor()
    given = stack(
        environ,
        database_url=OTHER,
        schema="arg_schema",
        session_ttl=timedelta(minutes=1),
        redactor=mine,
        timeouts=DatabaseTimeouts(statement=None),
    )
    assert make_url(given.database.url).host == "other.internal"
    assert given.database.schema == "arg_schema"
    assert given.session_ttl == timedelta(minutes=1)
    assert given.redactor is mine
    assert given.database.timeouts.statement is None

    defaults = stack({}, data_dir=tmp_path / "data")
    assert defaults.database.url is None
    assert defaults.database.data_dir == str(tmp_path / "data")
    assert defaults.database.schema == DEFAULT_SCHEMA
    assert defaults.database.timeouts == DatabaseTimeouts()
    assert (defaults.session_ttl, defaults.redactor, defaults.model) == (None, None, None)


def test_configure_falls_back_to_the_database_adk_built_on(tmp_path: Path) -> None:
    class Shared:
        url = OTHER
        data_dir = None
        schema = "adk_schema"

    shared = stack({}, shared=Shared())
    assert make_url(shared.database.url).host == "other.internal"
    assert shared.database.schema == "adk_schema"
    # A database named anywhere (argument, variable) wins over ADK's.
    named = stack({DATABASE_URL_ENV: URL, SCHEMA_ENV: "env_schema"}, shared=Shared())
    assert make_url(named.database.url).host == "db.internal"
    assert named.database.schema == "env_schema"
    embedded = stack({DATA_DIR_ENV: str(tmp_path)}, shared=Shared())
    assert embedded.database.data_dir == str(tmp_path)
    with pytest.raises(InputValidationError, match="read replica needs"):
        stack({READ_DATABASE_URL_ENV: URL})


def test_uri_options_win_over_the_environment_which_wins_over_defaults() -> None:
    environ = {SCHEMA_ENV: "env_schema", SESSION_TTL_ENV: "2h", DATABASE_PASSWORD_ENV: "pw"}
    from_env = session_settings_from_uri(URL, environ, {})
    assert from_env.database.schema == "env_schema"
    assert from_env.session_ttl == timedelta(hours=2)
    assert password(from_env.database.url) == "pw"
    given = session_settings_from_uri(f"{URL}?schema=uri_schema&session_ttl=5m", environ, {})
    assert (given.database.schema, given.session_ttl) == ("uri_schema", timedelta(minutes=5))
    default = session_settings_from_uri(URL, {}, {"pool_size": 2})
    assert (default.database.schema, default.session_ttl) == (DEFAULT_SCHEMA, None)
    assert default.database.engine_kwargs == {"pool_size": 2}

    memory = memory_settings_from_uri(f"{URL}?embedding_model=none", {EMBEDDING_MODEL_ENV: "x"}, {})
    assert memory.embedder is None and memory.database.schema == DEFAULT_SCHEMA
    assert memory.config.ttl.default_ttl is None
    with_ttl = memory_settings_from_uri(URL, {MEMORY_TTL_ENV: "1d"}, {"agents_dir": "."})
    assert with_ttl.config.ttl.default_ttl == timedelta(days=1)
    with pytest.raises(InputValidationError, match="Unexpected memory service arguments"):
        memory_settings_from_uri(URL, {}, {"colour": "blue"})


def test_the_old_import_paths_are_the_settings_modules() -> None:
    assert adk_memory.env.parse_duration is variables.parse_duration
    assert adk_memory.env.DATABASE_URL_ENV == DATABASE_URL_ENV
    assert adk_memory.uri.parse_service_uri is settings_uri.parse_service_uri
    assert adk_memory.uri.collect_services is settings_uri.collect_services


def test_db_never_reads_the_environment() -> None:
    """`db/` receives resolved values: it imports neither the variables nor the resolver."""
    importers = []
    for path in sorted((ROOT / "adk_memory" / "db").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in ("env", "settings"):
                importers.append(path.name)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("settings."):
                importers.append(path.name)
    assert importers == []


def test_the_old_worker_entry_is_the_worker_command() -> None:
    """`python -m adk_memory.worker` runs `adk-memory worker` (the same command object, so the
    same options), after a deprecation notice on stderr."""
    import adk_memory.worker as old

    assert old.worker is main.commands["worker"]
    done = subprocess.run(
        [sys.executable, "-m", "adk_memory.worker", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == old.DEPRECATION
    assert "Usage: python -m adk_memory.worker [OPTIONS]" in done.stdout
    assert "--until-idle" in done.stdout and "--migrate" not in done.stdout
