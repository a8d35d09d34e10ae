"""One redactor, configured once, everywhere outside the memory service: what the summarizer's
model is sent and the summaries stored, the archived tool results and the references the model
gets, the `redact` URI option of both services, and `ADK_MEMORY_REDACT` as `configure()`, the URI
schemes, the `adk-memory` command and `python -m adk_memory.worker` read it.

The conversation carries an e-mail address, a phone number, a (Luhn-valid) card number and an
(ISO 13616-valid) IBAN; every check looks for each of them in the text that left the process."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import test_cli
from click.testing import CliRunner
from conftest import TEST_SCHEMA
from google.adk.agents.llm_agent import LlmAgent
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions.session import Session
from google.genai import types
from rls_checks import all_rows
from sqlalchemy.ext.asyncio import AsyncEngine
from test_cli import Cli, arun, said, services

from adk_memory import PiiRedactor, PostgresSessionService
from adk_memory.adk.compaction.archive import ToolResultArchivePlugin
from adk_memory.adk.compaction.summarize import RecursiveSummarizationPlugin, compaction_of
from adk_memory.adk.services import memory_service_from_uri, session_service_from_uri
from adk_memory.adk.stack import CompactionConfig, MemoryStack, configure
from adk_memory.cli import main
from adk_memory.cli.options import Overrides
from adk_memory.env import REDACT_ENV
from adk_memory.testing import ScriptedLlm, function_call
from adk_memory.worker import main as deprecated_worker

APP, USER = "redacted_app", "u1"
EMAIL = "alice@example.com"
PHONE = "+44 20 7946 0958"
CARD = "4111 1111 1111 1111"
IBAN = "GB82 WEST 1234 5698 7654 32"
EARLIER = "Earlier: bob@example.org paid with 5555 5555 5555 4444."
"""A summary written before redaction was on (or by another writer): it is sent on to the model
as the start of the next summary, so it must be redacted on the way."""

FRAGMENTS = (
    EMAIL,
    PHONE,
    "7946 0958",
    CARD,
    CARD.replace(" ", ""),
    IBAN,
    IBAN.replace(" ", ""),
    "bob@example.org",
    "5555 5555 5555 4444",
)
"""Every form in which the personal data could leave: as said, and with the spaces dropped."""

cli = test_cli.cli
"""The `adk-memory` invoker fixture (migrated, emptied test tables), shared with test_cli.py."""


def leaked(text: str) -> list[str]:
    """The personal data still in `text` (empty: none)."""
    return [fragment for fragment in FRAGMENTS if fragment in text]


def request_json(request: LlmRequest) -> str:
    """Everything a model request carries as text: contents and system instruction."""
    contents = [c.model_dump(mode="json", exclude_none=True) for c in request.contents]
    return json.dumps([contents, str(request.config.system_instruction)], ensure_ascii=False)


@pytest.fixture
async def stacks(
    make_memory_service: Any, database_url: str
) -> AsyncIterator[Callable[..., MemoryStack]]:
    """Stacks with `PiiRedactor()` on the (emptied) test tables, no memory plugins, no worker,
    no environment; closed after the test."""
    built: list[MemoryStack] = []

    def make(**options: Any) -> MemoryStack:
        options = {
            "schema": TEST_SCHEMA,
            "environ": {},
            "run_worker": False,
            "redactor": PiiRedactor(),
            "context": None,
            "triggers": None,
            **options,
        }
        built.append(configure(database_url, **options))
        return built[-1]

    yield make
    for stack in built:
        await stack.close()


async def ask(runner: Runner, session_id: str, text: str) -> None:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        pass


def save_contact(email: str) -> dict:
    """Saves the user's contact details."""
    return {"status": "saved", "email": email, "card_on_file": CARD}


async def test_the_summarizer_is_sent_and_stores_no_personal_data(
    stacks: Callable[..., MemoryStack], engine: AsyncEngine
) -> None:
    summarizer = ScriptedLlm(responder=lambda _: f"Summary: {EMAIL} {PHONE} {CARD} {IBAN}.")
    # The first turn's four events (message, call, result, answer) make one summary.
    compaction = CompactionConfig(summarize=True, summarize_after_events=4, keep_last_events=0)
    stack = stacks(model=summarizer, compaction=compaction)
    [plugin] = stack.compaction
    assert isinstance(plugin, RecursiveSummarizationPlugin) and plugin.redactor is stack.redactor

    # An earlier summary with personal data in it, stored by a service that does not redact.
    session = await stack.session_service.create_session(app_name=APP, user_id=USER)
    earlier = EventCompaction(
        start_timestamp=1.0,
        end_timestamp=2.0,
        compacted_content=types.Content(role="model", parts=[types.Part(text=EARLIER)]),
    )
    seed = Event(author="user", invocation_id="seed", actions=EventActions(compaction=earlier))
    plain = PostgresSessionService(engine=engine, schema=TEST_SCHEMA)
    await plain.append_event(session, seed)

    agent_model = ScriptedLlm(
        [
            function_call("save_contact", email=EMAIL),
            f"Saved. Your IBAN {IBAN} is noted; we call {PHONE}.",
            "Thanks.",
        ]
    )
    agent = LlmAgent(name="assistant", model=agent_model, tools=[save_contact])
    runner = stack.runner(agent, app_name=APP)
    await ask(runner, session.id, f"I'm {EMAIL}, call me on {PHONE}.")
    await ask(runner, session.id, f"My card is {CARD} and my IBAN {IBAN}.")
    await plugin.drain()

    # The model got the conversation and the earlier summary, with every piece redacted.
    [request] = summarizer.requests
    sent = request_json(request)
    assert leaked(sent) == []
    assert "Earlier: [EMAIL] paid with [CARD]." in sent
    assert "I'm [EMAIL], call me on [PHONE]." in sent
    assert "'email': '[EMAIL]', 'card_on_file': '[CARD]'" in sent  # the tool's result
    assert "Your IBAN [IBAN] is noted; we call [PHONE]." in sent

    # The summaries it wrote are stored redacted (read back through a service that does not
    # redact, so nothing is redacted on the way out).
    stored = await plain.get_session(app_name=APP, user_id=USER, session_id=session.id)
    [written] = [e for e in stored.events if compaction_of(e) and e.invocation_id != "seed"]
    summary = compaction_of(written).compacted_content
    assert [part.text for part in summary.parts] == ["Summary: [EMAIL] [PHONE] [CARD] [IBAN]."]
    # ...as is everything else the session service stored (all but the seed).
    others = [e.model_dump_json() for e in stored.events if e.invocation_id != "seed"]
    assert leaked(json.dumps(others)) == []


def customer_records() -> dict:
    """Returns every customer record."""
    row = {"email": EMAIL, "phone": PHONE, "card": CARD, "iban": IBAN, "note": "regular"}
    return {"customers": [{**row, "id": i} for i in range(40)]}


async def test_an_archived_tool_result_and_its_reference_carry_no_personal_data(
    stacks: Callable[..., MemoryStack],
) -> None:
    compaction = CompactionConfig(archive_tool_results=True, archive_threshold_tokens=200)
    stack = stacks(model=ScriptedLlm(), compaction=compaction)
    [plugin] = stack.compaction
    assert isinstance(plugin, ToolResultArchivePlugin) and plugin.redactor is stack.redactor

    agent_model = ScriptedLlm([function_call("customer_records"), "Here they are.", "Yes."])
    agent = LlmAgent(name="clerk", model=agent_model, tools=[customer_records])
    runner = stack.runner(agent, app_name=APP)
    session = await stack.session_service.create_session(app_name=APP, user_id=USER)
    await ask(runner, session.id, "List the customers.")
    await ask(runner, session.id, "All of them?")

    [reference] = [
        p.function_response.response
        for c in agent_model.requests[2].contents
        for p in c.parts or []
        if p.function_response
    ]
    assert reference["archived"] is True and reference["keys"] == ["customers"]
    assert leaked(json.dumps(reference)) == []
    assert '"card": "[CARD]", "email": "[EMAIL]", "iban": "[IBAN]"' in reference["head"]

    artifact = await stack.artifact_service.load_artifact(
        app_name=APP, user_id=USER, session_id=session.id, filename=reference["artifact"]
    )
    saved = artifact.inline_data.data.decode()
    assert leaked(saved) == []
    assert json.loads(saved)["customers"][0] == {
        "email": "[EMAIL]",
        "phone": "[PHONE]",
        "card": "[CARD]",
        "iban": "[IBAN]",
        "note": "regular",
        "id": 0,
    }
    stored = await stack.session_service.get_session(
        app_name=APP, user_id=USER, session_id=session.id
    )
    assert leaked(stored.model_dump_json()) == []


def test_plugins_reject_a_redactor_without_redact() -> None:
    with pytest.raises(InputValidationError, match="redact"):
        ToolResultArchivePlugin(redactor="pii")  # type: ignore[arg-type]
    with pytest.raises(InputValidationError, match="redact"):
        RecursiveSummarizationPlugin(ScriptedLlm(), redactor=object())  # type: ignore[arg-type]
    with pytest.raises(InputValidationError, match="redact"):
        configure(environ={}, redactor="pii")  # type: ignore[arg-type]


# ------------------------------------------------------------------ URIs and ADK_MEMORY_REDACT


@pytest.fixture
def plain_url(database_url: str) -> str:
    return database_url.replace("postgresql+asyncpg://", "postgresql://")


def with_options(url: str, options: str) -> str:
    return f"{url}&{options}" if "?" in url else f"{url}?{options}"


def test_the_memory_uri_takes_redact_too(plain_url: str) -> None:
    assert isinstance(
        memory_service_from_uri(with_options(plain_url, "redact=pii"), environ={}).redactor,
        PiiRedactor,
    )
    for options in ("redact=none", "schema=x"):
        uri = with_options(plain_url, options)
        assert memory_service_from_uri(uri, environ={}).redactor is None
    with pytest.raises(InputValidationError, match="Invalid redact='pci' in the memory service"):
        memory_service_from_uri(with_options(plain_url, "redact=pci"), environ={})


async def test_the_environment_reaches_configure_and_both_uris(
    plain_url: str, session_service: PostgresSessionService
) -> None:
    environ = {REDACT_ENV: "pii"}
    stack = configure(plain_url, schema=TEST_SCHEMA, run_worker=False, environ=environ)
    assert isinstance(stack.redactor, PiiRedactor)
    assert stack.memory_service.redactor is stack.redactor
    await stack.close()
    given = PiiRedactor(phones=False)
    assert configure(environ=environ, redactor=given).memory_service.redactor is given
    assert configure(environ={REDACT_ENV: "none"}).redactor is None

    memory = memory_service_from_uri(plain_url, environ=environ)
    assert isinstance(memory.redactor, PiiRedactor)
    # The URI wins over the environment.
    uri = with_options(plain_url, "redact=none")
    assert memory_service_from_uri(uri, environ=environ).redactor is None

    # The session service of a URI without `redact` redacts what it stores.
    uri = with_options(plain_url, f"schema={TEST_SCHEMA}")
    async with session_service_from_uri(uri, environ=environ) as sessions:
        session = await sessions.create_session(app_name=APP, user_id=USER)
        await sessions.append_event(session, said(f"mail me: {EMAIL}", 1.0))
    stored = await session_service.get_session(app_name=APP, user_id=USER, session_id=session.id)
    assert stored.events[0].content.parts[0].text == "mail me: [EMAIL]"


@pytest.mark.parametrize(
    "build",
    [
        lambda environ: configure(environ=environ),
        lambda environ: memory_service_from_uri("adk-memory://", environ=environ),
        lambda environ: session_service_from_uri("adk-memory://", environ=environ),
    ],
)
def test_a_bad_value_is_a_clear_error(build: Callable[[dict[str, str]], object]) -> None:
    with pytest.raises(InputValidationError, match=r"Invalid ADK_MEMORY_REDACT='all'.*pii, none"):
        build({REDACT_ENV: "all"})


def test_the_environment_reaches_the_worker_and_the_commands(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(REDACT_ENV, "PII")
    for name, args in [
        ("web", ["."]),
        ("api_server", ["."]),
        ("worker", []),
        ("backfill", ["--app", "a"]),
    ]:
        params = main.commands[name].make_context(name, args).params
        assert params["redact"] == "pii", name

    monkeypatch.setenv(REDACT_ENV, "all")
    assert deprecated_worker([]) == 2  # `python -m adk_memory.worker`: the same command
    assert "Invalid value for '--redact': 'all' is not one of 'pii', 'none'" in (
        capsys.readouterr().err
    )
    result = CliRunner().invoke(main, ["worker", "--until-idle"])
    assert result.exit_code == 2
    assert "Invalid value for '--redact': 'all' is not one of 'pii', 'none'" in result.stderr


def test_the_worker_command_redacts_what_it_generates(cli: Cli, database_url: str) -> None:
    """A worker started with `ADK_MEMORY_REDACT=pii` stores the model's facts redacted."""
    llm = ScriptedLlm(
        [
            json.dumps(
                {
                    "facts": [
                        {"fact": f"The user's e-mail is {EMAIL}.", "topic": "USER_PERSONAL_INFO"}
                    ]
                }
            )
        ]
    )

    async def enqueue() -> None:
        async with services(database_url, llm=llm, redactor=PiiRedactor()) as (_, memory):
            events = [said(f"Write to {EMAIL}", 1.0)]
            session = Session(id="s1", app_name=APP, user_id=USER, events=events)
            await memory.generate_memories(session=session)

    arun(enqueue)
    env = {
        "ADK_MEMORY_DATABASE_URL": database_url,
        "ADK_MEMORY_SCHEMA": TEST_SCHEMA,
        REDACT_ENV: "pii",
    }
    ran = CliRunner(env=env).invoke(main, ["worker", "--until-idle"], obj=Overrides(llm=llm))
    assert ran.exit_code == 0, ran.output
    assert ran.stdout.splitlines()[0] == "ran 1 generation job"
    listed = cli("memories", "list", "--app", APP, "--user", USER, "--json").stdout
    assert [m["fact"] for m in json.loads(listed)] == ["The user's e-mail is [EMAIL]."]
    assert [leaked(request_json(request)) for request in llm.requests] == [[]] * len(llm.requests)


async def test_memory_metadata_keys_and_topics_are_redacted_on_create_and_update(
    make_memory_service: Any, database_url: str
) -> None:
    """A memory's metadata and content keys, and its topics, are whatever a caller wrote: the
    redactor reaches them as it reaches values, on create and on update."""

    service = make_memory_service(redactor=PiiRedactor())
    scope = {"app_name": APP, "user_id": USER}
    memory = await service.create_memory(
        "Likes tea.", scope, topics=[EMAIL], metadata={EMAIL: "key"}, content={PHONE: 1}
    )
    await service.update_memory(memory.id, scope, topics=[CARD], metadata={IBAN: [EMAIL]})
    conn = await all_rows(database_url)
    try:
        rows = await conn.fetch(
            f"SELECT m.*::text FROM {TEST_SCHEMA}.memories m UNION ALL "
            f"SELECT r.*::text FROM {TEST_SCHEMA}.memory_revisions r"
        )
    finally:
        await conn.close()
    assert rows and leaked(" ".join(row[0] for row in rows)) == []
