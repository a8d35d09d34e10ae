"""Database URLs: the one parser every path uses.

Owns: reading the PostgreSQL URLs users write, in the spellings hosted providers hand out
(libpq's query parameters such as `sslmode`, `sslrootcert`, `options`, `application_name`,
`connect_timeout`, `target_session_attrs`; IPv6 hosts; Cloud SQL's Unix socket in `?host=`;
several hosts as repeated `host=`), checking them, and translating them into what SQLAlchemy's
asyncpg dialect and asyncpg take: a URL and `connect_args`, including what a connection pooler
in front of the server needs (`?pooler=`, or recognised from a hosted pooler's address): no
named prepared statements behind a transaction-mode pooler. `PostgresSessionService(url)`,
`PostgresMemoryService(url)`, `configure()`, `$ADK_MEMORY_DATABASE_URL`, every `--database-url`,
the worker and the service URIs all come through here, so a URL means the same on every path.

It never connects and never opens the files a URL names (asyncpg reads the certificates when it
connects), and an error message never shows a password.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode
from uuid import uuid4

from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from ..durations import parse_timeout
from ..errors import InputValidationError

SCHEMES = ("postgresql", "postgres", "postgresql+asyncpg")
"""The schemes accepted; every one of them means asyncpg."""

SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
TARGET_SESSION_ATTRS = ("any", "primary", "standby", "prefer-standby", "read-write", "read-only")
POOLERS = ("transaction", "session", "none")
"""`?pooler=`: a pooler in transaction mode (PgBouncer's `pool_mode = transaction`, Supabase's
port 6543, Neon's `-pooler` hosts, Cloud SQL managed pooling in transaction mode), one in
session mode, or none (a direct connection, whatever the address looks like)."""

_HOST = ("host", "port")
"""Left in the URL: SQLAlchemy's asyncpg dialect reads them (a Unix-socket directory in `host`,
several servers as `host=a:5432&host=b:5432`)."""

_SSL = ("sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword", "sslnegotiation")
"""Handed to asyncpg as a DSN, the only way it takes certificate paths: asyncpg implements
libpq's rules for them (the modes, `~/.postgresql/root.crt` and the `PGSSL*` variables as
defaults, `prefer` and `allow` falling back), so they mean exactly what they mean to libpq."""

_SETTINGS = ("application_name", "options")
"""Sent in the startup packet, as libpq sends them: the server itself reads `options`
(`-c search_path=app`, or a proxy's own, such as Neon's `endpoint=...`)."""

_DIALECT = PGDialect_asyncpg()

PARAMETERS: Mapping[str, str] = {
    "host": "host name, IP address or Unix-socket directory (/cloudsql/PROJECT:REGION:INSTANCE)",
    "port": "server port",
    "sslmode": "disable, allow, prefer, require, verify-ca or verify-full",
    "ssl": "asyncpg's name for sslmode",
    "sslrootcert": "CA certificate file to verify the server with",
    "sslcert": "client certificate file",
    "sslkey": "client key file",
    "sslpassword": "password of the client key",
    "sslnegotiation": "postgres or direct (TLS without the SSLRequest round trip)",
    "options": "server options, e.g. -c search_path=app",
    "application_name": "shown in pg_stat_activity",
    "connect_timeout": "seconds (or a duration: 10s) to wait for a connection; 0: no limit",
    "target_session_attrs": ", ".join(TARGET_SESSION_ATTRS),
    "channel_binding": "disable or prefer (asyncpg does no channel binding)",
    "pooler": "transaction, session or none: the connection pooler in front of the server",
}
"""Every query parameter a database URL may carry (libpq's names), and what it means."""


@dataclass(frozen=True)
class ParsedUrl:
    """A database URL as SQLAlchemy and asyncpg take it."""

    url: URL
    """`postgresql+asyncpg://`, with only `host` and `port` left in its query."""
    connect_args: dict[str, Any]
    """asyncpg's `connect()` arguments for the other parameters (SQLAlchemy's `connect_args`)."""
    pooler: str | None = None
    """The pooler in front of the server: "transaction", "session", or None (none)."""


def parse_url(url: str) -> ParsedUrl:
    """Check `url` and translate its parameters; InputValidationError says what is wrong (an
    unknown parameter is named, with the accepted ones)."""
    return _translate(_parse(url))


def normalise_url(url: str) -> str:
    """`url` checked (`parse_url`) and with the asyncpg driver named, its parameters kept: the
    form to store and pass on, which `create_engine` turns into an engine.

    ADK's own factory would hand a plain `postgresql://` URL to a synchronous driver; here every
    accepted spelling means asyncpg.
    """
    parsed = _parse(url)
    _translate(parsed)
    return parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def _translate(parsed: URL) -> ParsedUrl:
    params = _parameters(parsed)
    connect_args: dict[str, Any] = {}
    ssl = {name: params[name] for name in _SSL if name in params}
    if ssl:
        connect_args["dsn"] = f"postgresql://?{urlencode(ssl)}"
    settings = {name: params[name] for name in _SETTINGS if name in params}
    if settings:
        connect_args["server_settings"] = settings
    if "connect_timeout" in params:
        timeout = parse_timeout(params["connect_timeout"])
        connect_args["timeout"] = None if timeout is None else timeout.total_seconds()
    if "target_session_attrs" in params:
        connect_args["target_session_attrs"] = params["target_session_attrs"]
    pooler = _pooler(parsed, params.get("pooler"))
    if pooler == "transaction":
        connect_args.update(_NO_NAMED_STATEMENTS)
    host = {name: value for name, value in parsed.query.items() if name in _HOST}
    translated = parsed.set(drivername="postgresql+asyncpg", query=host)
    try:  # the host and port exactly as the engine will read them
        _DIALECT.create_connect_args(translated)
    except (ArgumentError, ValueError) as exc:
        raise InputValidationError(f"Invalid host or port in the database URL: {exc}") from exc
    return ParsedUrl(translated, connect_args, pooler)


def _statement_name() -> str:
    """A prepared statement name no other client of a pooled server connection uses."""
    return f"__asyncpg_{uuid4().hex}__"


_NO_NAMED_STATEMENTS: Mapping[str, Any] = {
    "statement_cache_size": 0,
    "prepared_statement_cache_size": 0,
    "prepared_statement_name_func": _statement_name,
}
"""`connect_args` for a transaction-mode pooler, which hands each transaction whichever server
connection is free: a named prepared statement made on one is missing on the next
(`InvalidSQLStatementNameError`) or another client's is there already. asyncpg then sends
every statement unnamed, parsed and run in one go (`statement_cache_size`); SQLAlchemy's
dialect, which prepares inside its own transactions, caches none and names each one afresh
(`prepared_statement_*`, its documented settings for PgBouncer)."""

_TRANSACTION_PORTS = (6543, 6432)
"""Ports read as a transaction-mode pooler: Supabase's (Supavisor) transaction pooler, and
PgBouncer's default port (in either of its modes it refuses the server settings a direct
connection sends; what transaction mode needs is right in session mode too)."""


def _pooler(parsed: URL, given: str | None) -> str | None:
    """The pooler `?pooler=` names, else the one the address is known to be: Supabase's
    transaction port, PgBouncer's default port, Neon's pooled (`-pooler`) endpoints,
    Supabase's session-mode pooler host. None: a direct connection (or a pooler not
    recognised, which `?pooler=` names, or the engine notices: `db/poolers.py`)."""
    if given is not None:
        return None if given == "none" else given
    host = (parsed.host or "").lower()
    if parsed.port in _TRANSACTION_PORTS or "-pooler." in host:
        return "transaction"
    if host.endswith(".pooler.supabase.com"):
        return "session"
    return None


def pooler_of(engine: AsyncEngine) -> str | None:
    """The pooler `create_engine` read in the URL of `engine` ("transaction" or "session"), or
    None: a direct connection, or an engine built some other way."""
    return _POOLERS.get(engine)


_POOLERS: weakref.WeakKeyDictionary[AsyncEngine, str] = weakref.WeakKeyDictionary()
"""The pooler behind each engine `create_engine` built for one (their URLs no longer say)."""


def create_engine(url: str, **engine_kwargs: Any) -> AsyncEngine:
    """An `AsyncEngine` for `url` with its parameters translated (`parse_url`); `engine_kwargs`
    go to SQLAlchemy's `create_async_engine`. `connect_args` given there are defaults the URL's
    parameters override, one by one (server settings too): the URL is where a deployment says
    how to reach its database, e.g. a `connect_timeout` beside the package's default one."""
    parsed = parse_url(url)
    given = dict(engine_kwargs.pop("connect_args", None) or {})
    settings = {
        **given.get("server_settings", {}),
        **parsed.connect_args.get("server_settings", {}),
    }
    connect_args = {**given, **parsed.connect_args}
    if settings:
        connect_args["server_settings"] = settings
    engine = create_async_engine(parsed.url, connect_args=connect_args, **engine_kwargs)
    if parsed.pooler is not None:
        _POOLERS[engine] = parsed.pooler
    return engine


def _redact(url: str) -> str:
    """The URL with any password hidden, for error messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return "<unparseable URL>"


def _parse(url: str) -> URL:
    if not isinstance(url, str) or not url.strip():
        raise InputValidationError("The database URL must be a non-empty string.")
    try:
        parsed = make_url(url.strip())
    except ArgumentError as exc:
        raise InputValidationError(f"Not a database URL: {_redact(url)!r}.") from exc
    except ValueError as exc:  # the port is not a number (SQLAlchemy's only ValueError)
        raise InputValidationError(
            "The port in the database URL is not a number (several hosts go in the query: "
            "?host=a:5432&host=b:5432)."
        ) from exc
    if parsed.drivername not in SCHEMES:
        raise InputValidationError(
            f"Unsupported database URL scheme {parsed.drivername!r}: adk-memory needs PostgreSQL "
            "(postgresql://, postgres:// or postgresql+asyncpg://)."
        )
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise InputValidationError(f"Port {parsed.port} in the database URL is out of range.")
    return parsed


def _parameters(parsed: URL) -> dict[str, str]:
    """The query parameters, each checked, `ssl` spelled `sslmode`; only `host` and `port` may
    repeat (several servers)."""
    found: dict[str, str] = {}
    for name, values in parsed.query.items():
        if name not in PARAMETERS:
            raise InputValidationError(
                f"Unknown parameter {name!r} in the database URL. Accepted: "
                f"{', '.join(PARAMETERS)}."
            )
        many = values if isinstance(values, tuple) else (values,)
        if len(many) > 1 and name not in _HOST:
            raise InputValidationError(f"The database URL repeats {name!r}.")
        check = _CHECKS.get(name)
        for value in many:
            problem = check(value) if check is not None else None
            if problem:
                raise InputValidationError(
                    f"Invalid {name}={value!r} in the database URL: {problem}."
                )
        found[name] = many[-1]
    if "ssl" in found:
        if "sslmode" in found:
            raise InputValidationError("The database URL sets both ssl and sslmode.")
        found["sslmode"] = found.pop("ssl")
    return found


def _one_of(*allowed: str) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        return None if value in allowed else f"expected one of {', '.join(allowed)}"

    return check


def _timeout(value: str) -> str | None:
    try:
        parse_timeout(value)
    except ValueError as exc:
        return f"{exc}, or 0 for no limit"
    return None


def _channel_binding(value: str) -> str | None:
    if value == "require":
        return (
            "asyncpg, the driver adk-memory uses, does no channel binding; drop the parameter "
            "(or use prefer), and verify the server with sslmode=verify-full instead"
        )
    return _one_of("disable", "prefer")(value)


_CHECKS: dict[str, Callable[[str], str | None]] = {
    "sslmode": _one_of(*SSL_MODES),
    "ssl": _one_of(*SSL_MODES),
    "sslnegotiation": _one_of("postgres", "direct"),
    "connect_timeout": _timeout,
    "target_session_attrs": _one_of(*TARGET_SESSION_ATTRS),
    "channel_binding": _channel_binding,
    "pooler": _one_of(*POOLERS),
}
"""How the values of parameters with a fixed form are checked: a problem is a phrase for the
error message, None when the value is fine. (An empty value never gets here: like libpq, the
URL parser takes `name=` as not given.)"""
