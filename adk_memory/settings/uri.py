"""Service URIs: the one parser every path that builds a service from a URI goes through.

Owns: the grammar of a session or memory service URI (the schemes, where a URI points: a
driver URL or the embedded server's data directory), splitting its query into the service's
options (parsed by the tables `sessions/uri.py` and `memory/service/uri.py` give) and the driver's
parameters, filling the options a URI leaves out from the `ADK_MEMORY_*` environment, the
password taken from the environment, the pool settings, what ADK's factories pass besides the
URI, and gathering the services built from URIs for `collect_services()`.

The paths: ADK's service registry (`adk_memory.adk.services.register`), a `services.yaml`
naming `PostgresSessionService` / `PostgresMemoryService` (ADK constructs them with `uri=`),
and `session_service_from_uri` / `memory_service_from_uri` in code. It never builds a service,
never connects and never calls a model; the only environment it reads is the one it is given,
else the process's (`adk_memory.settings.variables.environment`).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qsl, urlsplit

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from ..config import DatabaseTimeouts
from ..db.urls import PARAMETERS, normalise_url
from ..errors import InputValidationError
from .variables import (
    CONNECT_TIMEOUT_ENV,
    POOL_TIMEOUT_ENV,
    READ_DATABASE_URL_ENV,
    STATEMENT_TIMEOUT_ENV,
    boolean,
    embedded_data_dir,
    environment,
    from_environ,
    parse_duration,
    parse_redact,
    parse_timeout,
    with_database_password,
)

__all__ = [
    "ADK_AGENTS_DIR",
    "COMMON_OPTIONS",
    "DATABASE_SCHEMES",
    "DRIVER_PARAMETERS",
    "EMBEDDED_SCHEME",
    "REPLICA_VARIABLES",
    "SCHEMES",
    "TIMEOUT_OPTIONS",
    "TIMEOUT_VARIABLES",
    "Parser",
    "ServiceTarget",
    "announce",
    "boolean",
    "check_uri_alone",
    "choice",
    "collect_services",
    "count",
    "number",
    "parse_service_uri",
    "read_url",
    "text",
    "uri_connection_arguments",
    "without_agents_dir",
]

DATABASE_SCHEMES = ("postgresql", "postgres", "postgresql+asyncpg")
"""Schemes naming a PostgreSQL server. ADK registers `postgresql` itself (for its own
`DatabaseSessionService`, on SQLAlchemy's default PostgreSQL driver: ADK's tables, or an error
when that driver is not installed); `register()` replaces it."""

EMBEDDED_SCHEME = "adk-memory"
"""The embedded PostgreSQL: `adk-memory://`, optionally `?data_dir=...`."""

SCHEMES = (*DATABASE_SCHEMES, EMBEDDED_SCHEME)

DRIVER_PARAMETERS = tuple(PARAMETERS)
"""Query parameters that describe the connection (libpq's: `sslmode`, `host` naming a Unix
socket, ...), read by `adk_memory.db.urls` as on every other path."""

ADK_AGENTS_DIR = "agents_dir"
"""What ADK's factories pass every service besides the URI. The data directory deliberately
ignores it (see `embedded_data_dir`), so `adk web` and `configure()` run from one place share a
database."""

Parser = Callable[[str], object]
"""Turns a query parameter's text into the option's value; raises ValueError saying what it
expected."""


def count(minimum: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        if not re.fullmatch(r"\d+", raw) or int(raw) < minimum:
            raise ValueError(f"expected a whole number of at least {minimum}")
        return int(raw)

    return parse


def choice(*allowed: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return raw

    return parse


def number(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("expected a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("expected a finite number")
    return value


def text(raw: str) -> str:
    if not raw.strip():
        raise ValueError("expected a non-empty value")
    return raw


def read_url(raw: str) -> str:
    """A read replica's database URL (percent-encoded inside a service URI's query)."""
    if urlsplit(raw).scheme not in DATABASE_SCHEMES:
        raise ValueError(
            f"expected a database URL ({', '.join(s + '://' for s in DATABASE_SCHEMES)})"
        )
    return normalise_url(raw)


COMMON_OPTIONS: Mapping[str, Parser] = {
    "schema": text,  # Postgres schema holding the tables (default adk_memory)
    "pool_size": count(1),  # connections this service's pool keeps open
    "max_overflow": count(0),  # extra connections allowed under load
    "auto_migrate": boolean,  # create/upgrade the tables on first use (default true)
    # pii: e-mails, phone, card and IBAN numbers redacted before they are stored or sent to a
    # model (the memory service: memories, raw events, jobs, generation); none: off (default)
    "redact": parse_redact,
    # how long a call waits on the database (DatabaseTimeouts): durations, none/0 for no limit
    "statement_timeout": parse_timeout,  # one statement (default 30s)
    "connect_timeout": parse_timeout,  # opening a connection (default 10s; libpq's name)
    "pool_timeout": parse_duration,  # a free pooled connection (default 30s)
    "read_url": read_url,  # a read replica: searches, listings, session reads (README)
}
"""The options both services take."""

TIMEOUT_OPTIONS: Mapping[str, str] = {
    "statement_timeout": "statement",
    "connect_timeout": "connect",
    "pool_timeout": "pool",
}
"""The timeout options, by the `DatabaseTimeouts` field each sets."""

TIMEOUT_VARIABLES: Mapping[str, str] = {
    "statement_timeout": STATEMENT_TIMEOUT_ENV,
    "connect_timeout": CONNECT_TIMEOUT_ENV,
    "pool_timeout": POOL_TIMEOUT_ENV,
}
"""The environment variable each timeout option is read from when the URI leaves it out."""

REPLICA_VARIABLES: Mapping[str, str] = {"read_url": READ_DATABASE_URL_ENV}
"""The environment variable the read replica's URL is read from when the URI leaves it out."""

_EMBEDDED_OPTIONS: Mapping[str, Parser] = {"data_dir": text}


@dataclass(frozen=True)
class ServiceTarget:
    """Where a URI points: a driver URL (options and secrets resolved) or the embedded server,
    and the service's options (the URI's, else the environment's)."""

    url: str | None
    data_dir: str | None
    options: dict[str, Any]


def _split_query(
    kind: str, scheme: str, pairs: list[tuple[str, str]], options: Mapping[str, Parser]
) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
    """Our options (parsed) and the connection's parameters (as given, checked by the URL
    parser); anything else is an error naming every accepted parameter, so a typo never
    silently falls through to the driver."""
    driver = () if scheme == EMBEDDED_SCHEME else DRIVER_PARAMETERS
    ours: dict[str, Any] = {}
    passed: dict[str, tuple[str, ...]] = {}
    for name, raw in pairs:
        if name in ours:
            raise InputValidationError(f"The {kind} service URI repeats {name!r}.")
        if name in options:
            try:
                ours[name] = options[name](raw)
            except ValueError as exc:
                raise InputValidationError(
                    f"Invalid {name}={raw!r} in the {kind} service URI: {exc}."
                ) from exc
        elif name in driver:
            passed[name] = (*passed.get(name, ()), raw)
        else:
            accepted = ", ".join(sorted(options))
            through = f"; passed to the driver: {', '.join(driver)}" if driver else ""
            raise InputValidationError(
                f"Unknown parameter {name!r} in the {kind} service URI ({scheme}://). "
                f"Accepted: {accepted}{through}."
            )
    return ours, passed


def parse_service_uri(
    uri: str,
    kind: str,
    options: Mapping[str, Parser],
    variables: Mapping[str, str],
    environ: Mapping[str, str] | None,
) -> ServiceTarget:
    """Where `uri` points and its options: those the URI gives, else those `variables` name in
    `environ` (default `os.environ`; parsed alike, a bad value is an error naming the
    variable). `kind` ("session", "memory") names the service in errors."""
    environ = environment(environ)
    if not isinstance(uri, str) or "://" not in uri:
        raise InputValidationError(f"Not a {kind} service URI: {uri!r}.")
    parts = urlsplit(uri)
    scheme = parts.scheme
    if scheme == EMBEDDED_SCHEME:
        if parts.netloc or parts.path not in ("", "/"):
            raise InputValidationError(
                f"{EMBEDDED_SCHEME}:// names the embedded server and takes no host or path; "
                f"choose its data directory with {EMBEDDED_SCHEME}://?data_dir=/path."
            )
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        ours, _ = _split_query(kind, scheme, pairs, {**options, **_EMBEDDED_OPTIONS})
        data_dir = str(embedded_data_dir(ours.pop("data_dir", None), environ))
        return ServiceTarget(None, data_dir, _with_environment(ours, options, variables, environ))
    if scheme not in DATABASE_SCHEMES:
        raise InputValidationError(
            f"Unsupported {kind} service URI scheme {scheme!r}: use one of "
            f"{', '.join(s + '://' for s in SCHEMES)}."
        )
    try:
        url = make_url(uri)
    except ArgumentError as exc:
        raise InputValidationError(f"Not a database URL: {scheme}://...") from exc
    except ValueError as exc:  # SQLAlchemy's only ValueError
        raise InputValidationError(f"The port in the {kind} service URI is not a number.") from exc
    pairs = [(k, v) for k, values in url.query.items() for v in _as_tuple(values)]
    ours, driver = _split_query(kind, scheme, pairs, options)
    connection = normalise_url(url.set(query=driver).render_as_string(hide_password=False))
    with_password = with_database_password(connection, environ)
    chosen = _with_environment(ours, options, variables, environ)
    if chosen.get("read_url") is not None:  # the replica: same role, same password
        chosen["read_url"] = with_database_password(chosen["read_url"], environ)
    return ServiceTarget(with_password, None, chosen)


def _with_environment(
    given: dict[str, Any],
    options: Mapping[str, Parser],
    variables: Mapping[str, str],
    environ: Mapping[str, str],
) -> dict[str, Any]:
    """The URI's options, plus those it leaves out that `variables` find set in `environ` (a
    variable set to `none` counts: it switches off what the default would turn on)."""
    chosen = dict(given)
    for name, variable in variables.items():
        if name not in chosen and environ.get(variable):
            chosen[name] = from_environ(environ, variable, options[name])
    return chosen


def _as_tuple(value: str | tuple[str, ...]) -> tuple[str, ...]:
    return value if isinstance(value, tuple) else (value,)


def uri_connection_arguments(
    target: ServiceTarget, options: dict[str, Any], engine_kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """The constructor arguments both services share (where, which schema, which pool, which
    timeouts), taken out of `options`. Pool settings from the URI and engine arguments passed
    beside it (ADK's `session_db_kwargs`) are merged; the same setting in both is ambiguous, so
    an error."""
    pool = {k: options.pop(k) for k in ("pool_size", "max_overflow") if k in options}
    timeouts = {field: options.pop(k) for k, field in TIMEOUT_OPTIONS.items() if k in options}
    clash: list[str] = sorted(set(pool) & set(engine_kwargs))
    if "pool" in timeouts and "pool_timeout" in engine_kwargs:
        clash.append("pool_timeout")
    if clash:
        raise InputValidationError(f"{', '.join(clash)} given both in the URI and as arguments.")
    settings: dict[str, Any] = {
        "database_url": target.url,
        "data_dir": target.data_dir,
        "engine_kwargs": {**pool, **engine_kwargs} or None,
        "timeouts": DatabaseTimeouts(**timeouts) if timeouts else None,
    }
    for name in ("schema", "auto_migrate", "read_url"):
        if name in options:
            settings[name] = options.pop(name)
    return settings


def without_agents_dir(adk_arguments: Mapping[str, Any]) -> dict[str, Any]:
    """ADK's factory arguments but `agents_dir` (see `ADK_AGENTS_DIR`)."""
    return {name: value for name, value in adk_arguments.items() if name != ADK_AGENTS_DIR}


def check_uri_alone(init: Callable[..., None], arguments: Mapping[str, object]) -> None:
    """With `uri`, every option comes from the URI (else the environment): another argument of
    `init` set to other than its default would be a second, conflicting source, so it is an
    error naming it. `arguments` are `init`'s locals on entry."""
    besides = [
        name
        for name, parameter in inspect.signature(init).parameters.items()
        if name != "uri"
        and parameter.default is not parameter.empty
        and arguments[name] is not parameter.default
        and arguments[name] != parameter.default
    ]
    if besides:
        raise InputValidationError(
            f"Pass either uri or {', '.join(besides)}, not both: with uri, options are the "
            "URI's query parameters."
        )


class _Closable(Protocol):
    async def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)

# The open `collect_services()` blocks, each gathering the services built from URIs inside it.
_collectors: list[list[Any]] = []


def announce(service: C) -> C:
    """Hand a service built from a URI to every open `collect_services()` block."""
    for collected in _collectors:
        collected.append(service)
    return service


@contextmanager
def collect_services() -> Iterator[list[Any]]:
    """Gather the services built from URIs inside the block (by ADK's registry, a
    `services.yaml` or the `*_from_uri` functions). ADK builds services from URIs and never
    closes them; an application serving ADK's app wraps `get_fast_api_app` in this block and
    closes what it gathered at shutdown (releasing pools, stopping workers)."""
    collected: list[Any] = []
    _collectors.append(collected)
    try:
        yield collected
    finally:
        _collectors.remove(collected)
