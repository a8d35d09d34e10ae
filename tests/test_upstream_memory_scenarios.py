"""ADK's own in-memory memory-service scenarios (google/adk-python
`tests/unittests/memory/test_in_memory_memory_service.py`), written anew for
`PostgresMemoryService` in its default raw-events mode (no model: `add_session_to_memory`, then
`search_memory`), once with full-text search alone and once with the `HashEmbedder` too.

Upstream checks its service's private dictionaries; here each scenario is checked by what a
caller sees through ADK's API: what a search returns. The scenarios that expect *no* result
need the relevance floor when an embedder takes part (nearest-neighbour search alone always
returns the user's nearest memories): the embedder's calibrated similarity floor keeps them out.
"""

from __future__ import annotations

import asyncio
import unicodedata
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.sessions.session import Session
from google.genai import types

from adk_memory import PostgresMemoryService
from adk_memory.testing import HashEmbedder

APP = "scenario-app"
USER = "ana"
OTHER_USER = "bruno"


def event(tag: str, text: str | None, author: str = "user") -> Event:
    content = types.Content(parts=[types.Part(text=text)]) if text is not None else None
    return Event(id=f"ev-{tag}", invocation_id=f"inv-{tag}", author=author, content=content)


def session(tag: str, *events: Event, user: str = USER, app: str = APP) -> Session:
    return Session(app_name=app, user_id=user, id=f"s-{tag}", events=list(events))


TOOLKIT = session(
    "toolkit",
    event("praise", "Our team thinks the ADK is an excellent framework."),
    event("empty", None),  # no content: nothing to remember
    event("reply", "Indeed, the Agent Development Kit (ADK) is wonderful!", author="model"),
)
LANGUAGE = session("language", event("lang", "My favourite language to code in is Python."))
SECRET = session("secret", event("secret", "The vault combination is a secret."), user=OTHER_USER)


@pytest.fixture(params=["full-text", "embedder"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def memory(make_memory_service: Any, mode: str) -> PostgresMemoryService:
    if mode == "embedder":
        return make_memory_service(embedder=HashEmbedder(64))
    return make_memory_service()


async def texts(memory: PostgresMemoryService, query: str, user: str = USER) -> list[str]:
    found = await memory.search_memory(app_name=APP, user_id=user, query=query)
    return [part.text or "" for m in found.memories for part in (m.content.parts or [])]


async def finds(memory: PostgresMemoryService, query: str, expected: list[str]) -> None:
    """Full-text alone finds exactly `expected` (best first); with the embedder they come first,
    and the rest of the top k are the nearest of the user's other memories."""
    found = await texts(memory, query)
    if memory.embedder is not None:
        found = found[: len(expected)]
    assert found == expected


BOTH_ADK = sorted(
    [
        "Our team thinks the ADK is an excellent framework.",
        "Indeed, the Agent Development Kit (ADK) is wonderful!",
    ]
)


async def test_a_session_is_remembered_without_its_empty_events(memory):
    await memory.add_session_to_memory(TOOLKIT)
    assert sorted(await texts(memory, "ADK")) == BOTH_ADK  # 2 of 3 events: one had no content


async def test_explicit_events_are_remembered(memory):
    await memory.add_events_to_memory(
        app_name=APP, user_id=USER, session_id="s-toolkit", events=TOOLKIT.events[:1]
    )
    await finds(memory, "framework", ["Our team thinks the ADK is an excellent framework."])
    assert "Indeed, the Agent Development Kit (ADK) is wonderful!" not in await texts(
        memory, "wonderful"
    )


async def test_events_without_a_session_id_are_remembered(memory):
    await memory.add_events_to_memory(app_name=APP, user_id=USER, events=TOOLKIT.events[:1])
    await finds(
        memory, "excellent framework", ["Our team thinks the ADK is an excellent framework."]
    )


async def test_events_added_later_join_the_session(memory):
    await memory.add_session_to_memory(TOOLKIT)
    await memory.add_events_to_memory(
        app_name=APP, user_id=USER, session_id="s-toolkit", events=[event("new", "A fresh fact.")]
    )
    await finds(memory, "fresh fact", ["A fresh fact."])
    assert sorted((await texts(memory, "ADK"))[:2]) == BOTH_ADK


async def test_an_event_id_is_remembered_once(memory):
    await memory.add_session_to_memory(TOOLKIT)
    again = event("praise", "Changed text under an event id already remembered.")
    await memory.add_events_to_memory(
        app_name=APP, user_id=USER, session_id="s-toolkit", events=[again]
    )
    assert not any("Changed" in t for t in await texts(memory, "changed text remembered"))
    assert sorted(await texts(memory, "ADK")) == BOTH_ADK


async def test_a_session_without_events_is_accepted(memory):
    await memory.add_session_to_memory(session("empty"))
    assert await texts(memory, "anything") == []


async def test_a_keyword_finds_its_event(memory):
    await memory.add_session_to_memory(TOOLKIT)
    await memory.add_session_to_memory(LANGUAGE)
    await finds(memory, "Python", ["My favourite language to code in is Python."])
    found = await memory.search_memory(app_name=APP, user_id=USER, query="Python")
    assert found.memories[0].author == "user"


async def test_search_ignores_case(memory):
    await memory.add_session_to_memory(TOOLKIT)
    await finds(memory, "DEVELOPMENT", ["Indeed, the Agent Development Kit (ADK) is wonderful!"])


async def test_one_query_finds_several_events(memory):
    await memory.add_session_to_memory(TOOLKIT)
    assert sorted((await texts(memory, "What about the ADK?"))[:2]) == BOTH_ADK


async def test_an_unknown_word_finds_nothing(memory):
    await memory.add_session_to_memory(TOOLKIT)
    assert await texts(memory, "nonexistent") == []


async def test_search_is_scoped_to_the_user(memory):
    await memory.add_session_to_memory(TOOLKIT)
    await memory.add_session_to_memory(SECRET)
    assert "The vault combination is a secret." not in await texts(memory, "secret")
    assert await texts(memory, "secret", user=OTHER_USER) == ["The vault combination is a secret."]


async def test_a_slash_in_an_identifier_reaches_no_other_scope(memory):
    await memory.add_session_to_memory(
        session("slash", event("slash", "The vault combination is a secret."), app="app/bruno")
    )
    found = await memory.search_memory(app_name="app", user_id="bruno/ana", query="secret")
    assert found.memories == []


CAFE_JA = unicodedata.normalize("NFD", "私はCaféでADKを使っています")


@pytest.mark.parametrize(
    ("stored", "query", "found"),
    [
        # Japanese and Chinese: no spaces between words
        ("私の名前は太郎です", "太郎", True),
        ("私の名前は太郎です", "天気", False),
        ("我喜欢机器学习", "机器学习", True),
        ("我喜欢机器学习", "天气预报", False),
        # Korean and Russian: spaced words
        ("제 이름은 민수입니다", "민수입니다", True),
        ("Меня зовут Алексей", "Алексей", True),
        # one event in two scripts
        ("太郎 works at ABC Corp", "太郎", True),
        ("太郎 works at ABC Corp", "ABC", True),
        # Latin words inside unspaced text
        ("私はPythonでADKを使っています", "Python", True),
        ("私はPythonでADKを使っています", "adk", True),
        ("我用Python写代码", "python", True),
        ("私はPythonでADKを使っています", "使って", True),
        ("私はPythonでADKを使っています", "Java", False),
        # part of a Latin word is no match
        ("I like to code in Python.", "thon", False),
        ("私はPythonでADKを使っています", "thon", False),
        # decomposed accents (NFD) meet composed ones
        (CAFE_JA, "Café", True),
        (CAFE_JA, "café", True),
        (CAFE_JA, "Ruby", False),
        (unicodedata.normalize("NFD", "Meet at the Café"), "Café", True),
        ("Meet at the Café", unicodedata.normalize("NFD", "Café"), True),
        (unicodedata.normalize("NFD", "プログラミングを学ぶ"), "プログラミング", True),
        (unicodedata.normalize("NFD", "제 이름은 민수입니다"), "민수입니다", True),
    ],
)
async def test_search_in_every_script(memory, stored, query, found):
    await memory.add_session_to_memory(session("i18n", event("i18n", stored)))
    assert len(await texts(memory, query)) == (1 if found else 0)


async def test_more_matching_words_rank_first(memory):
    await memory.add_session_to_memory(
        session(
            "ranked",
            event("a", "The build is green."),
            event("b", "Green."),
            event("c", "The build pipeline is green."),
        )
    )
    await finds(
        memory,
        "build pipeline green",
        ["The build pipeline is green.", "The build is green.", "Green."],
    )


async def test_a_common_word_cannot_return_the_whole_store(memory):
    events = [event(f"n{i}", f"memo {i} about chores") for i in range(20)]
    events.append(event("best", "the grocery memo about chores"))
    await memory.add_session_to_memory(session("many", *events))
    found = await texts(memory, "chores grocery memo")
    assert found[0] == "the grocery memo about chores"
    assert len(found) == memory.config.retrieval.top_k < 21


async def test_searches_run_while_sessions_are_added(memory):
    """Upstream's thread-safety scenario, on one event loop: searches interleaved with writes
    neither fail nor see a half-written memory."""
    sessions = [session(f"c{i}", event(f"c{i}", f"fact about topic {i}")) for i in range(20)]
    writes = [memory.add_session_to_memory(s) for s in sessions]
    reads = [texts(memory, "fact") for _ in range(20)]
    results = await asyncio.gather(*writes, *reads)
    for found in results[20:]:
        assert all(t.startswith("fact about topic ") for t in found)
    assert len(await texts(memory, "fact")) == memory.config.retrieval.top_k


@pytest.mark.parametrize("whole_session", [True, False])
async def test_a_remembered_event_does_not_follow_later_edits(memory, whole_session):
    tea = event("tea", "I prefer jasmine tea.")
    tea_session = session("tea", tea)
    if whole_session:
        await memory.add_session_to_memory(tea_session)
    else:
        await memory.add_events_to_memory(
            app_name=APP, user_id=USER, session_id=tea_session.id, events=tea_session.events
        )
    tea.author = "someone else"
    tea.content.parts[0].text = "I prefer coffee."
    found = await memory.search_memory(app_name=APP, user_id=USER, query="jasmine")
    assert [(m.author, m.content.parts[0].text) for m in found.memories] == [
        ("user", "I prefer jasmine tea.")
    ]


@pytest.mark.parametrize("whole_session", [True, False])
async def test_editing_a_result_changes_nothing_stored(memory, whole_session):
    tea_session = session("tea", event("tea", "I prefer jasmine tea."))
    if whole_session:
        await memory.add_session_to_memory(tea_session)
    else:
        await memory.add_events_to_memory(
            app_name=APP, user_id=USER, session_id=tea_session.id, events=tea_session.events
        )
    first = await memory.search_memory(app_name=APP, user_id=USER, query="jasmine")
    first.memories[0].content.parts.clear()
    assert await texts(memory, "jasmine") == ["I prefer jasmine tea."]
    assert tea_session.events[0].content.parts[0].text == "I prefer jasmine tea."
