"""The typed generation job on a real Postgres: each payload variant built and stored in the
shape earlier releases queued, jobs queued by them (raw JSON of that shape) still run, and a
malformed payload is dead-lettered when it is claimed, with a reason, never retried."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from conftest import said
from google.adk.sessions.session import Session

from adk_memory import MemoryBankConfig, MemoryFilter
from adk_memory.config import GenerationConfig
from adk_memory.errors import JobPayloadError
from adk_memory.memory.jobs import JobQueue
from adk_memory.memory.pipeline import (
    JOB_PAYLOADS,
    FactsPayload,
    ProcedurePayload,
    SessionPayload,
    facts_payload,
    session_payload,
)
from adk_memory.memory.policy.screen import FactScreen
from adk_memory.memory.procedure_rule import viewer_key
from adk_memory.memory.scope import app_scope, scope_key
from adk_memory.testing import ScriptedLlm

APP, USER = "app", "u1"
SCOPE = {"app_name": APP, "user_id": USER}
OPTIONS = {"disable_consolidation": False, "metadata": {}, "revision_labels": {}}
FIVE_TRIES = MemoryBankConfig(
    generation=GenerationConfig(max_attempts=5, retry_base_delay=timedelta())
)


def extraction(*facts: str) -> str:
    return json.dumps({"facts": [{"fact": f, "topic": "USER_PREFERENCES"} for f in facts]})


def event_data(text: str) -> dict:
    return said(text).model_dump(mode="json", exclude_none=True, by_alias=True)


@pytest.fixture
def make(make_memory_service):
    def build(llm: ScriptedLlm, **options):
        options.setdefault("run_worker", False)
        return make_memory_service(llm=llm, **options)

    return build


async def queue_raw(service, payload: dict, scope: dict[str, str] = SCOPE) -> str:
    """Enqueue `payload` as raw JSON, as an earlier release (or a hand) would have."""
    await service._parts.ready()  # the tables, as the service's first call makes them
    return await JobQueue(service.database).enqueue(scope_key(scope), scope, payload, 5)


async def facts_of(service, scope: dict[str, str] = SCOPE) -> list[str]:
    return sorted(m.fact for m in (await service.list_memories(scope)).memories)


def test_the_builders_store_the_shape_earlier_releases_stored():
    screen = FactScreen(None, None)
    built = session_payload("s1", [said("I like tea")], OPTIONS, screen)
    assert isinstance(built, SessionPayload)
    stored = JOB_PAYLOADS.dump_python(built, mode="json")
    assert stored == {
        "source": "session",
        "session_id": "s1",
        "events": stored["events"],
        **OPTIONS,
    }
    assert stored["events"][0]["content"]["parts"][0]["text"] == "I like tea"
    facts = JOB_PAYLOADS.dump_python(facts_payload(["Likes tea"], "", OPTIONS, "explicit"))
    assert {k: facts[k] for k in ("source", "facts", "topic", "fact_source")} == {
        "source": "facts",
        "facts": ["Likes tea"],
        "topic": "",
        "fact_source": "explicit",
    }
    assert JOB_PAYLOADS.validate_python(stored) == built  # read back as it was built


async def test_jobs_queued_by_an_earlier_release_still_run(make):
    """Raw payloads of the shapes queued before the payload was typed (a facts job from before
    topics and fact sources were carried) are validated at claim and run."""
    llm = ScriptedLlm([extraction("The user likes tea.")])
    service = make(llm, config=FIVE_TRIES)
    session = {"source": "session", "session_id": "s1", "events": [event_data("I like tea")]}
    await queue_raw(service, {**session, **OPTIONS})
    facts = {"source": "facts", "facts": ["The user lives in Oslo."]}
    await queue_raw(service, {**facts, **OPTIONS, "disable_consolidation": True})
    contents = {"source": "contents", "session_id": None, "events": [], "contents": []}
    await queue_raw(service, {**contents, **OPTIONS})
    assert await service.worker.run_until_idle() == 3
    assert service.worker.stats.succeeded == 3 and service.worker.stats.failed == 0
    assert await facts_of(service) == ["The user likes tea.", "The user lives in Oslo."]


async def test_a_procedure_job_queued_by_an_earlier_release_still_runs(make):
    playbook = {
        "task": "Rebook a flight",
        "when_to_use": "A flight was cancelled",
        "steps": ["Ask"],
    }
    llm = ScriptedLlm([json.dumps({"playbooks": [{**playbook, "pitfalls": []}]})])
    service = make(llm, config=FIVE_TRIES)
    raw = {
        "source": "procedure",
        "session_id": None,
        "supporting_session": "s1",
        "events": [event_data("My flight was cancelled, please rebook it")],
        "identifiers": [USER],
        "outcome": None,
        **OPTIONS,
    }
    await queue_raw(service, raw)
    assert await service.worker.run_until_idle() == 1
    assert service.worker.stats.succeeded == 1
    seen = MemoryFilter(memory_type="procedure", metadata={"audience": [viewer_key(APP, USER)]})
    [procedure] = (await service.list_memories(app_scope(APP), filter=seen)).memories
    assert procedure.fact.startswith("Task: Rebook a flight.")


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({"source": "dream", "events": []}, "does not match any of the expected tags"),
        ({"source": "session", "events": []}, "session.session_id: Field required"),
        ({"source": "facts", "facts": "not a list"}, "facts.facts: Input should be a valid list"),
        ({"n": 1}, "Unable to extract tag using discriminator 'source'"),
    ],
    ids=["unknown-kind", "missing-field", "mistyped-field", "no-kind"],
)
async def test_a_malformed_payload_is_dead_lettered_at_claim_with_its_reason(make, payload, reason):
    llm = ScriptedLlm()
    service = make(llm, config=FIVE_TRIES)
    job_id = await queue_raw(service, payload)
    assert await service.worker.run_until_idle() == 1  # one try: never retried
    assert service.worker.stats.dead_lettered == 1 and service.worker.stats.succeeded == 0
    [dead] = await JobQueue(service.database).dead_letters()
    assert dead.id == job_id and dead.attempts == 1
    assert dead.error.startswith("Malformed job payload: ") and reason in dead.error
    assert "not a list" not in dead.error  # the reason names the field, never its value
    assert llm.requests == []  # the model never saw it
    assert await service.worker.run_until_idle() == 0


async def test_the_queue_hands_out_typed_payloads_and_refuses_malformed_ones(make):
    service = make(ScriptedLlm())
    typed = JobQueue(service.database, JOB_PAYLOADS)
    await typed.enqueue(scope_key(SCOPE), SCOPE, facts_payload(["Likes tea"], "", OPTIONS), 3)
    job = await typed.claim(timedelta(minutes=1))
    assert isinstance(job.payload, FactsPayload) and job.source == "facts"
    assert job.payload.facts == ["Likes tea"] and job.payload.fact_source == "bootstrapped"
    bad = await queue_raw(service, {"source": "procedure", "identifiers": 3}, {**SCOPE, "x": "1"})
    with pytest.raises(JobPayloadError) as raised:
        await typed.claim(timedelta(minutes=1))
    assert raised.value.job_id == bad and "identifiers" in str(raised.value)
    assert [d.id for d in await typed.dead_letters()] == [bad]
    assert ProcedurePayload.model_fields["session_id"].default is None


async def test_a_facts_job_from_a_user_source_writes_its_profile_source(make):
    """Direct facts from the user (`source_type=USER_INPUT`) run: their payload carries the
    fact source by its name (`explicit`)."""
    llm = ScriptedLlm()
    service = make(llm, config=FIVE_TRIES)
    from adk_memory.memory import SourceType

    operation = await service.generate_memories(
        scope=SCOPE,
        facts=["The user prefers aisle seats."],
        source_type=SourceType.USER_INPUT,
        disable_consolidation=True,
    )
    assert await service.worker.run_until_idle() == 1
    done = await service.get_operation(operation.id, SCOPE)
    assert done.error is None
    [memory] = (await service.list_memories(SCOPE)).memories
    assert memory.source_type is SourceType.USER_INPUT


async def test_session_jobs_are_typed_end_to_end(make):
    llm = ScriptedLlm([extraction("The user likes jazz.")])
    service = make(llm)
    session = Session(id="s9", app_name=APP, user_id=USER, events=[said("I like jazz")])
    await service.generate_memories(session=session)
    job = await service._parts.users.jobs.claim(timedelta(minutes=1))
    assert isinstance(job.payload, SessionPayload) and job.payload.session_id == "s9"
    await service._parts.run(job)
    assert await facts_of(service) == ["The user likes jazz."]
