"""Bad input through every public method of both services: only the package's documented error
types come out (`AdkMemoryError` and its subclasses, which are also ADK's own types where ADK
has one), and a call that fails has written nothing.

hypothesis draws a method and, for each of its arguments, either a valid value or garbage
(wrong types, NUL, lone surrogates, huge text, SQL-ish and LIKE-ish text, negative and
non-integral counts, non-JSON metadata). A call may succeed (garbage is sometimes valid: any
non-empty text is a legal app name); when it raises, the error must be documented and every
table's row count must be as it was before the call.

hypothesis + asyncio: pytest-asyncio runs `@given` on an async test on the session loop, so the
test uses only the session-scoped `engine` fixture and its own schema.
"""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine

from adk_memory import MemoryFilter, PostgresMemoryService, PostgresSessionService
from adk_memory.errors import AdkMemoryError, InputValidationError
from adk_memory.memory import MemoryFact
from adk_memory.testing import HashEmbedder

SCHEMA = "adk_memory_bad_input"
APP, USER = "app", "user"
SCOPE = {"app_name": APP, "user_id": USER}

_HOSTILE_TEXT = (
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "'; DROP TABLE memories; --",
    "%",
    "_",
    "\\",
    "é" * 3000,
    "a" * 120_000,
)

GARBAGE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["app_name", "user_id", "\x00"]), st.none(), max_size=2),
    st.sampled_from(_HOSTILE_TEXT),
    st.text(max_size=12),
    st.just(object()),
    st.just({"k": object()}),
    st.just(datetime.timedelta(days=-1)),
    st.just(datetime.timedelta(days=999_999_999)),
    st.just(datetime.datetime.max),
    st.just(datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)),
)

FILTERS = st.one_of(
    st.none(),
    GARBAGE,
    st.builds(
        lambda t, m, a, b: MemoryFilter.model_construct(
            topics=t, metadata=m, updated_after=a, updated_before=b
        ),
        st.one_of(st.none(), st.lists(st.sampled_from(_HOSTILE_TEXT[:6]), max_size=2)),
        st.one_of(st.none(), st.just({"k": object()}), st.just({"\x00": "\ud800"})),
        st.one_of(st.none(), st.just(datetime.datetime.max), st.just(datetime.datetime.min)),
        st.none(),
    ),
)
"""Filters as a caller may build them: garbage, or a `MemoryFilter` holding NUL or lone
surrogates in its topics, objects in its metadata, times at the ends of `datetime`."""


def maybe(valid: Any) -> st.SearchStrategy[Any]:
    """A valid value half the time, garbage otherwise."""
    return st.one_of(st.just(valid), GARBAGE)


async def _counts(engine: AsyncEngine) -> dict[str, int]:
    """Row counts of every table of the test schema (what "nothing written" is checked by)."""
    async with engine.connect() as conn:
        raw = await conn.get_raw_connection()
        driver = raw.driver_connection
        tables = await driver.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> "
            "'schema_versions' ORDER BY 1",
            SCHEMA,
        )
        counts = {}
        for row in tables:
            name = row[0]
            counts[name] = await driver.fetchval(f'SELECT count(*) FROM {SCHEMA}."{name}"')
        return counts


@pytest.fixture(scope="module")
async def services(engine: AsyncEngine) -> Any:
    sessions = PostgresSessionService(engine=engine, schema=SCHEMA)
    memory = PostgresMemoryService(engine=engine, schema=SCHEMA, embedder=HashEmbedder())
    session = await sessions.create_session(app_name=APP, user_id=USER, session_id="s1")
    made = await memory.create_memory("Likes jazz.", SCOPE)
    yield sessions, memory, session, made.id
    await memory.close()
    await sessions.close()


Call = Callable[[Any], Awaitable[Any]]


def _calls(
    sessions: PostgresSessionService, memory: PostgresMemoryService, session: Any, memory_id: str
) -> dict[str, st.SearchStrategy[Call]]:
    """Each public method with arguments drawn half valid, half garbage."""

    def event(delta: Any, text: Any) -> Event:
        return Event(
            author="user",
            invocation_id="inv",
            content=types.Content(role="user", parts=[types.Part(text="hi")]),
            actions=EventActions(state_delta={"k": "v"}),
        ).model_copy(
            update={
                "actions": EventActions.model_construct(state_delta=delta),
                "content": types.Content.model_construct(
                    role="user", parts=[types.Part.model_construct(text=text)]
                ),
            }
        )

    s, m = sessions, memory
    return {
        "create_session": st.builds(
            lambda a, u, st_, i: (
                lambda: s.create_session(app_name=a, user_id=u, state=st_, session_id=i)
            ),
            maybe(APP),
            maybe(USER),
            maybe({"x": 1}),
            maybe(None),
        ),
        "get_session": st.builds(
            lambda a, u, i: lambda: s.get_session(app_name=a, user_id=u, session_id=i),
            maybe(APP),
            maybe(USER),
            maybe("s1"),
        ),
        "list_sessions": st.builds(
            lambda a, u: lambda: s.list_sessions(app_name=a, user_id=u), maybe(APP), maybe(USER)
        ),
        "delete_session": st.builds(
            lambda a, u, i: lambda: s.delete_session(app_name=a, user_id=u, session_id=i),
            maybe(APP),
            maybe(USER),
            GARBAGE,
        ),
        "append_event": st.builds(
            lambda d, t: lambda: s.append_event(session, event(d, t)),
            maybe({"k": "v"}),
            maybe("hello"),
        ),
        "get_user_state": st.builds(
            lambda a, u: lambda: s.get_user_state(app_name=a, user_id=u), maybe(APP), GARBAGE
        ),
        "create_memory": st.builds(
            lambda f, sc, tp, md, imp, conf, ttl: (
                lambda: m.create_memory(
                    f, sc, topics=tp, metadata=md, importance=imp, confidence=conf, ttl=ttl
                )
            ),
            maybe("Prefers window seats."),
            maybe(SCOPE),
            maybe(None),
            maybe(None),
            maybe(None),
            maybe(None),
            maybe(datetime.timedelta(days=30)),
        ),
        "create_memories": st.builds(
            lambda when, ttl: (
                lambda: m.create_memories(
                    [MemoryFact("Owns a bike.", create_time=when, ttl=ttl)], SCOPE
                )
            ),
            maybe(None),
            maybe(None),
        ),
        "get_memory": st.builds(
            lambda i, sc: lambda: m.get_memory(i, sc), maybe(memory_id), maybe(SCOPE)
        ),
        "list_memories": st.builds(
            lambda sc, n, tok, flt: (
                lambda: m.list_memories(sc, page_size=n, page_token=tok, filter=flt)
            ),
            maybe(SCOPE),
            maybe(10),
            maybe(None),
            FILTERS,
        ),
        "update_memory": st.builds(
            lambda i, sc, f, md, imp: (
                lambda: m.update_memory(i, sc, fact=f, metadata=md, importance=imp)
            ),
            maybe(memory_id),
            maybe(SCOPE),
            maybe("Likes cool jazz."),
            maybe(None),
            maybe(None),
        ),
        "delete_memory": st.builds(
            lambda a, u, i: lambda: m.delete_memory(app_name=a, user_id=u, memory_id=i),
            maybe(APP),
            maybe(USER),
            GARBAGE,
        ),
        "list_revisions": st.builds(
            lambda i, sc: lambda: m.list_revisions(i, sc), maybe(memory_id), maybe(SCOPE)
        ),
        "retrieve_memories": st.builds(
            lambda sc, q, k, flt, now: (
                lambda: m.retrieve_memories(sc, search_query=q, top_k=k, filter=flt, now=now)
            ),
            maybe(SCOPE),
            maybe("jazz"),
            maybe(3),
            FILTERS,
            maybe(None),
        ),
        "search_memory": st.builds(
            lambda a, u, q: lambda: m.search_memory(app_name=a, user_id=u, query=q),
            maybe(APP),
            maybe(USER),
            maybe("jazz"),
        ),
        "add_memory": st.builds(
            lambda a, u, f, md: (
                lambda: m.add_memory(
                    app_name=a,
                    user_id=u,
                    memories=[
                        MemoryEntry.model_construct(
                            content=types.Content.model_construct(
                                role="user", parts=[types.Part.model_construct(text=f)]
                            )
                        )
                    ],
                    custom_metadata=md,
                )
            ),
            maybe(APP),
            maybe(USER),
            maybe("Has a cat."),
            maybe(None),
        ),
        "generate_memories": st.builds(
            lambda sc, facts, topic: (
                lambda: m.generate_memories(scope=sc, facts=facts, topic=topic)
            ),
            maybe(SCOPE),
            maybe(["Drinks tea."]),
            maybe(None),
        ),
        "get_operation": st.builds(
            lambda i, sc: lambda: m.get_operation(i, sc), GARBAGE, maybe(SCOPE)
        ),
        "purge": st.builds(lambda sc: lambda: m.purge(sc), GARBAGE),
        "erase_user_memory": st.builds(
            lambda a, u: lambda: m.erase_user(a, u), GARBAGE, maybe(USER)
        ),
        "erase_user_sessions": st.builds(
            lambda a, u: lambda: s.erase_user(app_name=a, user_id=u), maybe(APP), GARBAGE
        ),
        "list_quarantined": st.builds(
            lambda sc, n: lambda: m.list_quarantined(sc, limit=n), maybe(SCOPE), maybe(10)
        ),
        "approve_quarantined": st.builds(
            lambda i, sc: lambda: m.approve_quarantined(i, sc), GARBAGE, maybe(SCOPE)
        ),
        "reject_quarantined": st.builds(
            lambda i, sc: lambda: m.reject_quarantined(i, sc), GARBAGE, maybe(SCOPE)
        ),
    }


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
async def test_bad_input_raises_only_documented_errors_and_writes_nothing(
    services: Any, engine: AsyncEngine, data: st.DataObject
) -> None:
    sessions, memory, session, memory_id = services
    calls = _calls(sessions, memory, session, memory_id)
    name = data.draw(st.sampled_from(sorted(calls)), label="method")
    call = data.draw(calls[name], label="call")
    before = await _counts(engine)
    try:
        await call()
    except AdkMemoryError:
        assert await _counts(engine) == before, f"{name} failed but wrote"
    except Exception as exc:
        pytest.fail(f"{name} raised undocumented {type(exc).__name__}: {exc!r}"[:500])


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth):
        value = {"k": value}
    return value


async def test_hostile_sizes_and_depths_are_typed_errors_or_cut(
    services: Any, engine: AsyncEngine
) -> None:
    """A megabyte of words as a search query is cut to the query limit (a turn never fails on
    it, and it cannot cost seconds of parsing); state or metadata nested past what JSON or
    Python can take is refused with InputValidationError, nothing written."""
    sessions, memory, _, _ = services
    words = "jazz coffee window " * 60_000
    assert isinstance(await memory.retrieve_memories(SCOPE, search_query=words), list)
    await memory.search_memory(app_name=APP, user_id=USER, query=words)

    before = await _counts(engine)
    with pytest.raises(AdkMemoryError):
        await sessions.create_session(app_name=APP, user_id=USER, state={"k": _nested(300)})
    with pytest.raises(AdkMemoryError):
        await memory.create_memory("Likes tea.", SCOPE, metadata=_nested(5_000))
    with pytest.raises(AdkMemoryError, match="at most"):
        await memory.create_memory("Likes tea.", SCOPE, content={"blob": "x" * 2_000_000})
    assert await _counts(engine) == before


async def test_the_values_drivers_cannot_take_are_typed_errors_that_write_nothing(
    services: Any, engine: AsyncEngine
) -> None:
    """Each value that once reached the driver raw (a NUL in a filter's topic, an object in a
    filter's metadata, a TTL or a time PostgreSQL or Python cannot hold) is refused before any
    statement as `InputValidationError` (a NUL in a filter matches what a stored NUL became),
    and nothing is written."""
    _, memory, _, _ = services
    before = await _counts(engine)
    assert (await memory.list_memories(SCOPE, filter=MemoryFilter(topics=["\x00"]))).memories == []
    assert (
        await memory.retrieve_memories(
            SCOPE, search_query="jazz", filter=MemoryFilter(topics=["a\x00"])
        )
        == []
    )
    refused: list[Callable[[], Awaitable[Any]]] = [
        lambda: memory.list_memories(SCOPE, filter=MemoryFilter(metadata={"k": object()})),
        lambda: memory.retrieve_memories(
            SCOPE, search_query="jazz", filter=MemoryFilter(metadata={"k": [b"\xff"]})
        ),
        lambda: memory.create_memory("Likes tea.", SCOPE, ttl=datetime.timedelta(days=999999999)),
        lambda: memory.create_memory("Likes tea.", SCOPE, ttl=datetime.timedelta(days=9999999)),
        lambda: memory.create_memories(
            [MemoryFact("Likes tea.", create_time=datetime.datetime.max)], SCOPE
        ),
        lambda: memory.list_memories(
            SCOPE, filter=MemoryFilter(updated_after=datetime.datetime.min)
        ),
        lambda: memory.retrieve_memories(
            SCOPE, search_query="last week", now=datetime.datetime.min
        ),
        lambda: memory.revoke_source("s\x00", SCOPE),
        lambda: memory.processed_until([(SCOPE, "\ud800")]),
        lambda: memory.add_events_to_memory(
            app_name=APP,
            user_id=USER,
            session_id="s1",
            events=[
                Event(
                    author="user",
                    invocation_id="inv",
                    timestamp=1e20,
                    content=types.Content(role="user", parts=[types.Part(text="Has a dog.")]),
                )
            ],
        ),
    ]
    for index, call in enumerate(refused):
        with pytest.raises(InputValidationError):
            await call()
            pytest.fail(f"call {index} was not refused")
    assert await _counts(engine) == before
    assert len((await memory.list_memories(SCOPE)).memories) >= 1  # every row still readable
