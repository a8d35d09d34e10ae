"""The `ADK_MEMORY_*` environment variables: their names and how their values are read.

Owns: the one definition of every variable that `configure()`, the URI schemes, the
`adk-memory` command, `python -m adk_memory.worker` and the deployment read (so a variable
means the same thing to all of them), the parsers of their values (durations, the embedding
model, the redactor), the embedded server's data directory as they all choose it, and the
database password put into a URL that has none.

It never reads `os.environ` itself (callers pass the environment, so tests and deployments can
pass their own), never builds a service and never connects. A password it reads only ever goes
into the in-memory URL it returns.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

from google.adk.errors.input_validation_error import InputValidationError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from .db.embedded import DATA_DIR_ENV, DEFAULT_DATA_DIR, resolve_data_dir
from .redaction import PiiRedactor, Redactor

T = TypeVar("T")

DATABASE_URL_ENV = "ADK_MEMORY_DATABASE_URL"
"""`postgresql://USER@HOST:5432/DB`; unset: the embedded PostgreSQL in the data directory."""

DATABASE_PASSWORD_ENV = "ADK_MEMORY_DATABASE_PASSWORD"
"""The database password, for URLs that carry none (e.g. a Secret Manager secret mounted as an
environment variable), so no password is ever written into a URL on disk or on a command line."""

DATABASE_PASSWORD_FILE_ENV = "ADK_MEMORY_DATABASE_PASSWORD_FILE"
"""A file holding the database password (e.g. a secret mounted as a volume); one trailing
newline is ignored."""

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

REDACT_CHOICES = ("pii", "none")
"""The values `ADK_MEMORY_REDACT`, the URI option `redact` and `--redact` accept."""

__all__ = [
    "DATABASE_PASSWORD_ENV",
    "DATABASE_PASSWORD_FILE_ENV",
    "DATABASE_URL_ENV",
    "DATA_DIR_ENV",
    "EMBEDDING_MODEL_ENV",
    "MEMORY_TTL_ENV",
    "MODEL_ENV",
    "REDACT_CHOICES",
    "REDACT_ENV",
    "SCHEMA_ENV",
    "SESSION_TTL_ENV",
    "database_password",
    "embedded_data_dir",
    "from_environ",
    "parse_duration",
    "parse_embedding_model",
    "parse_redact",
    "with_database_password",
]

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)([wdhms]?)")
_UNIT_SECONDS = {"w": 604_800, "d": 86_400, "h": 3_600, "m": 60, "s": 1, "": 1}


def parse_duration(text: str) -> timedelta:
    """A positive duration: seconds (`3600`), or with units `90s`, `15m`, `12h`, `30d`, `2w`,
    combined as in `1d12h`: short enough for a URL query or an environment variable.

    Raises InputValidationError (a ValueError) saying what was expected.
    """
    cleaned = text.strip().lower()
    parts = _DURATION_PART.findall(cleaned)
    unitless = [number for number, unit in parts if not unit]
    seconds = sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)
    if (
        not parts
        or "".join(number + unit for number, unit in parts) != cleaned
        or (unitless and len(parts) > 1)
        or seconds <= 0
    ):
        raise InputValidationError(
            f"{text!r} is not a duration such as 3600, 90s, 15m, 12h, 30d or 1d12h"
        )
    return timedelta(seconds=seconds)


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
    return PiiRedactor() if name == "pii" else None


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


def embedded_data_dir(given: str | os.PathLike[str] | None, environ: Mapping[str, str]) -> Path:
    """The embedded server's absolute data directory as every entry point chooses it: `given`,
    else `$ADK_MEMORY_DATA_DIR`, else `./.adk/pgdata` (relative paths against the working
    directory), so `configure()`, `adk-memory://` and the `adk-memory` command run from one
    directory share one database."""
    return resolve_data_dir(given or environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)


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


def with_database_password(url: str, environ: Mapping[str, str]) -> str:
    """`url` with the environment's password (`database_password`) when it carries none; a
    password written in the URL wins. Keep the result in memory only: it holds the secret. A
    URL that does not parse is returned as it is, for the engine to reject with its message."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return url
    if parsed.password:
        return url
    password = database_password(environ)
    if password is None:
        return url
    return parsed.set(password=password).render_as_string(hide_password=False)
