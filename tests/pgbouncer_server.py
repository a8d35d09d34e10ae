"""A throwaway PgBouncer in front of the test server, for the pooler tests.

Owns: writing an ini for one pool mode (transaction or session) that points at the test
server's Unix socket, starting Debian's `pgbouncer` as a subprocess on 127.0.0.1 and a free
port (as the embedded server's system user when this process is root: PgBouncer refuses to
run as root), waiting until it accepts connections, and stopping it. It never installs
PgBouncer (`.ci/run` does): a machine without it skips the tests that need it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from adk_memory.db.embedded import SERVER_USER, running_as_root

BINARY = shutil.which("pgbouncer") or next(
    (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.access(p, os.X_OK)), None
)
"""Debian's `pgbouncer` (in /usr/sbin, often off a user's PATH), or None."""

_START = 30.0
"""Seconds PgBouncer may take to accept connections on a loaded machine."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _server(url: str) -> tuple[str, int, str, str]:
    """Host (a Unix-socket directory or a host name), port, user and database of `url`."""
    parts = urlsplit(url)
    host = parse_qs(parts.query).get("host", [parts.hostname or "127.0.0.1"])[0]
    return host, parts.port or 5432, parts.username or "postgres", parts.path.lstrip("/")


@contextmanager
def pgbouncer(
    server_url: str, mode: str, pool_size: int = 10, ignore_startup_parameters: str = ""
) -> Iterator[str]:
    """PgBouncer in `mode` (transaction or session) in front of `server_url` (the test
    server: trust authentication, as the embedded server has): its `postgresql://` URL.
    `ignore_startup_parameters`: PgBouncer's setting (by default it refuses any startup
    parameter it does not track)."""
    assert BINARY is not None, "pgbouncer is not installed"
    host, port, user, database = _server(server_url)
    listen = _free_port()
    home = Path(tempfile.mkdtemp(prefix="adk-memory-pgbouncer-"))
    (home / "userlist.txt").write_text(f'"{user}" ""\n')
    (home / "pgbouncer.ini").write_text(
        f"""[databases]
{database} = host={host} port={port} dbname={database}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen}
unix_socket_dir =
auth_type = trust
auth_file = {home / "userlist.txt"}
pool_mode = {mode}
default_pool_size = {pool_size}
max_client_conn = 500
logfile = {home / "pgbouncer.log"}
pidfile = {home / "pgbouncer.pid"}
ignore_startup_parameters = {ignore_startup_parameters}
"""
    )
    options: dict[str, Any] = {}
    if running_as_root():
        import pwd

        account = pwd.getpwnam(SERVER_USER)
        home.chmod(0o700)
        for path in (home, *home.iterdir()):
            os.chown(path, account.pw_uid, account.pw_gid)
        options["user"] = SERVER_USER
    process = subprocess.Popen(
        [BINARY, str(home / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        **options,
    )
    try:
        deadline = time.monotonic() + _START
        while True:
            try:
                socket.create_connection(("127.0.0.1", listen), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log = home / "pgbouncer.log"
                    raise RuntimeError(
                        "pgbouncer did not start: "
                        f"{process.stderr.read().decode() if process.stderr else ''}"
                        f"{log.read_text() if log.exists() else ''}"
                    ) from None
                time.sleep(0.05)
        yield f"postgresql://{user}@127.0.0.1:{listen}/{database}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
        shutil.rmtree(home, ignore_errors=True)
