"""`ChainedGuard`: one guard after another (the rules first, a model for what they let through
or were unsure of), and `check_all`, judging a batch with whatever a guard offers.

Owns: how two verdicts combine (a REJECT of the first guard is final; a fact it allowed or
quarantined goes to the second, whose verdict stands when the first's action is in `review`)
and the batch entry point every caller of a guard uses for more than one fact (a guard's own
`check_batch` when it has one, so a model-based guard makes one call per batch; else its
`check`, fact by fact).

It never calls a model itself, never sees a fact's text beyond handing it on, and never turns
a REJECT into anything else: a guard that may be talked into "allow" (a model) must not be
able to overturn a deterministic refusal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...errors import InputValidationError
from .verdict import BatchGuard, GuardAction, GuardVerdict, MemoryGuard


async def check_all(
    guard: MemoryGuard, facts: Sequence[str], *, scope: Mapping[str, str], source: str
) -> list[GuardVerdict]:
    """`guard`'s verdicts on `facts`, in order: through its `check_batch(facts, *, scope,
    source)` when it has one (one model call for the lot), else one `check` per fact."""
    if not facts:
        return []
    batch: Any = getattr(guard, "check_batch", None)
    if callable(batch):
        verdicts = list(await batch(list(facts), scope=scope, source=source))
        if len(verdicts) != len(facts):
            raise InputValidationError(
                f"{type(guard).__name__}.check_batch returned {len(verdicts)} verdicts for "
                f"{len(facts)} facts."
            )
        return verdicts
    return [await guard.check(fact, scope=scope, source=source) for fact in facts]


class ChainedGuard(BatchGuard):
    """Two guards in turn: `first` judges every fact; `then` judges the facts `first` did not
    reject and whose verdict is in `review`, and its verdict replaces `first`'s.

    The usual chain is `ChainedGuard(DefaultMemoryGuard(), ModelMemoryGuard(llm))`: the fast
    rules refuse what they recognise, and the model reads the rest for intent the rules cannot
    see (other languages, paraphrases, claimed authority). With `review=(QUARANTINE,)` the model
    only settles the cases the rules were unsure of (their weak signals: a quarantined fact is
    allowed, held or refused on the model's word), and costs nothing for the facts the rules
    allow outright. A fact `first` rejects is never shown to `then`.

    Args:
      first: the guard every fact meets (usually the deterministic rules).
      then: the guard for what `first` let through (usually `ModelMemoryGuard`).
      review: the verdicts of `first` that `then` reviews: ALLOW and QUARANTINE (default),
        or one of them.

    Raises:
      InputValidationError: a guard without `check`, or `review` empty or naming REJECT.
    """

    def __init__(
        self,
        first: MemoryGuard,
        then: MemoryGuard,
        *,
        review: Iterable[GuardAction] = (GuardAction.ALLOW, GuardAction.QUARANTINE),
    ) -> None:
        if not isinstance(first, MemoryGuard) or not isinstance(then, MemoryGuard):
            raise InputValidationError("Both guards must have an async `check`.")
        if isinstance(review, (str, GuardAction)):
            raise InputValidationError("review is a list of actions, not one.")
        reviewed = frozenset(GuardAction(action) for action in review)
        if not reviewed or GuardAction.REJECT in reviewed:
            raise InputValidationError("review must name ALLOW and/or QUARANTINE, never REJECT.")
        self.first = first
        self.then = then
        self.review = reviewed

    async def check_batch(
        self, facts: Sequence[str], *, scope: Mapping[str, str], source: str
    ) -> list[GuardVerdict]:
        """The chain's verdicts on `facts`, in order: `first` on all of them, then `then` on
        the reviewed ones in one batch."""
        verdicts = await check_all(self.first, facts, scope=scope, source=source)
        reviewed = [i for i, verdict in enumerate(verdicts) if verdict.action in self.review]
        second = await check_all(
            self.then, [facts[i] for i in reviewed], scope=scope, source=source
        )
        for index, verdict in zip(reviewed, second, strict=True):
            verdicts[index] = verdict
        return verdicts
