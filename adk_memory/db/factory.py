"""Building engines: the one way adk-memory turns a URL into an `AsyncEngine` bounded by
`DatabaseTimeouts` (`make_engine`), and the schema name every table lives in.

Owns: the engine's options that enforce the timeouts (client-side and server-side, the latter
left out behind a connection pooler) and the check of a schema name before it reaches SQL. It
never connects: the engine connects lazily, through the pool (`db/lending.py`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from ..config import DatabaseTimeouts
from ..errors import (
    InputValidationError,
)
from .urls import create_engine, parse_url

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

DEFAULT_SCHEMA = "adk_memory"
"""The Postgres schema holding every adk-memory table, so they never collide with ADK's own
`sessions`/`events` tables (or anything else) in a shared database."""


def validate_schema_name(schema: str) -> str:
    """Schema names end up in SQL text, so only plain lower-case identifiers are allowed."""
    if not isinstance(schema, str) or not _SCHEMA_NAME.match(schema):
        raise InputValidationError(
            f"Invalid schema name {schema!r}: use lower-case letters, digits and underscores."
        )
    return schema


CLIENT_MARGIN = timedelta(seconds=2)
"""How much longer than the statement timeout the client waits before giving up on a statement
itself (asyncpg's `command_timeout`): a live server reports its own timeout first (and the
connection is kept); a server that stopped answering is caught by the client's."""


def _engine_options(
    timeouts: DatabaseTimeouts,
    engine_kwargs: Mapping[str, Any] | None = None,
    *,
    pooled: bool = False,
) -> dict[str, Any]:
    """`create_async_engine` arguments that enforce `timeouts`, under `engine_kwargs` (which
    win: `pool_timeout`, and `connect_args` and its `server_settings` key by key).

    Behind a pooler (`pooled`) the server-side timeouts are not sent: they would travel as
    startup parameters, which PgBouncer refuses ("unsupported startup parameter") unless its
    `ignore_startup_parameters` lists them, and then drops. The client's bound
    (`command_timeout`, which cancels the statement through the pooler) still holds; a server
    bound is set on the role (`ALTER ROLE ... SET statement_timeout`, see the README)."""
    given = dict(engine_kwargs or {})
    connect_args = dict(given.pop("connect_args", None) or {})
    settings = dict(connect_args.pop("server_settings", None) or {})
    client: dict[str, Any] = {"timeout": _seconds(timeouts.connect)}
    server: dict[str, str] = {}
    if timeouts.statement is not None:
        client["command_timeout"] = _seconds(timeouts.statement + CLIENT_MARGIN)
        server["statement_timeout"] = _milliseconds(timeouts.statement)
    if timeouts.idle_in_transaction is not None:
        server["idle_in_transaction_session_timeout"] = _milliseconds(timeouts.idle_in_transaction)
    if pooled:
        server = {}
    return {
        "pool_timeout": timeouts.pool.total_seconds(),
        **given,
        "connect_args": {**client, **connect_args, "server_settings": {**server, **settings}},
    }


def _seconds(duration: timedelta | None) -> float | None:
    """A duration as asyncpg takes it: seconds, None for no limit."""
    return None if duration is None else duration.total_seconds()


def _milliseconds(duration: timedelta) -> str:
    """A duration as a Postgres time setting's value (milliseconds, at least 1: 0 means off)."""
    return str(max(1, round(duration.total_seconds() * 1000)))


def make_engine(
    url: str, timeouts: DatabaseTimeouts | None = None, **engine_kwargs: Any
) -> AsyncEngine:
    """An engine for `url` (`adk_memory.db.urls.create_engine`) bounded by `timeouts` (default
    `DatabaseTimeouts()`): the one way adk-memory builds an engine, and the way to build one to
    share between services. A `connect_timeout` in the URL wins over `timeouts.connect`."""
    pooled = parse_url(url).pooler is not None
    options = _engine_options(timeouts or DatabaseTimeouts(), engine_kwargs, pooled=pooled)
    return create_engine(url, **options)
