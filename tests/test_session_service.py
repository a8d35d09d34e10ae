"""PostgresSessionService beyond ADK's contract: bad input, isolation, concurrency, TTL,
redaction and the characters Postgres cannot store."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from conftest import TEST_SCHEMA
from google.adk.errors import StaleSessionError
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.session import Session
from google.genai import types
from rls_checks import for_all

from adk_memory import PiiRedactor, PostgresSessionService

APP = "app"


def text_event(text: str, *, delta: dict | None = None, ts: float | None = None) -> Event:
    fields = {"timestamp": ts} if ts is not None else {}
    return Event(
        author="user",
        invocation_id="inv",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=delta or {}),
        **fields,
    )


async def snapshot(service: PostgresSessionService, user_id: str, session_id: str) -> Session:
    session = await service.get_session(app_name=APP, user_id=user_id, session_id=session_id)
    assert session is not None
    return session


@pytest.mark.parametrize(
    "kwargs",
    [
        {"app_name": "", "user_id": "u"},
        {"app_name": "a", "user_id": "   "},
        {"app_name": "a", "user_id": 7},
        {"app_name": "a" * 129, "user_id": "u"},
        {"app_name": "a", "user_id": "u\x00"},
        {"app_name": "a", "user_id": "u", "session_id": "s" * 129},
        {"app_name": "a", "user_id": "u", "session_id": 12},
        {"app_name": "a", "user_id": "u", "state": ["not", "a", "dict"]},
    ],
)
async def test_bad_create_input_is_rejected_and_writes_nothing(session_service, kwargs):
    with pytest.raises(InputValidationError):
        await session_service.create_session(**kwargs)
    assert (await session_service.list_sessions(app_name="a")).sessions == []


async def test_bad_append_input_is_rejected(session_service):
    session = await session_service.create_session(app_name=APP, user_id="u")
    with pytest.raises(InputValidationError):
        await session_service.append_event(session, {"author": "user"})  # type: ignore[arg-type]
    with pytest.raises(InputValidationError):
        await session_service.append_event("s", text_event("x"))  # type: ignore[arg-type]
    assert (await snapshot(session_service, "u", session.id)).events == []


async def test_bad_config_is_rejected(session_service):
    with pytest.raises(InputValidationError):
        await session_service.get_session(
            app_name=APP,
            user_id="u",
            session_id="s",
            config={"num_recent_events": 1},  # type: ignore[arg-type]
        )


async def test_create_session_accepts_extra_keyword_arguments(session_service):
    session = await session_service.create_session(
        app_name=APP, user_id="u", session_id="s", expire_time="ignored"
    )
    assert session.id == "s"


async def test_no_call_with_one_users_id_reaches_another_users_data(session_service):
    """Same app, same session id, two users: every API call stays inside its own user."""
    alice = await session_service.create_session(
        app_name=APP, user_id="alice", session_id="shared", state={"user:k": "a", "s": "a"}
    )
    bob = await session_service.create_session(
        app_name=APP, user_id="bob", session_id="shared", state={"user:k": "b", "s": "b"}
    )
    await session_service.append_event(alice, text_event("alice's secret", delta={"user:k": "a2"}))
    await session_service.append_event(bob, text_event("bob's note"))

    bob_view = await snapshot(session_service, "bob", "shared")
    assert [e.content.parts[0].text for e in bob_view.events] == ["bob's note"]
    assert bob_view.state == {"s": "b", "user:k": "b"}
    assert await session_service.get_user_state(app_name=APP, user_id="bob") == {"k": "b"}
    listed = await session_service.list_sessions(app_name=APP, user_id="bob")
    assert [(s.user_id, s.state) for s in listed.sessions] == [("bob", {"s": "b", "user:k": "b"})]

    await session_service.delete_session(app_name=APP, user_id="bob", session_id="shared")
    alice_view = await snapshot(session_service, "alice", "shared")
    assert [e.content.parts[0].text for e in alice_view.events] == ["alice's secret"]
    assert alice_view.state == {"s": "a", "user:k": "a2"}
    assert (
        await session_service.get_session(app_name=APP, user_id="bob", session_id="shared") is None
    )
    assert (
        await session_service.get_session(app_name="other", user_id="alice", session_id="shared")
        is None
    )


async def test_two_replicas_one_session_loser_gets_stale_error_and_nothing_is_lost(
    make_session_service,
):
    session_service = make_session_service()
    other_replica = make_session_service()
    created = await session_service.create_session(app_name=APP, user_id="u")
    first = await snapshot(session_service, "u", created.id)
    second = await other_replica.get_session(app_name=APP, user_id="u", session_id=created.id)

    results = await asyncio.gather(
        session_service.append_event(first, text_event("one", delta={"n": 1})),
        other_replica.append_event(second, text_event("two", delta={"n": 2})),
        return_exceptions=True,
    )
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], StaleSessionError)
    winner = next(r for r in results if isinstance(r, Event))

    stored = await snapshot(session_service, "u", created.id)
    assert stored.events == [winner]
    assert stored.state == {"n": winner.actions.state_delta["n"]}
    # The loser reloads and succeeds: nothing was lost, only retried.
    loser_handle = second if winner is results[0] else first
    reloaded = await other_replica.get_session(
        app_name=APP, user_id="u", session_id=loser_handle.id
    )
    await other_replica.append_event(reloaded, text_event("retry", delta={"n": 3}))
    assert len((await snapshot(session_service, "u", created.id)).events) == 2


async def test_concurrent_user_state_updates_from_many_sessions_lose_nothing(session_service):
    sessions = [await session_service.create_session(app_name=APP, user_id="u") for _ in range(10)]
    await asyncio.gather(
        *(
            session_service.append_event(s, text_event("x", delta={f"user:k{i}": i}))
            for i, s in enumerate(sessions)
        )
    )
    expected = {f"k{i}": i for i in range(10)}
    assert await session_service.get_user_state(app_name=APP, user_id="u") == expected


async def test_failed_append_leaves_the_session_exactly_as_it_was(session_service):
    created = await session_service.create_session(app_name=APP, user_id="u", state={"a": 1})
    handle = await snapshot(session_service, "u", created.id)
    stale = await snapshot(session_service, "u", created.id)
    await session_service.append_event(handle, text_event("first", delta={"a": 2}))
    before = await snapshot(session_service, "u", created.id)

    with pytest.raises(StaleSessionError):
        await session_service.append_event(
            stale, text_event("late", delta={"a": 3, "user:x": 1, "app:y": 1})
        )
    assert await snapshot(session_service, "u", created.id) == before
    assert await session_service.get_user_state(app_name=APP, user_id="u") == {}

    await session_service.delete_session(app_name=APP, user_id="u", session_id=created.id)
    with pytest.raises(SessionNotFoundError):
        await session_service.append_event(handle, text_event("after delete"))


async def test_session_object_built_by_hand_can_append_when_current(session_service):
    created = await session_service.create_session(app_name=APP, user_id="u", session_id="s")
    by_hand = Session(app_name=APP, user_id="u", id="s", last_update_time=created.last_update_time)
    await session_service.append_event(by_hand, text_event("ok", ts=created.last_update_time + 1))
    # A second hand-built object that has not seen that event is stale.
    behind = Session(app_name=APP, user_id="u", id="s", last_update_time=created.last_update_time)
    with pytest.raises(StaleSessionError):
        await session_service.append_event(behind, text_event("lost"))
    assert len((await snapshot(session_service, "u", "s")).events) == 1


async def test_nul_and_lone_surrogates_are_sanitised_not_rejected(session_service):
    created = await session_service.create_session(
        app_name=APP, user_id="u", state={"k\x00": "v\ud800", "user:n": "\x00"}
    )
    event = text_event("a\x00b\udc00c", delta={"x": ["\x00", {"y\ud800": "z"}]})
    await session_service.append_event(created, event)
    stored = await snapshot(session_service, "u", created.id)
    assert stored.events[0].content.parts[0].text == "a\ufffdb\ufffdc"
    assert stored.state == {
        "k\ufffd": "v\ufffd",
        "x": ["\ufffd", {"y\ufffd": "z"}],
        "user:n": "\ufffd",
    }


async def test_non_json_state_values_are_coerced_like_adk(session_service):
    created = await session_service.create_session(
        app_name=APP, user_id="u", state={"when": timedelta(seconds=1), "fn": len}
    )
    stored = await snapshot(session_service, "u", created.id)
    assert stored.state["when"] == "PT1S"
    assert isinstance(stored.state["fn"], str)


async def test_redactor_is_applied_before_anything_is_written(make_session_service):
    service = make_session_service(redactor=PiiRedactor())
    created = await service.create_session(
        app_name=APP, user_id="u", state={"user:email": "ann@example.com"}
    )
    event = Event(
        author="user",
        invocation_id="inv",
        content=types.Content(
            role="user",
            parts=[
                types.Part(text="mail ann@example.com, card 4111 1111 1111 1111"),
                types.Part(
                    function_call=types.FunctionCall(name="f", args={"to": "bob@example.org"})
                ),
            ],
        ),
        actions=EventActions(state_delta={"phone": "+44 20 7946 0958"}),
    )
    returned = await service.append_event(created, event)
    assert "ann@example.com" in returned.content.parts[0].text  # the caller's object is untouched

    stored = await snapshot(service, "u", created.id)
    text = stored.events[0].content.parts[0].text
    assert "ann@example.com" not in text and "4111" not in text
    assert stored.events[0].content.parts[1].function_call.args == {"to": "[EMAIL]"}
    assert stored.state["phone"] == "[PHONE]"
    assert stored.state["user:email"] == "[EMAIL]"


async def test_ttl_sweep_deletes_idle_sessions_with_their_events(make_session_service):
    service = make_session_service(session_ttl=timedelta(hours=1))
    old = [await service.create_session(app_name=APP, user_id="u") for _ in range(5)]
    for session in old:
        await service.append_event(session, text_event("hello"))
    # Two hours pass for these five (moved back in the database: no sleep racing the TTL).
    await service.database.run(
        lambda conn: conn.execute(
            f"UPDATE {TEST_SCHEMA}.sessions SET active_time = active_time - interval '2 hours' "
            f"WHERE {for_all(TEST_SCHEMA)}"
        )
    )
    fresh = await service.create_session(app_name=APP, user_id="u")

    seen: list[int] = []
    deleted = await service.sweep_expired_sessions(batch_size=2, progress=seen.append)
    assert deleted == 5
    assert seen == [2, 4, 5]
    remaining = await service.list_sessions(app_name=APP, user_id="u")
    assert [s.id for s in remaining.sessions] == [fresh.id]

    assert await make_session_service().sweep_expired_sessions() == 0
    with pytest.raises(InputValidationError):
        make_session_service(session_ttl=timedelta(0))


async def test_service_recovers_when_its_connections_are_killed(make_session_service, engine):
    """A Postgres restart or failover kills pooled connections; the next call still works."""
    service = make_session_service()
    session = await service.create_session(app_name=APP, user_id="u")
    async with engine.connect() as conn:
        raw = await conn.get_raw_connection()
        killer = raw.driver_connection
        await killer.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    handle = await service.get_session(app_name=APP, user_id="u", session_id=session.id)
    await service.append_event(handle, text_event("after the restart"))
    stored = await snapshot(service, "u", session.id)
    assert [e.content.parts[0].text for e in stored.events] == ["after the restart"]


@pytest.mark.parametrize("cache_size", [0, 1, 10_000])
async def test_reads_are_independent_copies_whatever_the_event_cache(
    make_session_service, cache_size
):
    """Callers may mutate what they read; the next read (cached or not) is unaffected."""
    service = make_session_service(event_cache_size=cache_size)
    session = await service.create_session(app_name=APP, user_id="u")
    for text in ("one", "two", "three"):
        await service.append_event(session, text_event(text, delta={"last": text}))
    first = await snapshot(service, "u", session.id)
    first.events[0].content.parts[0].text = "mutated"
    first.events[1].actions.state_delta["last"] = "mutated"
    first.events.pop()

    again = await snapshot(service, "u", session.id)
    assert [e.content.parts[0].text for e in again.events] == ["one", "two", "three"]
    assert again.events[1].actions.state_delta == {"last": "two"}
    assert again.events == session.events
    assert again.events[0] is not first.events[0]


@pytest.mark.parametrize("depth", [150, 200, 250, 400])
async def test_an_event_too_deep_to_read_back_is_refused_and_the_session_stays_readable(
    session_service, depth
):
    """Anything append_event accepts, get_session reads back: an event nested deeper than
    pydantic reads (about 200 levels) is refused with ADK's InputValidationError, and nothing is
    written, instead of bricking every later read of the session."""
    session = await session_service.create_session(app_name="app", user_id="u")
    value: object = "leaf"
    for _ in range(depth):
        value = {"k": value}
    response = types.FunctionResponse(name="tool", response={"result": value})
    event = Event(
        author="tool",
        invocation_id="inv",
        content=types.Content(role="user", parts=[types.Part(function_response=response)]),
    )
    try:
        await session_service.append_event(session, event)
        stored = True
    except InputValidationError:
        stored = False
    again = await session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [e.id for e in again.events] == ([event.id] if stored else [])
    assert stored == (depth == 150)


async def test_the_event_cache_is_bounded_in_bytes(make_session_service):
    """A few huge events must not grow the process without bound: the decoded-event cache
    keeps what fits its byte limit (estimated at twice the JSON), whatever its entry limit;
    reads are right whether an event was kept or not."""
    from adk_memory.sessions.codec import EventCache, decoded_weight, dump_event

    limit = 3 * 2**20
    big = "x" * 2**19  # 0.5 MB of text per event
    events = [
        Event(
            author="user",
            invocation_id=f"inv{n}",
            content=types.Content(role="user", parts=[types.Part(text=f"{n} {big}")]),
        )
        for n in range(8)
    ]
    cache = EventCache(max_events=10_000, max_bytes=limit)
    texts = [dump_event(e, None) for e in events]
    assert [e.id for e in cache.load(texts)] == [e.id for e in events]
    held, weight = cache.size
    assert weight <= limit and held == limit // decoded_weight(texts[0])
    assert cache.load(texts[-1:])[0] == events[-1]
    # Many small events are weighed by their objects too, not only their characters.
    small = EventCache(max_events=10_000, max_bytes=2**20)
    small.load([dump_event(Event(author="user", invocation_id=f"i{n}"), None) for n in range(500)])
    held, weight = small.size
    assert weight <= 2**20 and held <= 2**20 // (6 * 1024)

    service = make_session_service(event_cache_size=10_000, event_cache_bytes=limit)
    session = await service.create_session(app_name="app", user_id="u")
    for event in events:
        await service.append_event(session, event)
    again = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [e.content.parts[0].text[0] for e in again.events] == [str(n) for n in range(8)]
