"""The old home of `MemoryRejectedError` (now `adk_memory.errors`; the screen is
`memory.policy.screen`), kept importable for one release. It owns nothing else."""

from __future__ import annotations

from ..errors import MemoryRejectedError

__all__ = ["MemoryRejectedError"]
