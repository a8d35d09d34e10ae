"""Anonymisation of what crosses from one user to every user of an app: procedures.

Owns: `Anonymiser`, a `Redactor` that removes a user's known identifiers (the user id, and the
names, e-mail addresses, phone numbers and handles the app or the session state names) as whole
words, whatever their case, then applies the service's own redactor and always a `PiiRedactor`
(e-mail addresses, phone numbers, cards, IBANs), so a procedure is anonymised even by a service
configured without a redactor; and `identity_values`, which reads those identifiers from a
session's state. It is one of three layers (this redactor, the extraction prompt's instruction,
the guard); it never stores anything and never raises on any input string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...redaction import PiiRedactor, Redactor

USER_PLACEHOLDER = "the user"
"""What an identifier of the user becomes (plain words: a bracketed `[USER]` reads as a chat
role tag, which the guard rightly refuses)."""

IDENTITY_KEYS = frozenset(
    {
        "name",
        "first_name",
        "last_name",
        "full_name",
        "display_name",
        "username",
        "user_name",
        "email",
        "phone",
        "phone_number",
        "handle",
    }
)
"""Session-state keys (with or without ADK's `user:` prefix) whose string values identify the
user: an app that keeps the user's name or e-mail in state has them removed without passing
them by hand."""

_MIN_LENGTH = 2
"""Identifiers, and the parts of a multi-word one ("Ada" of "Ada Lovelace": a person is often
named by one part), are removed when at least this long: one character identifies no one, and
removing it would garble the text (a user id "1" and a playbook's "1)")."""


def identity_values(state: Mapping[str, Any]) -> list[str]:
    """The string values of `state` under `IDENTITY_KEYS` (see there)."""
    found: list[str] = []
    for key, value in state.items():
        bare = key.removeprefix("user:").casefold()
        if bare in IDENTITY_KEYS and isinstance(value, str) and value.strip():
            found.append(value.strip())
    return found


def _terms(identifiers: Iterable[str]) -> list[str]:
    """Every identifier and each of its parts, longest first (so "Ada Lovelace" goes whole
    before "Ada" is looked for)."""
    terms: set[str] = set()
    for identifier in identifiers:
        text = " ".join(str(identifier).split())
        parts = re.split(r"[\s,]+", text) if " " in text else []
        terms.update(t for t in (text, *parts) if len(t) >= _MIN_LENGTH)
    return sorted(terms, key=lambda t: (-len(t), t))


class Anonymiser:
    """A `Redactor` for text that leaves its user (see the module docstring).

    Args:
      identifiers: the user's identifiers (user id, names, e-mail, phone, handles).
      redactor: the service's redactor, applied after the identifiers are gone.
    """

    def __init__(self, identifiers: Iterable[str], redactor: Redactor | None = None) -> None:
        terms = _terms(identifiers)
        self._pattern = (
            re.compile(
                r"(?<!\w)(?:" + "|".join(re.escape(t) for t in terms) + r")(?!\w)", re.IGNORECASE
            )
            if terms
            else None
        )
        self._redactors = [r for r in (redactor, PiiRedactor()) if r is not None]

    def redact(self, text: str) -> str:
        """`text` without the user's identifiers and PII."""
        if self._pattern is not None:
            text = self._pattern.sub(USER_PLACEHOLDER, text)
        for redactor in self._redactors:
            text = redactor.redact(text)
        return text
