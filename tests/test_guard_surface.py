"""Nothing the guard refuses or holds back is silent: the direct API (a quarantined memory says
so with its rule; a rejected fact raises with its rule), the log (a WARNING with the rule id,
never the fact), the memory tool's reply to the model (refused or held, with the rule ids, never
"saved"), and a generation's operation and the operations listing (what was held and refused,
with counts)."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest
from conftest import Marked
from google.adk.sessions.session import Session
from test_adk_tools import run_turn
from test_privacy import extraction, said

from adk_memory import MemoryRejectedError
from adk_memory.adk.tools import CreateMemoryTool
from adk_memory.memory import GuardedFact
from adk_memory.testing import ScriptedLlm, function_call

APP = "travel_app"
ALICE = {"app_name": APP, "user_id": "alice"}
HELD = GuardedFact(rule="test_hold", reason="marked for review")


def marked() -> Marked:
    """Rejects REJECT-ME, quarantines HOLD-ME, allows the rest."""
    return Marked(
        reject=("REJECT-ME", "marked for rejection", "test_reject"),
        hold=("HOLD-ME", "marked for review", "test_hold"),
    )


def _tool_replies(llm: ScriptedLlm) -> list[dict[str, Any]]:
    """The tool replies the model was sent, one per model call after its first."""
    return [
        request.contents[-1].parts[0].function_response.response for request in llm.requests[1:]
    ]


async def test_the_direct_api_says_what_the_guard_did(
    make_memory_service: Any, caplog: Any
) -> None:
    service = make_memory_service(guard=marked(), run_worker=False)
    with caplog.at_level(logging.WARNING, logger="adk_memory.memory.policy.screen"):
        held = await service.create_memory("Secret HOLD-ME fact", ALICE)
        with pytest.raises(MemoryRejectedError) as raised:
            await service.create_memory("Secret REJECT-ME fact", ALICE)
        batch = await service.create_memories(["Likes tea", "Other HOLD-ME fact"], ALICE)
    assert held.quarantined and held.guard == HELD
    assert raised.value.rule == "test_reject" and "test_reject" in str(raised.value)
    assert [(m.quarantined, m.guard) for m in batch] == [(False, None), (True, HELD)]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "The memory guard quarantined a fact from api (rule test_hold): marked for review",
        "The memory guard rejected a fact from api (rule test_reject): marked for rejection",
        "The memory guard quarantined a fact from api (rule test_hold): marked for review",
    ]
    [queued, _] = await service.list_quarantined(ALICE)
    assert queued.memory.guard == HELD


async def test_the_memory_tool_tells_the_model_it_was_refused_or_held(
    make_session_service: Any, make_memory_service: Any
) -> None:
    sessions = make_session_service()
    memory = make_memory_service(guard=marked())
    llm = ScriptedLlm(
        [
            function_call("create_memory", fact="The user HOLD-ME likes jazz."),
            function_call("create_memory", fact="The user REJECT-ME likes jazz."),
            function_call("create_memory", fact="The user likes jazz."),
            "Noted.",
        ]
    )
    await run_turn(llm, [CreateMemoryTool(consolidate=False)], sessions, memory, "alice", "jazz")
    held, refused, saved = _tool_replies(llm)
    assert held["status"] == "held_for_review" and held["rules"] == ["test_hold"]
    assert held["changes"] == [] and "test_hold" in held["note"]
    assert refused["status"] == "refused" and refused["rules"] == ["test_reject"]
    assert "test_reject" in refused["error"] and "do not tell the user" in refused["error"]
    assert saved["status"] == "saved"
    for reply in (held, refused):  # the fact is never echoed back
        assert "jazz" not in json.dumps(reply)


async def test_the_consolidating_tool_reports_a_held_fact_with_its_rule(
    make_session_service: Any, make_memory_service: Any
) -> None:
    sessions = make_session_service()
    memory = make_memory_service(llm=ScriptedLlm(), guard=marked())  # nothing to consolidate with
    try:
        llm = ScriptedLlm(
            [
                function_call("create_memory", fact="The user HOLD-ME likes jazz."),
                function_call("create_memory", fact="The user REJECT-ME likes jazz."),
                "Noted.",
            ]
        )
        await run_turn(llm, [CreateMemoryTool()], sessions, memory, "alice", "jazz")
        held, refused = _tool_replies(llm)
        assert held["status"] == "held_for_review" and held["rules"] == ["test_hold"]
        assert refused["status"] == "refused" and refused["rules"] == ["test_reject"]
    finally:
        await memory.close()


async def test_a_generation_lists_what_it_held_and_refused_with_counts(
    make_memory_service: Any,
) -> None:
    llm = ScriptedLlm([extraction("The user likes jazz.", "The REJECT-ME one", "The HOLD-ME one")])
    service = make_memory_service(llm=llm, guard=marked(), run_worker=False)
    session = Session(id="s1", app_name=APP, user_id="alice", events=[said("jazz")])
    operation = await service.generate_memories(session=session)
    await service.worker.run_until_idle()
    done = await service.get_operation(operation.id, ALICE)
    [quarantined] = done.quarantined
    assert quarantined.guard == HELD and quarantined.memory is None
    assert done.rejected == [GuardedFact(rule="test_reject", reason="marked for rejection")]
    [job] = await service.list_operations(ALICE)
    assert (job.changes, job.quarantined, job.rejected) == (2, 1, 1)


async def test_an_import_counts_what_the_guard_holds_back(make_memory_service: Any) -> None:
    """`memories import` says how many imported memories are in quarantine (not live)."""
    from adk_memory.cli.ingest import _import

    service = make_memory_service(guard=marked(), run_worker=False)
    lines = [{"fact": f, "scope": ALICE} for f in ("Likes tea", "A HOLD-ME one", "Likes jazz")]
    source = io.StringIO("".join(json.dumps(line) + "\n" for line in lines))
    done = await _import(service, source, allow_erased=False)
    assert (done.written, done.skipped, done.expired, done.held) == (3, 0, 0, 1)
