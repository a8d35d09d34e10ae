"""`adk-memory memories import`: JSON lines (an export's) written back through `create_memories`,
a batch per run of one scope, every line checked before anything is written."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from test_cli import Cli, arun, assert_user_error, cli, services

from adk_memory.cli import ingest
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
