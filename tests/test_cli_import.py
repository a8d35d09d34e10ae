"""`adk-memory memories import`: JSON lines (an export's) written back through `create_memories`,
a batch per run of one scope, every line checked before anything is written."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import TEST_SCHEMA
from rls_checks import for_all
from test_cli import Cli, arun, assert_user_error, cli, services

from adk_memory.cli import ingest, output
from adk_memory.cli.options import Overrides
from adk_memory.testing import HashEmbedder

__all__ = ["cli"]  # the fixture, used by name

ALICE = {"app_name": "shop", "user_id": "alice"}
BOB = {"app_name": "shop", "user_id": "bob"}


def write(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_an_export_imports_back_in_batches_per_scope(
    cli: Cli, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "BATCH", 2)  # 3 facts of alice: two batches
    later = (datetime.now(timezone.utc) + timedelta(days=3)).isoformat()
    source = write(
        tmp_path / "in.jsonl",
        {"fact": "Alice likes tea.", "scope": ALICE, "topics": ["drinks"], "importance": 0.8},
        {"fact": "Alice lives in Lyon.", "scope": ALICE, "expire_time": later},
        {"fact": "Mail alice@example.com", "scope": ALICE},
        {"fact": "Bob likes coffee.", "scope": BOB, "source_type": "user_input"},
        {"fact": "Gone.", "scope": BOB, "expire_time": "2001-01-01T00:00:00+00:00"},
    )
    obj = Overrides(embedder=HashEmbedder())
    cli("migrate", "--embedding-dimensions", "64")  # the CLI never migrates on its own
    done = cli("memories", "import", str(source), "--redact", "pii", obj=obj)
    assert "Imported 4 memories (1 expired line skipped)." in done.stderr

    async def read() -> tuple[list[str], list[str], list[str]]:
        async with services(database_url, embedder=HashEmbedder()) as (_, memory):
            alice = (await memory.list_memories(ALICE)).memories
            bob = (await memory.list_memories(BOB)).memories
            found = await memory.retrieve_memories(ALICE, search_query="tea", top_k=1)
            return [m.fact for m in alice], [m.fact for m in bob], [r.memory.fact for r in found]

    alice, bob, found = arun(read)
    assert sorted(alice)[:2] == ["Alice likes tea.", "Alice lives in Lyon."]
    assert "alice@example.com" not in " ".join(alice) and len(alice) == 3
    assert bob == ["Bob likes coffee."] and found == ["Alice likes tea."]

    exported = tmp_path / "out.jsonl"
    cli("memories", "export", "--app", "shop", "--all-users", "-o", str(exported))
    again = cli("memories", "import", str(exported), obj=obj)
    assert "Imported 4 memories." in again.stderr


def test_a_bad_line_writes_nothing(cli: Cli, database_url: str, tmp_path: Path) -> None:
    source = write(
        tmp_path / "bad.jsonl",
        {"fact": "Alice likes tea.", "scope": ALICE},
        {"fact": "No scope at all."},
    )
    assert_user_error(cli("memories", "import", str(source), code=1), "Line 2:")
    (tmp_path / "junk.jsonl").write_text('{"fact": "ok", "scope": {"app_name": "a"}}\nnot json\n')
    assert_user_error(cli("memories", "import", str(tmp_path / "junk.jsonl"), code=1), "Line 2:")

    async def count() -> int:
        async with services(database_url) as (_, memory):
            return len((await memory.list_memories(ALICE)).memories)

    assert arun(count) == 0


def test_a_refused_batch_names_its_first_line(cli: Cli, tmp_path: Path) -> None:
    source = write(
        tmp_path / "refused.jsonl",
        {"fact": "Alice likes tea.", "scope": ALICE},
        {"fact": "Bob likes coffee.", "scope": BOB, "importance": 7},
    )
    assert_user_error(
        cli("memories", "import", str(source), code=1),
        "The batch from line 2 was refused",
        "1 memory written before it",
    )


def test_the_lines_of_a_user_who_opted_out_are_skipped_and_counted(
    cli: Cli, database_url: str, tmp_path: Path
) -> None:
    async def opt_out() -> None:
        async with services(database_url) as (_, memory):
            await memory.set_opt_out("shop", "bob")

    arun(opt_out)
    source = write(
        tmp_path / "opted.jsonl",
        {"fact": "Bob likes coffee.", "scope": BOB},
        {"fact": "Alice likes tea.", "scope": ALICE},
    )
    done = cli("memories", "import", str(source))
    assert "Imported 1 memory (1 line skipped: the user opted out of memory)" in done.stderr

    async def facts() -> dict[str, list[str]]:
        async with services(database_url) as (_, memory):
            return {
                user: [m.fact for m in (await memory.list_memories(scope)).memories]
                for user, scope in (("alice", ALICE), ("bob", BOB))
            }

    assert arun(facts) == {"alice": ["Alice likes tea."], "bob": []}


def test_an_import_run_again_or_resumed_adds_nothing(
    cli: Cli, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each line is imported once, known by its `id` or its content: the whole file after a
    prefix of it (an import that stopped part-way) adds the rest, a second run nothing; a line
    whose memory was deleted since is skipped and counted, not written again. The running count
    shows on a terminal."""
    monkeypatch.setattr(ingest, "BATCH", 2)
    records = [
        {"fact": "Alice likes tea.", "scope": ALICE},
        {"fact": "Alice lives in Lyon.", "scope": ALICE, "id": "export-7"},
        {"fact": "Bob likes coffee.", "scope": BOB},
        {"fact": "Alice cycles to work.", "scope": ALICE},
        {"fact": "Alice likes tea.", "scope": ALICE},  # the same line again: one memory
    ]
    prefix = write(tmp_path / "prefix.jsonl", *records[:2])
    whole = write(tmp_path / "whole.jsonl", *records)

    async def facts() -> list[str]:
        async with services(database_url) as (_, memory):
            alice = (await memory.list_memories(ALICE)).memories
            bob = (await memory.list_memories(BOB)).memories
            return sorted(m.fact for m in alice + bob)

    terminal = SimpleNamespace(stderr=SimpleNamespace(isatty=lambda: True))
    monkeypatch.setattr(output, "sys", terminal)
    assert "Imported 2 memories." in cli("memories", "import", str(prefix)).stderr
    resumed = cli("memories", "import", str(whole))
    assert "lines imported: 2" in resumed.stderr and "lines imported: 5" in resumed.stderr
    assert "Imported 4 memories." in resumed.stderr  # the two of the prefix among them
    expected = sorted(
        ["Alice likes tea.", "Alice lives in Lyon.", "Bob likes coffee.", "Alice cycles to work."]
    )
    assert arun(facts) == expected
    cli("memories", "import", str(whole))
    assert arun(facts) == expected

    async def forget_lyon() -> None:
        async with services(database_url) as (_, memory):
            [lyon] = [m for m in (await memory.list_memories(ALICE)).memories if "Lyon" in m.fact]
            await memory.delete_memory(scope=ALICE, memory_id=lyon.id)

    arun(forget_lyon)
    again = cli("memories", "import", str(whole))
    assert "(1 line skipped: imported before, then deleted or changed)" in again.stderr
    assert arun(facts) == [f for f in expected if "Lyon" not in f]


def test_reindex_rebuilds_the_full_text_index_in_batches(
    cli: Cli, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memories reindex` runs `reindex_text`: memories indexed the old way (the fact as
    written, no bigrams) are found again, with a running count on a terminal and a final one."""
    mei = {"app_name": "shop", "user_id": "mei"}
    facts = ["我的猫叫小白。", "ฉันชอบกาแฟ", "Mei collects stamps."]

    async def write_the_old_way() -> None:
        async with services(database_url) as (_, memory):
            await memory.create_memories(facts, mei)
            async with memory.database.connection() as conn:
                await conn.execute(
                    f"UPDATE {TEST_SCHEMA}.memories SET fts = to_tsvector('english', fact) "
                    f"WHERE {for_all(TEST_SCHEMA)}"  # the owner's all-users path (RLS)
                )

    async def found() -> list[int]:
        async with services(database_url) as (_, memory):
            return [
                len(await memory.retrieve_memories(mei, search_query=query))
                for query in ("小白", "กาแฟ")
            ]

    arun(write_the_old_way)
    assert arun(found) == [0, 0]
    terminal = SimpleNamespace(stderr=SimpleNamespace(isatty=lambda: True))
    monkeypatch.setattr(output, "sys", terminal)  # the running count shows on a terminal only
    done = cli("memories", "reindex", "--batch-size", "2")
    assert done.stdout == "3 memories reindexed\n"
    assert "memories reindexed: 2" in done.stderr and "memories reindexed: 3" in done.stderr
    assert arun(found) == [1, 1]
    assert cli("memories", "reindex").stdout == "3 memories reindexed\n"  # again: harmless
    bad = cli("memories", "reindex", "--text-search-language", "Not One", code=2)
    assert "--text-search-language" in bad.stderr
