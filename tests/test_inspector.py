"""The memory inspector's pages and forms, through FastAPI on the real database (issue 16).

The router is mounted on a bare FastAPI app and driven with httpx in the test's own event loop
(the services' pools belong to it). The only double is the scripted generation model. Every
value a page shows is escaped; writes are refused unless enabled, need the form token and the
inspector's own origin, and name the user they act on, so no form reaches another user's data.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import httpx
import pytest
from conftest import TEST_SCHEMA, generic_plan
from fastapi import FastAPI, Header, HTTPException
from fastapi.params import Depends
from google.adk.events.event import Event
from google.adk.sessions.session import Session
from google.genai import errors, types

from adk_memory import PostgresMemoryService
from adk_memory.adk.inspector import inspector_router
from adk_memory.config import (
    CustomizationConfig,
    GenerationConfig,
    MemoryBankConfig,
    StructuredMemoryConfig,
    StructuredMemorySchemaConfig,
)
from adk_memory.db import rls
from adk_memory.errors import InputValidationError
from adk_memory.memory.guard import GuardAction, GuardVerdict
from adk_memory.memory.jobs.queue import _OF_SCOPE
from adk_memory.memory.scope import user_scope
from adk_memory.memory.store.reads import _QUARANTINED, _SCOPES
from adk_memory.testing import ScriptedLlm

APP = "shop"
ALICE = user_scope(APP, "alice")
BOB = user_scope(APP, "bob")
HOSTILE = "<script>alert('pwned')</script>"
BASE = "http://testserver"


class QuarantineMarked:
    """Quarantines facts that say HOLD."""

    async def check(self, fact: str, *, scope: Mapping[str, str], source: str) -> GuardVerdict:
        if "HOLD" in fact:
            return GuardVerdict(GuardAction.QUARANTINE, reason="held <for> review", rule="test")
        return GuardVerdict(GuardAction.ALLOW)


def refused_by_the_model() -> errors.APIError:
    body = {"error": {"code": 403, "message": "Permission denied.", "status": "PERMISSION_DENIED"}}
    return errors.ClientError(403, body)


def extraction(*facts: str) -> str:
    return json.dumps(
        {"facts": [{"fact": f, "topic": "USER_PREFERENCES", "forget": False} for f in facts]}
    )


def conversation(session_id: str, user: str) -> Session:
    said = Event(
        author="user",
        invocation_id=f"inv-{session_id}",
        timestamp=1.0,
        content=types.Content(role="user", parts=[types.Part(text="I like green tea.")]),
    )
    return Session(id=session_id, app_name=APP, user_id=user, events=[said])


@pytest.fixture
def service(make_memory_service: Callable[..., PostgresMemoryService]) -> PostgresMemoryService:
    config = MemoryBankConfig(generation=GenerationConfig(max_attempts=1))
    llm = ScriptedLlm([refused_by_the_model(), extraction("The user likes green tea.")])
    return make_memory_service(llm=llm, run_worker=False, guard=QuarantineMarked(), config=config)


@pytest.fixture
async def browse(
    service: PostgresMemoryService, session_service: Any
) -> AsyncIterator[Callable[..., httpx.AsyncClient]]:
    """An HTTP client on an app with the inspector mounted (`writable`, `dependencies`...)."""
    clients: list[httpx.AsyncClient] = []

    def make(**options: Any) -> httpx.AsyncClient:
        app = FastAPI()
        options.setdefault("session_service", session_service)
        app.include_router(inspector_router(service, **options))
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


def token_of(page: str) -> str:
    found = re.search(r"name='token' value='([^']+)'", page)
    assert found, "the page has no write form"
    return found.group(1)


async def get(client: httpx.AsyncClient, path: str, **query: str) -> httpx.Response:
    return await client.get(f"/memory-inspector{path}", params=query)


async def post(
    client: httpx.AsyncClient,
    path: str,
    token: str,
    headers: dict[str, str] | None = None,
    **fields: str,
) -> httpx.Response:
    return await client.post(
        f"/memory-inspector{path}",
        data={**fields, "token": token},
        headers={"origin": BASE, "sec-fetch-site": "same-origin", **(headers or {})},
    )


async def user_page(client: httpx.AsyncClient, user: str = "alice", **query: str) -> str:
    response = await client.get(
        "/memory-inspector/user", params={"app": APP, "user": user, **query}
    )
    assert response.status_code == 200, response.text
    return response.text


async def dead_generation(service: PostgresMemoryService, user: str) -> str:
    operation = await service.generate_memories(session=conversation(f"s-{user}", user))
    await service.worker.run_until_idle()
    [dead] = await service.dead_letters()
    assert dead.id == operation.id
    return operation.id


# ------------------------------------------------------------------------------------ pages


async def test_pages_show_a_users_memories_their_revisions_and_search_scores(service, browse):
    client = browse()
    memory = await service.create_memory(
        "Likes tea with lemon", ALICE, topics=["USER_PREFERENCES"], confidence=0.75
    )
    await service.update_memory(memory.id, ALICE, fact="Likes tea with honey")
    await service.create_memory("Bob's own fact", BOB)

    home = (await client.get("/memory-inspector/")).text
    assert "/memory-inspector/user?app=shop&amp;user=alice" in home
    assert "/memory-inspector/user?app=shop&amp;user=bob" in home
    assert (await client.get("/memory-inspector")).status_code == 307

    page = await user_page(client)
    assert "Likes tea with honey" in page and "USER_PREFERENCES" in page and "0.750" in page
    assert "bootstrapped" in page and "never" in page  # source, TTL
    assert "Bob&#x27;s own fact" not in page and "Structured profiles" not in page

    history = await client.get(
        "/memory-inspector/memory", params={"app": APP, "user": "alice", "id": memory.id}
    )
    assert history.status_code == 200
    timeline = history.text.split("Revision timeline")[1]
    assert timeline.index("CREATED") < timeline.index("UPDATED")
    assert "<del>Likes tea with lemon</del><br><ins>Likes tea with honey</ins>" in timeline

    found = await user_page(client, q="honey")
    results = found.split("Search results")[1].split("<h2>")[0]
    assert "Likes tea with honey" in results
    [score] = re.findall(r"<td>(\d\.\d{3})</td><td>-</td><td>Likes tea", results)
    assert float(score) > 0
    # The home page goes straight to a user picked by name.
    picked = await client.get("/memory-inspector/", params={"app": APP, "user": "alice"})
    assert picked.status_code == 303
    assert picked.headers["location"].endswith("/memory-inspector/user?app=shop&user=alice")


async def test_every_value_is_escaped(service, browse):
    client = browse(writable=True)
    hostile_user = "\"'><img src=x onerror=alert(1)>"
    scope = user_scope(APP, hostile_user)
    memory = await service.create_memory(HOSTILE, scope, topics=["<b>topic</b>"])
    await service.create_memory(f"HOLD {HOSTILE}", scope)

    pages = [
        (await get(client, "/")).text,
        await user_page(client, hostile_user, q=HOSTILE, note=HOSTILE),
        (await get(client, "/memory", app=APP, user=hostile_user, id=memory.id)).text,
        (await get(client, "/erase", app=APP, user=hostile_user)).text,
    ]
    for page in pages:
        assert "<script>" not in page and "<img" not in page and "<b>topic" not in page
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in pages[1]
    assert "held &lt;for&gt; review" in pages[1]
    # A note is one of the fixed outcomes, never text from the link.
    assert "pwned&#x27;)&lt;/script&gt;</p>" not in pages[1].split("<form")[0]


async def test_bad_input_is_a_400_page_and_changes_nothing(service, browse):
    client = browse(writable=True)
    assert (await get(client, "/user", app="", user="a")).status_code == 400
    bad_id = await client.get(
        "/memory-inspector/memory", params={"app": APP, "user": "alice", "id": "not-an-id"}
    )
    assert bad_id.status_code == 400 and "Not a memory id" in bad_id.text
    assert (await client.get("/memory-inspector/", params={"after": "{"})).status_code == 400
    confirm = await client.get("/memory-inspector/erase", params={"app": APP, "user": "alice"})
    token = token_of(confirm.text)
    held = await service.create_memory("HOLD this", ALICE)
    refused = await post(client, "/quarantine/approve", token, app=APP, user="alice", id="x")
    assert refused.status_code == 400
    assert [q.memory.id for q in await service.list_quarantined(ALICE)] == [held.id]


async def test_a_deeply_nested_or_huge_scope_is_a_400(service, browse):
    client = browse(writable=True)
    token = token_of((await get(client, "/erase", app=APP, user="alice")).text)
    for scope in ("[" * 10_000, '{"a":' * 2_000 + "1" + "}" * 2_000, "x" * 50_000):
        page = await get(client, "/user", app=APP, user="alice", scope=scope)
        assert page.status_code == 400 and "Not a scope" in page.text
    form = await post(
        client,
        "/quarantine/reject",
        token,
        app=APP,
        user="alice",
        id=str(uuid.uuid4()),
        scope="[" * 5_000,
    )
    assert form.status_code == 400 and "Not a scope" in form.text


async def test_a_chunked_body_is_refused_past_the_cap_before_it_is_read_whole(service, browse):
    """A body without a declared length (chunked) is counted as it arrives: past the form cap
    the write is refused with 413, and the rest is never read (the server holds at most the
    cap and one chunk), however much is sent; nothing is changed."""
    client = browse(writable=True)
    held = await service.create_memory("HOLD me", ALICE)
    token = token_of(await user_page(client))
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        first = f"token={token}&app={APP}&user=alice&id={held.id}&padding="
        yield first.encode()
        for _ in range(10_000):  # 640 MB if read whole
            sent += 1
            yield b"x" * 65_536

    response = await client.post(
        "/memory-inspector/quarantine/approve",
        content=endless(),
        headers={
            "origin": BASE,
            "sec-fetch-site": "same-origin",
            "content-type": "application/x-www-form-urlencoded",
        },
    )
    assert response.status_code == 413 and "too large" in response.text
    assert sent <= 2, sent
    assert [q.memory.id for q in await service.list_quarantined(ALICE)] == [held.id]


# ------------------------------------------------------------------------------------ writes


async def test_a_read_only_inspector_shows_no_forms_and_refuses_every_write(service, browse):
    client = browse()  # writable=False: the default
    held = await service.create_memory("HOLD me", ALICE)
    page = await user_page(client)
    assert "HOLD me" in page and "method=post" not in page and "Erase" not in page
    assert (await get(client, "/erase", app=APP, user="alice")).status_code == 403
    for path in ("/quarantine/approve", "/quarantine/reject", "/operations/retry", "/erase"):
        response = await post(
            client, path, "guess", app=APP, user="alice", id=held.id, confirm="alice"
        )
        assert response.status_code == 403 and "read-only" in response.text
    assert [q.memory.id for q in await service.list_quarantined(ALICE)] == [held.id]


async def test_a_write_needs_the_form_token_and_the_inspectors_own_origin(service, browse):
    client = browse(writable=True)
    held = await service.create_memory("HOLD me", ALICE)
    token = token_of(await user_page(client))
    fields = {"app": APP, "user": "alice", "id": held.id}
    for bad_token, headers in [
        ("", {}),
        ("wrong", {}),
        ("é" * 43, {}),  # not ASCII: compared as bytes, refused like any other
        (token, {"origin": "https://evil.example"}),
        (token, {"sec-fetch-site": "cross-site"}),
        (token, {"origin": "null"}),  # what a browser sends from a sandboxed or opaque page
    ]:
        response = await post(client, "/quarantine/approve", bad_token, headers, **fields)
        assert response.status_code == 403, (bad_token, headers)
    too_big = await post(client, "/quarantine/approve", token, padding="x" * 20_000, **fields)
    assert too_big.status_code == 413
    assert [q.memory.id for q in await service.list_quarantined(ALICE)] == [held.id]
    # Another router (another process) has its own token, unless both are given one.
    assert token_of(await user_page(browse(writable=True))) != token
    assert token_of(await user_page(browse(writable=True, token="shared"))) == "shared"

    approved = await post(client, "/quarantine/approve", token, **fields)
    assert approved.status_code == 303
    assert approved.headers["location"].endswith("user?app=shop&user=alice&note=approved")
    assert (await service.get_memory(held.id, ALICE)).fact == "HOLD me"
    assert "Approved: the memory is live." in await user_page(client, note="approved")


async def test_approve_reject_retry_and_erase_through_the_forms(service, browse):
    client = browse(writable=True)
    approved = await service.create_memory("HOLD approve me", ALICE)
    rejected = await service.create_memory("HOLD reject me", ALICE)
    operation = await dead_generation(service, "alice")
    page = await user_page(client)
    assert "Permission denied." in page and "dead" in page and "Retry" in page
    token = token_of(page)
    fields = {"app": APP, "user": "alice"}

    approve = await post(client, "/quarantine/approve", token, id=approved.id, **fields)
    assert approve.status_code == 303
    reject = await post(client, "/quarantine/reject", token, id=rejected.id, **fields)
    assert reject.headers["location"].endswith("note=rejected")
    assert await service.list_quarantined(ALICE) == []
    assert await service.get_memory(approved.id, ALICE) is not None
    again = await post(client, "/quarantine/reject", token, id=rejected.id, **fields)
    assert again.headers["location"].endswith("note=not-found")

    retried = await post(client, "/operations/retry", token, id=operation, **fields)
    assert retried.headers["location"].endswith("note=retried")
    await service.worker.run_until_idle()
    assert (await service.get_operation(operation, ALICE)).error is None
    page = await user_page(client)
    assert "The user likes green tea." in page and "Retry" not in page

    confirm = await client.get("/memory-inspector/erase", params=fields)
    assert "Type the user id to confirm" in confirm.text
    not_confirmed = await post(client, "/erase", token, confirm="alic", **fields)
    assert not_confirmed.status_code == 400
    assert (await service.list_memories(ALICE)).memories
    erased = await post(client, "/erase", token, confirm="alice", **fields)
    assert erased.status_code == 200 and "Erased" in erased.text
    assert re.search(r"<td>memories</td><td>2</td>", erased.text)
    assert (await service.list_memories(ALICE)).memories == []
    assert await service.list_operations(ALICE) == []


async def test_no_erase_button_without_a_session_service(service, browse):
    client = browse(writable=True, session_service=None)
    await service.create_memory("A fact", ALICE)
    page = await user_page(client)
    assert "Erase this user" not in page
    assert (await get(client, "/erase", app=APP, user="alice")).status_code == 403


async def test_one_user_never_reaches_anothers_data_through_the_inspector(service, browse):
    client = browse(writable=True)
    await service.create_memory("Alice's fact", ALICE)
    bobs = await service.create_memory("Bob likes jazz", BOB)
    bobs_held = await service.create_memory("HOLD Bob's secret", BOB)
    bobs_dead = await dead_generation(service, "bob")

    page = await user_page(client, q="jazz")
    assert "Bob" not in page and bobs_dead not in page and "Alice&#x27;s fact" in page
    history = await client.get(
        "/memory-inspector/memory", params={"app": APP, "user": "alice", "id": bobs.id}
    )
    assert "Bob likes jazz" not in history.text and "No revisions" in history.text

    alice = {"app": APP, "user": "alice"}
    token = token_of((await client.get("/memory-inspector/erase", params=alice)).text)
    for path, memory_id in [
        ("/quarantine/approve", bobs_held.id),
        ("/quarantine/reject", bobs_held.id),
        ("/operations/retry", bobs_dead),
    ]:
        response = await post(client, path, token, id=memory_id, **alice)
        assert response.headers["location"].endswith("note=not-found"), path
    assert [q.memory.id for q in await service.list_quarantined(BOB)] == [bobs_held.id]
    assert [d.id for d in await service.dead_letters()] == [bobs_dead]

    await post(client, "/erase", token, confirm="alice", **alice)
    assert [m.id for m in (await service.list_memories(BOB)).memories] == [bobs.id]
    assert [o.id for o in await service.list_operations(BOB)] == [bobs_dead]


async def test_a_users_structured_profiles_are_shown_escaped(make_memory_service):
    """A profile filled by a real (profiles-only) generation is on the user's page, its values
    escaped; a user without one gets no profile section."""
    schema = StructuredMemorySchemaConfig(
        id="travel",
        json_schema={
            "type": "object",
            "properties": {"seat": {"type": "string"}, "meals": {"type": "array"}},
        },
    )
    config = MemoryBankConfig(
        structured_memory_configs=(StructuredMemoryConfig(schema_configs=(schema,)),),
        customization_configs=(CustomizationConfig(disable_natural_language_memories=True),),
        generation=GenerationConfig(max_attempts=1),
    )
    answer = {
        "updates": [
            {"schema_id": "travel", "field": "seat", "value_json": json.dumps("<b>window</b>")},
            {"schema_id": "travel", "field": "meals", "value_json": json.dumps(["veg"])},
        ]
    }
    profiled = make_memory_service(
        llm=ScriptedLlm([json.dumps(answer)]), run_worker=False, config=config
    )
    await profiled.generate_memories(session=conversation("s-profile", "alice"))
    await profiled.worker.run_until_idle()
    app = FastAPI()
    app.include_router(inspector_router(profiled))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as client:
        section = (await user_page(client)).split("Structured profiles")[1]
        assert "travel" in section and "&lt;b&gt;window&lt;/b&gt;" in section
        assert "[&quot;veg&quot;]" in section
        assert "Structured profiles" not in await user_page(client, "bob")


async def test_the_host_apps_dependencies_guard_every_route(service, browse):
    def authenticated(authorization: str = Header("")) -> None:
        if authorization != "Bearer operator":
            raise HTTPException(401)

    client = browse(writable=True, dependencies=[Depends(authenticated)])
    assert (await client.get("/memory-inspector/")).status_code == 401
    assert (await post(client, "/erase", "x", app=APP, user="alice")).status_code == 401
    ok = await client.get("/memory-inspector/", headers={"authorization": "Bearer operator"})
    assert ok.status_code == 200


# ------------------------------------------------------------------------------------ service


async def test_scopes_are_listed_a_page_at_a_time_and_by_what_they_contain(service):
    for user in ("carol", "alice", "bob"):
        await service.create_memory(f"{user}'s fact", user_scope(APP, user))
    await service.create_memory("Other app", user_scope("other", "alice"))
    await service.create_memory("HOLD only quarantined", user_scope(APP, "dave"))

    first = await service.list_scopes({"app_name": APP}, page_size=2)
    assert first.scopes == [ALICE, BOB] and first.next_page_token
    rest = await service.list_scopes(
        {"app_name": APP}, page_size=2, page_token=first.next_page_token
    )
    assert rest.scopes == [user_scope(APP, "carol")] and rest.next_page_token is None
    assert len((await service.list_scopes()).scopes) == 4
    with pytest.raises(InputValidationError):
        await service.list_scopes(page_token="not json")
    with pytest.raises(InputValidationError):
        await service.list_scopes({"app_name": ""})


async def test_a_retry_on_a_server_without_a_model_says_who_will_run_it(
    service, session_service, make_memory_service, caplog
):
    """The inspector's own service has no generation model (`adk-memory web` without
    --memory-model): the retry is queued for a worker that has one, and both the page and the
    log say so, instead of a job left pending with no word."""
    operation = await dead_generation(service, "alice")
    modelless = make_memory_service(run_worker=False)
    app = FastAPI()
    app.include_router(inspector_router(modelless, writable=True))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        token = token_of(await user_page(client))
        with caplog.at_level("WARNING", logger="adk_memory.adk.inspector"):
            retried = await post(
                client, "/operations/retry", token, id=operation, app=APP, user="alice"
            )
        assert retried.headers["location"].endswith("note=retried-no-model")
        assert "no generation model" in caplog.text and operation in caplog.text
        page = await user_page(client, note="retried-no-model")
        assert "waits for a worker that has one" in page
    await service.worker.run_until_idle()  # a worker with a model runs it
    assert (await service.get_operation(operation, ALICE)).done


async def test_the_session_a_memory_came_from_links_to_adks_dev_ui(service, browse):
    await dead_generation(service, "bob")  # the script's refusal, then its extraction
    await service.generate_memories(session=conversation("s-1", "alice"))
    await service.worker.run_until_idle()
    [memory] = (await service.list_memories(ALICE)).memories
    dev_ui = "/dev-ui/?app=shop&amp;userId=alice&amp;session=s-1"
    for mounted, linked in ((browse(dev_ui="/dev-ui/"), True), (browse(), False)):
        pages = [
            await user_page(mounted),
            (await get(mounted, "/memory", app=APP, user="alice", id=memory.id)).text,
        ]
        for page in pages:
            assert "<code>s-1</code>" in page
            assert (f"<a href='{dev_ui}'><code>s-1</code></a>" in page) is linked


async def test_retry_operation_names_its_scope(service):
    dead = await dead_generation(service, "alice")
    assert await service.retry_operation(dead, BOB) is False
    assert [o.status for o in await service.list_operations(ALICE)] == ["dead"]
    assert await service.retry_operation(dead, ALICE) is True
    assert await service.retry_operation(dead, ALICE) is False  # no longer dead
    with pytest.raises(InputValidationError):
        await service.retry_operation("nope", ALICE)


async def test_a_narrower_scope_of_the_user_has_its_own_page(service, browse):
    client = browse(writable=True)
    agent_scope = {**ALICE, "agent": "planner"}
    memory = await service.create_memory("Planner note", agent_scope)
    held = await service.create_memory("HOLD planner secret", agent_scope)
    await service.create_memory("Bob's planner note", {**BOB, "agent": "planner"})

    home = (await get(client, "/", app=APP)).text
    key = json.dumps(agent_scope, sort_keys=True, separators=(",", ":"))
    assert "scope=%7B%22agent%22%3A%22planner%22" in home  # the link names the whole scope
    plain = await user_page(client)
    assert "Planner note" not in plain  # the user's own scope is exact
    page = await user_page(client, scope=key)
    assert "Planner note" in page and "Bob" not in page and "agent=planner" in page
    history = await get(client, "/memory", app=APP, user="alice", scope=key, id=memory.id)
    assert "CREATED" in history.text

    approved = await post(
        client, "/quarantine/approve", token_of(page), app=APP, user="alice", scope=key, id=held.id
    )
    assert approved.headers["location"].endswith(
        "user?app=shop&user=alice&scope=%7B%22agent%22%3A%22planner%22%2C%22app_name%22%3A%22shop"
        "%22%2C%22user_id%22%3A%22alice%22%7D&note=approved"
    )
    assert await service.get_memory(held.id, agent_scope) is not None
    # A scope that is not the named user's is refused, whatever the form says.
    bobs = json.dumps({**BOB, "agent": "planner"})
    assert (await get(client, "/user", app=APP, user="alice", scope=bobs)).status_code == 400
    assert (await get(client, "/user", app=APP, user="alice", scope="{")).status_code == 400


async def test_the_operators_read_outs_read_indexes_not_whole_tables(service):
    """The scope walk probes an index that leads with the scope key (any will do: the vector
    covering index too, once an embedder has made it); the
    quarantine queue of every scope reads the partial index of quarantined memories; a scope's
    generations, the queue's scope index."""
    await service.create_memory("HOLD me", ALICE)
    for statement, index in [
        (_SCOPES, r"Index Only Scan using memories_(by_scope|by_time|scope_vectors)"),
        (_QUARANTINED, "using memories_quarantined"),
        (_OF_SCOPE, "using memory_jobs_by_scope"),
    ]:
        plan = await generic_plan(service.database, rls.render(statement, TEST_SCHEMA))
        assert re.search(index, plan), plan
