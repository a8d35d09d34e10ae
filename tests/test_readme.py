"""The README, followed as a newcomer would: every Python block and every shell command that
needs no model key and no network runs, in the README's order, in one fresh directory (with a
copy of `samples/`) on the embedded PostgreSQL in its `./.adk/pgdata`, so a renamed flag, a
changed output or a step that no longer works fails here.

- Commands that serve (`adk-memory web`, `adk web`, `... api_server`) are started on a free
  port, must answer `/list-apps` (with agents, when given an agents directory), and are then
  stopped.
- Commands that need a model key (generating memories) are parsed, not run: their flags must
  exist (`--help` appended).
- Commands that need the network, or are this test suite itself, are skipped, and each one is
  listed below with the reason: a new one fails until it is listed.
- A `pip install` chain is run from after the install: the package is installed here already.
- A block right after `<!-- file: NAME -->` is a file the reader saves: it is written to NAME.

The other commands (`adk-memory ...` in shell steps) and the Python blocks each run in a process
of their own forked from one that imported the package, its command and ADK once
(`warm_commands`): importing them is most of what each one costs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import server_home
from warm_commands import install_clients

from adk_memory.cli.db import running_server, stop_server

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"

SKIPPED = {
    "pip wheel --no-deps -w dist ./adk-memory": "builds in an isolated environment, with "
    "setuptools from the package index (network)",
    "pytest": "runs this test suite (the suite itself)",
    'pip install "adk-memory[vertex]"': "installs from the package index (network)",
    "adk-memory import vertex --project my-project --location us-central1 --agent-engine "
    "1234567890 --sessions --app my_agent": "calls Vertex AI (network, credentials)",
    "adk-memory import vertex --project my-project --location us-central1 --agent-engine "
    "1234567890 --since 1d": "calls Vertex AI (network, credentials)",
}
"""Commands that are not run, and why."""

_SERVES = re.compile(r"^(adk-memory|adk) (web|api_server)\b")
_NEEDS_MODEL = re.compile(r"^adk-memory (worker|backfill(?!.*--dry-run))\b")
_HEREDOC = re.compile(r"<<-?\s*'?(\w+)'?")
_DEADLINE = 240.0
"""Seconds a server may take to answer (importing ADK and the agents on a loaded machine)."""


_FILE = re.compile(r"^<!-- file: (\S+) -->$")


@dataclass(frozen=True)
class Block:
    language: str
    text: str
    line: int
    file: str | None = None
    """Where the reader saves the block (the `<!-- file: NAME -->` line before it)."""


def _blocks() -> list[Block]:
    found: list[Block] = []
    lines = README.read_text().splitlines()
    start = language = None
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            if start is None:
                start, language = number, line[3:].strip()
            else:
                text = "\n".join(lines[start : number - 1])
                saved = _FILE.match(lines[start - 2]) if start >= 2 else None
                found.append(Block(language or "", text, start, saved and saved[1]))
                start = None
    return [b for b in found if b.language in ("bash", "python") or b.file]


def _commands(script: str) -> list[str]:
    """A shell block's commands: continuation lines joined, here-documents kept whole, comment
    lines dropped."""
    commands: list[str] = []
    lines = iter(script.splitlines())
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        while line.endswith("\\"):
            line = line[:-1] + next(lines)
        heredoc = _HEREDOC.search(line)
        if heredoc:
            body = []
            for more in lines:
                body.append(more)
                if more.strip() == heredoc[1]:
                    break
            line = "\n".join([line, *body])
        commands.append(line)
    return commands


def _after_install(command: str) -> str | None:
    """A `... && pip install ... && rest` chain from `rest` on (None if nothing follows)."""
    steps = [step.strip() for step in command.split("&&")]
    installs = [n for n, step in enumerate(steps) if step.startswith("pip install")]
    if not installs or command in SKIPPED:
        return command
    rest = steps[installs[-1] + 1 :]
    return " && ".join(rest) if rest else None


@dataclass(frozen=True)
class Step:
    kind: str  # "file", "python", "script", "serve", "parse" or "skip"
    command: str


def _steps(block: Block) -> list[Step]:
    if block.file:
        return [Step("file", block.text)]
    if block.language == "python":
        return [Step("python", block.text)]
    steps: list[Step] = []
    for raw in _commands(block.text):
        command = _after_install(raw)
        if command is None:
            continue
        if command in SKIPPED:
            kind = "skip"
        elif _SERVES.match(command):
            kind = "serve"
        elif _NEEDS_MODEL.match(command):
            kind = "parse"
        else:
            kind = "script"
        if kind == "script" and steps and steps[-1].kind == "script":
            # One shell for consecutive commands: variables and functions carry over.
            steps[-1] = Step("script", steps[-1].command + "\n" + command)
        else:
            steps.append(Step(kind, command))
    return steps


BLOCKS = _blocks()


def test_every_command_the_readme_test_does_not_run_is_listed() -> None:
    """Skipping is explicit: a new command needing the network fails until listed here."""
    skipped = {s.command for b in BLOCKS for s in _steps(b) if s.kind == "skip"}
    assert skipped == set(SKIPPED)
    kinds = [s.kind for b in BLOCKS for s in _steps(b)]
    assert kinds.count("serve") >= 3 and kinds.count("python") >= 10 and "script" in kinds


# ------------------------------------------------------------------------------------- running


def _environment(clients: Path | None = None) -> dict[str, str]:
    """The test's environment without model keys or adk-memory settings (the README's defaults
    apply), with this Python's scripts first on PATH (after `clients`, when given: the warm
    `adk-memory`)."""
    keep = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("ADK_MEMORY_", "GOOGLE_", "GEMINI_"))
    }
    keep["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{keep.get('PATH', '')}"
    if clients is not None:
        keep["PATH"] = f"{clients}{os.pathsep}{keep['PATH']}"
    return keep


@dataclass
class Workspace:
    path: Path
    holder: subprocess.Popen[str] | None = None
    warm: subprocess.Popen[str] | None = None

    @property
    def clients(self) -> Path:
        """Where the warm `adk-memory` and `warm-python` are (`warm_commands`)."""
        return self.path / ".warm"

    @property
    def address(self) -> str:
        return str(self.path / ".warm.sock")

    def start_warm(self) -> None:
        """Start the server the commands and scripts fork from, in the workspace, with the
        test's environment (`warm_ready` waits for it)."""
        self.warm = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("warm_commands.py")), self.address],
            cwd=self.path,
            env=_environment(),
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def warm_ready(self) -> None:
        assert self.warm is not None and self.warm.stdout is not None
        assert self.warm.stdout.readline() == "ready\n"
        install_clients(self.clients, self.address)

    @property
    def data_dir(self) -> str:
        return str(self.path / ".adk" / "pgdata")

    def hold_server(self) -> None:
        """Keep the embedded server up between steps, as the README's `adk-memory db up` does
        (a step may stop it: `adk-memory db stop`)."""
        if running_server(self.data_dir) is not None and self.holder is not None:
            return
        self.release()
        self.holder = subprocess.Popen(
            ["adk-memory", "db", "up"],
            cwd=self.path,
            env=_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert self.holder.stdout is not None
        assert self.holder.stdout.readline().startswith("postgresql://")

    def release(self) -> None:
        if self.holder is not None:
            _stop(self.holder)
            self.holder = None

    def stop_warm(self) -> None:
        if self.warm is not None:
            _stop(self.warm)
            self.warm = None


def _stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM to the process group, SIGKILL if it lingers; never waits forever."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)


@pytest.fixture(scope="module")
def workspace() -> Iterator[Workspace]:
    """A fresh directory (reachable by the embedded server's user when run as root) with a copy
    of `samples/`, as a checkout would have it; the embedded server is stopped afterwards."""
    with server_home() as home:
        ignore = shutil.ignore_patterns("__pycache__", ".adk")
        shutil.copytree(REPO / "samples", home / "samples", ignore=ignore)
        place = Workspace(home)
        try:
            place.start_warm()
            place.hold_server()  # while the warm server imports
            place.warm_ready()
            yield place
        finally:
            place.stop_warm()
            place.release()
            stop_server(place.data_dir)


def _run(args: list[str], workspace: Workspace, what: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args,
        cwd=workspace.path,
        env=_environment(workspace.clients),
        input="y\n" * 10,  # `adk-memory erase` asks first
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{what}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    return done


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _with_port(command: str, port: int) -> list[str]:
    """The command's words, with its port (or ADK's default) replaced by `port`."""
    words = shlex.split(command, comments=True)
    if "--port" in words:
        words[words.index("--port") + 1] = str(port)
    else:
        words = [w for w in words if not w.startswith("--port=")] + ["--port", str(port)]
    return words


def _serves(command: str, cwd: Path) -> list[str]:
    """Start a serving command, wait for `/list-apps` to answer, stop it; the apps listed."""
    port = _free_port()
    log = cwd / f"server-{port}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            _with_port(command, port),
            cwd=cwd,
            env=_environment(),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + _DEADLINE
        while True:
            assert process.poll() is None, f"{command} exited:\n{log.read_text()}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/list-apps", timeout=5) as r:
                    return list(json.load(r))
            except OSError:
                assert time.monotonic() < deadline, f"{command} never served:\n{log.read_text()}"
                time.sleep(0.5)
    finally:
        _stop(process)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"L{b.line}-{b.language}" for b in BLOCKS])
def test_readme_block(block: Block, workspace: Workspace) -> None:
    where = f"README.md line {block.line}"
    for step in _steps(block):
        if step.kind == "file":
            assert block.file is not None
            (workspace.path / block.file).write_text(step.command + "\n")
        elif step.kind == "python":
            script = workspace.path / f"readme_{block.line}.py"
            script.write_text(step.command)
            _run([str(workspace.clients / "warm-python"), str(script)], workspace, where)
        elif step.kind == "script":
            _run(["bash", "-c", "set -euo pipefail\n" + step.command], workspace, where)
        elif step.kind == "parse":
            words = shlex.split(step.command, comments=True)
            _run([*words, "--help"], workspace, f"{where}: {step.command}")
        elif step.kind == "serve":
            apps = _serves(step.command, workspace.path)
            words = shlex.split(step.command, comments=True)
            if any((workspace.path / word).is_dir() for word in words[2:]):  # AGENTS_DIR given
                assert apps, f"{where}: {step.command} serves no agent"
        workspace.hold_server()
