"""How every command fails: one `Error:` line and exit status 1 for what the user can fix.

Owns: turning errors the user can fix (a bad URL, an unreachable server, a wrong role or
password, a missing database, a schema that needs `adk-memory migrate`, ...) into one line, and
running a command's coroutine under that rule. It imports nothing heavy (no SQLAlchemy, no
ADK agents), so commands that never connect start fast.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import asyncpg
import click
from google.adk.errors.input_validation_error import (
    InputValidationError as AdkInputValidationError,
)

from ..db.driver import CONNECT_FAILURES, driver_error
from ..errors import AdkMemoryError, DatabaseTimeoutError
from ..settings.variables import STATEMENT_TIMEOUT_ENV

T = TypeVar("T")

_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (*CONNECT_FAILURES, asyncio.TimeoutError)
"""Raised outside a pooled connection (the embedded server's start, a direct connect)."""
_USER_ERRORS: tuple[type[BaseException], ...] = (
    AdkMemoryError,
    AdkInputValidationError,  # ADK's own, raised by ADK code a command calls
    asyncpg.exceptions.InsufficientPrivilegeError,
)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn errors the user can fix (a bad URL, an unreachable server, a wrong role or password,
    a missing database, a schema that needs `adk-memory migrate`, ...) into
    `click.ClickException`: one line on stderr, exit code 1."""
    try:
        yield
    except Exception as raised:
        exc = driver_error(raised)
        if isinstance(exc, DatabaseTimeoutError):  # an OSError, but no refused connection
            message = f"{exc} For a long job, raise ${STATEMENT_TIMEOUT_ENV} (e.g. 10m, none)."
        elif isinstance(exc, _USER_ERRORS):  # before OSError: DatabaseUnavailableError is one
            message = str(exc)
        elif isinstance(exc, _CONNECTION_ERRORS):
            message = f"Could not connect to the database: {exc}"
        elif isinstance(exc, subprocess.CalledProcessError):  # only the embedded server runs one
            message = (
                f"The embedded PostgreSQL failed ({exc}); its log is the file `log` in its data "
                "directory."
            )
        else:
            raise
        raise click.ClickException(" ".join(message.split())) from raised


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine to completion, with `user_errors()` applied."""
    with user_errors():
        return asyncio.run(coroutine)
