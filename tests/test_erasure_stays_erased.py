"""Erasure that stays erased: the tombstones an erasure leaves (keyed hashes, no text) keep
imports and replays from bringing an erased user's data back unless an operator allows it,
while what the user does afterwards is stored as usual; and an erasure killed part way (kill -9)
and run again leaves one record with exact counts.

On the real test database; the imports run the CLI against the recorded Agent Engine
(tests/vertex_fake.py), and the killed erasure is a real child process killed with SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import TEST_SCHEMA
from google.adk.events.event import Event
from google.genai import types
from rls_checks import all_rows
from test_cli import Cli, arun, cli, services
from test_vertex_import import counts, import_vertex

from adk_memory.adk.erasure import erase_user
from adk_memory.errors import ErasedError
from adk_memory.testing import ScriptedLlm

__all__ = ["cli"]  # a fixture, used by name

ALICE = {"app_name": "travel", "user_id": "alice"}

ROWS = {
    "memories": "memories WHERE scope @> $1::jsonb",
    "revisions": "memory_revisions WHERE scope @> $1::jsonb",
    "sessions": "sessions WHERE app_name = $2 AND user_id = $3",
    "events": "events WHERE app_name = $2 AND user_id = $3",
    "user_states": "user_states WHERE app_name = $2 AND user_id = $3",
}
"""Alice's rows in each table ($1 her scope, $2 app, $3 user), as one statement's parts."""


def _dsn(database_url: str) -> str:
    return database_url.replace("postgresql+asyncpg://", "postgresql://")


def alice_rows(database_url: str) -> dict[str, int]:
    """Every row of Alice's, by table, read on a direct connection."""

    async def read() -> dict[str, int]:
        conn = await all_rows(database_url)
        try:
            parts = ", ".join(
                f"(SELECT count(*) FROM {TEST_SCHEMA}.{rows})" for rows in ROWS.values()
            )
            found = await conn.fetchrow(f"SELECT {parts}", json.dumps(ALICE), "travel", "alice")
            return dict(zip(ROWS, found, strict=True))
        finally:
            await conn.close()

    return arun(read)


def jsonl_import(cli: Cli, source: Path, *options: str) -> Any:
    return cli("import", "vertex-jsonl", str(source), "--sessions", "--app", "travel", *options)


def test_importing_again_after_an_erasure_restores_nothing(
    cli: Cli, database_url: str, tmp_path: Path
) -> None:
    import_vertex(cli, "--sessions", "--app", "travel")
    out = tmp_path / "alice.jsonl"
    cli(
        "export", "vertex-jsonl", "--app", "travel", "--user", "alice", "--sessions", "-o", str(out)
    )
    before = alice_rows(database_url)
    assert before["memories"] and before["sessions"] and before["events"]
    cli("erase", "--app", "travel", "--user", "alice", "--yes")
    assert set(alice_rows(database_url).values()) == {0}

    again = jsonl_import(cli, out)
    assert set(alice_rows(database_url).values()) == {0}
    table = counts(again.stdout)
    assert table["memories"][1] == 0 and table["memories"][-1] == before["memories"]
    assert table["sessions"][1] == 0 and table["sessions"][-1] == 1  # ERASED, and said so
    # The source the export came from, read again, brings nothing of hers back either; other
    # users' data is imported as before (already here).
    engine = import_vertex(cli, "--sessions", "--app", "travel")
    assert set(alice_rows(database_url).values()) == {0}
    assert counts(engine.stdout)["memories"][3] > 0  # Bob's and Carol's, already here

    # An operator restoring her on purpose can; the restored session may be remembered again.
    restored = jsonl_import(cli, out, "--allow-erased")
    assert "ERASED" not in restored.stdout
    after = alice_rows(database_url)
    assert {k: v for k, v in after.items() if k != "revisions"} == {
        k: v for k, v in before.items() if k != "revisions"
    }


def test_what_an_erased_user_does_afterwards_is_kept(
    cli: Cli, database_url: str, tmp_path: Path
) -> None:
    """The rule is about what existed before the erasure: a memory the source created after it
    (the user came back) is imported; the old ones are not."""
    import_vertex(cli)
    out = tmp_path / "alice.jsonl"
    cli("export", "vertex-jsonl", "--app", "travel", "--user", "alice", "-o", str(out))
    cli("erase", "--app", "travel", "--user", "alice", "--yes")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    later = (datetime.now(timezone.utc) + timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
    new = {
        "memory": {
            "name": "memories/after-the-erasure",
            "fact": "Alice is back and prefers aisle seats.",
            "scope": ALICE,
            "createTime": later,
            "updateTime": later,
        },
        "revisions": [],
    }
    out.write_text("".join(json.dumps(line) + "\n" for line in [*lines, new]))
    done = cli("import", "vertex-jsonl", str(out))
    table = counts(done.stdout)["memories"]
    assert table[1] == 1 and table[-1] == len(lines)  # IMPORTED, ERASED

    async def facts() -> list[str]:
        async with services(database_url) as (_, memory):
            return [m.fact for m in (await memory.list_memories(ALICE)).memories]

    assert arun(facts) == ["Alice is back and prefers aisle seats."]


def test_memories_import_of_an_export_after_an_erasure_restores_nothing(
    cli: Cli, database_url: str, tmp_path: Path
) -> None:
    async def write() -> None:
        async with services(database_url) as (_, memory):
            await memory.create_memory("Alice lives in Lyon.", ALICE)
            await memory.create_memory("Bob lives in Oslo.", {**ALICE, "user_id": "bob"})

    arun(write)
    out = tmp_path / "all.jsonl"
    cli("memories", "export", "--app", "travel", "--all-users", "-o", str(out))
    cli("erase", "--app", "travel", "--user", "alice", "--yes")
    done = cli("memories", "import", str(out))
    assert "1 line of erased users skipped" in done.stderr
    assert alice_rows(database_url)["memories"] == 0
    cli("memories", "import", str(out), "--allow-erased")
    assert alice_rows(database_url)["memories"] == 1


def test_the_memory_services_own_erase_user_leaves_tombstones_too(
    cli: Cli, database_url: str, tmp_path: Path
) -> None:
    """An app whose sessions live elsewhere erases a user with `PostgresMemoryService.
    erase_user` alone: re-importing what was exported before brings nothing of theirs back,
    and the erasure is recorded (counts only), as the stack's is."""

    async def write() -> None:
        async with services(database_url) as (_, memory):
            await memory.create_memory("Alice lives in Lyon.", ALICE)

    async def erase() -> dict[str, int]:
        async with services(database_url) as (_, memory):
            return await memory.erase_user("travel", "alice")

    arun(write)
    out = tmp_path / "alice.jsonl"
    cli("memories", "export", "--app", "travel", "--user", "alice", "-o", str(out))
    cli("export", "vertex-jsonl", "--app", "travel", "--user", "alice", "-o", str(tmp_path / "v"))
    assert arun(erase)["memories"] == 1
    assert "1 line of erased users skipped" in cli("memories", "import", str(out)).stderr
    table = counts(cli("import", "vertex-jsonl", str(tmp_path / "v")).stdout)["memories"]
    assert table[1] == 0 and table[-1] == 1  # IMPORTED, ERASED
    assert alice_rows(database_url)["memories"] == 0

    async def records() -> list[Any]:
        conn = await all_rows(database_url)
        try:
            return await conn.fetch(f"SELECT counts, finish_time FROM {TEST_SCHEMA}.erasures")
        finally:
            await conn.close()

    [record] = arun(records)
    assert record["finish_time"] is not None and json.loads(record["counts"])["memories"] == 1
    assert arun(erase)["memories"] == 0  # once more: a new erasure of nothing


def _said(text: str) -> Event:
    return Event(
        author="user",
        invocation_id="inv",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


async def test_an_erased_session_is_never_remembered_again(
    make_session_service: Any, make_memory_service: Any
) -> None:
    sessions = make_session_service()
    memory = make_memory_service()  # raw events: no model
    old = await sessions.create_session(app_name="travel", user_id="alice", session_id="s1")
    await sessions.append_event(old, _said("I live in Lyon."))
    await memory.add_session_to_memory(old)
    await erase_user(
        app_name="travel", user_id="alice", session_service=sessions, memory_service=memory
    )
    # A trigger or a replay still holding the old session object: refused, loudly.
    with pytest.raises(ErasedError, match="erased"):
        await memory.add_session_to_memory(old)
    with pytest.raises(ErasedError):
        await memory.add_events_to_memory(
            app_name="travel", user_id="alice", events=old.events, session_id="s1"
        )
    extracting = make_memory_service(llm=ScriptedLlm(), run_worker=False)
    with pytest.raises(ErasedError):
        await extracting.add_session_to_memory(old)  # no generation job is queued
    # Memory Bank's direct form, naming the session: its events, or contents with no time.
    for given in (old.events, [e.content for e in old.events]):
        with pytest.raises(ErasedError):
            await extracting.generate_memories(contents=given, scope=ALICE, session_id="s1")
    assert await extracting.list_operations(ALICE) == []
    assert (await memory.list_memories(ALICE)).memories == []
    # The user coming back, in a new session, is remembered as anyone is.
    new = await sessions.create_session(app_name="travel", user_id="alice", session_id="s2")
    await sessions.append_event(new, _said("I moved to Porto."))
    await memory.add_session_to_memory(new)
    assert [m.fact for m in (await memory.list_memories(ALICE)).memories] == ["I moved to Porto."]


async def test_a_session_id_used_again_after_an_erasure_is_remembered_from_then_on(
    make_session_service: Any, make_memory_service: Any
) -> None:
    """An app that gives every user one fixed session id ("main") recreates it when the erased
    user comes back: what they say then is theirs, remembered as anyone's; what the old session
    object holds from before the erasure is still refused."""
    sessions = make_session_service()
    memory = make_memory_service()  # raw events: no model
    old = await sessions.create_session(app_name="travel", user_id="alice", session_id="main")
    await sessions.append_event(old, _said("I live in Lyon."))
    await erase_user(
        app_name="travel", user_id="alice", session_service=sessions, memory_service=memory
    )
    new = await sessions.create_session(app_name="travel", user_id="alice", session_id="main")
    await sessions.append_event(new, _said("I moved to Porto."))
    await memory.add_session_to_memory(new)
    with pytest.raises(ErasedError):
        await memory.add_session_to_memory(old)
    # An old event replayed with the new ones: only the new ones are remembered.
    await memory.add_events_to_memory(
        app_name="travel", user_id="alice", events=[*old.events, *new.events], session_id="main"
    )
    assert [m.fact for m in (await memory.list_memories(ALICE)).memories] == ["I moved to Porto."]


async def test_an_erased_session_is_never_learned_from_again(
    make_session_service: Any, make_memory_service: Any
) -> None:
    """A procedure's support is a session's material: an erased session replayed to
    `learn_procedure` (a feedback plugin or a retry still holding it) is refused, no job
    queued, so the erased user's words never become support again."""
    sessions = make_session_service()
    memory = make_memory_service(llm=ScriptedLlm(), run_worker=False)
    old = await sessions.create_session(app_name="travel", user_id="alice", session_id="s1")
    await sessions.append_event(old, _said("My passport is XDA839201; rebook me."))
    await erase_user(
        app_name="travel", user_id="alice", session_service=sessions, memory_service=memory
    )
    with pytest.raises(ErasedError):
        await memory.learn_procedure(old)
    assert (await memory.list_operations(ALICE)) == []


async def test_tombstones_hold_no_identity_or_text(
    database_url: str, make_session_service: Any, make_memory_service: Any
) -> None:
    sessions = make_session_service()
    memory = make_memory_service()
    session = await sessions.create_session(app_name="travel", user_id="alice", session_id="s1")
    await sessions.append_event(session, _said("I live in Lyon."))
    await memory.create_memory("Alice lives in Lyon.", ALICE)
    await erase_user(
        app_name="travel", user_id="alice", session_service=sessions, memory_service=memory
    )
    conn = await all_rows(database_url)
    try:
        stones = await conn.fetch(f"SELECT * FROM {TEST_SCHEMA}.memory_tombstones")
        records = await conn.fetch(f"SELECT * FROM {TEST_SCHEMA}.erasures")
    finally:
        await conn.close()
    assert len(stones) == 3  # the user, the session, the memory
    assert {len(row["digest"]) for row in stones} == {32}
    dumped = repr([dict(r) for r in stones]) + repr([dict(r) for r in records])
    for word in ("alice", "Alice", "Lyon", "s1"):
        assert word not in dumped
    [record] = records
    assert record["finish_time"] is not None and json.loads(record["counts"])["memories"] == 1


_KILLED_ERASURE = """
import asyncio, os, signal, sys
from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.adk.erasure import erase_user
from adk_memory.testing import ScriptedLlm

async def die(*args, **kwargs):  # the memory side is erased and counted; then: kill -9
    os.kill(os.getpid(), signal.SIGKILL)

async def main():
    url, schema = sys.argv[1], sys.argv[2]
    sessions = PostgresSessionService(url, schema=schema)
    sessions.erase_user = die
    async with sessions, PostgresMemoryService(url, schema=schema, run_worker=False) as memory:
        await erase_user(app_name="travel", user_id="alice",
                         session_service=sessions, memory_service=memory)

asyncio.run(main())
"""


async def test_an_erasure_killed_part_way_and_run_again_counts_everything(
    database_url: str, make_session_service: Any, make_memory_service: Any
) -> None:
    sessions = make_session_service()
    memory = make_memory_service()
    await memory.create_memories([f"Alice visited city number {n}." for n in range(300)], ALICE)
    session = await sessions.create_session(app_name="travel", user_id="alice", session_id="s1")
    await sessions.append_event(session, _said("hello"))
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED_ERASURE), database_url, TEST_SCHEMA],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert (await memory.list_memories(ALICE)).memories == []  # gone before the kill
    counted = await erase_user(
        app_name="travel", user_id="alice", session_service=sessions, memory_service=memory
    )
    assert counted["memories"] == 300 and counted["revisions"] == 300
    assert counted["sessions"] == 1 and counted["events"] == 1
    conn = await all_rows(database_url)
    try:
        records = await conn.fetch(f"SELECT counts::text, finish_time FROM {TEST_SCHEMA}.erasures")
    finally:
        await conn.close()
    [(recorded, finished)] = records  # one erasure, one record: the re-run finished it
    assert json.loads(recorded) == counted and finished is not None
    # Erasing again, once finished, is a new erasure of nothing.
    again = await erase_user(
        app_name="travel", user_id="alice", session_service=sessions, memory_service=memory
    )
    assert set(again.values()) == {0}
