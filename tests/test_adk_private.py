"""The private google-adk names adk-memory relies on (adk_memory/_adk_private.py) still exist
and still behave as relied on. A google-adk release that moves or changes one fails here, with
the name in the test, instead of deep inside a turn."""

from __future__ import annotations

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_memory._adk_private import (
    OTHER_AGENT_CONTEXT_PREAMBLE,
    apply_rewinds,
    extract_json_safe_state_delta,
    static_prefix_end,
)


def said(text: str, invocation_id: str) -> Event:
    return Event(
        author="user",
        invocation_id=invocation_id,
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


def test_apply_rewinds_drops_the_invocations_a_rewind_undoes() -> None:
    first, second = said("one", "inv-1"), said("two", "inv-2")
    rewind = Event(
        author="user",
        invocation_id="inv-3",
        actions=EventActions(rewind_before_invocation_id="inv-2"),
    )
    kept = apply_rewinds([first, second, rewind])
    assert first in kept and second not in kept


def test_the_other_agent_preamble_is_text() -> None:
    assert isinstance(OTHER_AGENT_CONTEXT_PREAMBLE, str) and OTHER_AGENT_CONTEXT_PREAMBLE.strip()


def test_state_deltas_are_split_by_scope_and_coerced_to_json() -> None:
    split = extract_json_safe_state_delta({"app:a": 1, "user:b": {"c": 2}, "d": (3,), "temp:e": 4})
    assert split["app"] == {"a": 1} and split["user"] == {"b": {"c": 2}}
    assert split["session"]["d"] == [3] and "e" not in split["session"]


def test_the_static_prefix_end_is_read_from_adks_request() -> None:
    request = LlmRequest()
    assert static_prefix_end(request) == 0
    assert "_static_instruction_prefix_end_index" in LlmRequest.__private_attributes__
    request._static_instruction_prefix_end_index = 2
    assert static_prefix_end(request) == 2


def test_a_session_carries_its_storage_marker() -> None:
    from google.adk.sessions.session import Session

    from adk_memory._adk_private import set_storage_marker, storage_marker

    session = Session(id="s", app_name="a", user_id="u")
    assert "_storage_update_marker" in Session.__private_attributes__
    assert storage_marker(session) is None
    set_storage_marker(session, "7")
    assert storage_marker(session) == "7"


def test_adks_server_commands_build_their_app_with_get_fast_api_app(tmp_path) -> None:
    """`adk web` / `adk api_server` look `get_fast_api_app` up in `google.adk.cli.fast_api`
    when they run: the app that call builds is the one they serve, and reaches the hook."""
    import inspect

    from google.adk.cli import cli_tools_click, fast_api

    from adk_memory._adk_private import fast_api_app_built

    for command in (cli_tools_click.cli_web, cli_tools_click.cli_api_server):
        source = inspect.getsource(inspect.unwrap(command.callback))
        assert "from .fast_api import get_fast_api_app" in source
        assert "get_fast_api_app(" in source
    (tmp_path / "agents").mkdir()
    built: list[object] = []
    original = fast_api.get_fast_api_app
    with fast_api_app_built(built.append):
        app = fast_api.get_fast_api_app(agents_dir=str(tmp_path / "agents"), web=False)
    assert built == [app] and fast_api.get_fast_api_app is original
