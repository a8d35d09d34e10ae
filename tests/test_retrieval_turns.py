"""Retrieval over dialogue turns, against the real database: a turn that carries its speaker's
name and little else (a filler) no longer outranks the turn that answers a question about that
person (`RetrievalConfig.turn_length_prior`), whether the turn names its speaker in its
metadata or in a transcript line's label, and facts are never weighed by their length.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import pytest
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.config import RetrievalConfig
from adk_memory.memory.guard import NoGuard
from adk_memory.testing import HashEmbedder

SCOPE = {"app_name": "turns", "user_id": "ana-ben"}
FILLER = "Ben: What is new?"
ANSWER = "Ben: Shellfish is one food I can never eat: my face swells up."
OTHER_TURNS = [
    "Ben: I ran ten kilometres along the canal before work this morning.",
    "Ben: Tom got a paid slot at a comedy club in the Northern Quarter.",
    "Ben: The new flat has a small balcony over the park.",
]
QUESTION = "What food is Ben allergic to?"

Make = Callable[..., PostgresMemoryService]


def service_with(
    make: Make, mode: Literal["vector", "text"] = "vector", **retrieval: Any
) -> PostgresMemoryService:
    # No guard: raw dialogue (questions, fillers) is what these tests store. The weight is
    # opt-in (default 0): on unless a test turns it off.
    retrieval.setdefault("turn_length_prior", 1.0)
    config = MemoryBankConfig(retrieval=RetrievalConfig(mode=mode, **retrieval))
    return make(config=config, guard=NoGuard(), embedder=HashEmbedder())


async def found(service: PostgresMemoryService, query: str, top_k: int = 2) -> list[str]:
    results = await service.retrieve_memories(SCOPE, search_query=query, top_k=top_k)
    return [r.memory.fact for r in results]


async def add_turns(service: PostgresMemoryService, marked_by: str, filler: str = FILLER) -> None:
    """The turns, each marked as said by Ben: in its metadata (`speaker`, as an imported
    transcript records it) or as the entry's author (as ADK events and entries carry it)."""
    entries = []
    for n, text in enumerate([filler, ANSWER, *OTHER_TURNS]):
        speaker = {"speaker": "Ben"} if marked_by == "speaker" else None
        entries.append(
            MemoryEntry(
                id=f"turn-{n}",
                author="Ben" if marked_by == "author" else None,
                content=types.Content(role="user", parts=[types.Part(text=text)]),
                custom_metadata=speaker or {},
            )
        )
    await service.add_memory(app_name=SCOPE["app_name"], user_id=SCOPE["user_id"], memories=entries)


@pytest.mark.parametrize("marked_by", ["speaker", "author"])
async def test_a_filler_turn_no_longer_outranks_the_answer(
    make_memory_service: Make, marked_by: str
) -> None:
    """The filler shares "what", "is" and "Ben" with the question, so its (lexical test)
    embedding is the nearest; weighed by its length against the other candidates', the answer
    comes first. With the weight off, the filler wins again: the weight is what moves it."""
    service = service_with(make_memory_service)
    await add_turns(service, marked_by)
    assert (await found(service, QUESTION))[0] == ANSWER
    off = service_with(make_memory_service, turn_length_prior=0)
    assert (await found(off, QUESTION))[0] == FILLER


async def test_full_text_search_alone_weighs_turns_too(make_memory_service: Make) -> None:
    """Without vectors, BM25 gives a short turn matching the same words the edge (length
    normalisation); among turns, the one that says something still comes first."""
    short = "Ben: Shellfish!"
    service = service_with(make_memory_service, mode="text")
    await add_turns(service, "speaker", filler=short)
    assert (await found(service, "Ben shellfish"))[0] == ANSWER
    off = service_with(make_memory_service, mode="text", turn_length_prior=0)
    assert (await found(off, "Ben shellfish"))[0] == short


async def test_facts_are_never_weighed_by_their_length(make_memory_service: Make) -> None:
    """The same texts stored as facts (no speaker, no author, no speaker's label): a short
    fact is as good as a long one, so the nearest still ranks first."""
    service = service_with(make_memory_service)
    facts = [text.removeprefix("Ben: ") for text in (FILLER, ANSWER, *OTHER_TURNS)]
    await service.create_memories(facts, SCOPE)
    assert (await found(service, QUESTION))[0] == facts[0]


@pytest.mark.parametrize("dated", ["", "[19 February 2023] "])
async def test_a_transcript_line_is_a_turn_by_its_speakers_label(
    make_memory_service: Make, dated: str
) -> None:
    """Stored as plain facts, lines that open with a speaker's label ("Ben: ...", after an
    optional bracketed date) are turns all the same, as an imported transcript's are: the
    weight moves the filler down, as it does for turns with a speaker in their metadata."""
    lines = [f"{dated}{text}" for text in (FILLER, ANSWER, *OTHER_TURNS)]
    service = service_with(make_memory_service)
    await service.create_memories(lines, SCOPE)
    assert (await found(service, QUESTION))[0] == lines[1]
    off = service_with(make_memory_service, turn_length_prior=0)
    assert (await found(off, QUESTION))[0] == lines[0]
