"""ADK's session-service contract, proved on ADK's `InMemorySessionService` and on ours.

Every scenario that takes the `service` fixture runs twice: once on ADK's reference in-memory
service (google-adk 2.13) and once on `PostgresSessionService`. Whatever the reference does is
the contract: our service must pass every scenario the reference passes. The tests at the end
of the file
cover what only a persistent, multi-writer service can do (stale-handle detection).
"""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest
from fastapi.openapi.models import APIKey, APIKeyIn
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes, OAuth2Auth
from google.adk.auth.auth_tool import AuthConfig
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event, NodeInfo
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.events.ui_widget import UiWidget
from google.adk.models.cache_metadata import CacheMetadata
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types

APP = "contract_app"
OTHER_APP = "contract_other_app"

IN_MEMORY = "in_memory"
POSTGRES = "postgres"


@pytest.fixture(params=[IN_MEMORY, POSTGRES])
def service(request: pytest.FixtureRequest) -> BaseSessionService:
    """ADK's reference service, or ours on empty tables."""
    if request.param == IN_MEMORY:
        return InMemorySessionService()
    return request.getfixturevalue("session_service")


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def make_event(
    invocation_id: str = "inv",
    *,
    delta: dict[str, Any] | None = None,
    ts: float | None = None,
    text: str | None = None,
    **fields: Any,
) -> Event:
    """A small user event; `delta` becomes its state delta, `ts` its timestamp."""
    if ts is not None:
        fields["timestamp"] = ts
    if text is not None:
        fields["content"] = types.Content(role="user", parts=[types.Part(text=text)])
    return Event(
        invocation_id=invocation_id,
        author="user",
        actions=EventActions(state_delta=delta or {}),
        **fields,
    )


async def fetch(
    service: BaseSessionService,
    session: Session,
    config: GetSessionConfig | None = None,
) -> Session:
    """Re-read a session from storage; it must exist."""
    got = await service.get_session(
        app_name=session.app_name, user_id=session.user_id, session_id=session.id, config=config
    )
    assert got is not None
    return got


def stored_view(session: Session) -> tuple[Any, ...]:
    """What storage holds for a session (its public fields, not the handle's private marker)."""
    return (
        session.id,
        session.app_name,
        session.user_id,
        session.state,
        session.events,
        session.last_update_time,
    )


def typed(value: Any) -> Any:
    """`value` with every leaf paired with its type, so 1 and 1.0 (or True) compare unequal."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


def full_event(timestamp: float) -> Event:
    """An event with (nearly) every field ADK 2.13 defines set to a non-default value."""
    return Event(
        id="evt-full",
        invocation_id="inv-full",
        author="planner",
        branch="root.planner",
        isolation_scope="fc-lookup",
        model_version="gemini-test-001",
        timestamp=timestamp,
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="plain text ünïcødé ✓"),
                types.Part(text="inner thoughts", thought=True, thought_signature=b"\x00sig\xff"),
                types.Part.from_bytes(data=bytes(range(256)), mime_type="image/png"),
                types.Part(
                    function_call=types.FunctionCall(
                        id="fc-lookup",
                        name="lookup",
                        args={"query": "weather", "limit": 3, "filters": {"x": [1, None, 2.5]}},
                    )
                ),
                types.Part(
                    function_response=types.FunctionResponse(
                        id="fc-lookup",
                        name="lookup",
                        response={"result": ["sunny", "mild"], "error": None},
                    )
                ),
                types.Part(
                    file_data=types.FileData(file_uri="gs://bucket/doc.pdf", mime_type="text/pdf")
                ),
                types.Part(
                    executable_code=types.ExecutableCode(
                        code="print(6 * 7)", language=types.Language.PYTHON
                    )
                ),
                types.Part(
                    code_execution_result=types.CodeExecutionResult(
                        outcome=types.Outcome.OUTCOME_OK, output="42\n"
                    )
                ),
            ],
        ),
        grounding_metadata=types.GroundingMetadata(
            web_search_queries=["weather today"],
            search_entry_point=types.SearchEntryPoint(
                rendered_content="<div>search</div>", sdk_blob=b"\x01sdk\x00blob"
            ),
        ),
        partial=False,
        turn_complete=True,
        turn_complete_reason=types.TurnCompleteReason.NEED_MORE_INPUT,
        interaction_status=types.InteractionStatus.IDLE,
        finish_reason=types.FinishReason.STOP,
        error_code="E_TOOL",
        error_message="tool failed once",
        interrupted=True,
        custom_metadata={
            "custom_key": "custom_value",
            "nested": {"none": None, "numbers": [1, 2.5, -3]},
            "__adk_internal_fc_hmac": "c2lnbmF0dXJl",
            "__adk_internal_restored_event": True,
        },
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=11,
            candidates_token_count=7,
            total_token_count=18,
            cached_content_token_count=2,
            thoughts_token_count=3,
            prompt_tokens_details=[
                types.ModalityTokenCount(modality=types.MediaModality.TEXT, token_count=11)
            ],
        ),
        live_session_resumption_update=types.LiveServerSessionResumptionUpdate(
            new_handle="handle-1", resumable=True, last_consumed_client_message_index=4
        ),
        live_session_id="live-1",
        go_away=types.LiveServerGoAway(time_left="5s"),
        voice_activity=types.VoiceActivity(
            voice_activity_type=types.VoiceActivityType.ACTIVITY_START
        ),
        input_transcription=types.Transcription(text="what is the weather", finished=True),
        output_transcription=types.Transcription(text="it is sunny", finished=False),
        avg_logprobs=-0.125,
        logprobs_result=types.LogprobsResult(
            chosen_candidates=[
                types.LogprobsResultCandidate(token="sun", log_probability=-0.1, token_id=9)
            ]
        ),
        cache_metadata=CacheMetadata(
            cache_name="projects/p/locations/l/cachedContents/c1",
            expire_time=1_700_003_600.5,
            fingerprint="fp-1",
            invocations_used=2,
            contents_count=5,
            created_at=1_700_000_000.25,
        ),
        citation_metadata=types.CitationMetadata(
            citations=[types.Citation(start_index=0, end_index=5, uri="https://example.com")]
        ),
        interaction_id="interaction-1",
        environment_id="env-1",
        output={"answer": 42, "items": [1, "two", None], "ok": True},
        node_info=NodeInfo(path="wf/planner@1", output_for=["wf"], message_as_output=True),
        long_running_tool_ids={"fc-lookup", "fc-other", "fc-third"},
        actions=EventActions(
            skip_summarization=False,
            state_delta={"sk": "v", "none_value": None, "app:ak": 1, "user:uk": [1, 2]},
            artifact_delta={"report.pdf": 3},
            transfer_to_agent="writer",
            transfer_reason="needs prose",
            escalate=True,
            requested_tool_confirmations={
                "fc-lookup": ToolConfirmation(hint="Proceed?", confirmed=False, payload={"n": 1})
            },
            end_of_agent=True,
            agent_state={"step": 3, "pending": ["a", "b"], "nested": {"k": None}},
            route=["approve", 2, True],
            render_ui_widgets=[UiWidget(id="w1", provider="mcp", payload={"uri": "ui://x"})],
            set_model_response={"title": "Weather", "score": 0.75},
        ),
    )


# --------------------------------------------------------------------------------------------
# Create, get, delete
# --------------------------------------------------------------------------------------------


async def test_unknown_session_is_none(service: BaseSessionService) -> None:
    assert await service.get_session(app_name=APP, user_id="u", session_id="nope") is None
    await service.create_session(app_name=APP, user_id="u", session_id="known")
    assert await service.get_session(app_name=APP, user_id="u2", session_id="known") is None
    assert await service.get_session(app_name=OTHER_APP, user_id="u", session_id="known") is None


async def test_create_with_generated_id_then_get_and_delete(service: BaseSessionService) -> None:
    before = time.time()
    created = await service.create_session(app_name=APP, user_id="u", state={"key": "value"})
    after = time.time()

    assert isinstance(created.id, str) and created.id
    assert (created.app_name, created.user_id) == (APP, "u")
    assert created.state == {"key": "value"}
    assert created.events == []
    assert before <= created.last_update_time <= after

    got = await fetch(service, created)
    assert got == created
    assert got.last_update_time == created.last_update_time

    await service.delete_session(app_name=APP, user_id="u", session_id=created.id)
    assert await service.get_session(app_name=APP, user_id="u", session_id=created.id) is None


async def test_generated_ids_are_unique(service: BaseSessionService) -> None:
    ids = {(await service.create_session(app_name=APP, user_id="u")).id for _ in range(5)}
    assert len(ids) == 5
    listed = await service.list_sessions(app_name=APP, user_id="u")
    assert {s.id for s in listed.sessions} == ids


async def test_explicit_session_id_is_whitespace_stripped(service: BaseSessionService) -> None:
    created = await service.create_session(app_name=APP, user_id="u", session_id="  pad ü\t\n")
    assert created.id == "pad ü"

    for spelling in ("pad ü", " pad ü ", "\tpad ü"):
        got = await service.get_session(app_name=APP, user_id="u", session_id=spelling)
        assert got is not None and got.id == "pad ü"
    assert [s.id for s in (await service.list_sessions(app_name=APP)).sessions] == ["pad ü"]

    await service.delete_session(app_name=APP, user_id="u", session_id="  pad ü  ")
    assert await service.get_session(app_name=APP, user_id="u", session_id="pad ü") is None


@pytest.mark.parametrize("blank", [None, "", "   "])
async def test_blank_session_id_means_generated(service: BaseSessionService, blank: Any) -> None:
    created = await service.create_session(app_name=APP, user_id="u", session_id=blank)
    assert created.id.strip() == created.id != ""
    assert (await fetch(service, created)).id == created.id


async def test_duplicate_id_for_same_user_raises(service: BaseSessionService) -> None:
    first = await service.create_session(
        app_name=APP, user_id="u", session_id="dup", state={"k": "first"}
    )

    with pytest.raises(AlreadyExistsError):
        await service.create_session(
            app_name=APP,
            user_id="u",
            session_id="dup",
            state={"k": "second", "app:a": "second", "user:b": "second"},
        )
    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name=APP, user_id="u", session_id=" dup ")

    # The rejected creates changed nothing, not even the app/user state they carried.
    assert await fetch(service, first) == first
    assert await service.get_user_state(app_name=APP, user_id="u") == {}
    fresh = await service.create_session(app_name=APP, user_id="u2")
    assert fresh.state == {}


async def test_same_id_for_another_user_is_independent(service: BaseSessionService) -> None:
    mine = await service.create_session(
        app_name=APP, user_id="u1", session_id="shared", state={"owner": "u1"}
    )
    await service.append_event(mine, make_event("inv1", text="u1 only"))

    theirs = await service.create_session(
        app_name=APP, user_id="u2", session_id="shared", state={"owner": "u2"}
    )
    assert theirs.id == "shared"

    got = await service.get_session(app_name=APP, user_id="u2", session_id="shared")
    assert got is not None
    assert got.user_id == "u2"
    assert got.state == {"owner": "u2"}
    assert got.events == []

    await service.delete_session(app_name=APP, user_id="u2", session_id="shared")
    still_mine = await fetch(service, mine)
    assert len(still_mine.events) == 1
    assert still_mine.state == {"owner": "u1"}


async def test_delete_is_scoped_and_idempotent(service: BaseSessionService) -> None:
    keep = await service.create_session(app_name=APP, user_id="u", session_id="keep")
    drop = await service.create_session(app_name=APP, user_id="u", session_id="drop")
    other_app = await service.create_session(app_name=OTHER_APP, user_id="u", session_id="drop")

    await service.delete_session(app_name=APP, user_id="u", session_id="drop")
    await service.delete_session(app_name=APP, user_id="u", session_id="drop")
    await service.delete_session(app_name=APP, user_id="u", session_id="never-existed")
    await service.delete_session(app_name=APP, user_id="ghost", session_id="keep")

    assert await service.get_session(app_name=APP, user_id="u", session_id=drop.id) is None
    assert await fetch(service, keep) == keep
    assert await fetch(service, other_app) == other_app


async def test_returned_sessions_are_copies(service: BaseSessionService) -> None:
    created = await service.create_session(app_name=APP, user_id="u", state={"k": [1]})
    await service.append_event(created, make_event(text="hello"))

    got = await fetch(service, created)
    got.state["k"].append(2)
    got.state["extra"] = True
    got.events.clear()

    again = await fetch(service, created)
    assert again.state == {"k": [1]}
    assert len(again.events) == 1


# --------------------------------------------------------------------------------------------
# list_sessions
# --------------------------------------------------------------------------------------------


async def test_list_sessions_of_one_user(service: BaseSessionService) -> None:
    ids = [f"session{i}" for i in range(5)]
    for sid in ids:
        await service.create_session(
            app_name=APP, user_id="u", session_id=sid, state={"key": "value" + sid}
        )
    await service.create_session(app_name=APP, user_id="someone_else", session_id="x")
    s0 = await service.get_session(app_name=APP, user_id="u", session_id="session0")
    assert s0 is not None
    await service.append_event(
        s0, make_event(delta={"app:shared": 1, "user:mine": 2}, text="not listed")
    )

    listed = (await service.list_sessions(app_name=APP, user_id="u")).sessions

    assert sorted(s.id for s in listed) == ids
    for s in listed:
        assert s.app_name == APP and s.user_id == "u"
        assert s.events == []
        assert s.state == {"key": "value" + s.id, "app:shared": 1, "user:mine": 2}


async def test_list_sessions_of_all_users(service: BaseSessionService) -> None:
    await service.create_session(
        app_name=APP, user_id="user1", session_id="s1a", state={"key": "1a", "user:who": 1}
    )
    await service.create_session(app_name=APP, user_id="user1", session_id="s1b")
    await service.create_session(
        app_name=APP, user_id="user2", session_id="s2a", state={"key": "2a", "app:v": 9}
    )
    await service.create_session(app_name=OTHER_APP, user_id="user1", session_id="elsewhere")

    by_user1 = (await service.list_sessions(app_name=APP, user_id="user1")).sessions
    assert {s.id: s.state for s in by_user1} == {
        "s1a": {"key": "1a", "user:who": 1, "app:v": 9},
        "s1b": {"user:who": 1, "app:v": 9},
    }
    by_user2 = (await service.list_sessions(app_name=APP, user_id="user2")).sessions
    assert [(s.id, s.state) for s in by_user2] == [("s2a", {"key": "2a", "app:v": 9})]

    everyone = (await service.list_sessions(app_name=APP, user_id=None)).sessions
    assert {(s.user_id, s.id): s.state for s in everyone} == {
        ("user1", "s1a"): {"key": "1a", "user:who": 1, "app:v": 9},
        ("user1", "s1b"): {"user:who": 1, "app:v": 9},
        ("user2", "s2a"): {"key": "2a", "app:v": 9},
    }
    assert all(s.events == [] for s in everyone)
    assert len((await service.list_sessions(app_name=APP)).sessions) == 3


async def test_list_sessions_oldest_update_first(service: BaseSessionService) -> None:
    first = await service.create_session(app_name=APP, user_id="u", session_id="first")
    second = await service.create_session(app_name=APP, user_id="u", session_id="second")
    third = await service.create_session(app_name=APP, user_id="v", session_id="third")
    base = max(first.last_update_time, second.last_update_time, third.last_update_time)

    # "first" becomes the most recently updated; "third" is touched before it.
    await service.append_event(third, make_event(ts=base + 10))
    await service.append_event(first, make_event(ts=base + 20))

    mine = (await service.list_sessions(app_name=APP, user_id="u")).sessions
    assert [s.id for s in mine] == ["second", "first"]
    assert mine[-1].last_update_time == base + 20

    everyone = (await service.list_sessions(app_name=APP)).sessions
    assert [s.id for s in everyone] == ["second", "third", "first"]
    times = [s.last_update_time for s in everyone]
    assert times == sorted(times)


async def test_list_sessions_ties_break_on_user_then_id(service: BaseSessionService) -> None:
    tie = time.time() + 100
    for user_id, sid in [("b", "s2"), ("b", "s1"), ("a", "s9"), ("B", "s0")]:
        session = await service.create_session(app_name=APP, user_id=user_id, session_id=sid)
        await service.append_event(session, make_event(ts=tie))

    everyone = (await service.list_sessions(app_name=APP)).sessions
    assert [(s.user_id, s.id) for s in everyone] == sorted(
        [("b", "s2"), ("b", "s1"), ("a", "s9"), ("B", "s0")]
    )


async def test_list_sessions_of_nobody_is_empty(service: BaseSessionService) -> None:
    assert (await service.list_sessions(app_name=APP)).sessions == []
    assert (await service.list_sessions(app_name=APP, user_id="u")).sessions == []
    await service.create_session(app_name=APP, user_id="u")
    assert (await service.list_sessions(app_name=APP, user_id="nobody")).sessions == []
    assert (await service.list_sessions(app_name=OTHER_APP)).sessions == []


# --------------------------------------------------------------------------------------------
# Scoped state
# --------------------------------------------------------------------------------------------


async def test_app_state_is_shared_by_every_user_of_the_app(service: BaseSessionService) -> None:
    s1 = await service.create_session(app_name=APP, user_id="u1", state={"app:k1": "v1"})
    await service.append_event(s1, make_event(delta={"app:k2": "v2"}))
    assert s1.state == {"app:k1": "v1", "app:k2": "v2"}

    s2 = await service.create_session(app_name=APP, user_id="u2")
    assert s2.state == {"app:k1": "v1", "app:k2": "v2"}

    await service.append_event(s2, make_event(delta={"app:k1": "changed"}))
    assert (await fetch(service, s1)).state == {"app:k1": "changed", "app:k2": "v2"}

    elsewhere = await service.create_session(app_name=OTHER_APP, user_id="u1")
    assert elsewhere.state == {}


async def test_user_state_is_shared_by_one_users_sessions_only(
    service: BaseSessionService,
) -> None:
    s1 = await service.create_session(app_name=APP, user_id="u1", state={"user:k1": "v1"})
    await service.append_event(s1, make_event(delta={"user:k2": "v2"}))

    s1b = await service.create_session(app_name=APP, user_id="u1")
    assert s1b.state == {"user:k1": "v1", "user:k2": "v2"}

    s2 = await service.create_session(app_name=APP, user_id="u2")
    assert s2.state == {}
    other_app = await service.create_session(app_name=OTHER_APP, user_id="u1")
    assert other_app.state == {}

    await service.append_event(s1b, make_event(delta={"user:k1": "changed"}))
    assert (await fetch(service, s1)).state == {"user:k1": "changed", "user:k2": "v2"}
    assert (await fetch(service, s2)).state == {}


async def test_session_state_stays_in_its_session(service: BaseSessionService) -> None:
    s1 = await service.create_session(app_name=APP, user_id="u1", state={"sk1": "v1"})
    await service.append_event(s1, make_event(delta={"sk2": "v2", "sk1": "v1b"}))
    assert s1.state == {"sk1": "v1b", "sk2": "v2"}
    assert (await fetch(service, s1)).state == {"sk1": "v1b", "sk2": "v2"}

    s1b = await service.create_session(app_name=APP, user_id="u1")
    assert s1b.state == {}
    assert (await fetch(service, s1b)).state == {}


async def test_temp_state_is_never_stored(service: BaseSessionService) -> None:
    created = await service.create_session(
        app_name=APP, user_id="u", state={"temp:from_create": 1, "keep": 1}
    )
    assert created.state == {"keep": 1}
    assert (await fetch(service, created)).state == {"keep": 1}

    first = make_event("inv1", delta={"temp:k1": "v1", "sk": "v2"})
    returned = await service.append_event(created, first)

    # The caller's session sees the temp value for the rest of the invocation ...
    assert created.state == {"keep": 1, "sk": "v2", "temp:k1": "v1"}
    # ... but the event (as passed in, as returned, as held by the session) lost it.
    assert first.actions.state_delta == {"sk": "v2"}
    assert returned.actions.state_delta == {"sk": "v2"}
    assert created.events[-1].actions.state_delta == {"sk": "v2"}

    second = make_event("inv1", delta={"temp:k2": "v3", "user:u": 1})
    await service.append_event(created, second)
    assert created.state == {"keep": 1, "sk": "v2", "temp:k1": "v1", "temp:k2": "v3", "user:u": 1}

    got = await fetch(service, created)
    assert got.state == {"keep": 1, "sk": "v2", "user:u": 1}
    assert [e.actions.state_delta for e in got.events] == [{"sk": "v2"}, {"user:u": 1}]
    assert await service.get_user_state(app_name=APP, user_id="u") == {"u": 1}


async def test_get_user_state(service: BaseSessionService) -> None:
    assert await service.get_user_state(app_name=APP, user_id="u1") == {}

    s1 = await service.create_session(
        app_name=APP, user_id="u1", state={"user:name": "Ada", "app:a": 1, "session_key": 2}
    )
    assert await service.get_user_state(app_name=APP, user_id="u1") == {"name": "Ada"}

    await service.append_event(
        s1, make_event(delta={"user:name": "Grace", "user:langs": ["py"], "temp:x": 1})
    )
    assert await service.get_user_state(app_name=APP, user_id="u1") == {
        "name": "Grace",
        "langs": ["py"],
    }
    assert await service.get_user_state(app_name=APP, user_id="u2") == {}
    assert await service.get_user_state(app_name=OTHER_APP, user_id="u1") == {}

    await service.create_session(app_name=APP, user_id="u2", state={"user:name": "Linus"})
    assert await service.get_user_state(app_name=APP, user_id="u2") == {"name": "Linus"}
    assert await service.get_user_state(app_name=APP, user_id="u1") == {
        "name": "Grace",
        "langs": ["py"],
    }


async def test_scoped_state_outlives_deleted_sessions(service: BaseSessionService) -> None:
    gone = await service.create_session(
        app_name=APP, user_id="u", state={"app:a": 1, "user:b": 2, "c": 3}
    )
    await service.delete_session(app_name=APP, user_id="u", session_id=gone.id)

    assert await service.get_user_state(app_name=APP, user_id="u") == {"b": 2}
    fresh = await service.create_session(app_name=APP, user_id="u")
    assert fresh.state == {"app:a": 1, "user:b": 2}


async def test_state_values_round_trip_exactly(service: BaseSessionService) -> None:
    values = {
        "none": None,
        "bools": [True, False],
        "ints": [0, -1, 2**53 + 1, 10**30],
        "floats": [0.1, -2.5, 1e-7, 1.5e-300, 3.0],
        "text": 'ünïcødé ✓ "quoted" \\ back\nslash',
        "nested": {"list": [{"a": []}, {}], "empty": {}},
    }
    created = await service.create_session(
        app_name=APP,
        user_id="u",
        state={"s": values, "app:a": values, "user:u": values},
    )
    await service.append_event(created, make_event(delta={"d": values, "user:d": values}))

    got = await fetch(service, created)
    expected = {"s": values, "app:a": values, "user:u": values, "d": values, "user:d": values}
    assert got.state == expected
    assert typed(got.state) == typed(expected)
    assert got.events[0].actions.state_delta == {"d": values, "user:d": values}


async def test_large_float_state_values_stay_floats(service: BaseSessionService) -> None:
    values = {"big": 1e23, "bigger": 6.02e23, "round": 1e16}
    created = await service.create_session(app_name=APP, user_id="u", state=dict(values))
    await service.append_event(created, make_event(delta={"app:big": 1e23}))

    got = await fetch(service, created)
    assert typed(got.state) == typed({**values, "app:big": 1e23})


# --------------------------------------------------------------------------------------------
# Events: round trips
# --------------------------------------------------------------------------------------------


async def test_full_event_round_trips_exactly(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u", state={"before": 1})
    event = full_event(timestamp=session.last_update_time + 0.123456)

    returned = await service.append_event(session, event)
    assert returned == event
    assert session.events == [event]

    got = await fetch(service, session)
    assert got.events == [event]
    assert got == session
    assert isinstance(got.events[0].long_running_tool_ids, set)
    assert got.events[0].custom_metadata == event.custom_metadata
    assert got.state == {"before": 1, "sk": "v", "none_value": None, "app:ak": 1, "user:uk": [1, 2]}


async def test_binary_parts_round_trip(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    content = types.Content(
        role="user",
        parts=[types.Part.from_bytes(data=b"\x89PNG\r\n\x1a\n\x00\xff", mime_type="image/png")],
    )
    grounding = types.GroundingMetadata(
        search_entry_point=types.SearchEntryPoint(sdk_blob=b"\x00\x01test_sdk_blob")
    )
    await service.append_event(session, make_event(content=content, grounding_metadata=grounding))
    assert session.events[0].content == content

    got = await fetch(service, session)
    assert len(got.events) == 1
    assert got.events[0].content == content
    assert got.events[0].grounding_metadata == grounding
    assert got.events[0].content.parts[0].inline_data.data == b"\x89PNG\r\n\x1a\n\x00\xff"


async def test_compaction_rewind_and_agent_state_events_round_trip(
    service: BaseSessionService,
) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    t0 = session.last_update_time
    turns = [make_event(f"inv{i}", ts=t0 + i, text=f"turn {i}") for i in (1, 2, 3)]
    for turn in turns:
        await service.append_event(session, turn)

    compaction = Event(
        invocation_id="inv-compact",
        author="user",
        timestamp=t0 + 4,
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=t0 + 1,
                end_timestamp=t0 + 2,
                compacted_content=types.Content(
                    role="model", parts=[types.Part(text="summary of turns 1 and 2")]
                ),
            )
        ),
    )
    checkpoint = Event(
        invocation_id="inv3",
        author="workflow",
        timestamp=t0 + 5,
        actions=EventActions(agent_state={"cursor": 7, "seen": ["a"]}, end_of_agent=False),
    )
    rewind = Event(
        invocation_id="inv-rewind",
        author="user",
        timestamp=t0 + 6,
        actions=EventActions(rewind_before_invocation_id="inv2", state_delta={"rewound": True}),
    )
    for event in (compaction, checkpoint, rewind):
        await service.append_event(session, event)

    got = await fetch(service, session)
    assert got.events == [*turns, compaction, checkpoint, rewind]
    assert got.events[3].actions.compaction == compaction.actions.compaction
    assert got.events[5].actions.rewind_before_invocation_id == "inv2"
    assert got == session


async def test_auth_request_event_round_trips(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    event = Event(
        invocation_id="inv1",
        author="planner",
        actions=EventActions(
            requested_auth_configs={
                "fc-1": AuthConfig(
                    auth_scheme=APIKey(**{"in": APIKeyIn.header}, name="X-Api-Key"),
                    raw_auth_credential=AuthCredential(
                        auth_type=AuthCredentialTypes.OAUTH2,
                        oauth2=OAuth2Auth(client_id="client", client_secret="secret"),
                    ),
                    credential_key="cred-1",
                )
            }
        ),
    )
    await service.append_event(session, event)

    got = await fetch(service, session)
    assert got.events == [event]


async def test_last_update_time_is_the_event_timestamp(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    created_at = session.last_update_time

    stamp = created_at + 10.123456789
    await service.append_event(session, make_event(ts=stamp))
    assert session.last_update_time == stamp
    got = await fetch(service, session)
    assert got.last_update_time == stamp
    assert got.last_update_time > created_at

    listed = (await service.list_sessions(app_name=APP, user_id="u")).sessions
    assert [s.last_update_time for s in listed] == [stamp]


# --------------------------------------------------------------------------------------------
# Events: selection and order
# --------------------------------------------------------------------------------------------


ALL_FIVE = [1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param(None, ALL_FIVE, id="no-config"),
        pytest.param(GetSessionConfig(), ALL_FIVE, id="empty-config"),
        pytest.param(GetSessionConfig(num_recent_events=3), [3.0, 4.0, 5.0], id="recent-3"),
        pytest.param(GetSessionConfig(num_recent_events=1), [5.0], id="recent-1"),
        pytest.param(GetSessionConfig(num_recent_events=99), ALL_FIVE, id="recent-99"),
        pytest.param(GetSessionConfig(num_recent_events=0), [], id="recent-0"),
        pytest.param(GetSessionConfig(after_timestamp=4.0), [4.0, 5.0], id="after-4-inclusive"),
        pytest.param(GetSessionConfig(after_timestamp=3.5), [4.0, 5.0], id="after-3.5"),
        pytest.param(GetSessionConfig(after_timestamp=0.0), ALL_FIVE, id="after-0"),
        pytest.param(GetSessionConfig(after_timestamp=50.0), [], id="after-50"),
        pytest.param(
            GetSessionConfig(after_timestamp=4.0, num_recent_events=3),
            [4.0, 5.0],
            id="after-4-recent-3",
        ),
        pytest.param(
            GetSessionConfig(after_timestamp=2.0, num_recent_events=2),
            [4.0, 5.0],
            id="after-2-recent-2",
        ),
        pytest.param(
            GetSessionConfig(after_timestamp=1.0, num_recent_events=0), [], id="after-1-recent-0"
        ),
    ],
)
async def test_get_session_config_selects_events(
    service: BaseSessionService, config: GetSessionConfig | None, expected: list[float]
) -> None:
    session = await service.create_session(app_name=APP, user_id="u", state={"k": 1})
    # Timestamps 1.0..5.0: long before the session was created, which must not matter.
    events = [Event(author="user", timestamp=float(i)) for i in range(1, 6)]
    for event in events:
        await service.append_event(session, event)
    assert session.last_update_time == 5.0

    got = await fetch(service, session, config)
    assert [e.timestamp for e in got.events] == expected
    assert got.events == [e for e in events if e.timestamp in expected]
    # The filters select events only: state and update time are the session's own.
    assert got.state == {"k": 1}
    assert got.last_update_time == 5.0


async def test_equal_timestamps_keep_append_order(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    stamp = session.last_update_time + 1
    events = [make_event(f"inv{i}", ts=stamp, text=str(i)) for i in range(6)]
    for event in events:
        await service.append_event(session, event)

    assert (await fetch(service, session)).events == events
    recent = await fetch(service, session, GetSessionConfig(num_recent_events=2))
    assert recent.events == events[-2:]
    since = await fetch(service, session, GetSessionConfig(after_timestamp=stamp))
    assert since.events == events


async def test_backdated_event_keeps_append_order(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    late = make_event("inv1", ts=session.last_update_time + 5, text="first appended")
    early = make_event("inv2", ts=1.0, text="second appended, older timestamp")
    await service.append_event(session, late)
    await service.append_event(session, early)

    assert session.events == [late, early]
    assert session.last_update_time == 1.0
    got = await fetch(service, session)
    assert got.events == [late, early]


async def test_partial_events_are_not_stored(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    partial = make_event(partial=True, delta={"k": 1}, text="fragm")

    assert await service.append_event(session, partial) is partial
    assert session.events == []
    assert session.state == {}

    got = await fetch(service, session)
    assert got.events == []
    assert got.state == {}
    assert got.last_update_time == session.last_update_time


# --------------------------------------------------------------------------------------------
# Events: re-delivery and missing sessions
# --------------------------------------------------------------------------------------------


async def test_reappending_the_same_event_is_a_no_op(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    first = make_event("inv1", delta={"k": "first", "app:a": 1}, ts=session.last_update_time + 1)
    second = make_event("inv2", delta={"k": "second", "app:a": 2}, ts=session.last_update_time + 2)
    await service.append_event(session, first)
    await service.append_event(session, second)

    assert await service.append_event(session, first) == first
    await service.append_event(session, second)

    assert session.events == [first, second]
    assert session.state == {"k": "second", "app:a": 2}
    got = await fetch(service, session)
    assert got.events == [first, second]
    assert got.state == {"k": "second", "app:a": 2}
    assert got.last_update_time == second.timestamp


async def test_reappending_an_equal_copy_is_a_no_op(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    first = make_event("inv1", delta={"k": "first", "user:n": 1}, ts=session.last_update_time + 1)
    second = make_event(
        "inv2", delta={"k": "second", "user:n": 2}, ts=session.last_update_time + 2, text="2"
    )
    await service.append_event(session, first)
    await service.append_event(session, second)

    # Through the same handle, a freshly loaded one, and one that loaded no events.
    await service.append_event(session, copy.deepcopy(first))
    fresh = await fetch(service, session)
    await service.append_event(fresh, Event.model_validate_json(first.model_dump_json()))
    eventless = await fetch(service, session, GetSessionConfig(num_recent_events=0))
    await service.append_event(eventless, first.model_copy(deep=True))
    await service.append_event(eventless, second.model_copy(deep=True))

    got = await fetch(service, session)
    assert got.events == [first, second]
    assert got.state == {"k": "second", "user:n": 2}
    assert got.last_update_time == second.timestamp
    assert await service.get_user_state(app_name=APP, user_id="u") == {"n": 2}


async def test_equal_copy_with_reordered_keys_is_a_no_op(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    original = make_event("inv1", delta={"a": 1, "b": 2}, custom_metadata={"x": 1, "y": 2})
    await service.append_event(session, original)

    reordered = original.model_copy(deep=True)
    reordered.actions.state_delta = {"b": 2, "a": 1}
    reordered.custom_metadata = {"y": 2, "x": 1}
    assert reordered == original

    handle = await fetch(service, session, GetSessionConfig(num_recent_events=0))
    await service.append_event(handle, reordered)

    assert (await fetch(service, session)).events == [original]


async def test_distinct_events_sharing_an_id_are_both_kept(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    one = make_event("inv1", id="fixed-id", text="one")
    two = make_event("inv2", id="fixed-id", text="two")
    await service.append_event(session, one)
    await service.append_event(session, two)

    assert (await fetch(service, session)).events == [one, two]


async def test_append_to_missing_session_raises(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u", session_id="doomed")
    await service.append_event(session, make_event("inv1"))
    await service.delete_session(app_name=APP, user_id="u", session_id="doomed")

    with pytest.raises(SessionNotFoundError):
        await service.append_event(session, make_event("inv2", delta={"user:x": 1}))
    assert await service.get_session(app_name=APP, user_id="u", session_id="doomed") is None
    assert await service.get_user_state(app_name=APP, user_id="u") == {}

    never_created = Session(id="ghost", app_name=APP, user_id="u")
    with pytest.raises(SessionNotFoundError):
        await service.append_event(never_created, make_event("inv3"))
    assert await service.get_session(app_name=APP, user_id="u", session_id="ghost") is None

    # A partial event is dropped before the session is even looked up.
    await service.append_event(never_created, make_event("inv4", partial=True))


async def test_any_current_handle_can_append(service: BaseSessionService) -> None:
    created = await service.create_session(app_name=APP, user_id="u", session_id="s")
    await service.append_event(created, make_event("inv1", ts=created.last_update_time + 1))

    listed = (await service.list_sessions(app_name=APP, user_id="u")).sessions[0]
    await service.append_event(listed, make_event("inv2", ts=created.last_update_time + 2))
    assert [e.invocation_id for e in listed.events] == ["inv2"]

    tail = await fetch(service, created, GetSessionConfig(num_recent_events=1))
    await service.append_event(tail, make_event("inv3", ts=created.last_update_time + 3))
    assert [e.invocation_id for e in tail.events] == ["inv2", "inv3"]

    got = await fetch(service, created)
    assert [e.invocation_id for e in got.events] == ["inv1", "inv2", "inv3"]
    assert got.last_update_time == created.last_update_time + 3


async def test_session_rebuilt_from_json_can_append(service: BaseSessionService) -> None:
    created = await service.create_session(app_name=APP, user_id="u", state={"k": 0})
    await service.append_event(created, make_event("inv1", delta={"k": 1}))

    # e.g. a session handed across a process boundary: only its public fields survive.
    rebuilt = Session.model_validate_json((await fetch(service, created)).model_dump_json())
    event = make_event("inv2", delta={"k": 2})
    await service.append_event(rebuilt, event)

    got = await fetch(service, created)
    assert [e.invocation_id for e in got.events] == ["inv1", "inv2"]
    assert got.state == {"k": 2}
    assert got.last_update_time == event.timestamp


async def test_append_accepts_positional_and_keyword_arguments(
    service: BaseSessionService,
) -> None:
    session = await service.create_session(app_name=APP, user_id="u")
    positional = make_event("inv1")
    keyword = make_event("inv2")
    await service.append_event(session, positional)
    await service.append_event(session=session, event=keyword)
    assert (await fetch(service, session)).events == [positional, keyword]


# --------------------------------------------------------------------------------------------
# Ours only: stale handles (InMemorySessionService accepts writes through any handle)
# --------------------------------------------------------------------------------------------


async def test_stale_handle_is_rejected_and_changes_nothing(session_service) -> None:
    svc = session_service
    created = await svc.create_session(app_name=APP, user_id="u", state={"k": 0, "user:n": 0})
    first = await fetch(svc, created)
    second = await fetch(svc, created)

    winner = make_event("inv1", delta={"k": 1, "user:n": 1}, ts=created.last_update_time + 1)
    await svc.append_event(first, winner)
    before = await fetch(svc, created)

    loser = make_event(
        "inv2", delta={"k": 2, "app:a": 2, "user:n": 2}, ts=created.last_update_time + 2
    )
    with pytest.raises(StaleSessionError):
        await svc.append_event(second, loser)

    after = await fetch(svc, created)
    assert stored_view(after) == stored_view(before)
    assert after.events == [winner]
    assert after.state == {"k": 1, "user:n": 1}
    assert await svc.get_user_state(app_name=APP, user_id="u") == {"n": 1}
    assert (await svc.create_session(app_name=APP, user_id="other")).state == {}
    # The rejected handle was not advanced either.
    assert second.events == []
    assert second.last_update_time == created.last_update_time

    # Reloading gives a handle that can write again.
    reloaded = await fetch(svc, created)
    await svc.append_event(reloaded, loser)
    assert (await fetch(svc, created)).events == [winner, loser]


async def test_stale_handle_from_create_is_rejected(session_service) -> None:
    svc = session_service
    created = await svc.create_session(app_name=APP, user_id="u")
    loaded = await fetch(svc, created)
    await svc.append_event(loaded, make_event("inv1"))

    with pytest.raises(StaleSessionError):
        await svc.append_event(created, make_event("inv2"))
    assert len((await fetch(svc, created)).events) == 1


async def test_retry_through_stale_handle_of_newest_event_is_a_no_op(session_service) -> None:
    svc = session_service
    created = await svc.create_session(app_name=APP, user_id="u")
    first = await fetch(svc, created)
    second = await fetch(svc, created)

    event = make_event("inv1", delta={"k": 1, "user:n": 1}, ts=created.last_update_time + 1)
    await svc.append_event(first, event)
    # e.g. the first attempt's reply was lost and a retry runs on another handle.
    assert await svc.append_event(second, copy.deepcopy(event)) == event
    await svc.append_event(second, event)

    got = await fetch(svc, created)
    assert got.events == [event]
    assert got.state == {"k": 1, "user:n": 1}
    assert got.last_update_time == event.timestamp


async def test_retry_through_stale_handle_of_older_event_is_a_no_op(session_service) -> None:
    svc = session_service
    created = await svc.create_session(app_name=APP, user_id="u")
    writer = await fetch(svc, created)
    stale = await fetch(svc, created)

    older = make_event("inv1", delta={"k": "older"}, ts=created.last_update_time + 1)
    newer = make_event("inv2", delta={"k": "newer"}, ts=created.last_update_time + 2)
    await svc.append_event(writer, older)
    await svc.append_event(writer, newer)
    before = await fetch(svc, created)

    await svc.append_event(stale, copy.deepcopy(older))

    after = await fetch(svc, created)
    assert stored_view(after) == stored_view(before)
    assert after.events == [older, newer]
    assert after.state == {"k": "newer"}
    # A new event through that handle is still refused: it has missed `newer`.
    with pytest.raises(StaleSessionError):
        await svc.append_event(stale, make_event("inv3"))
