"""The guard's lexicons of what keeps a fact ordinary: the user's own wish, and a dropping verb
in the past tense (something the user did, told as a fact about them, not an order).

Owns these word lists only, in the notation of `lexicon/__init__.py`; it never matches text and
holds no rule (`rules_concepts.py` compiles the lists and combines the concepts)."""

from __future__ import annotations

CONCEPTS: dict[str, str] = {
    # A dropping verb in the past tense: something the user did, told as a fact about them
    # ("User ignored the landlord's instructions"), not an order.
    "narrated": """
en: ignored, forgot, forgotten, disregarded, overrode, overridden, bypassed, skipped, discarded
fr: a ignore, ont ignore, ignorait, a oublie, ont oublie, oubliait, avait oublie
es: ignoro, ignoraba, ha ignorado, olvido, olvidaba, ha olvidado
de: ignorierte, ignoriert hat, hat * ignoriert, vergass, hat * vergessen, hatte * vergessen
nl: negeerde, heeft * genegeerd, vergat, is * vergeten
pl: zignorowal*, zapomnial*, pominal*
tr: gormezden geldi, unuttu, atladi
ar: تجاهل المستخدم, نسي
hi: भूल गया, भूल गई, अनदेखा किया
id: mengabaikan, melupakan, lupa
vi: da bo qua, da quen
sv: ignorerade, glomde, har glomt
pt: ignorou, esqueceu, tinha esquecido
it: ha ignorato, ha dimenticato, aveva dimenticato, ignorava, dimenticava, ha scordato
ru: проигнорировал*, забыл*, игнорировал*
uk: проігнорував*, забув*, ігнорував*
ja: 無視した, 忘れた
zh: 忽略了, 忘记了, 忘了
ko: 무시했, 잊었
cs: ignoroval*, zapomnel*
fi: ohitti, unohti
hu: figyelmen kivul hagyta, elfelejtette
he: שכחה את, התעלמה מ, כבר שכח
fa: نادیده گرفت, فراموش کرد
el: ειχε ξεχασει, ειχε αγνοησει, τα ξεχασε
ro: a ignorat, a uitat
th: เคยลืม, ลืมไป
""",
    # A user's wish (the model doing what the user asked for is ordinary).
    "wish": """
en: prefers, prefer, wants, want, would like, wishes, likes it when, asked, asks, requested,
    expects, needs
fr: prefere, veut, voudrait, souhaite, aime, demande
es: prefiere, quiere, quisiera, desea, le gusta, pide
de: mochte, will, bevorzugt, wunscht, mag, bittet
nl: wil, wilt, verkiest, geeft de voorkeur, wenst, vraagt
pl: woli, chce, chcialby, lubi, prosi
tr: tercih eder, tercih ediyor, istiyor, ister
ar: يفضل, يريد, يود
hi: चाहता, चाहती, पसंद
id: ingin, lebih suka, mau
vi: muon, thich
sv: vill, foredrar, gillar, ber
pt: prefere, quer, gostaria, deseja, pede
it: preferisce, vuole, vorrebbe, desidera, chiede
ru: хочет, предпочитает, хотел бы, хотела бы, просит
uk: хоче, воліє, хотів би
ja: 望んで, 希望, 好み
zh: 希望, 想要, 喜欢, 偏好
ko: 원합니다, 원해, 선호
cs: chce, preferuje
fi: haluaa, toivoo
hu: szeretne, szeretne, kivanja
he: רוצה, מעדיף, מעדיפה
fa: می‌خواهد, میخواهد, ترجیح
el: θελει, προτιμα
ro: vrea, prefera, doreste
th: ต้องการ, อยาก, ชอบ
""",
}
