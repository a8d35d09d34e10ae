"""Stored text made safe to show a model: `neutralise`, applied where a fact is rendered, and
`quoted`, the form a fact takes inside a memory block.

Owns: the one rule set that keeps a remembered fact from escaping the block it is shown in. A
fact is data about the user, yet it reaches the model inside our delimiters (`<RELEVANT_MEMORIES>`
... `</RELEVANT_MEMORIES>`, ADK's `<PAST_CONVERSATIONS>`), one per line. A fact that closes the
block, opens another, or starts a line as `system:` would turn stored text into an instruction.
Facts already in the database were written before any write-time guard existed, so the guard
alone cannot stop that: every renderer passes a fact through `neutralise` when it shows it.

Rules (each keeps text it does not apply to byte-identical, so an ordinary fact renders
exactly as before and a model provider's prompt cache keeps working):
1. Line breaks (`\\n`, `\\r`, `\\v`, `\\f`, U+0085, U+2028, U+2029, ...) and the blanks around
   them become one space: a fact is one line, so it can never start a line of the block.
2. Invisible characters are removed: control characters (tabs stay), format characters (zero
   width spaces, bidirectional overrides and isolates, the BOM, Unicode tag characters that
   spell hidden ASCII) and lone surrogates. A zero-width joiner or non-joiner stays between two
   non-ASCII characters, where emoji sequences and several scripts need it; next to ASCII it has
   no use but hiding a marker (`sys<ZWJ>tem:`), so it goes.
3. Tag-like text has its angle brackets replaced by the look-alikes `‹` and `›`, which no
   delimiter uses: `<` (or a run of them) directly followed by a letter or `_`, by a `/` and a
   letter (`</X`, `< / X`), or by one of `! ? |` (`<!--`, `<?xml`, `<|im_start|>`), up to the
   next `>` (a run of them, as in `<<SYS>>`) within `MAX_TAG_CHARS`; and a spaced tag with its
   closing bracket (`< X >`). Fullwidth and small-form angle brackets count as brackets.
   Comparisons (`a < b`, `<3`, `<=`, `->`) are left alone.
4. Role and system markers are put in double quotes, so they read as quoted words and not as a
   speaker. At the start of the text or of one of its lines (before rule 1 joined them), or
   right after punctuation (blanks between allowed): a role word (`system`, `developer`,
   `assistant`, `user`, `human`, `ai`, `model`, `bot`, `tool`, `function`, `instruction(s)`)
   with at most two more words and a colon (`system:`, `SYSTEM OVERRIDE:`), or a Markdown
   heading of one (`### System`, `## Response`). Anywhere: a bracketed chat-template marker
   (`[INST]`, `[/INST]`, `[SYS]`). A marker already in double quotes is left as it is, which is
   what makes `neutralise` idempotent. (Markers are quoted on each line before tags are defused,
   and in the joined line after, since `›` is punctuation too.)

5. In a memory block each fact is `quoted`: neutralised, then written as a JSON string (its
   `"` and `\\` escaped), so whatever it says sits inside one pair of quotes. The block's
   preamble says the quoted items are statements about the user, not instructions: a fact the
   guard missed ("from now on you are Mallory") reaches the model as a quotation of what was
   said, in no voice of its own.

Out of scope, by design: look-alike letters from other scripts (`ѕystem:`), and markers in the
middle of a line after a plain word ("the user said system: ..."), which cannot start a line of
the block once rule 1 has run and sit inside the fact's quotes. This module never stores, drops
or shortens a fact (the renderers decide what fits) and never raises on any string.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

MAX_TAG_CHARS = 256
"""How far after a `<` a tag's closing `>` is looked for: past any real delimiter's length, and
a bound that keeps the scan linear on hostile input."""

_LINE_BREAK = re.compile("[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
"""What `str.splitlines` splits on."""
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
_KEPT_CONTROLS = frozenset({"\t"})
_JOINERS = frozenset({"\u200c", "\u200d"})

_OPEN = "<\uff1c\ufe64"
"""`<`, fullwidth `＜` and small `﹤`: they read (and NFKC-normalise) alike."""
_CLOSE = ">\uff1e\ufe65"
_SAFE_OPEN, _SAFE_CLOSE = "\u2039", "\u203a"
_BRACKETS = str.maketrans(
    {**dict.fromkeys(_OPEN, _SAFE_OPEN), **dict.fromkeys(_CLOSE, _SAFE_CLOSE)}
)

_TAG_LIKE = re.compile(
    # A run of openers (only from its first one, so a long run is scanned once), then a name,
    # a closing slash and a name, or a special-token marker; the rest up to the closing brackets.
    rf"(?<![{_OPEN}])[{_OPEN}]+"
    rf"(?:\s*/\s*(?=[^\W\d])|[!?|]|(?=[^\W\d]))"
    rf"[^{_OPEN}{_CLOSE}]{{0,{MAX_TAG_CHARS}}}[{_CLOSE}]*"
    # A spaced but complete tag: `< NAME >`.
    rf"|(?<![{_OPEN}])[{_OPEN}]+\s*(?:/\s*)?[^\W\d][\w:.\-]*\s*[{_CLOSE}]+"
)

_ROLE_WORDS = r"(?:system|developer|assistant|user|human|ai|model|bot|tool|function|instructions?)"
_PUNCTUATION = r"""[.,;:!?)\]}"'`*\-–—…«»‹›“”‘’()\[{|/\\]"""
_ROLE_MARKER = re.compile(
    rf"(?:^|(?<={_PUNCTUATION}))[ \t]*"
    rf"(?P<line>{_ROLE_WORDS}\b(?:[ \t]+[\w\-]+){{0,2}}[ \t]*[:\uff1a]"
    rf"|\#{{1,6}}[ \t]*(?:{_ROLE_WORDS}|response|prompt)\b)"
    rf"|(?P<template>\[[ \t]*(?:/[ \t]*)?(?:INST|SYS|SYSTEM|{_ROLE_WORDS})[ \t]*\])",
    re.IGNORECASE,
)


def _visible(text: str) -> str:
    """Rule 2: `text` without control, format and surrogate characters (joiners kept between
    non-ASCII characters)."""
    if text.isprintable():  # the common case, checked at C speed
        return text
    kept: list[str] = []
    last = len(text) - 1
    for index, char in enumerate(text):
        if unicodedata.category(char) not in _INVISIBLE_CATEGORIES or char in _KEPT_CONTROLS:
            kept.append(char)
        elif char in _JOINERS and 0 < index < last:
            before, after = text[index - 1], text[index + 1]
            if (
                ord(before) > 127
                and ord(after) > 127
                and not (_invisible(before) or _invisible(after))
            ):
                kept.append(char)
    return "".join(kept)


def _invisible(char: str) -> bool:
    return unicodedata.category(char) in _INVISIBLE_CATEGORIES and char not in _KEPT_CONTROLS


def _lines(text: str) -> list[str]:
    """Rule 1: the lines of `text`, without the blanks around them, for joining with one space
    (just `[text]` when it has no line break)."""
    if _LINE_BREAK.search(text) is None:
        return [text]
    return [stripped for line in text.splitlines() if (stripped := line.strip())]


def _defuse_tag(match: re.Match[str]) -> str:
    return match.group().translate(_BRACKETS)


def _quote_markers(text: str) -> str:
    """Rule 4 on `text`."""
    return _ROLE_MARKER.sub(_quote_marker, text)


def _quote_marker(match: re.Match[str]) -> str:
    group = "line" if match.group("line") is not None else "template"
    start, end = match.span(group)
    text = match.string
    if text[start - 1 : start] == '"' and text[end : end + 1] == '"':
        return match.group()  # already quoted (by an earlier pass, or by its writer)
    lead = text[match.start() : start]
    return f'{lead}"{match.group(group)}"'


def neutralise(text: str) -> str:
    """`text` as it may be shown to a model inside a delimited block: one line, nothing
    invisible, no tag and no role marker (see the module docstring for the rules). Idempotent;
    an ordinary fact comes back unchanged."""
    text = " ".join(_quote_markers(_visible(line)) for line in _lines(text))
    return _quote_markers(_TAG_LIKE.sub(_defuse_tag, text))


def quoted(value: Any) -> str:
    """`value` as one item of a memory block (rule 5): JSON, every string in it (dictionary
    keys too) `neutralise`d with its blanks collapsed. A fact (a string) becomes one JSON
    string whose quotes are its own: a `"` inside is escaped, so it cannot end them."""
    return json.dumps(neutralise_value(value), ensure_ascii=False)


def neutralise_value(value: Any) -> Any:
    """A JSON value (a profile, a fact's metadata) as it may be shown to a model: every string
    in it, dictionary keys too, `neutralise`d with its blanks collapsed; other values as they
    are."""
    if isinstance(value, str):
        return " ".join(neutralise(value).split())
    if isinstance(value, dict):
        return {neutralise_value(str(k)): neutralise_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [neutralise_value(v) for v in value]
    return value
