"""URI schemes for ADK's service registry: `adk web`, `adk api_server` and `adk run` on PostgreSQL.

Owns: turning a `--session_service_uri` / `--memory_service_uri` into a `PostgresSessionService`
or `PostgresMemoryService` (the scheme, the driver URL, adk-memory's options given as query
parameters, the password taken from the environment) and registering those factories with ADK.
An option the URI leaves out is read from the `ADK_MEMORY_*` variable `configure()` reads
(`SESSION_VARIABLES`, `MEMORY_VARIABLES`); the URI wins over the environment.

A factory only constructs: it never opens a connection, starts the embedded server or calls a
model. The pool, the migrations and the embedded server start on first use, in the server's
event loop; a model or embedder named in the URI is called only when memories are generated or
searched.

URIs (`?` options are listed in `SESSION_OPTIONS`, `MEMORY_OPTIONS`, `DRIVER_PARAMETERS`):

    postgresql://USER@HOST:5432/DB?schema=adk_memory&pool_size=10
    postgresql://USER@/DB?host=/cloudsql/PROJECT:REGION:INSTANCE      (Unix socket)
    adk-memory://                                                     (the embedded server)
    adk-memory://?data_dir=/var/lib/adk/pgdata

`adk-memory://` without `data_dir` uses `$ADK_MEMORY_DATA_DIR`, else `./.adk/pgdata` in the
working directory: the database `configure()` and the `adk-memory` command use from there.

`postgres://` and `postgresql+asyncpg://` mean the same as `postgresql://`: asyncpg always.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

from google.adk.cli.service_registry import ServiceRegistry, get_service_registry
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.models.base_llm import BaseLlm
from pydantic import ValidationError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from ..config import MemoryBankConfig, RetrievalConfig, TtlConfig
from ..env import (
    EMBEDDING_MODEL_ENV,
    MEMORY_TTL_ENV,
    MODEL_ENV,
    REDACT_ENV,
    SCHEMA_ENV,
    SESSION_TTL_ENV,
    embedded_data_dir,
    from_environ,
    parse_duration,
    parse_embedding_model,
    parse_redact,
    with_database_password,
)
from ..memory.embeddings import GeminiEmbedder
from ..memory.generation import resolve_llm
from ..memory.service import PostgresMemoryService
from ..sessions.service import PostgresSessionService

DATABASE_SCHEMES = ("postgresql", "postgres", "postgresql+asyncpg")
"""Schemes naming a PostgreSQL server. ADK registers `postgresql` itself (for its own
`DatabaseSessionService`, with a synchronous driver it cannot use); `register()` replaces it."""

EMBEDDED_SCHEME = "adk-memory"
"""The embedded PostgreSQL: `adk-memory://`, optionally `?data_dir=...`."""

SCHEMES = (*DATABASE_SCHEMES, EMBEDDED_SCHEME)

DRIVER_PARAMETERS = ("host", "port", "ssl", "sslmode", "target_session_attrs")
"""Query parameters passed on to asyncpg (`host` is how a Unix socket is named). `sslmode` is
libpq's spelling and becomes asyncpg's `ssl`."""


def _boolean(raw: str) -> bool:
    words = {"true": True, "1": True, "yes": True, "on": True}
    words |= {"false": False, "0": False, "no": False, "off": False}
    if raw.lower() not in words:
        raise ValueError("expected true or false")
    return words[raw.lower()]


def _count(minimum: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        if not re.fullmatch(r"\d+", raw) or int(raw) < minimum:
            raise ValueError(f"expected a whole number of at least {minimum}")
        return int(raw)

    return parse


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return raw

    return parse


def _model(raw: str) -> BaseLlm:
    """The generation model, resolved while parsing so an unknown name fails at start-up
    (resolving builds the client object only; nothing is called)."""
    return resolve_llm(_text(raw))


def _text(raw: str) -> str:
    if not raw.strip():
        raise ValueError("expected a non-empty value")
    return raw


Parser = Callable[[str], object]
"""Turns a query parameter's text into the option's value; raises ValueError saying what it
expected."""

_COMMON_OPTIONS: dict[str, Parser] = {
    "schema": _text,  # Postgres schema holding the tables (default adk_memory)
    "pool_size": _count(1),  # connections this service's pool keeps open
    "max_overflow": _count(0),  # extra connections allowed under load
    "auto_migrate": _boolean,  # create/upgrade the tables on first use (default true)
    # pii: e-mails, phone, card and IBAN numbers redacted before they are stored or sent to a
    # model (the memory service: memories, raw events, jobs, generation); none: off (default)
    "redact": parse_redact,
}

SESSION_OPTIONS: Mapping[str, Parser] = {
    **_COMMON_OPTIONS,
    "session_ttl": parse_duration,  # sessions idle longer than this are swept
    "event_cache_size": _count(0),  # decoded events cached per process (0: off)
    "event_cache_bytes": _count(0),  # what they may weigh, estimated (default 128 MiB; 0: off)
}
"""adk-memory's options for a session service URI."""

MEMORY_OPTIONS: Mapping[str, Parser] = {
    **_COMMON_OPTIONS,
    "model": _model,  # generation model, e.g. gemini-2.5-flash (unset: raw events)
    "embedding_model": parse_embedding_model,  # Gemini embedding model (none: full text only)
    "embedding_dimensions": _count(1),  # embedding size (default 768)
    "retrieval_mode": _choice("hybrid", "vector", "text"),
    "top_k": _count(1),  # memories ADK's search_memory returns (default 3)
    "text_search_language": _text,  # Postgres text-search configuration (default english)
    "memory_ttl": parse_duration,  # how long memories live (default forever)
    "revision_ttl": parse_duration,  # how long memory revisions are kept (default forever)
    "worker": _boolean,  # run generation jobs in this process (default true)
}
"""adk-memory's options for a memory service URI."""

SESSION_VARIABLES: Mapping[str, str] = {
    "schema": SCHEMA_ENV,
    "session_ttl": SESSION_TTL_ENV,
    "redact": REDACT_ENV,
}
"""The environment variable each session option is read from when the URI leaves it out (the
variables `configure()` reads), so a URI and `configure()` in one environment agree."""

MEMORY_VARIABLES: Mapping[str, str] = {
    "schema": SCHEMA_ENV,
    "model": MODEL_ENV,
    "embedding_model": EMBEDDING_MODEL_ENV,
    "memory_ttl": MEMORY_TTL_ENV,
    "redact": REDACT_ENV,
}
"""The environment variable each memory option is read from when the URI leaves it out."""

_EMBEDDED_OPTIONS: dict[str, Parser] = {"data_dir": _text}

Service = PostgresSessionService | PostgresMemoryService
S = TypeVar("S", PostgresSessionService, PostgresMemoryService)

# The open `collect_services()` blocks, each gathering the services built inside it.
_collectors: list[list[Service]] = []


@dataclass(frozen=True)
class _Target:
    """Where a URI points: a driver URL (options and secrets resolved) or the embedded server."""

    url: str | None
    data_dir: str | None
    options: dict[str, Any]


def _split_query(
    kind: str, scheme: str, pairs: list[tuple[str, str]], options: Mapping[str, Parser]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Our options (parsed) and the driver's parameters (as given); anything else is an error
    naming every accepted parameter, so a typo never silently falls through to the driver."""
    driver = () if scheme == EMBEDDED_SCHEME else DRIVER_PARAMETERS
    ours: dict[str, Any] = {}
    passed: dict[str, str] = {}
    for name, raw in pairs:
        if name in ours or name in passed:
            raise InputValidationError(f"The {kind} service URI repeats {name!r}.")
        if name in options:
            try:
                ours[name] = options[name](raw)
            except ValueError as exc:
                raise InputValidationError(
                    f"Invalid {name}={raw!r} in the {kind} service URI: {exc}."
                ) from exc
        elif name in driver:
            passed[name] = raw
        else:
            accepted = ", ".join(sorted(options))
            through = f"; passed to the driver: {', '.join(driver)}" if driver else ""
            raise InputValidationError(
                f"Unknown parameter {name!r} in the {kind} service URI ({scheme}://). "
                f"Accepted: {accepted}{through}."
            )
    return ours, passed


def _target(
    uri: str,
    kind: str,
    options: Mapping[str, Parser],
    variables: Mapping[str, str],
    environ: Mapping[str, str],
) -> _Target:
    """Where `uri` points and its options: those the URI gives, else those `variables` name in
    `environ` (parsed alike; a bad value is an error naming the variable)."""
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
        return _Target(None, data_dir, _with_environment(ours, options, variables, environ))
    if scheme not in DATABASE_SCHEMES:
        raise InputValidationError(
            f"Unsupported {kind} service URI scheme {scheme!r}: use one of "
            f"{', '.join(s + '://' for s in SCHEMES)}."
        )
    try:
        url = make_url(uri)
    except ArgumentError as exc:
        raise InputValidationError(f"Not a database URL: {scheme}://...") from exc
    pairs = [(k, v) for k, values in url.query.items() for v in _as_tuple(values)]
    ours, driver = _split_query(kind, scheme, pairs, options)
    if "sslmode" in driver:
        if "ssl" in driver:
            raise InputValidationError(f"The {kind} service URI sets both ssl and sslmode.")
        driver["ssl"] = driver.pop("sslmode")
    url = url.set(drivername="postgresql+asyncpg", query=driver)
    with_password = with_database_password(url.render_as_string(hide_password=False), environ)
    return _Target(with_password, None, _with_environment(ours, options, variables, environ))


def _with_environment(
    given: dict[str, Any],
    options: Mapping[str, Parser],
    variables: Mapping[str, str],
    environ: Mapping[str, str],
) -> dict[str, Any]:
    """The URI's options, plus those it leaves out that `variables` find set in `environ`."""
    chosen = dict(given)
    for name, variable in variables.items():
        if name not in chosen:
            value = from_environ(environ, variable, options[name])
            if value is not None:
                chosen[name] = value
    return chosen


def _as_tuple(value: str | tuple[str, ...]) -> tuple[str, ...]:
    return value if isinstance(value, tuple) else (value,)


def _engine_kwargs(options: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any] | None:
    """Pool settings from the URI plus any engine arguments the caller passed (ADK's
    `session_db_kwargs`); the same setting in both is ambiguous, so it is an error."""
    kwargs = {k: options.pop(k) for k in ("pool_size", "max_overflow") if k in options}
    clash = sorted(set(kwargs) & set(extra))
    if clash:
        raise InputValidationError(f"{', '.join(clash)} given both in the URI and as arguments.")
    return {**kwargs, **extra} or None


def _connection(
    target: _Target, options: dict[str, Any], extra: Mapping[str, Any]
) -> dict[str, Any]:
    """The constructor arguments every service shares: where, which schema, which pool."""
    settings: dict[str, Any] = {
        "data_dir": target.data_dir,
        "engine_kwargs": _engine_kwargs(options, extra),
    }
    for name in ("schema", "auto_migrate"):
        if name in options:
            settings[name] = options.pop(name)
    return settings


def _environ(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def _remember(service: S) -> S:
    for collected in _collectors:
        collected.append(service)
    return service


def session_service_from_uri(
    uri: str, *, environ: Mapping[str, str] | None = None, **engine_kwargs: Any
) -> PostgresSessionService:
    """A `PostgresSessionService` for a session service URI (see the module docstring).

    `engine_kwargs` go to `create_async_engine` (what ADK's `session_db_kwargs` carry).
    `environ` (default `os.environ`) is read for the password, the data directory and the
    options the URI leaves out (`SESSION_VARIABLES`).
    """
    target = _target(uri, "session", SESSION_OPTIONS, SESSION_VARIABLES, _environ(environ))
    options = dict(target.options)
    settings = _connection(target, options, engine_kwargs)
    return _remember(
        PostgresSessionService(
            target.url, redactor=options.pop("redact", None), **settings, **options
        )
    )


def _memory_config(options: dict[str, Any]) -> MemoryBankConfig:
    """The retrieval and TTL options, validated by the config's own rules."""
    retrieval = _take(options, retrieval_mode="mode", top_k="top_k")
    retrieval |= _take(options, text_search_language="text_search_language")
    ttl = _take(options, memory_ttl="default_ttl", revision_ttl="revision_ttl")
    try:
        return MemoryBankConfig(retrieval=RetrievalConfig(**retrieval), ttl=TtlConfig(**ttl))
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise InputValidationError(
            f"Invalid memory service URI option ({problem['loc'][-1]}): {problem['msg']}."
        ) from exc


def _take(options: dict[str, Any], **renames: str) -> dict[str, Any]:
    """Remove the named options that are present, keyed by their config field names; a None
    value (`embedding_model=none`) is left out."""
    taken = {field: options.pop(name) for name, field in renames.items() if name in options}
    return {field: value for field, value in taken.items() if value is not None}


def memory_service_from_uri(
    uri: str, *, environ: Mapping[str, str] | None = None
) -> PostgresMemoryService:
    """A `PostgresMemoryService` for a memory service URI (see the module docstring).

    Without `model` it remembers raw events; with one (e.g. `model=gemini-2.5-flash`) it
    generates memories. Without `embedding_model` (or with `none`) it searches full text only
    and needs no API key; `embedding_model=gemini-embedding-001` adds vector search
    (`GeminiEmbedder`). `environ` (default `os.environ`) is read for the password, the data
    directory and the options the URI leaves out (`MEMORY_VARIABLES`).
    """
    target = _target(uri, "memory", MEMORY_OPTIONS, MEMORY_VARIABLES, _environ(environ))
    options = dict(target.options)
    settings = _connection(target, options, {})
    config = _memory_config(options)
    embedding = _take(options, embedding_model="model", embedding_dimensions="dimensions")
    if embedding and "model" not in embedding:
        raise InputValidationError("embedding_dimensions needs embedding_model.")
    if config.retrieval.mode == "vector" and not embedding:
        raise InputValidationError("retrieval_mode=vector needs embedding_model.")
    return _remember(
        PostgresMemoryService(
            target.url,
            embedder=GeminiEmbedder(**embedding) if embedding else None,
            llm=options.pop("model", None),
            config=config,
            run_worker=options.pop("worker", True),
            redactor=options.pop("redact", None),
            **settings,
        )
    )


def _session_factory(uri: str, **kwargs: Any) -> PostgresSessionService:
    """ADK passes `agents_dir` to every factory; the data directory deliberately ignores it (see
    `embedded_data_dir`), so `adk web` and `configure()` run from one place share a database."""
    kwargs.pop("agents_dir", None)
    return session_service_from_uri(uri, **kwargs)


def _memory_factory(uri: str, **kwargs: Any) -> PostgresMemoryService:
    unexpected = sorted(set(kwargs) - {"agents_dir"})
    if unexpected:
        raise InputValidationError(f"Unexpected memory service arguments: {', '.join(unexpected)}.")
    return memory_service_from_uri(uri)


def register(registry: ServiceRegistry | None = None) -> None:
    """Make ADK build adk-memory's services for `SCHEMES`, replacing ADK's own `postgresql`
    session factory. Idempotent. An agents directory's `services.py` needs only:

        from adk_memory.adk.services import register
        register()
    """
    registry = registry or get_service_registry()
    for scheme in SCHEMES:
        registry.register_session_service(scheme, _session_factory)
        registry.register_memory_service(scheme, _memory_factory)


@contextmanager
def collect_services() -> Iterator[list[Service]]:
    """Gather the services the factories build inside the block. ADK builds services from URIs
    and never closes them; an application serving ADK's app wraps `get_fast_api_app` in this
    block and closes what it gathered at shutdown (releasing pools, stopping workers)."""
    collected: list[Service] = []
    _collectors.append(collected)
    try:
        yield collected
    finally:
        _collectors.remove(collected)
