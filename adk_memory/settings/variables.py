"""The `ADK_MEMORY_*` environment variables: their names and how their values are read.

Owns: the one definition of every variable that `configure()`, the URI schemes, the
`adk-memory` command, `python -m adk_memory.worker` and the deployment read (so a variable
means the same thing to all of them), the parsers of their values (durations, the embedding
model, the redactor), the embedded server's data directory as they all choose it, and the
database password put into a URL that has none.

It is the one place the package reads the process's environment: `environment()` hands it out
where a caller passes none (entry points take an `environ` mapping, so tests and deployments
can pass their own), and every variable is named here (the Gemini credentials google-genai
reads itself included). It never builds a service and never connects. A password it reads
only ever goes into the in-memory URL it returns.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, get_args

from ..config import DatabaseTimeouts, RedactChoice
from ..db.embedded import DEFAULT_DATA_DIR, resolve_data_dir
from ..durations import parse_duration, parse_timeout
from ..errors import InputValidationError

if TYPE_CHECKING:  # imported where used: `adk-memory db ...` must start without them
    from ..redaction import Redactor

T = TypeVar("T")

DATABASE_URL_ENV = "ADK_MEMORY_DATABASE_URL"
"""`postgresql://USER@HOST:5432/DB`; unset: the embedded PostgreSQL in the data directory."""

READ_DATABASE_URL_ENV = "ADK_MEMORY_READ_DATABASE_URL"
"""A read replica of that database (`postgresql://USER@REPLICA_HOST:5432/DB`): searches, listings
and session reads go there (see the README's "Read replicas"); unset: everything uses the
primary. Same role, database and password as the primary's."""

DATABASE_PASSWORD_ENV = "ADK_MEMORY_DATABASE_PASSWORD"
"""The database password, for URLs that carry none (e.g. a Secret Manager secret mounted as an
environment variable), so no password is ever written into a URL on disk or on a command line."""

DATABASE_PASSWORD_FILE_ENV = "ADK_MEMORY_DATABASE_PASSWORD_FILE"
"""A file holding the database password (e.g. a secret mounted as a volume); one trailing
newline is ignored."""

ROLE_PASSWORD_ENV = "ADK_MEMORY_{role}_PASSWORD"
"""The password `adk-memory db roles --create-users` gives the LOGIN user of a role (ROLE in
upper case: AGENT, WORKER, MAINTENANCE, OPERATOR); or `--passwords-from-stdin`. Never an
option: a command line is visible to every user of the machine."""

DATA_DIR_ENV = "ADK_MEMORY_DATA_DIR"
"""The embedded server's data directory (default `DEFAULT_DATA_DIR`)."""

SCHEMA_ENV = "ADK_MEMORY_SCHEMA"
"""The Postgres schema holding the tables (default `adk_memory`)."""

MODEL_ENV = "ADK_MEMORY_MODEL"
"""The model that generates memories (and writes summaries), any name ADK resolves, e.g.
gemini-2.5-flash."""

EMBEDDING_MODEL_ENV = "ADK_MEMORY_EMBEDDING_MODEL"
"""A Gemini embedding model (e.g. gemini-embedding-001): vector search with `GeminiEmbedder`;
unset or `none`: full-text search only, no embedding calls. Every process writing or searching
one database must agree on it."""

SESSION_TTL_ENV = "ADK_MEMORY_SESSION_TTL"
"""How long an idle session is kept before the session sweep deletes it (a duration, see
`parse_duration`); unset: forever."""

MEMORY_TTL_ENV = "ADK_MEMORY_MEMORY_TTL"
"""How long a new memory lives (a duration, see `parse_duration`); unset: until deleted."""

REDACT_ENV = "ADK_MEMORY_REDACT"
"""`pii`: e-mail addresses, phone, card and IBAN numbers are redacted (`PiiRedactor`) before
anything is stored or sent to a model, by the session service, the memory service, its
generation and the compaction plugins alike; `none` or unset: nothing is redacted. One setting
for all of them, because a redactor on one path only would leave the data on the others."""

REDACT_CHOICES: tuple[str, ...] = get_args(RedactChoice)
"""The values `ADK_MEMORY_REDACT`, the URI option `redact` and `--redact` accept (the names a
stored app configuration's `redact` takes)."""

ROW_LEVEL_SECURITY_ENV = "ADK_MEMORY_ROW_LEVEL_SECURITY"
"""`on` (the default) or `off`: whether the tables holding a user's rows have row-level
security on (`adk_memory.db.enforcement`; applied by a process that migrates). Off leaves only
the statements' own filters between users: for someone who measured the cost and declines it.
It is the database's state: set it alike for every process of a deployment."""

STATEMENT_TIMEOUT_ENV = "ADK_MEMORY_STATEMENT_TIMEOUT"
"""Longest one database statement may run (a timeout, see `parse_timeout`); unset: 30 s
(`DatabaseTimeouts.statement`)."""

CONNECT_TIMEOUT_ENV = "ADK_MEMORY_CONNECT_TIMEOUT"
"""Longest opening a database connection may take (a timeout, see `parse_timeout`); unset:
10 s. A `connect_timeout` in the database URL wins."""

POOL_TIMEOUT_ENV = "ADK_MEMORY_POOL_TIMEOUT"
"""Longest a call waits for a free pooled connection (a duration); unset: 30 s."""

DEMO_ENV = "ADK_MEMORY_DEMO"
"""`1`: the samples' agents and memory generation run on the keyless demo model
(`adk_memory.adk.demo`; `adk-memory web --demo` sets it); unset: on their Gemini models."""

AUTH_ENV = "ADK_MEMORY_AUTH"
"""Identity binding on the HTTP front ends (`adk_memory.identity`): `iap` (Cloud Run / IAP's
signed header), `google` (Google ID tokens), `oidc` (any OIDC or Firebase JWT) or `none`.
Default: `none` for `adk-memory web` / `api_server`, `iap` for the deploy app."""

AUTH_AUDIENCE_ENV = "ADK_MEMORY_AUTH_AUDIENCE"
"""The audiences a token must be for, comma-separated (IAP: `/projects/NUMBER/global/
backendServices/ID` or `/projects/NUMBER/apps/PROJECT`; Google: the OAuth client id or the
service URL; Firebase: the project id). Required unless `ADK_MEMORY_AUTH=none`."""

AUTH_ISSUER_ENV = "ADK_MEMORY_AUTH_ISSUER"
"""The issuers a token may come from, comma-separated (required for `oidc`, e.g.
`https://securetoken.google.com/PROJECT`; `iap` and `google` have Google's)."""

AUTH_JWKS_URL_ENV = "ADK_MEMORY_AUTH_JWKS_URL"
"""Where the issuer publishes its signing keys as a JWKS (required for `oidc`; `iap` and
`google` have Google's)."""

AUTH_USER_CLAIM_ENV = "ADK_MEMORY_AUTH_USER_CLAIM"
"""The token claim that is the user id a principal acts as (default `email`; `sub` is the
issuer's stable id)."""

AUTH_OPERATORS_ENV = "ADK_MEMORY_AUTH_OPERATORS"
"""Who may act as any user and open the memory inspector: comma-separated `CLAIM=VALUE`
(`email=ops@example.com`, `groups=memory-operators`; a list claim matches when it holds the
value). Unset: nobody."""

GEMINI_CREDENTIAL_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")
"""google-genai's own variables (read by it, not here): a Gemini API key, or Vertex AI (with
GOOGLE_CLOUD_PROJECT / GOOGLE_CLOUD_LOCATION and Application Default Credentials)."""

APPLICATION_CREDENTIALS_ENV = "GOOGLE_APPLICATION_CREDENTIALS"
"""google-auth's own variable: the file holding Application Default Credentials."""

GCLOUD_CONFIG_ENV = "CLOUDSDK_CONFIG"
"""gcloud's configuration directory (default ~/.config/gcloud), where `gcloud auth
application-default login` writes the credentials file."""

GOOGLE_CLOUD_PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"
"""The Google Cloud project google-genai calls Vertex AI in (its location, from
GOOGLE_CLOUD_LOCATION, defaults to `global`)."""

__all__ = [
    "APPLICATION_CREDENTIALS_ENV",
    "AUTH_AUDIENCE_ENV",
    "AUTH_ENV",
    "AUTH_ISSUER_ENV",
    "AUTH_JWKS_URL_ENV",
    "AUTH_OPERATORS_ENV",
    "AUTH_USER_CLAIM_ENV",
    "CONNECT_TIMEOUT_ENV",
    "DATABASE_PASSWORD_ENV",
    "DATABASE_PASSWORD_FILE_ENV",
    "DATABASE_URL_ENV",
    "DATA_DIR_ENV",
    "DEFAULT_DATA_DIR",
    "DEMO_ENV",
    "EMBEDDING_MODEL_ENV",
    "GCLOUD_CONFIG_ENV",
    "GEMINI_CREDENTIAL_VARIABLES",
    "GOOGLE_CLOUD_PROJECT_ENV",
    "MEMORY_TTL_ENV",
    "MODEL_ENV",
    "POOL_TIMEOUT_ENV",
    "READ_DATABASE_URL_ENV",
    "REDACT_CHOICES",
    "REDACT_ENV",
    "ROW_LEVEL_SECURITY_ENV",
    "SCHEMA_ENV",
    "SESSION_TTL_ENV",
    "STATEMENT_TIMEOUT_ENV",
    "application_default_credentials",
    "boolean",
    "chosen",
    "credentials_warning",
    "database_password",
    "database_timeouts",
    "embedded_data_dir",
    "environment",
    "export",
    "from_environ",
    "gemini_credentials",
    "parse_duration",
    "parse_embedding_model",
    "parse_redact",
    "parse_timeout",
    "row_level_security",
    "with_database_password",
]


def parse_embedding_model(text: str | None) -> str | None:
    """The Gemini embedding model a setting names, or None for full-text search only (unset,
    empty or `none`), so `none` can switch off what an outer setting turned on."""
    name = (text or "").strip()
    return None if name.lower() in ("", "none") else name


def parse_redact(text: str) -> Redactor | None:
    """The redactor a setting names: `pii` is a `PiiRedactor`, `none` is None (so `none` can
    switch off what an outer setting turned on); case and surrounding spaces are ignored.

    Raises InputValidationError (a ValueError) listing the accepted values, so a typo fails at
    start-up instead of silently storing personal data.
    """
    name = text.strip().lower()
    if name not in REDACT_CHOICES:
        raise InputValidationError(f"expected one of {', '.join(REDACT_CHOICES)}")
    if name != "pii":
        return None
    from ..redaction import PiiRedactor

    return PiiRedactor()


def environment(environ: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """`environ`, else the process's environment: the only read of `os.environ` in the package,
    so a variable means the same to every entry point and a test passes its own mapping."""
    return os.environ if environ is None else environ


def export(settings: Mapping[str, str | None]) -> None:
    """Set variables of the process's environment (a value) or remove them (None), for code in
    this process that reads them later: `adk-memory web` hands its options to the agents'
    `configure()` this way. The only write of `os.environ` in the package."""
    for name, value in settings.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def gemini_credentials(environ: Mapping[str, str] | None = None) -> bool:
    """Whether `environ` holds what google-genai needs to call a Gemini model (it reads the
    variables itself): an API key (GOOGLE_API_KEY or GEMINI_API_KEY), or Vertex AI switched on
    as google-genai reads it (GOOGLE_GENAI_USE_VERTEXAI `true` or `1`) with a project
    (GOOGLE_CLOUD_PROJECT). Without, a Gemini call can only fail. Default: the process's."""
    environ = environment(environ)
    api_key, gemini_key, vertex = GEMINI_CREDENTIAL_VARIABLES
    if environ.get(api_key) or environ.get(gemini_key):
        return True
    use_vertex = environ.get(vertex, "").strip().lower() in ("true", "1")
    return use_vertex and bool(environ.get(GOOGLE_CLOUD_PROJECT_ENV))


def application_default_credentials(environ: Mapping[str, str]) -> bool:
    """Whether Application Default Credentials are on this machine as a file (what Vertex AI
    needs besides its variables): `GOOGLE_APPLICATION_CREDENTIALS`, or gcloud's
    `application_default_credentials.json`. On Google Cloud the metadata server provides them
    without a file, which this does not see (it never makes a request)."""
    named = environ.get(APPLICATION_CREDENTIALS_ENV)
    if named:
        return Path(named).expanduser().is_file()
    config = environ.get(GCLOUD_CONFIG_ENV) or str(Path("~/.config/gcloud").expanduser())
    return (Path(config) / "application_default_credentials.json").is_file()


def credentials_warning(environ: Mapping[str, str] | None = None) -> str | None:
    """What to say at start-up when the agents' Gemini models cannot be called: no API key and
    no Vertex AI settings (every turn would fail with "No API key was provided"), or Vertex AI
    without Application Default Credentials on this machine. None when they look usable.
    Default: the process's environment."""
    environ = environment(environ)
    if not gemini_credentials(environ):
        return (
            "WARNING: no Gemini credentials found (GOOGLE_API_KEY or GEMINI_API_KEY, or "
            "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and Application Default "
            "Credentials): every agent turn on a Gemini model will fail. To try the samples "
            "without a key, run: adk-memory web samples --demo"
        )
    keys = GEMINI_CREDENTIAL_VARIABLES[:2]  # the API keys; else it is Vertex AI
    if not any(environ.get(key) for key in keys) and not application_default_credentials(environ):
        return (
            "WARNING: Vertex AI is on but no Application Default Credentials file was found "
            "(gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS); off "
            "Google Cloud, agent turns will fail. Without credentials: --demo."
        )
    return None


def boolean(raw: str) -> bool:
    """A switch's value: true/1/yes/on or false/0/no/off (any case)."""
    words = {"true": True, "1": True, "yes": True, "on": True}
    words |= {"false": False, "0": False, "no": False, "off": False}
    if raw.lower() not in words:
        raise ValueError("expected true or false")
    return words[raw.lower()]


def row_level_security(environ: Mapping[str, str]) -> bool:
    """`$ADK_MEMORY_ROW_LEVEL_SECURITY` (default on)."""
    chosen_value = from_environ(environ, ROW_LEVEL_SECURITY_ENV, boolean)
    return True if chosen_value is None else chosen_value


def from_environ(environ: Mapping[str, str], name: str, parse: Callable[[str], T]) -> T | None:
    """Variable `name` parsed, or None when it is unset or empty; a value `parse` rejects is an
    InputValidationError naming the variable, so a typo fails at start-up."""
    raw = environ.get(name)
    if not raw:
        return None
    try:
        return parse(raw)
    except ValueError as exc:
        raise InputValidationError(f"Invalid {name}={raw!r}: {exc}.") from exc


def chosen(
    given: T | None, environ: Mapping[str, str], name: str, parse: Callable[[str], T]
) -> T | None:
    """The one precedence of every setting: the argument the caller wrote (not None), else
    variable `name` parsed (`from_environ`), else None for the caller's documented default."""
    return given if given is not None else from_environ(environ, name, parse)


def database_timeouts(environ: Mapping[str, str]) -> DatabaseTimeouts:
    """The database timeouts `$ADK_MEMORY_STATEMENT_TIMEOUT`, `$ADK_MEMORY_CONNECT_TIMEOUT` and
    `$ADK_MEMORY_POOL_TIMEOUT` set (`none` included), the defaults for those left unset."""
    given = {
        field: from_environ(environ, name, parse)
        for field, name, parse in (
            ("statement", STATEMENT_TIMEOUT_ENV, parse_timeout),
            ("connect", CONNECT_TIMEOUT_ENV, parse_timeout),
            ("pool", POOL_TIMEOUT_ENV, parse_duration),
        )
        if environ.get(name)
    }
    return DatabaseTimeouts.model_validate(given)


def embedded_data_dir(given: str | os.PathLike[str] | None, environ: Mapping[str, str]) -> Path:
    """The embedded server's absolute data directory as every entry point chooses it: `given`,
    else `$ADK_MEMORY_DATA_DIR`, else `./.adk/pgdata` (relative paths against the working
    directory), so `configure()`, `adk-memory://` and the `adk-memory` command run from one
    directory share one database."""
    return resolve_data_dir(given or environ.get(DATA_DIR_ENV))


def database_password(environ: Mapping[str, str]) -> str | None:
    """The password from `$ADK_MEMORY_DATABASE_PASSWORD` or the file named by
    `$ADK_MEMORY_DATABASE_PASSWORD_FILE` (setting both is ambiguous: an error); None if neither
    is set."""
    direct, path = environ.get(DATABASE_PASSWORD_ENV), environ.get(DATABASE_PASSWORD_FILE_ENV)
    if direct and path:
        raise InputValidationError(
            f"Set {DATABASE_PASSWORD_ENV} or {DATABASE_PASSWORD_FILE_ENV}, not both."
        )
    if path:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputValidationError(
                f"Cannot read the database password file {path!r} ({DATABASE_PASSWORD_FILE_ENV}): "
                f"{exc.strerror}."
            ) from exc
        return text.removesuffix("\n").removesuffix("\r")
    return direct or None


def role_password(environ: Mapping[str, str], role: str) -> str | None:
    """The password for `role`'s LOGIN user from `ROLE_PASSWORD_ENV`; None when unset."""
    return environ.get(ROLE_PASSWORD_ENV.format(role=role.upper())) or None


def with_database_password(url: str, environ: Mapping[str, str]) -> str:
    """`url` with the environment's password (`database_password`) when it carries none; a
    password written in the URL wins. Keep the result in memory only: it holds the secret. A
    URL that does not parse is returned as it is, for the engine to reject with its message."""
    from sqlalchemy.engine import make_url  # here: `adk-memory db ...` starts without it
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        return url
    if parsed.password:
        return url
    password = database_password(environ)
    if password is None:
        return url
    return parsed.set(password=password).render_as_string(hide_password=False)
