"""Which PostgreSQL text-search configuration a text is written for, detected without a model.

Owns: `detect_configuration`, used when `RetrievalConfig.text_search_language` is "auto" (one
scope may hold memories in several languages; each fact, and each query, is stemmed for its own
language). Detection is by script where a script names one configuration (Cyrillic, Greek,
Arabic, Armenian, Devanagari, Tamil) and by counting common function words for the Latin
scripts' languages. It never touches SQL and never needs a model; a text it cannot place gets
the fallback (the exact words still match: "auto" also indexes every word unstemmed).
"""

from __future__ import annotations

import re

# Scripts that name one of PostgreSQL's built-in configurations.
_SCRIPTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile("[\u0400-\u04ff]"), "russian"),
    (re.compile("[\u0370-\u03ff]"), "greek"),
    (re.compile("[\u0600-\u06ff]"), "arabic"),
    (re.compile("[\u0530-\u058f]"), "armenian"),
    (re.compile("[\u0900-\u097f]"), "hindi"),
    (re.compile("[\u0b80-\u0bff]"), "tamil"),
)

# A few dozen of each language's commonest function words (normalised: case- and accent-
# folded, as `text.normalise` leaves them). Words two languages share count for both.
_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    language: frozenset(words.split())
    for language, words in {
        "english": "the and of to is in it that was for on are with as his they be at have "
        "this from or had by but what were we when your can said there use an each which she "
        "do how their if will my i me you our did has been would about who whom whose where "
        "does why",
        "german": "der die und in den von zu das mit sich des auf fur ist im dem nicht ein "
        "eine als auch es an werden aus er hat dass sie nach wird bei einer um am sind noch "
        "wie einem uber einen so zum war haben nur oder aber vor zur bis mehr durch ich mein "
        "meine wir ihr",
        "french": "le la les de des du et en un une est que qui dans pour pas au sur ne se ce "
        "il elle avec plus par je mon ma mes nous vous sont aux ou son sa ses cette leur j "
        "l d qu c n m",
        "spanish": "el la los las de del y en un una es que por con no se para al lo como mas "
        "su sus pero yo mi mis nosotros esta este son fue ha muy tambien porque cuando",
        "italian": "il lo la i gli le di del della e in un una che per con non si sono al "
        "alla ma come piu io mio mia noi questo questa ho ha anche perche quando",
        "portuguese": "o a os as de do da dos das e em um uma que para com nao se por mais "
        "como mas eu meu minha nos este esta sao foi tem tambem quando",
        "dutch": "de het een en van in is dat op te zijn met voor niet aan er die maar om "
        "ook als bij ik mijn wij we hij zij was heb heeft naar dan",
        "swedish": "och i att det som en pa ar av for med till den har de inte om ett han "
        "men var jag sig fran vi sa kan min mitt nar",
        "danish": "og i at det som en pa er af for med til den har de ikke om et han men var "
        "jeg sig fra vi sa kan min mit nar",
        "norwegian": "og i at det som en pa er av for med til den har de ikke om et han men "
        "var jeg seg fra vi sa kan min mitt nar",
        "finnish": "ja on ei se etta oli ole olen mutta kun han mina sina me te he tama tuo "
        "niin myos jo kuin mita",
        "turkish": "ve bir bu da de icin ile ben sen o biz siz onlar ama cok gibi daha ne "
        "mi mu var yok",
        "indonesian": "dan yang di ke dari ini itu dengan untuk tidak ada saya kami kita "
        "akan pada juga dalam atau",
    }.items()
}

_WORD = re.compile(r"[^\W\d_]+")

FUNCTION_WORDS: frozenset[str] = frozenset().union(*_FUNCTION_WORDS.values())
"""Every language's function words: left out of the unstemmed layer, where they would match
nearly every memory (each configuration drops its own stop words from the stemmed one)."""


def function_words(configuration: str) -> frozenset[str]:
    """The common function words of one configuration's language (none for a language this
    module has no list for: the non-Latin scripts')."""
    return _FUNCTION_WORDS.get(configuration, frozenset())


def detect_language(words: str, fallback: str | None = None) -> str | None:
    """The configuration `words` (already normalised) are written for, when their script or
    their function words place them (a tie won by `fallback`); None when nothing points to one
    language (a name, a number, an unknown language, a tie)."""
    for script, configuration in _SCRIPTS:
        if script.search(words):
            return configuration
    votes: dict[str, int] = {}
    for word in _WORD.findall(words):
        for language, common in _FUNCTION_WORDS.items():
            if word in common:
                votes[language] = votes.get(language, 0) + 1
    if not votes:
        return None
    best = max(votes.values())
    leaders = [language for language, count in votes.items() if count == best]
    if fallback in leaders:
        return fallback
    return leaders[0] if len(leaders) == 1 else None


def detect_configuration(words: str, fallback: str) -> str:
    """The configuration `words` (already normalised) are most likely written for; `fallback`
    when nothing points to one language (a name, a number, an unknown language)."""
    return detect_language(words, fallback) or fallback
