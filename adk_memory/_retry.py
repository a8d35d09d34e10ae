"""The one retry policy: which failures are worth another try, and how long to wait before it.

Owns: telling transient failures (rate limits, server errors, timeouts, dropped connections:
another try may succeed) from permanent ones (a missing or rejected credential, any other 4xx,
bad input: another try fails the same way, so it fails fast), the backoff schedule (exponential,
half jittered, raised to the delay a server asks for, capped), and running an async call under
a policy with tenacity. Every retry in the package goes through here: the embedder, the
summarization plugin, the Model Armor guard, and the job queue's schedule between a job's tries
(the queue persists its waits and its attempt count in SQL, so it takes only `Backoff`,
`is_permanent` and `describe` from here). `describe` words a failure in one line for a log or a
dead-letter reason, saying which of the two it is.

It never retries a cancellation (`asyncio.CancelledError`, `KeyboardInterrupt`), never sleeps or
reads the clock except through the `sleep` and `clock` it is given (tests pass their own, so no
test waits for real), and knows nothing of what the call does.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from google.adk.errors.input_validation_error import (
    InputValidationError as AdkInputValidationError,
)
from google.auth import exceptions as auth_errors
from google.genai import errors as genai_errors
from tenacity import AsyncRetrying, RetryCallState

from .errors import InputValidationError

try:
    from google.api_core import exceptions as api_core_errors
except ImportError:  # google-api-core comes with the Google Cloud clients (the modelarmor extra)
    api_core_errors = None  # type: ignore[assignment]

T = TypeVar("T")

TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
"""HTTP statuses worth another try: request timeout, rate limited, internal error, bad gateway,
unavailable, deadline exceeded. Every other 4xx is permanent."""

_MISSING_CREDENTIALS = (
    "No API key was provided",
    "Project or API key must be set",
    "Could not resolve project",
    "Missing key inputs argument",
)
"""How google-genai's `ValueError` for absent credentials starts (it has no type of its own);
tests/test_retry.py fails loudly if google-genai rewords it."""

_RETRY_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")

_API_KEY = re.compile(r"AIza[0-9A-Za-z_-]{35}")
"""The shape of a Google API key: masked in every failure `describe` words."""

_DESCRIBED_LENGTH = 1000
"""The longest failure `describe` words (enough to diagnose; a log line, not a dump)."""


def _status(exc: BaseException) -> int | None:
    """The HTTP status of a Google API error (google-genai's, or google-api-core's, which maps
    gRPC codes to HTTP ones); None for anything else."""
    if isinstance(exc, genai_errors.APIError):
        return exc.code
    if api_core_errors is not None and isinstance(exc, api_core_errors.GoogleAPICallError):
        return exc.code
    return None


def is_transient(exc: BaseException) -> bool:
    """Another try may succeed: a transient status (`TRANSIENT_STATUS`), a timeout, a dropped
    or refused connection, or a credential refresh that failed on the network."""
    status = _status(exc)
    if status is not None:
        return status in TRANSIENT_STATUS
    if isinstance(exc, auth_errors.TransportError):
        return True
    if isinstance(exc, auth_errors.GoogleAuthError):
        return exc.retryable
    # aiohttp's timeouts are asyncio.TimeoutError, not TimeoutError, before Python 3.11.
    return isinstance(
        exc,
        (
            TimeoutError,
            asyncio.TimeoutError,
            ConnectionError,
            httpx.TimeoutException,
            httpx.NetworkError,
        ),
    )


def is_permanent(exc: BaseException) -> bool:
    """Another try fails the same way: a 4xx other than 408/429 (a rejected API key, a model
    that does not exist, a request the API refuses), missing or unusable credentials, or input
    ADK's `InputValidationError` rejects. Anything unclassified is neither: a caller retrying
    model calls (whose next answer may differ) retries it, one retrying a transport does not."""
    status = _status(exc)
    if status is not None:
        return 400 <= status < 500 and status not in TRANSIENT_STATUS
    if isinstance(exc, auth_errors.GoogleAuthError):
        return not is_transient(exc)
    if isinstance(exc, AdkInputValidationError):  # ADK's base: any service's bad input
        return True
    return _missing_credentials(exc)


def _missing_credentials(exc: BaseException) -> bool:
    return isinstance(exc, ValueError) and str(exc).startswith(_MISSING_CREDENTIALS)


def describe(exc: BaseException) -> str:
    """`exc` in one line, for a log or a dead-letter reason. A model's error (google-genai's,
    or its missing credentials) reads `model error (permanent): MESSAGE (TYPE CODE STATUS)`
    (only the message of the JSON body it carries), a Google API's or a credential's alike,
    `transient` for anything not permanent (a job queue tries it again); anything else reads
    `TYPE: MESSAGE`. Whitespace is collapsed, anything shaped like an API key is masked (a
    message may quote a request), and the result is cut at 1000 characters."""
    kind = "permanent" if is_permanent(exc) else "transient"
    name = type(exc).__name__
    if isinstance(exc, genai_errors.APIError):
        source = " ".join(str(part) for part in (name, exc.code, exc.status) if part)
        text = f"model error ({kind}): {exc.message or exc.status} ({source})"
    elif _missing_credentials(exc):
        text = f"model error (permanent): {exc}"
    elif api_core_errors is not None and isinstance(exc, api_core_errors.GoogleAPICallError):
        text = f"Google API error ({kind}): {exc.message} ({name} {exc.code})"
    elif isinstance(exc, auth_errors.GoogleAuthError):
        text = f"credentials error ({kind}): {exc} ({name})"
    else:
        text = f"{name}: {exc}"
    text = _API_KEY.sub("[API KEY]", " ".join(text.split()))
    return text if len(text) <= _DESCRIBED_LENGTH else text[: _DESCRIBED_LENGTH - 1] + "…"


def not_permanent(exc: BaseException) -> bool:
    """The predicate for calls to a model: everything but `is_permanent` failures is retried
    (a malformed or empty answer may be fine the next time)."""
    return not is_permanent(exc)


def requested_delay(exc: BaseException | None) -> float | None:
    """The wait a 429 asks for (google.rpc.RetryInfo `retryDelay`, e.g. "17s"), if any: quota
    errors from the Gemini API say when the quota refills, and retrying sooner only burns a
    try."""
    details = getattr(exc, "details", None)
    if not isinstance(details, dict):
        return None
    error = details.get("error", details)
    entries = error.get("details") if isinstance(error, dict) else None
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, dict) and str(entry.get("@type", "")).endswith("RetryInfo"):
            match = _RETRY_DELAY.match(str(entry.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


@dataclass(frozen=True)
class Backoff:
    """The wait after a failed try: `base` seconds after the first, doubling after each further
    one, capped at `cap`; half of each step fixed and half random, so callers failing together
    spread out but none retries at once. A delay the server asks for (`requested_delay`) raises
    it, up to `cap`."""

    base: float
    cap: float = 60.0

    def __post_init__(self) -> None:
        if self.base < 0 or self.cap < self.base:
            raise InputValidationError("Backoff needs 0 <= base <= cap.")

    def delay(self, attempt: int, error: BaseException | None = None) -> float:
        """Seconds to wait after failed try number `attempt` (1 for the first try)."""
        # The exponent is bounded so that a huge attempt count caps instead of overflowing.
        step = min(self.cap, self.base * 2 ** min(max(attempt - 1, 0), 64))
        wait = step / 2 + random.uniform(0, step / 2)
        hint = requested_delay(error)
        if hint is not None:
            wait = max(wait, hint)
        return min(wait, self.cap)


@dataclass(frozen=True)
class RetryPolicy:
    """How one call is retried: the failures `retry_on` accepts, waiting `backoff` between
    tries, until `max_attempts` tries were made or until no further try could start within
    `deadline` seconds of the first one (at least one of the two bounds is required)."""

    backoff: Backoff
    max_attempts: int | None = None
    deadline: float | None = None
    retry_on: Callable[[BaseException], bool] = is_transient

    def __post_init__(self) -> None:
        if self.max_attempts is None and self.deadline is None:
            raise InputValidationError("A retry policy needs max_attempts or a deadline.")
        if self.max_attempts is not None and self.max_attempts < 1:
            raise InputValidationError("max_attempts must be at least 1.")
        if self.deadline is not None and self.deadline <= 0:
            raise InputValidationError("deadline must be positive.")


RetryHook = Callable[[int, BaseException, float], None]
"""Called before each wait with the failed try's number, its error and the wait in seconds."""


async def retry_call(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    on_retry: RetryHook | None = None,
) -> T:
    """`await call()`, tried again under `policy` after each failure it accepts; the last
    failure is raised as it is (not wrapped), and so is one `policy.retry_on` refuses, at once.
    """
    started = clock()

    def retry(state: RetryCallState) -> bool:
        error = state.outcome.exception() if state.outcome is not None else None
        return isinstance(error, Exception) and policy.retry_on(error)

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        return policy.backoff.delay(state.attempt_number, error)

    def stop(state: RetryCallState) -> bool:
        if policy.max_attempts is not None and state.attempt_number >= policy.max_attempts:
            return True
        upcoming = state.upcoming_sleep or 0.0
        return policy.deadline is not None and clock() - started + upcoming >= policy.deadline

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        if on_retry is not None and error is not None:
            on_retry(state.attempt_number, error, state.upcoming_sleep)

    async def attempt() -> T:
        # A coroutine function, so tenacity awaits each try (a lambda returning an awaitable
        # would look synchronous to it).
        return await call()

    retrying = AsyncRetrying(
        sleep=sleep, stop=stop, wait=wait, retry=retry, before_sleep=before_sleep, reraise=True
    )
    return await retrying(attempt)
