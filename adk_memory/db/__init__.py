"""The database layer: URLs, engines and pools, the embedded PostgreSQL server, and migrations.

Owns: the one URL parser (`urls.py`), engines and the `Database` a service holds (`engine.py`,
`loops.py`), what the driver's failures mean (`driver.py`), the embedded PostgreSQL 18 +
pgvector server (`embedded.py`, `server_user.py`, `standby.py`), read-replica health
(`replica.py`), every piece of DDL as an append-only migration (`migrations.py`,
`memory_migrations.py`, `vectors.py`), and row-level security (`rls.py`: the gates and
policies; `enforcement.py`: whether it is in force; `owner.py`: the embedded server's
non-superuser owner; `roles.py`).
Its names below resolve on first use: `adk-memory db status` reads a pid file through
`embedded.py` and must not load SQLAlchemy on the way.

It knows nothing of ADK, sessions or memories: it never imports `adk_memory.adk`,
`adk_memory.memory` or `adk_memory.sessions`, and never reads or writes their rows (the stores
do, with its connections). No DDL lives anywhere else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._faces import lazy_face

if TYPE_CHECKING:
    from .embedded import embedded_url, stop_embedded, temporary_server
    from .engine import DEFAULT_SCHEMA, Database, make_engine
    from .migrations import current_version, migrate
    from .urls import normalise_url, parse_url

__getattr__, __dir__ = lazy_face(__name__, __file__, globals())

__all__ = [
    "DEFAULT_SCHEMA",
    "Database",
    "current_version",
    "embedded_url",
    "make_engine",
    "migrate",
    "normalise_url",
    "parse_url",
    "stop_embedded",
    "temporary_server",
]
