"""Behind PgBouncer, in transaction and in session pooling mode (Debian's `pgbouncer`, started
per test in front of the test server; skipped where it is not installed, `.ci/run` installs
it): 40 users at once creating, appending to and reading sessions, creating and searching
memories, and generating memories through the job queue and an in-process worker with a
scripted model, on a fresh schema migrated through the pooler. Every call succeeds."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.genai import types
from pgbouncer_server import BINARY, pgbouncer

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.db.urls import parse_url
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


@needs_pgbouncer
async def test_forty_users_behind_pgbouncer(pooled_url: str) -> None:
    schema = f"pooled_{parse_url(pooled_url).pooler}"
    sessions = PostgresSessionService(pooled_url, schema=schema)
    memory = PostgresMemoryService(
        pooled_url,
        schema=schema,
        embedder=HashEmbedder(),
        llm=ScriptedLlm(responder=model),
        run_worker=True,
    )
    try:
        outcomes = await asyncio.gather(
            *(one_user(sessions, memory, n) for n in range(USERS)), return_exceptions=True
        )
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        assert errors == [], f"{len(errors)} of {USERS} users failed; first: {errors[0]!r}"
        facts = await memory.list_memories({"app_name": APP, "user_id": "user-7"})
        assert FACT in {m.fact for m in facts.memories}
    finally:
        await memory.close()
        await sessions.close()
