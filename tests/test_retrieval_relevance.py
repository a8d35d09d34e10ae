"""What retrieval finds and what it leaves out: BM25-style lexical ranking (a term counts by its
rarity in the scope, a long memory by its length) and the relevance floor (a question with no
relevant memory finds nothing: not through `retrieve_memories`, not through ADK's
`search_memory`, not in the memory-context block), against the real database.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.adk.callbacks import MemoryContextCallback
from adk_memory.config import RetrievalConfig
from adk_memory.testing import HashEmbedder

SCOPE = {"app_name": "relevance", "user_id": "caroline"}
CHATTER = [
    "Caroline: I had a long day at work today.",
    "Caroline: The weather was lovely this afternoon.",
    "Caroline: I called my mum on the way home.",
    "Caroline: We watched a documentary about whales.",
    "Caroline: My neighbour lent me a ladder.",
    "Caroline: The bus was late again this morning.",
    "Caroline: I finally cleaned the garage.",
    "Caroline: Dinner was leftover soup.",
]
PAINTING = "Melanie: I signed up for a watercolour painting class."

Make = Callable[..., PostgresMemoryService]


def text_only(**retrieval: Any) -> MemoryBankConfig:
    return MemoryBankConfig(retrieval=RetrievalConfig(mode="text", **retrieval))


async def facts(service: PostgresMemoryService, query: str, top_k: int = 3) -> list[str]:
    found = await service.retrieve_memories(SCOPE, search_query=query, top_k=top_k)
    return [r.memory.fact for r in found]


async def test_a_rare_term_outweighs_a_common_one(make_memory_service: Make) -> None:
    """Every turn names Caroline; one turn repeats her name three times. The one turn about
    painting shares a rarer word with the question, so it ranks first (plain `ts_rank`, which
    weighs every term alike and counts repeats, ranked the repeated name first)."""
    service = make_memory_service(config=text_only())
    for fact in [*CHATTER, "Caroline: Caroline told Caroline's cousin to call back.", PAINTING]:
        await service.create_memory(fact, SCOPE)
    assert (await facts(service, "What did Caroline say about painting?"))[0] == PAINTING


async def test_a_shorter_memory_ranks_before_a_longer_one_matching_the_same(
    make_memory_service: Make,
) -> None:
    """Document-length normalisation: the same one-word match counts for more in a short fact.
    The short one is older, so recency cannot explain the order."""
    service = make_memory_service(config=text_only())
    short = "The user loves jazz."
    long = (
        "The user spent the weekend repainting the kitchen, fixing the fence, visiting an aunt "
        "in the countryside, baking bread twice and, on Sunday night, listening to some jazz."
    )
    await service.create_memory(short, SCOPE)
    await service.create_memory(long, SCOPE)
    assert await facts(service, "jazz") == [short, long]


async def test_the_text_floor_drops_memories_that_match_only_common_words(
    make_memory_service: Make,
) -> None:
    """Asked about her favourite film, no turn is relevant: they share only her name. With a
    text-relevance floor nothing is returned; a question the painting turn answers still finds
    it under the same floor."""
    floored = make_memory_service(config=text_only(min_text_relevance=0.3))
    for fact in [*CHATTER, PAINTING]:
        await floored.create_memory(fact, SCOPE)
    question = "What is Caroline's favourite film?"
    assert await facts(make_memory_service(config=text_only(min_text_relevance=0)), question)
    assert await facts(floored, question) == []
    assert await facts(floored, "Which painting class did Melanie sign up for?") == [PAINTING]


@pytest.mark.parametrize(
    ("min_similarity", "expected"),
    [
        (None, ["The user flies from Berlin."]),  # the embedder's calibrated floor (0.1)
        (0.99, []),  # nothing is that similar
        (-1.0, ["The user flies from Berlin.", "The user drinks green tea."]),  # off
    ],
)
async def test_the_similarity_floor_is_the_embedders_unless_configured(
    make_memory_service: Make, min_similarity: float | None, expected: list[str]
) -> None:
    service = make_memory_service(
        embedder=HashEmbedder(64),
        config=MemoryBankConfig(
            retrieval=RetrievalConfig(mode="vector", min_similarity=min_similarity)
        ),
    )
    for fact in ("The user flies from Berlin.", "The user drinks green tea."):
        await service.create_memory(fact, SCOPE)
    assert await facts(service, "berlin flights", top_k=5) == expected


async def test_nothing_relevant_means_no_memory_block(
    make_session_service: Callable[..., Any], make_memory_service: Make
) -> None:
    """The memory-context block and ADK's search show nothing rather than the nearest noise
    (hybrid retrieval with an embedder: nearest-neighbour search alone would fill it)."""
    sessions = make_session_service()
    memory = make_memory_service(embedder=HashEmbedder(64))
    await memory.create_memory("The user flies from Berlin.", SCOPE)
    callback = MemoryContextCallback()

    async def block(question: str) -> str:
        session = await sessions.create_session(app_name="relevance", user_id="caroline")
        message = types.Content(role="user", parts=[types.Part(text=question)])
        invocation = InvocationContext(
            session_service=sessions,
            memory_service=memory,
            invocation_id=f"inv-{len(question)}",
            session=session,
            user_content=message,
        )
        request = LlmRequest(contents=[message])
        await callback(CallbackContext(invocation), request)
        return str(request.config.system_instruction or "")

    assert "Berlin" in await block("Where does my flight from Berlin leave?")
    assert await block("What is the capital of Peru?") == ""
    found = await memory.search_memory(
        app_name="relevance", user_id="caroline", query="What is the capital of Peru?"
    )
    assert found.memories == []


async def test_an_unknown_text_search_language_is_a_clear_error(make_memory_service: Make) -> None:
    service = make_memory_service(
        config=MemoryBankConfig(retrieval=RetrievalConfig(text_search_language="klingon"))
    )
    with pytest.raises(InputValidationError, match="klingon"):
        await service.create_memory("The user speaks Klingon.", SCOPE)


HOSTILE = [
    r"C:\Users\ana\notes.txt",
    "it's O'Brien's",
    "a & b | !c <-> d:* (x)",
    "http://evil.example/a?b=c'd&e=\\f",
    "E'\\\\'",
    "日本語\\テスト",
]


@pytest.mark.parametrize("language", ["english", "auto"])
async def test_hostile_text_and_time_words_never_reach_another_user(
    make_memory_service: Make, language: str
) -> None:
    """Query syntax, quotes, paths and backslashes, in facts and in queries, next to words
    naming a time: every search is an ordinary search of the caller's own scope (BM25's term
    statistics, the time window and both floors are all scoped), never an error."""
    service = make_memory_service(
        embedder=HashEmbedder(64),
        config=MemoryBankConfig(retrieval=RetrievalConfig(text_search_language=language)),
    )
    other = {"app_name": "relevance", "user_id": "mallory"}
    for text in HOSTILE:
        await service.create_memory(f"note: {text}", SCOPE)
        await service.create_memory(f"secret: {text}", other)
    for text in [*HOSTILE, f"today {HOSTILE[0]}", "what did I write today?"]:
        found = await service.retrieve_memories(SCOPE, search_query=text, top_k=20)
        assert found, text
        assert all(r.memory.scope == SCOPE and r.memory.fact.startswith("note") for r in found)
