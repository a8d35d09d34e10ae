"""PII redaction: the one redactor every layer applies before text is stored or sent to a model.

Owns: the `Redactor` protocol the write path calls, the built-in `PiiRedactor` (e-mail addresses,
payment card numbers, IBANs and phone numbers become placeholders such as ``[EMAIL]``),
`redact_json`, which applies a redactor to every string value of a JSON-like structure, and
`redact_content`, which applies it to the text of a model content (what is sent to a model or
stored as a summary).

It must never touch structure, ids, keys or non-string values: only string *values* are rewritten,
and only the matched span of each. It must never raise on any input string (NUL, lone surrogates
and arbitrarily long text included), because it runs on the write path of every event and a
failure there would lose the event. Detection is deliberately conservative where a false match
would corrupt ordinary data (dates, times, versions, prices, order ids): cards need a valid Luhn
digit and IBANs a valid ISO 13616 mod-97 check, so only phone numbers rely on shape alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Final, Protocol, runtime_checkable

from google.genai import types

from .errors import InputTypeError, InputValidationError

__all__ = ["PiiRedactor", "Redactor", "redact_content", "redact_event_data", "redact_json"]

EMAIL: Final = "EMAIL"
PHONE: Final = "PHONE"
CARD: Final = "CARD"
IBAN: Final = "IBAN"

# Stands in for spans an earlier detector already claimed, so later detectors neither match
# inside them nor treat them as part of a neighbouring number. It is never in the output: the
# result is always built from the original text. NUL is not a word character, digit or
# separator in any pattern below, so a masked span behaves like a hard boundary.
_MASK: Final = "\x00"

# RFC-ish address: dot-atom-like local part, dot-separated domain labels, alphabetic TLD. The
# look-behind makes a match start only where a local part starts, so a long run of local-part
# characters without an "@" costs linear, not quadratic, time.
_EMAIL_RE: Final = re.compile(
    r"(?<![A-Za-z0-9._%+\-])"
    r"[A-Za-z0-9._%+\-]+"
    r"@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,63}"
    r"(?![A-Za-z0-9\-])",
    re.ASCII,
)

# Two letters, two check digits, then 11-30 alphanumerics: compact, or in blocks of four
# separated by single spaces (the last block may be short). The grouped form can swallow a
# following four-letter word ("... 7034 from"), so candidates are trimmed block by block until
# the checksum holds (see `_find_ibans`).
_IBAN_RE: Final = re.compile(
    r"(?<![A-Za-z0-9])"
    r"[A-Z]{2}[0-9]{2}"
    r"(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?)"
    r"(?![A-Za-z0-9])",
    re.ASCII | re.IGNORECASE,
)

# A run of digit groups joined by single spaces or hyphens. Card numbers are looked for inside
# each run (see `_find_cards`) so that a card followed by an expiry date or another number
# ("4111 1111 1111 1111 12/25") is still found. The run may not continue a word, a "+"-prefixed
# phone number or a decimal/thousands-separated number on either side.
_DIGIT_RUN_RE: Final = re.compile(
    r"(?<![\w+])(?<!\d[.,])"
    r"\d+(?:[ \-]\d+)*"
    r"(?!\w)(?![.,]\d)",
    re.ASCII,
)
_DIGITS_RE: Final = re.compile(r"\d+", re.ASCII)

# Between two digits of an international number: nothing, one separator, or an opening or closing
# parenthesis with at most one separator on each side ("+44 (0)20 ...", "+1 (555) 123-4567"). The
# two alternatives are disjoint, so a failing match cannot backtrack exponentially.
_PHONE_GAP: Final = r"(?:[ .\-]?[()][ .\-]?|[ .\-])?"

# International: "+" and 7-15 digits (E.164), ending where no further digit follows.
# National: NANP with one consistent separator or a parenthesised area code, and trunk-prefix
# ("0...") numbers in space/hyphen groups. A national number may not continue a word or a longer
# number on either side ("2024-01-15", "1.2.3", "5500 0000 0000 0005" never match; only a
# parenthesised area code may follow another number), and plain unseparated digit strings are
# never taken for phone numbers.
_PHONE_RE: Final = re.compile(
    r"(?<![\w+])\+\d(?:" + _PHONE_GAP + r"\d){6,14}(?!\d)"
    r"|(?<![\w+])"
    r"(?:"
    r"(?:1[ .\-]?)?\(\d{3}\)[ .\-]?\d{3}[ .\-]\d{4}"
    r"|(?<!\d[.\-/, ])(?:1[ .\-])?\d{3}(?P<sep>[ .\-])\d{3}(?P=sep)\d{4}"
    r"|(?<!\d[.\-/, ])(?P<trunk>0\d{1,4}(?:[ \-]\d{2,8}){1,4})"
    r")"
    r"(?!\w)(?![.\-/,]\d)",
    re.ASCII,
)
_TRUNK_DIGITS: Final = range(9, 14)  # "01 23 45 67 89" .. "0xx xxxx xxxx xx"

# Necessary conditions of every detector, checked once per call so that text without PII costs a
# single scan: an "@" (e-mail), letters then check digits (IBAN), or seven digits close together
# (every card has 13 and every phone number at least 7, separated by at most three characters).
_QUICK_EMAIL: Final = r"@"
_QUICK_IBAN: Final = r"[A-Za-z]{2}[0-9]{2}"
_QUICK_NUMBER: Final = r"[0-9](?:[^0-9]{0,3}[0-9]){6}"

_Finder = Callable[[str], Iterator[tuple[int, int]]]


@runtime_checkable
class Redactor(Protocol):
    """Anything that rewrites a string so that it no longer carries personal data.

    Implementations must be pure (same input, same output; no I/O, no shared mutable state) and
    fast, and must not raise: they run on the write path of every event, synchronously, and may
    be called from several threads at once.
    """

    def redact(self, text: str) -> str:
        """The text with every piece of personal data replaced; the text itself if there is none."""
        ...


class PiiRedactor:
    """The built-in redactor: e-mail addresses, payment card numbers, IBANs and phone numbers.

    Each kind can be switched off. A found span is replaced by `placeholder` formatted with
    ``kind`` set to ``"EMAIL"``, ``"CARD"``, ``"IBAN"`` or ``"PHONE"``. Detectors run in that
    order (phones last, so the phone patterns never eat a card number or IBAN), each on the text
    with earlier finds masked out; the result is built from the original text in one pass, so a
    placeholder is never itself re-scanned.

    Instances are immutable and safe to share between threads.
    """

    __slots__ = ("_finders", "_quick", "_replacements")

    def __init__(
        self,
        *,
        emails: bool = True,
        phones: bool = True,
        cards: bool = True,
        ibans: bool = True,
        placeholder: str = "[{kind}]",
    ) -> None:
        """Pick the kinds to redact and the placeholder.

        Raises ValueError when `placeholder` is not a format string that accepts ``kind`` alone,
        so that a bad configuration fails at start-up rather than on the write path.
        """
        if not isinstance(placeholder, str):
            raise InputTypeError(f"placeholder must be a str, not {type(placeholder).__name__}")
        replacements: dict[str, str] = {}
        for kind in (EMAIL, IBAN, CARD, PHONE):
            try:
                replacements[kind] = placeholder.format(kind=kind)
            except (IndexError, KeyError, ValueError, AttributeError) as exc:
                raise InputValidationError(
                    f"placeholder {placeholder!r} must be a format string using only {{kind}}"
                ) from exc
        self._replacements: dict[str, str] = replacements

        finders: list[tuple[str, _Finder]] = []
        quick: list[str] = []
        if emails:
            finders.append((EMAIL, _find_emails))
            quick.append(_QUICK_EMAIL)
        if ibans:
            finders.append((IBAN, _find_ibans))
            quick.append(_QUICK_IBAN)
        if cards:
            finders.append((CARD, _find_cards))
        if phones:
            finders.append((PHONE, _find_phones))
        if cards or phones:
            quick.append(_QUICK_NUMBER)
        self._finders: tuple[tuple[str, _Finder], ...] = tuple(finders)
        # With every kind switched off nothing can match; "(?!)" never does.
        self._quick: re.Pattern[str] = re.compile("|".join(quick) or "(?!)")

    def __repr__(self) -> str:
        kinds = ", ".join(kind for kind, _ in self._finders) or "nothing"
        return f"PiiRedactor({kinds})"

    def redact(self, text: str) -> str:
        """The text with every e-mail address, card number, IBAN and phone number replaced."""
        if not self._quick.search(text):
            return text
        spans: list[tuple[int, int, str]] = []
        work = text
        for kind, find in self._finders:
            found = list(find(work))
            if found:
                spans.extend((start, end, kind) for start, end in found)
                work = _mask(work, found)
        if not spans:
            return text
        spans.sort()
        parts: list[str] = []
        pos = 0
        for start, end, kind in spans:
            parts.append(text[pos:start])
            parts.append(self._replacements[kind])
            pos = end
        parts.append(text[pos:])
        return "".join(parts)


def redact_json(value: Any, redactor: Redactor, *, keys: bool = False) -> Any:
    """A copy of a JSON-like value with every string value passed through `redactor`.

    Dicts and lists (and tuples, kept as tuples) are rebuilt, so the input is never mutated and
    the result can be mutated without affecting the input. Dict keys are kept as they are by
    default: in state and tool arguments they are structure (state keys, argument names), not
    content. With `keys=True` string keys are redacted too, for mappings whose keys are whatever
    a caller wrote (a memory's metadata and content). Every other leaf (numbers, booleans, None,
    or anything that is not JSON) is returned as the same object.
    """
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, dict):
        return {
            (redactor.redact(key) if keys and isinstance(key, str) else key): redact_json(
                item, redactor, keys=keys
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact_json(item, redactor, keys=keys) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_json(item, redactor, keys=keys) for item in value)
    return value


def redact_content(content: types.Content, redactor: Redactor) -> types.Content:
    """A copy of a model content with its text redacted: each part's text (thoughts included),
    function-call arguments, function-response values (`redact_json`), executable code and
    code-execution output. Roles, names, call ids, inline or file data and thought signatures are
    kept: they are structure or bytes, not text a redactor reads.

    The content is never changed in place (the parts of a request are shared with the live
    session's events); parts without text are the same objects in the copy.
    """
    if not content.parts:
        return content
    parts = [_redact_part(part, redactor) for part in content.parts]
    return content.model_copy(update={"parts": parts})


def _redact_part(part: types.Part, redactor: Redactor) -> types.Part:
    update: dict[str, Any] = {}
    if part.text:
        update["text"] = redactor.redact(part.text)
    call = part.function_call
    if call is not None and call.args:
        update["function_call"] = call.model_copy(update={"args": redact_json(call.args, redactor)})
    response = part.function_response
    if response is not None and response.response:
        update["function_response"] = response.model_copy(
            update={"response": redact_json(response.response, redactor)}
        )
    code = part.executable_code
    if code is not None and code.code:
        update["executable_code"] = code.model_copy(update={"code": redactor.redact(code.code)})
    result = part.code_execution_result
    if result is not None and result.output:
        update["code_execution_result"] = result.model_copy(
            update={"output": redactor.redact(result.output)}
        )
    return part.model_copy(update=update) if update else part


def redact_event_data(data: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    """An ADK event's JSON data (`model_dump(mode="json", by_alias=True)`) with its text
    redacted: the content (parts' text, function-call arguments and responses), the state
    delta and a compaction's summary. Ids, authors, timestamps and the rest are structure and
    are kept. The one rule for what of an event is personal data, used wherever events are
    stored (sessions, generation jobs)."""
    data = dict(data)
    if "content" in data:
        data["content"] = redact_json(data["content"], redactor)
    actions = data.get("actions")
    if actions:
        actions = data["actions"] = dict(actions)
        if actions.get("stateDelta"):
            actions["stateDelta"] = redact_json(actions["stateDelta"], redactor)
        compaction = actions.get("compaction")
        if compaction and "compactedContent" in compaction:
            actions["compaction"] = {
                **compaction,
                "compactedContent": redact_json(compaction["compactedContent"], redactor),
            }
    return data


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with each (sorted, non-overlapping) span overwritten by `_MASK`, same length."""
    parts: list[str] = []
    pos = 0
    for start, end in spans:
        parts.append(text[pos:start])
        parts.append(_MASK * (end - start))
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def _find_emails(text: str) -> Iterator[tuple[int, int]]:
    if "@" not in text:
        return
    for match in _EMAIL_RE.finditer(text):
        yield match.span()


def _find_ibans(text: str) -> Iterator[tuple[int, int]]:
    for match in _IBAN_RE.finditer(text):
        start = match.start()
        blocks = match.group().split(" ")
        if len(blocks) == 1:
            if _iban_ok(blocks[0]):
                yield match.span()
            continue
        # Grouped: drop trailing blocks until the checksum holds (a following word may have
        # been taken for a block). Only whole blocks are dropped, so the span ends on a block.
        for count in range(len(blocks), 2, -1):
            compact = "".join(blocks[:count])
            if 15 <= len(compact) <= 34 and _iban_ok(compact):
                yield start, start + len(" ".join(blocks[:count]))
                break


def _iban_ok(compact: str) -> bool:
    """ISO 13616 / ISO 7064 mod-97-10: the rearranged number leaves remainder 1."""
    rearranged = compact[4:] + compact[:4]
    try:
        number = int("".join(str(int(char, 36)) for char in rearranged))
    except ValueError:  # not alphanumeric; cannot happen with `_IBAN_RE`, kept as a guard
        return False
    return number % 97 == 1


def _find_cards(text: str) -> Iterator[tuple[int, int]]:
    for run in _DIGIT_RUN_RE.finditer(text):
        if run.end() - run.start() < 13:
            continue
        offset = run.start()
        groups = [(m.start() + offset, m.end() + offset) for m in _DIGITS_RE.finditer(run.group())]
        yield from _card_windows(text, groups)


def _card_windows(text: str, groups: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Card numbers among consecutive digit groups of one run, longest first, left to right.

    A card is either one group of 13-19 digits, or several groups as cards are printed: a first
    group of four digits (every major scheme starts that way), middle groups of 3-6 digits and a
    last group of 1-6, 13-19 digits in all. It must pass the Luhn check and not be all zeros.
    Requiring the card shape keeps lists of small numbers ("10 20 30 ...") from being taken for
    cards whenever they happen to pass Luhn.
    """
    i = 0
    count = len(groups)
    while i < count:
        best: int | None = None
        digits = ""
        for j in range(i, count):
            group = text[groups[j][0] : groups[j][1]]
            if j > i:
                if len(text[groups[i][0] : groups[i][1]]) != 4:
                    break
                if j - 1 > i and not 3 <= len(text[groups[j - 1][0] : groups[j - 1][1]]) <= 6:
                    break
                if len(group) > 6:
                    break
            digits += group
            if len(digits) > 19:
                break
            if len(digits) >= 13 and digits.strip("0") and _luhn_ok(digits):
                best = j
        if best is None:
            i += 1
        else:
            yield groups[i][0], groups[best][1]
            i = best + 1


def _luhn_ok(digits: str) -> bool:
    """The Luhn (mod 10) check every payment card number satisfies."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = ord(char) - 48
        if position % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def _find_phones(text: str) -> Iterator[tuple[int, int]]:
    for match in _PHONE_RE.finditer(text):
        trunk = match.group("trunk")
        if trunk is not None and sum(char.isdigit() for char in trunk) not in _TRUNK_DIGITS:
            continue
        yield match.span()
