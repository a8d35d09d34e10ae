"""Long deletions in batches: the one loop every sweep runs.

Owns: running a batch step until a batch comes back short, reporting the running count after
each batch (the progress a long sweep shows), and refusing a batch size below one. Batches keep
every statement's locks short, so a sweep of millions of rows never blocks the agents' writes.
It never decides what is deleted: the step does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..errors import InputValidationError

Progress = Callable[[int], None]
"""Called with the running total after each batch."""


async def in_batches(
    step: Callable[[int], Awaitable[tuple[int, bool]]],
    batch_size: int,
    progress: Progress | None = None,
) -> int:
    """Call `step(batch_size)` until it says it is done; return the total it counted.

    `step` deletes up to `batch_size` rows of each kind it handles and returns (rows counted,
    whether any kind still filled its batch, so there may be more).
    """
    if batch_size < 1:
        raise InputValidationError("batch_size must be at least 1.")
    total = 0
    while True:
        counted, more = await step(batch_size)
        total += counted
        if progress is not None:
            progress(total)
        if not more:
            return total
