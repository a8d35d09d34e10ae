"""Settings: arguments, then the `ADK_MEMORY_*` environment, then defaults, resolved once.

Owns: the one resolver every entry point builds its services through (a service's
constructor, ADK's spellings and registry factories, the service URIs, `configure()`, the
`adk-memory` command and its worker), producing typed, frozen settings:

- `variables`: every environment variable's name, the parsers of their values, and the only
  read of the process's environment (`environment()`);
- `uri`: the grammar of a service URI (`adk-memory://`, `postgresql://` with their query
  options) and the options both services share;
- `database`: `DatabaseSettings`, and `database_settings` resolving a service's database
  arguments (ADK's `db_url` / `db_engine` / engine options included);
- `sessions`: `SessionSettings`, the session service's;
- `stack`: `StackSettings`, what `configure()` reads (its database, TTLs, redactor, models);
- `identity`: `IdentitySettings`, what the HTTP front ends verify (`ADK_MEMORY_AUTH*`).

It sits beside `db/` and below `memory/`, `sessions/` and `adk/` (which build from it), so the
services users construct directly resolve exactly as `configure()` does. It never connects,
builds a service or calls a model. Names load on first use: `adk-memory db ...` reads a
variable's name without importing SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._faces import lazy_face

if TYPE_CHECKING:
    from .database import DatabaseSettings, command_database, database_settings, embedded_url
    from .identity import IdentitySettings, identity_settings
    from .sessions import SessionSettings, session_settings
    from .stack import StackSettings, stack_settings
    from .uri import collect_services, parse_service_uri
    from .variables import chosen, environment

__getattr__, __dir__ = lazy_face(__name__, __file__, globals())

__all__ = [
    "DatabaseSettings",
    "IdentitySettings",
    "SessionSettings",
    "StackSettings",
    "chosen",
    "collect_services",
    "command_database",
    "database_settings",
    "embedded_url",
    "environment",
    "identity_settings",
    "parse_service_uri",
    "session_settings",
    "stack_settings",
]
