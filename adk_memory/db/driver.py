"""What the driver's failures mean: which errors say a connection could not be made, and the
driver's own error inside SQLAlchemy's wrappers.

Owns: that classification, shared by the engine (which raises adk-memory's typed errors from
it) and the command line (which prints it as one line). Kept apart from the engine so a
command that never connects (`adk-memory db status`) loads neither SQLAlchemy nor the engine.
"""

from __future__ import annotations

import asyncpg

CONNECT_FAILURES: tuple[type[BaseException], ...] = (
    OSError,  # refused, unknown host, missing Unix socket, TLS refused
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.InvalidAuthorizationSpecificationError,  # role or password
    asyncpg.exceptions.InvalidCatalogNameError,  # no such database
    asyncpg.exceptions.ClientConfigurationError,
)


def driver_error(exc: BaseException) -> BaseException:
    """The driver's error inside SQLAlchemy's wrappers: a pool that fails to connect raises
    SQLAlchemy's DBAPI error, whose cause is what asyncpg said (the role, the database, ...)."""
    while type(exc).__module__.startswith("sqlalchemy.") and exc.__cause__ is not None:
        exc = exc.__cause__
    return exc
