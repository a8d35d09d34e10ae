"""One service, many event loops: `asyncio.run` twice, ADK's synchronous `Runner.run` twice, a
FastAPI test client (its own loop, in a thread), a notebook's loop in another thread beside the
main thread's, and an engine the caller built and shares. Each loop gets its own pool; a loop's
connections are closed as `asyncio.run` ends it, and `close()` closes every loop's."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import asyncpg
import pytest
from conftest import TEST_SCHEMA
from fastapi import FastAPI
from fastapi.testclient import TestClient
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.genai import types

from adk_memory import PostgresMemoryService, PostgresSessionService, make_engine
from adk_memory.db.loops import dispose
from adk_memory.testing import HashEmbedder, ScriptedLlm

APP, USER = "loops", "u1"
NAME = "adk-memory-loops-test"
"""The application_name the services' connections carry, to count them on the server."""

_DEADLINE = 30.0


@pytest.fixture
def url(database_url: str) -> str:
    return f"{database_url}&application_name={NAME}"


def backends(database_url: str) -> int:
    """Connections the server has open for this test's services."""

    async def count() -> int:
        dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
        conn = await asyncpg.connect(dsn)
        try:
            n: int = await conn.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", NAME
            )
            return n
        finally:
            await conn.close()

    return asyncio.run(count())


def settles_at(database_url: str, expected: int) -> None:
    """Wait (with a deadline) until the server has `expected` such connections: a backend
    leaves pg_stat_activity a moment after its client closes."""
    deadline = time.monotonic() + _DEADLINE
    while (n := backends(database_url)) != expected:
        assert time.monotonic() < deadline, f"{n} connections open, expected {expected}"
        time.sleep(0.05)


@pytest.fixture
def sessions(url: str) -> Iterator[PostgresSessionService]:
    service = PostgresSessionService(url, schema=TEST_SCHEMA)
    yield service
    asyncio.run(service.close())


def test_asyncio_run_twice(sessions: PostgresSessionService, database_url: str) -> None:
    made = asyncio.run(sessions.create_session(app_name=APP, user_id=USER, state={"k": 1}))
    settles_at(database_url, 0)  # the first loop's connections closed as it ended
    got = asyncio.run(sessions.get_session(app_name=APP, user_id=USER, session_id=made.id))
    assert got is not None and got.state == {"k": 1}
    listed = asyncio.run(sessions.list_sessions(app_name=APP, user_id=USER))
    assert made.id in {s.id for s in listed.sessions}


def test_memory_service_across_loops(url: str) -> None:
    memory = PostgresMemoryService(
        url, schema=TEST_SCHEMA, embedder=HashEmbedder(), run_worker=False
    )
    scope = {"app_name": APP, "user_id": "m1"}
    asyncio.run(memory.create_memory("The user keeps bees.", scope))
    found = asyncio.run(memory.search_memory(app_name=APP, user_id="m1", query="bees"))
    assert [m.content.parts[0].text for m in found.memories] == ["The user keeps bees."]
    asyncio.run(memory.close())


def test_adk_runner_run_twice(sessions: PostgresSessionService) -> None:
    """ADK's synchronous `Runner.run` runs each call on a new loop, in a thread."""
    agent = LlmAgent(name="helper", model=ScriptedLlm(["Hello!", "Hello again!"]))
    runner = Runner(app_name=APP, agent=agent, session_service=sessions)
    session = asyncio.run(sessions.create_session(app_name=APP, user_id=USER))
    for text in ("hi", "hi again"):
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = list(runner.run(user_id=USER, session_id=session.id, new_message=message))
        assert not any(e.error_code for e in events)
    stored = asyncio.run(sessions.get_session(app_name=APP, user_id=USER, session_id=session.id))
    assert stored is not None
    assert [e.content.parts[0].text for e in stored.events if e.content and e.content.parts] == [
        "hi",
        "Hello!",
        "hi again",
        "Hello again!",
    ]


def test_fastapi_test_client(sessions: PostgresSessionService) -> None:
    """Starlette's TestClient runs the app on its own loop in a thread, a new one per client."""
    app = FastAPI()

    @app.post("/sessions")
    async def create() -> dict[str, str]:
        return {"id": (await sessions.create_session(app_name=APP, user_id=USER)).id}

    @app.get("/sessions/{session_id}")
    async def read(session_id: str) -> dict[str, int]:
        session = await sessions.get_session(app_name=APP, user_id=USER, session_id=session_id)
        assert session is not None
        return {"events": len(session.events)}

    with TestClient(app) as client:
        made = client.post("/sessions").json()["id"]
    for _ in range(2):
        with TestClient(app) as client:
            assert client.get(f"/sessions/{made}").json() == {"events": 0}
    made_here = asyncio.run(sessions.create_session(app_name=APP, user_id=USER))
    with TestClient(app) as client:
        assert client.get(f"/sessions/{made_here.id}").json() == {"events": 0}


def test_a_loop_in_another_thread_beside_this_one(sessions: PostgresSessionService) -> None:
    """A notebook's loop runs for good in its thread while a script's `asyncio.run` calls come
    and go in the main thread: both use the service at once."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:

        async def create_many() -> list[str]:
            made = await asyncio.gather(
                *(sessions.create_session(app_name=APP, user_id=USER) for _ in range(5))
            )
            return [s.id for s in made]

        there = asyncio.run_coroutine_threadsafe(create_many(), loop)
        here = asyncio.run(create_many())
        ids = set(there.result(timeout=_DEADLINE)) | set(here)
        listed = asyncio.run(sessions.list_sessions(app_name=APP, user_id=USER))
        assert ids <= {s.id for s in listed.sessions}
        # close() from the main thread closes the other loop's pool on that loop.
        asyncio.run(sessions.close())
        again = asyncio.run_coroutine_threadsafe(create_many(), loop).result(timeout=_DEADLINE)
        assert len(again) == 5  # the service is usable after close(): new pools
    finally:
        asyncio.run_coroutine_threadsafe(sessions.close(), loop).result(timeout=_DEADLINE)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=_DEADLINE)
        loop.close()


def test_an_engine_built_by_the_caller(database_url: str, url: str) -> None:
    """A shared engine works from every loop too: its own pool on one, copies on the others;
    `dispose` closes them all (the service leaves a shared engine open)."""
    engine = make_engine(url)
    one = PostgresSessionService(engine=engine, schema=TEST_SCHEMA)
    two = PostgresSessionService(engine=engine, schema=TEST_SCHEMA)
    made = asyncio.run(one.create_session(app_name=APP, user_id=USER))
    assert asyncio.run(two.get_session(app_name=APP, user_id=USER, session_id=made.id))
    asyncio.run(one.close())
    assert asyncio.run(two.get_session(app_name=APP, user_id=USER, session_id=made.id))
    asyncio.run(dispose(engine))
    settles_at(database_url, 0)


async def test_a_closed_loops_pool_is_dropped(
    sessions: PostgresSessionService, database_url: str
) -> None:
    """A loop closed without shutting down its async generators (no `asyncio.run`): its
    connections are dropped, never used on the next loop; this test's loop then works."""
    loop = asyncio.new_event_loop()
    try:
        thread = threading.Thread(
            target=loop.run_until_complete,
            args=(sessions.create_session(app_name=APP, user_id=USER),),
        )
        thread.start()
        thread.join(timeout=_DEADLINE)
    finally:
        loop.close()
    made = await sessions.create_session(app_name=APP, user_id=USER)
    assert await sessions.get_session(app_name=APP, user_id=USER, session_id=made.id)
    await sessions.close()
