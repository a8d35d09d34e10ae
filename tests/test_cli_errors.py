"""Every `adk-memory` failure the user can fix is one `Error:` line and exit code 1: a wrong role
or password, a missing database, an unknown URL parameter, a malformed port, an unreachable
server, on every command that connects; and a usage error on `web` shows `web`'s own usage.

The database errors come from the real test server (a role with a password is given one, and a
`pg_hba.conf` line asking for it, for one test)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from click.testing import CliRunner, Result
from sqlalchemy.engine import make_url

from adk_memory.cli import main
from adk_memory.env import (
    DATA_DIR_ENV,
    DATABASE_URL_ENV,
    EMBEDDING_MODEL_ENV,
    MODEL_ENV,
    REDACT_ENV,
    SCHEMA_ENV,
)

ROLE = "adk_memory_cli_password_test"


@pytest.fixture(scope="module")
def socket_dir(database_url: str) -> str:
    """The Unix-socket directory of the test server (the embedded one)."""
    host = make_url(database_url).query.get("host")
    if not isinstance(host, str):
        pytest.skip("needs the embedded test server (a Unix socket)")
    return host


_SETTINGS = (DATABASE_URL_ENV, SCHEMA_ENV, DATA_DIR_ENV, MODEL_ENV, EMBEDDING_MODEL_ENV, REDACT_ENV)
"""What `web` and `api_server` export for the agents (restored after each run here)."""


def adk_memory(*args: str) -> Result:
    """Run the command with none of adk-memory's settings in the environment."""
    env: dict[str, str | None] = dict.fromkeys(_SETTINGS)
    return CliRunner(env=env).invoke(main, list(args), prog_name="adk-memory")


def assert_one_error_line(result: Result, *fragments: str) -> None:
    assert result.exit_code == 1, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0]


SCOPE = ("--app", "a", "--user", "u")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://nobody@/postgres?host={sock}", 'role "nobody" does not exist'),
        ("postgresql://postgres@/no_such_db?host={sock}", 'database "no_such_db" does not exist'),
        ("postgresql://postgres@/postgres?host={sock}&sslmod=require", "Unknown parameter"),
        ("postgresql://postgres@localhost:54x2/postgres", "port in the database URL"),
        ("postgresql://postgres@localhost:99999/postgres", "out of range"),
        ("postgresql://postgres@/postgres?host={sock}&sslmode=on", "expected one of disable"),
        ("postgresql://postgres@127.0.0.1:9/postgres", "Could not connect to the database"),
        ("mysql://postgres@localhost/postgres", "Unsupported database URL scheme"),
    ],
)
def test_database_errors_are_one_line(url: str, message: str, socket_dir: str) -> None:
    given = url.format(sock=socket_dir)
    assert_one_error_line(adk_memory("memories", "list", *SCOPE, "--database-url", given), message)


@pytest.mark.parametrize(
    "command",
    [
        ("migrate",),
        ("memories", "list", *SCOPE),
        ("sweep",),
        ("worker", "--until-idle", "--skip-credential-check"),  # past the model key check
        ("erase", "--app", "a", "--user", "u", "--yes"),
    ],
)
def test_every_command_that_connects_says_it_in_one_line(
    command: tuple[str, ...], socket_dir: str
) -> None:
    url = f"postgresql://nobody@/postgres?host={socket_dir}"
    result = adk_memory(*command, "--database-url", url)
    assert_one_error_line(result, "Could not connect to the database", '"nobody"')


@pytest.fixture
def password_role(superuser_url: str) -> Iterator[None]:
    """A role with a password that the server asks for (a `pg_hba.conf` line for that role
    only, first in the file), removed afterwards (by the server's superuser: it reads the
    server's files)."""
    dsn = superuser_url.replace("postgresql+asyncpg://", "postgresql://")

    async def setup() -> tuple[Path, str]:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(f"DROP ROLE IF EXISTS {ROLE}")
            await conn.execute(f"CREATE ROLE {ROLE} LOGIN PASSWORD 'right-password'")
            hba = Path(await conn.fetchval("SHOW hba_file"))
            original = hba.read_text()
            hba.write_text(f"local all {ROLE} scram-sha-256\n{original}")
            await conn.execute("SELECT pg_reload_conf()")
            return hba, original
        finally:
            await conn.close()

    async def asked_for_password() -> bool:
        try:
            conn = await asyncpg.connect(dsn, user=ROLE, password="not-it")
        except asyncpg.InvalidPasswordError:
            return True
        await conn.close()
        return False

    async def teardown(hba: Path, original: str) -> None:
        hba.write_text(original)
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute("SELECT pg_reload_conf()")
            await conn.execute(f"DROP ROLE IF EXISTS {ROLE}")
        finally:
            await conn.close()

    hba, original = asyncio.run(setup())
    try:
        deadline = time.monotonic() + 60  # the postmaster reloads the file on its own time
        while not asyncio.run(asked_for_password()):
            assert time.monotonic() < deadline, "the server never asked for the password"
            time.sleep(0.1)
        yield
    finally:
        asyncio.run(teardown(hba, original))


@pytest.mark.usefixtures("password_role")
def test_a_wrong_password_is_one_line(socket_dir: str) -> None:
    url = f"postgresql://{ROLE}:wrong@/postgres?host={socket_dir}"
    result = adk_memory("migrate", "--database-url", url)
    assert_one_error_line(result, "password authentication failed", ROLE)
    assert "wrong" not in result.stderr


@pytest.mark.parametrize("command", ["web", "api_server"])
def test_server_commands_fail_in_one_line_before_adk_starts(command: str, tmp_path: Path) -> None:
    bad = adk_memory(command, "--database-url", "postgresql://u@h:x/d", str(tmp_path))
    assert_one_error_line(bad, "port in the database URL is not a number")
    unknown = adk_memory(command, "--database-url", "postgresql://u@h/d?sslmod=1", str(tmp_path))
    assert_one_error_line(unknown, "Unknown parameter 'sslmod'", "sslmode")
    # ADK's own usage errors show this command's usage, not two commands' run together.
    usage = adk_memory(command, "--port", "abc", str(tmp_path))
    assert usage.exit_code == 2
    assert usage.stderr.startswith(f"Usage: adk-memory {command} [OPTIONS]"), usage.stderr
    assert f"Try 'adk-memory {command} --help' for help." in usage.stderr


@pytest.fixture
def database_without_pgvector(superuser_url: str, tmp_path: Path) -> Iterator[str]:
    """A real database of the test server in which the pgvector extension is not available:
    PostgreSQL 18's `extension_control_path` is set, for that database only, to an empty
    directory, so `CREATE EXTENSION vector` fails there as on a server without pgvector (made
    by the server's superuser, who alone may set that)."""
    name = "adk_memory_no_pgvector"
    empty = tmp_path / "no-extensions"
    empty.mkdir()
    server = make_url(superuser_url).set(drivername="postgresql", database="postgres")

    async def run(*statements: str) -> None:
        conn = await asyncpg.connect(server.render_as_string(hide_password=False))
        try:
            for statement in statements:
                await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(
        run(
            f"DROP DATABASE IF EXISTS {name}",
            f"CREATE DATABASE {name} TEMPLATE template0",
            f"ALTER DATABASE {name} SET extension_control_path = '{empty}'",
        )
    )
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(run(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


def test_a_database_without_pgvector_is_one_line_naming_what_to_run(
    database_without_pgvector: str,
) -> None:
    result = adk_memory("migrate", "--database-url", database_without_pgvector)
    assert_one_error_line(result, "pgvector", "CREATE EXTENSION vector")
