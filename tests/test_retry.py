"""The one retry helper (`adk_memory._retry`): what is transient, what is permanent, the backoff
schedule, and a call run under a policy. No test waits: the sleep and the clock are injected."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from google import genai
from google.adk.errors.input_validation_error import InputValidationError
from google.auth import exceptions as auth_errors
from google.genai import errors

from adk_memory._retry import (
    Backoff,
    RetryPolicy,
    is_permanent,
    is_transient,
    not_permanent,
    requested_delay,
    retry_call,
)

api_core = pytest.importorskip("google.api_core.exceptions")


def api_error(code: int, **error: Any) -> errors.APIError:
    return errors.APIError(code, {"error": {"code": code, **error}})


class FakeTime:
    """A clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class Flaky:
    """An async call that raises `failures` in turn, then returns "ok"."""

    def __init__(self, *failures: BaseException) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


TRANSIENT = [
    api_error(429),
    api_error(408),
    api_error(500),
    api_error(502),
    api_error(503),
    api_error(504),
    api_core.ServiceUnavailable("unavailable"),
    api_core.DeadlineExceeded("deadline"),
    api_core.ResourceExhausted("quota"),
    TimeoutError(),
    asyncio.TimeoutError(),
    ConnectionResetError(),
    httpx.ReadTimeout("read timed out"),
    httpx.ConnectError("refused"),
    auth_errors.TransportError("token endpoint unreachable"),
]
PERMANENT = [
    api_error(400),
    api_error(401),
    api_error(403),
    api_error(404),
    api_core.PermissionDenied("no"),
    api_core.InvalidArgument("bad"),
    auth_errors.DefaultCredentialsError("no credentials"),
    auth_errors.RefreshError("invalid_grant"),
    InputValidationError("bad input"),
]
NEITHER = [RuntimeError("model hiccup"), ValueError("malformed JSON"), KeyError("x")]


@pytest.mark.parametrize("error", TRANSIENT, ids=repr)
def test_transient_failures(error: BaseException) -> None:
    assert is_transient(error) and not is_permanent(error) and not_permanent(error)


@pytest.mark.parametrize("error", PERMANENT, ids=repr)
def test_permanent_failures(error: BaseException) -> None:
    assert is_permanent(error) and not is_transient(error) and not not_permanent(error)


@pytest.mark.parametrize("error", NEITHER, ids=repr)
def test_unclassified_failures_are_retried_only_by_the_model_predicate(
    error: BaseException,
) -> None:
    assert not is_transient(error) and not is_permanent(error) and not_permanent(error)


@pytest.mark.parametrize("vertexai", [False, True])
def test_a_missing_api_key_is_permanent(monkeypatch: pytest.MonkeyPatch, vertexai: bool) -> None:
    """google-genai says so with a plain ValueError; this fails loudly if it rewords it."""
    for name in (
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_GENAI_USE_VERTEXAI",
    ):
        monkeypatch.delenv(name, raising=False)
    if vertexai:
        import google.auth

        monkeypatch.setattr(google.auth, "default", lambda *a, **k: (None, None))
    with pytest.raises(ValueError) as raised:
        genai.Client(vertexai=vertexai)
    assert is_permanent(raised.value)


async def test_a_transient_failure_is_retried_with_backoff_until_it_succeeds() -> None:
    time = FakeTime()
    call = Flaky(api_error(503), TimeoutError())
    hooked: list[tuple[int, str, float]] = []

    result = await retry_call(
        call,
        RetryPolicy(Backoff(base=1.0), max_attempts=5),
        sleep=time.sleep,
        clock=time.clock,
        on_retry=lambda n, error, delay: hooked.append((n, type(error).__name__, delay)),
    )

    assert (result, call.calls) == ("ok", 3)
    assert len(time.slept) == 2
    assert 0.5 <= time.slept[0] <= 1.0 < time.slept[1] <= 2.0  # 1 s, then 2 s, half jittered
    assert hooked == [(1, "APIError", time.slept[0]), (2, "TimeoutError", time.slept[1])]


@pytest.mark.parametrize("retry_on", [is_transient, not_permanent])
async def test_a_permanent_failure_fails_fast_without_a_retry(retry_on: Any) -> None:
    time = FakeTime()
    call = Flaky(api_error(403), api_error(503))

    with pytest.raises(errors.APIError) as raised:
        await retry_call(
            call,
            RetryPolicy(Backoff(base=1.0), max_attempts=5, retry_on=retry_on),
            sleep=time.sleep,
            clock=time.clock,
        )

    assert raised.value.code == 403
    assert call.calls == 1 and time.slept == []


async def test_an_unclassified_failure_is_retried_only_when_the_policy_says_so() -> None:
    time = FakeTime()
    transport_only = Flaky(RuntimeError("hiccup"))
    with pytest.raises(RuntimeError):
        await retry_call(
            transport_only,
            RetryPolicy(Backoff(base=1.0), max_attempts=3),
            sleep=time.sleep,
            clock=time.clock,
        )
    model_call = Flaky(RuntimeError("hiccup"))
    result = await retry_call(
        model_call,
        RetryPolicy(Backoff(base=1.0), max_attempts=3, retry_on=not_permanent),
        sleep=time.sleep,
        clock=time.clock,
    )
    assert (transport_only.calls, model_call.calls, result) == (1, 2, "ok")


async def test_the_last_failure_is_raised_as_it_is_after_max_attempts() -> None:
    time = FakeTime()
    last = api_error(503, message="still overloaded")
    call = Flaky(api_error(503), api_error(503), last, api_error(503))

    with pytest.raises(errors.APIError) as raised:
        await retry_call(
            call,
            RetryPolicy(Backoff(base=0.5), max_attempts=3),
            sleep=time.sleep,
            clock=time.clock,
        )

    assert raised.value is last
    assert call.calls == 3 and len(time.slept) == 2


async def test_no_try_starts_after_the_deadline() -> None:
    """Tries taking 2 s each, no wait between them, a 5 s deadline: tries start at 0, 2 and
    4 s; the third ends at 6 s, past the deadline, so its error is raised."""
    time = FakeTime()
    started: list[float] = []

    async def call() -> str:
        started.append(time.now)
        time.now += 2.0
        raise api_error(503)

    with pytest.raises(errors.APIError):
        await retry_call(
            call, RetryPolicy(Backoff(base=0.0), deadline=5.0), sleep=time.sleep, clock=time.clock
        )

    assert started == [0.0, 2.0, 4.0]


async def test_no_wait_runs_past_the_deadline() -> None:
    """A first wait of 5 to 10 s cannot end before a 5 s deadline: no wait, no second try."""
    time = FakeTime()
    call = Flaky(api_error(503))

    with pytest.raises(errors.APIError):
        await retry_call(
            call,
            RetryPolicy(Backoff(base=10.0, cap=10.0), deadline=5.0),
            sleep=time.sleep,
            clock=time.clock,
        )

    assert call.calls == 1 and time.slept == []


async def test_a_cancellation_is_never_retried() -> None:
    time = FakeTime()
    call = Flaky(asyncio.CancelledError())

    with pytest.raises(asyncio.CancelledError):
        await retry_call(
            call,
            RetryPolicy(Backoff(base=1.0), max_attempts=5, retry_on=not_permanent),
            sleep=time.sleep,
            clock=time.clock,
        )

    assert call.calls == 1 and time.slept == []


def test_backoff_doubles_half_jittered_up_to_its_cap() -> None:
    backoff = Backoff(base=2.0, cap=600.0)
    for attempt, full in [(1, 2), (2, 4), (3, 8), (4, 16)]:
        for _ in range(20):
            assert full / 2 <= backoff.delay(attempt) <= full
    assert 300 <= backoff.delay(30) <= 600
    assert 300 <= backoff.delay(10**6) <= 600  # no overflow on a huge attempt count
    assert Backoff(base=0.0).delay(3) == 0.0


def test_backoff_waits_as_long_as_a_429_asks_up_to_its_cap() -> None:
    retry_info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}
    quota = api_error(429, details=[retry_info])
    assert requested_delay(quota) == 17.0
    assert Backoff(base=1.0, cap=60.0).delay(1, quota) == 17.0
    assert Backoff(base=1.0, cap=10.0).delay(1, quota) == 10.0
    assert requested_delay(api_error(429)) is None


@pytest.mark.parametrize(
    "build",
    [
        lambda: Backoff(base=-1.0),
        lambda: Backoff(base=2.0, cap=1.0),
        lambda: RetryPolicy(Backoff(base=1.0)),
        lambda: RetryPolicy(Backoff(base=1.0), max_attempts=0),
        lambda: RetryPolicy(Backoff(base=1.0), deadline=0),
    ],
    ids=["negative base", "cap below base", "no bound", "no attempt", "no time"],
)
def test_bad_settings_are_rejected(build: Any) -> None:
    with pytest.raises(InputValidationError):
        build()
