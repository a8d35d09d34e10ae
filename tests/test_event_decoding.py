"""Differential test of the direct event decoder (`adk_memory.sessions.decoding`) against
pydantic's validation and ADK's own `DatabaseSessionService` decoding.

Hypothesis builds events of every shape agents produce (text with any unicode and long texts,
thoughts and thought signatures, function calls and responses, inline data, code execution,
state and artifact deltas, transfers, compaction summaries, usage and grounding metadata, finish
reasons, custom metadata, long-running tool ids). Each is written as the codec stores it
(`dump_event`) and read back three ways: `decoding.decode` (None when it declines), pydantic's
`Event.model_validate_json` (what the service used before, and still uses when the direct path
declines), and ADK's own `StorageEvent` round trip (its JSON column, then `to_event`). They
must agree: equal models, equal dumps (also of only the fields set, and in JSON), equal reprs
(field order). Decoding never touches the database; the last test reads events of both
kinds through the service, per user, with the cache on and off (the service-level suites,
`test_session_service.py` and `test_session_differential.py`, read every other shape).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.sessions.schemas.v1 import StorageEvent
from google.adk.sessions.session import Session
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_memory.sessions.codec import dump_event
from adk_memory.sessions.decoding import copier, decode

_text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
    max_size=40,
)
_long_text = st.integers(1_000, 20_000).map(lambda n: ("Grüße, 世界 🌍 " * n)[:n])
_floats = st.floats(allow_nan=False, allow_infinity=False)
_json: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | _floats | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=12,
)
_json_object = st.dictionaries(_text, _json, max_size=4)
_count = st.integers(0, 2**31)


@st.composite
def _part(draw: st.DrawFn) -> types.Part:
    kind = draw(st.integers(0, 8))
    if kind == 0:
        return types.Part(text=draw(_text | _long_text))
    if kind == 1:
        return types.Part(text=draw(_text), thought=True)
    if kind in (2, 3):
        call = types.FunctionCall(id=draw(_text), name=draw(_text), args=draw(_json_object))
        signature = draw(st.none() | st.binary(min_size=1, max_size=24)) if kind == 3 else None
        return types.Part(function_call=call, thought_signature=signature)
    if kind == 4:
        response = types.FunctionResponse(
            id=draw(_text), name=draw(_text), response=draw(_json_object)
        )
        return types.Part(function_response=response)
    if kind == 5:
        blob = types.Blob(mime_type="image/png", data=draw(st.binary(max_size=32)))
        return types.Part(inline_data=blob)
    if kind == 6:
        return types.Part(
            executable_code=types.ExecutableCode(code=draw(_text), language=types.Language.PYTHON)
        )
    if kind == 7:
        outcome = draw(st.sampled_from(list(types.Outcome)))
        return types.Part(
            code_execution_result=types.CodeExecutionResult(outcome=outcome, output=draw(_text))
        )
    return types.Part(file_data=types.FileData(file_uri="gs://b/" + draw(_text), mime_type="a/b"))


_content = st.builds(
    types.Content, role=st.sampled_from(["user", "model"]), parts=st.lists(_part(), max_size=3)
)


@st.composite
def _actions(draw: st.DrawFn) -> EventActions:
    compaction = None
    if draw(st.booleans()):
        start = draw(_floats)
        compaction = EventCompaction(
            start_timestamp=start, end_timestamp=start + 1, compacted_content=draw(_content)
        )
    return EventActions(
        state_delta=draw(_json_object),
        artifact_delta=draw(st.dictionaries(_text, _count, max_size=3)),
        transfer_to_agent=draw(st.none() | _text),
        escalate=draw(st.none() | st.booleans()),
        skip_summarization=draw(st.none() | st.booleans()),
        compaction=compaction,
    )


@st.composite
def _usage(draw: st.DrawFn) -> types.GenerateContentResponseUsageMetadata:
    details = [
        types.ModalityTokenCount(modality=modality, token_count=draw(_count))
        for modality in draw(st.lists(st.sampled_from(list(types.MediaModality)), max_size=2))
    ]
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=draw(_count),
        candidates_token_count=draw(st.none() | _count),
        thoughts_token_count=draw(st.none() | _count),
        total_token_count=draw(_count),
        prompt_tokens_details=details or None,
    )


@st.composite
def _grounding(draw: st.DrawFn) -> types.GroundingMetadata:
    chunks = [
        types.GroundingChunk(web=types.GroundingChunkWeb(uri=uri, title=draw(_text)))
        for uri in draw(st.lists(_text, max_size=2))
    ]
    supports = [
        types.GroundingSupport(
            segment=types.Segment(start_index=0, end_index=n, text=draw(_text)),
            grounding_chunk_indices=[0],
            confidence_scores=[draw(st.floats(0, 1))],
        )
        for n in draw(st.lists(_count, max_size=2))
    ]
    return types.GroundingMetadata(
        web_search_queries=draw(st.lists(_text, max_size=2)) or None,
        grounding_chunks=chunks or None,
        grounding_supports=supports or None,
        search_entry_point=types.SearchEntryPoint(rendered_content=draw(_text)),
    )


@st.composite
def _event(draw: st.DrawFn) -> Event:
    optional = st.booleans()
    return Event(
        id=draw(st.text(alphabet="abcdef0123456789-", min_size=1, max_size=36)),
        author=draw(st.sampled_from(["user", "weather_agent", "Agent ünïcode"])),
        invocation_id=draw(_text),
        timestamp=draw(st.floats(0, 4e9) | st.integers(0, 4_000_000_000).map(float)),
        content=draw(_content) if draw(optional) else None,
        actions=draw(_actions()),
        usage_metadata=draw(_usage()) if draw(optional) else None,
        grounding_metadata=draw(_grounding()) if draw(optional) else None,
        finish_reason=draw(st.none() | st.sampled_from(list(types.FinishReason))),
        error_code=draw(st.none() | _text),
        turn_complete=draw(st.none() | st.booleans()),
        branch=draw(st.none() | _text),
        custom_metadata=draw(st.none() | _json_object),
        long_running_tool_ids=draw(st.none() | st.sets(_text, max_size=2)),
        model_version=draw(st.none() | _text),
    )


def _adk_decoding(event: Event) -> Event:
    """How ADK's `DatabaseSessionService` reads the event back (its JSON column round trip)."""
    session = Session(id="s", app_name="app", user_id="u")
    stored = StorageEvent.from_event(session, event)
    stored.event_data = json.loads(json.dumps(stored.event_data))
    return stored.to_event()


def _has_bytes(event: Event) -> bool:
    """Whether any part carries bytes: ADK validates its JSON column in Python mode, where a
    base64 string is taken as the bytes of its characters, so its own round trip changes them
    (ours decodes them, as pydantic's JSON mode does)."""
    contents = [event.content]
    if event.actions.compaction is not None:
        contents.append(event.actions.compaction.compacted_content)
    parts = [p for c in contents if c is not None for p in c.parts or ()]
    return any(p.thought_signature or p.inline_data for p in parts)


def _assert_same(ours: Event, reference: Event) -> None:
    assert ours == reference
    assert ours.model_dump() == reference.model_dump()
    assert ours.model_dump(exclude_unset=True) == reference.model_dump(exclude_unset=True)
    assert ours.model_dump_json(by_alias=True) == reference.model_dump_json(by_alias=True)
    assert repr(ours) == repr(reference)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_event())
def test_direct_decoding_equals_pydantic_and_adk(event: Event) -> None:
    text = dump_event(event, None)
    validated = Event.model_validate_json(text)
    decoded = decode(text)
    if decoded is not None:
        _assert_same(decoded, validated)
        _assert_same(copier(decoded)(), validated)  # how the event cache copies it
        if not _has_bytes(event):
            _assert_same(decoded, _adk_decoding(event))


def _plain_event(**fields: Any) -> Event:
    return Event(author="agent", invocation_id="inv-1", **fields)


def test_everyday_events_take_the_direct_path() -> None:
    """What a conversation is made of decodes without pydantic (the speed of session reads
    depends on it), and equal to what pydantic gives."""
    call = types.FunctionCall(id="c1", name="get_weather", args={"city": "Oslo", "days": 3})
    response = types.FunctionResponse(id="c1", name="get_weather", response={"temp": 4.5})
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=812, candidates_token_count=64, total_token_count=876
    )
    events = [
        _plain_event(content=types.Content(role="user", parts=[types.Part(text="Hi ✓")])),
        _plain_event(
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
            usage_metadata=usage,
        ),
        _plain_event(
            content=types.Content(role="user", parts=[types.Part(function_response=response)])
        ),
        _plain_event(
            content=types.Content(role="model", parts=[types.Part(text="Cold.")]),
            actions=EventActions(state_delta={"city": "Oslo", "user:unit": "C"}),
            finish_reason=types.FinishReason.STOP,
        ),
        _plain_event(actions=EventActions(artifact_delta={"report.pdf": 2})),
    ]
    for event in events:
        text = dump_event(event, None)
        decoded = decode(text)
        assert decoded is not None, text
        _assert_same(decoded, Event.model_validate_json(text))


def test_what_needs_validation_is_left_to_pydantic() -> None:
    """The direct path declines anything it cannot build exactly: bytes, sets, a non-empty
    validated field, an unknown or misspelt key, a value of another type, a null, NaN."""
    signed = types.Part(function_call=types.FunctionCall(name="f"), thought_signature=b"\x01")
    base = json.loads(dump_event(_plain_event(), None))
    declined = [
        dump_event(_plain_event(content=types.Content(parts=[signed])), None),
        dump_event(_plain_event(long_running_tool_ids={"c1"}), None),
        json.dumps({**base, "actions": {"requestedAuthConfigs": {"c1": {}}}}),
        json.dumps({**base, "message": "routed by ADK's validator"}),
        json.dumps({**base, "author": 7}),
        json.dumps({**base, "branch": None}),
        json.dumps({**base, "timestamp": math.nan}),
        json.dumps({**base, "invocationId": "a", "invocation_id": "b"}),
        "not json",
    ]
    for text in declined:
        assert decode(text) is None, text


def _one_copier(text: str) -> Callable[[str], Event]:
    """Copies of one decoded event from one `copier`, as the event cache makes them."""
    make = copier(decode(text))
    return lambda _: make()


@pytest.mark.parametrize("reads", [lambda text: decode, _one_copier])
def test_reads_never_share_objects(reads: Callable[[str], Callable[[str], Event]]) -> None:
    """Each decode and each copy builds new objects (defaults included): callers may change
    what they get, the cached original and other reads do not see it."""
    event = _plain_event(
        content=types.Content(parts=[types.Part(text="a")]),
        actions=EventActions(state_delta={"list": [1, {"a": 2}], "flat": [1, 2]}),
    )
    text = dump_event(event, None)
    original = decode(text)
    copy = reads(text)
    first, second = copy(text), copy(text)
    first.actions.state_delta["list"][1]["a"] = 3
    first.actions.state_delta["flat"].append(3)
    first.actions.state_delta["new"] = 1
    first.actions.artifact_delta["x"] = 1
    first.content.parts.append(types.Part(text="b"))
    first.content.parts[0].text = "changed"
    first.content.parts[0].thought = True  # a field not set before: its fields set grows
    first.content.role = "model"
    for other in (second, original, copy(text)):
        assert other == event
        assert other.model_fields_set == original.model_fields_set
        assert other.content.parts[0].model_fields_set == {"text"}


@pytest.mark.parametrize("cache_size", [0, 10_000])
async def test_each_user_reads_only_their_own_events(make_session_service, cache_size: int):
    """Two users of one app, sessions with the same id and events alike but for their text
    (one of each decoded directly, one by pydantic): each reads back exactly their own, with
    the cache on or off, however often; a read's objects are the reader's alone."""
    service = make_session_service(event_cache_size=cache_size)
    owners = ("alice", "bob")
    for user in owners:
        session = await service.create_session(app_name="app", user_id=user, session_id="s")
        for n, lro in enumerate((None, {"call-1"})):
            await service.append_event(
                session,
                _plain_event(
                    content=types.Content(role="user", parts=[types.Part(text=f"{user} {n}")]),
                    long_running_tool_ids=lro,
                ),
            )
    for _ in range(2):
        for user in owners:
            got = await service.get_session(app_name="app", user_id=user, session_id="s")
            assert got is not None
            texts = [e.content.parts[0].text for e in got.events if e.content and e.content.parts]
            assert texts == [f"{user} 0", f"{user} 1"]
            got.events[0].content.parts[0].text = "changed by the reader"  # type: ignore[union-attr,index]


def test_models_whose_settings_change_values_are_left_to_pydantic() -> None:
    """A model whose configuration makes validation rewrite values (stripping, enum values,
    strict mode, ...) is never built directly, nor is one with a validator not known to be a
    no-op, nor a model holding either."""
    from pydantic import BaseModel, ConfigDict, field_validator

    from adk_memory.sessions import decoding

    class Stripped(BaseModel):
        model_config = ConfigDict(str_strip_whitespace=True)
        text: str = ""

    class Checked(BaseModel):
        text: str = ""

        @field_validator("text")
        @classmethod
        def _upper(cls, value: str) -> str:
            return value.upper()

    class Holder(BaseModel):
        inner: Stripped | None = None
        checked: Checked | None = None

    assert not decoding._plan(Stripped).fast
    with pytest.raises(decoding._NotFast):
        decoding._plan(Checked).build({"text": "a"})
    for data in ({"inner": {"text": " a "}}, {"checked": {"text": "a"}}):
        with pytest.raises(decoding._NotFast):
            decoding._plan(Holder).build(data)
    assert decoding._plan(Holder).build({}) == Holder()
