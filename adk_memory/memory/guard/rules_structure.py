"""The guard's structural rules: markup that would change how a recalled fact is read.

Owns: `delimiter` (the memory block's own section tags, prompt-section tags, closing upper-case
tags, in `<>`, `[]` or `{}`), `role_marker` (chat-template special tokens, role tags and
attributes, `system:`-style prefixes, headings, transcripts, "SYSTEM OVERRIDE"-style phrases)
and `tool_call` (tool or function call syntax and "call the X tool" phrasing), in that order
(`structure_hits`), and `tag_key`, the form a section name is compared in.

It never normalises text itself (it reads `Views`), never decides a verdict (it yields hits;
`default.py` decides) and never puts the fact's text in a reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .cues import Gate
from .normalise import HOMOGLYPHS, Views
from .rules import Hit, R, alt, hit_if_any, rx, word_set

# ---- Tags: the block's delimiters, prompt-section and chat-role tags, special tokens --------

_TAG = re.compile(r"<\s*(/?)\s*([^\W\d][\w:.\-]{0,63})((?:\s[^<>]{0,300})?)>")
_BRACKET_TAG = re.compile(r"\[\s*(/?)\s*([^\W\d][\w:.\- ]{0,40}?)\s*\]")
_SPACED_TAG = re.compile(r"<([^<>=\"']{1,100})>")
_BRACES = str.maketrans("{}", "[]")
_OPENERS = "‹〈⟨❮˂"
_BRACKETS = str.maketrans(_OPENERS + "›〉⟩❯˃", "<<<<<>>>>>")
_SPECIAL_TOKEN = re.compile(r"<\|[^|<>\n]{1,40}\|>|<<\s*/?\s*sys\s*>>", re.IGNORECASE)
_ROLE_ATTR = rx(r"\brole\s*=\s*[\"']?\s*(?:system|assistant|developer|model|tool)")
_ROLE_TAGS = word_set(
    "system sys user assistant model human ai bot developer admin administrator inst "
    "startofturn endofturn imstart imend endoftext eot eotid startheaderid endheaderid"
)
_SECTION_TAGS = word_set(
    "instructions instruction prompt systemprompt context memory memories conversation "
    "conversations history chathistory rules policy guidelines directives override "
    "important secret hidden query userquery userinput message messages systemmessage"
)
_TOOL_TAGS = word_set(
    "toolcall toolcalls functioncall functioncalls invoke tooluse toolcode toolresult "
    "toolresponse functionresult functionresults functionresponse"
)
_SECTION_PARTS = word_set(
    "system instruction prompt memor conversation override assistant admin developer jailbreak"
)
"""Parts of a tag name that make it a prompt section (`<SYSTEM_NOTES>`, `<admin_rules>`); not
applied to CamelCase component names (`<AdminPanel />`) nor to `[...]` (Markdown links)."""
_SEPARATORS = re.compile(r"[\s_.:\-]+")


def tag_key(name: str) -> str:
    return _SEPARATORS.sub("", name.translate(HOMOGLYPHS).casefold())


def _is_camel(name: str) -> bool:
    """`UserProfile`: a component or class name, not a section tag (`USER_PROFILE`)."""
    letters = [c for c in name if c.isalpha()]
    return (
        not _SEPARATORS.search(name)
        and any(c.isupper() for c in letters)
        and any(c.islower() for c in letters[1:])
    )


_OPENING = re.compile("[<\\[{" + _OPENERS + "]")
"""What every tag `_tags` reads starts with (a bracket or its look-alike)."""


def _tag_hits(views: Views, delimiters: frozenset[str]) -> Iterator[Hit]:
    if _SPECIAL_TOKEN.search(views.plain):
        yield "role_marker", R, "contains a chat-template special token"
    # Spaced tags ("< / U S E R _ P R O F I L E >") are read with their blanks removed.
    text = views.plain.translate(_BRACKETS).replace("\\/", "/")
    text = _SPACED_TAG.sub(lambda m: "<" + m.group(1).replace(" ", "") + ">", text)
    for closing, name, attrs, bracket in _tags(text):
        key = tag_key(name)
        if key in delimiters and not _is_camel(name):
            yield "delimiter", R, "opens or closes the memory block's own section"
        elif bracket == "{":
            continue  # `{name}` is a template placeholder unless it names our own section
        elif key in _TOOL_TAGS:
            yield "tool_call", R, "contains tool or function call markup"
        elif key in _ROLE_TAGS or (attrs and _ROLE_ATTR.search(attrs)):
            yield "role_marker", R, "contains a chat role tag"
        elif key in _SECTION_TAGS or (
            not bracket and not _is_camel(name) and any(p in key for p in _SECTION_PARTS)
        ):
            yield "delimiter", R, "opens or closes a prompt section tag"
        elif closing and not bracket and sum(c.isalpha() for c in name) >= 3 and name.isupper():
            yield "delimiter", R, "closes an upper-case section tag"


def _tags(text: str) -> Iterator[tuple[bool, str, str, str]]:
    """(closing, name, attributes, bracket) of each tag-like run: `<x>`, `[x]` or `{x}`."""
    for m in _TAG.finditer(text):
        yield bool(m.group(1)), m.group(2), m.group(3), ""
    for m in _BRACKET_TAG.finditer(text):
        yield bool(m.group(1)), m.group(2), "", "["
    for m in _BRACKET_TAG.finditer(text.translate(_BRACES)):
        if text[m.start()] == "{":
            yield bool(m.group(1)), m.group(2), "", "{"


# ---- Role and system markers ---------------------------------------------------------------

_ROLE_WORDS = alt(
    "system sys assistant ai model developer human bot chatgpt gpt claude gemini llm admin "
    "administrator sistema systeme система ассистент 系统 系統 システム 助手"
)
_ROLE_PREFIX = re.compile(
    r"(?:^|(?<=[\n.!?;>\])\"'|\-–—]))\s?(?:>\s?){0,3}(?:#{1,6}\s?)?"
    + _ROLE_WORDS
    + r"(?:\s*(?:\([^()\n]{0,40}\)\s*)?:|\s+(?:message|prompt|note|notice|override|instructions?"
    r"|update|alert|command|mode)\s*(?:\([^()\n]{0,40}\)\s*)?(?::|\s[—–-]\s))",
    re.IGNORECASE,
)
_ROLE_HEADING = rx(
    r"(?:^|\n)\s*#{1,6}\s*(?:system|assistant|developer|admin|instructions?|prompt|rules|"
    r"(?:system|new|developer|admin)\s+(?:prompt|instructions?|message))\b"
)
_MARKER_PHRASES = rx(
    r"\b(?:system|admin|developer|root)\s+override\b|\bsudo\s+mode\b|"
    r"\bend\s+of\s+(?:the\s+)?(?:memories|memory|context|system\s+prompt|prompt|instructions|"
    r"user\s+profile|conversation)\b|\bbegin\s+(?:the\s+)?(?:system|new|admin|developer)\s+"
    r"(?:prompt|instructions|message)\b|\bnew\s+system\s+prompt\b"
)
_SHOUTED_MARKER = re.compile(
    r"\b(?:SYSTEM|ADMIN|DEVELOPER|ASSISTANT)\s+(?:MESSAGE|NOTICE|NOTE|ALERT|OVERRIDE|UPDATE|"
    r"PROMPT|INSTRUCTIONS?|COMMAND)\b"
)
_TRANSCRIPT = re.compile(  # an upper-case role label, or a transcript "User: ... Assistant: ..."
    r"\b(?:SYSTEM|ASSISTANT|USER|HUMAN|MODEL|DEVELOPER|ADMIN)\s*:"
    r"|(?i:\b(?:user|human)\s*:[^\n]{1,200}?\b(?:assistant|ai|model|bot|gpt)\s*:)"
)
_ROLE_LINE = rx(r"(?:^|\n)\s*(?:system|assistant|developer|model|user|human)\s*\n\s*\S")
_ROLE_OBJECT = rx(
    r"[\"']?\brole[\"']?\s*[:=]\s*[\"']?(?:system|assistant|developer|tool|model|function)"
    r"[\"']?\s*(?:[,;}\n]|$)"
)
"""A structured chat message (`{"role": "system", ...}`, `role: system` in YAML): the value
ends there, so "role: system administrator" is a job title, not a role object."""
_ROLE_PATTERNS = [_ROLE_PREFIX, _ROLE_HEADING, _MARKER_PHRASES, _ROLE_LINE, _ROLE_OBJECT]


def _latin(views: Views) -> str:
    """The text with its case, look-alike letters read as Latin (upper-case role labels)."""
    return views.plain.translate(HOMOGLYPHS)


def _role_hits(views: Views) -> Iterator[Hit]:
    for pattern in _ROLE_PATTERNS:
        if pattern.search(views.folded) or pattern.search(views.low):
            yield "role_marker", R, "contains a chat role or system marker"
            return
    shouted = _latin(views)
    if _SHOUTED_MARKER.search(shouted) or _TRANSCRIPT.search(shouted):
        yield "role_marker", R, "contains a chat role or system marker"


# ---- Tool and function calls ---------------------------------------------------------------

_TOOL = [
    rx(r"[\"']?\b(?:function_?calls?|tool_?calls?|tool_?use|tool_?code)\b[\"']?\s*[:=]"),
    rx(
        r"\b(?:call|invoke|run|execute|trigger|use|fire|launch)\s+(?:the\s+)?(?:tool|function|"
        r"action)\s+[`'\"]?[a-z_][\w.]*"
    ),
    rx(
        r"\b(?:call|invoke|run|execute|trigger|use|fire)\s+(?:the\s+)?[`'\"]?[a-z]+_[a-z_]+"
        r"[`'\"]?\s+(?:tool|function|action|command)\b"
    ),
    rx(r"\b(?:call|invoke|run|execute|trigger)\s+(?:the\s+)?[`'\"]?[a-z]\w*[_.][a-z_.]+\s*\("),
    rx(r"```\s*(?:tool_\w+|function_\w+)|\bdefault_api\.\w+\s*\("),
    rx(r"<\s*(?:function|tool|tool_?call)\s*=\s*[a-z_][\w.\-]*\s*>"),  # <function=name>{...}
    rx(  # a tool call as a JSON object: {"tool": "delete_memory", "args": {...}}
        r"[\"'](?:tool|tool_?name|function|function_?name|name|action)[\"']\s*:\s*[\"']"
        r"[a-z][\w.\-]*[\"']\s*,\s*[\"'](?:args|arguments|parameters|params|input)[\"']\s*:"
    ),
    rx(
        r"\b(?:llama|invoca|ejecuta|usa|utiliza|appelle|invoque|execute|utilise|rufe|nutze|"
        r"verwende|chiama|esegui|chame)\s+(?:\w+\s+|l'){0,2}?(?:herramienta|funcion|outil|"
        r"fonction|werkzeug|funktion|strumento|funzione|ferramenta|funcao)\s+[`'\"]?[a-z_][\w.]*"
    ),
]


STRUCTURE_GATE = Gate(
    [
        (lambda v: v.plain, [_OPENING]),
        (lambda v: v.folded, [*_ROLE_PATTERNS, *_TOOL]),
        (lambda v: v.low, _ROLE_PATTERNS),
        (_latin, [_SHOUTED_MARKER, _TRANSCRIPT]),
    ]
)
"""Every hit of `structure_hits` needs one of these patterns to match its view (`_OPENING`:
a tag, which `_SPECIAL_TOKEN` is too)."""


def structure_hits(views: Views, delimiters: frozenset[str]) -> Iterator[Hit]:
    """Tags, role markers, then tool calls; `delimiters` are the `tag_key`s of the block's own
    sections."""
    yield from _tag_hits(views, delimiters)
    yield from _role_hits(views)
    yield from hit_if_any("tool_call", "contains a tool or function call", _TOOL, views.folded)
