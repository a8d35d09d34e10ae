"""The deployment's settings, read from the environment Cloud Run gives the container.

Owns: turning environment variables (plain ones, and secrets mounted with `--set-secrets`) into
the session and memory service URIs that the app, the worker and the migration job share, so
the three never disagree about the database, the schema, the models or the redactor (sessions
and memory always redact alike: `redact` set for one applies to both). The `ADK_MEMORY_*`
variables are those of `adk_memory.env`, read as `configure()`, `python -m adk_memory.worker`
and the `adk-memory` command read them; only the Cloud SQL ones and the option strings are the
deployment's own. It never reads the database password (the services take it from
`ADK_MEMORY_DATABASE_PASSWORD` themselves, so it is never part of a URL) and never connects to
anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast
from urllib.parse import parse_qsl, urlencode, urlsplit

from google.adk.errors.input_validation_error import InputValidationError

from adk_memory.adk.inspector import INSPECTOR_MODES, InspectorMode
from adk_memory.adk.services import MEMORY_VARIABLES, SESSION_VARIABLES
from adk_memory.env import DATABASE_URL_ENV, READ_DATABASE_URL_ENV, REDACT_ENV
from adk_memory.settings.identity import AuthMode

CLOUD_SQL_INSTANCE_ENV = "CLOUD_SQL_INSTANCE"
"""`PROJECT:REGION:INSTANCE`: connect through the Unix socket Cloud Run mounts under /cloudsql
(`--set-cloudsql-instances`), used when ADK_MEMORY_DATABASE_URL is not set."""

CLOUD_SQL_READ_INSTANCE_ENV = "CLOUD_SQL_READ_INSTANCE"
"""`PROJECT:REGION:REPLICA`: a Cloud SQL read replica (its Unix socket, mounted too with
`--set-cloudsql-instances`), with the same user and database: the app's searches, listings and
session reads go there. Or set ADK_MEMORY_READ_DATABASE_URL (AlloyDB read pools, private IPs)."""

DATABASE_USER_ENV = "ADK_MEMORY_DATABASE_USER"
PROCESS_USER_ENV = "ADK_MEMORY_{process}_DATABASE_USER"
"""The database user of one kind of process (PROCESS: AGENT for the app, WORKER for the worker,
MAINTENANCE for the migration and sweep jobs), each a member of its least-privilege role
(`adk-memory db roles`); unset: ADK_MEMORY_DATABASE_USER (one user for all, as before roles).
With ADK_MEMORY_DATABASE_URL it replaces the URL's user; the password is the process's own
ADK_MEMORY_DATABASE_PASSWORD (each service mounts its user's secret)."""
PROCESSES = ("agent", "worker", "maintenance")
DATABASE_NAME_ENV = "ADK_MEMORY_DATABASE_NAME"
OPTIONS_ENV = "ADK_MEMORY_OPTIONS"
"""Any other URI options for both services, as a query string: `pool_size=5`."""
SESSION_OPTIONS_ENV = "ADK_MEMORY_SESSION_OPTIONS"
"""URI options for the session service only: `session_ttl=30d&event_cache_size=1000`."""
MEMORY_OPTIONS_ENV = "ADK_MEMORY_MEMORY_OPTIONS"
"""URI options for the memory service only: `memory_ttl=365d&top_k=5`."""
AGENTS_DIR_ENV = "AGENTS_DIR"
ARTIFACT_URI_ENV = "ADK_ARTIFACT_SERVICE_URI"
"""ADK's artifact service, e.g. `gs://BUCKET`; unset: artifacts live in memory."""
PORT_ENV = "PORT"
"""The port to serve on (Cloud Run sets it; default 8080)."""
WEB_UI_ENV = "ADK_WEB_UI"
"""`true` serves ADK's dev UI too; only behind an authenticating front (IAM, IAP)."""

INSPECTOR_ENV = "ADK_MEMORY_INSPECTOR"
"""`read-only` or `writable` serves the memory inspector at /memory-inspector, behind the same
front as the API (IAM/IAP); unset or `off`: not served."""
INSPECTOR_TOKEN_ENV = "ADK_MEMORY_INSPECTOR_TOKEN"
"""The inspector's form token (a secret), shared by every instance, so a form one instance
renders is accepted by whichever instance receives it; required when it is `writable`."""

VERTEX_API_ENV = "ADK_MEMORY_VERTEX_API"
"""`true` serves Vertex AI's Memory Bank and session REST API at /v1beta1 (the official clients
and ADK's Vertex services point their base URL at the app), behind the same identity binding."""

DEFAULT_AUTH: AuthMode = "iap"
"""Identity binding when `ADK_MEMORY_AUTH` is unset: the deployed API sits behind IAP, whose
signed header names the caller (`ADK_MEMORY_AUTH_AUDIENCE` is then required). `none` opts out
(a local run, or a front of one's own that binds users itself)."""

DEFAULT_AGENTS_DIR = Path(__file__).resolve().parent.parent / "agents"
"""Where the image puts the agents (`/app/agents`)."""

_SESSION_DEFAULTS = {"auto_migrate": "false"}
"""The app never changes the schema: the migration job does, before a rollout."""
_MEMORY_DEFAULTS = {"auto_migrate": "false", "worker": "false"}
"""...and generation jobs run in the worker, not in request-serving instances (whose CPU
Cloud Run throttles between requests)."""


def _options(environ: Mapping[str, str], name: str) -> dict[str, str]:
    raw = environ.get(name, "")
    try:
        pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=bool(raw))
    except ValueError as exc:
        raise InputValidationError(f"{name} must be a query string (a=1&b=2): {raw!r}.") from exc
    options = dict(pairs)
    if len(options) != len(pairs):
        raise InputValidationError(f"{name} repeats an option: {raw!r}.")
    return options


def _named(environ: Mapping[str, str], variables: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """The options set by their own variables (`ADK_MEMORY_SCHEMA`, ...), one layer per
    variable, as the URI schemes map them; written into the URIs, so the URI is the whole truth
    even when `environ` is not the process's environment."""
    return {
        f"${variable}": {option: environ[variable]}
        for option, variable in variables.items()
        if environ.get(variable)
    }


def _disjoint(**layers: Mapping[str, str]) -> dict[str, str]:
    """Merge option layers that must not overlap: one setting in two places is ambiguous."""
    merged: dict[str, str] = {}
    seen: dict[str, str] = {}
    for where, layer in layers.items():
        for name, value in layer.items():
            if name in merged:
                raise InputValidationError(f"{name} is set in both {seen[name]} and {where}.")
            merged[name], seen[name] = value, where
    return merged


def _one_redactor(session: dict[str, str], memory: dict[str, str]) -> None:
    """Give both services the same `redact`: a value set for one (e.g. `redact=pii` in the
    session options, as before the memory service took it) applies to the other, and two
    different values are an error. A redactor on the sessions alone would let generation send
    the same conversation to its model, and store its memories, unredacted."""
    chosen = {layer["redact"].strip().lower() for layer in (session, memory) if "redact" in layer}
    if len(chosen) > 1:
        both = " and ".join(sorted(chosen))
        raise InputValidationError(
            f"redact differs between the session and memory options ({both}): set it once, "
            f"in {REDACT_ENV}."
        )
    if chosen:
        session["redact"] = memory["redact"] = chosen.pop()


def _process_user(environ: Mapping[str, str], process: str) -> str | None:
    """The user `PROCESS_USER_ENV` names for `process`, if set."""
    if process not in PROCESSES:
        raise InputValidationError(f"Unknown process {process!r}: one of {', '.join(PROCESSES)}.")
    return environ.get(PROCESS_USER_ENV.format(process=process.upper())) or None


def _with_user(url: str, user: str | None) -> str:
    """`url` with its user replaced by `user` (unchanged when None)."""
    if user is None:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{user}@{host}").geturl()


def _database_url(environ: Mapping[str, str], process: str) -> str:
    url = environ.get(DATABASE_URL_ENV)
    instance = environ.get(CLOUD_SQL_INSTANCE_ENV)
    if url and instance:
        raise InputValidationError(f"Set {DATABASE_URL_ENV} or {CLOUD_SQL_INSTANCE_ENV}, not both.")
    if url:
        return _with_user(url, _process_user(environ, process))
    if instance:
        return _cloud_sql_url(environ, CLOUD_SQL_INSTANCE_ENV, instance, process)
    raise InputValidationError(
        f"No database: set {DATABASE_URL_ENV} (postgresql://USER@HOST/DB) or "
        f"{CLOUD_SQL_INSTANCE_ENV} (PROJECT:REGION:INSTANCE)."
    )


def _cloud_sql_url(environ: Mapping[str, str], variable: str, instance: str, process: str) -> str:
    """The Unix-socket URL of Cloud SQL instance `instance` (named by `variable`), as
    `process`'s user."""
    if instance.count(":") != 2:
        raise InputValidationError(f"{variable} must be PROJECT:REGION:INSTANCE, not {instance!r}.")
    user = _process_user(environ, process) or environ.get(DATABASE_USER_ENV, "adk")
    name = environ.get(DATABASE_NAME_ENV, "adk")
    return f"postgresql://{user}@/{name}?host=/cloudsql/{instance}"


def _read_replica(environ: Mapping[str, str], process: str, *layers: dict[str, str]) -> None:
    """Point both services at the Cloud SQL read replica `CLOUD_SQL_READ_INSTANCE` names, if
    any (`read_url`); a read URL also set another way is ambiguous."""
    instance = environ.get(CLOUD_SQL_READ_INSTANCE_ENV)
    if not instance:
        return
    if any("read_url" in layer for layer in layers):
        raise InputValidationError(
            f"Set {CLOUD_SQL_READ_INSTANCE_ENV} or {READ_DATABASE_URL_ENV} (read_url), not both."
        )
    url = _cloud_sql_url(environ, CLOUD_SQL_READ_INSTANCE_ENV, instance, process)
    for layer in layers:
        layer["read_url"] = url


def _inspector(environ: Mapping[str, str]) -> tuple[InspectorMode, str | None]:
    """The memory inspector's mode and form token (off unless configured)."""
    mode = environ.get(INSPECTOR_ENV, "off").strip().lower() or "off"
    if mode not in INSPECTOR_MODES:
        raise InputValidationError(
            f"{INSPECTOR_ENV} must be one of {', '.join(INSPECTOR_MODES)}, not {mode!r}."
        )
    token = environ.get(INSPECTOR_TOKEN_ENV) or None
    if mode == "writable" and token is None:
        raise InputValidationError(
            f"A writable inspector needs {INSPECTOR_TOKEN_ENV} (a secret every instance shares)."
        )
    return cast(InspectorMode, mode), token


def _flag(environ: Mapping[str, str], name: str) -> bool:
    """A `true` / `false` variable (unset: false)."""
    value = environ.get(name, "false").lower()
    if value not in ("true", "false"):
        raise InputValidationError(f"{name} must be true or false, not {value!r}.")
    return value == "true"


def _with_query(url: str, options: Mapping[str, str]) -> str:
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode(options)) if q)
    return parts._replace(query=query).geturl()


@dataclass(frozen=True)
class Deployment:
    """Everything the deployment's processes need to build their services."""

    database_url: str
    agents_dir: str
    session_options: Mapping[str, str] = field(default_factory=dict)
    memory_options: Mapping[str, str] = field(default_factory=dict)
    artifact_uri: str | None = None
    web_ui: bool = False
    inspector: InspectorMode = "off"
    inspector_token: str | None = None
    vertex_api: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str], process: str = "agent") -> Deployment:
        """Read the settings for `process` (one of `PROCESSES`: its database user); a missing
        database or a malformed or ambiguous option is an error here, at start-up, rather than
        on the first request."""
        common = {f"${OPTIONS_ENV}": _options(environ, OPTIONS_ENV)}
        session = _disjoint(
            **_named(environ, SESSION_VARIABLES),
            **common,
            **{f"${SESSION_OPTIONS_ENV}": _options(environ, SESSION_OPTIONS_ENV)},
        )
        memory = _disjoint(
            **_named(environ, MEMORY_VARIABLES),
            **common,
            **{f"${MEMORY_OPTIONS_ENV}": _options(environ, MEMORY_OPTIONS_ENV)},
        )
        _one_redactor(session, memory)
        _read_replica(environ, process, session, memory)
        inspector, inspector_token = _inspector(environ)
        return cls(
            database_url=_database_url(environ, process),
            agents_dir=environ.get(AGENTS_DIR_ENV, str(DEFAULT_AGENTS_DIR)),
            session_options={**_SESSION_DEFAULTS, **session},
            memory_options={**_MEMORY_DEFAULTS, **memory},
            artifact_uri=environ.get(ARTIFACT_URI_ENV) or None,
            web_ui=_flag(environ, WEB_UI_ENV),
            inspector=inspector,
            inspector_token=inspector_token,
            vertex_api=_flag(environ, VERTEX_API_ENV),
        )

    def session_uri(self, **overrides: str) -> str:
        """The session service URI (ADK's --session_service_uri), options included."""
        return _with_query(self.database_url, {**self.session_options, **overrides})

    def memory_uri(self, **overrides: str) -> str:
        """The memory service URI (ADK's --memory_service_uri), options included."""
        return _with_query(self.database_url, {**self.memory_options, **overrides})

    def agent_environment(self) -> dict[str, str]:
        """The `ADK_MEMORY_*` variables an agent's own `configure()` reads (when ADK imports
        the agent), set to what the URIs say: the database (with Cloud SQL, the socket URL built
        from `CLOUD_SQL_INSTANCE`, which `configure()` alone would not know, and would start an
        embedded server instead) and every option that has a variable. The plugins and tools an
        agent builds then use the app's database and settings, never a second database."""
        exported = {DATABASE_URL_ENV: self.database_url}
        for options, variables in (
            (self.session_options, SESSION_VARIABLES),
            (self.memory_options, MEMORY_VARIABLES),
        ):
            for option, variable in variables.items():
                if option not in options:
                    continue
                if exported.setdefault(variable, options[option]) != options[option]:
                    raise InputValidationError(
                        f"{option} differs between the session and memory options: an agent's "
                        f"configure() uses one {variable} for both; set it once."
                    )
        return exported
