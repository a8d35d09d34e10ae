"""The common form of the guard's rules: a hit is (rule, action, reason), and the helpers the
rule modules build their patterns with.

Each rule module (`rules_structure.py`, `rules_language.py`, `encoded.py`) offers finders that
read `Views` and yield hits; `default.py` runs them in order. Reasons are fixed text, never the
fact's: a hit's reason ends up in logs and revision labels.

It never holds a rule itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .verdict import GuardAction

Hit = tuple[str, GuardAction, str]
"""(rule id, REJECT or QUARANTINE, reason): what a rule found."""
R, Q = GuardAction.REJECT, GuardAction.QUARANTINE


def rx(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled case-insensitively."""
    return re.compile(pattern, re.IGNORECASE)


def word_set(words: str) -> frozenset[str]:
    """The blank-separated words of `words`, as a set."""
    return frozenset(words.split())


def alt(words: str) -> str:
    """A non-capturing group matching any of the blank-separated patterns in `words`."""
    return "(?:" + "|".join(words.split()) + ")"


def hit_if_any(rule: str, reason: str, patterns: list[re.Pattern[str]], text: str) -> Iterator[Hit]:
    """One `(rule, REJECT, reason)` if any of `patterns` occurs in `text`."""
    if any(p.search(text) for p in patterns):
        yield rule, R, reason
