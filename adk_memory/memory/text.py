"""Text as full-text search sees it: one normal form for what is indexed and what is asked.

Owns: `search_text`, which turns a memory's fact (when it is indexed) and a query (when it is
searched) into the same two strings, so both sides always meet in the same form: words, for the
service's text-search configuration, and character bigrams, for Postgres' `simple`
configuration, of the scripts that are written without spaces (Chinese, Japanese, Thai, Lao,
Khmer, Myanmar) and of Hangul (Korean words carry their particles: 서울에서 must find 서울),
with the single characters of the scripts whose characters are words or syllables (Chinese
characters, Japanese kanji, Hangul: 猫 must find 我有一只猫, 茶 must find 緑茶).
Normalisation is NFKC (full-width and compatibility forms), case folding (ß is ss) and accent
folding (composed and decomposed "Café" are both "cafe"). It never touches SQL, never changes
the stored fact (a memory stays as written), and never needs a model.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from .languages import FUNCTION_WORDS, detect_configuration, detect_language

# Combining marks folded away: the Latin/Greek/Cyrillic diacritics (é, ñ, ё), Arabic harakat and
# Hebrew points. Marks that change a letter of other scripts (Japanese dakuten: が is not か,
# Thai vowels, Indic matras) are kept; NFC puts them back on their letters.
_ACCENTS = re.compile("[\u0300-\u036f\u0591-\u05c7\u064b-\u065f\u0670]")

# Runs of the scripts searched by character bigrams instead of by words.
_UNSPACED = re.compile(
    "["
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul jamo
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility jamo
    "\u31f0-\u31ff"  # Katakana extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003ffff"  # CJK extensions B and later
    "]+"
)


# Characters that carry meaning alone, indexed one by one as well as in pairs: Chinese characters
# (and Japanese kanji) and Hangul syllables. Kana, Thai and the other alphabets spell sounds:
# one of their letters alone matches everything.
_MEANINGFUL = re.compile(
    "["
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003ffff"  # CJK extensions B and later
    "]"
)


# Hebrew and Arabic write their proclitics onto the next word: Hebrew ו ה ב כ ל מ ש ("and", "the",
# "in", "as", "to", "from", "that"), Arabic the article ال (لل) and و ب ل ف ك. A word of these
# scripts is searched without its first one or two as well (at least three letters left), so
# בירושלים and ירושלים, والقاهرة and القاهرة meet, whichever side wrote them.
_PROCLITIC = re.compile("^(?:ال|لل|[ובהכלמשوبلفك])(?=[\u05d0-\u05ea\u0620-\u06ff]{3})")
_CLITIC_SCRIPT = re.compile("[\u05d0-\u05ea\u0620-\u06ff]")
_CLITIC_WORD = re.compile("[\u05d0-\u05ea\u0620-\u06ff]+")


# A pair of hiragana is grammar far more often than content (particles, verb endings: ています,
# ですか), the stop words of Japanese; a query that has kanji or katakana to go by is searched
# without them (`as_query`).
_KANA_PAIR = re.compile("^[\u3040-\u309f]{2}$")
_KANJI_OR_KATAKANA = re.compile("[\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


class SearchText(NamedTuple):
    """A text in its searchable form: `words` for the text-search configuration `config`,
    `grams` (space-separated tokens) for the `simple` one: the unspaced scripts' bigrams and
    meaningful single characters (`_MEANINGFUL`), Hebrew and Arabic words without their
    proclitics (`_bare`), and
    with "auto" every word but the common function words once more, unstemmed, so a word typed
    exactly as stored matches whatever language either side was detected in."""

    config: str
    words: str
    grams: str


AUTO = "auto"
"""The `text_search_language` that detects each text's language (`languages.py`)."""

AUTO_FALLBACK = "english"
"""The configuration "auto" uses for a text it cannot place."""


def normalise(text: str) -> str:
    """NFKC, case-folded, accents folded: the form both the index and the query are built from."""
    folded = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text).casefold())
    return unicodedata.normalize("NFC", _ACCENTS.sub("", folded))


def _bigrams(run: str) -> list[str]:
    """A run's overlapping character pairs; a lone character stands for itself."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _grams(run: str) -> list[str]:
    """What an unspaced run is searched by: its bigrams, then its meaningful characters (a
    one-character word is found wherever it stands, not only where it starts a pair)."""
    return _bigrams(run) + [char for char in run if _MEANINGFUL.match(char)]


def _bare(word: str) -> list[str]:
    """`word` less its first proclitic, and less its first two (`_PROCLITIC`), when it has
    them."""
    found: list[str] = []
    while len(found) < 2 and (clitic := _PROCLITIC.match(word)):
        word = word[clitic.end() :]
        found.append(word)
    return found


def segments(text: str) -> list[tuple[str, bool]]:
    """`text` cut into its words (maximal runs of letters, marks and digits, in any script:
    True) and what lies between them (False), in order: joined, they are `text` again."""
    found: list[tuple[str, bool]] = []
    for char in text:
        word = unicodedata.category(char)[0] in "LMN"
        if found and found[-1][1] == word:
            found[-1] = (found[-1][0] + char, word)
        else:
            found.append((char, word))
    return found


def tokens(text: str) -> set[str]:
    """`text`'s distinct tokens, normalised (`normalise`): its words (`segments`: "O'Brien" is
    "o" and "brien", "AB-123" is "ab" and "123") and the bigrams of its unspaced runs, the units
    full-text search matches too."""
    normal = normalise(text)
    found = {gram for run in _UNSPACED.findall(normal) for gram in _bigrams(run)}
    found.update(part for part, word in segments(_UNSPACED.sub(" ", normal)) if word)
    return found


def search_text(text: str, language: str = AUTO_FALLBACK) -> SearchText:
    """`text` split into words and bigram tokens, both normalised, for the text-search
    configuration `language` (or the detected one, for "auto"). The unspaced runs become spaces
    in the words, so a Latin word inside Japanese ("私はPythonで") is a word of its own."""
    normal = normalise(text)
    grams = [gram for run in _UNSPACED.findall(normal) for gram in _grams(run)]
    words = _UNSPACED.sub(" ", normal)
    if _CLITIC_SCRIPT.search(words):
        grams.extend(bare for part in _CLITIC_WORD.findall(words) for bare in _bare(part))
    grams = list(dict.fromkeys(grams))
    if language != AUTO:
        return SearchText(config=language, words=words, grams=" ".join(grams))
    grams.extend(word for word in words.split() if word not in FUNCTION_WORDS)
    return SearchText(
        config=detect_configuration(words, AUTO_FALLBACK), words=words, grams=" ".join(grams)
    )


def own_stemmer(searchable: SearchText) -> bool:
    """Whether `searchable` is searched with its own language's stemmer: its script or function
    words place it in the language of its configuration (a tie with another language counts
    for it), whose stemmer finds the other forms of its words. When not (another language's
    stemmer, or a language that has none), a word typed in another form than stored is looked
    for more loosely (`store.retrieval`)."""
    return detect_language(searchable.words, searchable.config) == searchable.config


def foreign_language(searchable: SearchText) -> str | None:
    """The configuration of the language `searchable` is placed in (`languages.detect_language`)
    when it is not the one it is searched with (a Russian query under the English
    configuration), else None."""
    language = detect_language(searchable.words, searchable.config)
    return None if language == searchable.config else language


def as_query(searchable: SearchText) -> SearchText:
    """`searchable` as a query is searched: without its pairs of hiragana (`_KANA_PAIR`) when it
    has other Japanese to go by ("どんな車に乗っていますか" is searched for 車, 乗 and their
    pairs, not for ています shared by every other memory)."""
    grams = searchable.grams.split()
    kept = [gram for gram in grams if not _KANA_PAIR.match(gram)]
    if len(kept) == len(grams) or not any(_KANJI_OR_KATAKANA.search(gram) for gram in kept):
        return searchable
    return searchable._replace(grams=" ".join(kept))
