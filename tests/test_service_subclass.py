"""A subclass of PostgresMemoryService: its overrides are what the service's other methods call.

Before the service became a face over components, it was one class, so `search_memory` ranked
through `self.retrieve_memories`, ADK's add_* calls enqueued through `self.generate_memories`
and every write asked `self.is_opted_out`: a user's subclass overriding one of them (to log,
filter or rerank) changed what ADK's tools saw. These tests keep that true.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import TEST_SCHEMA
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types
from sqlalchemy.ext.asyncio import AsyncEngine

from adk_memory import PostgresMemoryService
from adk_memory.memory import GenerateMemoriesOperation, RetrievedMemory
from adk_memory.testing import ScriptedLlm


class Recording(PostgresMemoryService):
    """Overrides that record their calls, then do what the service does."""

    calls: list[str]

    async def retrieve_memories(self, *args: Any, **kwargs: Any) -> list[RetrievedMemory]:
        self.calls.append("retrieve_memories")
        return await super().retrieve_memories(*args, **kwargs)

    async def generate_memories(self, **kwargs: Any) -> GenerateMemoriesOperation:
        self.calls.append("generate_memories")
        return await super().generate_memories(**kwargs)

    async def is_opted_out(self, *args: Any, **kwargs: Any) -> bool:
        self.calls.append("is_opted_out")
        return await super().is_opted_out(*args, **kwargs)


class SkipsAgentEvents(PostgresMemoryService):
    """An override that filters what is remembered: the agent's events are left out."""

    async def add_events_to_memory(self, *, events: Any, **kwargs: Any) -> None:
        kept = [e for e in events if e.author == "user"]
        await super().add_events_to_memory(events=kept, **kwargs)


def said(text: str) -> Event:
    return Event(
        author="user",
        invocation_id="turn",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


def entry(text: str) -> MemoryEntry:
    return MemoryEntry(content=types.Content(parts=[types.Part(text=text)]))


async def test_adk_calls_reach_a_subclass_overrides(
    make_memory_service: Callable[..., PostgresMemoryService], engine: AsyncEngine
) -> None:
    service = Recording(engine=engine, schema=TEST_SCHEMA)
    service.calls = []
    await service.add_memory(app_name="a", user_id="u", memories=[entry("likes green tea")])
    assert service.calls == ["is_opted_out"]

    service.calls = []
    found = await service.search_memory(app_name="a", user_id="u", query="tea")
    assert service.calls == ["retrieve_memories"]
    assert [m.content.parts[0].text for m in found.memories if m.content.parts] == [
        "likes green tea"
    ]

    service.calls = []
    await service.retrieve_procedures("a", "u", search_query="tea")
    assert service.calls == ["retrieve_memories", "retrieve_memories"]


async def test_generation_from_adk_goes_through_an_overridden_generate_memories(
    make_memory_service: Callable[..., PostgresMemoryService], engine: AsyncEngine
) -> None:
    service = Recording(engine=engine, schema=TEST_SCHEMA, llm=ScriptedLlm([]), run_worker=False)
    session = Session(id="s1", app_name="a", user_id="u", events=[said("I like tea")])
    service.calls = []
    await service.add_session_to_memory(session)
    assert service.calls == ["generate_memories", "is_opted_out"]

    service.calls = []
    await service.add_events_to_memory(app_name="a", user_id="u", events=[said("and jam")])
    assert service.calls == ["is_opted_out", "generate_memories", "is_opted_out"]

    service.calls = []
    await service.add_memory(
        app_name="a",
        user_id="u",
        memories=[entry("likes coffee")],
        custom_metadata={"consolidate": True},
    )
    assert service.calls == ["is_opted_out", "generate_memories", "is_opted_out"]


async def test_an_override_calling_super_does_not_reenter_itself(
    make_memory_service: Callable[..., PostgresMemoryService], engine: AsyncEngine
) -> None:
    """The override is set on the component; the delegate must still reach the real method."""
    service = Recording(engine=engine, schema=TEST_SCHEMA)
    service.calls = []
    scope = {"app_name": "a", "user_id": "u"}
    assert await service.retrieve_memories(scope, search_query="x") == []
    assert service.calls == ["retrieve_memories"]


async def test_a_raw_session_goes_through_an_overridden_add_events_to_memory(
    make_memory_service: Callable[..., PostgresMemoryService], engine: AsyncEngine
) -> None:
    """Without a model, ADK's `add_session_to_memory` remembers the session's events through
    `add_events_to_memory`, as it always did: an override filtering them is obeyed."""
    service = SkipsAgentEvents(engine=engine, schema=TEST_SCHEMA)
    agent = said("Noted: you like tea.").model_copy(update={"author": "agent"})
    session = Session(id="s1", app_name="a", user_id="u", events=[said("I like tea"), agent])
    await service.add_session_to_memory(session)
    page = await service.list_memories({"app_name": "a", "user_id": "u"})
    assert [m.fact for m in page.memories] == ["I like tea"]


def test_the_plain_service_routes_nothing(
    make_memory_service: Callable[..., PostgresMemoryService],
) -> None:
    service = make_memory_service()
    assert "retrieve_memories" not in vars(service.retrieval)
    assert "is_opted_out" not in vars(service.consent)
