"""The audit of operator access through its surfaces, on the real database (issue 26): each
audited command (`memories export`, `export vertex-jsonl`, `opt-out`, `memories quarantine
approve|reject`, `erase`) and each inspector page and form writes one record naming its
principal, with no content; `adk-memory audit list` and the inspector's Audit page list them
newest first, paged and filtered; the Audit page sits behind the operator gate every inspector
route has.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx
import pytest
import test_cli
from conftest import TEST_SCHEMA
from fastapi import FastAPI, Header, HTTPException, Request
from fastapi.params import Depends
from test_audit import QuarantineAll
from test_cli import Cli, arun, services, store_session
from test_inspector import (
    ALICE,
    APP,
    BASE,
    QuarantineMarked,
    dead_generation,
    post,
    refused_by_the_model,
    token_of,
)

from adk_memory import PostgresMemoryService
from adk_memory.adk.inspector import inspector_router
from adk_memory.config import GenerationConfig, MemoryBankConfig
from adk_memory.memory.scope import scope_key, user_scope
from adk_memory.memory.service.audit import process_principal
from adk_memory.testing import ScriptedLlm

U1 = user_scope(APP, "u1")
SECRET = "u1 hides the spare key under the blue flowerpot"
QUERY = "where is the spare key"
cli = test_cli.cli
"""The `adk-memory` invoker fixture, shared with test_cli.py."""


async def rows_of(database_url: str) -> list[dict[str, Any]]:
    """Every audit row as a dict, oldest first, read directly."""
    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        rows = await conn.fetch(
            f"SELECT row_to_json(a)::text FROM {TEST_SCHEMA}.operator_audit a "
            "ORDER BY create_time, id"
        )
    finally:
        await conn.close()
    return [json.loads(row[0]) for row in rows]


def audit_rows(database_url: str) -> list[dict[str, Any]]:
    """`rows_of` from a test that is not async (the CLI runs its own event loops)."""
    return arun(lambda: rows_of(database_url))


# ---------------------------------------------------------------------------------------- CLI


def seed(database_url: str) -> str:
    """u1: a session, a live memory (the secret) and a quarantined one; its id."""

    async def go() -> str:
        async with services(database_url) as (sessions, memory):
            await store_session(sessions, APP, "u1", "s1", ["hello"])
            await memory.create_memory(SECRET, U1)
        async with services(database_url, guard=QuarantineAll()) as (_, memory):
            return (await memory.create_memory(SECRET + " HOLD", U1)).id

    return arun(go)


def test_every_audited_command_writes_one_record_and_audit_list_shows_them(
    cli: Cli, database_url: str
) -> None:
    held = seed(database_url)
    u1 = ("--app", APP, "--user", "u1")
    local = process_principal()
    cli("memories", "export", *u1)
    cli("export", "vertex-jsonl", *u1, "--sessions")
    cli("opt-out", *u1)
    cli("opt-out", *u1, "--undo")
    cli("memories", "quarantine", "approve", *u1, held)
    assert audit_rows(database_url) and all(
        r["principal"] == local for r in audit_rows(database_url)
    )
    records = [(r["kind"], r["scope_key"], r["counts"]) for r in audit_rows(database_url)]
    key = scope_key(U1)
    assert records == [
        ("export", key, {"memories": 1}),
        ("export", key, {"memories": 1, "sessions": 1}),
        ("opt_out", key, {"opted_out": 1}),
        ("opt_out", key, {"opted_out": 0}),
        ("approval", key, {"memories": 1}),
    ]

    listed = json.loads(cli("audit", "list", "--json").stdout)
    assert [r["kind"] for r in listed] == ["approval", "opt_out", "opt_out", "export", "export"]
    assert listed[0]["principal"] == local and listed[0]["scope_key"] == key
    table = cli("audit", "list").stdout.splitlines()
    assert table[0].split() == ["TIME", "PRINCIPAL", "KIND", "SCOPE", "MEMORY", "COUNTS"]
    assert "approval" in table[1] and "memories=1" in table[1]
    exports = json.loads(cli("audit", "list", "--kind", "export", "--json").stdout)
    assert [r["counts"] for r in exports] == [{"memories": 1, "sessions": 1}, {"memories": 1}]
    assert json.loads(cli("audit", "list", "--principal", "nobody", "--json").stdout) == []
    assert len(json.loads(cli("audit", "list", "--since", "1h", "--json").stdout)) == 5

    first = cli("audit", "list", "--limit", "2", "--json")
    token = re.search(r"--page (\S+)", first.stderr)
    assert token, first.stderr
    rest = json.loads(cli("audit", "list", "--limit", "3", "--page", token[1], "--json").stdout)
    assert [r["kind"] for r in json.loads(first.stdout) + rest] == [r["kind"] for r in listed]

    cli("erase", *u1, "--yes")
    *_, erasure = audit_rows(database_url)
    assert erasure["kind"] == "erasure" and erasure["principal"] == local
    assert erasure["counts"]["memories"] == 2 and erasure["counts"]["sessions"] == 1
    assert all(r["user_id"] is None for r in audit_rows(database_url))  # u1 is gone from all
    dumped = json.dumps(audit_rows(database_url)) + cli("audit", "list", "--json").stdout
    assert "flowerpot" not in dumped and "u1" not in dumped.replace(local, "")


def test_audit_list_refuses_bad_filters(cli: Cli) -> None:
    bad_since = cli("audit", "list", "--since", "yesterday-ish", code=1)
    assert bad_since.stderr.startswith("Error: ")
    bad_page = cli("audit", "list", "--page", "garbage", code=1)
    assert "Not an audit page token" in bad_page.stderr
    assert cli("audit", "list", "--kind", "peek", code=2).exit_code == 2


# ---------------------------------------------------------------------------------- inspector


@dataclass(frozen=True)
class Who:
    subject: str
    email: str = ""


def who_asks(request: Request) -> Who | None:
    """The test's identity resolver: the `x-operator` header names the principal."""
    name = request.headers.get("x-operator")
    return Who(name) if name else None


@pytest.fixture
def service(make_memory_service: Callable[..., PostgresMemoryService]) -> PostgresMemoryService:
    config = MemoryBankConfig(generation=GenerationConfig(max_attempts=1))
    llm = ScriptedLlm([refused_by_the_model()])  # the generation is dead-lettered
    return make_memory_service(llm=llm, run_worker=False, guard=QuarantineMarked(), config=config)


@pytest.fixture
async def client(
    service: PostgresMemoryService, session_service: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """The inspector, writable, with the test's identity resolver and an operator gate."""

    def operator(x_operator: str = Header("")) -> None:
        if not x_operator.startswith("op-"):
            raise HTTPException(403)

    app = FastAPI()
    router = inspector_router(
        service,
        session_service=session_service,
        writable=True,
        principal=who_asks,
        dependencies=[Depends(operator)],
    )
    app.include_router(router)
    headers = {"x-operator": "op-ann"}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url=BASE, headers=headers
    ) as made:
        yield made


async def test_inspector_pages_and_forms_are_audited_and_listed(
    service: PostgresMemoryService, client: httpx.AsyncClient, database_url: str
) -> None:
    memory = await service.create_memory(SECRET, ALICE)
    held = await service.create_memory("HOLD " + SECRET, ALICE)
    rejected = await service.create_memory("HOLD reject " + SECRET, ALICE)
    operation = await dead_generation(service, "alice")
    alice = {"app": APP, "user": "alice"}

    home = await client.get("/memory-inspector/")
    page = await client.get("/memory-inspector/user", params={**alice, "q": QUERY})
    shown = await client.get("/memory-inspector/memory", params={**alice, "id": memory.id})
    assert home.status_code == page.status_code == shown.status_code == 200
    token = token_of(page.text)
    for path, target in [
        ("/quarantine/approve", held.id),
        ("/quarantine/reject", rejected.id),
        ("/operations/retry", operation),
    ]:
        assert (await post(client, path, token, id=target, **alice)).status_code == 303
    rows = await rows_of(database_url)
    key = scope_key(ALICE)
    assert [(r["kind"], r["scope_key"], r["memory_id"]) for r in rows] == [
        ("page_view", None, None),
        ("page_view", key, None),
        ("page_view", key, memory.id),
        ("approval", key, held.id),
        ("rejection", key, rejected.id),
        ("dead_letter_retry", key, None),
    ]
    assert all(r["principal"] == "op-ann" for r in rows)
    assert rows[0]["counts"] == {"scopes": 1, "quarantined": 2, "dead_letters": 1}
    assert rows[1]["counts"]["memories"] == 1 and rows[1]["counts"]["results"] >= 1
    assert rows[2]["counts"] == {"memories": 1, "revisions": 1}
    dumped = json.dumps(rows)
    assert "flowerpot" not in dumped and "spare key" not in dumped

    audit = await client.get("/memory-inspector/audit")
    assert audit.status_code == 200
    kinds = re.findall(r"<td>(page_view|approval|rejection|dead_letter_retry)</td>", audit.text)
    assert kinds == ["dead_letter_retry", "rejection", "approval", *["page_view"] * 3]
    assert "flowerpot" not in audit.text and "op-ann" in audit.text
    approvals = await client.get("/memory-inspector/audit", params={"kind": "approval"})
    assert re.findall(r"<td>(approval|rejection|page_view)</td>", approvals.text) == ["approval"]
    nobody = await client.get("/memory-inspector/audit", params={"principal": "op-bob"})
    assert "No audit records." in nobody.text
    bad = await client.get("/memory-inspector/audit", params={"kind": "peek"})
    assert bad.status_code == 400

    erased = await post(client, "/erase", token, confirm="alice", **alice)
    assert erased.status_code == 200
    after = await rows_of(database_url)
    assert after[-1]["kind"] == "erasure" and after[-1]["principal"] == "op-ann"
    assert all(r["user_id"] is None and "alice" not in json.dumps(r) for r in after)
    assert [r["counts"] for r in after[:-1]] == [r["counts"] for r in rows]


async def test_the_audit_page_is_behind_the_operator_gate(client: httpx.AsyncClient) -> None:
    refused = await client.get("/memory-inspector/audit", headers={"x-operator": "user-1"})
    assert refused.status_code == 403


async def test_the_audit_page_pages_newest_first(
    service: PostgresMemoryService, client: httpx.AsyncClient
) -> None:
    for n in range(101):
        await service.record_access("export", ALICE, counts={"n": n})
    first = await client.get("/memory-inspector/audit")
    counts = re.findall(r"<td>n: (\d+)</td>", first.text)
    assert counts[0] == "100" and len(counts) == 100
    more = re.search(r"href='([^']*/audit\?[^']*page=[^']+)'", first.text)
    assert more, "no next page link"
    second = await client.get(more[1].replace("&amp;", "&"))
    assert re.findall(r"<td>n: (\d+)</td>", second.text) == ["0"]
