"""Memory Bank's APIs adk-memory had no equivalent for, against the semantics Memory Bank
documents (its SDK types' docstrings: `RollbackMemory`, `GetMemoryRevision`,
`ListMemoryRevisionsConfig.filter`, `revision_labels` / `revision_ttl` /
`disable_memory_revisions` on create, update and generate, `PurgeMemories` with `filter`,
`filter_groups` and `force`, `RetrieveMemoriesConfig.filter` (AIP-160 on fact, create_time,
update_time) and `filter_groups` (an OR of ANDs over metadata)).

The database is the real test server; generation's model is scripted (direct facts, no call).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from google.genai import types
from test_cli import Cli, arun, cli, services

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.errors import InputValidationError, NotFoundError
from adk_memory.memory.checks import as_filter
from adk_memory.memory.models import MemoryFilter
from adk_memory.testing import HashEmbedder, ScriptedLlm

__all__ = ["cli"]  # a fixture, used by name

ALICE = {"app_name": "shop", "user_id": "alice"}
BOB = {"app_name": "shop", "user_id": "bob"}


@pytest.fixture
async def service(make_memory_service: Any) -> AsyncIterator[PostgresMemoryService]:
    built: PostgresMemoryService = make_memory_service(
        llm=ScriptedLlm(), embedder=HashEmbedder(), run_worker=True
    )
    yield built
    await built.close()


# ------------------------------------------------------------------------------ revisions


async def test_rollback_get_and_list_revisions_by_label(service: PostgresMemoryService) -> None:
    memory = await service.create_memory(
        "The user lives in Lyon.", ALICE, revision_labels={"source": "crm"}
    )
    await service.update_memory(memory.id, ALICE, fact="The user lives in Paris.")
    created, _ = await service.list_revisions(memory.id, ALICE)
    assert (created.labels, created.fact) == ({"source": "crm"}, "The user lives in Lyon.")

    # Get one revision; another scope never sees it.
    assert await service.get_revision(memory.id, ALICE, created.id) == created
    with pytest.raises(NotFoundError):
        await service.get_revision(memory.id, BOB, created.id)

    # Roll back: the fact as it was, an UPDATED revision naming the target.
    rolled = await service.rollback_memory(memory.id, ALICE, created.id)
    assert rolled.fact == "The user lives in Lyon."
    *_, last = await service.list_revisions(memory.id, ALICE)
    assert (last.action.value, last.labels) == ("UPDATED", {"rolled_back_to": created.id})
    assert (await service.get_memory(memory.id, ALICE)).fact == "The user lives in Lyon."  # type: ignore[union-attr]
    with pytest.raises(NotFoundError):
        await service.rollback_memory(memory.id, BOB, created.id)

    # Filtered by label: a mapping, or Memory Bank's AIP-160 form.
    assert await service.list_revisions(memory.id, ALICE, labels={"source": "crm"}) == [created]
    by_text = await service.list_revisions(memory.id, ALICE, filter='labels.rolled_back_to="x"')
    assert by_text == []
    assert await service.list_revisions(
        memory.id, ALICE, filter=f'labels.rolled_back_to = "{created.id}"'
    ) == [last]
    with pytest.raises(InputValidationError, match=r"labels\.KEY"):
        await service.list_revisions(memory.id, ALICE, filter="fact = 1")


async def test_revision_ttl_and_disabled_revisions_per_request(
    service: PostgresMemoryService,
) -> None:
    kept = await service.create_memory(
        "The user drinks tea.", ALICE, revision_ttl=timedelta(days=1)
    )
    [revision] = await service.list_revisions(kept.id, ALICE)
    assert revision.expire_time is not None
    assert timedelta(hours=23) < revision.expire_time - revision.create_time <= timedelta(days=1)

    quiet = await service.create_memory(
        "The user drinks coffee.", ALICE, disable_memory_revisions=True
    )
    await service.update_memory(quiet.id, ALICE, fact="The user drinks decaf.")
    # The update asked for nothing: its revision is listed, the creation's is not.
    assert [r.action.value for r in await service.list_revisions(quiet.id, ALICE)] == ["UPDATED"]
    await service.update_memory(
        quiet.id, ALICE, fact="The user drinks espresso.", disable_memory_revisions=True
    )
    assert len(await service.list_revisions(quiet.id, ALICE)) == 1

    operation = await service.generate_memories(
        facts=["The user's birthday is 3 May."],
        scope=BOB,
        revision_labels={"run": "nightly"},
        revision_ttl=timedelta(hours=2),
        wait_for_completion=True,
    )
    [generated] = operation.generated_memories
    [made] = await service.list_revisions(generated.memory_id, BOB)
    assert made.labels == {"run": "nightly"} and made.expire_time is not None
    silent = await service.generate_memories(
        facts=["The user has a cat."],
        scope=BOB,
        disable_consolidation=True,
        disable_memory_revisions=True,
        wait_for_completion=True,
    )
    assert await service.list_revisions(silent.generated_memories[0].memory_id, BOB) == []
    with pytest.raises(InputValidationError, match="revision_ttl"):
        await service.create_memory("x", ALICE, revision_ttl=timedelta(0))


# -------------------------------------------------------------------- filters and purge


async def _seed(service: PostgresMemoryService) -> dict[str, str]:
    facts = {
        "The user loves espresso.": {"author": "agent 123", "n": 1},
        "The user's coffee is always black.": {"author": "agent 321", "label": "travel"},
        "The user flies to Tokyo in May.": {"author": "agent 321", "label": "travel"},
        "The user plays chess.": {"author": "agent 9"},
    }
    ids = {}
    for fact, metadata in facts.items():
        topics = ["USER_PREFERENCES"] if "coffee" in fact or "espresso" in fact else []
        memory = await service.create_memory(fact, ALICE, metadata=metadata, topics=topics)
        ids[fact] = memory.id
    await service.create_memory("The user loves espresso.", BOB, metadata={"author": "agent 123"})
    return ids


GROUPS = [
    {"filters": [{"key": "author", "value": {"stringValue": "agent 123"}, "op": "EQUAL"}]},
    {
        "filters": [
            {"key": "label", "value": {"stringValue": "travel"}, "op": "EQUAL"},
            {"key": "author", "value": {"stringValue": "agent 321"}},
        ]
    },
]


async def test_retrieval_filters_narrow_before_ranking(service: PostgresMemoryService) -> None:
    await _seed(service)

    async def facts(**options: Any) -> list[str]:
        found = await service.retrieve_memories(ALICE, **options)
        return sorted(r.memory.fact for r in found)

    # AIP-160 on the fact (`:` is "has": a substring, any case), on topics and on times.
    assert await facts(filter='fact:"COFFEE"') == ["The user's coffee is always black."]
    # Regular-expression characters in a `:` value are matched as written.
    assert await facts(filter='fact:"always black."') == ["The user's coffee is always black."]
    assert await facts(filter='fact:"s black (.*"') == []
    assert await facts(filter='topics:"USER_PREFERENCES" AND NOT fact:"black"') == [
        "The user loves espresso."
    ]
    future = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    assert await facts(filter=f'create_time > "{future}"') == []
    assert len(await facts(filter=f'update_time < "{future}"')) == 4
    # A top-level update-time bound is the plain comparison `updated_after` states (no per-row
    # document), the rest of the expression kept.
    split = as_filter(f'update_time < "{future}" AND fact:"black"')
    assert split is not None and split.expression == 'fact : "black"'
    assert split.updated_before == datetime.fromisoformat(future)
    assert await facts(filter=split) == ["The user's coffee is always black."]
    # OR binds tighter than AND (AIP-160): chess AND (tokyo OR espresso) matches nothing.
    assert await facts(filter='fact:"chess" AND fact:"tokyo" OR fact:"espresso"') == []
    # Metadata filter groups: (author = agent 123) OR (label = travel AND author = agent 321).
    grouped = await facts(filter_groups=GROUPS)
    assert grouped == [
        "The user flies to Tokyo in May.",
        "The user loves espresso.",
        "The user's coffee is always black.",
    ]
    negated = [{"filters": [{"key": "label", "value": {"stringValue": "travel"}, "negate": True}]}]
    assert await facts(filter_groups=negated) == [
        "The user loves espresso.",
        "The user plays chess.",
    ]
    numeric = [{"filters": [{"key": "n", "value": {"doubleValue": 0.5}, "op": "GREATER_THAN"}]}]
    assert await facts(filter_groups=numeric) == ["The user loves espresso."]
    # With a query: top_k of the memories the filter keeps (not top_k, then filtered).
    found = await service.retrieve_memories(
        ALICE, search_query="user coffee espresso chess", top_k=2, filter='fact:"chess"'
    )
    assert [r.memory.fact for r in found] == ["The user plays chess."]
    # A listing takes them too; a bad expression is a typed error naming the problem.
    page = await service.list_memories(ALICE, filter=MemoryFilter(expression='fact:"tokyo"'))
    assert [m.fact for m in page.memories] == ["The user flies to Tokyo in May."]
    for bad, message in (
        ("colour = 'red'", "cannot read"),
        ('shoe_size = "9"', "unknown field"),
        ('fact:"x" AND (fact:"y"', "ends too soon"),
        ('topics > "a"', "topics take"),
    ):
        with pytest.raises(InputValidationError, match=message):
            await service.retrieve_memories(ALICE, filter=bad)
    with pytest.raises(InputValidationError, match="exactly one typed value"):
        await service.retrieve_memories(
            ALICE,
            filter_groups=[{"filters": [{"key": "a", "value": {}}]}],  # type: ignore[list-item]
        )


async def test_purge_by_filter_is_a_dry_run_without_force(service: PostgresMemoryService) -> None:
    ids = await _seed(service)
    dry = await service.purge_memories(ALICE, filter_groups=GROUPS)
    assert (dry.purge_count, dry.purged) == (3, False)
    assert len((await service.list_memories(ALICE)).memories) == 4  # nothing deleted

    done = await service.purge_memories(ALICE, filter_groups=GROUPS, force=True)
    assert (done.purge_count, done.purged) == (3, True)
    [left] = (await service.list_memories(ALICE)).memories
    assert left.fact == "The user plays chess."
    gone = ids["The user loves espresso."]
    *_, deleted = await service.list_revisions(gone, ALICE)
    assert (deleted.action.value, deleted.labels) == ("DELETED", {"reason": "purged"})
    # Bob's memory with the same metadata was outside the scope: kept.
    assert len((await service.list_memories(BOB)).memories) == 1

    # Without a scope: an operator's purge, narrowed by Memory Bank's scope filter.
    everyone = await service.purge_memories(filter='scope.user_id = "bob"', force=True)
    assert everyone.purge_count == 1 and (await service.list_memories(BOB)).memories == []
    with pytest.raises(InputValidationError, match="needs a filter"):
        await service.purge_memories(ALICE, force=True)


# ------------------------------------------------------------------------------- the CLI


def test_an_operator_rolls_back_lists_by_label_and_purges(cli: Cli, database_url: str) -> None:
    async def seed() -> str:
        async with services(database_url) as (_, memory):
            made = await memory.create_memory(
                "The user lives in Lyon.", ALICE, revision_labels={"source": "crm"}
            )
            await memory.update_memory(made.id, ALICE, fact="The user lives in Paris.")
            await memory.create_memory("The user plays chess.", ALICE, metadata={"by": "a1"})
            return made.id

    memory_id = arun(seed)
    alice = ("--app", "shop", "--user", "alice")
    listed = json.loads(
        cli("memories", "revisions", memory_id, *alice, "--label", "source=crm", "--json").stdout
    )
    [created] = listed
    assert created["fact"] == "The user lives in Lyon."
    rolled = cli("memories", "rollback", memory_id, created["id"], *alice).stdout
    assert rolled == f"{memory_id}: The user lives in Lyon.\n"
    assert created["id"] in cli("memories", "revisions", memory_id, *alice).stdout
    missing = cli("memories", "revisions", memory_id, *alice, "--label", "source=x", code=1)
    assert "No revisions labelled source=x" in missing.stderr

    groups = '[{"filters": [{"key": "by", "value": {"stringValue": "a1"}}]}]'
    dry = cli("memories", "purge", *alice, "--filter-groups", groups).stdout
    assert dry == "1 memory would be purged (add --force).\n"
    assert cli("memories", "purge", *alice, "--filter", 'fact:"lyon"', "--force").stdout == (
        "1 memory purged.\n"
    )
    bad = cli("memories", "purge", *alice, "--filter", "nonsense ==", code=1)
    assert "Invalid filter" in bad.stderr

    async def left() -> list[str]:
        async with services(database_url) as (_, memory):
            return [m.fact for m in (await memory.list_memories(ALICE)).memories]

    assert arun(left) == ["The user plays chess."]


# --------------------------------------------------------------- generation's options


def _plan(memory_id: str, fact: str) -> str:
    decision = {"action": "UPDATE", "fact_numbers": [1], "target_id": memory_id, "fact": fact}
    return json.dumps({"operations": [decision]})


async def test_allowed_topics_and_the_metadata_merge_strategies(make_memory_service: Any) -> None:
    llm = ScriptedLlm()
    service: PostgresMemoryService = make_memory_service(
        llm=llm, embedder=HashEmbedder(), run_worker=True
    )
    # allowed_topics: the extraction model is shown only those of the configured topics.
    llm.add(json.dumps({"facts": [{"fact": "The user likes tea.", "topic": "USER_PREFERENCES"}]}))
    said = types.Content(role="user", parts=[types.Part(text="I like tea, and I am Ann.")])
    await service.generate_memories(
        contents=[said], scope=ALICE, allowed_topics=["USER_PREFERENCES"], wait_for_completion=True
    )
    prompt = str(llm.requests[0].config.system_instruction)
    assert "USER_PREFERENCES" in prompt and "USER_PERSONAL_INFO" not in prompt

    # What an update does with the request's metadata.
    seat = await service.create_memory("The user prefers window seats.", BOB, metadata={"a": "1"})
    for strategy, expected in (("MERGE", {"a": "1", "b": "2"}), ("OVERWRITE", {"b": "2"})):
        llm.add(_plan(seat.id, f"The user prefers aisle seats ({strategy})."))
        await service.generate_memories(
            facts=["The user prefers aisle seats."],
            scope=BOB,
            metadata={"b": "2"},
            metadata_merge_strategy=strategy,  # type: ignore[arg-type]
            wait_for_completion=True,
        )
        updated = await service.get_memory(seat.id, BOB)
        assert updated is not None and updated.metadata == expected
    # REQUIRE_EXACT_MATCH: no memory has exactly this metadata, so none is a candidate: no
    # consolidation call, a memory of its own.
    calls = len(llm.requests)
    await service.generate_memories(
        facts=["The user prefers aisle seats."],
        scope=BOB,
        metadata={"c": "3"},
        metadata_merge_strategy="REQUIRE_EXACT_MATCH",
        wait_for_completion=True,
    )
    assert len(llm.requests) == calls
    assert len((await service.list_memories(BOB)).memories) == 2
    with pytest.raises(InputValidationError, match="metadata_merge_strategy"):
        await service.generate_memories(
            facts=["x"],
            scope=BOB,
            metadata_merge_strategy="LATEST",  # type: ignore[arg-type]
        )
    await service.close()


async def test_consolidation_sees_each_candidates_latest_revisions(
    make_memory_service: Any,
) -> None:
    config = MemoryBankConfig.model_validate(
        {"customizationConfigs": [{"consolidationConfig": {"revisionsPerCandidateCount": 3}}]}
    )
    llm = ScriptedLlm()
    service: PostgresMemoryService = make_memory_service(
        llm=llm, embedder=HashEmbedder(), run_worker=True, config=config
    )
    seat = await service.create_memory("The user prefers window seats.", ALICE)
    await service.update_memory(seat.id, ALICE, fact="The user prefers aisle seats.")
    await service.update_memory(seat.id, ALICE, fact="The user prefers exit-row seats.")
    llm.add(_plan(seat.id, "The user prefers window seats again."))
    await service.generate_memories(
        facts=["The user prefers window seats again."], scope=ALICE, wait_for_completion=True
    )
    [request] = llm.requests
    shown = "".join(p.text or "" for c in request.contents for p in c.parts or ())
    assert (
        "The user prefers exit-row seats. | earlier: The user prefers aisle seats. / "
        "The user prefers window seats." in shown
    )
    await service.close()
