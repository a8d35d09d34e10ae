"""The guard's phrasing rules: sentences that tell the model to change what it does.

Owns: `override` (ignore, forget or override instructions; English, Spanish, French, German,
Italian, Portuguese, Chinese, Russian, Japanese, Korean; also spaced or punctuated into one run
of letters), `persona` (you are now ..., from now on ..., act as ..., DAN/developer mode),
`exfiltration` (leak memories, the prompt or the conversation; Markdown images and URLs built to
carry data out), in that order (`language_hits`), and the weak signal `addressed`, a rule for
the assistant not phrased as the user's wish (`addressed_hits`). `is_squashed_instruction` is
the letters-only check `encoded.py` applies to ROT13 and reversed text.

It never normalises text itself (it reads `Views`), never decides a verdict (it yields hits;
`default.py` decides) and never puts the fact's text in a reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .cues import Gate
from .normalise import Views
from .rules import Hit, Q, R, alt, hit_if_any, rx

# ---- Overrides: telling the model to drop its instructions (several languages) --------------

_VERB = alt(
    "ignore ignoring disregard forget override overrule bypass skip discard abandon neglect "
    "unlearn wipe erase scrap dismiss set\\s+aside put\\s+aside pay\\s+no\\s+attention\\s+to "
    "overlook disable deactivate circumvent suspend lift turn\\s+off switch\\s+off "
    "vergessen ignorieren missachten "
    "ignora ignore ignorar ignoren olvida olvide olvidar descarta descartar omite omitir "
    "desobedece ignorez ignorer oublie oubliez oublier negliger neglige negligez "
    "ignoriere ignorier ignoriert vergiss vergesst missachte missachtet verwirf uberschreibe "
    "ignorate ignorare dimentica dimenticate dimenticare trascura scarta "
    "esqueca esquece esquecer desconsidere desconsidera descarte"
)
_QUAL = alt(
    "previous prior above earlier preceding former original initial system existing your all "
    "safety content moderation memory current these those its "
    "any every anteriores previas precedentes originales iniciales sistema tus todas "
    "precedentes anterieures initiales tes vos toutes systeme ci-dessus "
    "vorherigen bisherigen obigen alle deine vorigen fruheren ursprunglichen "
    "precedenti anteriori iniziali tue tutte suas tuas todas"
)
_TARGET = alt(
    "instructions? rules prompts? guidelines guidance directives directions commands orders "
    "policies restrictions constraints programming guardrails context polic(?:y|ies) filters "
    "guard safeguards moderation setup configuration "
    "(?:developer|system)(?:'s)?\\s+messages? "
    "instrucciones reglas indicaciones directrices ordenes normas consignas "
    "consignes regles ordres "
    "anweisungen instruktionen regeln vorgaben befehle richtlinien systemprompt "
    "istruzioni regole direttive indicazioni ordini "
    "instrucoes regras diretrizes ordens comandos orientacoes"
)
_W = r"(?:\W+\w+)"
_OVERRIDE = [
    rx(rf"\b{_VERB}\b{_W}{{0,5}}?\W+{_QUAL}\b{_W}{{0,3}}?\W+{_TARGET}\b"),
    rx(rf"\b{_VERB}\b{_W}{{0,4}}?\W+{_TARGET}\b{_W}{{0,4}}?\W+{_QUAL}\b"),
    rx(
        rf"\b{_VERB}\b{_W}{{0,2}}?\W+{_TARGET}\W+(?:that\W+)?you(?:\s+were|\s+have\s+been|"
        r"'ve\s+been)\s+(?:given|told|trained)"
    ),
    rx(
        rf"\b{_VERB}\b{_W}{{0,3}}?\W+(?:system|developer)(?:'s)?\s+(?:message|prompt|"
        r"instructions?)"
    ),
    rx(
        r"\b(?:your|the|all|previous|prior|system|original)\s+(?:\w+\s+)?(?:instructions|rules|"
        r"guidelines|prompt|directives|programming|guidance)\s+(?:is|are|were)\s+(?:now\s+)?"
        r"(?:outdated|obsolete|void|invalid|revoked|cancell?ed|fake|wrong|suspended)\b"
    ),
    rx(
        r"\b(?:everything|anything|all|the\s+text|whatever)\s+(?:written\s+)?(?:above|before)"
        r"\b.{0,30}?\b(?:as\s+|is\s+|are\s+)(?:obsolete|void|invalid|irrelevant|fake|outdated|"
        r"cancell?ed)\b"
    ),
    rx(
        r"\b(?:haz caso omiso|no sigas|ne tiens pas compte|ne tenez pas compte|fais abstraction"
        r"|befolge nicht|non seguire|nao siga)\b" + rf"{_W}{{0,5}}?\W+{_TARGET}\b"
    ),
    rx(
        rf"\b{_QUAL}\W+(?:\w+\W+){{0,2}}?{_TARGET}\W+(?:\w+\W+){{0,3}}?"
        r"(?:ignorieren|vergessen|missachten|uberschreiben)\b"
    ),
    rx(
        r"\b(?:forget|disregard|ignore)\W+(?:\w+\W+){0,2}?(?:everything|all)\W+(?:that\W+)?"
        r"(?:you|you've|you\s+have|you\s+were|i|we)\W+(?:were|was|have|had|told|said|been|know)"
    ),
    rx(
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+|what\s+is"
        r"\s+|what's\s+)?(?:above|preceding)\b|\bvergiss\s+alles\b"
    ),
    rx(
        r"\b(?:your|the|my)?\s*(?:new|updated|real|actual|true|revised)\s+(?:system\s+)?"
        r"(?:instructions|prompt|rules|directives|orders|guidelines|persona)\s*(?::|are\b|is\b|"
        r"follow|=)"
    ),
    rx(
        r"\b(?:previous|prior|above|old|original|earlier|system|your|all)\s+(?:rules|instructions"
        r"|guidelines|restrictions|prompt|directives|policies)\s+(?:\w+\s+){0,2}?(?:no\s+longer|"
        r"don't|do\s+not|doesn't|does\s+not|are\s+(?:void|cancell?ed|revoked|lifted))"
    ),
    rx(
        r"\b(?:do\s+not|don't|dont|stop|never|no\s+longer|cease\s+to)\s+(?:follow|following|obey"
        r"|obeying|listen\s+to|adhere\s+to|comply\s+with|respect)\s+(?:\w+\s+){0,3}?(?:instructions"
        r"|rules|prompt|guidelines|directives|developers?|creators?|programming|policies)\b"
    ),
    rx(
        r"\byour\s+(?:instructions|rules|prompt|guidelines|programming|directives)\s+(?:have|has"
        r"|were|was)\s+(?:been\s+)?(?:updated|changed|replaced|overridden|revoked|removed|"
        r"modified|reset|cancell?ed|deleted)\b"
    ),
    rx(
        r"\b(?:ignore|bypass|disable|turn\s+off|deactivate|remove|override)\s+(?:all\s+)?"
        r"(?:your|the\s+(?:model|assistant)'s)\s+(?:\w+\s+)?(?:filters|guardrails|restrictions|"
        r"safeguards|safety|rules|guidelines|limits|ethics)\b"
    ),
    rx(
        r"\b(?:answer|respond|reply|talk)\s+without\s+(?:any\s+)?(?:filters|restrictions|limits|"
        r"rules|censorship|refusals|refusing)\b"
    ),
]
_OVERRIDE_NATIVE = [
    re.compile(  # Chinese
        r"(?:忽略|无视|無視|忘记|忘記|忘掉|不要理会|不要理會|不理会|忽视|忽視|丢弃|丟棄|跳过|"
        r"跳過|不要遵守|不再遵守|别管|別管|抛开|拋開)[^。.!！?？\n]{0,10}?(?:之前|以前|先前|此前|"
        r"上面|上述|以上|前面|所有|全部|系统|系統|原来|原來|原有|你的)[^。.!！?？\n]{0,8}?"
        r"(?:指令|指示|提示词|提示詞|提示|规则|規則|设定|設定|命令|说明|說明|要求|约束|約束|限制)"
    ),
    re.compile(
        r"(?:忽略|无视|無視|忘记|忘記|忘掉|忽视|忽視|不要理会|不要理會)(?:以上|上面|上述|之前|前面)"
        r"(?:的)?(?:所有|全部|一切)?(?:内容|內容|信息|文字|一切|对话|對話)"
    ),
    re.compile(  # Russian
        r"(?:игнорируй|игнорируйте|игнорировать|забудь|забудьте|не\s+обращай\s+внимания\s+на|"
        r"не\s+обращайте\s+внимания\s+на|отбрось|отбросьте|отмени|отмените|пренебреги|не\s+следуй|"
        r"не\s+выполняй|не\s+слушай)\W+(?:\w+\W+){0,4}?(?:предыдущ|прошл|прежн|системн|все\b|всё|"
        r"выше|изначальн|свои|твои|ваши|эти)\w*\W+(?:\w+\W+){0,2}?(?:инструкц|указани|правил|"
        r"промпт|команд|директив|ограничени|установк)"
    ),
    re.compile(  # Japanese
        r"(?:以前|前|これまで|今まで|上記|既存|すべて|全て|システム|元)の?(?:すべての|全ての)?"
        r"(?:指示|命令|プロンプト|ルール|設定|制約|指令)[^。\n]{0,8}?(?:無視|忘れ|破棄)"
    ),
    re.compile(  # Korean
        r"(?:이전|앞의|위의|모든|기존|시스템)\s*(?:의\s*)?(?:모든\s*)?(?:지시|명령|지침|규칙|"
        r"프롬프트)\S*\s*(?:무시|잊어)"
    ),
]


# ---- Persona and behaviour changes ---------------------------------------------------------

_PERSONA = [
    rx(
        r"\b(?:you|u)\s*(?:are|'re|r)\s+now\s+(?:a|an|the|dan|in|my|called|named|free|"
        r"unrestricted|unfiltered|uncensored|jailbroken|evil|going\s+to|no\s+longer|\w*gpt)\b"
    ),
    rx(
        r"\bfrom\s+now\s+on\W+(?:(?:you|u)\W+(?:are|'re|will|'ll|must|shall|should|have\s+to|"
        r"need\s+to|only|always|never|answer|respond|reply|act|behave|speak|talk|ignore|obey|"
        r"follow|pretend|play|roleplay|do\s+not|don't|won't|cannot|can't|no\s+longer)|act|pretend"
        r"|behave|respond|answer|reply|always|never|ignore|only\s+(?:respond|answer|reply))\b"
    ),
    rx(
        r"\b(?:the\s+)?(?:assistant|ai|model|chatbot|bot|agent|llm)\s+is\s+now\s+(?:a|an|dan|"
        r"called|named|in|free|evil|unrestricted|jailbroken|unfiltered)\b"
    ),
    rx(
        r"\b(?:act|behave|pose|roleplay|role-play|role\s+play|respond|answer|reply|speak)\s+"
        r"(?:as|like)\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+|the\s+)?(?:\w+\s+){0,3}?"
        r"(?:ai|model|assistant|chatbot|bot|dan|llm|jailbroken|unfiltered|unrestricted|"
        r"uncensored|evil)\b"
    ),
    rx(r"\bpretend\s+(?:that\s+)?(?:you|u)\s*(?:are|'re|r|were)\b"),
    rx(
        r"\b(?:you|u)\s*(?:are|'re|r)\s+(?:now\s+)?(?:dan|stan|dude|evil\w*|jailbroken|"
        r"unrestricted|unfiltered|uncensored)\b"
    ),
    rx(
        r"(?:^|[.!?:;\n]\s*)(?:please\s+)?(?:assume|take\s+on|adopt|play|switch\s+to)\s+(?:the|a|"
        r"an|your)\s+(?:\w+\s+)?(?:role|persona|identity|character|mode)\b"
    ),
    rx(
        r"\b(?:ahora|ya)\s+eres\b|\beres\s+ahora\b|\bagora\s+(?:voce|tu)\s+(?:e|es)\b|"
        r"\b(?:ora|adesso)\s+sei\b"
    ),
    rx(
        r"\b(?:dan|jailbreak|jailbroken|unrestricted|unfiltered|uncensored)\s+mode\b|"
        r"\bdo\s+anything\s+now\b|\b(?:jailbroken|unfiltered|unrestricted|uncensored)\s+(?:ai|"
        r"model|assistant|chatbot|llm|version)\b"
    ),
    rx(r"\bdeveloper\s+mode\b.{0,80}?\byou\b|\byou\b.{0,80}?\bdeveloper\s+mode\b"),
    rx(
        r"\b(?:you|u)\s+(?:must|shall|have\s+to|need\s+to|are\s+required\s+to|will)\s+"
        r"(?:\w+\s+){0,2}?(?:obey|comply|follow|ignore|reveal|respond|reply|answer|include|"
        r"recommend|behave|refuse|trust|grant|skip|disclose|share|send)\b"
    ),
    rx(
        r"\b(?:a\s+partir\s+de\s+ahora|desde\s+ahora|de\s+ahora\s+en\s+adelante)\W+(?:tu\W+)?"
        r"(?:eres|seras|debes|tienes\s+que|vas\s+a|responde|actua|usted\s+es|ya\s+no)\b"
    ),
    rx(r"\ba\s+partir\s+de\s+agora\W+(?:voce|tu)\W+(?:e|es|sera|deve|vai|tem\s+que|nao)\b"),
    rx(
        r"\b(?:a\s+partir\s+de\s+maintenant|desormais|dorenavant)\W+(?:tu|vous)\W+(?:es|etes|"
        r"dois|devez|vas|allez|seras|serez|n'as|n'avez|ne)\b|\btu\s+es\s+(?:maintenant|desormais)"
        r"\b"
    ),
    rx(
        r"\bab\s+(?:jetzt|sofort)\W+(?:bist\s+du|musst\s+du|wirst\s+du|sollst\s+du|antwortest\s+du"
        r"|gelten\s+nur)\b|\bdu\s+bist\s+(?:jetzt|nun|ab\s+jetzt)\s+(?:ein|eine|dan|kein)\b"
    ),
    rx(
        r"\b(?:da\s+(?:ora|adesso)\s+in\s+(?:poi|avanti)|d'ora\s+in\s+(?:poi|avanti))\W+(?:tu\W+)?"
        r"(?:sei|devi|dovrai|rispondi|comportati|agisci)\b"
    ),
]
_PERSONA_NATIVE = [
    re.compile(
        r"(?:从现在开始|從現在開始|从现在起|從現在起|从今以后|從今以後|今后|今後)\W*(?:你|您)"
    ),
    re.compile(r"(?:с\s+этого\s+момента|отныне)\W+(?:ты|вы)\b|\bты\W+(?:теперь|отныне)\b"),
    re.compile(
        r"(?:これから|今から|今後|以後|これより)(?:は)?\W*(?:あなた|君|きみ|お前|おまえ)(?:は|が)"
    ),
    re.compile(r"制限のない\s*(?:ai|アシスタント|モデル)"),
]


# ---- Exfiltration --------------------------------------------------------------------------

_EXFIL = [
    rx(
        r"\b(?:send|email|e-mail|mail|post|upload|forward|leak|exfiltrate|transmit|share|reveal"
        r"|disclose|print|output|repeat|show|display|dump|include|append|paste|tell|copy|write|"
        r"summari[sz]e|list|collect|compile|gather|export)\b"
        r"(?:\W+\w+){0,6}?\W+(?:system\s+prompt|(?:hidden|secret|initial|original|system|internal"
        r"|developer|confidential)\s+(?:instructions|prompt|rules|message|guidelines)|your\s+(?:"
        r"instructions|prompt|rules|configuration|guidelines)|(?:user'?s'?|stored|saved|other\s+"
        r"users'?|your)\s+(?:stored\s+|saved\s+)?memor(?:y|ies)|conversation\s+history|chat\s+"
        r"history|(?:previous|past)\s+conversations|relevant_memories|user_profile|"
        r"past_conversations)\b"
    ),
    rx(r"!\[[^\]]{0,200}\]\(\s*https?://[^\s)]{1,500}\?[^\s)]{0,500}\)"),
    rx(r"https?://\S{1,300}[?&][\w.\-]{1,40}=(?:\s*[\[{<$]|\s*$|\s)"),
    rx(
        r"(?:^|[.!?:;\n]\s*)(?:please\s+)?(?:tell|give|share|reveal|disclose|show|send)\s+"
        r"(?:\w+\s+)?(?:to\s+)?(?:anyone|anybody|everyone|everybody|whoever|other\s+users)\b"
    ),
    rx(
        r"\b(?:envia|envie|manda|revela|muestra|comparte|reenvia|imprime|repite|envoie|revele|"
        r"affiche|montre|repete|sende|zeige|verrate|wiederhole|invia|rivela|mostra|ripeti)\b"
        r"(?:\W+\w+){0,6}?\W+(?:memorias\s+del\s+usuario|todas\s+las\s+memorias|prompt\s+del\s+"
        r"sistema|instrucciones\s+(?:ocultas|del\s+sistema)|prompt\s+(?:du\s+)?systeme|"
        r"instructions\s+cachees|souvenirs\s+de\s+l'utilisateur|system-?prompt|erinnerungen\s+des"
        r"\s+nutzers|prompt\s+di\s+sistema|memorie\s+dell'utente|prompt\s+do\s+sistema)\b"
    ),
]


# ---- The letters-only view: spaced or punctuated into one run of letters ------------------------

_SQ_OVERRIDE = re.compile(
    r"(?:ignore|disregard|forget|override|bypass)(?:all|any|every|the|your|of|my|these|those)*"
    r"(?:previous|prior|above|earlier|preceding|former|original|initial|system|existing)"
    r"(?:instructions?|rules|prompts?|guidelines|directives|commands|messages?|context)"
    r"|(?:ignore|disregard)(?:all)?(?:of)?theabove"
)
_SQ_PERSONA = re.compile(
    r"youarenow(?:dan|unrestricted|jailbroken|unfiltered|uncensored|evil|free)"
    r"|fromnowonyou(?:are|must|will|shall)|doanythingnow|systemoverride"
)


# ---- Weak signal: a rule addressed to the assistant, not phrased as the user's wish -------

_ADDRESSED = rx(
    r"\b(?:the\s+)?(?:assistant|ai|model|chatbot|bot|agent|llm|gpt|gemini|claude)\s+(?:must|"
    r"should|shall|will|has\s+to|needs\s+to|is\s+required\s+to|is\s+to)\s+(?:not\s+)?(?:\w+\s+)?"
    r"(?:always|never|only|obey|comply|follow|ignore|reveal|recommend|end|start|include|respond"
    r"|reply|answer|refuse|share|send|tell|treat|trust|grant|skip|bypass|disclose|append)\b"
)
_USER_WISH = rx(
    r"\b(?:user|they|he|she|i)\s+(?:wants|would\s+like|asked|asks|prefers|requested|requests|"
    r"expects|needs|wishes)\b"
)
_SENTENCE_END = re.compile(r"[.!?;\n]")


def _addressed(folded: str) -> bool:
    """A rule for the assistant not introduced, in its own sentence, as the user's wish."""
    for m in _ADDRESSED.finditer(folded):
        start = max((e.end() for e in _SENTENCE_END.finditer(folded, 0, m.start())), default=0)
        if not _USER_WISH.search(folded, start, m.start()):
            return True
    return False


def is_squashed_instruction(squashed: str) -> bool:
    """An override or persona change in a letters-only text (`Views.squashed`, or ROT13 or
    reversed text read the same way)."""
    return bool(_SQ_OVERRIDE.search(squashed) or _SQ_PERSONA.search(squashed))


LANGUAGE_GATE = Gate(
    [
        (lambda v: v.folded, [*_OVERRIDE, *_PERSONA, *_EXFIL]),
        (lambda v: v.low, [*_OVERRIDE_NATIVE, *_PERSONA_NATIVE]),
        (lambda v: v.squashed, [_SQ_OVERRIDE, _SQ_PERSONA]),
    ]
)
"""Every hit of `language_hits` needs one of these patterns to match its view."""
ADDRESSED_GATE = Gate([(lambda v: v.folded, [_ADDRESSED])])
"""`addressed_hits` needs `_ADDRESSED`."""


def language_hits(views: Views) -> Iterator[Hit]:
    """Overrides, persona changes, then exfiltration: each in Latin scripts (`folded`), in
    other scripts (`low`) and run together (`squashed`)."""
    override = "tells the model to ignore or override its instructions"
    yield from hit_if_any("override", override, _OVERRIDE, views.folded)
    yield from hit_if_any("override", override, _OVERRIDE_NATIVE, views.low)
    if _SQ_OVERRIDE.search(views.squashed):
        yield "override", R, "tells the model to ignore its instructions (obfuscated)"
    persona = "tries to change the assistant's persona or behaviour"
    yield from hit_if_any("persona", persona, _PERSONA, views.folded)
    yield from hit_if_any("persona", persona, _PERSONA_NATIVE, views.low)
    if _SQ_PERSONA.search(views.squashed):
        yield "persona", R, persona + " (obfuscated)"
    exfiltration = "asks to leak memories, the prompt or the conversation"
    yield from hit_if_any("exfiltration", exfiltration, _EXFIL, views.folded)


def addressed_hits(views: Views) -> Iterator[Hit]:
    """The weak signal: a rule addressed to the assistant, not the user's own wish."""
    if _addressed(views.folded):
        yield "addressed", Q, "a rule addressed to the assistant, not the user's own wish"
