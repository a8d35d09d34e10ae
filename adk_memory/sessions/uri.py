"""The session service's URI options: which query parameters a session service URI takes, the
environment variables that fill those it leaves out, and the `PostgresSessionService`
arguments and settings they mean.

Owns: the session column of the URI option table (the grammar is
`adk_memory/settings/uri.py`'s). It never builds the service and never connects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..settings.database import database_from
from ..settings.sessions import SessionSettings, session_settings
from ..settings.uri import (
    COMMON_OPTIONS,
    REPLICA_VARIABLES,
    TIMEOUT_VARIABLES,
    Parser,
    count,
    parse_service_uri,
    uri_connection_arguments,
)
from ..settings.variables import REDACT_ENV, SCHEMA_ENV, SESSION_TTL_ENV, parse_duration

SESSION_OPTIONS: Mapping[str, Parser] = {
    **COMMON_OPTIONS,
    "session_ttl": parse_duration,  # sessions idle longer than this are swept
    "event_cache_size": count(0),  # decoded events cached per process (0: off)
    "event_cache_bytes": count(0),  # what they may weigh, estimated (default 128 MiB; 0: off)
}
"""adk-memory's options for a session service URI."""

SESSION_VARIABLES: Mapping[str, str] = {
    "schema": SCHEMA_ENV,
    "session_ttl": SESSION_TTL_ENV,
    "redact": REDACT_ENV,
    **TIMEOUT_VARIABLES,
    **REPLICA_VARIABLES,
}
"""The environment variable each session option is read from when the URI leaves it out (the
variables `configure()` reads), so a URI and `configure()` in one environment agree."""


def session_arguments(
    uri: str, environ: Mapping[str, str] | None, engine_kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """The `PostgresSessionService` arguments a session service URI means; `engine_kwargs` go
    to `create_async_engine` (what ADK's `session_db_kwargs` carry), `environ` (default
    `os.environ`) is read for the password, the data directory and `SESSION_VARIABLES`."""
    target = parse_service_uri(uri, "session", SESSION_OPTIONS, SESSION_VARIABLES, environ)
    options = dict(target.options)
    settings = uri_connection_arguments(target, options, engine_kwargs)
    return {**settings, "redactor": options.pop("redact", None), **options}


def session_settings_from_uri(
    uri: str, environ: Mapping[str, str] | None, engine_kwargs: Mapping[str, Any]
) -> SessionSettings:
    """The `PostgresSessionService` settings a session service URI means (`session_arguments`,
    resolved as arguments written in code are: `adk_memory.settings.session_settings`)."""
    arguments = session_arguments(uri, environ, engine_kwargs)
    database = database_from(arguments, owner="PostgresSessionService", environ=environ)
    return session_settings(database, **arguments)
