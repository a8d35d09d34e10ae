"""The guard's pre-filter: the cues a rule needs to fire, so an ordinary fact skips the rules.

Owns: reading a rule pattern's cues off its parse tree (`cues_of`: literal text, with the word
boundaries and blanks around it, one of which occurs wherever the pattern matches), `Cues`, a
quick test for any cue of a set of patterns, and `Gate`, what a rule module needs on the views
it reads. A view in which no cue occurs cannot match any of those patterns, so the module's
rules are skipped: an ordinary fact ("The user likes tea.") costs a few searches instead of
about a hundred, with the same hits (the rules that could fire all run, in the same order).

Why derived and not listed by hand: a hand-written keyword list drifts from the rules it
guards; cues read off the compiled patterns change whenever a rule does. It never judges text,
never guesses: a pattern it cannot read a cue from (a character class, `.`, an optional part
only) makes its `Cues` always answer "maybe", and cues are matched case-insensitively (a
superset of what a case-sensitive pattern matches).
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .normalise import Views

_parser: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
_GAP = re.compile(r"\\[sW]\{\d+,\d*\}")
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)
_MAX_CUES = 256
"""At most this many cues for one stretch of a pattern (alternatives multiply)."""
_MAX_CLASS = 16
"""A character class of at most this many single characters is a cue set (`[<\\[{]`)."""

Cue = frozenset[str] | None
"""Cues (regular expressions: a literal, with `\\b` where the pattern puts a word boundary
next to it) one of which matches wherever the pattern does; None: no such set was found."""


_COMMON = frozenset(
    {"user", "users", "the", "their", "they", "this", "that", "from", "with", "for", "and"}
    | {"about", "now", "when", "new", "your", "you", "ai"}
)
"""Words nearly every memory uses ("The user ..."): poor cues, whatever their length."""


def _rarity(cue: str) -> int:
    """How rarely a cue occurs in ordinary text, roughly: its letters, a word boundary one
    more, a colon, line break or other unusual character three; a common word (`_COMMON`), or
    one or two letters alone, nothing; blanks alone, less (they are everywhere)."""
    literal = _UNESCAPE.sub(r"\1", _GAP.sub("", cue.replace("\\b", "")))
    if not literal.strip():
        return -1
    if literal.casefold() in _COMMON or (
        len(literal) <= 2 and literal.isascii() and literal.isalpha()
    ):
        return 0
    bounds = cue.count("\\b")
    return bounds + sum(
        1 if c.isascii() and (c.isalnum() or c in " ,.'-()") else 3 for c in literal
    )


def _best(options: list[frozenset[str]]) -> Cue:
    """The most selective of several cue sets that all hold: the rarest least-rare cue, then
    the fewest cues."""
    if not options:
        return None
    return max(options, key=lambda s: (min(map(_rarity, s)), -len(s)))


def _is_boundary(item: tuple[Any, Any] | None) -> bool:
    return item is not None and item[0].name == "AT" and item[1].name == "AT_BOUNDARY"


def _gap(op: Any, av: Any) -> str | None:
    """A repeated blank or non-word class (`\\s+`, `\\W*`, between words) as a cue's gap."""
    if op.name not in ("MAX_REPEAT", "MIN_REPEAT"):
        return None
    low, high, body = av
    if len(body) != 1 or body[0][0].name != "IN" or len(body[0][1]) != 1:
        return None
    kind, category = body[0][1][0]
    gap = {"CATEGORY_SPACE": "\\s", "CATEGORY_NOT_WORD": "\\W"}.get(
        category.name if kind.name == "CATEGORY" else ""
    )
    if gap is None:
        return None
    return gap + ("{" + str(low) + "," + ("" if high == _parser.MAXREPEAT else str(high)) + "}")


def _exact(op: Any, av: Any) -> frozenset[str] | None:
    """Every text a node can match, as cues (plain characters and gaps), if it is that simple
    (a character, a class of a few characters, a gap, alternatives of such); else None."""
    name = op.name
    if name == "LITERAL":
        return frozenset({re.escape(chr(av))})
    if name == "IN":
        if len(av) > _MAX_CLASS or any(kind.name != "LITERAL" for kind, _ in av):
            return None
        return frozenset(re.escape(chr(c)) for _, c in av)
    if (gap := _gap(op, av)) is not None:
        return frozenset({gap})
    if name == "SUBPATTERN":
        return _exact_sequence(av[3])
    if name == "BRANCH":
        branches = [_exact_sequence(branch) for branch in av[1]]
        if any(b is None for b in branches):
            return None
        return frozenset().union(*(b for b in branches if b is not None))
    return None


def _exact_sequence(items: Sequence[tuple[Any, Any]]) -> frozenset[str] | None:
    texts: frozenset[str] | None = frozenset({""})
    for op, av in items:
        part = _exact(op, av)
        texts = _join(texts, part)
        if texts is None:
            return None
    return texts


def _join(head: frozenset[str] | None, tail: frozenset[str] | None) -> frozenset[str] | None:
    """Each text of `head` followed by each of `tail`; None past `_MAX_CUES` texts."""
    if head is None or tail is None or len(head) * len(tail) > _MAX_CUES:
        return None
    return frozenset(h + t for h in head for t in tail)


def _bounded(texts: frozenset[str], left: bool, right: bool) -> frozenset[str]:
    """Cues with the word boundaries the pattern asserts around them."""
    return frozenset(("\\b" if left else "") + t + ("\\b" if right else "") for t in texts)


def _node(op: Any, av: Any, left: bool, right: bool) -> Cue:
    """The cues of one parse-tree node that must match, and is not `_exact` (None: it offers
    none); `left` and `right`: a word boundary is asserted right before or after it."""
    name = op.name
    if name == "BRANCH":
        branches = [_sequence(branch, left, right) for branch in av[1]]
        if any(b is None for b in branches):
            return None
        return frozenset().union(*(b for b in branches if b is not None))
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        # Repeated, the first copy starts at the node's start, but no copy but the last ends
        # at its end: only a single copy keeps the boundary after it.
        return _sequence(av[2], left, right and av[1] == 1) if av[0] >= 1 else None
    if name == "SUBPATTERN":
        return _sequence(av[3], left, right)
    if name == "ATOMIC_GROUP":
        return _sequence(av, left, right)
    return None  # ANY, CATEGORY, NOT_LITERAL, assertions, group references: no literal


def _sequence(items: Sequence[tuple[Any, Any]], left: bool = False, right: bool = False) -> Cue:
    """A sequence's cues: each stretch of `_exact` parts in a row (words, the gaps between
    them, small alternatives: "ai: ", "bot, ") as the cues it can match, and the cue sets of
    its other mandatory parts; the most selective of these. `left`, `right`: a word boundary
    is asserted before or after the sequence."""
    options: list[frozenset[str]] = []
    chain: frozenset[str] | None = None
    chain_left = False
    for i, (op, av) in enumerate(items):
        before = left if i == 0 else _is_boundary(items[i - 1])
        after = right if i == len(items) - 1 else _is_boundary(items[i + 1])
        part = _exact(op, av)
        joined = _join(chain, part) if chain is not None else part
        if part is not None and joined is not None:
            chain_left = before if chain is None else chain_left
            chain = joined
        else:
            if chain is not None:
                options.append(_bounded(chain, chain_left, before))
            chain = part
            chain_left = before
            if part is None and (cue := _node(op, av, before, after)) is not None:
                options.append(cue)
        if chain is not None and (i == len(items) - 1 or _exact(*items[i + 1]) is None):
            options.append(_bounded(chain, chain_left, after))
            chain = None
    return _best(options)


@functools.cache
def cues_of(pattern: re.Pattern[str]) -> Cue:
    """Cues one of which matches wherever `pattern` does (see `Cue`); None if none found (or
    the pattern's `\\b` is ASCII-only, unlike the cues')."""
    if pattern.flags & re.ASCII:
        return None
    return _sequence(_parser.parse(pattern.pattern, pattern.flags))


@functools.cache
def _compiled(cue: str) -> re.Pattern[str]:
    """A cue's search (compiled once: the gates' sets of views share most cues)."""
    return re.compile(cue, re.IGNORECASE)


def _piece(cue: str) -> str:
    """The longest stretch of plain characters of a cue that is not a common word or mark
    (`_rarity`), case-folded: in the case-folded text wherever the cue matches the text (case
    folding maps every case-insensitive match of a character to the same characters). Not
    common, so that an ordinary fact rarely holds it: `\\buser\\s{0,}:` is looked for by its
    colon, not by "user" (in nearly every fact), which would send each fact on to the cue's own
    search."""
    segments = _GAP.split(cue.replace("\\b", "\\s{0,}"))
    piece = max(segments, key=lambda s: (_rarity(s) > 1, len(_UNESCAPE.sub(r"\1", s))))
    return _UNESCAPE.sub(r"\1", piece).casefold()


def _trie(pieces: Iterable[str]) -> str:
    """A pattern matching one of `pieces` wherever one starts, as a prefix tree (`ab|ac` as
    `a(?:b|c)`): Python's `re` tries every branch of a flat alternation at every position, but
    only the few branches of the first character in a tree. A piece that another starts with
    makes the longer one redundant (only where one starts matters)."""
    tree: dict[str, Any] = {}
    for piece in sorted(pieces, key=len):
        node = tree
        for char in piece:
            if "" in node:
                break
            node = node.setdefault(char, {})
        else:
            node.clear()
            node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        if "" in node:
            return ""
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items())]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return emit(tree) if tree else "(?!)"


class Cues:
    """A quick test for any cue of `patterns` (see the module docstring). Each cue is first
    looked for by a plain stretch (`_piece`) in the case-folded text, all at once (`_trie`);
    only the cues whose stretch's first character starts one are then searched for."""

    def __init__(self, patterns: Iterable[re.Pattern[str]]) -> None:
        sets = [cues_of(p) for p in patterns]
        self.always = any(s is None for s in sets)
        self.words: frozenset[str] = frozenset().union(*(s for s in sets if s is not None))
        self._by_start: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
        for cue in sorted(self.words):
            piece = _piece(cue)
            self.always = self.always or not piece
            self._by_start.setdefault(piece[:1], []).append((piece, _compiled(cue)))
        # Not a look-ahead run by `finditer`: a pattern that opens with the pieces' first
        # characters lets `re` skip in C to the next place one could start.
        self._starts = re.compile(_trie(_piece(cue) for cue in self.words))

    def may_match(self, text: str) -> bool:
        """False only if none of the patterns can match `text`."""
        if self.always:
            return True
        folded = text.casefold()
        # Each cue is searched for once at most (not once per place its stretch occurs: a long
        # text repeating one word would cost its length squared).
        firsts: set[str] = set()
        start = self._starts.search(folded)
        while start is not None:  # every place a piece starts, overlaps too
            firsts.add(folded[start.start()])
            start = self._starts.search(folded, start.start() + 1)
        return any(
            piece in folded and cue.search(text)
            for first in firsts
            for piece, cue in self._by_start[first]
        )


View = Callable[[Views], str]
"""A text the rules read, as a function of a fact's `Views` (`lambda v: v.folded`)."""


class Gate:
    """What a rule module needs to yield any hit: one of its patterns matching the view it
    reads. `views` pairs a view with the patterns read on it. Views that are the same text
    (most facts' lower-case and folded forms) are searched once, for their cues together. The
    cues are read off the patterns on first use (not when the guard is imported)."""

    def __init__(self, views: Iterable[tuple[View, list[re.Pattern[str]]]]) -> None:
        pairs = list(views)
        self._views = [view for view, _ in pairs]
        self._patterns = [patterns for _, patterns in pairs]
        self._cues: dict[tuple[int, ...], Cues] = {}

    def may_hit(self, views: Views) -> bool:
        """False only if the module's rules cannot fire on `views`."""
        texts: dict[str, tuple[int, ...]] = {}
        for index, view in enumerate(self._views):
            text = view(views)
            texts[text] = (*texts.get(text, ()), index)
        return any(self._cues_of(indexes).may_match(text) for text, indexes in texts.items())

    def _cues_of(self, indexes: tuple[int, ...]) -> Cues:
        """The cues of the patterns read on these views (built once per set of views)."""
        cues = self._cues.get(indexes)
        if cues is None:
            cues = Cues(p for i in indexes for p in self._patterns[i])
            self._cues[indexes] = cues
        return cues
