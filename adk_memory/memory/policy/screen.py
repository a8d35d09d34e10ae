"""The screen every fact passes before the memory service stores it: redact, then guard.

Owns: the order (a fact is redacted first, so the guard, the embedder and the store all see the
text that will be kept), the error a refused direct write raises (`MemoryRejectedError`), and
the redaction of generation-job payloads (the conversation a job carries, and anything a failed
try's error quotes). It is the one place the memory side applies the configured redactor and
guard, so no write path can skip them, and so the one place that makes a verdict other than
"allow" loud: a WARNING log line with the rule id and the source, for every fact the guard
rejects or quarantines (the fact itself is never logged). It never writes or reads the database.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import InputValidationError, MemoryRejectedError
from ...redaction import Redactor, redact_event_data, redact_json
from ..guard import DefaultMemoryGuard, GuardAction, GuardVerdict, MemoryGuard, check_all
from ..models import GuardedFact

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Screened:
    """A fact as it may be stored (redacted) and the guard's verdict on it."""

    fact: str
    verdict: GuardVerdict

    @property
    def quarantined(self) -> bool:
        return self.verdict.action == GuardAction.QUARANTINE

    @property
    def rejected(self) -> bool:
        return self.verdict.action == GuardAction.REJECT

    @property
    def guarded(self) -> GuardedFact | None:
        """The verdict as the API reports it (None when the fact was allowed)."""
        return None if self.verdict.allowed else guarded_fact(self.verdict)


class FactScreen:
    """Redaction and guarding for one memory service (see the module docstring).

    Args:
      redactor: applied to facts, job payloads and stored errors; None: text is kept as given.
      guard: judges each fact; None: `DefaultMemoryGuard()`.
    """

    def __init__(self, redactor: Redactor | None, guard: MemoryGuard | None) -> None:
        if redactor is not None and not isinstance(redactor, Redactor):
            raise InputValidationError("redactor must have a `redact(text) -> str` method.")
        if guard is not None and not isinstance(guard, MemoryGuard):
            raise InputValidationError("guard must have an async `check(fact, *, scope, source)`.")
        self.redactor = redactor
        self.guard: MemoryGuard = guard if guard is not None else DefaultMemoryGuard()

    def text(self, text: str) -> str:
        """`text` redacted (as it is without a redactor)."""
        return self.redactor.redact(text) if self.redactor is not None else text

    def texts(self, texts: Sequence[str]) -> list[str]:
        return [self.text(t) for t in texts]

    def event_data(self, data: dict[str, Any]) -> dict[str, Any]:
        """An event's JSON data with its text redacted (`redact_event_data`)."""
        return redact_event_data(data, self.redactor) if self.redactor is not None else data

    def json(self, value: Any) -> Any:
        """Every string of a JSON-like value redacted, keys too (contents, metadata: their keys
        are whatever the caller wrote)."""
        return redact_json(value, self.redactor, keys=True) if self.redactor is not None else value

    def topics(self, topics: list[str] | None) -> list[str] | None:
        """Topics redacted (a caller may write any label)."""
        return None if topics is None else self.texts(topics)

    async def screen(self, fact: str, scope: Mapping[str, str], source: str) -> Screened:
        """The fact redacted, and the guard's verdict on what would be stored."""
        [screened] = await self.screen_all([fact], scope, source)
        return screened

    async def screen_all(
        self, facts: Sequence[str], scope: Mapping[str, str], source: str
    ) -> list[Screened]:
        """Each fact redacted, and the guard's verdicts on what would be stored, asked in one
        batch (`guard.check_all`: a model-based guard makes one call for them all)."""
        kept = self.texts(facts)
        verdicts = await check_all(self.guard, kept, scope=scope, source=source)
        for verdict in verdicts:
            if not verdict.allowed:
                logger.warning(
                    "The memory guard %s a fact from %s (rule %s): %s",
                    "rejected" if verdict.action == GuardAction.REJECT else "quarantined",
                    source,
                    verdict.rule or "policy",
                    verdict.reason,
                )
        return [Screened(fact, verdict) for fact, verdict in zip(kept, verdicts, strict=True)]

    async def admit(self, fact: str, scope: Mapping[str, str], source: str) -> Screened:
        """Like `screen`, for a direct write: a rejected fact raises `MemoryRejectedError`."""
        [screened] = await self.admit_all([fact], scope, source)
        return screened

    async def admit_all(
        self, facts: Sequence[str], scope: Mapping[str, str], source: str, *, itemised: bool = False
    ) -> list[Screened]:
        """Like `screen_all`, for a direct write: the first rejected fact raises
        `MemoryRejectedError` (with `itemised`, its index in the error's notes)."""
        screened = await self.screen_all(facts, scope, source)
        for index, one in enumerate(screened):
            if one.rejected:
                error = MemoryRejectedError(one.verdict)
                if itemised:
                    error.add_note(f"Item {index} of the batch.")
                raise error
        return screened


def guarded_fact(verdict: GuardVerdict) -> GuardedFact:
    """A verdict as the API reports it: its rule id and reason (never the fact)."""
    return GuardedFact(rule=verdict.rule or "policy", reason=verdict.reason)


def guard_labels(verdict: GuardVerdict) -> dict[str, str]:
    """What a revision records of a guard's verdict (allowed facts record nothing)."""
    if verdict.action == GuardAction.ALLOW:
        return {}
    return {
        "guard": verdict.action.value,
        "guard_rule": verdict.rule,
        "guard_reason": verdict.reason,
    }
