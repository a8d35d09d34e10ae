"""Memory generation end to end on a real Postgres, with a scripted model: background jobs,
CREATED/UPDATED/DELETED, watermarks, retries, dead letters and crash safety."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from conftest import said
from google.adk.sessions.session import Session
from google.genai import types

from adk_memory import MemoryBankConfig
from adk_memory.config import GenerationConfig
from adk_memory.memory import MemoryAction, SourceType
from adk_memory.memory.guard import NoGuard
from adk_memory.testing import ScriptedLlm

APP, USER = "app", "u1"
SCOPE = {"app_name": APP, "user_id": USER}
FAST_RETRIES = MemoryBankConfig(
    generation=GenerationConfig(max_attempts=2, retry_base_delay=timedelta())
)


def extraction(*facts: str, topic: str = "USER_PREFERENCES", forget: bool = False) -> str:
    return json.dumps({"facts": [{"fact": f, "topic": topic, "forget": forget} for f in facts]})


def plan(*operations: dict) -> str:
    return json.dumps({"operations": list(operations)})


@pytest.fixture
def make(make_memory_service):
    def build(llm: ScriptedLlm, **options):
        options.setdefault("run_worker", False)
        return make_memory_service(llm=llm, **options)

    return build


async def facts_of(service) -> list[str]:
    return sorted(m.fact for m in (await service.list_memories(SCOPE)).memories)


async def test_a_session_becomes_memories_in_the_background(make):
    llm = ScriptedLlm([extraction("The user prefers window seats.")])
    service = make(llm)
    session = Session(id="s1", app_name=APP, user_id=USER, events=[said("I like window seats")])
    operation = await service.generate_memories(session=session)
    assert not operation.done and llm.requests == []  # returned before the model was called
    assert await service.worker.run_until_idle() == 1
    done = await service.get_operation(operation.id, operation.scope)
    assert done.done and done.error is None
    [generated] = done.generated_memories
    assert generated.action is MemoryAction.CREATED
    assert generated.memory.fact == "The user prefers window seats."
    assert generated.memory.topics == ["USER_PREFERENCES"]
    assert generated.memory.source_session_id == "s1"
    # Re-triggering processes only new events: nothing new, no model call.
    await service.generate_memories(session=session)
    await service.worker.run_until_idle()
    assert len(llm.requests) == 1
    assert await facts_of(service) == ["The user prefers window seats."]


async def test_consolidation_updates_and_deletes_existing_memories(make):
    llm = ScriptedLlm()
    service = make(llm)
    # Said in an earlier conversation: the newer conversation wins (`test_trust.py` for data
    # the application bootstrapped, which a conversation cannot overwrite on its own).
    seat = await service.create_memory(
        "The user prefers window seats.", SCOPE, source_type=SourceType.IMPLICIT
    )
    tea = await service.create_memory(
        "The user drinks green tea.", SCOPE, source_type=SourceType.IMPLICIT
    )
    llm.add(
        extraction("The user now prefers aisle seats.", "The user stopped drinking tea."),
        plan(
            {
                "action": "UPDATE",
                "fact_numbers": [1],
                "target_id": seat.id,
                "fact": "The user prefers aisle seats.",
            },
            {"action": "DELETE", "fact_numbers": [2], "target_id": tea.id},
        ),
    )
    session = Session(id="s2", app_name=APP, user_id=USER, events=[said("Aisle now. No tea.")])
    operation = await service.generate_memories(session=session)
    await service.worker.run_until_idle()
    done = await service.get_operation(operation.id, operation.scope)
    assert sorted(g.action for g in done.generated_memories) == [
        MemoryAction.DELETED,
        MemoryAction.UPDATED,
    ]
    assert await facts_of(service) == ["The user prefers aisle seats."]
    revisions = await service.list_revisions(tea.id, SCOPE)
    assert [r.action for r in revisions] == [MemoryAction.CREATED, MemoryAction.DELETED]
    assert revisions[-1].extracted_facts == ["The user stopped drinking tea."]
    assert revisions[-1].fact == "The user drinks green tea."  # a wrong delete can be traced


async def test_malformed_output_is_retried_then_dead_lettered_and_nothing_is_written(make):
    llm = ScriptedLlm(["not json", "still not json"])
    service = make(llm, config=FAST_RETRIES)
    session = Session(id="s3", app_name=APP, user_id=USER, events=[said("hello")])
    operation = await service.generate_memories(session=session)
    await service.worker.run_until_idle()
    await asyncio.sleep(0.05)
    await service.worker.run_until_idle()
    done = await service.get_operation(operation.id, operation.scope)
    assert done.done and "GenerationOutputError" in done.error
    assert [d.id for d in await service.dead_letters()] == [operation.id]
    assert await facts_of(service) == []


async def test_a_worker_that_loses_its_job_writes_nothing(make):
    """Crash safety: a try whose lease lapsed (its worker presumed dead) cannot commit."""
    llm = ScriptedLlm([extraction("The user likes jazz."), extraction("The user likes jazz.")])
    service = make(llm)
    session = Session(id="s4", app_name=APP, user_id=USER, events=[said("I like jazz")])
    operation = await service.generate_memories(session=session)
    stale = await service._parts.users.jobs.claim(timedelta(seconds=0.05))
    await asyncio.sleep(0.1)
    await service.worker.run_until_idle()  # another worker takes the job over and finishes it
    await service._parts.run(stale)  # the first worker wakes up and tries to commit
    assert await facts_of(service) == ["The user likes jazz."]
    assert len((await service.get_operation(operation.id, operation.scope)).generated_memories) == 1


async def test_direct_facts_and_wait_for_completion(make):
    llm = ScriptedLlm()
    service = make(llm, run_worker=True)
    operation = await service.generate_memories(
        facts=["The user's birthday is 3 May."], scope=SCOPE, wait_for_completion=True
    )
    assert operation.done and [g.memory.fact for g in operation.generated_memories] == [
        "The user's birthday is 3 May."
    ]
    assert llm.requests == []  # no candidates: no consolidation call
    await service.close()


async def test_direct_facts_carry_their_topic(make):
    service = make(ScriptedLlm(), run_worker=True)
    operation = await service.generate_memories(
        facts=["The user is vegetarian."],
        topic="USER_PREFERENCES",
        scope=SCOPE,
        wait_for_completion=True,
    )
    [generated] = operation.generated_memories
    assert generated.memory.topics == ["USER_PREFERENCES"]
    assert len(await service.list_revisions(generated.memory.id, SCOPE)) == 1
    await service.close()


async def test_generation_input_errors_write_nothing(make, make_memory_service):
    service = make(ScriptedLlm())
    with pytest.raises(ValueError):
        await service.generate_memories(facts=["a"] * 6, scope=SCOPE)
    with pytest.raises(ValueError):
        await service.generate_memories(scope=SCOPE)
    with pytest.raises(ValueError):  # a topic belongs to direct facts
        await service.generate_memories(contents=[], topic="T", scope=SCOPE)
    with pytest.raises(ValueError):
        await make_memory_service().generate_memories(facts=["a"], scope=SCOPE)


async def test_two_concurrent_generations_for_one_scope_keep_both_facts(make):
    """Two workers, two sessions of one user at once: the scope lease serialises them, so the
    second consolidation sees the first's memory and both facts survive, once each."""

    def answer(request) -> str:
        instruction = str(request.config.system_instruction)
        conversation = json.dumps([c.model_dump(mode="json") for c in request.contents])
        if "operations" in instruction or "fact_numbers" in conversation:
            # Consolidation: create the new fact unless an identical memory is a candidate.
            return plan({"action": "CREATE", "fact_numbers": [1], "fact": pending[-1]})
        fact = "The user likes jazz." if "jazz" in conversation else "The user likes tea."
        pending.append(fact)
        return extraction(fact)

    pending: list[str] = []
    llm = ScriptedLlm(responder=answer)
    first, second = make(llm), make(llm)
    for service, (sid, text) in zip(
        (first, second), (("a", "I like jazz"), ("b", "I like tea")), strict=True
    ):
        session = Session(id=sid, app_name=APP, user_id=USER, events=[said(text)])
        await service.generate_memories(session=session)
    await asyncio.gather(first.worker.run_until_idle(), second.worker.run_until_idle())
    assert await facts_of(first) == ["The user likes jazz.", "The user likes tea."]


async def test_a_standalone_worker_serves_jobs_enqueued_elsewhere(make):
    from adk_memory.cli import main
    from adk_memory.worker import serve

    llm = ScriptedLlm([extraction("The user is vegetarian.")])
    agent_side = make(llm)  # enqueues only (run_worker=False)
    worker_side = make(llm)
    session = Session(id="s9", app_name=APP, user_id=USER, events=[said("I'm vegetarian")])
    operation = await agent_side.generate_memories(session=session)
    ran = await serve(worker_side, concurrency=2, until_idle=True)
    assert (ran.ran, ran.succeeded) == (1, 1)
    assert (await agent_side.get_operation(operation.id, operation.scope)).done
    flags = ["--database-url", "postgresql://u@h/d", "--until-idle"]
    args = main.commands["worker"].make_context("worker", flags).params
    assert (args["model"].model, args["embedding_model"], args["until_idle"]) == (
        "gemini-2.5-flash",
        None,
        True,
    )


async def test_revoking_a_source_regenerates_from_the_sources_that_remain(make):
    llm = ScriptedLlm()
    service = make(llm)
    # Session a creates the memory; session b refines it (UPDATE); session c alone makes another.
    llm.add(extraction("The user likes jazz."))
    await service.generate_memories(
        session=Session(id="a", app_name=APP, user_id=USER, events=[said("I like jazz")])
    )
    await service.worker.run_until_idle()
    [jazz] = (await service.list_memories(SCOPE)).memories
    llm.add(
        extraction("The user loves bebop jazz."),
        plan(
            {
                "action": "UPDATE",
                "fact_numbers": [1],
                "target_id": jazz.id,
                "fact": "The user loves jazz, bebop most.",
            }
        ),
    )
    await service.generate_memories(
        session=Session(id="b", app_name=APP, user_id=USER, events=[said("bebop!", ts=2.0)])
    )
    await service.worker.run_until_idle()
    llm.add(
        extraction("The user has a cat.", topic="USER_PERSONAL_INFO"),
        plan({"action": "CREATE", "fact_numbers": [1], "fact": "The user has a cat."}),
    )
    await service.generate_memories(
        session=Session(id="c", app_name=APP, user_id=USER, events=[said("my cat", ts=3.0)])
    )
    await service.worker.run_until_idle()
    assert len(llm.requests) == 5  # two model calls per generation (the first had no candidates)

    # Revoking c: its memory has no other source, so it is simply deleted.
    assert await service.revoke_source("c", SCOPE) == []
    assert await facts_of(service) == ["The user loves jazz, bebop most."]
    # Revoking a: the jazz memory goes, and b's own extracted fact is generated again.
    [operation] = await service.revoke_source("a", SCOPE)
    await service.worker.run_until_idle()
    assert (await service.get_operation(operation.id, operation.scope)).done
    assert await facts_of(service) == ["The user loves bebop jazz."]
    [revision] = [
        r for r in await service.list_revisions(jazz.id, SCOPE) if r.action is MemoryAction.DELETED
    ]
    assert revision.labels == {"reason": "source_revoked", "session_id": "a"}


async def test_model_timeouts_and_exceptions_are_retried_until_they_succeed(make):
    llm = ScriptedLlm(
        [
            TimeoutError("the model took too long"),
            ConnectionError("503 from the model"),
            extraction("The user plays chess."),
        ]
    )
    service = make(
        llm,
        config=FAST_RETRIES.model_copy(
            update={"generation": GenerationConfig(max_attempts=3, retry_base_delay=timedelta())}
        ),
    )
    session = Session(id="s5", app_name=APP, user_id=USER, events=[said("I play chess")])
    operation = await service.generate_memories(session=session)
    for _ in range(3):
        await service.worker.run_until_idle()
        await asyncio.sleep(0.02)
    done = await service.get_operation(operation.id, operation.scope)
    assert done.done and done.error is None
    assert await facts_of(service) == ["The user plays chess."]


async def test_images_reach_the_model_and_customization_follows_the_scope_keys(make):
    from adk_memory import CustomizationConfig, CustomTopic

    config = MemoryBankConfig(
        customization_configs=(
            CustomizationConfig(),
            CustomizationConfig(
                scope_keys=frozenset({"user_id"}),
                memory_topics=(CustomTopic(label="diet", description="What the user eats"),),
            ),
        )
    )
    llm = ScriptedLlm([extraction("The user is vegan.", topic="diet"), extraction()])
    service = make(llm, config=config)
    photo = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG fake"))
    message = types.Content(role="user", parts=[types.Part(text="My lunch:"), photo])
    await service.generate_memories(contents=[message], scope={"user_id": "solo"})
    await service.generate_memories(contents=[message], scope=SCOPE)
    await service.worker.run_until_idle()

    diet_request, default_request = llm.requests
    sent = [p for c in diet_request.contents for p in c.parts or []]
    assert any(p.inline_data and p.inline_data.data == b"\x89PNG fake" for p in sent)
    assert "What the user eats" in str(diet_request.config.system_instruction)
    assert "What the user eats" not in str(default_request.config.system_instruction)
    assert "USER_PREFERENCES" in str(default_request.config.system_instruction)
    solo = (await service.list_memories({"user_id": "solo"})).memories
    assert [(m.fact, m.topics) for m in solo] == [("The user is vegan.", ["diet"])]


async def test_a_worker_started_first_on_a_fresh_database_finds_its_tables(make):
    """A standalone worker may start before any agent has touched the database: it migrates
    (or checks the schema) before claiming, instead of failing on a missing table."""
    schema = "adk_memory_worker_fresh"
    service = make(ScriptedLlm([]), schema=schema)
    try:
        assert await service.make_worker().run_until_idle() == 0
    finally:
        async with service.database.connection() as conn:
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


async def test_the_model_is_held_to_the_fact_limit_a_user_is(make):
    """A generated fact longer than a user may write is never stored, whatever the guard:
    extraction drops it (the job's other facts are kept); a consolidation that writes one is
    a bad answer (retried, then dead-lettered), with nothing written."""
    huge = "The user likes " + "jazz " * 3000
    llm = ScriptedLlm([extraction(huge, "The user drinks tea.")])
    service = make(llm, guard=NoGuard(), config=FAST_RETRIES)
    operation = await service.generate_memories(session=_session("s1", "tea and jazz"))
    await service.worker.run_until_idle()
    assert (await service.get_operation(operation.id, operation.scope)).error is None
    assert await facts_of(service) == ["The user drinks tea."]

    [tea] = (await service.list_memories(SCOPE)).memories
    bad = plan({"action": "UPDATE", "fact_numbers": [1], "target_id": tea.id, "fact": huge})
    green = extraction("The user drinks green tea.")
    llm.add(green, bad, green, bad)
    operation = await service.generate_memories(session=_session("s2", "green tea"))
    await service.worker.run_until_idle()
    failed = await service.get_operation(operation.id, operation.scope)
    assert failed.done and "over 10000 characters" in (failed.error or "")
    assert await facts_of(service) == ["The user drinks tea."]


def _session(session_id: str, text: str) -> Session:
    return Session(id=session_id, app_name=APP, user_id=USER, events=[said(text)])
