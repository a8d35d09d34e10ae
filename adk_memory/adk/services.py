"""URI schemes for ADK's service registry: `adk web`, `adk api_server` and `adk run` on PostgreSQL.

Owns: turning a `--session_service_uri` / `--memory_service_uri` into a `PostgresSessionService`
or `PostgresMemoryService` (the scheme, the driver URL, adk-memory's options given as query
parameters, the password taken from the environment) and registering those factories with ADK.

A factory only constructs: it never opens a connection, starts the embedded server or calls a
model. The pool, the migrations and the embedded server start on first use, in the server's
event loop; a model or embedder named in the URI is called only when memories are generated or
searched.

URIs (`?` options are listed in `SESSION_OPTIONS`, `MEMORY_OPTIONS`, `DRIVER_PARAMETERS`):

    postgresql://USER@HOST:5432/DB?schema=adk_memory&pool_size=10
    postgresql://USER@/DB?host=/cloudsql/PROJECT:REGION:INSTANCE      (Unix socket)
    adk-memory://                                                     (the embedded server)
    adk-memory://?data_dir=/var/lib/adk/pgdata

`postgres://` and `postgresql+asyncpg://` mean the same as `postgresql://`: asyncpg always.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

from google.adk.cli.service_registry import ServiceRegistry, get_service_registry
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.models.base_llm import BaseLlm
from pydantic import ValidationError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from ..config import MemoryBankConfig, RetrievalConfig, TtlConfig
from ..db.embedded import DATA_DIR_ENV
from ..memory.embeddings import GeminiEmbedder
from ..memory.generation import resolve_llm
from ..memory.service import PostgresMemoryService
from ..sessions.redaction import PiiRedactor
from ..sessions.service import PostgresSessionService

DATABASE_SCHEMES = ("postgresql", "postgres", "postgresql+asyncpg")
"""Schemes naming a PostgreSQL server. ADK registers `postgresql` itself (for its own
`DatabaseSessionService`, with a synchronous driver it cannot use); `register()` replaces it."""

EMBEDDED_SCHEME = "adk-memory"
"""The embedded PostgreSQL: `adk-memory://`, optionally `?data_dir=...`."""

SCHEMES = (*DATABASE_SCHEMES, EMBEDDED_SCHEME)

PASSWORD_ENV = "ADK_MEMORY_DATABASE_PASSWORD"
"""The database password, for URLs that carry none (e.g. a Secret Manager secret mounted as an
environment variable), so no password is ever written into a URL on disk or on a command line."""

PASSWORD_FILE_ENV = "ADK_MEMORY_DATABASE_PASSWORD_FILE"
"""A file holding the database password (e.g. a secret mounted as a volume); one trailing
newline is ignored."""

EMBEDDED_DATA_DIR = Path(".adk") / "pgdata"
"""Where `adk-memory://` keeps its data, under the agents directory ADK serves (next to ADK's
own `.adk` folders), unless `?data_dir=` or `$ADK_MEMORY_DATA_DIR` says otherwise."""

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


_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _duration(raw: str) -> timedelta:
    """`90` or `90s`, `15m`, `12h`, `30d`: short enough to write in a URL."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", raw)
    if not match or float(match[1]) <= 0:
        raise ValueError("expected a positive duration such as 3600, 90s, 15m, 12h or 30d")
    return timedelta(seconds=float(match[1]) * _UNITS[match[2]])


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return raw

    return parse


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
}

SESSION_OPTIONS: Mapping[str, Parser] = {
    **_COMMON_OPTIONS,
    "session_ttl": _duration,  # sessions idle longer than this are swept
    "event_cache_size": _count(0),  # decoded events cached per process (0: off)
    "redact": _choice("pii", "none"),  # pii: e-mails, phone, card and IBAN numbers
}
"""adk-memory's options for a session service URI."""

MEMORY_OPTIONS: Mapping[str, Parser] = {
    **_COMMON_OPTIONS,
    "model": _text,  # generation model, e.g. gemini-2.5-flash (unset: raw events)
    "embedding_model": _text,  # Gemini embedding model (unset: full-text search only)
    "embedding_dimensions": _count(1),  # embedding size (default 768)
    "retrieval_mode": _choice("hybrid", "vector", "text"),
    "top_k": _count(1),  # memories ADK's search_memory returns (default 3)
    "text_search_language": _text,  # Postgres text-search configuration (default english)
    "memory_ttl": _duration,  # how long memories live (default forever)
    "revision_ttl": _duration,  # how long memory revisions are kept (default forever)
    "worker": _boolean,  # run generation jobs in this process (default true)
}
"""adk-memory's options for a memory service URI."""

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


def _database_password(environ: Mapping[str, str]) -> str | None:
    direct, path = environ.get(PASSWORD_ENV), environ.get(PASSWORD_FILE_ENV)
    if direct and path:
        raise InputValidationError(f"Set {PASSWORD_ENV} or {PASSWORD_FILE_ENV}, not both.")
    if path:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputValidationError(
                f"Cannot read the database password file {path!r} ({PASSWORD_FILE_ENV}): "
                f"{exc.strerror}."
            ) from exc
        return text.removesuffix("\n").removesuffix("\r")
    return direct or None


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
    agents_dir: str | None,
    environ: Mapping[str, str],
) -> _Target:
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
        data_dir = ours.pop("data_dir", None) or environ.get(DATA_DIR_ENV)
        if data_dir is None and agents_dir is not None:
            data_dir = str(Path(agents_dir) / EMBEDDED_DATA_DIR)
        return _Target(url=None, data_dir=data_dir, options=ours)
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
    if not url.password:
        url = url.set(password=_database_password(environ))
    return _Target(url.render_as_string(hide_password=False), None, ours)


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
    uri: str,
    *,
    agents_dir: str | None = None,
    environ: Mapping[str, str] | None = None,
    **engine_kwargs: Any,
) -> PostgresSessionService:
    """A `PostgresSessionService` for a session service URI (see the module docstring).

    `agents_dir` places `adk-memory://`'s data under it; `engine_kwargs` go to
    `create_async_engine` (what ADK's `session_db_kwargs` carry). `environ` defaults to
    `os.environ` (read for the password and `$ADK_MEMORY_DATA_DIR`).
    """
    target = _target(uri, "session", SESSION_OPTIONS, agents_dir, _environ(environ))
    options = dict(target.options)
    settings = _connection(target, options, engine_kwargs)
    redact = options.pop("redact", "none")
    return _remember(
        PostgresSessionService(
            target.url,
            redactor=PiiRedactor() if redact == "pii" else None,
            **settings,
            **options,
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
    """Remove the named options that are present, keyed by their config field names."""
    return {field: options.pop(name) for name, field in renames.items() if name in options}


def _model(name: str | None) -> BaseLlm | None:
    """The generation model, resolved now so an unknown name fails at start-up (resolving
    builds the client object only; nothing is called)."""
    if name is None:
        return None
    try:
        return resolve_llm(name)
    except ValueError as exc:
        raise InputValidationError(
            f"Invalid model={name!r} in the memory service URI: {exc}"
        ) from exc


def memory_service_from_uri(
    uri: str,
    *,
    agents_dir: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> PostgresMemoryService:
    """A `PostgresMemoryService` for a memory service URI (see the module docstring).

    Without `model` it remembers raw events; with one (e.g. `model=gemini-2.5-flash`) it
    generates memories. Without `embedding_model` it searches full text only and needs no API
    key; `embedding_model=gemini-embedding-001` adds vector search (`GeminiEmbedder`).
    """
    target = _target(uri, "memory", MEMORY_OPTIONS, agents_dir, _environ(environ))
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
            llm=_model(options.pop("model", None)),
            config=config,
            run_worker=options.pop("worker", True),
            **settings,
        )
    )


def _session_factory(uri: str, **kwargs: Any) -> PostgresSessionService:
    agents_dir = kwargs.pop("agents_dir", None)
    return session_service_from_uri(uri, agents_dir=agents_dir, **kwargs)


def _memory_factory(uri: str, **kwargs: Any) -> PostgresMemoryService:
    unexpected = sorted(set(kwargs) - {"agents_dir"})
    if unexpected:
        raise InputValidationError(f"Unexpected memory service arguments: {', '.join(unexpected)}.")
    return memory_service_from_uri(uri, agents_dir=kwargs.get("agents_dir"))


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
