"""Scope isolation of PostgresMemoryService: a memory is only ever returned, changed or deleted
through its exact scope (same keys and values, any key order, case-sensitive), and deleting or
purging one scope leaves every other scope's memories and revisions as they were.

The property test replays random programs against the real database and a model (a dict of
memories and their revision histories). Scopes overlap on purpose: the same keys with values
differing only in case, a key more or less, a key differing only in case, and each is passed
with its keys in a random order. The service uses the HashEmbedder with the relevance floor
off, so vector search (which then returns every memory with an embedding, not just lexical
matches) takes part in retrieval and every retrieval must return the whole scope.

hypothesis + asyncio: pytest-asyncio runs `@given` on an async test on the session loop, so the
test uses only the session-scoped `engine` fixture and its own schema, emptied at the start of
every example (see tests/test_session_differential.py).
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.config import RetrievalConfig
from adk_memory.memory import MemoryAction
from adk_memory.testing import HashEmbedder

SCHEMA = "adk_memory_iso"

SCOPES: tuple[dict[str, str], ...] = (
    {"app_name": "app", "user_id": "u"},
    {"app_name": "app", "user_id": "U"},
    {"app_name": "App", "user_id": "u"},
    {"app_name": "app", "user_id": "u2"},
    {"app_name": "app", "user_id": "u", "agent": "x"},
    {"app_name": "app", "user_id": "u", "agent": "X"},
    {"app_name": "app"},
    {"user_id": "u"},
    {"App_name": "app", "user_id": "u"},
    {"app_name": "app", "user_id": "u", "topic": "t", "team": "a", "z": "é"},
)
# (app_name, user_id) pairs naming the ADK user scopes among SCOPES, and one that has none.
USERS = (("app", "u"), ("app", "U"), ("App", "u"), ("app", "u2"), ("app", "nobody"))
WORDS = ("jazz", "coffee", "window", "seats", "Lisbon", "cats")


def canonical(scope: dict[str, str]) -> str:
    return json.dumps(scope, sort_keys=True)


# ------------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class Create:
    scope: int
    order: tuple[int, ...]
    words: tuple[str, ...]


@dataclass(frozen=True)
class Retrieve:
    scope: int
    order: tuple[int, ...]
    query: str | None


@dataclass(frozen=True)
class ListScope:
    scope: int
    order: tuple[int, ...]


@dataclass(frozen=True)
class Get:
    own: bool  # through the memory's own scope (else through `scope`, usually another)
    memory: int  # index into the memories created so far (modulo)
    scope: int
    order: tuple[int, ...]


@dataclass(frozen=True)
class Update:
    own: bool  # through the memory's own scope (else through `scope`, usually another)
    memory: int
    scope: int
    order: tuple[int, ...]
    word: str


@dataclass(frozen=True)
class Delete:
    own: bool  # through the memory's own scope (else through `scope`, usually another)
    memory: int
    scope: int
    order: tuple[int, ...]
    adk_form: bool


@dataclass(frozen=True)
class DeleteUser:
    user: int


@dataclass(frozen=True)
class Purge:
    scope: int
    order: tuple[int, ...]


@dataclass(frozen=True)
class Search:
    user: int
    word: str


_scope = st.integers(0, len(SCOPES) - 1)
_order = st.permutations(range(5)).map(tuple)
_ref = st.integers(0, 50)
_word = st.sampled_from(WORDS)

_operation = st.one_of(
    st.builds(Create, _scope, _order, st.lists(_word, min_size=1, max_size=3).map(tuple)),
    st.builds(Create, _scope, _order, st.lists(_word, min_size=1, max_size=3).map(tuple)),
    st.builds(Retrieve, _scope, _order, st.none() | _word | st.just("jazz coffee cats")),
    st.builds(ListScope, _scope, _order),
    st.builds(Get, st.booleans(), _ref, _scope, _order),
    st.builds(Update, st.booleans(), _ref, _scope, _order, _word),
    st.builds(Delete, st.booleans(), _ref, _scope, _order, st.booleans()),
    st.builds(DeleteUser, st.integers(0, len(USERS) - 1)),
    st.builds(Purge, _scope, _order),
    st.builds(Search, st.integers(0, len(USERS) - 1), _word),
)


def ordered(index: int, order: tuple[int, ...]) -> dict[str, str]:
    """SCOPES[index] with its keys in the order `order` picks (a permutation of 0..4)."""
    items = list(SCOPES[index].items())
    ranked = sorted(range(len(items)), key=lambda i: order[i])
    return dict(items[i] for i in ranked)


def user_scope_index(user: int) -> int | None:
    app, user_id = USERS[user]
    wanted = {"app_name": app, "user_id": user_id}
    return next((i for i, s in enumerate(SCOPES) if s == wanted), None)


# ------------------------------------------------------------------------------------- model


@dataclass
class Model:
    facts: dict[str, str] = field(default_factory=dict)  # live memory id -> fact
    scope_of: dict[str, int] = field(default_factory=dict)  # every memory id ever -> scope
    history: dict[str, list[tuple[MemoryAction, str]]] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)

    def live_in(self, scope: int) -> dict[str, str]:
        return {i: f for i, f in self.facts.items() if self.scope_of[i] == scope}

    def delete(self, memory_id: str) -> None:
        fact = self.facts.pop(memory_id)
        self.history[memory_id].append((MemoryAction.DELETED, fact))


async def check_everything(service: PostgresMemoryService, model: Model) -> None:
    """Every scope lists exactly its own live memories; every memory's history is exactly its
    own, seen only through its own scope."""
    for index, scope in enumerate(SCOPES):
        page = await service.list_memories(scope, page_size=1000)
        assert {m.id: m.fact for m in page.memories} == model.live_in(index), scope
        assert all(m.scope == scope for m in page.memories)
    for memory_id in model.created:
        home = model.scope_of[memory_id]
        revisions = await service.list_revisions(memory_id, SCOPES[home])
        assert [(r.action, r.fact) for r in revisions] == model.history.get(memory_id, [])
        assert all(r.scope == SCOPES[home] for r in revisions)
    # A few foreign scopes never see another scope's history (checking all would be slow).
    for memory_id in model.created[:3]:
        for index, scope in enumerate(SCOPES):
            if index != model.scope_of[memory_id]:
                assert await service.list_revisions(memory_id, scope) == []


async def run(service: PostgresMemoryService, model: Model, op: object) -> None:
    if isinstance(op, Create):
        fact = " ".join(op.words)
        memory = await service.create_memory(fact, ordered(op.scope, op.order))
        assert memory.scope == SCOPES[op.scope]
        model.facts[memory.id] = fact
        model.scope_of[memory.id] = op.scope
        model.history[memory.id] = [(MemoryAction.CREATED, fact)]
        model.created.append(memory.id)
        return

    if isinstance(op, Retrieve):
        scope = ordered(op.scope, op.order)
        results = await service.retrieve_memories(scope, search_query=op.query, top_k=100)
        live = model.live_in(op.scope)
        assert {r.memory.id: r.memory.fact for r in results}.items() <= live.items()
        assert all(r.memory.scope == SCOPES[op.scope] for r in results)
        # Without a query: all of them; with one, the vector search (hybrid, no floor) brings
        # every memory of the scope too.
        assert {r.memory.id for r in results} == set(live)
        return

    if isinstance(op, ListScope):
        page = await service.list_memories(ordered(op.scope, op.order), page_size=1000)
        assert {m.id: m.fact for m in page.memories} == model.live_in(op.scope)
        return

    if isinstance(op, Search):
        app, user_id = USERS[op.user]
        response = await service.search_memory(app_name=app, user_id=user_id, query=op.word)
        home = user_scope_index(op.user)
        live = model.live_in(home) if home is not None else {}
        assert {e.id for e in response.memories} <= set(live)
        assert len(response.memories) == min(3, len(live))
        for entry in response.memories:
            assert entry.custom_metadata["scope"] == {"app_name": app, "user_id": user_id}
        return

    if isinstance(op, DeleteUser):
        # ADK's delete without an id: deletes nothing, whoever asks ("None" never means "all").
        app, user_id = USERS[op.user]
        await service.delete_memory(app_name=app, user_id=user_id)
        return

    if isinstance(op, Purge):
        await service.purge(ordered(op.scope, op.order))
        for memory_id, scope in model.scope_of.items():
            if scope == op.scope:
                model.facts.pop(memory_id, None)
                model.history.pop(memory_id, None)
        return

    assert isinstance(op, (Get, Update, Delete)), op
    if not model.created:
        return
    memory_id = model.created[op.memory % len(model.created)]
    index = model.scope_of[memory_id] if op.own else op.scope
    scope = ordered(index, op.order)
    own_scope, live = model.scope_of[memory_id] == index, memory_id in model.facts
    mine = own_scope and live
    event(
        f"{type(op).__name__} through {'its own' if own_scope else 'another'} scope"
        f" ({'live' if live else 'deleted or purged'})"
    )

    if isinstance(op, Get):
        memory = await service.get_memory(memory_id, scope)
        if mine:
            assert memory is not None and memory.fact == model.facts[memory_id]
        else:
            assert memory is None
    elif isinstance(op, Update):
        fact = f"{op.word} updated"
        if mine:
            memory = await service.update_memory(memory_id, scope, fact=fact)
            assert memory.fact == fact and memory.scope == SCOPES[index]
            model.facts[memory_id] = fact
            model.history[memory_id].append((MemoryAction.UPDATED, fact))
        else:
            with pytest.raises(LookupError):
                await service.update_memory(memory_id, scope, fact=fact)
    else:
        is_user_scope = set(scope) == {"app_name", "user_id"}
        if op.adk_form and is_user_scope:
            await service.delete_memory(
                app_name=scope["app_name"], user_id=scope["user_id"], memory_id=memory_id
            )
        else:
            await service.delete_memory(scope=scope, memory_id=memory_id)
        if mine:
            model.delete(memory_id)


EXAMPLES = int(os.environ.get("ADK_MEMORY_ISO_EXAMPLES", "40"))


@pytest.fixture(scope="session")
async def isolation_service(engine: AsyncEngine) -> PostgresMemoryService:
    service = PostgresMemoryService(
        engine=engine,
        schema=SCHEMA,
        embedder=HashEmbedder(64),
        config=MemoryBankConfig(retrieval=RetrievalConfig(min_similarity=-1)),
    )
    await service.list_memories(page_size=1)  # migrate and fix the vector dimension
    return service


async def empty(service: PostgresMemoryService) -> None:
    await service.database.run(
        lambda conn: conn.execute(f"TRUNCATE {SCHEMA}.memories, {SCHEMA}.memory_revisions")
    )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=st.lists(_operation, min_size=1, max_size=25))
async def test_memories_are_reached_only_through_their_exact_scope(
    isolation_service: PostgresMemoryService, program: list[object]
):
    service = isolation_service
    await empty(service)
    model = Model()
    for op in program:
        await run(service, model, op)
        if isinstance(op, (Delete, DeleteUser, Purge)):
            await check_everything(service, model)
    await check_everything(service, model)


async def test_another_user_with_the_id_can_neither_read_change_nor_delete(
    isolation_service: PostgresMemoryService,
):
    service = isolation_service
    await empty(service)
    alice = {"app_name": "app", "user_id": "alice"}
    bob = {"app_name": "app", "user_id": "bob"}
    memory = await service.create_memory("alice's secret: the cake recipe", alice)

    assert await service.get_memory(memory.id, bob) is None
    with pytest.raises(LookupError):
        await service.update_memory(memory.id, bob, fact="bob was here")
    await service.delete_memory(app_name="app", user_id="bob", memory_id=memory.id)
    await service.delete_memory(scope=bob, memory_id=memory.id)
    await service.delete_memory(app_name="app", user_id="bob")
    assert await service.purge(bob) == 0
    assert await service.list_revisions(memory.id, bob) == []
    bob_search = await service.search_memory(app_name="app", user_id="bob", query="cake recipe")
    assert bob_search.memories == []
    assert await service.retrieve_memories(bob, search_query="secret cake") == []

    assert await service.get_memory(memory.id, alice) == memory
    assert [r.action for r in await service.list_revisions(memory.id, alice)] == [
        MemoryAction.CREATED
    ]
    found = await service.search_memory(app_name="app", user_id="alice", query="cake recipe")
    assert [e.id for e in found.memories] == [memory.id]
    bobs = await service.create_memory("bob likes pie", bob)
    assert bobs.id != memory.id and uuid.UUID(bobs.id)
    assert await service.get_memory(bobs.id, alice) is None
