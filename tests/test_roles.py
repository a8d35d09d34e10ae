"""Least-privilege roles on the real database: `adk-memory db roles` creates them (and LOGIN
users), then each process connects as its own user and does its job, and no more. The users
here are separate LOGIN roles in a schema of their own, made by the test server's owner role
(CREATEROLE, not a superuser; narrowing a wider existing user takes the server's superuser);
the whole grant table is checked against the tables the migrations actually create."""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from click.testing import CliRunner, Result
from conftest import said
from fastapi import FastAPI
from google.adk.agents.llm_agent import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions.session import Session
from google.adk.tools.preload_memory_tool import PreloadMemoryTool
from google.genai import types
from rls_checks import SESSION_TABLES
from sqlalchemy.engine import make_url

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.adk.erasure import erase_user
from adk_memory.adk.inspector import inspector_router
from adk_memory.cli import main
from adk_memory.db.roles import GRANTS, ROLES
from adk_memory.errors import DatabasePermissionError
from adk_memory.testing import HashEmbedder, ScriptedLlm

SCHEMA = "roles_test"
PREFIX = "t26_"
APP, USER = "app", "u1"
SCOPE = {"app_name": APP, "user_id": USER}
PASSWORDS = {role: f"pw-{role}-x" for role in ROLES}


def cli(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, input=stdin)


def login_url(database_url: str, role: str) -> str:
    """The test server's URL, as `role`'s LOGIN user."""
    url = make_url(database_url).set(username=f"{PREFIX}{role}_user", password=PASSWORDS[role])
    return url.render_as_string(hide_password=False)


def dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


@pytest.fixture(scope="module")
def urls(database_url: str) -> Iterator[dict[str, str]]:
    """Migrate the schema (vectors too) as the superuser, then create the roles and users."""
    migrated = cli(
        "migrate", "--database-url", database_url, "--schema", SCHEMA,
        "--embedding-dimensions", "64",
    )  # fmt: skip
    assert migrated.exit_code == 0, migrated.output
    env = {f"ADK_MEMORY_{role.upper()}_PASSWORD": PASSWORDS[role] for role in ROLES}
    made = cli(
        "db", "roles", "--database-url", database_url, "--schema", SCHEMA, "--prefix", PREFIX,
        "--create-users", env=env,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert "agent: t26_agent (login: t26_agent_user)" in made.stdout
    urls = {role: login_url(database_url, role) for role in ROLES}
    asyncio.run(seed(urls["maintenance"]))
    yield urls


async def seed(url: str) -> None:
    """One memory every test may find, whatever runs first."""
    async with memory_service(url) as memory:
        await memory.create_memory("The user prefers window seats.", SCOPE)


def memory_service(url: str, **options: Any) -> PostgresMemoryService:
    options.setdefault("llm", ScriptedLlm([]))
    options.setdefault("run_worker", False)
    return PostgresMemoryService(url, schema=SCHEMA, embedder=HashEmbedder(), **options)


@pytest.fixture
async def agent(urls: dict[str, str]) -> AsyncIterator[tuple[Any, Any]]:
    """The agent's services, as ADK's runtime builds them: auto_migrate on (the default), which
    must read the current schema and change nothing."""
    sessions = PostgresSessionService(urls["agent"], schema=SCHEMA)
    memory = memory_service(urls["agent"])
    async with sessions, memory:
        yield sessions, memory


async def test_every_table_the_migrations_create_has_a_grant_entry(urls, database_url):
    conn = await asyncpg.connect(dsn(database_url))
    try:
        rows = await conn.fetch(
            "SELECT tablename, tableowner FROM pg_tables WHERE schemaname = $1", SCHEMA
        )
    finally:
        await conn.close()
    tables = {r[0] for r in rows}
    assert tables == set(GRANTS), "a table without a grant entry (or an entry without a table)"
    assert {r[1] for r in rows} == {f"{PREFIX}maintenance"}
    for entry in GRANTS.values():
        assert set(entry) <= {"agent", "worker", "operator"}
        assert all(set(letters) <= set("SIUD") for letters in entry.values())


async def test_the_agent_runs_a_turn_searches_and_enqueues(agent, urls):
    sessions, memory = agent
    await memory.create_memory("The user sits by the aisle on trains.", SCOPE)
    llm = ScriptedLlm(["Noted: window seat."])
    runner = Runner(
        app_name=APP,
        agent=LlmAgent(name="assistant", model=llm, tools=[PreloadMemoryTool()]),
        session_service=sessions,
        memory_service=memory,
    )
    session = await sessions.create_session(app_name=APP, user_id=USER, state={"user:tier": "x"})
    message = types.Content(role="user", parts=[types.Part(text="Book my seats please")])
    replies = [
        e async for e in runner.run_async(user_id=USER, session_id=session.id, new_message=message)
    ]
    assert replies[-1].content.parts[0].text == "Noted: window seat."
    assert "window seats" in str(llm.requests[0].contents)  # preloaded by the memory tool
    found = await memory.search_memory(app_name=APP, user_id=USER, query="seats")
    assert "The user prefers window seats." in [m.content.parts[0].text for m in found.memories]
    stored = await sessions.get_session(app_name=APP, user_id=USER, session_id=session.id)
    operation = await memory.generate_memories(session=stored)
    assert not operation.done  # queued for the worker
    await sessions.delete_session(app_name=APP, user_id=USER, session_id=session.id)


async def test_the_agent_cannot_erase_purge_sweep_prune_or_migrate(agent, urls):
    sessions, memory = agent
    await sessions.create_session(app_name=APP, user_id="victim")
    with pytest.raises(DatabasePermissionError, match="t26_agent_user"):
        await erase_user(
            app_name=APP, user_id="victim", session_service=sessions, memory_service=memory
        )
    with pytest.raises(DatabasePermissionError):
        await sessions.erase_user(app_name=APP, user_id="victim")
    with pytest.raises(DatabasePermissionError):
        await memory.purge(SCOPE)
    with pytest.raises(DatabasePermissionError):
        await memory.sweep_expired()
    with pytest.raises(DatabasePermissionError):
        await memory.sweep_jobs()
    with pytest.raises(DatabasePermissionError):
        await memory.prune_memories(APP, user_id=USER)
    assert await sessions.get_session(app_name=APP, user_id="victim", session_id="x") is None
    assert (await sessions.list_sessions(app_name=APP, user_id="victim")).sessions


def test_only_maintenance_migrates(urls):
    # The agent, even a schema of its own: refused, and the role named.
    migrated = cli("migrate", "--database-url", urls["agent"], "--schema", "roles_elsewhere")
    assert migrated.exit_code == 1 and "t26_agent_user" in migrated.output
    again = cli("migrate", "--database-url", urls["maintenance"], "--schema", SCHEMA)
    assert again.exit_code == 0, again.output
    where = ("--database-url", urls["maintenance"], "--schema", SCHEMA, "--prefix", PREFIX)
    regrant = cli("db", "roles", *where)  # the re-run after a migration, by maintenance itself
    assert regrant.exit_code == 0, regrant.output


async def test_the_deployments_migration_job_runs_as_maintenance_and_regrants(
    urls, database_url, monkeypatch
):
    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent))
    settings = importlib.import_module("deploy.settings")
    migrate = importlib.import_module("deploy.migrate")
    environ = {
        "ADK_MEMORY_DATABASE_URL": database_url.replace("+asyncpg", ""),
        "ADK_MEMORY_MAINTENANCE_DATABASE_USER": f"{PREFIX}maintenance_user",
        "ADK_MEMORY_SCHEMA": SCHEMA,
        "AGENTS_DIR": ".",
    }
    deployment = settings.Deployment.from_env(environ, "maintenance")
    assert f"{PREFIX}maintenance_user@" in deployment.database_url
    versions = await migrate.migrate(deployment, roles_prefix=PREFIX)
    assert versions["roles"] == len(GRANTS)


@pytest.mark.parametrize(
    "statement",
    [
        "TRUNCATE {s}.memories",
        "DROP TABLE {s}.memory_revisions",
        "ALTER TABLE {s}.memories ADD COLUMN x int",
        "CREATE TABLE {s}.mine (x int)",
        "CREATE INDEX ON {s}.events (seq)",
        "DELETE FROM {s}.memory_revisions",
        "UPDATE {s}.memory_revisions SET fact = ''",
        "DELETE FROM {s}.memory_jobs",
        "INSERT INTO {s}.erasures (id, app_name, counts, start_time) "
        "VALUES (gen_random_uuid(), 'a', '{{}}', now())",
        "DELETE FROM {s}.memory_tombstones",
        "INSERT INTO {s}.memory_tombstone_key (key) VALUES (decode(repeat('00', 32), 'hex'))",
        "DELETE FROM {s}.schema_versions",
    ],
)
async def test_the_agent_role_is_refused_in_raw_sql(urls, statement):
    conn = await asyncpg.connect(dsn(urls["agent"]))
    try:
        with pytest.raises(asyncpg.exceptions.InsufficientPrivilegeError):
            await conn.execute(statement.format(s=SCHEMA))
    finally:
        await conn.close()


async def test_the_worker_runs_a_generation_job(agent, urls, database_url):
    _, memory = agent
    conn = await asyncpg.connect(dsn(database_url))  # an empty queue: other tests enqueue too
    try:
        await conn.execute(f"DELETE FROM {SCHEMA}.memory_jobs")
    finally:
        await conn.close()
    session = Session(id="s-gen", app_name=APP, user_id="u-gen", events=[said("I like tea")])
    await memory.generate_memories(session=session)
    fact = '{"facts": [{"fact": "The user likes tea.", "topic": "USER_PREFERENCES"}]}'
    worker = memory_service(urls["worker"], llm=ScriptedLlm([fact]))
    async with worker:
        assert await worker.worker.run_until_idle() == 1
        scope = {"app_name": APP, "user_id": "u-gen"}
        facts = [m.fact for m in (await worker.list_memories(scope)).memories]
        assert "The user likes tea." in facts
        with pytest.raises(DatabasePermissionError):
            await worker.sweep_jobs()


async def test_the_operator_reads_and_cannot_write(urls):
    conn = await asyncpg.connect(dsn(urls["operator"]))
    try:
        for table in GRANTS:
            if table == "memory_tombstone_key":
                with pytest.raises(asyncpg.exceptions.InsufficientPrivilegeError):
                    await conn.fetch(f"SELECT * FROM {SCHEMA}.{table}")
            else:
                await conn.fetch(f"SELECT * FROM {SCHEMA}.{table} LIMIT 1")
        for statement in (
            f"DELETE FROM {SCHEMA}.memories",
            f"UPDATE {SCHEMA}.sessions SET state = '{{}}'",
            f"INSERT INTO {SCHEMA}.memory_opt_outs (user_hash) VALUES ('\\x00')",
            f"TRUNCATE {SCHEMA}.events",
        ):
            with pytest.raises(asyncpg.exceptions.InsufficientPrivilegeError):
                await conn.execute(statement)
    finally:
        await conn.close()
    memory = memory_service(urls["operator"])
    async with memory:
        assert (await memory.list_memories(SCOPE)).memories is not None
        with pytest.raises(DatabasePermissionError, match="t26_operator_user"):
            await memory.create_memory("An operator cannot write this.", SCOPE)


async def test_row_level_security_polices_the_agent_and_opens_to_operator_and_maintenance(
    agent, urls
):
    """Issue 26's "done when": an unfiltered SELECT on each session table as the agent role sees
    only the gated user's rows (none ungated, none for an app-wide gate: the agent is strict);
    a write for another user is a typed error; operators read and maintenance reaches every
    row by their own policies (`db roles` re-applies them)."""
    sessions, _ = agent
    for user in ("rls-a", "rls-b"):
        made = await sessions.create_session(app_name=APP, user_id=user, state={"user:k": user})
        await sessions.append_event(made, said(f"{user} speaks"))
    gate = f"{SCHEMA}.act_as($1, $2)"
    conn = await asyncpg.connect(dsn(urls["agent"]))
    try:
        for table in SESSION_TABLES:
            who = "NULL" if table == "app_states" else "user_id"
            sql = f"SELECT DISTINCT {who} FROM {SCHEMA}.{table} WHERE {gate}"
            assert {r[0] for r in await conn.fetch(sql, APP, "rls-a")} <= {"rls-a", None}
            assert await conn.fetch(f"SELECT * FROM {SCHEMA}.{table}") == [], table
        app_wide = f"SELECT count(*) FROM {SCHEMA}.sessions WHERE {SCHEMA}.act_as_app($1)"
        assert await conn.fetchval(app_wide, APP) == 0
    finally:
        await conn.close()
    steal = f"UPDATE {SCHEMA}.user_states SET user_id = 'rls-b' WHERE user_id = 'rls-a' AND {gate}"
    with pytest.raises(DatabasePermissionError, match="row-level security"):
        await sessions.database.run(lambda conn: conn.execute(steal, APP, "rls-a"))
    for role in ("operator", "maintenance"):
        conn = await asyncpg.connect(dsn(urls[role]))
        try:
            seen = f"SELECT count(DISTINCT user_id) FROM {SCHEMA}.events WHERE user_id LIKE 'rls-%'"
            assert await conn.fetchval(seen) == 2, role
        finally:
            await conn.close()


async def test_maintenance_does_everything(urls, database_url):
    sessions = PostgresSessionService(urls["maintenance"], schema=SCHEMA)
    memory = memory_service(urls["maintenance"])
    async with sessions, memory:
        await sessions.create_session(app_name=APP, user_id="gone")
        counts = await erase_user(
            app_name=APP, user_id="gone", session_service=sessions, memory_service=memory
        )
        assert counts["sessions"] == 1
        await memory.purge({"app_name": APP, "user_id": "other"})
        await memory.sweep_expired()
        await memory.sweep_jobs()
        await memory.prune_memories(APP, user_id=USER)
        await sessions.sweep_expired_sessions()
    # A table a later migration adds is the group's, so the re-run of `db roles` (by the
    # maintenance user itself) covers it; the run changes nothing else.
    conn = await asyncpg.connect(dsn(urls["maintenance"]))
    try:
        await conn.execute(f"CREATE TABLE {SCHEMA}.later (x int)")
        owner = await conn.fetchval("SELECT tableowner FROM pg_tables WHERE tablename = 'later'")
        assert owner == f"{PREFIX}maintenance"
    finally:
        await conn.execute(f"DROP TABLE IF EXISTS {SCHEMA}.later")
        await conn.close()


def test_dry_run_prints_the_sql_and_masks_passwords(urls, database_url):
    shown = cli(
        "db", "roles", "--database-url", database_url, "--schema", SCHEMA, "--prefix", PREFIX,
        "--create-users", "--passwords-from-stdin", "--dry-run",
        stdin="".join(f"{role}=secret-{role}\n" for role in ROLES),
    )  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert "secret-" not in shown.output
    assert "ALTER ROLE \"t26_agent_user\" LOGIN PASSWORD '********';" in shown.stdout
    assert f"GRANT SELECT, INSERT ON {SCHEMA}." not in shown.stdout  # schema is quoted
    assert f'GRANT SELECT ON "{SCHEMA}"."erasures" TO "t26_operator";' in shown.stdout
    assert "TRUNCATE" not in shown.stdout


def test_passwords_never_come_from_the_command_line(urls, database_url):
    missing = cli(
        "db", "roles", "--database-url", database_url, "--schema", SCHEMA, "--prefix", PREFIX,
        "--create-users", "--dry-run", env={k: "" for k in os.environ if k.endswith("_PASSWORD")},
    )  # fmt: skip
    assert missing.exit_code == 1 and "ADK_MEMORY_AGENT_PASSWORD" in missing.output
    bad = cli("db", "roles", "--database-url", database_url, "--user", "root=x", "--dry-run")
    assert bad.exit_code == 1 and "ROLE=NAME" in bad.output


def test_the_operator_lists_and_exports(urls):
    where = ("--database-url", urls["operator"], "--schema", SCHEMA)
    listed = cli("memories", "list", *where, "--app", APP, "--user", USER)
    assert listed.exit_code == 0 and "window seats" in listed.stdout, listed.output
    exported = cli("export", "vertex-jsonl", *where, "--app", APP, "--all-users", "--sessions")
    assert exported.exit_code == 0 and "window seats" in exported.stdout, exported.output
    erased = cli("erase", *where, "--app", APP, "--user", USER, "--yes")
    assert erased.exit_code == 1 and "t26_operator_user" in erased.output


async def test_a_wider_existing_user_is_narrowed_to_its_role(urls, superuser_url):
    """A user made by `gcloud sql users create` is a cloudsqlsuperuser with CREATEROLE and
    CREATEDB: made a member of a role with --user, it keeps only that role (narrowing it takes
    an administrator: the test server's superuser)."""
    database_url = superuser_url
    conn = await asyncpg.connect(dsn(database_url))
    try:
        await conn.execute("DROP ROLE IF EXISTS t26_wide")
        await conn.execute(
            "CREATE ROLE t26_wide LOGIN CREATEDB CREATEROLE IN ROLE pg_read_all_data"
        )
        where = ("--database-url", database_url, "--schema", SCHEMA, "--prefix", PREFIX)
        shown = await asyncio.to_thread(
            cli, "db", "roles", *where, "--user", "agent=t26_wide", "--dry-run"
        )
        assert 'REVOKE "pg_read_all_data" FROM "t26_wide";' in shown.stdout, shown.output
        done = await asyncio.to_thread(cli, "db", "roles", *where, "--user", "agent=t26_wide")
        assert done.exit_code == 0, done.output
        row = await conn.fetchrow(
            "SELECT rolcreatedb, rolcreaterole, array(SELECT g.rolname FROM pg_auth_members m "
            "JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid) AS groups "
            "FROM pg_roles r WHERE rolname = 't26_wide'"
        )
        assert (row[0], row[1], row[2]) == (False, False, ["t26_agent"])
        await conn.execute("ALTER ROLE t26_wide SUPERUSER")
        refused = await asyncio.to_thread(cli, "db", "roles", *where, "--user", "agent=t26_wide")
        assert refused.exit_code == 1 and "superuser" in refused.output
    finally:
        await conn.execute("DROP OWNED BY t26_wide; DROP ROLE IF EXISTS t26_wide")
        await conn.close()


async def test_an_in_process_worker_under_the_agent_role_stops_and_says_why(urls, caplog):
    memory = memory_service(urls["agent"], run_worker=True)
    async with memory:
        session = Session(id="s-bg", app_name=APP, user_id="u-bg", events=[said("Hi")])
        await memory.generate_memories(session=session)  # starts the in-process worker
        deadline = asyncio.get_running_loop().time() + 60
        while "Memory worker stopped" not in caplog.text:
            assert asyncio.get_running_loop().time() < deadline, caplog.text
            await asyncio.sleep(0.05)
    assert "t26_agent_user" in caplog.text and "adk-memory worker" in caplog.text


async def test_the_operator_browses_the_read_only_inspector(urls):
    sessions = PostgresSessionService(urls["operator"], schema=SCHEMA, auto_migrate=False)
    memory = memory_service(urls["operator"], auto_migrate=False)
    async with sessions, memory:
        app = FastAPI()
        app.include_router(inspector_router(memory, session_service=sessions))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            home = await client.get("/memory-inspector/", params={"app": APP})
            assert home.status_code == 200, home.text
            page = await client.get("/memory-inspector/user", params={"app": APP, "user": USER})
            assert page.status_code == 200 and "window seats" in page.text, page.text


async def test_the_agents_writable_inspector_cannot_erase(agent):
    sessions, memory = agent
    await sessions.create_session(app_name=APP, user_id="kept")
    app = FastAPI()
    app.include_router(inspector_router(memory, session_service=sessions, writable=True, token="t"))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        with pytest.raises(DatabasePermissionError, match="t26_agent_user"):
            await client.post(
                "/memory-inspector/erase",
                data={"app": APP, "user": "kept", "confirm": "kept", "token": "t"},
                headers={"origin": "http://testserver", "sec-fetch-site": "same-origin"},
            )
    assert (await sessions.list_sessions(app_name=APP, user_id="kept")).sessions
