"""`ModelArmorGuard`: the memory guard's question asked of Google Cloud Model Armor.

Owns: the Model Armor request for a fact, the client (built on first use on the template's
regional endpoint), the retry (the package's policy, `adk_memory._retry`) and timeout of one
check, how a response becomes a verdict (matched filters' names, never the fact) and what an
unchecked fact gets (`fail_open`).

It never imports `google-cloud-modelarmor` unless a `ModelArmorGuard` is built, never sends the
fact's scope or source, never raises from `check` (a failed call is an unchecked fact) and never
runs the local rules (`DefaultMemoryGuard` does that).
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Mapping
from typing import Any

from ..._retry import Backoff, RetryPolicy, is_transient, retry_call
from ...errors import InputValidationError
from .verdict import GuardAction, GuardVerdict

logger = logging.getLogger(__name__)

_TEMPLATE_NAME = re.compile(r"projects/([^/]+)/locations/([^/]+)/templates/([^/]+)")


_RETRY_BACKOFF = Backoff(base=0.1, cap=1.0)
"""Waits between tries of one check: 0.1 s, doubling, at most 1 s (jittered)."""


def _import_modelarmor() -> Any:
    """`modelarmor_v1`, or a clear error."""
    try:
        return importlib.import_module("google.cloud.modelarmor_v1")
    except ImportError as exc:
        raise ImportError(
            "ModelArmorGuard needs google-cloud-modelarmor, which is not installed: "
            'pip install "adk-memory[modelarmor]"'
        ) from exc


class ModelArmorGuard:
    """Asks Google Cloud Model Armor (`sanitize_user_prompt`) about each fact, against a
    template that says which filters run (prompt injection and jailbreak, responsible AI,
    sensitive data, malicious URLs, ...).

    A match (`filter_match_state` MATCH_FOUND) gives `on_match` (REJECT by default) with the
    matched filters' names in the reason. When the call fails (network, quota, permissions, a
    timeout) or Model Armor reports it could not run every filter (invocation FAILURE or
    PARTIAL), the fact is QUARANTINED, or ALLOWED with `fail_open=True`: an outage then never
    stores an unchecked fact live unless you choose so.

    The client (`modelarmor_v1.ModelArmorAsyncClient`) is built on first use, on the template's
    regional endpoint `modelarmor.{location}.rep.googleapis.com` with Application Default
    Credentials; pass `client` for other credentials or transports (and in tests). Run
    `DefaultMemoryGuard` too if you want the local rules: this guard only asks Model Armor.

    Args:
      template: `projects/P/locations/L/templates/T`.
      client: a `ModelArmorAsyncClient` (or anything with its async `sanitize_user_prompt`).
      on_match: REJECT or QUARANTINE a fact Model Armor matches.
      fail_open: allow (True) or quarantine (False) a fact Model Armor could not check.
      timeout: seconds for one check: transient errors (unavailable, deadline exceeded) are
        retried until then; an attempt started just before may run up to as long again.

    Raises:
      ImportError: google-cloud-modelarmor is not installed (the `modelarmor` extra).
      ValueError: `template` is not a template name, or `on_match` is ALLOW.
    """

    def __init__(
        self,
        template: str,
        *,
        client: Any | None = None,
        on_match: GuardAction = GuardAction.REJECT,
        fail_open: bool = False,
        timeout: float = 10.0,
    ) -> None:
        match = _TEMPLATE_NAME.fullmatch(template)
        if match is None:
            raise InputValidationError(
                "template must be a Model Armor template name: "
                "projects/PROJECT/locations/LOCATION/templates/TEMPLATE."
            )
        if GuardAction(on_match) == GuardAction.ALLOW:
            raise InputValidationError("on_match must be REJECT or QUARANTINE.")
        self._modelarmor = _import_modelarmor()
        # The client's default retry keeps trying an unreachable endpoint for 60 s whatever the
        # call's timeout, so it is switched off per call; this one retries transient errors
        # (unavailable, deadline exceeded, rate limited) within `timeout` only.
        self._retry = RetryPolicy(_RETRY_BACKOFF, deadline=timeout, retry_on=is_transient)
        self.template = template
        self.location = match.group(2)
        self.endpoint = f"modelarmor.{self.location}.rep.googleapis.com"
        self.on_match = GuardAction(on_match)
        self.fail_open = fail_open
        self.timeout = timeout
        self._client = client
        self._owns_client = client is None

    @property
    def client(self) -> Any:
        """The async client (built on first use: gRPC channels belong to an event loop)."""
        if self._client is None:
            self._client = self._modelarmor.ModelArmorAsyncClient(
                client_options={"api_endpoint": self.endpoint}
            )
        return self._client

    def request(self, fact: str) -> Any:
        """The `SanitizeUserPromptRequest` sent for `fact`."""
        armor = self._modelarmor
        return armor.SanitizeUserPromptRequest(
            name=self.template, user_prompt_data=armor.DataItem(text=fact)
        )

    async def check(self, fact: str, *, scope: Mapping[str, str], source: str) -> GuardVerdict:
        """Model Armor's verdict on `fact` (`scope` and `source` are not sent)."""
        armor = self._modelarmor
        request = self.request(fact)
        try:
            response = await retry_call(
                lambda: self.client.sanitize_user_prompt(
                    request=request, retry=None, timeout=self.timeout
                ),
                self._retry,
            )
            result = response.sanitization_result
        except Exception as exc:  # any failure is an unchecked fact: the fail_open decision
            return self._unchecked(f"the Model Armor call failed ({type(exc).__name__})")
        if result.filter_match_state == armor.FilterMatchState.MATCH_FOUND:
            try:
                names = ", ".join(_matched_filters(result, armor)) or "unnamed filter"
            except Exception:  # a response shape this code does not know: still a match
                names = "unnamed filter"
            return GuardVerdict(self.on_match, f"Model Armor matched: {names}", "model_armor")
        if result.invocation_result in (
            armor.InvocationResult.FAILURE,
            armor.InvocationResult.PARTIAL,
        ):
            return self._unchecked("Model Armor could not run every filter")
        return GuardVerdict.ALLOW

    def _unchecked(self, why: str) -> GuardVerdict:
        logger.warning(
            "%s; the fact is %s.", why, "allowed (fail_open)" if self.fail_open else "quarantined"
        )
        if self.fail_open:
            return GuardVerdict.ALLOW
        return GuardVerdict(GuardAction.QUARANTINE, why, "guard_error")

    async def close(self) -> None:
        """Close the client's transport if this guard built it."""
        if self._owns_client and self._client is not None:
            await self._client.transport.close()
            self._client = None


def _matched_filters(result: Any, armor: Any) -> list[str]:
    """The names of the filters that matched (`pi_and_jailbreak`, `rai:dangerous`, ...): map keys
    and field names from the API, never text of the fact."""
    found = armor.FilterMatchState.MATCH_FOUND
    names: set[str] = set()
    for key, filter_result in result.filter_results.items():
        for inner in _set_messages(filter_result):  # the one filter result the oneof holds
            states = [inner] if "match_state" in _fields(inner) else _set_messages(inner)
            if not any(getattr(m, "match_state", None) == found for m in states):
                continue
            types = (
                inner.rai_filter_type_results if "rai_filter_type_results" in _fields(inner) else {}
            )
            subs = sorted(k for k, v in types.items() if v.match_state == found)
            names.update(f"{key}:{sub}" for sub in subs) if subs else names.add(key)
    return sorted(names)


def _fields(message: Any) -> Any:
    return type(message).meta.fields


def _set_messages(message: Any) -> list[Any]:
    """The message fields set on a proto-plus message (a oneof's chosen member)."""
    values = (getattr(message, f.name) for f, _ in type(message).pb(message).ListFields())
    return [value for value in values if hasattr(type(value), "pb")]
