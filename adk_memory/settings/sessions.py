"""The session service's settings, resolved once into typed, frozen settings.

Owns: `SessionSettings` (its database, redactor, session TTL and event cache) and
`session_settings`, which `PostgresSessionService` builds itself from, whether its arguments
came from code (ADK's spellings included) or from a session service URI
(`adk_memory.sessions.uri`), so both paths check them alike. It never connects and never
builds the service.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from ..errors import InputTypeError, InputValidationError
from ..redaction import Redactor
from .database import DatabaseSettings

__all__ = [
    "DEFAULT_EVENT_CACHE_BYTES",
    "DEFAULT_EVENT_CACHE_SIZE",
    "SessionSettings",
    "session_settings",
]

DEFAULT_EVENT_CACHE_SIZE = 10_000
"""Decoded events a session service caches per process by default (see `codec.EventCache`)."""

DEFAULT_EVENT_CACHE_BYTES = 128 * 2**20
"""The decoded-event cache's default weight limit (see `codec.EventCache`)."""


@dataclass(frozen=True)
class SessionSettings:
    """A `PostgresSessionService`'s settings (its docstring says what each means)."""

    database: DatabaseSettings
    redactor: Redactor | None = None
    session_ttl: timedelta | None = None
    event_cache_size: int = DEFAULT_EVENT_CACHE_SIZE
    event_cache_bytes: int = DEFAULT_EVENT_CACHE_BYTES


def session_settings(
    database: DatabaseSettings,
    *,
    redactor: Redactor | None = None,
    session_ttl: timedelta | None = None,
    event_cache_size: int = DEFAULT_EVENT_CACHE_SIZE,
    event_cache_bytes: int = DEFAULT_EVENT_CACHE_BYTES,
) -> SessionSettings:
    """The session service's settings on `database` (`database_settings`); a session TTL that
    is not positive is refused (InputValidationError), one that is no `timedelta` too
    (InputTypeError, a TypeError as the comparison's was)."""
    if session_ttl is not None and not isinstance(session_ttl, timedelta):
        raise InputTypeError(
            f"session_ttl must be a datetime.timedelta, not {type(session_ttl).__name__}."
        )
    if session_ttl is not None and session_ttl <= timedelta(0):
        raise InputValidationError("session_ttl must be a positive duration.")
    return SessionSettings(database, redactor, session_ttl, event_cache_size, event_cache_bytes)
