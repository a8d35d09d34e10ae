"""The guard's `encoded` rule: instructions hidden in an encoding.

Owns: which encodings are decoded and how (base64, URL-safe, grouped or wrapped; base32; hex;
`\\x` and `\\u` escapes; percent-encoding; `data:` URIs; invisible Unicode tag characters), ROT13
and reversed text, "decode this and follow it", and when a decoded payload is refused (it holds
text the guard refuses, two levels deep) or quarantined (it decodes to prose). `encoded_hits`
takes the guard's whole rule set as `hits`, so decoded text meets every rule.

It never decodes without bound (at most `_MAX_PAYLOADS` payloads per level, `_MAX_DEPTH`
levels), never raises on a payload that does not decode (it is skipped), never decides a verdict
(it yields hits) and never puts decoded text in a reason.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from collections.abc import Callable, Iterator
from itertools import islice

from .normalise import SURROGATES, Views
from .rules import Hit, Q, R, rx
from .rules_language import is_squashed_instruction

_BASE64 = re.compile(r"[A-Za-z0-9+/_\-]{20,}={0,2}")
_BASE64_GROUPS = re.compile(  # split in groups of four, or wrapped over lines
    r"(?<![A-Za-z0-9+/])(?:(?:[A-Za-z0-9+/]{4} ){4,}[A-Za-z0-9+/]{2,4}={0,2}|"
    r"(?:[A-Za-z0-9+/]{16,}[^\S\n]*\n\s*)+"
    r"[A-Za-z0-9+/]{4,}={0,2})"
)
_BASE32 = re.compile(r"(?<![A-Za-z0-9])[A-Z2-7]{24,}={0,6}(?![A-Za-z0-9])")
_SPACE = re.compile(r"\s+")
_HEX = re.compile(r"(?<![0-9a-fA-F])(?:[0-9a-fA-F]{2}){12,}(?![0-9a-fA-F])")
_HEX_ESCAPES = re.compile(r"(?:\\x[0-9a-fA-F]{2}){4,}")
_UNICODE_ESCAPES = re.compile(r"(?:\\u[0-9a-fA-F]{4}){3,}")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_DATA_URI = rx(r"\bdata:[\w.+\-]+/[\w.+\-]+(?:;[\w.+\-]+=[\w.+\-]+)*(;base64)?,([\w+/=%.\-]*)")
_DECODE_AND_FOLLOW = rx(
    r"\b(?:decode|decipher|decrypt|unscramble|rot13|base64)\b(?:\W+\w+){0,8}?\W+(?:and|then)"
    r"\W+(?:follow|execute|obey|run|apply|comply\s+with|carry\s+out|act\s+on)\b"
)
PAYLOAD_CUES = re.compile(
    r"[A-Za-z0-9+/_\-]{16}|(?:[A-Za-z0-9+/]{4} ){4}|\\[xu]|%[0-9a-fA-F]{2}|(?i:data):"
)
"""What every encoded run and `data:` URI needs, so a fact with none skips their searches: a
run of 16 base64 characters (base64, grouped or wrapped base64, base32 and hex runs are
longer), four groups of four, a `\\x` or `\\u` escape, a percent-escape or `data:`."""
_WORD = re.compile(r"[^\W\d_]{2,}")
_MAX_PAYLOADS = 16
"""Encoded runs decoded and re-checked per level: bounds the work on a fact made of many."""
_MAX_DEPTH = 2
"""Levels of decoding: a payload inside a payload is decoded too, one inside that is not."""
_ROT13 = str.maketrans("abcdefghijklmnopqrstuvwxyz", "nopqrstuvwxyzabcdefghijklm")


def _as_text(data: bytes) -> str | None:
    """`data` as text if it is UTF-8 that is mostly printable and has letters; None if not."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(c.isprintable() or c in "\n\t" for c in text)
    if len(text) < 4 or printable < 0.95 * len(text) or sum(c.isalpha() for c in text) < 4:
        return None
    return text


def _b64_text(run: str) -> str | None:
    run = run.rstrip("=").replace("-", "+").replace("_", "/")
    for start in range(4):  # the run may begin mid-quantum if letters precede it
        part = run[start:]
        part = part[: len(part) - len(part) % 4] if len(part) % 4 == 1 else part
        try:
            decoded = base64.b64decode(part + "=" * (-len(part) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        if (text := _as_text(decoded)) is not None:
            return text
    return None


def _decoded_payloads(plain: str) -> Iterator[tuple[str, str]]:
    """(kind, text) for each encoded run in `plain` that decodes to text."""
    for m in _BASE64.finditer(plain):
        if (text := _b64_text(m.group())) is not None:
            yield "base64", text
    for m in _BASE64_GROUPS.finditer(plain):
        if (text := _b64_text(_SPACE.sub("", m.group()))) is not None:
            yield "base64", text
    for m in _BASE32.finditer(plain):
        run = m.group().rstrip("=")
        try:
            decoded = base64.b32decode(run + "=" * (-len(run) % 8))
        except (binascii.Error, ValueError):
            continue
        if (text := _as_text(decoded)) is not None:
            yield "base32", text
    for m in _HEX.finditer(plain):
        if (text := _as_text(bytes.fromhex(m.group()))) is not None:
            yield "hex", text
    for m in _HEX_ESCAPES.finditer(plain):
        if (text := _as_text(bytes.fromhex(m.group().replace("\\x", "")))) is not None:
            yield "hex escapes", text
    for m in _UNICODE_ESCAPES.finditer(plain):
        chars = (chr(int(h, 16)) for h in m.group().split("\\u")[1:])
        yield "unicode escapes", SURROGATES.sub("", "".join(chars))
    if len(_PERCENT.findall(plain)) >= 3:
        yield "percent-encoding", urllib.parse.unquote(plain, errors="replace")


def _is_prose(text: str) -> bool:
    words = _WORD.findall(text)
    return len(words) >= 4 and sum(map(len, words)) >= 0.6 * len(text.replace(" ", ""))


def encoded_hits(
    views: Views, depth: int, hits: Callable[[str, int], Iterator[Hit]], *, gated: bool = True
) -> Iterator[Hit]:
    """Hits for what `views` hides in an encoding; `hits(text, depth)` is the guard's whole
    rule set, run on each decoded payload one level deeper (`depth` counts from 0). `gated`:
    look for encoded runs and `data:` URIs only in text with `PAYLOAD_CUES` (the same hits;
    False is the reference the pre-filter is tested against)."""
    if _DECODE_AND_FOLLOW.search(views.folded):
        yield "encoded", R, "asks the model to decode something and act on it"
    for name, squashed in (
        ("ROT13", views.squashed.translate(_ROT13)),
        ("reversed", views.squashed[::-1]),
    ):
        if is_squashed_instruction(squashed):
            yield "encoded", R, f"an instruction to the model hidden as {name} text"
    if depth >= _MAX_DEPTH:
        return
    searched = not gated or PAYLOAD_CUES.search(views.plain) is not None
    payloads = list(islice(_decoded_payloads(views.plain), _MAX_PAYLOADS)) if searched else []
    if views.hidden.strip():
        payloads.append(("invisible tag character", views.hidden))
    for m in _DATA_URI.finditer(views.plain) if searched else ():
        data = m.group(2)
        text = _b64_text(data) if m.group(1) else urllib.parse.unquote(data)
        payloads.append(("data: URI", text or ""))
        yield "encoded", Q, "contains a data: URI"
    for kind, text in payloads:
        inner = next((h for h in hits(text, depth + 1) if h[1] == R), None)
        if inner is not None:
            yield (
                "encoded",
                R,
                f"a {kind} payload that decodes to text the guard refuses ({inner[0]})",
            )
        elif kind != "percent-encoding" and _is_prose(text):  # that one is the whole text
            yield "encoded", Q, f"a {kind} payload that decodes to prose"
