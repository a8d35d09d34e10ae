"""The audit of operator access on the real database (issue 26): every audited write adds
exactly one record (who, what kind, which scope, counts) in its own transaction and never any
content; a write replayed after a lost reply adds none; an erasure removes the user from the
records and keeps their counts; listings page newest first by a bounded query.

The only double is a wire proxy that drops a committed transaction's reply (`wire_proxy`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import asyncpg
import pytest
from conftest import TEST_SCHEMA, said
from wire_proxy import WireProxy, running

from adk_memory import PostgresMemoryService
from adk_memory.adk.erasure import erase_user
from adk_memory.errors import InputValidationError
from adk_memory.memory.guard import GuardAction, GuardVerdict
from adk_memory.memory.scope import scope_key, user_scope
from adk_memory.memory.service.audit import next_page_token, process_principal

APP = "shop"
ALICE = user_scope(APP, "alice")
BOB = user_scope(APP, "bob")
SECRET = "Alice keeps her spare key under the blue flowerpot"


@dataclass(frozen=True)
class Who:
    """A principal as the front ends' identity resolver names one."""

    subject: str
    email: str = ""


OPERATOR = Who("op-7f3a", "op@example.com")


class QuarantineAll:
    async def check(self, fact: str, *, scope: Mapping[str, str], source: str) -> GuardVerdict:
        return GuardVerdict(GuardAction.QUARANTINE, reason="review", rule="test")


Rows = Callable[..., Awaitable[list[dict[str, Any]]]]


@pytest.fixture
async def audit_rows(database_url: str) -> AsyncIterator[Rows]:
    """`await audit_rows()`: every audit row as a dict (oldest first), read directly."""
    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))

    async def fetch() -> list[dict[str, Any]]:
        found = await conn.fetch(
            f"SELECT row_to_json(a)::text FROM {TEST_SCHEMA}.operator_audit a "
            "ORDER BY create_time, id"
        )
        return [json.loads(row[0]) for row in found]

    yield fetch
    await conn.close()


def no_content(rows: list[dict[str, Any]], *texts: str) -> None:
    """No record holds any of `texts` (a fact, a query), in any column."""
    dumped = json.dumps(rows)
    for text in texts:
        assert text not in dumped


async def test_approvals_and_rejections_each_write_one_record_and_no_content(
    make_memory_service: Any, audit_rows: Rows
) -> None:
    service = make_memory_service(guard=QuarantineAll())
    approved = await service.create_memory(SECRET, ALICE)
    rejected = await service.create_memory(SECRET + " (again)", ALICE)
    assert await audit_rows() == []  # the user's own writes are not operator access

    await service.approve_quarantined(approved.id, ALICE, principal=OPERATOR)
    assert await service.reject_quarantined(rejected.id, ALICE)  # a command: this process
    with pytest.raises(LookupError):  # nothing approved: nothing recorded
        await service.approve_quarantined(approved.id, BOB, principal=OPERATOR)
    assert not await service.reject_quarantined(rejected.id, ALICE, principal=OPERATOR)

    first, second = await audit_rows()
    assert (first["kind"], first["principal"]) == ("approval", "op-7f3a")
    assert (second["kind"], second["principal"]) == ("rejection", process_principal())
    assert process_principal().startswith("local:")
    for row, memory in [(first, approved), (second, rejected)]:
        assert row["scope_key"] == scope_key(ALICE)
        assert (row["app_name"], row["user_id"], row["memory_id"]) == (APP, "alice", memory.id)
        assert row["counts"] == {"memories": 1}
    no_content(await audit_rows(), SECRET, "flowerpot")


async def test_an_erasure_is_one_record_and_removes_the_user_from_earlier_ones(
    make_memory_service: Any, audit_rows: Rows
) -> None:
    service = make_memory_service()
    memory = await service.create_memory(SECRET, ALICE)
    await service.create_memory("Bob likes jazz", BOB)
    await service.record_access(
        "page_view", ALICE, counts={"memories": 1}, principal=OPERATOR, memory_id=memory.id
    )
    await service.record_access("export", {**ALICE, "agent": "a1"}, counts={"memories": 4})
    await service.record_access("page_view", BOB, counts={"memories": 1}, principal=OPERATOR)

    counts = await service.erase_user(APP, "alice", principal=OPERATOR)
    assert counts["memories"] == 1

    view, export, bobs, erasure = await audit_rows()
    marker = erasure["scope_key"]
    assert marker.startswith("erased:")
    for row, kind, kept in [(view, "page_view", 1), (export, "export", 4)]:
        assert (row["kind"], row["app_name"], row["user_id"]) == (kind, APP, None)
        assert (row["scope_key"], row["memory_id"]) == (marker, None)
        assert row["counts"] == {"memories": kept}
    assert (bobs["user_id"], bobs["scope_key"]) == ("bob", scope_key(BOB))
    assert (erasure["kind"], erasure["principal"], erasure["app_name"]) == (
        "erasure",
        "op-7f3a",
        APP,
    )
    assert erasure["user_id"] is None and erasure["counts"]["memories"] == 1
    assert erasure["counts"] == {k: v for k, v in counts.items()}
    assert "alice" not in json.dumps([view, export, erasure])
    no_content(await audit_rows(), SECRET)

    # Erasing again is a new erasure (zeros), recorded as one; the first's record is kept.
    await service.erase_user(APP, "alice")
    *_, again = await audit_rows()
    assert again["kind"] == "erasure" and again["scope_key"] != marker
    assert again["counts"]["memories"] == 0 and again["principal"] == process_principal()


async def test_the_stacks_erasure_is_recorded_once_with_every_count(
    make_memory_service: Any, session_service: Any, audit_rows: Rows
) -> None:
    service = make_memory_service()
    session = await session_service.create_session(app_name=APP, user_id="alice")
    await session_service.append_event(session, said(SECRET))
    await service.create_memory(SECRET, ALICE)
    counts = await erase_user(
        app_name=APP,
        user_id="alice",
        session_service=session_service,
        memory_service=service,
        principal=OPERATOR,
    )
    [record] = await audit_rows()
    assert record["kind"] == "erasure" and record["principal"] == "op-7f3a"
    assert record["counts"] == counts and counts["sessions"] == 1 and counts["events"] == 1
    no_content([record], SECRET, "alice")


# ------------------------------------------------------------------------------- lost replies


@pytest.fixture
async def proxied(
    make_memory_service: Any, database_url: str
) -> AsyncIterator[tuple[PostgresMemoryService, WireProxy]]:
    """A memory service through a proxy that can drop a committed transaction's reply."""
    async with running(database_url) as proxy:
        service = PostgresMemoryService(
            database_url=proxy.url, schema=TEST_SCHEMA, guard=QuarantineAll(), run_worker=False
        )
        await service.list_memories(ALICE)  # migrated before any fault
        yield service, proxy
        await service.close()


async def lost_reply(proxy: WireProxy, match: str, call: Awaitable[Any]) -> Any:
    before = proxy.dropped
    proxy.drop_next_commit(match)
    result = await call
    assert proxy.dropped == before + 1 and not proxy.armed, "the fault never fired"
    return result


async def test_a_write_replayed_after_a_lost_reply_records_once(
    proxied: tuple[PostgresMemoryService, WireProxy], audit_rows: Rows
) -> None:
    service, proxy = proxied
    held = await service.create_memory("Likes tea.", ALICE)
    other = await service.create_memory("Lives in Lyon.", ALICE)
    audit = f"INSERT INTO {TEST_SCHEMA}.operator_audit"
    approved = await lost_reply(
        proxy, audit, service.approve_quarantined(held.id, ALICE, principal=OPERATOR)
    )
    assert approved.id == held.id
    assert await lost_reply(proxy, audit, service.reject_quarantined(other.id, ALICE))
    erased = service.erase_user(APP, "alice", principal=OPERATOR)
    counts = await lost_reply(proxy, f"UPDATE {TEST_SCHEMA}.erasures SET finish_time", erased)
    kinds = [(r["kind"], r["counts"]) for r in await audit_rows()]
    assert kinds == [
        ("approval", {"memories": 1}),
        ("rejection", {"memories": 1}),
        ("erasure", counts),
    ]


# ------------------------------------------------------------------------------------ listing


async def test_listings_page_newest_first_and_filter(make_memory_service: Any) -> None:
    service = make_memory_service()
    for n in range(7):
        who = OPERATOR if n % 2 else Who("other-op")
        kind = "export" if n % 3 == 0 else "page_view"
        await service.record_access(kind, ALICE, counts={"n": n}, principal=who)

    pages, token = [], None
    while True:
        page = await service.list_access(page_token=token, limit=3)
        pages.append([r.counts["n"] for r in page])
        token = next_page_token(page, 3)
        if token is None:
            break
    assert pages == [[6, 5, 4], [3, 2, 1], [0]]

    exports = await service.list_access(kind="export")
    assert [r.counts["n"] for r in exports] == [6, 3, 0]
    mine = await service.list_access(principal="op-7f3a")
    assert [r.counts["n"] for r in mine] == [5, 3, 1]
    assert await service.list_access(since=datetime.now(timezone.utc) + timedelta(hours=1)) == []
    last_hour = datetime.now(timezone.utc) - timedelta(hours=1)
    assert len(await service.list_access(since=last_hour)) == 7


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.record_access("peek", ALICE),
        lambda s: s.record_access("export", ALICE, counts={"memories": -1}),
        lambda s: s.record_access("export", {"app_name": ""}),
        lambda s: s.record_access("page_view", ALICE, memory_id="not-an-id"),
        lambda s: s.record_access("export", ALICE, principal=Who("")),
        lambda s: s.list_access(kind="peek"),
        lambda s: s.list_access(page_token="garbage"),
        lambda s: s.list_access(limit=0),
        lambda s: s.list_access(principal=7),
        lambda s: s.list_access(since="yesterday"),
    ],
)
async def test_bad_input_is_a_clear_error_and_writes_nothing(
    make_memory_service: Any, audit_rows: Rows, call: Callable[[Any], Awaitable[Any]]
) -> None:
    service = make_memory_service()
    with pytest.raises(InputValidationError):
        await call(service)
    assert await audit_rows() == []


async def test_a_record_of_no_one_scope_names_no_user(
    make_memory_service: Any, audit_rows: Rows
) -> None:
    """A record without a scope (an export of every app) names no user."""
    service = make_memory_service()
    await service.record_access("export", None, counts={"memories": 0})
    [row] = await audit_rows()
    assert (row["scope_key"], row["app_name"], row["user_id"]) == (None, None, None)


async def test_the_table_is_append_only(make_memory_service: Any, database_url: str) -> None:
    """The database itself refuses to change a record other than by an erasure's scrub."""
    service = make_memory_service()
    await service.record_access("export", ALICE, counts={"memories": 3})
    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    table = f"{TEST_SCHEMA}.operator_audit"
    try:
        for statement in [
            f"UPDATE {table} SET counts = '{{}}'",
            f"UPDATE {table} SET principal = 'someone else'",
            f"UPDATE {table} SET user_id = 'bob'",
            f"UPDATE {table} SET user_id = NULL, scope_key = 'x'",
        ]:
            with pytest.raises(asyncpg.RaiseError, match="append-only"):
                await conn.execute(statement)
        await conn.execute(f"UPDATE {table} SET user_id = NULL, scope_key = 'erased:1'")
        assert await conn.fetchval(f"SELECT counts::text FROM {table}") == '{"memories": 3}'
    finally:
        await conn.close()


async def test_a_record_added_while_an_erasure_runs_loses_the_user_too(
    make_memory_service: Any, audit_rows: Rows
) -> None:
    service = make_memory_service()
    await service.create_memory(SECRET, ALICE)
    start = datetime.now(timezone.utc)
    erasure, _ = await service.begin_erasure(APP, "alice", [], start)
    await service.record_access("page_view", ALICE, counts={"memories": 1}, principal=OPERATOR)
    await service.count_erasure(erasure, await service.erase_user(APP, "alice", erasure_id=erasure))
    await service.finish_erasure(erasure, app_name=APP, user_id="alice", principal=OPERATOR)
    view, record = await audit_rows()
    assert (view["user_id"], view["scope_key"]) == (None, f"erased:{erasure}")
    assert view["counts"] == {"memories": 1}
    assert record["kind"] == "erasure" and record["counts"]["memories"] == 1


async def test_a_principal_with_a_nul_is_recorded_and_found_not_refused(
    make_memory_service: Any, audit_rows: Rows
) -> None:
    """A token's claim may hold what PostgreSQL text cannot (a NUL, a lone surrogate): the
    audited action still goes through, its record names the principal as stored text, and a
    listing by the same name finds it."""
    service = make_memory_service()
    await service.record_access("page_view", ALICE, principal=Who("op\x00\ud800x"))
    [row] = await audit_rows()
    assert "\x00" not in row["principal"] and row["principal"].startswith("op")
    [found] = await service.list_access(principal="op\x00\ud800x")
    assert found.principal == row["principal"]
