"""adk-memory: durable sessions and long-term memory for Google ADK agents on PostgreSQL."""

from .db.embedded import EmbeddedPostgresUnavailableError, embedded_url
from .db.engine import DEFAULT_SCHEMA, normalise_url
from .db.migrations import SchemaVersionError
from .sessions.redaction import PiiRedactor, Redactor
from .sessions.service import PostgresSessionService

__all__ = [
    "DEFAULT_SCHEMA",
    "EmbeddedPostgresUnavailableError",
    "PiiRedactor",
    "PostgresSessionService",
    "Redactor",
    "SchemaVersionError",
    "embedded_url",
    "normalise_url",
]
