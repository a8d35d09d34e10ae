"""The rule that decides who may see an app's procedure: structural, not a list of patterns.

Owns: how a procedure's text and a supporting session's material are tokenised and hashed
(`material`, `unsafe`), who may see a procedure (`public`, `audience`) and what of it a
supporter, or the consolidation model working for one, is shown (`masked`). The rule, in full:

- A token is a normalised word of any script (NFKC, case- and accent-folded: `text.tokens`),
  or a character bigram of the scripts written without spaces. Names, numbers, ids, addresses,
  places and e-mail parts are all tokens; no pattern says which is which.
- A token is *exempt* (it identifies no one on its own) when it is a function word of the
  text's own language (detected as full-text search detects it, `languages.py`: "ben" is a
  Turkish function word and an English name), a word of the playbook's own frame ("task",
  "steps", the redactors' placeholders, "user"), a single character, or a number of one or two
  digits (step numbers, counts). Everything else must be earned.
- Each (procedure, user, session) that supports a procedure keeps the hashes of the tokens
  (function words included) of that session's redacted material: the conversation, tool
  results and outcome its job was given. Only that counts as a user's: what a model writes is
  no one's (a name it pieced together from two turns, or copied from where it should not have,
  is held by no one and so shown to no one).
- A token is *common* when at least two distinct supporting users hold it.
- The procedure is public (every user of the app sees it, as stored) when at least `k` distinct
  users support it and every token of its text is exempt or common. Otherwise only its
  supporters see it, each *masked* for them: a word holding a token that is neither exempt,
  common, nor theirs shows as "…". Revisions are shown the same way.
- Consolidation shows the model an existing procedure masked for the job's user too.
- Erasure: a text holding a token of the erased user's (their material, or what their jobs
  wrote) that no remaining supporter's material holds is something only they gave; it goes.

Hashes, not tokens, are stored: the support rows hold no readable text. It never touches SQL
and never needs a model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from .languages import detect_configuration, function_words
from .text import normalise, segments, tokens

PUBLIC = "*"
"""The audience entry of a procedure every user of the app may see."""

MASK = "…"
"""What a run of a candidate procedure the job's user may not see becomes."""

_FRAME = frozenset(
    {"task", "when", "to", "use", "steps", "pitfalls", "user", "email", "phone", "card", "iban"}
)
"""The playbook's labels (`Playbook.render`), the anonymiser's placeholder ("the user") and the
redactors' placeholders: words every procedure has whoever it came from."""

Support = Mapping[str, frozenset[str]]
"""A procedure's support: each supporting user's token hashes (all their sessions')."""


def token_hash(token: str) -> str:
    """A token's stored form: 64 bits of BLAKE2b, enough to tell a procedure's tokens apart."""
    return hashlib.blake2b(token.encode(), digest_size=8).hexdigest()


def exempt(token: str, function: frozenset[str] = frozenset()) -> bool:
    """Whether a token identifies no one on its own (see the module docstring); `function`: the
    function words of the text's language (`language_words`)."""
    return (
        token in function
        or token in _FRAME
        or len(token) == 1
        or (token.isdigit() and len(token) <= 2)
    )


def language_words(text: str) -> frozenset[str]:
    """The function words of the language `text` is written in (`languages`): only those are
    exempt in it ("ben" is a Turkish word and an English name, "ada" Indonesian and a name)."""
    return function_words(detect_configuration(normalise(text), "english"))


def material(*texts: str) -> set[str]:
    """The hashes of the texts' tokens, but those exempt in any text (the frame, single
    characters, short numbers): whether a function word is exempt depends on the procedure's
    language, so material keeps them."""
    return {token_hash(t) for text in texts for t in tokens(text) if not exempt(t)}


def unsafe(text: str, function: frozenset[str] | None = None) -> set[str]:
    """The hashes of the tokens of `text` that must be earned: not exempt in its language (or
    in the one whose `function` words are given)."""
    function = language_words(text) if function is None else function
    return {token_hash(t) for t in tokens(text) if not exempt(t, function)}


def _allowed(hashed: str, support: Support, viewer: str | None) -> bool:
    holders = [user for user, held in support.items() if hashed in held]
    return len(holders) >= 2 or (viewer is not None and viewer in holders)


def visible_to(texts: Iterable[str], support: Support, viewer: str | None) -> bool:
    """Whether `viewer` (None: any user of the app) may see every one of `texts`, ignoring `k`:
    each token exempt, common, or held by the viewer."""
    return all(_allowed(h, support, viewer) for text in texts for h in unsafe(text))


def public(texts: Iterable[str], support: Support, min_users: int) -> bool:
    """Whether every user of the app may see `texts` as they are: `min_users` supporters and
    every token exempt or common."""
    return len(support) >= min_users and visible_to(texts, support, None)


def audience(text: str, support: Support, min_users: int) -> list[str]:
    """Who may see a procedure of this text: `[PUBLIC]`, or its supporters (masked)."""
    return [PUBLIC] if public([text], support, min_users) else sorted(support)


def masked(text: str, support: Support, viewer: str) -> str:
    """`text` with every word (`text.segments`) holding a token `viewer` may not see replaced by
    `MASK`; the rest stays exactly as written."""
    function = language_words(text)
    return "".join(
        MASK
        if word and not all(_allowed(h, support, viewer) for h in unsafe(part, function))
        else part
        for part, word in segments(text)
    )


def viewer_key(app_name: str, user_id: str) -> str:
    """A user's entry in a private procedure's audience: a hash of the app and the user, so the
    procedure's metadata names no one."""
    return "u:" + hashlib.blake2b(f"{app_name}\0{user_id}".encode(), digest_size=12).hexdigest()
