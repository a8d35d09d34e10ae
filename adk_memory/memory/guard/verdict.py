"""The memory guard's contract: the `MemoryGuard` protocol every guard implements, its verdict
(`GuardAction`, `GuardVerdict`) and the sources a fact may come from (`SOURCES`).

Why at write time: a stored fact is shown to a model in every later conversation of its scope,
so one poisoned write acts many times. Rendering escapes delimiters too (`rendering.py`); the
guard keeps the attempt out of the store, where it would also skew retrieval and consolidation.

It never holds a rule or calls anything: implementations live in `default.py` (local rules) and
`model_armor.py` (Google Cloud Model Armor); the one here, `NoGuard`, has no rule at all. A
verdict never contains the fact's text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, Protocol, runtime_checkable

SOURCES = ("api", "tool", "generation", "add_memory", "raw_event")
"""Where a fact comes from, as a guard is told: the application's API call (`api`), an agent's
memory tool (`tool`), memory generation's extraction (`generation`), ADK's `add_memory`
(`add_memory`), or an event's text stored as is (`raw_event`)."""


class GuardAction(str, Enum):
    """What the memory service does with a fact: store it, refuse it, or store it held back
    (never retrieved or shown to a model) until an operator decides."""

    ALLOW = "allow"
    REJECT = "reject"
    QUARANTINE = "quarantine"


@dataclass(frozen=True)
class GuardVerdict:
    """A guard's decision on one fact.

    `reason` is for people (logs, revision labels, error messages) and `rule` for code (a short
    id: "delimiter", "role_marker", "override", "persona", "tool_call", "exfiltration",
    "encoded", "addressed", "size", "model_armor", "guard_error"). Neither ever contains the
    fact's text: a verdict is logged and stored where the fact itself may not be. The default
    guard adds "authority" (claimed permission), "trigger" (a mode switched on), "promotion"
    (answers made to advertise a party) and, for a batch, "split" (an instruction cut across
    two neighbouring facts).
    """

    action: GuardAction
    reason: str = ""
    rule: str = ""

    ALLOW: ClassVar[GuardVerdict]

    @classmethod
    def allow(cls) -> GuardVerdict:
        """The verdict that lets a fact through (one shared instance)."""
        return cls.ALLOW

    @property
    def allowed(self) -> bool:
        return self.action == GuardAction.ALLOW


GuardVerdict.ALLOW = GuardVerdict(GuardAction.ALLOW)


@runtime_checkable
class MemoryGuard(Protocol):
    """Judges a fact before it is stored. Any object with this one method is a guard.

    `scope` is the fact's memory scope and `source` where it came from (one of `SOURCES`:
    "api", "tool", "generation", "add_memory", "raw_event"); a guard may treat sources
    differently, e.g. trust the application's own `api` writes more than `raw_event` text. A
    guard should return a verdict rather than raise: the service treats an exception as a failed
    write.
    """

    async def check(self, fact: str, *, scope: Mapping[str, str], source: str) -> GuardVerdict:
        """The verdict on `fact`."""
        ...


class NoGuard:
    """The guard that allows every fact: how the guard is switched off (a stored app
    configuration's `guard: none`)."""

    async def check(self, fact: str, *, scope: Mapping[str, str], source: str) -> GuardVerdict:
        """Always `GuardVerdict.allow()`."""
        return GuardVerdict.allow()


class BatchGuard(ABC):
    """A guard whose unit is a batch (`check_batch`: one model call for many facts, or rules
    that read neighbouring facts together): one fact is a batch of one."""

    async def check(self, fact: str, *, scope: Mapping[str, str], source: str) -> GuardVerdict:
        """The verdict on one fact: its batch of one."""
        [verdict] = await self.check_batch([fact], scope=scope, source=source)
        return verdict

    @abstractmethod
    async def check_batch(
        self, facts: Sequence[str], *, scope: Mapping[str, str], source: str
    ) -> list[GuardVerdict]:
        """The verdicts on `facts`, in order (one each)."""
