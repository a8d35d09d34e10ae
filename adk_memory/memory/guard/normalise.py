"""The views the guard's rules read, so that obfuscation does not change what a rule sees.

Owns: what obfuscation is undone and how. HTML entities decoded, NFKC (fullwidth, mathematical
and circled letters), zero-width, bidi and other invisible characters removed, Cyrillic and
Greek look-alikes mapped to Latin (`HOMOGLYPHS`), accents dropped, leetspeak read as letters in
tokens mixing letters and digits, Markdown emphasis dropped, spaced letters joined, a
letters-only view, the ASCII hidden in invisible Unicode tag characters (`Views`), and the
script-preserving view the multilingual lexicons are read on (`lexical`).

It never judges text (no rule, no verdict) and never raises on hostile input: every string has
views, computed in time linear in its length.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

SURROGATES = re.compile(r"[\ud800-\udfff]")
_TAG_CHARS = re.compile(r"[\U000e0020-\U000e007e]")
_LINE_BREAKS = re.compile(r"\r\n?|[\v\f\x85\u2028\u2029]")
_BLANKS = re.compile(r"[^\S\n]+")
_NEWLINES = re.compile(r" ?\n[\n ]*")
_ASCII_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f&]")
"""What `_clean` changes in ASCII text besides blanks: control characters (line breaks other
than a newline among them) and HTML entities."""

# Cyrillic and Greek letters that look like Latin ones (both cases), and a few Latin variants.
HOMOGLYPHS = str.maketrans(
    "аеёіїјоросуухѕԁһԛԝӏкмнтвгАЕЁІЇЈОРСУХЅКМНТВαβγεηικνορτυχωɑɡıℓΑΒΕΗΙΚΜΝΟΡΤΥΧΖ",
    "aeeiijopocyyxsdhqwlkmhtbrAEEIIJOPCYXSKMHTBabyeniknoptuxwagilABEHIKMNOPTYXZ",
)
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a"})
_LEET_TOKEN = re.compile(r"(?<![a-z0-9@$])[a-z0-9@$]*[0-9@$][a-z0-9@$]*")
"""A token with a digit, `@` or `$` (one of letters only reads the same either way)."""
_EMPHASIS = re.compile(r"[*~`]+|(?<![^\W_])_+|_+(?![^\W_])")
_EMPHASIS_CUE = re.compile(r"[*~`_]")
"""What `_EMPHASIS` needs; `_LEET_CUE` what `_LEET_TOKEN` needs."""
_LEET_CUE = re.compile(r"[0-9@$]")
_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-·•]{1,3}){2,}[^\W\d_](?![^\W\d_])")
_SPACED_SEP = re.compile(r"[ .\-·•]")
_NOT_LATIN = re.compile(r"[^a-z]+")
_SCRIPT_MARKS_FROM = 0x0900
"""Combining marks below this code point (Latin, Greek and Cyrillic accents, Hebrew and Arabic
vowel points) are dropped by `lexical`; from it on (Indic and Thai vowels, kana voicing) they
spell the word and are kept."""
_LETTER_VARIANTS = str.maketrans(
    {"ي": "ی", "ى": "ی", "ك": "ک", "أ": "ا", "إ": "ا", "آ": "ا", "đ": "d", "ł": "l", "ı": "i"}
)
"""Arabic and Persian spellings of the same letter, read as one, and the Latin letters with a
stroke that no decomposition strips (Vietnamese đ, Polish ł, Turkish dotless ı)."""
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def _clean(text: str) -> str:
    """Case kept: lone surrogates dropped, HTML entities decoded (twice, for `&amp;lt;`), NFKC
    (fullwidth and mathematical letters become ASCII), line breaks unified, and invisible
    characters removed (format characters: zero-width, bidi controls, soft hyphen, tag
    characters; control characters but newline and tab), blank runs collapsed."""
    if text.isascii() and not _ASCII_INVISIBLE.search(text):
        # Nothing to decode, normalise or remove: the same result, without the per-character
        # work (most facts are plain ASCII, on one line, single-spaced: then nothing at all).
        text = _BLANKS.sub(" ", text) if "  " in text or "\t" in text else text
        return _NEWLINES.sub("\n", text) if "\n" in text else text
    text = SURROGATES.sub("", text)
    text = html.unescape(html.unescape(text)) if "&" in text else text
    text = _LINE_BREAKS.sub("\n", unicodedata.normalize("NFKC", text))
    kept = [
        " " if c == "\t" else c
        for c in text
        if c == "\n" or c == "\t" or unicodedata.category(c) not in ("Cf", "Cc", "Co", "Cn")
    ]
    # One blank or one newline between words: no rule can then scan a long run of whitespace
    # from every position (4000 newlines would otherwise cost seconds).
    return _NEWLINES.sub("\n", _BLANKS.sub(" ", "".join(kept)))


def _unleet(m: re.Match[str]) -> str:
    token = m.group()
    if token.isdigit() or not any(c.isalpha() for c in token):
        return token  # numbers stay numbers: only tokens mixing letters and digits are leet
    return token.translate(_LEET).replace("$", "s")


def _fold(low: str) -> str:
    """Latin look-alikes and accents removed, leetspeak read as letters (in tokens that mix
    both), Markdown emphasis dropped and spaced-out letters joined ("i g n o r e")."""
    text = low
    if not low.isascii():  # look-alikes and accents are never ASCII
        text = unicodedata.normalize("NFKD", low.translate(HOMOGLYPHS))
        text = "".join(c for c in text if not unicodedata.combining(c))
    # Each search skipped where its pattern cannot match (most facts have no emphasis marks).
    text = _LEET_TOKEN.sub(_unleet, text) if _LEET_CUE.search(text) else text
    text = _EMPHASIS.sub("", text) if _EMPHASIS_CUE.search(text) else text
    return _SPACED.sub(lambda m: _SPACED_SEP.sub("", m.group()), text)


def lexical(low: str) -> str:
    """`low` (case folded) in its own script, accents and vowel points dropped, Arabic and
    Persian letter variants unified, apostrophes made plain: how the lexicons
    (`lexicon/`) are written and read, in every script. Unlike `Views.folded` it maps no
    Cyrillic or Greek letter to a Latin look-alike, which would garble those languages."""
    text = low.translate(_APOSTROPHES)
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(
        c for c in decomposed if not (unicodedata.combining(c) and ord(c) < _SCRIPT_MARKS_FROM)
    )
    return unicodedata.normalize("NFC", kept).translate(_LETTER_VARIANTS)


@dataclass(frozen=True)
class Views:
    """The forms of one text the rules read (`Views.of(text)`)."""

    plain: str  # `_clean`: case kept (tags, encoded payloads)
    low: str  # plain, casefolded (non-Latin scripts)
    folded: str  # low, `_fold`ed (Latin-script rules)
    squashed: str  # folded, Latin letters only (spacing and punctuation tricks)
    hidden: str  # the ASCII spelled by invisible Unicode tag characters ("ASCII smuggling")
    lexical: str  # `lexical(low)`: every script kept, accents dropped (the lexicons)

    @classmethod
    def of(cls, text: str) -> Views:
        plain = _clean(text)
        low = plain.casefold()
        folded = _fold(low)
        hidden = (
            ""
            if text.isascii()
            else "".join(chr(ord(c) - 0xE0000) for c in _TAG_CHARS.findall(text))
        )
        return cls(plain, low, folded, _NOT_LATIN.sub("", folded), hidden, lexical(low))
