"""The one in-process cache type: least recently used first out, bounded by entries and bytes.

Owns: the bounds. A cache of decoded events or of token estimates must never grow a process
without limit, whatever arrives (30 events of 10 MB each are 30 entries but gigabytes), so
every entry has a weight (its size in bytes, as the caller estimates it) and the cache keeps
both its entry count and its total weight under their limits. It never copies, decodes or
judges what it holds, and never keys by anything itself: what makes two entries differ is the
caller's to put in the key.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")


@dataclass
class CacheStats:
    """How many lookups found their value (hits) and how many did not (misses): read by the
    cache metrics (`adk_memory.telemetry.cache_stats`)."""

    hits: int = 0
    misses: int = 0


class LruCache(Generic[_K, _V]):
    """At most `max_entries` values weighing at most `max_bytes` together (each `put` says what
    its value weighs), the least recently used dropped first. A limit of 0 keeps none; a value
    heavier than `max_bytes` on its own is not kept. `stats`, if given, counts the lookups."""

    def __init__(
        self, max_entries: int, *, max_bytes: int | None = None, stats: CacheStats | None = None
    ) -> None:
        self._stats = stats
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._entries: OrderedDict[_K, tuple[_V, int]] = OrderedDict()
        self.bytes = 0
        """The total weight held now."""

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: _K) -> _V | None:
        """The value remembered for `key`, now the most recently used, or None."""
        entry = self._entries.get(key)
        if entry is None:
            if self._stats is not None:
                self._stats.misses += 1
            return None
        if self._stats is not None:
            self._stats.hits += 1
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: _K, value: _V, weight: int = 0) -> None:
        """Remember `value` (weighing `weight` bytes) for `key`, dropping the least recently
        used beyond the limits."""
        too_heavy = self._max_bytes is not None and weight > self._max_bytes
        if self._max_entries <= 0 or too_heavy:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        self._entries[key] = (value, weight)
        self.bytes += weight
        while len(self._entries) > self._max_entries or (
            self._max_bytes is not None and self.bytes > self._max_bytes
        ):
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= dropped

    def clear(self) -> None:
        """Forget everything."""
        self._entries.clear()
        self.bytes = 0
