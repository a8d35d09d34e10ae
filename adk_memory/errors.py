"""adk-memory's own exceptions: one base class and a typed subclass per kind of failure.

Owns: every error type adk-memory raises, so a caller can catch `AdkMemoryError` for everything
of ours, or one subclass for one failure, and never meets a raw driver, pydantic or `assert`
error. Where ADK has the concept (`InputValidationError`, `SessionNotFoundError`,
`AlreadyExistsError`, `StaleSessionError`), ours subclasses ADK's type under the same name, so
code written against ADK's services (`except InputValidationError` from `google.adk.errors`)
catches ours unchanged. It imports nothing of the package: every layer may raise these, and
each module that raised one of these first still re-exports it (imported from here), so the old
import paths keep working. Two private classes are control flow that never leaves its module
(`_Refused`, `_NotFast`); they live here too, so every exception class has one home.
"""

from __future__ import annotations

from typing import Protocol

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


class UnsupportedConfigError(InputValidationError):
    """A Memory Bank configuration field adk-memory does not implement (named in the message,
    with its path): refused rather than dropped, so a config that relies on it never runs
    silently without it."""


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


class AuthenticationError(AdkMemoryError, PermissionError):
    """A request to a server with identity binding on carried no credentials, or credentials
    that do not verify (a bad signature, an unknown key, another audience or issuer, expired,
    an algorithm not allowed). Answered 401 before anything runs; the message says which
    check failed, never the token."""


class ForbiddenError(AdkMemoryError, PermissionError):
    """The request's verified principal may not act as the user it names (another user's
    sessions, runs, artifacts or memories), or may not reach an operator's page (the memory
    inspector, ADK's dev tools) without being an operator. Answered 403 before anything
    runs."""


class DatabaseTimeoutError(AdkMemoryError, TimeoutError):
    """The database did not answer in time: no connection within the connect or pool timeout,
    or a statement that outran the statement timeout (cancelled by the server, or given up by
    the client when the server stopped answering).

    A timed-out write was rolled back, or, when the server stopped answering mid-commit, may
    have committed whole; never half. Every write is safe to repeat, so retrying is the cure.
    """


class DatabasePermissionError(AdkMemoryError, PermissionError):
    """The database refused a statement for lack of a privilege: the process connects with a
    role too narrow for what it asked (the agent's role erasing, a worker migrating). The
    message names the role, what was refused and which of adk-memory's roles may
    (`adk-memory db roles`)."""


class DatabaseUnavailableError(AdkMemoryError, ConnectionError):
    """The database could not be reached or refused the connection (down, wrong host or port,
    wrong role or password, missing database). The message says which; nothing was written."""


class OptedOutError(InputValidationError):
    """The user opted out of memory (`set_opt_out`, or the `OPT_OUT_STATE_KEY` state key):
    nothing is written for them, by any path (and, with `RetrievalConfig.opt_out_hides`,
    nothing is read). Raised before anything is written; a memory tool tells the model."""


class InputTypeError(AdkMemoryError, TypeError):
    """An argument of the wrong type: one string where a list of them is meant, a service of
    another class than the one a tool, callback or plugin needs, an unknown keyword argument.
    A `TypeError`, as before it was typed; deliberately not an `InputValidationError` (a
    `ValueError`), which tools turn into an answer to the model: a wrong type is the
    application's mistake, raised to it."""


class ServiceConfigurationError(AdkMemoryError, RuntimeError):
    """The service was asked for work it was built without the parts for (memory generation
    on a service made without a generation model). Nothing was written."""


class EmbeddingDimensionError(InputValidationError):
    """The embedder's dimensions differ from the ones this store's vectors were made with."""


class _Verdict(Protocol):
    """What `MemoryRejectedError` reads of a guard's verdict (`adk_memory.memory.guard.
    GuardVerdict` is one): this module imports nothing of the package, the guard included."""

    @property
    def action(self) -> str: ...

    @property
    def reason(self) -> str: ...

    @property
    def rule(self) -> str: ...


class MemoryRejectedError(InputValidationError):
    """The memory guard refused a fact written directly (create, update, add_memory, a tool).
    Nothing was stored. `verdict` says which rule and why (never the fact itself); `rule` is
    its rule id."""

    def __init__(self, verdict: _Verdict) -> None:
        super().__init__(
            f"The memory guard refused this fact ({verdict.rule or 'policy'}): {verdict.reason}"
        )
        self.verdict = verdict

    @property
    def rule(self) -> str:
        """The id of the rule that refused the fact ("" when the guard named none)."""
        return self.verdict.rule


class AppConfigError(AdkMemoryError):
    """A stored app configuration this adk-memory cannot use: missing, or not valid for this
    version (e.g. written by a newer adk-memory). A generation job that names it fails with this
    error, is retried with backoff (an upgraded worker may read it) and is dead-lettered after
    its last try; nothing of it is written."""


class GenerationOutputError(AdkMemoryError, ValueError):
    """The model answered, but not with what was asked: malformed JSON, the wrong shape, an
    invalid operation, or a blocked/truncated response. Worth retrying: the next answer may be
    fine."""


class SummarizationError(AdkMemoryError, RuntimeError):
    """The model gave no summary: an answer without text (retried like any model failure), or
    no usable answer in `max_attempts` calls (logged; the events stay raw)."""


class SchemaVersionError(AdkMemoryError, RuntimeError):
    """The database's schema is newer than this code, or older and migrations are disabled."""


class MigrationError(AdkMemoryError, RuntimeError):
    """A migration step failed. Nothing of a component's run was applied (it is one
    transaction); a vector step is resumed where it stopped by the next run."""


class EmbeddedPostgresUnavailableError(AdkMemoryError, RuntimeError):
    """Raised when no database URL was given and the embedded server cannot be used."""


class DatasetError(AdkMemoryError, ValueError):
    """An evaluation dataset file that cannot be used, with every problem found and where it
    is. A `ValueError` too, as it was before it joined `AdkMemoryError`."""


class EvaluationError(AdkMemoryError, RuntimeError):
    """An evaluation could not measure what it was asked to: the service did not keep every
    memory of the dataset (its guard quarantined them, or another run shares the schema), or
    no question of the dataset could be answered."""


class _Refused(Exception):
    """A request the memory inspector refuses, with the status and the reason shown. Control
    flow inside `adk_memory.adk.inspector` (turned into a response there), never raised out of
    it, so not an `AdkMemoryError`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _NotFast(Exception):
    """An event's stored JSON needs pydantic's validation (`adk_memory.sessions.decoding`'s
    fast path declines it). Control flow inside that module, never raised out of it."""


class JobPayloadError(InputValidationError):
    """A queued generation job's payload is not one the worker can run (an unknown `source`, a
    missing or mistyped field): found when the queue claims it, which dead-letters it at once
    with this one-line reason (no try could succeed). `job_id` names the job."""

    def __init__(self, job_id: str, reason: str) -> None:
        super().__init__(f"Malformed job payload: {reason}")
        self.job_id = job_id
