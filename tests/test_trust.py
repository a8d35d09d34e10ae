"""Trust-weighted confidence on a real Postgres with a scripted model: trust wins a conflict,
recency breaks ties, independent corroboration raises confidence (and lets a change through),
contradiction lowers it, confidence decays with age, pruning forgets what is no longer believed,
and none of it crosses from one user to another."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import TEST_SCHEMA
from google.adk.events.event import Event
from google.adk.sessions.session import Session
from google.genai import types
from rls_checks import for_all

from adk_memory import InputValidationError, MemoryBankConfig, PostgresMemoryService
from adk_memory.cli import main
from adk_memory.config import RetrievalConfig, TrustConfig
from adk_memory.memory import MemoryAction, SourceType
from adk_memory.memory.models import Memory
from adk_memory.memory.policy.trust import effective_confidence
from adk_memory.testing import ScriptedLlm

APP = "trust-app"
ALICE = {"app_name": APP, "user_id": "alice"}
BOB = {"app_name": APP, "user_id": "bob"}
LISBON = "The user lives in Lisbon."
BERLIN = "The user lives in Berlin."


def extraction(fact: str, source: str, *, forget: bool = False) -> str:
    item = {"fact": fact, "topic": "USER_PERSONAL_INFO", "source": source, "forget": forget}
    return json.dumps({"facts": [item]})


def plan(*operations: dict[str, Any]) -> str:
    return json.dumps({"operations": list(operations)})


def update(target: str, fact: str = BERLIN) -> dict[str, Any]:
    return {"action": "UPDATE", "fact_numbers": [1], "target_id": target, "fact": fact}


def confirm(target: str) -> dict[str, Any]:
    return {"action": "CONFIRM", "fact_numbers": [1], "target_id": target}


class Conversations:
    """Generations from sessions, run to completion by the service's worker."""

    def __init__(self, service: PostgresMemoryService, llm: ScriptedLlm) -> None:
        self.service, self.llm = service, llm
        self.events: dict[tuple[str, str], list[Event]] = {}

    async def say(
        self, scope: dict[str, str], session_id: str, extracted: str, *answers: str
    ) -> list[MemoryAction]:
        """One more turn of `session_id` for `scope`'s user, the model answering `extracted`
        then `answers`: the actions the generation reports."""
        events = self.events.setdefault((scope["user_id"], session_id), [])
        events.append(
            Event(
                author="user",
                invocation_id=f"inv-{len(events)}",
                timestamp=1000.0 + len(events),
                content=types.Content(role="user", parts=[types.Part(text="(a turn)")]),
            )
        )
        self.llm.add(extracted, *answers)
        session = Session(
            id=session_id, app_name=APP, user_id=scope["user_id"], events=list(events)
        )
        operation = await self.service.generate_memories(session=session)
        await self.service.worker.run_until_idle()
        done = await self.service.get_operation(operation.id, operation.scope)
        assert done is not None and done.done and done.error is None, done
        return [g.action for g in done.generated_memories]


@pytest.fixture
def build(make_memory_service):
    def make(**config: Any) -> Conversations:
        llm = ScriptedLlm()
        service = make_memory_service(
            llm=llm, run_worker=False, config=MemoryBankConfig(**config) if config else None
        )
        return Conversations(service, llm)

    return make


async def age(service: PostgresMemoryService, memory_id: str, days: float) -> None:
    """Make a memory last updated `days` ago (the server's clock measures age)."""
    statement = (
        f"UPDATE {TEST_SCHEMA}.memories SET update_time = now() - make_interval(days => $2) "
        f"WHERE id = $1::uuid AND {for_all(TEST_SCHEMA)}"
    )
    await service.database.run(lambda conn: conn.execute(statement, memory_id, days))


async def test_trust_wins_a_less_trusted_source_cannot_overwrite(build):
    talk = build()
    crm = await talk.service.create_memory(LISBON, ALICE, confidence=0.9)  # bootstrapped
    assert await talk.say(ALICE, "s1", extraction(BERLIN, "explicit"), plan(update(crm.id))) == []
    kept = await talk.service.get_memory(crm.id, ALICE)
    assert kept.fact == LISBON and kept.source_type is SourceType.BOOTSTRAPPED
    assert kept.confidence == pytest.approx(0.9 * 0.7)  # contradicted: down by the penalty
    assert kept.update_time == crm.update_time  # a contradiction confirms nothing
    # The model was told who said what, and how sure each memory is.
    consolidation = talk.llm.requests[-1].contents[0].parts[0].text
    assert "source: explicit" in consolidation
    assert f"id: {crm.id}" in consolidation and "source: bootstrapped | confidence: 0.90" in (
        consolidation
    )
    blocked = (await talk.service.list_revisions(crm.id, ALICE))[-1]
    assert blocked.action is MemoryAction.UPDATED and blocked.fact == LISBON
    assert blocked.labels == {"trust": "blocked", "blocked_action": "UPDATE"}
    assert blocked.extracted_facts == [BERLIN]
    assert blocked.source_type is SourceType.USER_INPUT and blocked.source_session_id == "s1"
    assert blocked.confidence == pytest.approx(0.63)
    # A DELETE from a less trusted source is blocked the same way.
    delete = {"action": "DELETE", "fact_numbers": [1], "target_id": crm.id}
    assert await talk.say(ALICE, "s1", extraction(BERLIN, "tool"), plan(delete)) == []
    assert (await talk.service.get_memory(crm.id, ALICE)).confidence == pytest.approx(0.63 * 0.7)


async def test_a_more_trusted_source_overwrites_and_sets_its_provenance(build):
    talk = build()
    said = await talk.service.create_memory(
        LISBON, ALICE, source_type=SourceType.IMPLICIT, confidence=0.6
    )
    actions = await talk.say(ALICE, "s1", extraction(BERLIN, "explicit"), plan(update(said.id)))
    assert actions == [MemoryAction.UPDATED]
    now = await talk.service.get_memory(said.id, ALICE)
    assert now.fact == BERLIN and now.source_type is SourceType.USER_INPUT
    assert now.confidence == pytest.approx(0.8)  # what explicit input starts with
    assert now.source_session_id == "s1"
    revision = (await talk.service.list_revisions(said.id, ALICE))[-1]
    assert revision.confidence == pytest.approx(0.8)
    assert revision.source_type is SourceType.USER_INPUT


async def test_recency_breaks_a_tie_and_the_recency_strategy_ignores_trust(build):
    talk = build()
    said = await talk.service.create_memory(LISBON, ALICE, source_type=SourceType.IMPLICIT)
    actions = await talk.say(ALICE, "s1", extraction(BERLIN, "implicit"), plan(update(said.id)))
    assert actions == [MemoryAction.UPDATED]  # equal trust: the newer wins
    assert (await talk.service.get_memory(said.id, ALICE)).fact == BERLIN

    newest = build(trust=TrustConfig(conflict_strategy="recency"))
    crm = await newest.service.create_memory(LISBON, BOB)
    actions = await newest.say(BOB, "s1", extraction(BERLIN, "tool"), plan(update(crm.id)))
    assert actions == [MemoryAction.UPDATED]
    assert (await newest.service.get_memory(crm.id, BOB)).fact == BERLIN


async def test_an_independent_source_corroborates_a_blocked_change(build):
    talk = build()
    crm = await talk.service.create_memory(LISBON, ALICE, confidence=0.9)
    assert await talk.say(ALICE, "s1", extraction(BERLIN, "explicit"), plan(update(crm.id))) == []
    # The same session saying it again is no corroboration.
    assert await talk.say(ALICE, "s1", extraction(BERLIN, "explicit"), plan(update(crm.id))) == []
    assert (await talk.service.get_memory(crm.id, ALICE)).fact == LISBON
    # Another session making the same change: corroborated, it goes through.
    actions = await talk.say(ALICE, "s2", extraction(BERLIN, "explicit"), plan(update(crm.id)))
    assert actions == [MemoryAction.UPDATED]
    moved = await talk.service.get_memory(crm.id, ALICE)
    assert moved.fact == BERLIN and moved.source_type is SourceType.USER_INPUT
    assert moved.confidence == pytest.approx(0.8 + 0.3 * 0.2)  # started at 0.8, corroborated
    labels = (await talk.service.list_revisions(crm.id, ALICE))[-1].labels
    assert labels == {"trust": "corroborated_override"}


async def test_corroboration_raises_confidence_once_per_source(build):
    talk = build(trust=TrustConfig(corroboration_boost=0.5))
    assert await talk.say(ALICE, "s1", extraction(BERLIN, "implicit")) == [MemoryAction.CREATED]
    [created] = (await talk.service.list_memories(ALICE)).memories
    assert created.source_type is SourceType.IMPLICIT and created.confidence == 0.6
    assert created.effective_confidence == pytest.approx(0.6)
    # Said again in the same session: known, but not corroborated.
    assert (
        await talk.say(ALICE, "s1", extraction(BERLIN, "implicit"), plan(confirm(created.id))) == []
    )
    assert (await talk.service.get_memory(created.id, ALICE)).confidence == 0.6
    # Said in another session: corroborated (by a more trusted source, which it now carries).
    assert (
        await talk.say(ALICE, "s2", extraction(BERLIN, "explicit"), plan(confirm(created.id))) == []
    )
    raised = await talk.service.get_memory(created.id, ALICE)
    assert raised.fact == BERLIN and raised.confidence == pytest.approx(0.8)  # 0.6 -> 0.8
    assert raised.source_type is SourceType.USER_INPUT
    revision = (await talk.service.list_revisions(created.id, ALICE))[-1]
    assert revision.labels == {"trust": "corroborated", "source_type": "user_input"}
    assert revision.source_session_id == "s2" and revision.confidence == pytest.approx(0.8)
    # s2 again: counted once.
    assert (
        await talk.say(ALICE, "s2", extraction(BERLIN, "explicit"), plan(confirm(created.id))) == []
    )
    assert (await talk.service.get_memory(created.id, ALICE)).confidence == pytest.approx(0.8)


async def test_a_forget_request_is_never_blocked(build):
    talk = build()
    crm = await talk.service.create_memory(LISBON, ALICE)
    delete = {"action": "DELETE", "fact_numbers": [1], "target_id": crm.id}
    forget = extraction("Where the user lives", "implicit", forget=True)
    assert await talk.say(ALICE, "s1", forget, plan(delete)) == [MemoryAction.DELETED]
    assert await talk.service.get_memory(crm.id, ALICE) is None


async def test_a_dispute_in_one_users_memories_never_corroborates_anothers(build):
    talk = build()
    alice = await talk.service.create_memory(LISBON, ALICE, confidence=0.9)
    bob = await talk.service.create_memory(LISBON, BOB, confidence=0.9)
    assert await talk.say(BOB, "s1", extraction(BERLIN, "explicit"), plan(update(bob.id))) == []
    # Alice's first dispute, from another session than Bob's: still the first for her memory.
    assert await talk.say(ALICE, "s2", extraction(BERLIN, "explicit"), plan(update(alice.id))) == []
    assert (await talk.service.get_memory(alice.id, ALICE)).fact == LISBON
    assert (await talk.service.get_memory(alice.id, ALICE)).confidence == pytest.approx(0.63)
    assert (await talk.service.get_memory(bob.id, BOB)).confidence == pytest.approx(0.63)


def test_effective_confidence_halves_every_half_life():
    trust = TrustConfig(confidence_half_life=timedelta(days=10))
    then = datetime(2025, 1, 1, tzinfo=timezone.utc)
    memory = Memory(
        id="m", scope=ALICE, fact="f", confidence=0.8, create_time=then, update_time=then
    )
    assert effective_confidence(memory, trust, then) == 0.8
    assert effective_confidence(memory, trust, then + timedelta(days=10)) == pytest.approx(0.4)
    assert effective_confidence(memory, trust, then + timedelta(days=20)) == pytest.approx(0.2)
    endless = TrustConfig(confidence_half_life=None)
    assert effective_confidence(memory, endless, then + timedelta(days=999)) == 0.8
    unknown = memory.model_copy(update={"confidence": None})
    assert effective_confidence(unknown, trust, then) is None
    with pytest.raises(ValueError):
        TrustConfig(confidence_half_life=timedelta(0))
    with pytest.raises(ValueError):
        TrustConfig(initial_confidence={"gossip": 0.5})


async def test_decay_is_read_and_retrieval_weighs_effective_confidence(make_memory_service):
    weighed = MemoryBankConfig(
        retrieval=RetrievalConfig(confidence_weight=1.0, recency_weight=0),
        trust=TrustConfig(confidence_half_life=timedelta(days=30)),
    )
    service = make_memory_service(config=weighed)
    stale = await service.create_memory("The user likes jazz concerts.", ALICE, confidence=0.9)
    fresh = await service.create_memory("The user likes jazz records.", ALICE, confidence=0.5)
    await age(service, stale.id, 60)  # two half-lives: 0.9 -> 0.225
    read = await service.get_memory(stale.id, ALICE)
    assert read.confidence == 0.9  # stored as it was: decay is computed, never written
    assert read.effective_confidence == pytest.approx(0.225, abs=1e-3)
    found = await service.retrieve_memories(ALICE, search_query="jazz", top_k=2)
    assert [r.memory.id for r in found] == [fresh.id, stale.id]
    assert found[1].memory.effective_confidence == pytest.approx(0.225, abs=1e-3)


async def test_prune_deletes_low_stale_memories_of_the_named_scope_only(make_memory_service):
    service = make_memory_service(
        config=MemoryBankConfig(trust=TrustConfig(confidence_half_life=timedelta(days=100)))
    )
    doomed = await service.create_memory("The user once liked polka.", ALICE, confidence=0.3)
    young = await service.create_memory("The user may like jazz.", ALICE, confidence=0.1)
    sure = await service.create_memory("The user is a drummer.", ALICE, confidence=1.0)
    unknown = await service.create_memory("The user has a cat.", ALICE)
    bobs = await service.create_memory("The user once liked polka.", BOB, confidence=0.3)
    other_app = {"app_name": "other", "user_id": "alice"}
    elsewhere = await service.create_memory("The user once liked polka.", other_app, confidence=0.3)
    for memory in (doomed, sure, unknown, bobs, elsewhere):
        await age(service, memory.id, 200)  # 0.3 -> 0.075; 1.0 -> 0.25
    with pytest.raises(InputValidationError):
        await service.prune_memories(APP)  # neither a user nor all users: nothing goes
    with pytest.raises(InputValidationError):
        await service.prune_memories(APP, user_id="alice", all_users=True)
    with pytest.raises(InputValidationError):
        await service.prune_memories(APP, user_id="alice", threshold=1.5)
    seen: list[int] = []
    assert await service.prune_memories(APP, user_id="alice", progress=seen.append) == 1
    assert seen[-1] == 1
    left = {m.id for m in (await service.list_memories(ALICE)).memories}
    assert left == {young.id, sure.id, unknown.id}  # young (30 days' grace), sure, unknown kept
    [*_, gone] = await service.list_revisions(doomed.id, ALICE)
    assert gone.action is MemoryAction.DELETED and gone.labels == {"reason": "low_confidence"}
    assert await service.get_memory(bobs.id, BOB) is not None  # another user: untouched
    # A higher threshold, and every user of the app asked for by name.
    assert await service.prune_memories(APP, all_users=True, threshold=0.3) == 2  # sure, Bob's
    assert await service.get_memory(bobs.id, BOB) is None
    assert await service.get_memory(elsewhere.id, other_app) is not None  # another app


async def test_a_workers_trust_rule_is_the_apps_published_one(make_memory_service):
    llm = ScriptedLlm()
    publisher = make_memory_service(
        llm=llm,
        run_worker=False,
        config=MemoryBankConfig(trust=TrustConfig(conflict_strategy="recency")),
    )
    worker = make_memory_service(llm=llm, run_worker=False)  # the default: trust
    crm = await publisher.create_memory(LISBON, ALICE)
    llm.add(extraction(BERLIN, "tool"), plan(update(crm.id)))
    event = Event(
        author="user",
        invocation_id="i",
        timestamp=1.0,
        content=types.Content(role="user", parts=[types.Part(text="Berlin now")]),
    )
    session = Session(id="s1", app_name=APP, user_id="alice", events=[event])
    operation = await publisher.generate_memories(session=session)
    assert await worker.worker.run_until_idle() == 1
    assert (await worker.get_operation(operation.id, operation.scope)).error is None
    assert (await worker.get_memory(crm.id, ALICE)).fact == BERLIN
    stored = await worker.app_config(APP)
    assert stored.config.trust.conflict_strategy == "recency"


def test_cli_prune_names_its_scope(database_url, make_memory_service):
    import asyncio

    async def seed() -> str:
        async with PostgresMemoryService(database_url, schema=TEST_SCHEMA) as service:
            memory = await service.create_memory("The user liked polka.", ALICE, confidence=0.1)
            await age(service, memory.id, 400)
            return memory.id

    memory_id = asyncio.run(seed())
    env = {"ADK_MEMORY_DATABASE_URL": database_url, "ADK_MEMORY_SCHEMA": TEST_SCHEMA}
    runner = CliRunner(env=env)
    refused = runner.invoke(main, ["memories", "prune", "--app", APP])
    assert refused.exit_code == 2 and "--all-users" in refused.output
    done = runner.invoke(main, ["memories", "prune", "--app", APP, "--user", "alice"])
    assert done.exit_code == 0, done.output
    assert "1 memory pruned" in done.stdout

    async def gone() -> bool:
        async with PostgresMemoryService(database_url, schema=TEST_SCHEMA) as service:
            return await service.get_memory(memory_id, ALICE) is None

    assert asyncio.run(gone())


async def test_a_blocked_claim_derives_nothing_when_its_session_is_revoked(build):
    talk = build()
    crm = await talk.service.create_memory(LISBON, ALICE, confidence=0.9)
    assert await talk.say(ALICE, "s1", extraction(BERLIN, "explicit"), plan(update(crm.id))) == []
    assert await talk.service.revoke_source("s1", ALICE) == []
    kept = await talk.service.get_memory(crm.id, ALICE)
    assert kept is not None and kept.fact == LISBON  # never derived from s1: not revoked


async def test_an_unknown_source_type_writes_nothing(build):
    talk = build()
    with pytest.raises(InputValidationError):
        await talk.service.generate_memories(facts=[BERLIN], scope=ALICE, source_type="rumour")
    assert await talk.service.worker.run_until_idle() == 0
    assert (await talk.service.list_memories(ALICE)).memories == []
