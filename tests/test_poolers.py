"""Behind PgBouncer, in transaction and in session pooling mode (Debian's `pgbouncer`, started
per test in front of the test server; skipped where it is not installed, `.ci/run` installs
it): 40 users at once creating, appending to and reading sessions, creating and searching
memories, and generating memories through the job queue and an in-process worker with a
scripted model, on a fresh schema migrated through the pooler. Every call succeeds."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from datetime import timedelta

import pytest
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.genai import types
from pgbouncer_server import BINARY, pgbouncer

from adk_memory import PostgresMemoryService, PostgresSessionService, configure
from adk_memory.config import DatabaseTimeouts
from adk_memory.db import make_engine
from adk_memory.db.engine import Database
from adk_memory.db.loops import dispose
from adk_memory.db.urls import parse_url
from adk_memory.errors import (
    DatabaseTimeoutError,
    DatabaseUnavailableError,
    InputValidationError,
)
from adk_memory.testing import HashEmbedder, ScriptedLlm

needs_pgbouncer = pytest.mark.skipif(BINARY is None, reason="pgbouncer is not installed")

USERS = 40
APP = "pooled"


def said(text: str, author: str = "user") -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        invocation_id="inv",
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


FACT = "The user plays chess."


def model(request: LlmRequest) -> str:
    """The memory model: the fact at extraction, a CREATE of it at consolidation (told apart by
    the response schema the request carries)."""
    schema = request.config.response_schema if request.config else None
    if "facts" in getattr(schema, "model_fields", {}):
        facts = [{"fact": FACT, "topic": "USER_PREFERENCES", "forget": False}]
        return json.dumps({"facts": facts})
    create = {"action": "CREATE", "fact_numbers": [1], "target_id": None, "fact": FACT}
    return json.dumps({"operations": [create]})


@pytest.fixture(params=["transaction", "session"])
def pooled_url(request: pytest.FixtureRequest, database_url: str) -> Iterator[str]:
    """The test server behind PgBouncer in the parameter's mode, as `?pooler=` names it."""
    if BINARY is None:
        pytest.skip("pgbouncer is not installed")
    # Transaction mode: 40 users' connections share 4 server connections. Session mode gives
    # each client connection its own for as long as it is open: the pool must hold every
    # client pool (the two services' engines, 15 connections each at most).
    size = 4 if request.param == "transaction" else 40
    with pgbouncer(database_url, request.param, pool_size=size) as url:
        yield f"{url}?pooler={request.param}"


async def one_user(sessions: PostgresSessionService, memory: PostgresMemoryService, n: int) -> None:
    """What one user's turns do against the database."""
    user = f"user-{n}"
    session = await sessions.create_session(app_name=APP, user_id=user, state={"n": n})
    for text, author in (("I play chess on Sundays.", "user"), ("Noted!", "model")):
        await sessions.append_event(session, said(text, author))
    session = await sessions.get_session(app_name=APP, user_id=user, session_id=session.id)
    assert session is not None and len(session.events) == 2
    scope = {"app_name": APP, "user_id": user}
    await memory.create_memory("The user lives in Lisbon.", scope)
    await memory.create_memory(f"The user's locker is number {n}.", scope)
    found = await memory.search_memory(app_name=APP, user_id=user, query="Where do they live?")
    assert any("Lisbon" in m.content.parts[0].text for m in found.memories if m.content.parts)
    operation = await memory.generate_memories(session=session, wait_for_completion=True)
    assert operation.done and operation.error is None, operation.error


async def users_at_once(url: str, schema: str, users: int = USERS) -> None:
    """`users` users at once through services built from `url`, on `schema`: no error."""
    sessions = PostgresSessionService(url, schema=schema)
    memory = PostgresMemoryService(
        url,
        schema=schema,
        embedder=HashEmbedder(),
        llm=ScriptedLlm(responder=model),
        run_worker=True,
    )
    try:
        outcomes = await asyncio.gather(
            *(one_user(sessions, memory, n) for n in range(users)), return_exceptions=True
        )
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        assert errors == [], f"{len(errors)} of {users} users failed; first: {errors[0]!r}"
        facts = await memory.list_memories({"app_name": APP, "user_id": "user-0"})
        assert FACT in {m.fact for m in facts.memories}
    finally:
        await memory.close()
        await sessions.close()


@needs_pgbouncer
async def test_forty_users_behind_pgbouncer(pooled_url: str) -> None:
    await users_at_once(pooled_url, f"pooled_{parse_url(pooled_url).pooler}")


@needs_pgbouncer
@pytest.mark.parametrize(
    ("ignored", "symptom"),
    [
        ("", "refused the settings sent when connecting"),
        (
            "statement_timeout,idle_in_transaction_session_timeout",
            "prepared statement was lost",
        ),
    ],
    ids=["refusing-settings", "ignoring-settings"],
)
async def test_a_pooler_the_url_does_not_name_is_noticed(
    database_url: str, ignored: str, symptom: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A transaction-mode PgBouncer on a port nothing recognises, the URL saying nothing:
    refusing the server settings when connecting (PgBouncer's default), or ignoring them
    (`ignore_startup_parameters`, a common set-up) so that the first sign is a lost prepared
    statement. Either way the services notice, rebuild their pools as for
    `?pooler=transaction`, try the call again, and say so once: no user sees an error.

    The schema is migrated first over the direct URL, as the README says to: a migration
    through a transaction pooler that accepts the settings and is neither named nor
    recognised may take the vector steps' session-level lock on a server connection it then
    loses (the pooler keeps that connection, and the lock, for other clients)."""
    schema = f"unnamed_{'ignoring' if ignored else 'refusing'}"
    await users_at_once(database_url, schema, users=1)  # migrates
    with pgbouncer(database_url, "transaction", 4, ignore_startup_parameters=ignored) as url:
        assert parse_url(url).pooler is None
        with caplog.at_level(logging.WARNING, logger="adk_memory.db.engine"):
            await users_at_once(url, schema)
    noticed = [r.getMessage() for r in caplog.records if "?pooler=transaction" in r.message]
    assert noticed and all(symptom in m for m in noticed), noticed


@needs_pgbouncer
async def test_configure_behind_an_unnamed_pooler_says_to_name_it(
    database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """`configure(url)` shares one engine between its services, so a pooler the URL does not
    name is not worked around (as it is for a service given a URL): the typed error stands and
    the log says which option to add to the URL given to `configure()`."""
    with pgbouncer(database_url, "transaction", 2) as url:
        stack = configure(url, triggers=None, run_worker=False, schema="unnamed_configure")
        try:
            with (
                caplog.at_level(logging.ERROR, logger="adk_memory.db.engine"),
                pytest.raises(DatabaseUnavailableError),
            ):
                await stack.session_service.create_session(app_name=APP, user_id="u")
        finally:
            await stack.close()
    [logged] = [r.getMessage() for r in caplog.records if r.name == "adk_memory.db.engine"]
    assert "configure()" in logged and "?pooler=transaction" in logged, logged


@pytest.mark.parametrize(
    ("url", "pooler"),
    [
        ("postgresql://app@db.example.com/agents?pooler=transaction", "transaction"),
        ("postgresql://app@db.example.com/agents?pooler=session", "session"),
        ("postgresql://app@db.example.com:6432/agents", "transaction"),  # PgBouncer's port
        ("postgresql://app@db.example.com:6432/agents?pooler=none", None),
        ("postgresql://p.ref@aws-0-eu-west-1.pooler.supabase.com:6543/postgres", "transaction"),
        ("postgresql://p.ref@aws-0-eu-west-1.pooler.supabase.com:5432/postgres", "session"),
        (
            "postgresql://app@ep-cool-darkness-123456-pooler.us-east-2.aws.neon.tech/db",
            "transaction",
        ),
        ("postgresql://app@ep-cool-darkness-123456.us-east-2.aws.neon.tech/db", None),
        ("postgresql://app@db.example.com:5432/agents", None),
    ],
)
def test_the_pooler_a_url_names_or_its_address_shows(url: str, pooler: str | None) -> None:
    parsed = parse_url(url)
    assert parsed.pooler == pooler
    unnamed = parsed.connect_args.get("statement_cache_size") == 0
    assert unnamed == (pooler == "transaction")


async def test_behind_a_pooler_the_client_still_bounds_a_statement(database_url: str) -> None:
    """The server-side timeouts are not sent when connecting (PgBouncer refuses startup
    parameters it does not track: they are set on the role instead); the client's bound,
    which cancels the statement, still ends a statement that runs too long."""
    if BINARY is None:
        pytest.skip("pgbouncer is not installed")
    timeouts = DatabaseTimeouts(statement=timedelta(milliseconds=200))
    with pgbouncer(database_url, "transaction", 2) as url:
        engine = make_engine(f"{url}?pooler=transaction", timeouts)
        database = Database(engine=engine)
        try:
            async with database.connection() as conn:
                assert await conn.fetchval("SHOW statement_timeout") == "0"
            with pytest.raises(DatabaseTimeoutError):
                await database.run(lambda conn: conn.execute("SELECT pg_sleep(30)"))
            assert await database.run(lambda conn: conn.fetchval("SELECT 1")) == 1
        finally:
            await dispose(engine)


def test_a_bad_pooler_value_is_refused() -> None:
    with pytest.raises(InputValidationError, match="pooler"):
        parse_url("postgresql://app@db.example.com/agents?pooler=statement")
