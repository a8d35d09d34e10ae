"""The Cloud Run deployment (deploy/): settings from the environment, the migration job, the app
(ADK's FastAPI app built by deploy.main, driven through ADK's REST API in-process) and the
memory worker, all against the test database with the ScriptedLlm agent in tests/agents."""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from types import ModuleType

import httpx
import pytest
from conftest import TEST_SCHEMA
from fastapi import FastAPI
from google.adk.errors.input_validation_error import InputValidationError
from rls_checks import all_rows

from adk_memory import PiiRedactor
from adk_memory.adk.services import memory_service_from_uri, session_service_from_uri
from adk_memory.adk.stack import configure
from adk_memory.db.migrations import MIGRATIONS

REPO = Path(__file__).resolve().parent.parent
AGENTS = Path(__file__).parent / "agents"
APP, USER = "memory_echo", "cloud-user"
SESSIONS = f"/apps/{APP}/users/{USER}/sessions"


@pytest.fixture
def deploy(monkeypatch) -> Iterator[ModuleType]:
    """The `deploy` package, imported as the image runs it (from the directory above it)."""
    monkeypatch.syspath_prepend(str(REPO))
    yield importlib.import_module("deploy")


@pytest.fixture
def environ(database_url: str, session_service, tmp_path: Path) -> dict[str, str]:
    """What Cloud Run would set: the database (no password in it), options, the agents, on
    emptied test tables."""
    skip = shutil.ignore_patterns("__pycache__")
    agents = shutil.copytree(AGENTS, tmp_path / "agents", ignore=skip)
    return {
        "ADK_MEMORY_DATABASE_URL": database_url.replace("postgresql+asyncpg://", "postgresql://"),
        "ADK_MEMORY_SCHEMA": TEST_SCHEMA,
        "ADK_MEMORY_OPTIONS": "pool_size=2",
        "ADK_MEMORY_MEMORY_OPTIONS": "retrieval_mode=text",
        "AGENTS_DIR": str(agents),
        "ADK_MEMORY_AUTH": "none",  # identity binding: tests/test_identity_http.py
    }


@pytest.fixture
def restore_imports() -> Iterator[None]:
    """ADK imports the agents directory's `services` and agent modules by bare name; drop them
    afterwards so no later test sees this test's copies."""
    path, modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        if name == "services" or name.split(".")[0] == APP:
            del sys.modules[name]


# ----------------------------------------------------------------------------------- settings


def test_settings_from_a_database_url(deploy):
    settings = importlib.import_module("deploy.settings")
    deployment = settings.Deployment.from_env(
        {
            "ADK_MEMORY_DATABASE_URL": "postgresql://agent@db.internal/adk?sslmode=require",
            "ADK_MEMORY_SCHEMA": "prod",
            "ADK_MEMORY_MODEL": "gemini-2.5-flash",
            "ADK_MEMORY_EMBEDDING_MODEL": "gemini-embedding-001",
            "ADK_MEMORY_SESSION_TTL": "30d",
            "ADK_MEMORY_OPTIONS": "pool_size=4",
            "ADK_MEMORY_MEMORY_OPTIONS": "top_k=5",
            "AGENTS_DIR": "/srv/agents",
        }
    )
    assert deployment.agents_dir == "/srv/agents"
    assert deployment.session_uri() == (
        "postgresql://agent@db.internal/adk?sslmode=require"
        "&auto_migrate=false&schema=prod&session_ttl=30d&pool_size=4"
    )
    assert deployment.memory_uri(auto_migrate="true") == (
        "postgresql://agent@db.internal/adk?sslmode=require&auto_migrate=true&worker=false"
        "&schema=prod&model=gemini-2.5-flash&embedding_model=gemini-embedding-001"
        "&pool_size=4&top_k=5"
    )
    assert deployment.artifact_uri is None and deployment.web_ui is False


def test_settings_for_cloud_sql_use_the_unix_socket(deploy):
    settings = importlib.import_module("deploy.settings")
    deployment = settings.Deployment.from_env(
        {"CLOUD_SQL_INSTANCE": "proj:europe-west1:memdb", "ADK_MEMORY_DATABASE_USER": "agent"}
    )
    assert deployment.database_url == (
        "postgresql://agent@/adk?host=/cloudsql/proj:europe-west1:memdb"
    )
    # The URI that ADK hands our factory parses, socket and all, with no password in it.
    service = memory_service_from_uri(deployment.memory_uri(), environ={})
    assert service.database.schema == "adk_memory"


def test_each_process_connects_as_its_own_role(deploy):
    """The app as the agent's user, the worker as the worker's, the migration and sweep jobs as
    maintenance's (`adk-memory db roles`); unset, the one ADK_MEMORY_DATABASE_USER."""
    settings = importlib.import_module("deploy.settings")
    users = {
        "ADK_MEMORY_AGENT_DATABASE_USER": "adk_agent",
        "ADK_MEMORY_WORKER_DATABASE_USER": "adk_worker",
        "ADK_MEMORY_MAINTENANCE_DATABASE_USER": "adk_maintenance",
    }
    cloud_sql = {"CLOUD_SQL_INSTANCE": "p:r:i", "CLOUD_SQL_READ_INSTANCE": "p:r:ro", **users}
    url = {"ADK_MEMORY_DATABASE_URL": "postgresql://adk:pw@db.internal:5432/adk", **users}
    for process in settings.PROCESSES:
        on_sql = settings.Deployment.from_env(cloud_sql, process)
        assert on_sql.database_url == f"postgresql://adk_{process}@/adk?host=/cloudsql/p:r:i"
        assert f"read_url=postgresql%3A%2F%2Fadk_{process}%40" in on_sql.memory_uri()
        by_url = settings.Deployment.from_env(url, process).database_url
        assert by_url == f"postgresql://adk_{process}@db.internal:5432/adk"
    one = settings.Deployment.from_env({"CLOUD_SQL_INSTANCE": "p:r:i"}, "worker")
    assert one.database_url.startswith("postgresql://adk@/")
    with pytest.raises(InputValidationError, match="Unknown process"):
        settings.Deployment.from_env(cloud_sql, "operator")


def test_the_runbook_creates_the_roles_and_runs_each_process_as_its_own():
    readme = (Path(__file__).parent.parent / "deploy" / "README.md").read_text()
    assert "--args=db,roles,--create-users" in readme
    commands = re.findall(
        r"gcloud run (?:deploy|jobs deploy|worker-pools deploy)[^`]*?(?=\n\s*\n|```)", readme
    )
    expected = {
        "deploy.migrate": "maintenance",
        "deploy.sweep": "maintenance",
        "deploy.worker": "worker",
        "adk-agent --image": "agent",
    }
    for marker, role in expected.items():
        found = [c for c in commands if marker in c]
        assert found, marker
        assert all(f"$(as {role})" in c for c in found), (marker, found)


def test_sessions_memory_and_the_worker_redact_alike(deploy):
    """`ADK_MEMORY_REDACT`, or `redact=` in either option string, gives the app's session and
    memory services and the worker (which builds its service from `memory_uri()`) one
    redactor."""
    settings = importlib.import_module("deploy.settings")
    base = {"CLOUD_SQL_INSTANCE": "p:r:i"}
    for extra in (
        {"ADK_MEMORY_REDACT": "pii"},
        {"ADK_MEMORY_SESSION_OPTIONS": "redact=pii"},
        {"ADK_MEMORY_MEMORY_OPTIONS": "redact=PII"},
        {"ADK_MEMORY_OPTIONS": "redact=pii"},
    ):
        deployment = settings.Deployment.from_env({**base, **extra})
        assert "redact=pii" in deployment.session_uri(), extra
        memory = memory_service_from_uri(deployment.memory_uri(), environ={})
        assert isinstance(memory.redactor, PiiRedactor), extra
    plain = settings.Deployment.from_env(base)
    assert "redact" not in plain.session_uri() + plain.memory_uri()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "No database: set ADK_MEMORY_DATABASE_URL"),
        (
            {"ADK_MEMORY_DATABASE_URL": "postgresql://a@h/d", "CLOUD_SQL_INSTANCE": "p:r:i"},
            "not both",
        ),
        ({"CLOUD_SQL_INSTANCE": "instance-only"}, "PROJECT:REGION:INSTANCE"),
        (
            {"CLOUD_SQL_INSTANCE": "p:r:i", "ADK_MEMORY_OPTIONS": "schema=a&schema=b"},
            "repeats an option",
        ),
        ({"CLOUD_SQL_INSTANCE": "p:r:i", "ADK_MEMORY_OPTIONS": "schema"}, "query string"),
        (
            {
                "CLOUD_SQL_INSTANCE": "p:r:i",
                "ADK_MEMORY_SCHEMA": "a",
                "ADK_MEMORY_SESSION_OPTIONS": "schema=b",
            },
            re.escape("schema is set in both $ADK_MEMORY_SCHEMA and $ADK_MEMORY_SESSION_OPTIONS"),
        ),
        (
            {
                "CLOUD_SQL_INSTANCE": "p:r:i",
                "ADK_MEMORY_MODEL": "gemini-2.5-flash",
                "ADK_MEMORY_MEMORY_OPTIONS": "model=gemini-2.5-pro",
            },
            "model is set in both",
        ),
        (
            {
                "CLOUD_SQL_INSTANCE": "p:r:i",
                "ADK_MEMORY_MEMORY_TTL": "30d",
                "ADK_MEMORY_MEMORY_OPTIONS": "memory_ttl=1d",
            },
            re.escape("memory_ttl is set in both $ADK_MEMORY_MEMORY_TTL and $ADK_MEMORY_MEMORY_"),
        ),
        ({"CLOUD_SQL_INSTANCE": "p:r:i", "ADK_WEB_UI": "yes please"}, "true or false"),
        (
            {
                "CLOUD_SQL_INSTANCE": "p:r:i",
                "ADK_MEMORY_SESSION_OPTIONS": "redact=pii",
                "ADK_MEMORY_MEMORY_OPTIONS": "redact=none",
            },
            re.escape("redact differs between the session and memory options (none and pii)"),
        ),
        (
            {
                "CLOUD_SQL_INSTANCE": "p:r:i",
                "ADK_MEMORY_REDACT": "pii",
                "ADK_MEMORY_SESSION_OPTIONS": "redact=pii",
            },
            re.escape("redact is set in both $ADK_MEMORY_REDACT and $ADK_MEMORY_SESSION_OPTIONS"),
        ),
    ],
)
def test_bad_settings_fail_at_start_up(deploy, env, message):
    settings = importlib.import_module("deploy.settings")
    with pytest.raises(InputValidationError, match=message):
        settings.Deployment.from_env(env)


# ---------------------------------------------------------------------------- migrate and app


@asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """The app as uvicorn runs it: lifespan started and stopped, requests over ASGI."""
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://agent.run.app") as client,
    ):
        yield client


async def test_the_app_serves_an_agent_with_sessions_and_memory_in_postgres(
    deploy, environ, restore_imports
):
    migrate = importlib.import_module("deploy.migrate")
    main = importlib.import_module("deploy.main")
    settings = importlib.import_module("deploy.settings")
    versions = await migrate.migrate(settings.Deployment.from_env(environ))
    assert versions == {name: len(steps) for name, steps in MIGRATIONS.items()}

    async with serving(main.create_app(environ)) as client:
        created = await client.post(SESSIONS, json={"state": {"tier": "gold"}})
        session_id = created.json()["id"]
        assert await _say(client, session_id, "I live in Lisbon.") == "echo: I live in Lisbon."
        stored = (await client.get(f"{SESSIONS}/{session_id}")).json()
        assert stored["state"] == {"tier": "gold"}
        assert [e["author"] for e in stored["events"]] == ["user", APP]
        # The turn went to memory; a new session's turn gets it preloaded.
        second = (await client.post(SESSIONS, json={})).json()["id"]
        reply = await _say(client, second, "Where do I live?")
        assert "Lisbon" in reply.split("recalled:")[1]

    # Another instance (or the same one after a restart) reads the same rows.
    async with serving(main.create_app(environ)) as client:
        listed = (await client.get(SESSIONS)).json()
        assert {s["id"] for s in listed} == {session_id, second}


async def _say(client: httpx.AsyncClient, session_id: str, text: str) -> str:
    body = {
        "app_name": APP,
        "user_id": USER,
        "session_id": session_id,
        "new_message": {"role": "user", "parts": [{"text": text}]},
    }
    response = await client.post("/run", json=body)
    response.raise_for_status()
    return response.json()[-1]["content"]["parts"][0]["text"]


async def _run(
    client: httpx.AsyncClient, route: str, user: str, session_id: str, **extra: object
) -> list[dict]:
    """One turn through `/run` or `/run_sse` with extra body fields; the events."""
    body = {
        "app_name": APP,
        "user_id": user,
        "session_id": session_id,
        "new_message": {"role": "user", "parts": [{"text": f"{user} says hello"}]},
        **extra,
    }
    response = await client.post(route, json=body)
    response.raise_for_status()
    if route == "/run":
        return response.json()
    lines = response.text.splitlines()
    return [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data:")]


@pytest.mark.parametrize("route", ["/run", "/run_sse"])
async def test_the_app_ignores_invocation_ids_that_resume_nothing_of_the_session(
    deploy, environ, restore_imports, route
):
    """A client-chosen invocation id is kept only when it names an invocation of the request's
    own session (a resume); for a new run, ADK makes the id, whatever the client sent."""
    migrate = importlib.import_module("deploy.migrate")
    main = importlib.import_module("deploy.main")
    settings = importlib.import_module("deploy.settings")
    await migrate.migrate(settings.Deployment.from_env(environ))
    other = "other-user"
    async with serving(main.create_app(environ)) as client:
        mine = (await client.post(SESSIONS, json={})).json()["id"]
        theirs = (await client.post(f"/apps/{APP}/users/{other}/sessions", json={})).json()["id"]
        [first] = {e["invocationId"] for e in await _run(client, route, USER, mine)}

        # Another user reuses that id, in either spelling ADK accepts: a fresh id each time.
        for key in ("invocation_id", "invocationId"):
            events = await _run(client, route, other, theirs, **{key: first})
            assert events and {e["invocationId"] for e in events}.isdisjoint({first})
        # A made-up id on one's own session is not kept either.
        events = await _run(client, route, USER, mine, invocation_id="e-made-up")
        assert "e-made-up" not in {e["invocationId"] for e in events}
        # An id of an invocation of the request's own session is passed on to ADK.
        events = await _run(client, route, USER, mine, invocation_id=first)
        assert {e["invocationId"] for e in events} == {first}


async def test_the_app_refuses_to_migrate_a_stale_schema(deploy, environ, restore_imports):
    """The app runs with auto_migrate=false: a schema the migration job has not brought up to
    date is an error on first use, not a silent DDL from a serving instance."""
    main = importlib.import_module("deploy.main")
    environ["ADK_MEMORY_SCHEMA"] = "never_migrated"
    async with serving(main.create_app(environ)) as client:
        response = await client.post(SESSIONS, json={})
    assert response.status_code == 500
    assert "adk-memory migrate" in response.text


# ------------------------------------------------------------------------------------- worker


async def test_the_worker_runs_what_the_app_enqueued(deploy, environ):
    settings = importlib.import_module("deploy.settings")
    worker = importlib.import_module("deploy.worker")
    migrate = importlib.import_module("deploy.migrate")
    # A key for the worker's start-up check: no job here calls the model.
    environ |= {"ADK_MEMORY_MODEL": "gemini-2.5-flash", "GOOGLE_API_KEY": "unused"}
    deployment = settings.Deployment.from_env(environ)
    await migrate.migrate(deployment)
    scope = {"app_name": APP, "user_id": USER}
    # The app's memory service (worker=false) only enqueues; direct facts without
    # consolidation need no model call, so nothing here reaches the network.
    async with memory_service_from_uri(deployment.memory_uri()) as app_memory:
        operation = await app_memory.generate_memories(
            facts=["Prefers window seats."], scope=scope, disable_consolidation=True
        )
        ran = await worker.run(deployment, until_idle=True, environ=environ)
        assert (ran.ran, ran.succeeded) == (1, 1)
        assert (await app_memory.get_operation(operation.id, operation.scope)).done
        listed = await app_memory.list_memories(scope=scope)
    assert [m.fact for m in listed.memories] == ["Prefers window seats."]


async def test_the_worker_needs_a_model(deploy, environ):
    settings = importlib.import_module("deploy.settings")
    worker = importlib.import_module("deploy.worker")
    with pytest.raises(InputValidationError, match="set ADK_MEMORY_MODEL"):
        await worker.run(settings.Deployment.from_env(environ), until_idle=True)


def test_a_misconfigured_worker_is_one_line_with_advice_it_accepts(deploy, environ, capsys):
    """Configuration errors are one `Error:` line, not a traceback, and the flag the
    credentials error advises is one the worker takes."""
    worker = importlib.import_module("deploy.worker")
    assert worker.main(["--until-idle"], environ) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert "ADK_MEMORY_MODEL" in err and "Traceback" not in err
    keyless = {**environ, "ADK_MEMORY_MODEL": "gemini-2.5-flash"}
    assert worker.main(["--until-idle"], keyless) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: No credentials") and err.count("\n") == 1, err
    assert "--skip-credential-check" in err
    # The advice works: the worker starts, finds nothing due and exits cleanly.
    assert worker.main(["--until-idle", "--skip-credential-check"], keyless) == 0
    out = capsys.readouterr().out
    assert "ran 0 generation jobs" in out


def test_a_misconfigured_job_says_so_in_one_line(deploy, environ, capsys):
    migrate = importlib.import_module("deploy.migrate")
    sweep = importlib.import_module("deploy.sweep")
    bad = {**environ, "ADK_MEMORY_OPTIONS": "pool_size=none"}
    for job in (migrate.main, sweep.main):
        arguments = () if job is migrate.main else ([],)
        assert job(*arguments, environ=bad) == 1
        err = capsys.readouterr().err
        assert err.startswith("Error: ") and err.count("\n") == 1, err


# -------------------------------------------------------------------------------------- sweep


async def _age(database_url: str, statement: str, *args: object) -> None:
    """Backdate rows (the sweeps compare with the server's clock): no test waits for time."""
    conn = await all_rows(database_url)
    try:
        await conn.execute(statement.format(schema=TEST_SCHEMA), *args)
    finally:
        await conn.close()


async def test_the_sweep_job_deletes_what_the_deployments_ttls_expire(
    deploy, environ, database_url, capsys
):
    """Idle sessions past ADK_MEMORY_SESSION_TTL, expired memories and generation jobs finished
    over a week ago go; everything else stays. A second run deletes nothing."""
    settings = importlib.import_module("deploy.settings")
    migrate = importlib.import_module("deploy.migrate")
    sweep = importlib.import_module("deploy.sweep")
    worker = importlib.import_module("deploy.worker")
    environ |= {"ADK_MEMORY_SESSION_TTL": "30d", "ADK_MEMORY_MODEL": "gemini-2.5-flash"}
    environ["GOOGLE_API_KEY"] = "unused"  # for the worker's start-up check; no model call
    deployment = settings.Deployment.from_env(environ)
    await migrate.migrate(deployment)
    scope = {"app_name": APP, "user_id": USER}
    async with (
        session_service_from_uri(deployment.session_uri()) as sessions,
        memory_service_from_uri(deployment.memory_uri()) as memory,
    ):
        for name in ("idle", "recent"):
            await sessions.create_session(app_name=APP, user_id=USER, session_id=name)
        await memory.create_memory("Fleeting.", scope, ttl=timedelta(milliseconds=1))
        await memory.create_memory("Lasting.", scope)
        operation = await memory.generate_memories(
            facts=["Prefers tea."], scope=scope, disable_consolidation=True
        )
        ran = await worker.run(deployment, until_idle=True, environ=environ)
        assert (ran.ran, ran.succeeded) == (1, 1)
    await _age(
        database_url,
        "UPDATE {schema}.sessions SET active_time = now() - interval '31 days' WHERE id = $1",
        "idle",
    )
    week_ago = "UPDATE {schema}.memory_jobs SET update_time = now() - interval '8 days'"
    await _age(database_url, week_ago)

    assert await asyncio.to_thread(sweep.main, [], environ) == 0  # as the job runs it
    assert capsys.readouterr().out.splitlines() == [
        "sessions: 1 deleted",
        "memories: 1 deleted",
        "jobs: 1 deleted",
    ]
    assert await sweep.sweep(deployment) == {"sessions": 0, "memories": 0, "jobs": 0}
    async with (
        session_service_from_uri(deployment.session_uri()) as sessions,
        memory_service_from_uri(deployment.memory_uri()) as memory,
    ):
        listed = await sessions.list_sessions(app_name=APP, user_id=USER)
        assert [s.id for s in listed.sessions] == ["recent"]
        facts = {m.fact for m in (await memory.list_memories(scope=scope)).memories}
        assert facts == {"Lasting.", "Prefers tea."}
        assert await memory.get_operation(operation.id, scope) is None  # its job was swept

    # No session TTL: sessions are not swept at all; a longer job retention keeps more.
    del environ["ADK_MEMORY_SESSION_TTL"]
    assert await asyncio.to_thread(sweep.main, ["--job-retention", "30d"], environ) == 0
    assert capsys.readouterr().out.splitlines()[0] == "sessions: not swept (no session TTL)"


# ------------------------------------------------------------------------------------ agents


def test_the_agents_configure_gets_the_deployments_database_and_options(deploy):
    """The app exports the database (with Cloud SQL, the socket URL it builds) and the options
    that have a variable, so an agent's `configure()` builds its stack on the app's database,
    never on an embedded one."""
    settings = importlib.import_module("deploy.settings")
    deployment = settings.Deployment.from_env(
        {
            "CLOUD_SQL_INSTANCE": "proj:europe-west1:memdb",
            "ADK_MEMORY_SESSION_OPTIONS": "schema=prod&session_ttl=30d",
            "ADK_MEMORY_MEMORY_OPTIONS": "schema=prod&model=gemini-2.5-pro&top_k=5",
        }
    )
    exported = deployment.agent_environment()
    assert exported == {
        "ADK_MEMORY_DATABASE_URL": "postgresql://adk@/adk?host=/cloudsql/proj:europe-west1:memdb",
        "ADK_MEMORY_SCHEMA": "prod",
        "ADK_MEMORY_SESSION_TTL": "30d",
        "ADK_MEMORY_MODEL": "gemini-2.5-pro",
    }
    stack = configure(environ=exported, run_worker=False)
    assert stack.data_dir is None  # a URL: no embedded server
    assert stack.session_service.database.schema == "prod"
    assert stack.session_service.session_ttl == timedelta(days=30)
    clash = settings.Deployment.from_env(
        {
            "CLOUD_SQL_INSTANCE": "p:r:i",
            "ADK_MEMORY_SESSION_OPTIONS": "schema=a",
            "ADK_MEMORY_MEMORY_OPTIONS": "schema=b",
        }
    )
    with pytest.raises(InputValidationError, match="schema differs"):
        clash.agent_environment()


def test_the_example_agent_is_built_with_configure(deploy, monkeypatch):
    """The image's example agent has the memory-context plugin, the generation trigger,
    compaction and the memory tools; it loads without credentials and connects to nothing."""
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    module = importlib.import_module("deploy.agents.assistant.agent")
    assert module.app.name == module.root_agent.name == "assistant"
    plugins = {plugin.name for plugin in module.app.plugins}
    assert {"memory_context", "memory_generation", "recursive_summarization"} <= plugins
    assert {tool.name for tool in module.root_agent.tools} >= {"create_memory", "load_memory"}
    assert not module.stack.memory_service.database.auto_migrate


def test_a_cloud_sql_read_replica_serves_the_apps_reads(deploy):
    """`CLOUD_SQL_READ_INSTANCE` (or `ADK_MEMORY_READ_DATABASE_URL`) gives both services, and
    the agents' `configure()`, the replica's socket URL as their read URL."""
    settings = importlib.import_module("deploy.settings")
    deployment = settings.Deployment.from_env(
        {"CLOUD_SQL_INSTANCE": "p:r:main", "CLOUD_SQL_READ_INSTANCE": "p:r:replica"}
    )
    replica = "postgresql://adk@/adk?host=/cloudsql/p:r:replica"
    for service in (
        session_service_from_uri(deployment.session_uri(), environ={}),
        memory_service_from_uri(deployment.memory_uri(), environ={}),
    ):
        assert service.database.has_replica
    exported = deployment.agent_environment()
    assert exported["ADK_MEMORY_READ_DATABASE_URL"] == replica
    stack = configure(environ=exported, run_worker=False)
    assert stack.session_service.database.has_replica
    assert stack.memory_service.database.has_replica
    with pytest.raises(InputValidationError, match="not both"):
        settings.Deployment.from_env(
            {
                "CLOUD_SQL_INSTANCE": "p:r:main",
                "CLOUD_SQL_READ_INSTANCE": "p:r:replica",
                "ADK_MEMORY_READ_DATABASE_URL": "postgresql://adk@replica/adk",
            }
        )
    with pytest.raises(InputValidationError, match="PROJECT:REGION:INSTANCE"):
        settings.Deployment.from_env(
            {"CLOUD_SQL_INSTANCE": "p:r:main", "CLOUD_SQL_READ_INSTANCE": "replica"}
        )


# --------------------------------------------------------------------------- memory inspector


def test_the_inspector_is_off_unless_configured(deploy):
    settings = importlib.import_module("deploy.settings")
    base = {"CLOUD_SQL_INSTANCE": "p:r:i"}
    assert settings.Deployment.from_env(base).inspector == "off"
    read_only = settings.Deployment.from_env({**base, "ADK_MEMORY_INSPECTOR": "read-only"})
    assert (read_only.inspector, read_only.inspector_token) == ("read-only", None)
    with pytest.raises(InputValidationError, match="must be one of off, read-only, writable"):
        settings.Deployment.from_env({**base, "ADK_MEMORY_INSPECTOR": "yes"})
    with pytest.raises(InputValidationError, match="ADK_MEMORY_INSPECTOR_TOKEN"):
        settings.Deployment.from_env({**base, "ADK_MEMORY_INSPECTOR": "writable"})


async def test_the_app_serves_the_inspector_only_when_configured(deploy, environ, restore_imports):
    main = importlib.import_module("deploy.main")
    async with serving(main.create_app(environ)) as client:
        session_id = (await client.post(SESSIONS, json={})).json()["id"]
        await _say(client, session_id, "I keep bees.")
        assert (await client.get("/memory-inspector/")).status_code == 404

    read_only = {**environ, "ADK_MEMORY_INSPECTOR": "read-only"}
    async with serving(main.create_app(read_only)) as client:
        page = await client.get("/memory-inspector/user", params={"app": APP, "user": USER})
        assert page.status_code == 200 and "I keep bees." in page.text
        assert "method=post" not in page.text
        refused = await client.post(
            "/memory-inspector/erase", data={"app": APP, "user": USER, "confirm": USER}
        )
        assert refused.status_code == 403

    writable = {**read_only, "ADK_MEMORY_INSPECTOR": "writable",
                "ADK_MEMORY_INSPECTOR_TOKEN": "shared-secret"}  # fmt: skip
    async with serving(main.create_app(writable)) as client:
        confirm = await client.get("/memory-inspector/erase", params={"app": APP, "user": USER})
        assert "value='shared-secret'" in confirm.text


async def test_the_app_serves_vertex_ais_rest_api_only_when_configured(
    deploy, environ, restore_imports
):
    settings = importlib.import_module("deploy.settings")
    with pytest.raises(InputValidationError, match="ADK_MEMORY_VERTEX_API must be true or false"):
        settings.Deployment.from_env({**environ, "ADK_MEMORY_VERTEX_API": "yes"})
    await importlib.import_module("deploy.migrate").migrate(settings.Deployment.from_env(environ))
    main = importlib.import_module("deploy.main")
    engine = f"/v1beta1/projects/p/locations/l/reasoningEngines/{APP}"
    async with serving(main.create_app(environ)) as client:
        assert (await client.get(f"{engine}/sessions")).status_code == 404
    served = {**environ, "ADK_MEMORY_VERTEX_API": "true"}
    async with serving(main.create_app(served)) as client:
        session_id = (await client.post(SESSIONS, json={})).json()["id"]
        listed = await client.get(f"{engine}/sessions", params={"filter": f'user_id="{USER}"'})
        assert [s["userId"] for s in listed.json()["sessions"]] == [USER]
        assert listed.json()["sessions"][0]["name"].endswith(session_id)
