"""Wording every entry point shares: a count with its noun.

Owns: `plural`, so the `adk-memory` command, `python -m adk_memory.worker` and the deployment
word their counts alike ("1 job", "2 jobs", never "1 jobs"). It imports nothing, so the
command's fast paths can use it, and never prints.
"""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 memory`, `2 memories`: the count with its noun in the number it takes (`nouns` for
    plurals other than noun + s)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
