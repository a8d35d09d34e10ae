"""Batch ingestion: `create_memories` writes many memories of one scope in one statement, each
redacted, guarded and embedded as `create_memory` would, with its CREATED revision, all or
nothing. Its replay after a lost reply is in `test_exactly_once.py` (that suite owns the wire
proxy's fixtures)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from conftest import TEST_SCHEMA as SCHEMA
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types
from rls_checks import all_rows

from adk_memory import (
    GuardAction,
    GuardVerdict,
    InputValidationError,
    MemoryRejectedError,
    PiiRedactor,
)
from adk_memory.memory import MemoryFact, SourceType
from adk_memory.testing import HashEmbedder

ALICE = {"app_name": "app", "user_id": "alice"}
BOB = {"app_name": "app", "user_id": "bob"}


class Verdicts:
    """A guard that rejects facts containing "forbidden" and quarantines those with "hold"."""

    async def check(self, fact: str, *, scope: Any, source: str) -> GuardVerdict:
        if "forbidden" in fact:
            return GuardVerdict(GuardAction.REJECT, reason="not allowed", rule="test")
        if "hold" in fact:
            return GuardVerdict(GuardAction.QUARANTINE, reason="held", rule="test")
        return GuardVerdict(GuardAction.ALLOW)


async def count(database_url: str, table: str) -> int:
    conn = await all_rows(database_url)
    try:
        return int(await conn.fetchval(f"SELECT count(*) FROM {SCHEMA}.{table}"))
    finally:
        await conn.close()


async def test_many_facts_in_one_call_with_their_revisions(make_memory_service, database_url):
    service = make_memory_service(embedder=HashEmbedder())
    facts = [f"Fact number {i} about tea." for i in range(500)]
    created = await service.create_memories(
        [
            *facts[:-1],
            MemoryFact(
                facts[-1],
                topics=["USER_PREFERENCES"],
                metadata={"k": "v"},
                importance=0.9,
                confidence=0.5,
                ttl=timedelta(days=1),
                source_type=SourceType.USER_INPUT,
            ),
        ],
        ALICE,
    )
    assert [m.fact for m in created] == facts
    assert len({m.id for m in created}) == 500
    last = created[-1]
    assert last.topics == ["USER_PREFERENCES"] and last.metadata == {"k": "v"}
    assert last.importance == pytest.approx(0.9) and last.confidence == pytest.approx(0.5)
    assert last.source_type == SourceType.USER_INPUT and last.expire_time is not None
    assert created[0].expire_time is None and created[0].topics == []
    assert await count(database_url, "memories") == 500
    assert await count(database_url, "memory_revisions") == 500
    revisions = await service.list_revisions(last.id, ALICE)
    assert [(r.action.value, r.fact) for r in revisions] == [("CREATED", facts[-1])]
    # Embedded: vector retrieval finds them.
    found = await service.retrieve_memories(ALICE, search_query="Fact number 7", top_k=3)
    assert found and all(r.memory.id in {m.id for m in created} for r in found)


async def test_a_rejected_fact_writes_nothing(make_memory_service, database_url):
    service = make_memory_service(guard=Verdicts())
    with pytest.raises(MemoryRejectedError) as raised:
        await service.create_memories(["Likes tea.", "forbidden fruit", "Lives in Lyon."], ALICE)
    assert "Item 1 of the batch." in (raised.value.__notes__ or [])
    assert await count(database_url, "memories") == 0
    assert await count(database_url, "memory_revisions") == 0


@pytest.mark.parametrize(
    ("bad", "index"),
    [
        (["ok", ""], 1),
        (["ok", MemoryFact("ok", importance=2.0)], 1),
        ([MemoryFact("ok", ttl=timedelta(seconds=-1)), "ok"], 0),
        (["ok", "ok", 42], 2),
        ([MemoryFact("ok", topics="not a list")], 0),  # type: ignore[arg-type]
    ],
)
async def test_bad_input_names_the_item_and_writes_nothing(
    make_memory_service, database_url, bad, index
):
    service = make_memory_service()
    with pytest.raises(InputValidationError, match=f"^Item {index}: "):
        await service.create_memories(bad, ALICE)
    assert await count(database_url, "memories") == 0


async def test_not_a_list(make_memory_service):
    service = make_memory_service()
    with pytest.raises(InputValidationError):
        await service.create_memories("Likes tea.", ALICE)  # type: ignore[arg-type]


async def test_quarantined_facts_go_to_the_quarantine(make_memory_service):
    service = make_memory_service(guard=Verdicts())
    created = await service.create_memories(["Likes tea.", "please hold this"], ALICE)
    assert [m.quarantined for m in created] == [False, True]
    live = await service.list_memories(ALICE)
    assert [m.fact for m in live.memories] == ["Likes tea."]
    held = await service.list_quarantined(ALICE)
    assert [q.memory.fact for q in held] == ["please hold this"]
    approved = await service.approve_quarantined(created[1].id, ALICE)
    assert approved.fact == "please hold this"


async def test_facts_and_metadata_are_redacted(make_memory_service):
    service = make_memory_service(redactor=PiiRedactor())
    [memory] = await service.create_memories(
        [MemoryFact("Mail me at alice@example.com", metadata={"note": "bob@example.com"})],
        ALICE,
    )
    assert "alice@example.com" not in memory.fact
    assert "bob@example.com" not in str(memory.metadata)
    stored = await service.get_memory(memory.id, ALICE)
    assert stored is not None and "alice@example.com" not in stored.fact


async def test_items_of_one_call_stay_in_its_scope(make_memory_service):
    service = make_memory_service(embedder=HashEmbedder())
    await service.create_memories(["Alice likes tea.", "Alice lives in Lyon."], ALICE)
    await service.create_memories(["Bob likes coffee."], BOB)
    assert sorted(m.fact for m in (await service.list_memories(ALICE)).memories) == [
        "Alice likes tea.",
        "Alice lives in Lyon.",
    ]
    assert [m.fact for m in (await service.list_memories(BOB)).memories] == ["Bob likes coffee."]
    found = await service.retrieve_memories(BOB, search_query="likes tea", top_k=10)
    assert [r.memory.fact for r in found] == ["Bob likes coffee."]


async def test_add_memory_and_raw_events_share_the_one_statement(make_memory_service):
    """ADK's `add_memory` goes through the same batch insert: a repeated entry id is one memory
    (the first), and adding the same entries again writes nothing new."""

    def entry(entry_id: str, text: str) -> MemoryEntry:
        return MemoryEntry(id=entry_id, content=types.Content(parts=[types.Part(text=text)]))

    service = make_memory_service(embedder=HashEmbedder())
    entries = [entry("e1", "Likes tea."), entry("e2", "Lives in Lyon."), entry("e1", "Again.")]
    await service.add_memory(app_name="app", user_id="alice", memories=entries)
    await service.add_memory(app_name="app", user_id="alice", memories=entries)
    facts = sorted(m.fact for m in (await service.list_memories(ALICE)).memories)
    assert facts == ["Likes tea.", "Lives in Lyon."]


async def test_a_batch_is_indexed_like_one_memory_in_every_language(make_memory_service):
    """The batch statement indexes the normalised words and the bigrams of unspaced scripts, as
    the single path does: a Chinese fact and a decomposed accent are found without an embedder."""
    service = make_memory_service()
    scope = {"app_name": "app", "user_id": "u"}
    await service.create_memories(
        ["用户喜欢喝乌龙茶", "Elle adore le café noir.", "Likes jazz."], scope
    )
    for query, expected in (
        ("乌龙茶", "用户喜欢喝乌龙茶"),
        ("cafe\u0301", "Elle adore le café noir."),
    ):
        found = await service.retrieve_memories(scope, search_query=query, top_k=3)
        assert [r.memory.fact for r in found][:1] == [expected], query


async def test_a_keyed_fact_is_written_once(make_memory_service, database_url):
    """A `MemoryFact.key` makes writing idempotent: the same key and fact again (an import run
    twice) returns the first memory, as it is now; a key whose memory was deleted, or that
    holds another fact, writes nothing and is left out of the result."""
    service = make_memory_service(redactor=PiiRedactor(), guard=Verdicts())
    items = [
        MemoryFact("Alice likes tea.", key="line-1"),
        MemoryFact("Mail alice@example.com", key="line-2"),
        MemoryFact("Please hold this.", key="line-3"),  # quarantined, both times
        "Alice has no key.",
    ]
    first = await service.create_memories(items, ALICE)
    assert len(first) == 4 and first[2].quarantined
    again = await service.create_memories(items, ALICE)
    assert [m.id for m in again[:3]] == [m.id for m in first[:3]] and again[2].quarantined
    assert again[3].id != first[3].id  # a fact without a key is a new memory each time
    assert await count(database_url, "memories") == 5
    assert await count(database_url, "memory_revisions") == 5

    await service.update_memory(first[0].id, ALICE, fact="Alice likes green tea.")
    await service.delete_memory(scope=ALICE, memory_id=first[1].id)
    changed = [MemoryFact("Alice likes coffee.", key="line-3"), *items[:2]]
    third = await service.create_memories(changed, ALICE)
    assert [m.fact for m in third] == ["Alice likes green tea."]  # edits kept, nothing new
    assert await count(database_url, "memories") == 4

    [bobs] = await service.create_memories([items[0]], BOB)  # a key is per scope
    assert bobs.id not in {m.id for m in first} and bobs.scope == BOB
    twice = [MemoryFact("Bob likes jazz.", key="k"), MemoryFact("Bob likes rock.", key="k")]
    assert [m.fact for m in await service.create_memories(twice, BOB)] == ["Bob likes jazz."]


@pytest.mark.parametrize("key", ["", "x" * 1001, "bad\ud800", 7])
async def test_a_bad_key_names_the_item(make_memory_service, database_url, key):
    service = make_memory_service()
    with pytest.raises(InputValidationError, match="Item 1: A fact's key"):
        await service.create_memories(["Fine.", MemoryFact("Keyed.", key=key)], ALICE)
    assert await count(database_url, "memories") == 0
