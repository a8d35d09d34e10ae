"""ADK sessions on PostgreSQL: ADK's `BaseSessionService` with durable sessions, events and
scoped state.

Owns: the session service (`PostgresSessionService`), its SQL (`store.py`: one named statement
per operation, `IdleSession` for the idle sweep), the JSON codec between ADK's `Event` and state
and the stored text (`codec.py`, `decoding.py`), read-your-writes on a read replica
(`freshness.py`) and the session URI's options (`uri.py`). Its names below resolve on first use,
so importing one module of this package never loads the service (and with it ADK).

It never imports `adk_memory.memory` or `adk_memory.adk` (memory reads sessions only through
ADK's `Session` and `Event` types), never changes a stored event's text once written, and never
writes a table outside its migrations in `db/migrations.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._faces import lazy_face

if TYPE_CHECKING:
    from .service import DEFAULT_EVENT_CACHE_BYTES, MAX_ID_LENGTH, PostgresSessionService
    from .store import IdleSession

__getattr__, __dir__ = lazy_face(__name__, __file__, globals())

__all__ = [
    "DEFAULT_EVENT_CACHE_BYTES",
    "MAX_ID_LENGTH",
    "IdleSession",
    "PostgresSessionService",
]
