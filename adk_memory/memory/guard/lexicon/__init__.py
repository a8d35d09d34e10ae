"""The guard's multilingual lexicons: the few concepts every attempt to steer a model needs, in
27 languages (`LANGUAGES`), as words, not sentences.

Why concepts and not phrasings: an injection has to name what it acts on (the assistant, its
instructions, a secret, other users' data, a mode) and what it wants done with it (ignore it,
reveal it, grant it, change who the assistant is). Those few ideas have few words in each
language, while the sentences built from them are endless. `rules_concepts.py` refuses a fact
only when concepts of different classes co-occur, so a single word ("rules", "password",
"assistant", "from now on") never refuses anything on its own.

Owns: the word lists (`CONCEPTS`, one module a class of concepts: `model`, `persona`,
`access`, `planted`, `ordinary`) and their notation. One line per language, entries separated
by commas; an entry ending in `*` is a stem (any ending: "instruc*"), any other entry a whole
word or phrase. Entries in scripts written without spaces between words, or whose words take
attached articles and particles (Chinese, Japanese, Korean, Thai, Arabic, Persian, Hebrew,
Hindi), are matched anywhere. Entries are normalised as facts are (`normalise.concept_view`):
case folded, accents and vowel points dropped, so they are written naturally here.

It never matches text itself (`rules_concepts.py` compiles and reads these lists) and holds no
rule: a concept says nothing about intent alone.
"""

from __future__ import annotations

from .access import CONCEPTS as _ACCESS
from .model import CONCEPTS as _MODEL
from .ordinary import CONCEPTS as _ORDINARY
from .persona import CONCEPTS as _PERSONA
from .planted import CONCEPTS as _PLANTED

__all__ = ["CONCEPTS", "LANGUAGES"]

LANGUAGES = frozenset(
    {"en", "fr", "es", "de", "nl", "pl", "tr", "ar", "hi", "id", "vi", "sv", "pt", "it"}
    | {"ru", "uk", "ja", "zh", "ko", "cs", "fi", "hu", "he", "fa", "el", "ro", "th"}
)
"""The languages every concept below is given in (ISO 639-1)."""


CONCEPTS: dict[str, str] = {**_MODEL, **_PERSONA, **_ACCESS, **_PLANTED, **_ORDINARY}
"""Every concept's word lists by name (no name is in two modules: `rules_concepts` reads them
by name, and their order matters nowhere)."""
