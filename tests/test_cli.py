"""The `adk-memory` command on the real test database: migrate, memories, sweep, worker, and
the rule that a user's mistake is one line on stderr and exit code 1, never a traceback.

Tests are synchronous: each command runs its own event loop (`asyncio.run`), as it does from a
shell, and test data is written through the services in loops of their own (`arun`).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import pytest
from click.testing import CliRunner, Result
from conftest import TEST_SCHEMA
from google.adk.events.event import Event
from google.adk.sessions.session import Session
from google.genai import types

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.cli import main
from adk_memory.cli.options import Overrides
from adk_memory.db.migrations import MEMORY_MIGRATIONS, SESSION_MIGRATIONS
from adk_memory.testing import ScriptedLlm

T = TypeVar("T")
Cli = Callable[..., Result]


def arun(make: Callable[[], Awaitable[T]]) -> T:
    """Run test set-up code in an event loop of its own (the CLI runs in its own loops too)."""

    async def go() -> T:
        return await make()

    return asyncio.run(go())


@asynccontextmanager
async def services(
    database_url: str, **memory_options: Any
) -> AsyncIterator[tuple[PostgresSessionService, PostgresMemoryService]]:
    """Services on the test tables, for writing test data and reading results."""
    memory_options.setdefault("run_worker", False)
    async with (
        PostgresSessionService(database_url, schema=TEST_SCHEMA) as sessions,
        PostgresMemoryService(database_url, schema=TEST_SCHEMA, **memory_options) as memory,
    ):
        yield sessions, memory


def said(text: str, ts: float, author: str = "user") -> Event:
    return Event(
        author=author,
        invocation_id=f"inv-{ts}",
        timestamp=ts,
        content=types.Content(
            role="user" if author == "user" else "model", parts=[types.Part(text=text)]
        ),
    )


async def store_session(
    sessions: PostgresSessionService,
    app: str,
    user: str,
    session_id: str,
    texts: list[str],
    start: float = 1000.0,
    state: dict[str, Any] | None = None,
) -> Session:
    session = await sessions.create_session(
        app_name=app, user_id=user, session_id=session_id, state=state
    )
    for i, text in enumerate(texts):
        await sessions.append_event(session, said(text, start + i))
    return session


@pytest.fixture
def cli(database_url: str, make_memory_service: Any) -> Cli:
    """Invoke `adk-memory` on the emptied, migrated test tables (`make_memory_service` empties
    them). The database is named by the environment variables, as a deployment would."""
    env = {"ADK_MEMORY_DATABASE_URL": database_url, "ADK_MEMORY_SCHEMA": TEST_SCHEMA}

    def invoke(*args: str, obj: Overrides | None = None, code: int = 0) -> Result:
        result = CliRunner(env=env).invoke(main, list(args), obj=obj)
        assert result.exit_code == code, (result.output, result.exception)
        if code == 0 or code == 1:
            assert "Traceback" not in result.output
        return result

    invoke("migrate")
    return invoke


def assert_user_error(result: Result, *fragments: str) -> None:
    """One clean message on stderr, exit code 1, no traceback."""
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("Error: ")
    for fragment in fragments:
        assert fragment in result.stderr


# ------------------------------------------------------------------------------------- migrate


@pytest.fixture
def fresh_schema(database_url: str) -> Iterator[str]:
    """An empty schema name, dropped afterwards."""
    name = "adk_memory_cli_fresh"
    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")

    async def drop() -> None:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        finally:
            await conn.close()

    arun(drop)
    yield name
    arun(drop)


def test_migrate_checks_applies_and_reports_versions(cli: Cli, fresh_schema: str) -> None:
    behind = cli("migrate", "--check", "--schema", fresh_schema, code=1)
    sessions, memory = len(SESSION_MIGRATIONS), len(MEMORY_MIGRATIONS)
    assert f"sessions   0        {sessions:<6}  behind: run `adk-memory migrate`" in behind.stdout
    # A note on the vectors (no dimension known yet), then the one error line.
    assert behind.stderr.splitlines()[-1].startswith("Error: ")
    assert "is not current" in behind.stderr and "Traceback" not in behind.stderr

    # Sessions alone need no pgvector: a sessions-only deployment migrates just those.
    only = cli("migrate", "--schema", fresh_schema, "--component", "sessions")
    assert f"sessions   {sessions:<7}  {sessions:<6}  migrated from 0" in only.stdout
    assert "memory" not in only.stdout

    both = cli("migrate", "--schema", fresh_schema)
    assert f"sessions   {sessions:<7}  {sessions:<6}  up to date" in both.stdout
    assert f"memory     {memory:<7}  {memory:<6}  migrated from 0" in both.stdout
    current = cli("migrate", "--check", "--schema", fresh_schema)
    assert current.stdout.count("up to date") == 2


def test_migrate_refuses_a_schema_newer_than_the_code(
    cli: Cli, fresh_schema: str, database_url: str
) -> None:
    cli("migrate", "--schema", fresh_schema)

    async def from_the_future() -> None:
        conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
        future = len(MEMORY_MIGRATIONS) + 1
        await conn.execute(
            f"INSERT INTO {fresh_schema}.schema_versions VALUES ('memory', {future})"
        )
        await conn.close()

    arun(from_the_future)
    checked = cli("migrate", "--check", "--schema", fresh_schema, code=1)
    assert "newer than this adk-memory" in checked.stdout
    assert_user_error(
        cli("migrate", "--schema", fresh_schema, code=1),
        f"at version {len(MEMORY_MIGRATIONS) + 1}",
        "Upgrade adk-memory",
    )


# --------------------------------------------------------------------------------- user errors


def test_user_errors_are_one_line_messages(cli: Cli, fresh_schema: str) -> None:
    assert_user_error(
        cli(
            "memories", "list", "--app", "a", "--user", "u", "--database-url", "mysql://x/y", code=1
        ),
        "Unsupported database URL scheme 'mysql'",
    )
    assert_user_error(
        cli(
            "sweep",
            "--database-url",
            "postgresql://nobody@127.0.0.1:9/none",
            code=1,
        ),
        "Could not connect to the database",
    )
    # Every command but migrate only checks the schema; an unmigrated one says what to run.
    assert_user_error(
        cli("memories", "list", "--app", "a", "--user", "u", "--schema", fresh_schema, code=1),
        "run `adk-memory migrate`",
    )
    assert_user_error(cli("memories", "list", code=1), "A scope has 1 to 5 keys")
    assert_user_error(
        cli("memories", "show", "not-an-id", "--app", "a", "--user", "u", code=1),
        "Not a memory id",
    )
    usage = cli("memories", "list", "--app", "a", "--user", "u", "--all-users", code=2)
    assert "--all-users needs --app and no --user" in usage.stderr
    for command in ("list", "export"):  # not "No memories." while the app's users have some
        app_alone = cli("memories", command, "--app", "a", code=2)
        assert "--app without --user: add --user USER" in app_alone.stderr
        assert "--all-users" in app_alone.stderr
    for command in (("list",), ("export",), ("search", "tea")):  # nor while the user has some
        user_alone = cli("memories", *command, "--user", "sam", code=2)
        assert "--user without --app: memories are kept per app; add --app APP" in (
            user_alone.stderr
        )
    bad_ttl = cli("sweep", "--session-ttl", "soon", code=2)
    assert "is not a duration" in bad_ttl.stderr
    bad_model = cli("worker", "--model", "no-such-model-anywhere", "--until-idle", code=2)
    assert "Invalid value for '--model'" in bad_model.stderr


# ------------------------------------------------------------------------------------ memories


def test_memories_commands_never_cross_a_scope(cli: Cli, database_url: str, tmp_path: Path) -> None:
    async def seed() -> dict[str, str]:
        async with services(database_url) as (_, memory):
            u1 = {"app_name": "shop", "user_id": "u1"}
            ids = {
                "tea": (await memory.create_memory("u1 likes tea", u1, topics=["drinks"])).id,
                "jazz": (await memory.create_memory("u1 likes jazz", u1)).id,
            }
            await memory.create_memory("u2 likes coffee", {"app_name": "shop", "user_id": "u2"})
            await memory.create_memory("other app fact", {"app_name": "blog", "user_id": "u1"})
            await memory.create_memory("u1 agent fact", {**u1, "agent": "helper"})
            await memory.update_memory(ids["tea"], u1, fact="u1 loves green tea")
            return ids

    ids = arun(seed)
    u1 = ("--app", "shop", "--user", "u1")

    table = cli("memories", "list", *u1).stdout
    assert "u1 loves green tea" in table and "u1 likes jazz" in table
    assert "coffee" not in table and "other app" not in table and "agent fact" not in table
    listed = json.loads(cli("memories", "list", *u1, "--json").stdout)
    assert [m["fact"] for m in listed] == ["u1 loves green tea", "u1 likes jazz"]
    assert all(m["scope"] == {"app_name": "shop", "user_id": "u1"} for m in listed)
    drinks = json.loads(cli("memories", "list", *u1, "--topic", "drinks", "--json").stdout)
    assert [m["id"] for m in drinks] == [ids["tea"]]
    limited = cli("memories", "list", *u1, "--limit", "1")
    assert "More than 1 memories" in limited.stderr
    agent = json.loads(cli("memories", "list", *u1, "--scope", "agent=helper", "--json").stdout)
    assert [m["fact"] for m in agent] == ["u1 agent fact"]

    app_wide = cli("memories", "list", "--app", "shop", "--all-users").stdout
    assert "USER" in app_wide and "u2 likes coffee" in app_wide and "u1 agent fact" in app_wide
    assert "other app" not in app_wide

    found = cli("memories", "search", "green tea", *u1).stdout
    assert found.splitlines()[0].split() == ["SCORE", "ID", "UPDATED", "TOPICS", "FACT"]
    assert "u1 loves green tea" in found.splitlines()[1]
    assert "coffee" not in found and "other app" not in found and "agent fact" not in found
    best = json.loads(cli("memories", "search", "jazz", *u1, "--limit", "1", "--json").stdout)
    assert [r["memory"]["fact"] for r in best] == ["u1 likes jazz"]
    nothing = cli("memories", "search", "jazz", "--app", "shop", "--user", "u2")
    assert "No memories match." in nothing.stderr

    shown = json.loads(cli("memories", "show", ids["tea"], *u1).stdout)
    assert (shown["fact"], shown["topics"]) == ("u1 loves green tea", ["drinks"])
    # Another user's call never sees u1's memory, even with its id.
    assert_user_error(
        cli("memories", "show", ids["tea"], "--app", "shop", "--user", "u2", code=1),
        f"No memory {ids['tea']}",
    )
    history = cli("memories", "revisions", ids["tea"], *u1).stdout
    assert "CREATED" in history and "UPDATED" in history and "u1 loves green tea" in history
    as_json = json.loads(cli("memories", "revisions", ids["tea"], *u1, "--json").stdout)
    assert [r["action"] for r in as_json] == ["CREATED", "UPDATED"]
    cli("memories", "revisions", ids["tea"], "--app", "shop", "--user", "u2", code=1)

    out = tmp_path / "shop.jsonl"
    exported = cli(
        "memories", "export", "--app", "shop", "--all-users", "--revisions", "-o", str(out)
    )
    assert "Exported 4 memories." in exported.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["scope"]["user_id"] for r in records} == {"u1", "u2"}
    assert all(r["scope"]["app_name"] == "shop" and r["revisions"] for r in records)
    only_u2 = [
        json.loads(line)
        for line in cli("memories", "export", "--app", "shop", "--user", "u2").stdout.splitlines()
    ]
    assert [r["fact"] for r in only_u2] == ["u2 likes coffee"]
    assert "revisions" not in only_u2[0]


# --------------------------------------------------------------------------------------- sweep


def test_sweep_deletes_only_what_expired(cli: Cli, database_url: str) -> None:
    async def seed_old() -> None:
        async with services(database_url) as (sessions, memory):
            await store_session(sessions, "shop", "u1", "old", ["hello"])
            scope = {"app_name": "shop", "user_id": "u1"}
            await memory.create_memory("fleeting", scope, ttl=timedelta(milliseconds=1))
            await memory.create_memory("lasting", scope)

    async def seed_new() -> None:
        async with services(database_url) as (sessions, _):
            await store_session(sessions, "shop", "u1", "new", ["hi again"])

    arun(seed_old)
    time.sleep(1.1)  # idleness is measured on the server's clock
    arun(seed_new)

    no_ttl = cli("sweep", "--no-memories").stdout
    assert "sessions: not swept (no --session-ttl)" in no_ttl and "memories:" not in no_ttl
    swept = cli("sweep", "--session-ttl", "1s", "--batch-size", "1").stdout
    assert "sessions: 1 expired session deleted" in swept
    assert "memories: 1 expired memory deleted" in swept
    again = cli("sweep", "--session-ttl", "1s").stdout
    assert "sessions: 0 expired" in again and "memories: 0 expired" in again

    async def left() -> tuple[list[str], list[str]]:
        async with services(database_url) as (sessions, memory):
            listed = await sessions.list_sessions(app_name="shop")
            page = await memory.list_memories({"app_name": "shop", "user_id": "u1"})
            return [s.id for s in listed.sessions], [m.fact for m in page.memories]

    assert arun(left) == (["new"], ["lasting"])


# -------------------------------------------------------------------------------------- worker


def test_worker_runs_the_jobs_others_enqueued(cli: Cli, database_url: str) -> None:
    llm = ScriptedLlm(
        [json.dumps({"facts": [{"fact": "The user is vegetarian.", "topic": "USER_PREFERENCES"}]})]
    )

    async def enqueue() -> None:
        async with services(database_url, llm=llm) as (_, memory):
            session = Session(
                id="s1", app_name="shop", user_id="u1", events=[said("I'm vegetarian", 1.0)]
            )
            await memory.generate_memories(session=session)

    arun(enqueue)
    ran = cli("worker", "--until-idle", "--concurrency", "2", obj=Overrides(llm=llm))
    assert ran.stdout.splitlines()[0] == "ran 1 generation job"
    listed = json.loads(cli("memories", "list", "--app", "shop", "--user", "u1", "--json").stdout)
    assert [m["fact"] for m in listed] == ["The user is vegetarian."]
    assert cli("worker", "--until-idle", obj=Overrides(llm=llm)).stdout.splitlines()[0] == (
        "ran 0 generation jobs"
    )


# ------------------------------------------------------------------------------------- process


def test_python_dash_m_runs_the_command(database_url: str, cli: Cli) -> None:
    env = {
        **os.environ,
        "ADK_MEMORY_DATABASE_URL": database_url,
        "ADK_MEMORY_SCHEMA": TEST_SCHEMA,
    }
    done = subprocess.run(
        [sys.executable, "-m", "adk_memory.cli", "migrate", "--check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()[1:]  # sessions, memory (and vectors once prepared)
    assert len(rows) >= 2 and all("up to date" in row for row in rows), done.stdout
