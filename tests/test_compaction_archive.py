"""ToolResultArchivePlugin behind a real ADK Runner on PostgresSessionService.

A large tool result is read whole once, then saved as an artifact (once) and sent as a short
reference; the stored session event keeps the full result; ADK's `load_artifacts` tool reads
an archived result back.
"""

from __future__ import annotations

import json

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.artifacts import InMemoryArtifactService
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.tools import load_artifacts
from google.genai import types

from adk_memory.adk.compaction.archive import ToolResultArchivePlugin
from adk_memory.adk.tokens import contents_tokens
from adk_memory.testing import ScriptedLlm, function_call

APP = "reports_app"
ROWS = [{"region": f"region-{i}", "revenue": i * 1000, "note": "steady growth"} for i in range(300)]


def fetch_report(quarter: str) -> dict:
    """Returns the quarterly sales report."""
    return {"quarter": quarter, "rows": ROWS, "currency": "EUR"}


def make_runner(llm, service, artifacts, plugin, tools=(fetch_report,)) -> Runner:
    agent = LlmAgent(name="analyst", model=llm, instruction="Analyse.", tools=list(tools))
    app = App(name=APP, root_agent=agent, plugins=[plugin])
    return Runner(app=app, session_service=service, artifact_service=artifacts)


async def ask(runner: Runner, session_id: str, text: str) -> None:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(user_id="u1", session_id=session_id, new_message=message):
        pass


def responses(request: LlmRequest) -> list[dict]:
    return [
        p.function_response.response
        for c in request.contents
        for p in c.parts or []
        if p.function_response
    ]


async def test_large_result_is_archived_once_and_referenced(make_session_service):
    service = make_session_service()
    artifacts = InMemoryArtifactService()
    llm = ScriptedLlm(
        [function_call("fetch_report", quarter="Q3"), "Revenue grew.", "Region 7 made 7000."]
    )
    plugin = ToolResultArchivePlugin(threshold_tokens=500)
    runner = make_runner(llm, service, artifacts, plugin)
    session = await service.create_session(app_name=APP, user_id="u1")

    await ask(runner, session.id, "How did Q3 go?")
    await ask(runner, session.id, "And region 7?")

    # The model read the fresh result whole once...
    assert responses(llm.requests[1])[0]["rows"] == ROWS
    # ...and from then on a short reference: size, keys, head, artifact filename and version.
    [reference] = responses(llm.requests[2])
    assert reference["archived"] is True and reference["version"] == 0
    assert reference["keys"] == ["currency", "quarter", "rows"]
    assert reference["head"].startswith('{"currency": "EUR"')
    assert reference["size_tokens"] > 500
    assert contents_tokens(llm.requests[2].contents) < contents_tokens(llm.requests[1].contents) / 5

    filename = reference["artifact"]
    stored = await artifacts.load_artifact(
        app_name=APP, user_id="u1", session_id=session.id, filename=filename
    )
    assert json.loads(stored.inline_data.data) == fetch_report("Q3")

    # The session keeps the full result (read back through a fresh service).
    reloaded = await make_session_service().get_session(
        app_name=APP, user_id="u1", session_id=session.id
    )
    [stored_response] = [r for e in reloaded.events for r in e.get_function_responses()]
    assert stored_response.response == fetch_report("Q3")
    assert any(filename in (e.actions.artifact_delta or {}) for e in reloaded.events)

    # Saved once: more model calls, and another replica's plugin, reuse version 0.
    llm.add("Still growing.")
    await ask(runner, session.id, "Anything else?")
    replica = ToolResultArchivePlugin(threshold_tokens=500)
    other = make_runner(ScriptedLlm(["Yes."]), make_session_service(), artifacts, replica)
    await ask(other, session.id, "Sure?")
    versions = await artifacts.list_versions(
        app_name=APP, user_id="u1", session_id=session.id, filename=filename
    )
    assert versions == [0]


async def test_archive_latest_and_load_artifacts_reads_it_back(make_session_service):
    service = make_session_service()
    artifacts = InMemoryArtifactService()

    def model(request: LlmRequest) -> types.Part | str:
        """Call the tool, then load the archived result named in the reference, then answer."""
        [*_, last] = responses(request) or [None]
        if last is None:
            return function_call("fetch_report", quarter="Q4")
        if last.get("archived"):
            return function_call("load_artifacts", artifact_names=[last["artifact"]])
        return "Region 299 made 299000."

    llm = ScriptedLlm(responder=model)
    plugin = ToolResultArchivePlugin(threshold_tokens=500, archive_latest=True)
    runner = make_runner(llm, service, artifacts, plugin, tools=(fetch_report, load_artifacts))
    session = await service.create_session(app_name=APP, user_id="u1")
    await ask(runner, session.id, "Q4 details?")

    # archive_latest: even the first read after the tool is a reference...
    assert responses(llm.requests[1])[0]["archived"] is True
    # ...and load_artifacts puts the full result into the next request (not into the session).
    loaded = "\n".join(p.text for c in llm.requests[2].contents for p in c.parts or [] if p.text)
    assert json.loads(loaded[loaded.index("{") :])["rows"] == ROWS


async def test_small_results_pass_and_a_missing_artifact_service_is_reported(
    make_session_service,
):
    service = make_session_service()
    llm = ScriptedLlm([function_call("fetch_report", quarter="Q1"), "Fine."])
    runner = make_runner(llm, service, None, ToolResultArchivePlugin(threshold_tokens=10**6))
    session = await service.create_session(app_name=APP, user_id="u1")
    await ask(runner, session.id, "Q1?")
    llm.add("Same.")
    await ask(runner, session.id, "Again?")
    assert responses(llm.requests[2])[0]["rows"] == ROWS  # under the threshold: untouched

    llm = ScriptedLlm([function_call("fetch_report", quarter="Q1"), "Fine.", "Again."])
    runner = make_runner(llm, service, None, ToolResultArchivePlugin(threshold_tokens=500))
    session = await service.create_session(app_name=APP, user_id="u1")
    await ask(runner, session.id, "Q1 again?")
    with pytest.raises(RuntimeError, match="needs an artifact service"):  # ADK wraps it
        await ask(runner, session.id, "And?")


@pytest.mark.parametrize("options", [{"threshold_tokens": 0}, {"head_chars": -1}])
def test_bad_settings_are_rejected(options):
    with pytest.raises(InputValidationError):
        ToolResultArchivePlugin(**options)
