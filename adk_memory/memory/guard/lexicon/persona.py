"""The guard's lexicons of who the model is and the modes it has: what a persona change sets
("you are", a change, having no rules, no longer being an assistant) and what a planted trigger
is made of (a mode, switching it on, a trigger, a code word, answering).

Owns these word lists only, in the notation of `lexicon/__init__.py`; it never matches text and
holds no rule (`rules_concepts.py` compiles the lists and combines the concepts)."""

from __future__ import annotations

CONCEPTS: dict[str, str] = {
    # "You are" / the model's identity (what a persona change sets).
    "you_are": """
en: you are, you're, youre, you will be, you'll be, your name is, your new name, call yourself,
    you are called, is now called, is now named, is now, will be called, you will now, you'll now,
    you must now, you shall now, you have no, you no longer have, assistant is,
    assistant's name is, ai is, bot is, model is, chatbot is,
    new name is, assistant's new name, ai's new name
fr: tu es, vous etes, tu seras, ton nom est, ton nouveau nom, t'appelles, s'appelle
es: eres, usted es, seras, tu nombre es, tu nuevo nombre, te llamas, se llama
de: du bist, du wirst, dein name ist, dein neuer name, heisst, heißt, ist jetzt
nl: je bent, jij bent, u bent, je heet, je nieuwe naam, heet nu, is nu
pl: jestes, bedziesz, nazywasz sie, twoje nowe imie, nazywa sie
tr: sensin, olacaksin, yeni adin, adin, asistansin
ar: انت الان, أنت الآن, أنت, انت, اسمك
hi: तुम हो, तुम्हारा नाम, आप हैं, तुम अब
id: kamu adalah, kamu sekarang, anda adalah, namamu
vi: ban la, ten cua ban, ban bay gio la
sv: du ar, du heter, ditt nya namn, heter nu, ar nu
pt: voce e, voce sera, seu nome e, seu novo nome, se chama, e agora
it: sei, sarai, ti chiami, il tuo nome, il tuo nuovo nome, si chiama, e ora, e adesso
ru: ты, теперь ты, тебя зовут, тебя теперь зовут, твое имя, зовут
uk: ти, тепер ти, тебе звати, твоє ім'я, звати
ja: あなたは, 君は, お前は, 名前は
zh: 你是, 你现在是, 您是, 你的名字, 名字是, 名字叫
ko: 너는, 당신은, 이름은, 입니다
cs: jsi, budes, jmenujes se, tvoje jmeno
fi: olet, nimesi on, sinun nimesi
hu: te vagy, vagy, a neved
he: אתה, את, שמך, השם שלך
fa: تو هستی, هستی, اسم تو, نام تو
el: εισαι, θα εισαι, σε λενε, το ονομα σου
ro: esti, vei fi, numele tau, te numesti
th: คุณคือ, คุณเป็น, ชื่อของคุณ
""",
    # A change of who the model is, or how long an order lasts.
    "change": """
en: from now on, henceforth, hereafter, from this moment, from this point, starting now,
    as of now, pretend*, act as, acting as, behave as, behave like, roleplay as, role-play as,
    play the role, impersonate, your new name, new persona, new identity, stay in character,
    roleplay as, pretend you, pretend to be,
    adopt the persona, adopt the role, take on the role, your role is, your new role,
    assume the role
fr: a partir de maintenant, desormais, dorenavant, des maintenant, fais comme si, faites comme si,
    fais semblant, joue le role, fais-toi passer, comporte-toi comme, incarne,
    adopte le personnage, adopte le role, ton nouveau role, endosse le role
es: a partir de ahora, desde ahora, de ahora en adelante, finge, finja, haz como si,
    actua como, actue como, interpreta el papel, hazte pasar, ahora eres,
    adopta el papel, adopta el rol, tu nuevo papel, tu nuevo rol, asume el papel
de: ab jetzt, ab sofort, von nun an, ab heute, tu so, tue so, als warst, spiel die rolle,
    verhalte dich wie, du bist jetzt, du bist nun, gib dich als,
    spiele * charakter, spiel * charakter, deine neue rolle, ubernimm die rolle,
    schlupfe in die rolle
nl: vanaf nu, voortaan, doe alsof, speel de rol, gedraag je als, je bent nu, vanaf heden,
    speel * personage, je nieuwe rol, neem de rol
pl: od teraz, od tej chwili, odtad, udawaj, wciel sie, zachowuj sie jak, jestes teraz,
    przyjmij role, twoja nowa rola
tr: bundan sonra, su andan itibaren, bundan boyle, gibi davran, rol yap, mis gibi yap,
    gibi yap,
    yeni rolun, rolunu ustlen
ar: من الآن فصاعدا, من الان فصاعدا, من الآن, من الان, تظاهر, تصرف ك, تقمص, أنت الآن
hi: अब से, आज से, होने का नाटक, का नाटक करो, की तरह व्यवहार, अभिनय करो, ऐसा दिखाओ,
    नाटक करो, नाटक करें, होने का दिखावा
id: mulai sekarang, mulai saat ini, mulai hari ini, berpura-pura, pura-pura, bertindaklah sebagai,
    berperan sebagai, bertindak sebagai,
    berpura-pura*, pura-pura*, bertindaklah, berperanlah,
    peran barumu, ambil peran
vi: tu bay gio, tu gio tro di, ke tu bay gio, gia vo, gia lam, dong vai, hay hanh dong nhu
sv: fran och med nu, hadanefter, latsas, spela rollen, agera som, bete dig som, du ar nu,
    ta rollen, din nya roll
pt: a partir de agora, de agora em diante, daqui em diante, finja, faca de conta, aja como,
    atue como, interprete o papel,
    assuma o papel, adote o papel, seu novo papel, adote a persona
it: d'ora in poi, da ora in poi, da adesso in poi, d'ora in avanti, fingi, fai finta,
    comportati come, interpreta il ruolo, impersona,
    assumi il ruolo, il tuo nuovo ruolo, adotta il personaggio
ru: с этого момента, отныне, с сегодняшнего дня, теперь ты, притворись, представь что ты,
    представь, что ты, веди себя как, играй роль, сыграй роль,
    твоя новая роль, прими роль
uk: відтепер, з цього моменту, тепер ти, уяви що ти, уяви, що ти, прикинься, вдавай,
    поводься як, грай роль,
    твоя нова роль, прийми роль
ja: これから, 今から, 今後, 以後, これより, ふりをし, ふりして, として振る舞, 演じて, なりきって
zh: 从现在开始, 從現在開始, 从现在起, 從現在起, 从今以后, 今后, 假装, 假裝, 扮演, 充当, 你现在是
ko: 지금부터, 이제부터, 앞으로, 척해, 척하, 역할을 해, 연기해, 행세
cs: od ted, od nynejska, odted, predstirej, hraj roli, chovej se jako, jsi ted,
    prijmi roli, tvoje nova role
fi: tasta lahtien, tasta eteenpain, nyt olet, teeskentele, esita olevasi, kayttaydy kuin, esita,
    uusi roolisi, ota rooli
hu: mostantol, ettol kezdve, tegyel ugy, tegy ugy, jatszd el, viselkedj ugy, szerepet,
    uj szereped, vedd fel a szerepet
he: מעכשיו, מעתה, מהיום, העמד פנים, תעמיד פנים, תתנהג כמו, שחק את התפקיד
fa: از این به بعد, از حالا به بعد, از حالا, وانمود کن, نقش, رفتار کن مثل
el: απο τωρα, απο εδω και περα, στο εξης, προσποιησου, κανε πως, κανε οτι, παιξε τον ρολο,
    συμπεριφερσου,
    ο νεος ρολος σου
ro: de acum inainte, de acum incolo, incepand de acum, prefa-te, pretinde ca, joaca rolul,
    comporta-te ca,
    noul tau rol, asuma rolul
th: ตั้งแต่นี้ไป, จากนี้ไป, แกล้งทำ, สวมบทบาท, ทำตัวเป็น, ทำเป็นว่า
""",
    # Having no rules (what a persona change often sets).
    "no_rules": """
en: no rules, without rules, no restrictions, without restrictions, without any restrictions,
    no limits, without limits, no filters, without filters, unrestricted, unfiltered, uncensored,
    no guidelines, without any rules, no safety, do anything now, jailbroken, jailbreak*,
    no * guidelines, no * rules, no * restrictions, no * limits, no * filters, without * rules,
    without * restrictions, without * guidelines, never refuses, never says no, never declines,
    never refuse,
    no content policy, answers everything,
    answers anything, answer anything,
    uncensored, without censorship, no censorship, no boundaries, without boundaries, no morals,
    without morals
fr: sans regles, sans aucune regle, sans restriction*, sans aucune restriction, sans limite*,
    sans filtre*, plus aucune regle, aucune regle, sans censure,
    ne refuse jamais, ne dit jamais non, sans aucune limite,
    n'ait pas de filtre*, n'ait aucune regle, n'a pas de filtre*, n'a aucune restriction,
    sans limites, sans morale, sans aucune censure
es: sin reglas, sin restricciones, sin ninguna restriccion, sin limites, sin filtros,
    no tiene reglas, sin censura,
    nunca se niega, nunca dice que no, nunca rechaza,
    no tenga filtros, no tenga reglas, no tenga restricciones, no tenga limites, no tiene filtros,
    no tiene restricciones, no tiene limites,
    sin limites morales, sin moral
de: ohne regeln, ohne einschrankungen, ohne beschrankungen, ohne filter, ohne grenzen, keine regeln,
    sagt nie nein, lehnt nie, verweigert nie, ohne jegliche,
    keine filter, keine richtlinien, keine einschrankungen,
    ohne zensur, keine zensur, keine grenzen, ohne grenzen, ohne moral
nl: zonder regels, zonder beperkingen, zonder filters, geen regels,
    zegt nooit nee, weigert nooit,
    geen filters, geen beperkingen,
    nooit weigert,
    zonder censuur, geen censuur, geen grenzen, zonder grenzen, zonder moraal
pl: bez zasad, bez zadnych zasad, bez ograniczen, bez zadnych ograniczen, bez filtrow,
    nigdy nie odmawia,
    bez cenzury, bez granic, bez moralnosci
tr: kuralsiz, hicbir kurali olmayan, kisitlamasi olmayan, kisitlamasiz, sinirsiz, filtresiz,
    asla reddetmez, asla hayir demez,
    sansursuz, ahlaksiz
ar: بلا قواعد, بلا قيود, بدون قيود, بدون قواعد, دون قيود
hi: बिना किसी नियम, बिना नियम, बिना किसी प्रतिबंध, बिना प्रतिबंध, कोई नियम नहीं,
    कभी मना नहीं, बिना किसी सीमा
id: tanpa aturan, tanpa batasan, tanpa filter, tidak ada aturan,
    tidak pernah menolak,
    tanpa sensor, tanpa moral
vi: khong co quy tac, khong gioi han, khong co gioi han, khong bi gioi han, khong co han che,
    khong kiem duyet, khong dao duc
sv: utan regler, utan nagra regler, utan begransningar, utan nagra begransningar, utan filter,
    aldrig sager nej, vagrar aldrig,
    utan censur, utan granser, utan moral
pt: sem regras, sem restricoes, sem limites, sem filtros, nao tem regras,
    nunca recusa, nunca diz nao,
    nao tenha filtros, nao tenha regras, nao tenha restricoes, nao tem filtros, nao tem restricoes,
    sem censura, sem moral
it: senza regole, senza restrizioni, senza limiti, senza filtri,
    non rifiuta mai, non dice mai di no,
    non abbia filtri, non abbia regole, non abbia restrizioni, non ha filtri, non ha restrizioni,
    senza censura, senza morale, senza limiti morali
ru: без правил, без ограничений, без каких-либо ограничений, без фильтров, без цензуры,
    никогда не отказывает*,
    без моральных, без морали, без границ
uk: без правил, без жодних правил, без обмежень, без жодних обмежень, без фільтрів,
    ніколи не відмовля*,
    без цензури, без моралі, без меж
ja: ルールはありません, ルールのない, 制限のない, 制限なし, 制約のない, フィルターなし
zh: 没有任何规则, 没有规则, 没有任何限制, 没有限制, 无限制, 無限制, 不受限制, 没有任何约束
ko: 규칙이 없는, 제한이 없는, 제한 없는, 제약 없는, 규칙 없는
cs: bez pravidel, bez omezeni, bez filtru,
    nikdy neodmita,
    bez cenzury, bez hranic, bez moralky
fi: ilman saantoja, ilman rajoituksia, ilman rajoitteita, rajoittamaton,
    ei koskaan kielaydy, ilman rajoja,
    ilman sensuuria, ilman moraalia
hu: szabalyok nelkuli, korlatozasok nelkuli, korlatok nelkul, szabalyok nelkul, korlatlan,
    korlatok nelkul*, szabalyok nelkul*, korlatozasok nelkul*,
    cenzura nelkul*, erkolcs nelkul*
he: בלי חוקים, בלי הגבלות, ללא הגבלות, ללא חוקים, בלי כללים
fa: بدون هیچ قانونی, بدون قانون, بدون محدودیت, بدون هیچ محدودیتی
el: χωρις κανονες, χωρις περιορισμους, χωρις φιλτρα,
    χωρις λογοκρισια, χωρις ηθικη
ro: fara reguli, fara restrictii, fara limite, fara filtre,
    fara cenzura, fara morala
th: ไม่มีกฎ, ไม่มีข้อจำกัด, ไร้ขีดจำกัด
""",
    # No longer being what one was ("you are no longer an assistant").
    "no_longer": """
en: no longer, not anymore, not any more, any longer
fr: n'es plus, n'etes plus, ne plus etre, n'est plus
es: ya no eres, ya no es, ya no sera, dejas de ser
de: nicht mehr, nicht langer, kein * mehr, keine * mehr
nl: niet langer, niet meer, geen * meer
pl: juz nie, nie jestes juz, przestajesz byc
tr: artik * degilsin, artik * degil, artik degil*
ar: لم تعد, لست بعد الآن, لم يعد
hi: अब * नहीं, अब नहीं, नहीं रहे
id: bukan lagi, tidak lagi
vi: khong con la, khong con
sv: inte langre, inte langer, inte langre en, slutar vara
pt: ja nao, nao es mais, nao e mais, nao sera mais, deixa de ser
it: non sei piu, non e piu, smetti di essere
ru: больше не, уже не, перестал* быть
uk: більше не, вже не, перестав* бути
ja: もう * ではない, もはや, ではなくなっ
zh: 不再, 已不是, 不再是
ko: 더 이상, 더는
cs: uz nejsi, uz neni, uz ne, prestavas byt
fi: et ole enaa, ei ole enaa, enaa
hu: mar nem, tobbe nem
he: כבר לא, אינך עוד, לא עוד
fa: دیگر نیستی, دیگر نیست, دیگر
el: δεν εισαι πια, πλεον δεν, πια
ro: nu mai esti, nu mai este, nu mai
th: อีกต่อไป, ไม่ใช่อีกแล้ว
""",
    # A special mode of the model.
    "mode": """
en: developer mode, dev mode, admin mode, god mode, debug mode, maintenance mode, dan mode,
    jailbreak mode, unrestricted mode, sudo mode, root mode, evil mode
fr: mode developpeur, mode administrateur, mode admin, mode dieu, mode debogage
es: modo desarrollador, modo de desarrollador, modo administrador, modo dios, modo depuracion
de: entwicklermodus, admin-modus, adminmodus, gottmodus, debug-modus, wartungsmodus
nl: ontwikkelaarsmodus, ontwikkelaarmodus, beheerdersmodus, godmodus
pl: tryb programisty, tryb dewelopera, tryb administratora, tryb boga
tr: gelistirici modu*, yonetici modu*, tanri modu*
ar: وضع المطور, وضع المسؤول, وضع المطورين
hi: डेवलपर मोड, एडमिन मोड
id: mode pengembang, mode admin, mode developer
vi: che do nha phat trien, che do quan tri, che do developer
sv: utvecklarlage*, adminlage*, administratorslage*
pt: modo desenvolvedor, modo de desenvolvedor, modo administrador, modo deus
it: modalita sviluppatore, modalita amministratore, modalita dio
ru: режим разработчика, режим администратора, режим бога
uk: режим розробника, режим адміністратора
ja: 開発者モード, 管理者モード, デバッグモード
zh: 开发者模式, 開發者模式, 管理员模式, 上帝模式, 调试模式
ko: 개발자 모드, 관리자 모드
cs: vyvojarsky rezim, rezim vyvojare, administratorsky rezim
fi: kehittajatila*, yllapitotila*, kehittajatilaan
hu: fejlesztoi mod*, adminisztratori mod*
he: מצב מפתח, מצב מפתחים, מצב מנהל
fa: حالت توسعه‌دهنده, حالت توسعه دهنده, حالت مدیر
el: λειτουργια προγραμματιστη, λειτουργια διαχειριστη
ro: modul dezvoltator, modul de dezvoltator, modul administrator
th: โหมดนักพัฒนา, โหมดผู้ดูแล
""",
    # Switching a mode on (present tense: a standing rule, not something the user once did).
    "unlock": """
en: unlocks, activates, enables, triggers, switches on, turns on, puts you in, puts the assistant,
    unlock, activate,
    switch to, switch into, enter, go into, switches you
fr: debloque, active, deverrouille, declenche, allume,
    passe en, passe au, entre en
es: desbloquea, activa, habilita, enciende,
    cambia a, entra en, pasa a
de: schaltet, frei, aktiviert, entsperrt, startet,
    wechsle in, wechsle zu,
    aktiviere, schalte * ein, wechsle
nl: activeert, ontgrendelt, schakelt, zet,
    schakel over, ga naar,
    schakel
pl: odblokowuje, wlacza, aktywuje, uruchamia,
    przejdz w, przejdz do, wlacz
tr: acar, etkinlestirir, aktif eder, kilidini acar, baslatir,
    gec
ar: تفتح, يفتح, تفعل, يفعل, تفعيل, يشغل, تشغل
hi: चालू करता, चालू करती, अनलॉक, सक्रिय करता,
    स्विच करो, में जाओ
id: membuka, mengaktifkan, menyalakan,
    masuk ke, beralih ke
vi: mo khoa, kich hoat, bat
sv: laser upp, aktiverar, slar pa,
    byt till, ga in i, vaxla till
pt: desbloqueia, ativa, habilita, liga,
    mude para, entre no, passe para
it: sblocca, attiva, abilita,
    passa a, entra in
ru: включает, разблокирует, активирует, открывает,
    перейди в, переключись
uk: вмикає, розблоковує, активує, відкриває,
    перейди в, перемкнись
ja: 有効に, 有効化, 解除, アンロック, 起動,
    切り替え, 入って, 移行
zh: 解锁, 解鎖, 激活, 开启, 開啟, 启用, 啟用,
    切换到, 进入
ko: 잠금 해제, 활성화, 켭니다, 켜,
    전환, 들어가
cs: odemyka, aktivuje, zapina,
    prepni, prejdi do
fi: avaa, aktivoi, kaynnistaa,
    siirry, vaihda
hu: feloldja, aktivalja, bekapcsolja
he: פותחת, פותח, מפעיל, מפעילה
fa: باز می‌کند, باز میکند, فعال می‌کند, فعال میکند
el: ξεκλειδωνει, ενεργοποιει
ro: deblocheaza, activeaza, porneste
th: ปลดล็อก, เปิดใช้งาน, เปิด,
    สลับไป, เข้าสู่
""",
    # A standing order's trigger: a word or an event that sets it off later.
    "trigger_cue": """
en: whenever, when the user says, when the user types, when the user writes, when the user shares,
    when the user mentions, if the user says, if the user types, if the user mentions,
    when you see, if you see, whenever you see, every time, each time, when someone says,
    if someone says, if anyone says
fr: chaque fois, a chaque fois, quand l'utilisateur, si l'utilisateur, lorsque l'utilisateur,
    quand tu vois, si tu vois,
    si quelqu'un, quand quelqu'un
es: cada vez que, siempre que, cuando el usuario, si el usuario, cuando veas, si ves,
    si alguien, cuando alguien
de: immer wenn, jedes mal, wenn der nutzer, wenn der benutzer, sobald der nutzer,
    sobald der benutzer, wenn du * siehst,
    wenn jemand, falls jemand
nl: telkens als, elke keer, wanneer de gebruiker, als de gebruiker, als je * ziet,
    als iemand, wanneer iemand
pl: za kazdym razem, gdy uzytkownik, kiedy uzytkownik, jesli uzytkownik, gdy zobaczysz,
    kiedy zobaczysz, jesli zobaczysz,
    jesli ktos, gdy ktos
tr: her seferinde, her ne zaman, kullanici * dediginde, kullanici * yazdiginda, gordugunde
ar: كلما, عندما يقول المستخدم, إذا قال المستخدم, عندما ترى, إذا رأيت
hi: जब भी, जब उपयोगकर्ता, जब यूज़र, अगर यूज़र, हर बार
id: setiap kali, kapan pun, ketika pengguna, jika pengguna, saat pengguna, ketika melihat,
    jika melihat
vi: moi khi, bat cu khi nao, khi nguoi dung, neu nguoi dung, khi ban thay, neu ban thay
sv: varje gang, nar anvandaren, om anvandaren, nar du ser, om du ser,
    om nagon, nar nagon
pt: sempre que, toda vez que, quando o usuario, se o usuario, quando vir, se vir,
    se alguem, quando alguem
it: ogni volta che, quando l'utente, se l'utente, quando vedi, se vedi,
    se qualcuno, quando qualcuno
ru: каждый раз, всякий раз, когда пользователь, если пользователь, когда увидишь, если увидишь,
    если кто-то, когда кто-то
uk: щоразу, кожного разу, коли користувач, якщо користувач, коли побачиш, якщо побачиш,
    якщо хтось, коли хтось
ja: たびに, 見たら, と言ったら, と入力したら, と書いたら
zh: 每当, 每當, 当用户, 當用戶, 如果用户, 看到
ko: 때마다, 보면, 라고 하면, 라고 말하면, 입력하면
cs: kdykoli, pokazde, kdyz uzivatel, pokud uzivatel, kdyz uvidis, pokud uvidis
fi: aina kun, kun kayttaja, jos kayttaja, kun naet, jos naet
hu: valahanyszor, amikor a felhasznalo, ha a felhasznalo, ha latod, amikor latod
he: בכל פעם, כאשר המשתמש, אם המשתמש, כשהמשתמש, כשתראה, אם תראה
fa: هر وقت, هر بار, وقتی کاربر, اگر کاربر, وقتی دیدی, اگر دیدی
el: καθε φορα, οταν ο χρηστης, αν ο χρηστης, οταν δεις, αν δεις
ro: de fiecare data, ori de cate ori, cand utilizatorul, daca utilizatorul, cand vezi, daca vezi
th: ทุกครั้งที่, เมื่อผู้ใช้, ถ้าผู้ใช้, เมื่อเห็น, ถ้าเห็น
""",
    # A code word: what a planted trigger is keyed on.
    "code_word": """
en: code word, codeword, magic word, safe word, trigger word, keyword, secret word
fr: mot de code, mot magique, mot-cle, mot cle, mot secret
es: palabra clave, palabra magica, palabra secreta
de: codewort, schlusselwort, zauberwort, losungswort
nl: codewoord, toverwoord, sleutelwoord
pl: slowo-klucz, slowo kluczowe, magiczne slowo
tr: sifre kelime*, anahtar kelime*
ar: الكلمة السرية, كلمة السر, كلمة الرمز
hi: कोड वर्ड, गुप्त शब्द, कोडवर्ड
id: kata sandi, kata kunci, kata rahasia
vi: tu khoa, tu ma
sv: kodord*, nyckelord*
pt: palavra-codigo, palavra codigo, palavra-chave, palavra magica
it: parola d'ordine, parola chiave, parola magica
ru: кодовое слово, кодового слова, секретное слово
uk: кодове слово, секретне слово
ja: 合言葉, キーワード
zh: 暗号, 口令, 关键词
ko: 암호, 키워드
cs: kodove slovo, klicove slovo
fi: koodisana*, taikasana*
hu: kodszo*
he: מילת הקוד, מילת קוד
fa: رمز, کلمه رمز
el: κωδικη λεξη, συνθηματικο
ro: cuvantul-cod, cuvant-cod, cuvant cheie
th: คำรหัส, รหัสลับ
""",
    # Answering: what a planted trigger changes about the model's replies.
    "respond": """
en: answer, answers, respond, responds, reply, replies
fr: reponds, repondez, repondre, repond
es: responde, responda, responder, contesta, conteste
de: antworte, antwortet, antworten, beantworte*
nl: antwoord, antwoorden, beantwoord*
pl: odpowiadaj, odpowiedz, odpowiada
tr: cevap ver*, yanit ver*, yanitla*
ar: أجب, اجب, يجيب, رد
hi: जवाब दो, जवाब दे, उत्तर दो, उत्तर दे
id: jawab, jawablah, menjawab, balas
vi: tra loi, phan hoi
sv: svara, svarar
pt: responda, responde, responder
it: rispondi, risponde, rispondere
ru: отвечай, ответь, отвечает
uk: відповідай, відповідає, відповісти
ja: 答えて, 回答して, 返答して, 答える
zh: 回答, 回复, 答复
ko: 대답해, 답변해, 답해
cs: odpovez, odpovidej, odpovida
fi: vastaa, vastaat, vastaamaan
hu: valaszolj, valaszol
he: ענה, תענה, עונה
fa: جواب بده, پاسخ بده, پاسخ می‌دهد
el: απαντησε, απανταει, απαντα
ro: raspunde, raspunzi
th: ตอบ
""",
}
