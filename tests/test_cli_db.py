"""`adk-memory db up|url|status|stop` on an embedded server of its own (a temporary data
directory, always stopped): the one test that starts a second server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from adk_memory.cli import main
from adk_memory.cli.db import NOT_RUNNING_EXIT, stop_server


@pytest.fixture
def data_dir(server_dir: Path) -> Iterator[str]:
    path = str(server_dir / "pgdata")
    yield path
    stop_server(path)  # whatever the test did


def db(*args: str, data_dir: str) -> Result:
    return CliRunner().invoke(main, ["db", *args, "--data-dir", data_dir])


def test_db_up_url_status_and_stop(data_dir: str) -> None:
    down = db("status", data_dir=data_dir)
    assert down.exit_code == NOT_RUNNING_EXIT and down.stdout.startswith("not running")
    assert db("url", data_dir=data_dir).exit_code == 1
    assert db("stop", data_dir=data_dir).stdout == "not running\n"

    up = subprocess.Popen(
        [sys.executable, "-m", "adk_memory.cli", "db", "up", "--data-dir", data_dir],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "ADK_MEMORY_DATA_DIR"},
    )
    try:
        assert up.stdout is not None
        url = up.stdout.readline().strip()
        assert url.startswith("postgresql://"), up.stderr.read() if up.stderr else ""
        assert db("url", data_dir=data_dir).stdout.strip() == url
        running = db("status", data_dir=data_dir)
        assert running.exit_code == 0 and running.stdout.startswith("running (pid ")

        # `stop` works whoever holds the server (here: the `db up` process).
        assert db("stop", data_dir=data_dir).stdout == "stopped\n"
        assert db("status", data_dir=data_dir).exit_code == NOT_RUNNING_EXIT
        up.send_signal(signal.SIGTERM)
        _, err = up.communicate(timeout=60)
        assert up.returncode == 0 and "Stopped." in err
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
