"""What the guard and redactor names of a stored app configuration (`AppMemoryConfig`) mean.

Owns: which guard and redactor objects have a name (`guard_name`, `redactor_name`: code is
never stored) and the guard a stored name means (`named_guard`; the redactor's are
`settings.variables.parse_redact`'s, as in every setting). It never touches SQL.
"""

from __future__ import annotations

from ...config import GuardChoice, RedactChoice
from ...redaction import PiiRedactor, Redactor
from ..guard import DefaultMemoryGuard, MemoryGuard, NoGuard


def guard_name(guard: MemoryGuard) -> GuardChoice | None:
    """The name `guard` is stored under, if it has one: `DefaultMemoryGuard()` with its default
    settings, or `NoGuard`; None for a guard of one's own (code is never stored)."""
    if isinstance(guard, NoGuard):
        return "none"
    default = DefaultMemoryGuard()
    if type(guard) is DefaultMemoryGuard and (
        guard.max_chars,
        guard.delimiters,
        guard.quarantine_suspicious,
    ) == (default.max_chars, default.delimiters, default.quarantine_suspicious):
        return "default"
    return None


def redactor_name(redactor: Redactor | None) -> RedactChoice | None:
    """The name `redactor` is stored under: `none` for no redactor, `pii` for a `PiiRedactor`
    redacting every kind; None for a redactor of one's own."""
    if redactor is None:
        return "none"
    if type(redactor) is PiiRedactor and repr(redactor) == repr(PiiRedactor()):
        return "pii"
    return None


def named_guard(name: GuardChoice) -> MemoryGuard:
    """The guard a stored name means."""
    return NoGuard() if name == "none" else DefaultMemoryGuard()
