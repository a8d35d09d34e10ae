"""adk-memory's own exceptions: one base class and a typed subclass per kind of failure.

Owns: every error type adk-memory raises, so a caller can catch `AdkMemoryError` for everything
of ours, or one subclass for one failure, and never meets a raw driver, pydantic or `assert`
error. Where ADK has the concept (`InputValidationError`, `SessionNotFoundError`,
`AlreadyExistsError`, `StaleSessionError`), ours subclasses ADK's type under the same name, so
code written against ADK's services (`except InputValidationError` from `google.adk.errors`)
catches ours unchanged. It imports nothing of the package: every layer may raise these.
"""

from __future__ import annotations

from google.adk.errors import StaleSessionError as _AdkStaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError as _AdkAlreadyExistsError
from google.adk.errors.input_validation_error import (
    InputValidationError as _AdkInputValidationError,
)
from google.adk.errors.session_not_found_error import (
    SessionNotFoundError as _AdkSessionNotFoundError,
)


class AdkMemoryError(Exception):
    """The base of every error adk-memory raises."""


class InputValidationError(AdkMemoryError, _AdkInputValidationError):
    """Bad input: a wrong type, an empty or malformed id, text a column cannot hold, a count
    out of range, a bad option. Raised before anything is written."""


class ModelCredentialsError(InputValidationError):
    """A worker or a backfill refused to start: its generation model is a Gemini model and the
    environment holds no credentials for it (an API key, or Vertex AI settings), so every job
    would fail. Raised before anything connects."""


class SessionNotFoundError(AdkMemoryError, _AdkSessionNotFoundError):
    """The session does not exist in this app and user (another user's never counts)."""


class AlreadyExistsError(AdkMemoryError, _AdkAlreadyExistsError):
    """Something with this id already exists (a session created twice by different calls)."""


class StaleSessionError(AdkMemoryError, _AdkStaleSessionError):
    """The session changed in the database since the caller read it: re-read and retry."""


class NotFoundError(AdkMemoryError, LookupError):
    """A memory, operation or quarantined fact with this id does not exist in this scope."""


class ErasedError(AdkMemoryError, PermissionError):
    """What was asked for belongs to an erasure (a tombstoned session): it is never written
    back, except by an operator's import with `allow_erased`."""


class DatabaseTimeoutError(AdkMemoryError, TimeoutError):
    """The database did not answer in time: no connection within the connect or pool timeout,
    or a statement that outran the statement timeout (cancelled by the server, or given up by
    the client when the server stopped answering).

    A timed-out write was rolled back, or, when the server stopped answering mid-commit, may
    have committed whole; never half. Every write is safe to repeat, so retrying is the cure.
    """


class DatabaseUnavailableError(AdkMemoryError, ConnectionError):
    """The database could not be reached or refused the connection (down, wrong host or port,
    wrong role or password, missing database). The message says which; nothing was written."""


class OptedOutError(InputValidationError):
    """The user opted out of memory (`set_opt_out`, or the `OPT_OUT_STATE_KEY` state key):
    nothing is written for them, by any path (and, with `RetrievalConfig.opt_out_hides`,
    nothing is read). Raised before anything is written; a memory tool tells the model."""


class JobPayloadError(InputValidationError):
    """A queued generation job's payload is not one the worker can run (an unknown `source`, a
    missing or mistyped field): found when the queue claims it, which dead-letters it at once
    with this one-line reason (no try could succeed). `job_id` names the job."""

    def __init__(self, job_id: str, reason: str) -> None:
        super().__init__(f"Malformed job payload: {reason}")
        self.job_id = job_id
