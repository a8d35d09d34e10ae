"""adk-memory's URI schemes in ADK's service registry: what `adk web` / `api_server` / `run` build
from `--session_service_uri` and `--memory_service_uri`, options, secrets and errors."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from datetime import timedelta

import click
import httpx
import pytest
from conftest import TEST_SCHEMA
from google.adk.cli import service_registry
from google.adk.cli.fast_api import get_fast_api_app
from google.adk.cli.service_registry import ServiceRegistry
from google.adk.cli.utils.service_factory import (
    create_memory_service_from_options,
    create_session_service_from_options,
)
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.genai import types

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.adk.services import (
    SCHEMES,
    collect_services,
    memory_service_from_uri,
    register,
    session_service_from_uri,
)
from adk_memory.adk.stack import configure
from adk_memory.db.embedded import stop_embedded
from adk_memory.env import (
    DATA_DIR_ENV,
    DATABASE_PASSWORD_ENV,
    DATABASE_PASSWORD_FILE_ENV,
    EMBEDDING_MODEL_ENV,
    MEMORY_TTL_ENV,
    MODEL_ENV,
    SCHEMA_ENV,
    SESSION_TTL_ENV,
)
from adk_memory.memory import GeminiEmbedder


@pytest.fixture
def plain_url(database_url: str) -> str:
    """The test server as users write it: `postgresql://`, Unix socket in `?host=`."""
    return database_url.replace("postgresql+asyncpg://", "postgresql://")


def with_options(url: str, options: str) -> str:
    return f"{url}&{options}" if "?" in url else f"{url}?{options}"


def adk_registry() -> ServiceRegistry:
    """A registry holding only ADK's built-in factories, as `adk web` starts with."""
    registry = ServiceRegistry()
    service_registry._register_builtin_services(registry)
    return registry


# ------------------------------------------------------------------------------- registration


def test_adk_alone_never_builds_ours_for_a_postgresql_uri(plain_url):
    """ADK 2.x maps postgresql:// to its own DatabaseSessionService on SQLAlchemy's default
    PostgreSQL driver, psycopg 3 (not asyncpg): with psycopg installed that is ADK's service on
    ADK's tables, without it the URI users paste fails. postgresql+asyncpg:// gets ADK's own
    tables too (its fallback); memory has no PostgreSQL scheme at all. CI runs this with and
    without psycopg."""
    registry = adk_registry()
    if importlib.util.find_spec("psycopg") is None:
        with pytest.raises(ValueError, match="Database related module not found"):
            registry.create_session_service(plain_url)
    else:
        assert isinstance(registry.create_session_service(plain_url), DatabaseSessionService)
    asyncpg_uri = plain_url.replace("postgresql://", "postgresql+asyncpg://")
    assert registry.create_session_service(asyncpg_uri) is None  # ADK falls back to its own
    assert registry.create_memory_service(plain_url) is None


def test_register_makes_every_scheme_ours(plain_url):
    registry = adk_registry()
    register(registry)
    register(registry)  # idempotent
    for scheme in ("postgresql", "postgres", "postgresql+asyncpg"):
        uri = plain_url.replace("postgresql", scheme, 1)
        assert isinstance(registry.create_session_service(uri), PostgresSessionService)
        assert isinstance(registry.create_memory_service(uri), PostgresMemoryService)
    assert set(SCHEMES) == {"postgresql", "postgres", "postgresql+asyncpg", "adk-memory"}


async def test_adk_builds_our_services_from_cli_options(plain_url, session_service):
    """The path `adk web` takes (ADK's service factory on the global registry), end to end."""
    register()
    uri = with_options(plain_url, f"schema={TEST_SCHEMA}")
    sessions = create_session_service_from_options(base_dir="/nonexistent", session_service_uri=uri)
    memory = create_memory_service_from_options(base_dir="/nonexistent", memory_service_uri=uri)
    assert isinstance(sessions, PostgresSessionService)
    assert isinstance(memory, PostgresMemoryService)
    async with sessions, memory:
        created = await sessions.create_session(app_name="app", user_id="u", session_id="s1")
        await memory.add_memory(
            app_name="app", user_id="u", memories=[_entry("The user's cat is called Miso.")]
        )
        found = await memory.search_memory(app_name="app", user_id="u", query="cat name")
    stored = await session_service.get_session(app_name="app", user_id="u", session_id="s1")
    assert stored is not None and stored.id == created.id
    assert "Miso" in found.memories[0].content.parts[0].text


def _entry(text: str) -> MemoryEntry:
    return MemoryEntry(content=types.Content(role="user", parts=[types.Part(text=text)]))


# ------------------------------------------------------------------------------ services.yaml

SERVICES_YAML = """\
services:
  - scheme: {scheme}
    type: session
    class: adk_memory.PostgresSessionService
  - scheme: {scheme}
    type: memory
    class: adk_memory.PostgresMemoryService
"""


@pytest.fixture
def agents_dir(tmp_path, monkeypatch):
    """An empty agents directory. ADK's process-wide service registry is fresh for the test and
    restored after it, so what a services.yaml registers stays in the test, as does the entry
    ADK adds to `sys.path`."""
    monkeypatch.setattr(service_registry, "_service_registry_instance", None)
    monkeypatch.setattr(sys, "path", list(sys.path))
    agents = tmp_path / "agents"
    agents.mkdir()
    return agents


def serve(agents_dir, session_uri: str, memory_uri: str, **options):
    """ADK's app factory, as `adk api_server` calls it."""
    return get_fast_api_app(
        agents_dir=str(agents_dir),
        session_service_uri=session_uri,
        memory_service_uri=memory_uri,
        artifact_service_uri="memory://",
        use_local_storage=False,
        web=False,
        **options,
    )


async def test_services_yaml_builds_our_services_through_adks_app(
    plain_url, agents_dir, session_service
):
    """A services.yaml naming our classes, loaded by ADK's app factory: ADK constructs them with
    `uri=` (plus `agents_dir` and its `session_db_kwargs`), the URIs' options are parsed as for
    the registered schemes, and the app serves sessions from our tables."""
    (agents_dir / "services.yaml").write_text(SERVICES_YAML.format(scheme="postgresql"))
    session_uri = with_options(plain_url, f"schema={TEST_SCHEMA}&session_ttl=12h")
    memory_uri = with_options(plain_url, f"schema={TEST_SCHEMA}&retrieval_mode=text&top_k=1")
    with collect_services() as built:
        app = serve(agents_dir, session_uri, memory_uri, session_db_kwargs={"pool_size": 3})
    [sessions] = [s for s in built if isinstance(s, PostgresSessionService)]
    [memory] = [s for s in built if isinstance(s, PostgresMemoryService)]
    assert len(built) == 2
    assert sessions.session_ttl == timedelta(hours=12)
    assert memory.config.retrieval.mode == "text"
    transport = httpx.ASGITransport(app=app)
    try:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://agent") as client,
        ):
            body = {"session_id": "s1", "state": {"city": "Lyon"}}
            (await client.post("/apps/app/users/u/sessions", json=body)).raise_for_status()
        assert (await sessions.database.engine()).pool.size() == 3  # session_db_kwargs
        facts = [_entry("Likes green tea."), _entry("Green tea at 80 degrees.")]
        await memory.add_memory(app_name="app", user_id="u", memories=facts)
        found = await memory.search_memory(app_name="app", user_id="u", query="green tea")
        assert len(found.memories) == 1  # top_k
    finally:
        for service in built:
            await service.close()
    stored = await session_service.get_session(app_name="app", user_id="u", session_id="s1")
    assert stored is not None and stored.state == {"city": "Lyon"}


@pytest.mark.parametrize(
    ("scheme", "options", "message"),
    [
        ("pgmemory", "schema=x", "Unsupported memory service URI scheme 'pgmemory'"),
        ("postgresql", "top_kk=1", "Unknown parameter 'top_kk'.*Accepted: auto_migrate"),
    ],
)
def test_a_bad_services_yaml_uri_stops_adks_app_with_our_message(
    plain_url, agents_dir, scheme, options, message
):
    (agents_dir / "services.yaml").write_text(SERVICES_YAML.format(scheme=scheme))
    uri = with_options(plain_url.replace("postgresql", scheme, 1), options)
    with pytest.raises(click.ClickException, match=message):
        serve(agents_dir, uri, uri)


def test_the_constructors_take_a_service_uri(plain_url):
    """`uri=` means what it means to `*_from_uri` (one parser): the options, the environment's
    variables, the pool; ADK's `agents_dir` is ignored, its `session_db_kwargs` reach the
    engine."""
    uri = with_options(plain_url, "schema=from_uri&session_ttl=1h&pool_size=2")
    sessions = PostgresSessionService(uri=uri, agents_dir="/agents", pool_pre_ping=True)
    assert sessions.database.schema == "from_uri"
    assert sessions.session_ttl == timedelta(hours=1)
    assert sessions.database._engine_kwargs == {"pool_size": 2, "pool_pre_ping": True}
    memory = PostgresMemoryService(uri="adk-memory://?top_k=4&worker=false", agents_dir="/a")
    assert memory.config.retrieval.top_k == 4
    assert memory.database._data_dir == memory_service_from_uri("adk-memory://").database._data_dir


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda uri: PostgresSessionService(uri=uri, schema="x"), InputValidationError,
         "Pass either uri or schema, not both"),
        (lambda uri: PostgresMemoryService(uri, uri=uri), InputValidationError,
         "Pass either uri or database_url"),
        (lambda uri: PostgresSessionService(uri=f"{uri}&pool_size=2", pool_size=3),
         InputValidationError, "pool_size given both in the URI and as arguments"),
        (lambda uri: PostgresMemoryService(uri=uri, top_k=1), InputValidationError,
         "Unexpected memory service arguments: top_k"),
        (lambda uri: PostgresSessionService(uri, agents_dir="/agents"), TypeError,
         "unexpected keyword arguments: agents_dir"),
        (lambda uri: PostgresMemoryService(uri=uri.replace("postgresql", "mysql")),
         InputValidationError, "Unsupported memory service URI scheme 'mysql'"),
    ],
)  # fmt: skip
def test_bad_constructor_uris_are_clear_errors(plain_url, build, error, message):
    with pytest.raises(error, match=message):
        build(plain_url)


# ------------------------------------------------------------------------------------ options


async def test_session_options_reach_the_service_and_leave_the_driver_url(
    plain_url, session_service
):
    uri = with_options(
        plain_url,
        f"schema={TEST_SCHEMA}&pool_size=2&max_overflow=0&session_ttl=12h"
        "&event_cache_size=0&redact=pii&sslmode=disable",
    )
    async with session_service_from_uri(uri) as service:
        assert service.session_ttl == timedelta(hours=12)
        assert service.database.schema == TEST_SCHEMA
        session = await service.create_session(app_name="app", user_id="u")
        event = Event(
            author="user",
            invocation_id="i1",
            content=types.Content(role="user", parts=[types.Part(text="mail me: a@b.example")]),
        )
        await service.append_event(session, event)
        engine = await service.database.engine()
        assert engine.pool.size() == 2
        # Only the connection's parameters are left: the host in the engine's URL, sslmode
        # translated by the one URL parser (adk_memory.db.urls) into asyncpg's arguments.
        assert set(engine.url.query) == {"host"}
    stored = await session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored.events[0].content.parts[0].text == "mail me: [EMAIL]"


async def test_memory_options_configure_retrieval_ttl_and_worker(plain_url, make_memory_service):
    uri = with_options(
        plain_url,
        f"schema={TEST_SCHEMA}&retrieval_mode=text&top_k=1&memory_ttl=7d&revision_ttl=30d"
        "&text_search_language=simple&min_similarity=0.4&min_text_relevance=0.2"
        "&temporal_cues=false",
    )
    async with memory_service_from_uri(uri) as memory:
        assert memory.embedder is None and memory.llm is None  # raw events, full text
        assert memory.config.retrieval.mode == "text"
        assert memory.config.retrieval.top_k == 1
        assert memory.config.retrieval.text_search_language == "simple"
        assert memory.config.retrieval.min_similarity == 0.4
        assert memory.config.retrieval.min_text_relevance == 0.2
        assert memory.config.retrieval.temporal_cues is False
        assert memory.config.ttl.default_ttl == timedelta(days=7)
        assert memory.config.ttl.revision_ttl == timedelta(days=30)
        await memory.add_memory(
            app_name="app",
            user_id="u",
            memories=[_entry("Likes green tea."), _entry("Green tea at 80 degrees.")],
        )
        found = await memory.search_memory(app_name="app", user_id="u", query="green tea")
        assert len(found.memories) == 1  # top_k
        scope = {"app_name": "app", "user_id": "u"}
        listed = await memory.list_memories(scope=scope)
        assert all(m.expire_time is not None for m in listed.memories)


async def test_worker_false_leaves_generation_to_a_standalone_worker(
    plain_url, make_memory_service
):
    """An app instance with `worker=false` only enqueues: the job waits for the worker."""
    uri = with_options(plain_url, f"schema={TEST_SCHEMA}&model=gemini-2.5-flash&worker=false")
    async with memory_service_from_uri(uri) as memory:
        scope = {"app_name": "app", "user_id": "u"}
        operation = await memory.generate_memories(facts=["Prefers tea."], scope=scope)
        await asyncio.sleep(0.3)
        assert not (await memory.get_operation(operation.id, operation.scope)).done


def test_model_and_embedder_are_built_without_credentials_or_network(monkeypatch, plain_url):
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    uri = with_options(
        plain_url,
        "model=gemini-2.5-flash&embedding_model=gemini-embedding-001&embedding_dimensions=64",
    )
    memory = memory_service_from_uri(uri)
    assert memory.llm is not None and memory.llm.model == "gemini-2.5-flash"
    assert isinstance(memory.embedder, GeminiEmbedder)
    assert memory.embedder.dimensions == 64


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("session", "schema_name=x", "Unknown parameter 'schema_name'.*Accepted: auto_migrate"),
        ("session", "model=gemini-2.5-flash", "Unknown parameter 'model'.*session_ttl"),
        ("session", "data_dir=/tmp/x", "Unknown parameter 'data_dir'"),
        ("memory", "session_ttl=1h", "Unknown parameter 'session_ttl'.*retrieval_mode"),
        ("memory", "modle=x", "passed to the driver: host, port, sslmode, ssl"),
        ("session", "pool_size=0", "Invalid pool_size='0'.*at least 1"),
        ("session", "session_ttl=soon", "Invalid session_ttl='soon'.*30d"),
        ("session", "redact=all", "Invalid redact='all'.*pii, none"),
        ("session", "schema=a&schema=b", "repeats 'schema'"),
        ("session", "ssl=require&sslmode=require", "both ssl and sslmode"),
        ("memory", "worker=maybe", "Invalid worker='maybe'.*true or false"),
        ("memory", "retrieval_mode=fuzzy", "Invalid retrieval_mode='fuzzy'"),
        ("memory", "retrieval_mode=vector", "retrieval_mode=vector needs embedding_model"),
        ("memory", "embedding_dimensions=64", "embedding_dimensions needs embedding_model"),
        ("memory", "text_search_language=English!", "text_search_language"),
        ("memory", "min_similarity=high", "Invalid min_similarity='high'.*number"),
        ("memory", "min_text_relevance=2", "min_text_relevance"),
        ("memory", "min_similarity=nan", "Invalid min_similarity='nan'.*finite"),
        ("memory", "model=no-such-model", "Invalid model='no-such-model'"),
    ],
)
def test_bad_options_are_clear_errors(plain_url, kind, options, message):
    build = session_service_from_uri if kind == "session" else memory_service_from_uri
    with pytest.raises(InputValidationError, match=message):
        build(with_options(plain_url, options))


def test_options_the_uri_leaves_out_come_from_the_environment(plain_url):
    """The variables `configure()` reads fill what a URI leaves out, so `adk web` with a URI and
    an agent's `configure()` in one environment agree; what the URI says wins."""
    environ = {
        SCHEMA_ENV: "from_env",
        SESSION_TTL_ENV: "12h",
        MODEL_ENV: "gemini-2.5-flash",
        EMBEDDING_MODEL_ENV: "gemini-embedding-001",
        MEMORY_TTL_ENV: "30d",
    }
    sessions = session_service_from_uri(plain_url, environ=environ)
    assert sessions.database.schema == "from_env"
    assert sessions.session_ttl == timedelta(hours=12)
    memory = memory_service_from_uri(plain_url, environ=environ)
    assert memory.database.schema == "from_env"
    assert memory.llm is not None and memory.llm.model == "gemini-2.5-flash"
    assert isinstance(memory.embedder, GeminiEmbedder)
    assert memory.embedder.model == "gemini-embedding-001"
    assert memory.config.ttl.default_ttl == timedelta(days=30)

    # `embedding_model=none` switches off the environment's embedding model.
    uri = with_options(plain_url, "schema=given&embedding_model=none&memory_ttl=1d")
    memory = memory_service_from_uri(uri, environ=environ)
    assert memory.database.schema == "given" and memory.embedder is None
    assert memory.config.ttl.default_ttl == timedelta(days=1)

    # A bad value names the variable it came from.
    with pytest.raises(InputValidationError, match="Invalid ADK_MEMORY_SESSION_TTL='soon'"):
        session_service_from_uri(plain_url, environ={SESSION_TTL_ENV: "soon"})
    with pytest.raises(InputValidationError, match="Invalid ADK_MEMORY_MODEL='no-such-model'"):
        memory_service_from_uri(plain_url, environ={MODEL_ENV: "no-such-model"})


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("mysql://u@h/db", "Unsupported session service URI scheme 'mysql'"),
        ("postgresql", "Not a session service URI"),
        ("adk-memory://somehost", "takes no host or path.*data_dir"),
        ("adk-memory:///var/data", "takes no host or path"),
        ("adk-memory://?host=/tmp", "Unknown parameter 'host'.*data_dir"),
    ],
)
def test_bad_uris_are_clear_errors(uri, message):
    with pytest.raises(InputValidationError, match=message):
        session_service_from_uri(uri)


# ------------------------------------------------------------------------------------ secrets


async def _url_password(service: PostgresSessionService) -> str | None:
    return (await service.database.engine()).url.password


async def test_password_comes_from_the_environment_or_a_file(plain_url, tmp_path):
    secret = "p@ss:w/rd?&="
    no_password = plain_url.replace(":@", "@", 1)
    service = session_service_from_uri(no_password, environ={DATABASE_PASSWORD_ENV: secret})
    assert await _url_password(service) == secret
    path = tmp_path / "db-password"
    path.write_text(secret + "\n")
    service = session_service_from_uri(no_password, environ={DATABASE_PASSWORD_FILE_ENV: str(path)})
    assert await _url_password(service) == secret
    # A password written in the URL wins; none anywhere leaves it to libpq's PGPASSWORD.
    in_url = plain_url.replace(":@", ":inline@", 1)
    service = session_service_from_uri(in_url, environ={DATABASE_PASSWORD_ENV: secret})
    assert await _url_password(service) == "inline"
    assert await _url_password(session_service_from_uri(no_password, environ={})) is None


def test_password_settings_errors(plain_url, tmp_path):
    both = {DATABASE_PASSWORD_ENV: "x", DATABASE_PASSWORD_FILE_ENV: str(tmp_path / "p")}
    with pytest.raises(InputValidationError, match="not both"):
        session_service_from_uri(plain_url, environ=both)
    missing = {DATABASE_PASSWORD_FILE_ENV: str(tmp_path / "missing")}
    with pytest.raises(InputValidationError, match="Cannot read the database password file"):
        memory_service_from_uri(plain_url, environ=missing)


# ----------------------------------------------------------------------------------- embedded


async def test_adk_memory_scheme_is_the_embedded_server(server_dir, monkeypatch):
    """`adk-memory://` keeps its data where `configure()` and the `adk-memory` command do:
    `?data_dir=`, else `$ADK_MEMORY_DATA_DIR`, else `./.adk/pgdata` in the working directory,
    whatever agents directory ADK serves. Nothing starts until the first call."""
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.chdir(server_dir)
    register()
    data_dir = (server_dir / ".adk" / "pgdata").resolve()
    memory = create_memory_service_from_options(
        base_dir=server_dir / "agents", memory_service_uri="adk-memory://?schema=embedded_test"
    )
    sessions = session_service_from_uri(f"adk-memory://?data_dir={data_dir}&schema=embedded_test")
    assert memory.database._data_dir == str(data_dir)
    stack = configure(environ={})
    assert stack.data_dir == data_dir
    await stack.close()
    elsewhere = session_service_from_uri("adk-memory://", environ={DATA_DIR_ENV: "elsewhere"})
    assert elsewhere.database._data_dir == str((server_dir / "elsewhere").resolve())
    assert not data_dir.exists()  # constructing started nothing
    try:
        async with sessions, memory:
            await sessions.create_session(app_name="app", user_id="u", session_id="s")
            await memory.add_memory(app_name="app", user_id="u", memories=[_entry("Fact.")])
            assert (data_dir / "PG_VERSION").exists()
            listed = await memory.list_memories(scope={"app_name": "app", "user_id": "u"})
            assert [m.fact for m in listed.memories] == ["Fact."]
    finally:
        stop_embedded(data_dir)


# ------------------------------------------------------------------------------------ closing


async def test_collect_services_gathers_what_the_factories_build(plain_url):
    outside = session_service_from_uri(plain_url)
    with collect_services() as built:
        sessions = session_service_from_uri(plain_url)
        memory = memory_service_from_uri(plain_url)
    assert built == [sessions, memory]
    assert outside not in built


def test_an_unreachable_server_is_not_contacted_at_construction():
    """Building a service for an unreachable server succeeds: ADK builds services before the
    server starts, and nothing may block or fail there."""
    service = session_service_from_uri("postgresql://nobody@127.0.0.1:1/none?schema=x")
    assert isinstance(service, PostgresSessionService)
