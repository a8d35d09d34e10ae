"""The guard's intent rules: what a fact asks the model to *do*, by kind of act rather than by
phrase, for the paraphrases the phrasing rules (`rules_language.py`) do not list.

Owns: authority claims (`persona`: "this is your developer speaking", "I order you", special
modes with their safety off, "your new task is"), voided or lifted instructions (`override`:
"the instructions above no longer apply", "your guidelines have been updated"), leaks
(`exfiltration`: the text above the fact, other users' data, the user's credentials), commands
to act (`tool_call`: shell commands, money moved to an account), and, as weak signals that are
quarantined rather than rejected (`addressed`), commands with a trigger ("whenever this memory
is loaded, tell ...", "begin every answer by ...") and claims that skip a safeguard ("skip all
confirmation steps", "approve refunds automatically").

A memory is a third-person fact about the user ("The user prefers ..."); these rules look for
text that is instead addressed to the model, so ordinary facts that mention the same words in
the third person pass. It never normalises text itself (it reads `Views.folded`), never decides
a verdict (`default.py` does) and never puts the fact's text in a reason.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from .cues import Gate
from .normalise import Views
from .rules import Hit, Q, hit_if_any, rx

_START = r"(?:^|[.;!?:]\s+)\W{0,5}"
"""The start of a sentence (where an imperative begins)."""

_AUTHORITY = r"(?:developers?|creators?|administrators?|admins?|operators?|owners?|makers?)"

_PERSONA = [
    rx(rf"\bthis\s+is\s+(?:your|the\s+system(?:'s)?)\s+{_AUTHORITY}\b"),
    rx(r"\bi\s+(?:hereby\s+)?(?:order|command|instruct|authori[sz]e|direct)\s+you\b"),
    rx(
        r"\b(?:developer|maintenance|debug|god|admin|sudo|root|unrestricted|unfiltered|"
        r"jailbreak|jailbroken|dan)\s+mode\b.{0,80}?\b(?:ignore|disabled?|off|no\s+"
        r"(?:rules|limits|restrictions|filters)|without\s+(?:rules|limits|restrictions|"
        r"filters)|unrestricted|safety|filters?|polic(?:y|ies)|guidelines)\b"
    ),
    rx(
        r"\b(?:ignore|disabled?|off|safety|filters?)\b.{0,80}?\b(?:developer|maintenance|"
        r"debug|god|admin|sudo|unrestricted|jailbreak|dan)\s+mode\b"
    ),
    rx(r"\bstop\s+being\s+(?:an?\s+|the\s+)?(?:assistant|ai|chatbot|helpful|safe)\b"),
    rx(rf"{_START}become\s+(?:an?\s+)?\w*(?:bot|gpt|ai)\b"),
    rx(  # "your new job" is small talk; "your new task is to ..." gives the model one
        r"\byour\s+(?:new|real|true|actual|only|primary|secret|hidden|updated)\s+(?:task|goal|"
        r"purpose|mission|objective|instructions?|directives?|function|identity|persona|orders)"
        r"\b|\byour\s+(?:new|real|true|actual|only|primary|secret|hidden|updated)\s+(?:job|"
        r"role)\s+(?:is\s+(?:now\s+)?to|:)"
    ),
    rx(r"\b(?:real|true|actual|new|updated|hidden|secret)\s+system\s+(?:prompt|message)\b"),
    rx(
        rf"\b(?:authori[sz]ed|approved|sanctioned|cleared)\s+by\s+(?:the\s+|your\s+)?"
        rf"(?:{_AUTHORITY}|system|openai|google|anthropic)\b"
    ),
    rx(r"\b(?:permitted|allowed|authori[sz]ed)\s+to\s+(?:bypass|ignore|override|skip|break)\b"),
    rx(r"\bobey\s+(?:only\s+)?(?:me|this|these|the\s+user)\b"),
    rx(
        r"\b(?:this(?:\s+(?:note|memory|fact|message))?|the\s+following)\s+(?:overrides?|"
        r"supersedes?|replaces?|takes\s+precedence\s+over|has\s+priority\s+over)\b"
    ),
    rx(
        r"\bnew\s+(?:rules?|instructions?|directives?|polic(?:y|ies)|orders?|tasks?)\s+for\s+"
        r"(?:the\s+)?(?:assistant|ai|model|bot|agent|you)\b|\bnew\s+(?:instructions?|"
        r"directives?|orders?)\s*:"
    ),
    rx(r"\bgrant\s+(?:\w+\s+)?(?:all|full|unrestricted|admin|root)\s+(?:access|permissions)\b"),
]

_LIMITS = (
    r"(?:instructions?|rules|guidelines|directives|guidance|prompt|polic(?:y|ies)|restrictions|"
    r"guardrails|safeguards|filters)"
)
_VOID = (
    r"(?:no\s+longer\s+(?:apply|applies|valid|binding|in\s+effect|matter|count)|(?:are|is)\s+"
    r"(?:now\s+)?(?:void|null|lifted|suspended|disabled|off|revoked|cancell?ed)|have\s+been\s+"
    r"(?:updated|changed|lifted|removed|revoked|cancell?ed|suspended|replaced|disabled))"
)
_OVERRIDE = [
    rx(
        rf"\b(?:your|previous|prior|earlier|above|system|original|initial|any|all|safety)\s+"
        rf"(?:\w+\s+)?{_LIMITS}\b.{{0,60}}?\b{_VOID}"
    ),
    rx(
        rf"\b{_LIMITS}\s+(?:above|before|earlier|you\s+(?:received|were\s+given|have|got))\b"
        rf".{{0,60}}?\b{_VOID}"
    ),
]

_PEOPLE = (
    r"(?:users?|customers?|clients?|people|accounts?|members?|patients?|employees?|everyone|"
    r"everybody)"
)
_DATA = (
    r"(?:data|memories|history|records|orders?|details|information|info|conversations?|"
    r"messages|emails?|addresses|passwords?|files|profiles?|accounts?|logs|transcripts|chats|"
    r"notes)"
)
_SHOW = (
    r"(?:share|list|listing|reveal|show|send|give|include|tell|print|output|expose|display|"
    r"dump|leak|email|forward|post|upload)"
)
_EXFILTRATION = [
    rx(
        r"\b(?:output|print|repeat|reveal|show|display|dump|echo|write\s+out|copy|recite)\s+"
        r"(?:everything|all|anything|the\s+(?:words|text|content|lines|messages|instructions))"
        r"\s+(?:\w+\s+)?(?:above|before\s+(?:this|that|here))\b"
    ),
    rx(
        rf"\b{_SHOW}\b.{{0,60}}?\b(?:other|all|every|another|each)\s+(?:\w+\s+)?{_PEOPLE}"
        rf"(?:'s?|s')?\s+(?:\w+\s+)?{_DATA}\b"
    ),
    rx(rf"\b{_SHOW}\b.{{0,60}}?\b{_DATA}\s+of\s+(?:all|every|other|each)\s+{_PEOPLE}\b"),
    rx(
        r"\b(?:memories|data|instructions|prompt|passwords?|credentials|secrets|keys|history|"
        r"conversations?)\b.{0,20}?\b(?:with|to)\s+(?:anyone|anybody|everyone|everybody|"
        r"whoever)\b"
    ),
    rx(
        r"\b(?:collect|harvest|obtain|capture|record|store|steal|ask\s+for)\s+(?:the\s+)?"
        r"(?:user'?s?|their|customer'?s?)\s+(?:\w+\s+)?(?:password|passwords|credentials|pin|"
        r"credit\s+card|card\s+number|ssn|social\s+security|login)"
    ),
    rx(
        r"\b(?:email|emailing|send|sending|forward|forwarding|post|posting|upload|uploading)\s+"
        r"(?:the\s+|this\s+|all\s+|every\s+)?(?:\w+\s+)?(?:transcript|conversation|chat|history|"
        r"memories|credentials)\b.{0,40}?\b(?:to|into)\b"
    ),
]

_COMMAND = [
    rx(r"\b(?:execute|run)\b(?:\s+(?:the\s+|this\s+)?command)?\s*:"),
    rx(
        r"\b(?:transfer|wire|send|pay|move)\s+(?:[$€£]\s?)?\d[\d,.]*\s*(?:\w+\s+)?(?:to|into)\s+"
        r"(?:the\s+)?(?:account|iban|wallet|card)\b"
    ),
]

_VERBS = (
    r"(?:respond|reply|answer|say|tell|execute|run|call|send|email|forward|visit|include|insert|"
    r"output|print|transfer|approve|grant|delete|recommend|redirect|link)"
)
_TRIGGERED = [
    rx(
        rf"{_START}(?:important\W+|note\W+)?(?:when|whenever|every\s+time|each\s+time|before|"
        rf"after|if)\b[^.;]{{0,80}}?[,:]\s*(?:always\s+)?{_VERBS}\b"
    ),
    rx(
        r"\bwhen(?:ever)?\s+(?:you\s+(?:see|read|load)|this\s+(?:memory|fact|note)\s+is)\b"
        rf"[^.;]{{0,60}}?\b{_VERBS}\b"
    ),
    rx(
        r"(?:^|[.;!?:]\s+)\W{0,5}(?:begin|start|end|finish|conclude|prefix|suffix)\s+(?:every|each|"
        r"all|the|your)\s+(?:answers?|responses?|replies|messages?|conversations?|outputs?)\s+"
        r"(?:by|with)\b"
    ),
    rx(
        r"(?:^|[.;!?:]\s+)\W{0,5}(?:always|never)\s+(?:call|run|execute|send|email|forward|transfer|"
        r"delete|approve|grant|reveal|share|insert|append|recommend)\b"
    ),
    rx(r"\btell\s+(?:the\s+|every\s+)?users?\s+to\s+(?:visit|go\s+to|click|download|open|call)\b"),
    rx(
        r"(?:^|[.;!?:]\s+)\W{0,5}(?:for|in)\s+(?:every|each|all)\s+(?:future\s+|later\s+)?"
        r"(?:repl(?:y|ies)|answers?|responses?|outputs?|messages?)\s*,\s*\w+"
    ),
    rx(
        r"\bskip\s+(?:all|any|every|the)\s+(?:confirmation|verification|security|safety|"
        r"approval|identity)\s+(?:steps?|checks?|prompts?|questions?)\b"
    ),
    rx(
        r"\b(?:approve|refund|grant|accept)\b.{0,40}?\bautomatically\b|\bautomatically\s+"
        r"(?:approve|refund|grant|accept)\b"
    ),
]


_FROM_NOW_ON = rx(
    r"\b(?:assistant|ai|model|bot|agent)\b.{0,30}?\b(?:henceforth|hereafter|from\s+now\s+on|"
    r"from\s+this\s+(?:point|moment)\s+on)\b"
)
"""A standing order for the model, unless the fact says it is the user's wish (below)."""
_USERS_WISH = rx(
    r"\buser(?:'s)?\s+(?:\w+\s+)?(?:wants|prefers|asked|requested|would\s+like|likes|wishes|"
    r"expects|needs|told)\b"
)

_VOCATIVE = [
    rx(
        r"(?:^|[.;!?]\s+)\W{0,5}(?:(?:attention|note\s+to(?:\s+the)?|hey|dear|listen(?:\s+up)?|"
        r"message\s+(?:to|for)(?:\s+the)?)\W{1,5})?(?:ai|assistant|bot|chatbot|model|llm|gpt|"
        r"gemini|claude|agent)\s*[!:,]"
    ),
]

_REPORTED = re.compile(
    r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|\u00ab[^\u00bb]*\u00bb|(?<!\w)'[^']{3,}'(?!\w)"
    r"|\b(?:said|says|wrote|writes|asked|quoted?)\s*(?::|\bthat\b|,?\s*[\"'\u201c\u00ab])"
    r"[^.;!?]*",
    re.IGNORECASE,
)
"""Quoted and reported speech: a fact may quote someone saying "you ..."; only the fact's own
words address the model."""
_REPORTED_START = re.compile(
    r"[\"'\u201c\u00ab]|\b(?:said|says|wrote|writes|asked|quote)", re.IGNORECASE
)
"""What every match of `_REPORTED` starts with: a text without it has nothing to cut."""
_IMPERATIVE = rx(
    rf"{_START}(?:[^,.;:]{{0,40}},\s*)?(?:please\s+|kindly\s+|now\s+|just\s+)?(?:ignore|"
    r"disregard|forget|override|cancel|drop|pretend|append|prepend|copy|insert|print|reveal|"
    r"tell|answer|respond|reply|insult|act|become|stop|switch|enable|disable|run|execute|"
    r"forward|transfer|grant|output|repeat|summari[sz]e|leak|expose|dump|bypass|obey|comply|"
    r"include|insert|add|mention|make\s+sure\s+to\s+\w+)"
    r"\b[^.;]{0,80}?\b(?:repl(?:y|ies)|answers?|responses?|outputs?|instructions?|rules|"
    r"prompts?|guidelines|polic(?:y|ies)|directives?|filters?|protocols?|memories|"
    r"restrictions|safety|moderation)\b"
)


def _addresses_the_model(views: Views) -> bool:
    """The fact's own words (quotes and reported speech aside) give the model an imperative
    about its replies, rules or memories. The second person alone is not enough: people say
    "you" to each other, and facts quote them."""
    return bool(_IMPERATIVE.search(_own_words(views.folded)))


@functools.lru_cache(maxsize=16)
def _own_words(text: str) -> str:
    """`text` without its quotes and reported speech (cached: the gate and the rules ask for
    the same few texts of a fact)."""
    return _REPORTED.sub(" ", text) if _REPORTED_START.search(text) else text


INTENT_GATE = Gate(
    [
        (
            lambda v: v.folded,
            [
                *_PERSONA,
                *_OVERRIDE,
                *_EXFILTRATION,
                *_COMMAND,
                _FROM_NOW_ON,
                *_TRIGGERED,
                *_VOCATIVE,
            ],
        ),
        (lambda v: _own_words(v.folded), [_IMPERATIVE]),
    ]
)
"""Every hit of `intent_hits` needs one of these patterns to match the view it reads."""


def intent_hits(views: Views) -> Iterator[Hit]:
    """Hits of the intent rules on the folded text, strongest first: every rule rejects
    (`hit_if_any`) but the triggered commands, which are quarantined."""
    text = views.folded
    yield from hit_if_any(
        "persona", "claims authority over the model or changes its role", _PERSONA, text
    )
    yield from hit_if_any("override", "declares the model's instructions void", _OVERRIDE, text)
    yield from hit_if_any(
        "exfiltration", "asks for hidden, other users' or secret data", _EXFILTRATION, text
    )
    yield from hit_if_any(
        "tool_call", "commands an action (a shell command, a payment)", _COMMAND, text
    )
    standing_order = bool(_FROM_NOW_ON.search(text)) and not _USERS_WISH.search(text)
    triggered = any(p.search(text) for p in (*_TRIGGERED, *_VOCATIVE))
    if standing_order or triggered or _addresses_the_model(views):
        yield "addressed", Q, "a command to the model, not a fact about the user"
