"""One database per process: ADK's services built from URIs and the agents' own stacks agree.

Owns: remembering which database the services ADK builds from a `--session_service_uri` /
`--memory_service_uri` use (`adk web`, `adk api_server`, `adk run` on adk-memory's schemes) and
which the agents' `configure()` stacks use, handing ADK's to a `configure()` that names no
database of its own (so `adk web --session_service_uri postgresql://...` keeps memory beside
the sessions instead of starting the embedded server), and a WARNING whenever two different
databases end up in use by ADK's services and the agents' stacks in one process (e.g. `adk
run`, which imports the agent before it builds the services, or an `$ADK_MEMORY_DATABASE_URL`
that is not the URI's), naming both.

It never connects and never builds a service. A URL it keeps may hold a password (taken from
the environment as on every path): it stays in this process's memory and is never shown (the
warning renders URLs without it).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Where:
    """A database as a service sees it: a server URL, or the embedded server's data directory,
    and the schema of the tables."""

    url: str | None
    data_dir: str | None
    schema: str

    def _identity(self) -> tuple[str, str]:
        """How it is shown: the server, role and database without the password (or the data
        directory as given), and the schema."""
        if self.url is None:
            return (f"embedded:{self.data_dir}", self.schema)
        try:
            shown = make_url(self.url).set(password=None).render_as_string()
        except (ArgumentError, ValueError):
            shown = "<unparseable URL>"
        return (shown, self.schema)

    def same_as(self, other: Where) -> bool:
        """Whether both are the same tables. A data directory is compared by its real path:
        as root, `./.adk/pgdata` becomes a link to the data kept under `/var/lib/adk-memory`,
        and one service may hold the link while another holds its target."""
        return self._key() == other._key()

    def _key(self) -> tuple[str, str]:
        if self.url is None and self.data_dir is not None:
            return (f"embedded:{os.path.realpath(self.data_dir)}", self.schema)
        return self._identity()

    def __str__(self) -> str:
        where, schema = self._identity()
        where = where.replace("embedded:", "the embedded server in ", 1)
        return f"{where} (schema {schema})"


_adk: Where | None = None
"""The database of the first service ADK built from a URI in this process."""

_used: list[tuple[str, Where, bool]] = []
"""Who uses which database in this process, and whether ADK built it, for the warning (one
entry per database and kind)."""


def adk_database() -> Where | None:
    """The database ADK's services use, when ADK built one from a URI in this process."""
    return _adk


def uses(who: str, where: Where, *, adk: bool = False) -> None:
    """Record that `who` (words for the log) uses `where`; WARNING if ADK's services and an
    agent's stack use different databases in this process (two stacks of a program's own on
    two databases are its choice, not a split). `adk`: the service was built by ADK from a URI
    (the first such one is what `adk_database()` hands to `configure()`)."""
    global _adk
    if adk and _adk is None:
        _adk = where
    others = [
        (name, seen) for name, seen, by_adk in _used if by_adk != adk and not seen.same_as(where)
    ]
    if others:
        name, seen = others[0]
        logger.warning(
            "Two databases in one process: %s uses %s, but %s uses %s. Sessions and memories "
            "are then split between them: give both the same database (the same URI, or "
            "$ADK_MEMORY_DATABASE_URL), or run `adk-memory web` / `adk-memory api_server`, "
            "which set both.",
            who,
            where,
            name,
            seen,
        )
    if not any(seen.same_as(where) and by_adk == adk for _, seen, by_adk in _used):
        _used.append((who, where, adk))
