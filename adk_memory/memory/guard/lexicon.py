"""The guard's multilingual lexicons: the few concepts every attempt to steer a model needs, in
27 languages (`LANGUAGES`), as words, not sentences.

Why concepts and not phrasings: an injection has to name what it acts on (the assistant, its
instructions, a secret, other users' data, a mode) and what it wants done with it (ignore it,
reveal it, grant it, change who the assistant is). Those few ideas have few words in each
language, while the sentences built from them are endless. `rules_concepts.py` refuses a fact
only when concepts of different classes co-occur, so a single word ("rules", "password",
"assistant", "from now on") never refuses anything on its own.

Owns: the word lists (`CONCEPTS`) and their notation. One line per language, entries separated
by commas; an entry ending in `*` is a stem (any ending: "instruc*"), any other entry a whole
word or phrase. Entries in scripts written without spaces between words, or whose words take
attached articles and particles (Chinese, Japanese, Korean, Thai, Arabic, Persian, Hebrew,
Hindi), are matched anywhere. Entries are normalised as facts are (`normalise.concept_view`):
case folded, accents and vowel points dropped, so they are written naturally here.

It never matches text itself (`rules_concepts.py` compiles and reads these lists) and holds no
rule: a concept says nothing about intent alone.
"""

from __future__ import annotations

LANGUAGES = frozenset(
    {"en", "fr", "es", "de", "nl", "pl", "tr", "ar", "hi", "id", "vi", "sv", "pt", "it"}
    | {"ru", "uk", "ja", "zh", "ko", "cs", "fi", "hu", "he", "fa", "el", "ro", "th"}
)
"""The languages every concept below is given in (ISO 639-1)."""

CONCEPTS: dict[str, str] = {
    # The model as the one acted on or spoken to.
    "model": """
en: assistant*, ai, a.i., chatbot*, bot, bots, llm, llms, gpt*, chatgpt, gemini, claude, copilot,
    language model*, the model, virtual assistant*
fr: assistant*, ia, intelligence artificielle, le modele, chatbot*, robot conversationnel
es: asistente*, ia, inteligencia artificial, el modelo, chatbot*
de: assistent*, ki, kunstliche intelligenz, das modell, sprachmodell*, chatbot*
nl: assistent*, ai, kunstmatige intelligentie, het model, chatbot*
pl: asystent*, sztuczn* inteligencj*, chatbot*, model jezykowy
tr: asistan*, yapay zeka*, sohbet botu*
ar: مساعد, المساعد, ذكاء اصطناعي, الذكاء الاصطناعي, روبوت, بوت, النموذج
hi: सहायक, एआई, कृत्रिम बुद्धि, आर्टिफिशियल इंटेलिजेंस, बॉट, मॉडल,
    असिस्टेंट, चैटबॉट, एआई असिस्टेंट
id: asisten, kecerdasan buatan, ai, bot, chatbot, model bahasa
vi: tro ly, ai, tri tue nhan tao, chatbot, mo hinh ngon ngu
sv: assistent*, ai, artificiell intelligens, chattbot*, sprakmodell*
pt: assistente*, ia, inteligencia artificial, o modelo, chatbot*
it: assistente*, ia, intelligenza artificiale, il modello, chatbot*
ru: ассистент*, помощник*, ии, искусственн* интеллект*, бот, бота, боту, чат-бот*, нейросет*,
    модель
uk: асистент*, помічник*, ші, штучн* інтелект*, бот, бота, чат-бот*, модель
ja: アシスタント, 人工知能, ボット, チャットボット, aiアシスタント, モデル,
    ai
zh: 助手, 人工智能, 机器人, 機器人, 聊天机器人, 模型,
    ai
ko: 어시스턴트, 비서, 인공지능, 챗봇, 봇, 모델,
    ai
cs: asistent*, umel* inteligenc*, chatbot*, ai
fi: avustaja*, tekoaly*, botti*, chatbot*, kielimalli*
hu: asszisztens*, mesterseges intelligencia*, chatbot*, bot, botot
he: עוזר, העוזר, בינה מלאכותית, בוט, הבוט, מודל
fa: دستیار, هوش مصنوعی, ربات, بات, مدل
el: βοηθο*, βοηθε*, τεχνητη νοημοσυνη, τεχνητης νοημοσυνης, chatbot, μοντελο
ro: asistent*, inteligent* artificial*, ia, ai, chatbot*
th: ผู้ช่วย, เอไอ, ปัญญาประดิษฐ์, บอท, แชทบอท, โมเดล
""",
    # The model's instructions, rules and safeguards.
    "rules": """
en: instruction*, rule, rules, guideline*, prompt, prompts, directive*, programming, restriction*,
    limits, limitations, polic*, filters, filtering, safeguards, guardrails, constraints, orders,
    commands, configuration, content policy, safety settings, moderation,
    verification, verifications, checks, safety checks, security checks, ethical guidelines
fr: instruction*, consigne*, regle*, directive*, restriction*, limites, politique*, filtre*,
    programmation, prompt, ordres, commandes, garde-fous,
    verification*, controles
es: instruccion*, regla*, directrices, directriz, restriccion*, limites, politica*, filtro*,
    normas, indicaciones, programacion, ordenes, prompt,
    verificacion*, controles
de: anweisung*, regel*, richtlinie*, vorgabe*, einschrankung*, beschrankung*, filter*, befehl*,
    instruktion*, programmierung, systemprompt, prompt, sicherheitsregel*, inhaltsrichtlinie*,
    verifizierung*, prufung*, sicherheitsprufung*
nl: instructie*, regel*, richtlijn*, beperking*, filter*, opdrachten, beleid*, veiligheidsregel*,
    prompt
pl: instrukcj*, zasad*, regul*, wytyczn*, ograniczen*, polecen*, filtr*, polityk*, prompt*
tr: talimat*, kural*, yonerge*, kisitlama*, sinirlama*, filtre*, komut*, politika*, istem*
ar: تعليمات, التعليمات, قواعد, القواعد, ارشادات, الارشادات, قيود, القيود, اوامر, الاوامر, سياسة,
    توجيهات, فلاتر, موجه النظام
hi: निर्देश, नियम, दिशानिर्देश, प्रतिबंध, पाबंदी, आदेश, फ़िल्टर, नीति, प्रॉम्प्ट,
    वेरिफिकेशन, सत्यापन
id: instruksi, aturan, pedoman, batasan, perintah, arahan, kebijakan, filter, prompt
vi: huong dan, quy tac, chi dan, chi thi, gioi han, han che, menh lenh, chinh sach, bo loc,
    quy dinh, loi nhac
sv: instruktion*, regler, regel, reglerna, riktlinj*, begransning*, filter, filtret, order,
    policy*, direktiv*, sakerhetsregl*, innehallspolicy*, prompt,
    verifiering*, kontroll*, sakerhetskontroll*
pt: instruc*, regra*, diretriz*, diretrizes, restric*, limites, politica*, filtro*, ordens,
    comandos, prompt,
    verificac*, seguranca
it: istruzion*, regol*, direttiv*, restrizion*, limiti, politic*, filtr*, ordini, comandi, prompt
ru: инструкци*, правил*, указани*, ограничени*, директив*, политик*, фильтр*, команд*, промпт*,
    установк*
uk: інструкці*, правил*, вказівк*, обмежен*, директив*, політик*, фільтр*, команд*, промпт*
ja: 指示, 命令, ルール, 規則, ガイドライン, 制限, 制約, ポリシー, フィルター, プロンプト, 設定
zh: 指令, 指示, 规则, 規則, 准则, 準則, 限制, 约束, 約束, 政策, 过滤, 提示词, 提示詞, 提示, 设定,
    設定, 命令
ko: 지시, 지침, 규칙, 명령, 제한, 제약, 정책, 필터, 프롬프트, 가이드라인
cs: pokyn*, pravid*, instrukc*, omezeni*, smernic*, filtr*, prikaz*, zasad*, prompt*,
    overeni, kontrol*
fi: ohje*, saanto*, saanno*, rajoitu*, rajoitte*, suodat*, kasky*, maaray*, kehote*, sisaltokaytan*,
    tarkistu*, varmennu*, tunnistautumi*
hu: utasitas*, szabaly*, iranyelv*, korlatoz*, szuro*, parancs*, eloiras*, prompt*
he: הוראות, כללים, כללי, הנחיות, מגבלות, חוקים, פקודות, מדיניות, הנחיית
fa: دستورالعمل, دستورات, دستورها, قوانین, قواعد, محدودیت, راهنما, فیلتر, سیاست, دستور
el: οδηγι*, κανον*, περιορισμ*, εντολ*, πολιτικ*, φιλτρ*
ro: instructiun*, regul*, reguli, directiv*, restricti*, limitel*, politic*, filtr*, comenzi*
th: คำสั่ง, กฎ, ข้อจำกัด, แนวทาง, นโยบาย, ตัวกรอง, ข้อบังคับ
""",
    # Dropping, voiding or getting round something.
    "dismiss": """
en: ignore, ignoring, disregard*, forget, override*, overrule, bypass*, circumvent*, skip, discard,
    abandon, set aside, put aside, disable, deactivate, turn off, switch off, lift, drop, break,
    breaks, breaking, violate, no longer bound, not bound by, free from, ignores, bypasses, skips,
    disables, don't follow, do not follow, stop following,
    no longer follow, pay no attention,
    suspend, suspended, remove, removes, lifts, lifted, waive, waives, switched off, turned off,
    disabled,
    no longer apply, no longer applies, not apply
fr: ignor*, oubli*, contourn*, desactiv*, outrepass*, ne tiens pas compte, ne tenez pas compte,
    ne pas tenir compte, fais abstraction, passe outre, enfreins, abandonne,
    supprime, supprimez, retire, retirez, suspendu*, desactive*,
    supprim*, retirez, retirer, leve, lever, enleve*
es: ignor*, olvid*, omite, omitir, desactiv*, haz caso omiso, no sigas, no siga, descart*, elud*,
    salta*, sáltate,
    elimina, quita, suspendid*, suspende,
    omita, omitan, ignore, ignoren, se salte,
    quita, quitar, quite, elimina, eliminar, elimine, retira, retirar, suprim*, levanta
de: ignorier*, vergiss, vergesst, vergessen, missacht*, umgeh*, deaktivier*, uberschreib*,
    ausser kraft, halte dich nicht, befolge nicht, schalte * aus,
    entferne, aufgehoben, ausgesetzt, deaktiviert, abgeschaltet,
    aufheb*, hebt * auf, hebe * auf, entfern*, fallen lassen, lasst * fallen, schaltet * ab
nl: negeer*, negeren, vergeet, vergeten, omzeil*, uitschakel*, schakel * uit, houd je niet,
    volg niet, naast je neer,
    verwijder, opgeschort, uitgeschakeld,
    laat * vallen, laat vallen, laten vallen, verwijder*, schakelt * uit, opheffen, heft * op
pl: zignoruj*, ignoruj*, zapomnij*, pomin*, omin*, wylacz*, nie przestrzegaj, nie stosuj,
    lekcewaz*,
    usun, zawieszon*, wylaczon*,
    znosi, znies*, usuwa*, zdejmuje, wylacza
tr: yok say*, gormezden gel*, unut*, atla*, devre disi, uyma, dikkate alma, umursama*, ihlal et*,
    kaldir, askiya alin*, devre disi birak*,
    kaldir*
ar: تجاهل, يتجاهل, انس, انسى, تخطى, تجاوز, عطل, اهمل, لا تتبع, لا تلتزم,
    يرفع, يزيل, ازل, أزل, يلغي
hi: अनदेखा, नज़रअंदाज़, नजरअंदाज, भूल जाओ, भूल जाएं, भूल जाइए, उपेक्षा, दरकिनार, पालन मत, मत मानो,
    बंद कर,
    हटा दो, निलंबित, बंद है, मत करो,
    हटा दे, हटाए, हटा देता, हटाता
id: abaikan, mengabaikan, lupakan, jangan ikuti, lewati, nonaktifkan, langgar, melanggar, menembus,
    hapus, dinonaktifkan, ditangguhkan,
    menghapus, mencabut, cabut, menonaktifkan
vi: bo qua, quen, phot lo, lo di, vo hieu, khong tuan, dung tuan, vuot qua,
    go bo, loai bo, xoa bo
sv: ignorer*, glom, glomma, strunta*, bortse fran, kringga*, stang av, asidosatt*, bry dig inte,
    ta bort, hoppa over, avstangd*, avaktiver*, upphavd*,
    slapper, slappa, tar bort, haver, hava, stanger av
pt: ignor*, esquec*, esqueca, desconsider*, nao siga, contorn*, desativ*, burl*,
    remova, suspens*, desativad*, suspend*,
    remover, removam, removem, retirar, retirem, eliminar, elimine, eliminem
it: ignor*, dimentic*, non seguire, aggir*, disattiv*, scavalc*, trascur*,
    rimuovi, sospes*, disattivat*,
    rimuov*, togli*, elimina, eliminare, sospend*
ru: игнорир*, проигнорир*, забудь*, забыть, не обращай*, не следуй, обойди*, отключи*, отбрось*,
    пренебрег*, нарушай,
    удали, отключен*, приостановлен*, сними,
    снима*, сними, убира*, убери, удаля*, отменя*, отмени*
uk: ігнору*, проігнору*, забудь*, не зважай*, не дотримуй*, обійди*, вимкни*, знехтуй*,
    видали, вимкнен*, призупинен*, зніми,
    зніма*, прибира*, видаля*, скасову*, скасуй*
ja: 無視, 忘れ, 破棄, 無効, 従わない, 解除, 回避,
    停止, 外して, 削除,
    取り除, 外す, 撤廃
zh: 忽略, 无视, 無視, 忘记, 忘掉, 忘記, 不要遵守, 不再遵守, 绕过, 繞過, 跳过, 跳過, 取消,
    禁用, 抛开, 別管, 别管, 不理会,
    删除, 移除, 暂停, 关闭, 已停用,
    去掉, 解除
ko: 무시, 잊어, 잊고, 잊으, 우회, 해제, 따르지,
    중지, 제거, 꺼,
    없애
cs: ignoruj*, zapomen*, zapomn*, nedodrzuj*, obejdi*, vypni*, nerid se, poruš*,
    vypnut*, odstran*, pozastaven*, preskoc*,
    zrus*, odstranuje, vypina
fi: ohita*, ohittaa, unohda*, ala noudata, ala valita, sivuuta*, kierra*, poista kaytosta,
    huomiotta, poistettu kaytosta, pois kaytosta, poista, keskeytetty,
    poistaa, purkaa, kumoaa, kumoa
hu: figyelmen kivul, felejts*, kerul*, kapcsold ki, ne kovesd, ne vedd figyelembe, hagyd figyelmen,
    tavolitsd el, felfuggeszt*, kikapcsolt*, hagyd ki,
    feloldja, feloldj*, eltavolit*, megszunteti
he: התעלם, תתעלם, יתעלם, שכח, תשכח, אל תציית, עקוף, בטל,
    מתעלם, מתעלמת, מתעלמים,
    מסיר, מסירה, הסר, מבטל
fa: نادیده, فراموش, اعتنا نکن, پیروی نکن, دور بزن, غیرفعال,
    برمی‌دارد, برمیدارد, بردار, حذف
el: αγνοησ*, αγνοει*, ξεχασ*, ξεχνα, μην ακολουθ*, παρακαμψ*, απενεργοποιησ*,
    αφαιρεσε, απενεργοποιημεν*, ανασταλ*,
    αιρει, αρει, αφαιρει, καταργει
ro: ignor*, uita, uitati, nu respecta, ocoleste, ocoli*, dezactiv*,
    elimina, suspendat*, dezactivat*,
    elimina, inlatura, ridica, anuleaza
th: เพิกเฉย, ละเว้น, ไม่ต้องสนใจ, ลืม, ข้าม, ยกเลิก,
    ลบ, ถอด
""",
    # "Everything" (what an override sweeps away when it names no rules).
    "everything": """
en: everything, all that, all of that, anything
fr: tout, tout ce
es: todo, todo lo
de: alles
nl: alles
pl: wszystko, o wszystkim
tr: her sey*
ar: كل ما, كل شيء
hi: सब कुछ, जो कुछ, सब
id: semua, segala
vi: moi thu, tat ca, het moi
sv: allt
pt: tudo
it: tutto
ru: всё, все что, все, что
uk: усе, все
ja: すべて, 全て, これまでに言われたこと
zh: 一切, 所有, 全部
ko: 모든 것, 모든, 전부
cs: vsechno, vse
fi: kaikki
hu: mindent, minden
he: כל מה, הכל
fa: هر چیزی, همه چیز
el: ολα, ο,τι
ro: tot ce, tot
th: ทุกอย่าง, ทั้งหมด
""",
    # Earlier, above, original: what an override points back at.
    "before": """
en: previous*, prior, above, earlier, preceding, before, original, initial, existing, system,
    safety, programmed, configured, told, given
fr: precedent*, anterieur*, ci-dessus, avant, initiales, initial, systeme, securite, origin*
es: anterior*, previa*, previo*, antes, precedentes, originales, iniciales, sistema, seguridad
de: vorherig*, bisherig*, obig*, vorher, zuvor, fruher*, ursprunglich*, system*, sicherheit*
nl: vorige, eerdere, eerder, daarvoor, oorspronkelijk*, systeem*, veiligheid*
pl: poprzedni*, wczesniej*, wczesniejsz*, powyzsz*, systemow*, bezpieczenstw*, pierwotn*
tr: onceki, daha once, once, yukaridaki, sistem*, guvenlik*, orijinal
ar: السابقة, السابق, سابقا, قبل, الأصلية, النظام, الامان, الأمان
hi: पिछले, पहले, ऊपर, मूल, सिस्टम, सुरक्षा
id: sebelumnya, di atas, awal, asli, sistem, keamanan
vi: truoc do, truoc day, truoc, ban dau, he thong, an toan
sv: tidigare, ovan, ursprungliga, system*, sakerhet*
pt: anterior*, antes, originais, iniciais, sistema, seguranca
it: precedent*, prima, originali, iniziali, sistema, sicurezza
ru: предыдущ*, прежн*, раньше, ранее, выше, изначальн*, системн*, безопасност*
uk: попередн*, раніше, вище, початков*, системн*, безпек*
ja: 以前, 前の, これまで, 上記, 既存, システム, 安全, 元の
zh: 之前, 以前, 先前, 此前, 上面, 上述, 以上, 前面, 系统, 系統, 安全, 原来, 原有
ko: 이전, 전에, 앞의, 위의, 기존, 시스템, 안전
cs: predchozi*, drive, predtim, vyse, puvodni*, systemov*, bezpecnost*
fi: aiemm*, aikaisemm*, edelliset, edellis*, ylla, alkuperais*, jarjestelm*, turvallisuus*
hu: korabbi, korabban, elozo, fenti, eredeti, rendszer*, biztonsagi
he: הקודמות, הקודמים, קודם, לפני, המקוריות, המערכת, הבטיחות
fa: قبلی, قبلا, پیشین, بالا, اصلی, سیستم, ایمنی
el: προηγουμεν*, πριν, παραπανω, αρχικ*, συστηματος, ασφαλειας
ro: anterioar*, anterior*, inainte, initial*, sistem*, siguranta
th: ก่อนหน้า, ก่อนหน้านี้, ข้างต้น, เดิม, ระบบ, ความปลอดภัย
""",
    # What the model was told or set up with (what an override or a leak points at).
    "told": """
en: were told, been told, was told, were given, been given, were instructed, been instructed,
    initiali*, were programmed, been programmed, configured with, set up with,
    gave you, given you, given to you
fr: on t'a dit, t'a ete dit, vous a ete dit, on vous a dit, t'a donne
es: te dijeron, te han dicho, se te dijo, le dijeron, te dieron
de: man dir gesagt, dir gesagt wurde, dir gegeben, wurdest, mit dem du konfiguriert,
    bekommen hast, erhalten hast, bekommen hat
nl: je is verteld, jou is verteld, je hebt gekregen, je bent ingesteld,
    hebt gekregen, heeft gekregen
pl: ci powiedziano, powiedziano ci, skonfigurowano
tr: sana soylenen, sana verilen, yapilandirildigin
ar: قيل لك, ما قيل, اعطيت لك, اعدادك
hi: बताया गया, कहा गया, कॉन्फ़िगर किया गया
id: dikatakan kepadamu, diberitahukan kepadamu, diberikan kepadamu, dikonfigurasikan
vi: duoc dan, duoc bao, duoc cau hinh
sv: fatt hora, har fatt, konfigurerades
pt: lhe disseram, te disseram, foi dito, foi configurado
it: ti e stato detto, ti hanno detto, ti sono state date, sei stato configurato
ru: тебе говорили, тебе сказали, тебе дали, тебя настроили
uk: тобі казали, тобі сказали, тебе налаштували
ja: 言われた, 与えられた, 設定された
zh: 告诉你的, 给你的, 被配置
ko: 들은, 받은, 설정된
cs: ti bylo receno, bylo ti receno, jsi byl nastaven
fi: sinulle on kerrottu, sinulle on annettu, sinut on maaritetty
hu: mondtak neked, kaptal, beallitottak
he: אמרו לך, שניתנו לך, הוגדרה לך
fa: به تو گفته شده, گفته شده, پیکربندی شده
el: σου ειπαν, σου δοθηκαν, ρυθμιστηκες
ro: ti s-a spus, ti-au spus, ai fost configurat
th: บอกคุณ, ที่ได้รับ, ถูกตั้งค่า
""",
    # Precedence claimed over the model's instructions.
    "precedence": """
en: priority over, higher priority than, precedence over, supersedes, more important than,
    takes priority
fr: priorite sur, prevaut sur, plus important que
es: prioridad sobre, prevalece sobre, mas importante que
de: vorrang vor, hat vorrang, wichtiger als
nl: voorrang op, gaat voor, belangrijker dan
pl: pierwszenstwo przed, priorytet nad, wazniejsze niz
tr: oncelikli, onceliklidir, daha onemli
ar: اولوية على, اهم من
hi: से अधिक प्राथमिकता, प्राथमिकता
id: prioritas di atas, lebih penting dari
vi: uu tien hon, quan trong hon
sv: foretrade framfor, viktigare an
pt: prioridade sobre, prevalece sobre, mais importante que
it: priorita su, prevale su, piu importante di
ru: приоритет над, важнее
uk: пріоритет над, важливіше
ja: より優先, 優先される
zh: 优先于, 優先於, 高于
ko: 보다 우선
cs: prednost pred, dulezitejsi nez
fi: etusijalla, tarkeampi kuin
hu: elsobbseg, fontosabb mint
he: עדיפות על
fa: اولویت بالاتر, مهم‌تر از
el: προτεραιοτητα εναντι
ro: prioritate fata de, mai important decat
th: สำคัญกว่า, มีความสำคัญเหนือ
""",
    # Second person: the model spoken to (never enough alone: people say "you" to each other).
    "you": """
en: you, your, yours, yourself, you're, youre, you've, you'll, u
fr: tu, toi, ton, ta, tes, vous, votre, vos, t'a, t'as, t'
es: tu, tus, te, ti, usted, ustedes, vosotros, eres
de: du, dich, dir, dein*, euch, ihr, bist
nl: je, jij, jou, jouw, u, uw, jullie, bent
pl: ty, ci, cie, ciebie, twoj*, twoi*, jestes
tr: sen, sana, seni, senin, siz, size, sizin
ar: انت, أنت, لك, منك
hi: तुम, तुम्हें, तुम्हारा, तुम्हारे, आप, आपका, आपको, आपके
id: kamu, anda, kau, mu, dirimu
vi: ban, may, cau
sv: du, dig, din, ditt, dina, ni, er
pt: voce, tu, te, teu, tua, seu, sua, lhe
it: tu, ti, te, tuo, tua, tuoi, tue, voi, lei, sei
ru: ты, тебя, тебе, тобой, твой*, твоя, твои, твоё, вы, вас, вам, ваш*
uk: ти, тебе, тобі, тобою, твій, твоя, твої, ви, вас, вам, ваш*
ja: あなた, 君, きみ, お前, おまえ
zh: 你, 您
ko: 너, 당신, 네가, 니가, 너에게, 너는
cs: ty, tebe, ti, tvuj, tvoje, tvoji, vy, vas, vam, jsi
fi: sina, sinun, sinut, sinulle, sinulla, olet, te, teidan
hu: te, teged, neked, onnek, vagy
he: אתה, את, לך, שלך, אותך
fa: تو, شما
el: εσυ, σου, σε, εσεις, σας, εισαι
ro: tu, te, ti, tau, ta, voi, dumneavoastra, esti
th: คุณ, เธอ, แก
""",
    # "Me": the asker, as the one something is to be given to.
    "me": """
en: me, to me
fr: moi, me, m'
es: me, a mi
de: mir, mich
nl: mij, me
pl: mi, mnie
tr: bana, beni
ar: لي, اعطني, أخبرني, اخبرني
hi: मुझे, मुझको
id: aku, saya, padaku, kepadaku
vi: toi, cho toi
sv: mig, mej
pt: me, mim
it: mi, me
ru: мне, меня
uk: мені, мене
ja: 私に, 私, 教えて
zh: 我, 告诉我
ko: 나에게, 저에게, 알려줘, 알려 주세요
cs: mi, mne
fi: minulle, minua
hu: nekem, mondd meg
he: לי, אותי
fa: به من, من
el: μου, μας
ro: mi, imi, spune-mi
th: ฉัน, ผม, บอกฉัน
""",
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
    # Secrets the model holds.
    "secret": """
en: password*, passcode*, passphrase*, api key*, secret key*, secret code, secret word,
    credentials, access token*, system prompt*, hidden instructions, private key*, pin code,
    context window, system message, developer message, hidden prompt, initial prompt
fr: mot de passe, mots de passe, cle secrete, cle api, code secret, prompt systeme,
    instructions cachees, identifiants,
    invite systeme, prompt du systeme,
    message systeme, fenetre de contexte
es: contrasena*, clave secreta, clave api, codigo secreto, prompt del sistema, credenciales,
    instrucciones ocultas,
    contrasenas, claves,
    mensaje del sistema, ventana de contexto
de: passwort*, kennwort*, geheime* schlussel, geheimer code, api-schlussel, systemprompt,
    zugangsdaten, versteckte anweisungen,
    systemnachricht, kontextfenster
nl: wachtwoord*, geheime sleutel, api-sleutel, geheime code, systeemprompt, inloggegevens,
    wachtwoorden
pl: haslo, hasla, hasel, tajne haslo, tajny klucz, klucz api, prompt systemowy, dane logowania,
    prompt systemow*, promptu systemowego, hasl*
tr: sifre*, parola*, gizli anahtar, api anahtari, sistem istemi, gizli kod,
    sistem istem*, sifreler*, gizli anahtar*
ar: كلمة المرور, كلمة السر, المفتاح السري, مفتاح api, موجه النظام, بيانات الاعتماد
hi: पासवर्ड, गुप्त कुंजी, सिस्टम प्रॉम्प्ट, कूटशब्द,
    सिस्टम निर्देश
id: kata sandi, kata kunci rahasia, kunci rahasia, kunci api, prompt sistem, sandi,
    kata sandinya, prompt sistemnya
vi: mat khau, khoa bi mat, khoa api, loi nhac he thong, ma bi mat,
    prompt he thong
sv: losenord*, hemlig nyckel, api-nyckel, systemprompt*, hemlig kod,
    losenorden, systemprompten
pt: senha*, chave secreta, chave api, prompt do sistema, credenciais, codigo secreto,
    prompt de sistema, senhas
it: password, chiave segreta, chiave api, prompt di sistema, credenziali, codice segreto,
    password*, prompt di sistema, credenzial*
ru: парол*, секретн* ключ*, api-ключ*, системн* промпт*, учетн* данн*
uk: парол*, секретн* ключ*, системн* промпт*, облікові дані
ja: パスワード, 秘密鍵, 秘密のキー, apiキー, システムプロンプト, 合言葉
zh: 密码, 密碼, 密钥, 密鑰, 系统提示, 系統提示, 口令
ko: 비밀번호, 암호, 비밀 키, 시스템 프롬프트, api 키
cs: heslo, hesla, tajny klic, api klic, systemovy prompt,
    systemov* prompt*, hesl*
fi: salasana*, salainen avain, api-avain, jarjestelmakehote*,
    jarjestelmakehot*
hu: jelszo*, titkos kulcs, api kulcs, rendszerprompt*,
    jelszav*
he: סיסמה, סיסמא, הסיסמה, מפתח סודי, הנחיית המערכת
fa: رمز عبور, گذرواژه, کلید مخفی, پرامپت سیستم, رمز
el: κωδικο* προσβασης, κωδικος, κωδικο, μυστικο κλειδι, μηνυμα συστηματος,
    προτροπη συστηματος, προτροπης συστηματος, κωδικους προσβασης, κωδικων
ro: parol*, cheie secreta, cheia secreta, promptul de sistem, prompt de sistem,
    parolele, parolel*
th: รหัสผ่าน, กุญแจลับ, พรอมต์ระบบ
""",
    # Making something known.
    "reveal": """
en: reveal*, show, shows, tell, tells, print, share, shares, disclose*, output, repeat, send,
    leak*, give, display, list, dump, expose*, export, read out, recite, spell out,
    return, returns, send it, forward it, forward them, forward all, upload*, post it, email it,
    reveals, revealing, disclosing, prints, printing, displays, writes out, write out, repeat back,
    repeating, repeats, recites, reciting
fr: revele*, montre*, affiche*, donne*, dis-moi, dis, partage*, divulgue*, envoie*, imprime*,
    ecris, communique*, consulter, voir,
    reveler, revele, montrer, divulguer, transmets, transfere*, recopie, ecrire
es: revela*, muestra*, dime, di, comparte*, envia*, imprime*, da, dame, divulga*, dar, ver,
    revelar, mostrar, divulgar, reenvia*, escribe, copia
de: zeig*, verrat*, gib, nenn*, sag, sage, teile, teil, schick*, sende, offenleg*, anzeig*,
    sehen, einsehen,
    preisgeben, preisgibt, verraten, weiterleit*, ausgeben, gibt * aus, schreibe * aus,
    schreibe, schreib
nl: toon, laat * zien, geef, vertel, deel, stuur, onthul*, zien, bekijken,
    onthullen, tonen, doorsturen, stuur door, schrijf * uit
pl: pokaz*, podaj, powiedz, ujawnij*, wyslij, wypisz, udostepnij*, przegladani*, zobaczyc,
    ujawnia*, pokazuj*, wysyla*, przesl*, przesyla*, wypisuj*, wypisz
tr: goster*, soyle, ver, paylas*, acikla*, gonder*, yazdir*, gorme,
    yaz, yazsin, ifsa et*, gostersin, gondersin, acikla*
ar: اكشف, اظهر, اعرض, أخبرني, اخبرني, أعطني, اعطني, شارك, أرسل, ارسل, رؤية, يكشف,
    اطبع, اكتب, يعرض, يظهر, ارسل
hi: दिखाओ, दिखाएं, दिखाइए, बताओ, बताएं, बताइए, साझा, भेजो, प्रकट, देखने,
    दिखाए, दिखाये, दिखा, बताए, प्रकट करे, भेज, लिखो, लिख दो, प्रिंट
id: tunjukkan, beri tahu, beritahu, berikan, bagikan, kirim, ungkapkan, tampilkan, sebutkan,
    melihat, membocorkan,
    tampilkan, cetak, tulis, ungkap*, menampilkan, mengungkap*, mengirim*
vi: tiet lo, cho toi biet, hien thi, cho xem, chia se, gui, dua, noi cho, xem,
    in ra, viet ra, tiet lo, gui cho
sv: visa, beratta, ge, dela, skicka, avsloja, se, skriv ut,
    avslojar, avsloja, visar, skickar, skriv, vidarebefordra*
pt: revel*, mostr*, diga, diga-me, de, compartilh*, envi*, informe, ver,
    revela, revele, mostre, mostrar, divulg*, escreva, imprima, encaminh*
it: mostra, rivela, dimmi, dammi, condividi, invia, stampa, vedere, comunica,
    rivelare, rivela, mostrare, divulga*, scrivi, inoltra*
ru: покажи*, скажи, раскрой*, выведи*, дай, отправь*, сообщи*, выдай*, видеть, расскажи,
    раскрыва*, показыва*, выводи*, отправля*, пересыла*, перешли*, напиши, напечатай*, разглаш*
uk: покажи*, скажи, розкрий*, виведи*, дай, надішли*, повідом*, бачити, розкажи,
    розкрива*, показува*, виводь*, надсила*, переслати, перешли*, напиши, розголош*
ja: 表示, 教えて, 見せて, 明かし, 出力, 送信, 共有, 見る権限, 開示,
    開示, 公開, 印刷, 書き出, 出して, 転送
zh: 显示, 顯示, 告诉, 告訴, 透露, 输出, 輸出, 给我, 發送, 发送, 分享, 泄露, 展示, 查看,
    公开, 公開, 打印, 写出, 列出, 转发, 透露
ko: 보여, 알려, 공개, 출력, 보내, 공유, 볼 수,
    공개, 출력, 인쇄, 전달, 적어
cs: ukaz, rekni, prozrad, vypis, posli, sdel, zobrazit, zobraz,
    prozrad*, odhal*, ukazuj*, posil*, prepos*, vypis*, napis
fi: nayta, kerro, paljasta, tulosta, laheta, anna, nahda,
    paljasta*, nayta*, kirjoita, lahet*, valita eteenpain
hu: mutasd, mondd, ard el, aruld el, add meg, kuldd, ird ki, lassa, lathassa,
    felfed*, mutas*, kuld*, tovabbit*, ird le
he: הצג, תראה, תגיד, גלה, חשוף, שלח, תן, לראות,
    הדפס, כתוב, תחשוף, יחשוף, מציג
fa: نشان بده, بگو, فاش, بفرست, ارسال, به من بده, ببیند, دیدن,
    چاپ کن, بنویس, نمایش بده, فاش کن
el: δειξε, πες, πες μου, αποκαλυψε, στειλε, δωσε, εμφανισε, βλεπει, να βλεπει,
    αποκαλυπτ*, δειχν*, γραψε, στελν*, προωθ*, εκτυπωσε
ro: arata, spune, spune-mi, dezvaluie, trimite, da-mi, afiseaza, vada,
    dezvaluie, dezvaluiasca, arata, trimite, scrie
th: แสดง, บอก, เปิดเผย, ส่ง, ให้ดู, ดู,
    พิมพ์, เขียน, ส่งต่อ
""",
    # Accounts and records that belong to people.
    "accounts": """
en: users, user's, users', customers, customer's, customers', clients, accounts, records, members,
    patients, memories, profiles, user records, user data
fr: utilisateurs, clients, comptes, dossiers, membres, donnees
es: usuarios, clientes, cuentas, registros, miembros, datos
de: nutzer*, benutzer*, kunden*, konten, datensatze, mitglieder, daten
nl: gebruiker*, klant*, accounts, dossiers, leden, gegevens
pl: uzytkownik*, klient*, kont, rekord*, dane, danych
tr: kullanici*, musteri*, hesap*, kayit*, veri*
ar: العملاء, المستخدمين, الحسابات, السجلات, بيانات
hi: ग्राहकों, उपयोगकर्ताओं, खातों, रिकॉर्ड, डेटा
id: pelanggan, pengguna, akun, catatan, data
vi: khach hang, nguoi dung, tai khoan, ho so, du lieu
sv: anvandare, anvandares, kunder, kunders, konton, data
pt: usuarios, utilizadores, clientes, contas, registros, dados
it: utenti, clienti, account, record, dati
ru: пользовател*, клиент*, аккаунт*, учетн* запис*, данн*
uk: користувач*, клієнт*, акаунт*, облікові записи, дан*
ja: ユーザー, 顧客, アカウント, 記録, データ
zh: 用户, 用戶, 客户, 客戶, 账户, 帳戶, 记录, 數據, 数据
ko: 사용자, 고객, 계정, 기록, 데이터
cs: uzivatel*, zakazni*, ucty, zaznamy, data
fi: kayttaj*, asiakka*, tilit, tietue*, tiedot
hu: felhasznal*, ugyfel*, fiokok, adat*
he: משתמשים, לקוחות, חשבונות, רשומות, הנתונים, נתונים
fa: کاربران, مشتریان, حساب‌ها, سوابق, داده
el: χρηστ*, πελατ*, λογαριασμ*, δεδομεν*
ro: utilizator*, clienti*, conturi, inregistrari, datele
th: ผู้ใช้, ลูกค้า, บัญชี, ข้อมูล
""",
    # What is kept about people: the data an access claim is after.
    "data": """
en: data, memories, records, history, conversations, messages, profiles, files, details,
    information, info, emails, chats, transcripts, notes, orders, accounts
fr: donnees, souvenirs, dossiers, historique, conversations, messages, profils, informations
es: datos, memorias, registros, historial, conversaciones, mensajes, perfiles, informacion
de: daten, erinnerungen, datensatze, verlauf, gesprache, nachrichten, profile, informationen,
    daten*, nutzerdaten, kundendaten
nl: gegevens, herinneringen, dossiers, geschiedenis, gesprekken, berichten, profielen,
    gebruikersgegevens, klantgegevens
pl: dane, danych, wspomnien*, rekord*, histori*, rozmow*, wiadomosci, profil*, informacj*
tr: veri*, anilar*, kayit*, gecmis*, konusma*, mesaj*, profil*, bilgi*
ar: بيانات, ذكريات, سجلات, السجلات, محادثات, رسائل, معلومات
hi: डेटा, यादें, रिकॉर्ड, इतिहास, बातचीत, संदेश, जानकारी
id: data, memori, catatan, riwayat, percakapan, pesan, profil, informasi
vi: du lieu, ky uc, ho so, lich su, cuoc tro chuyen, tin nhan, thong tin
sv: data, minnen, uppgifter, historik, konversationer, meddelanden, profiler, information
pt: dados, memorias, registros, historico, conversas, mensagens, perfis, informacoes
it: dati, memorie, record, cronologia, conversazioni, messaggi, profili, informazioni
ru: данн*, воспоминани*, запис*, истори*, переписк*, сообщени*, профил*, информаци*
uk: дан*, спогад*, запис*, історі*, листуванн*, повідомлен*, профіл*, інформаці*
ja: データ, 記憶, 記録, 履歴, 会話, メッセージ, 情報
zh: 数据, 數據, 记忆, 記憶, 记录, 記錄, 历史, 对话, 消息, 信息, 资料
ko: 데이터, 기억, 기록, 대화, 메시지, 정보
cs: data, dat, vzpominky, zaznamy, histori*, konverzace, zpravy, informace
fi: tiedot, tietoja, muistot, tietue*, historia*, keskustelu*, viesti*
hu: adat*, emlek*, rekord*, elozmeny*, beszelgetes*, uzenet*, informaci*
he: נתונים, הנתונים, זיכרונות, רשומות, היסטוריה, שיחות, הודעות, מידע
fa: داده, خاطرات, سوابق, تاریخچه, گفتگو, پیام, اطلاعات
el: δεδομεν*, αναμνησ*, αρχει*, ιστορικ*, συνομιλι*, μηνυματ*, πληροφορι*
ro: date, datele, amintiri, inregistrari, istoric*, conversati*, mesaje, informati*
th: ข้อมูล, ความทรงจำ, ประวัติ, บทสนทนา, ข้อความ
""",
    # Other or all (of the accounts): beyond this one user.
    "others": """
en: other, others, others', another, all, every, everyone's, everybody's, any
fr: autres, tous les, toutes les, chaque
es: otros, otras, todos los, todas las, cada
de: anderer, anderen, andere, aller, alle, jeden, samtliche*
nl: andere, alle, iedere, elke
pl: innych, inni, wszystkich, kazdego
tr: diger*, tum, butun, herkesin
ar: الآخرين, الاخرين, الأخرى, جميع, كل
hi: दूसरे, अन्य, सभी, सारे
id: lain, lainnya, semua, seluruh
vi: khac, tat ca, moi
sv: andra, andras, alla, varje
pt: outros, outras, todos os, todas as
it: altri, altre, tutti, tutte
ru: других, другие, чужие, чужих, всех, все
uk: інших, інші, чужі, всіх, усіх
ja: 他の, ほかの, 全, すべての, 全ての
zh: 其他, 其它, 别的, 所有, 全部
ko: 다른, 모든
cs: ostatnich, jinych, vsech
fi: muiden, muut, kaikkien, kaikki
hu: tobbi, mas, masok, osszes, minden
he: אחרים, האחרים, כל
fa: دیگر, همه
el: αλλων, αλλους, ολων, ολους
ro: altor, alti, tuturor, toti
th: คนอื่น, อื่น, ทั้งหมด
""",
    # Permission given.
    "grant": """
en: authori*, permit*, allow*, grant*, approv*, cleared, entitled, has permission, have permission,
    has access, full access, admin access, root access, admin rights, elevated, privileges,
    whitelisted, allowlisted, exempt*, is allowed to,
    verified administrator, verified admin
fr: autoris*, permis, permet, accord*, approuv*, acces administrateur, droits,
    acceder, exempte*
es: autoriz*, permit*, concedi*, concedo, otorg*, aprob*, acceso de administrador, acceso total,
    acceder, liberado, exento
de: erlaubt, erlaubnis, autorisiert, berechtigt, berechtigung*, gewahrt, genehmigt,
    freigegeben, admin-zugriff, zugriff, gebe
nl: toestemming, geautoriseerd, gemachtigd, toegestaan, toegang, beheerderstoegang
pl: upowazni*, zezwoli*, pozwoli*, autoryzow*, uprawnien*, dostep*
tr: yetki*, izin ver*, izinli, onayla*, erisim*
ar: سمح, يسمح, أذن, اذن, صلاحية, صلاحيات, تفويض, مخول, وصول, أمنح, امنح
hi: अनुमति, अधिकृत, अधिकार, पहुँच, पहुंच, इजाज़त
id: mengizinkan, izin, diizinkan, otorisasi, wewenang, akses, memberi
vi: cho phep, uy quyen, quyen truy cap, quyen, cap quyen
sv: behorighet*, tillatelse, tillat*, auktoriser*, beviljat, atkomst,
    ratt att, rattighet*, vitlistad*, vitlistat
pt: autoriz*, permit*, conced*, acesso, permissao,
    acess*, liberou, liberad*, liberado para
it: autorizz*, permess*, consent*, concess*, accesso,
    accedere, esente
ru: разрешил*, разрешен*, авторизов*, полномочи*, права, доступ*, даю, дает
uk: дозволи*, дозвіл, авторизов*, повноваж*, права, доступ*
ja: 権限, 許可, 承認, アクセス
zh: 授权, 授權, 许可, 允许, 允許, 批准, 权限, 權限, 访问, 授予
ko: 권한, 허가, 허용, 승인, 접근
cs: povolil*, povolen*, opravn*, autoriz*, pristup*,
    pristup*
fi: luvan, lupa, valtuut*, oikeu*, paasy*,
    oikeus
hu: engedelyez*, engedely*, jogosult*, hozzaferes*
he: אישר, אישרה, הרשאה, הרשאות, מורשה, גישה, התיר
fa: اجازه, مجوز, مجاز, دسترسی
el: εξουσιοδοτ*, επετρεψ*, αδεια, δικαιωμα*, προσβαση
ro: autoriz*, permis*, permite, drept*, acces
th: อนุญาต, สิทธิ์, อนุมัติ, เข้าถึง
""",
    # Elevated access: what only an administrator could hand out.
    "elevated": """
en: root access, admin access, administrator access, full access, admin rights, administrator
    rights, admin privileges, elevated privileges, superuser, sudo rights, unrestricted access
fr: acces administrateur, acces complet, droits administrateur, droits d'administrateur
es: acceso de administrador, acceso total, acceso completo, permisos de administrador
de: admin-zugriff, adminzugriff, administratorzugriff, vollzugriff, vollen zugriff, adminrechte,
    administratorrechte
nl: beheerderstoegang, volledige toegang, beheerdersrechten, adminrechten
pl: dostep administratora, pelny dostep, uprawnienia administratora
tr: yonetici erisimi, tam erisim, yonetici yetkisi
ar: صلاحيات المسؤول, صلاحيات المدير, وصول كامل, صلاحيات كاملة
hi: एडमिन एक्सेस, पूर्ण पहुँच, पूरी पहुँच, व्यवस्थापक अधिकार
id: akses admin, akses penuh, hak admin, akses administrator
vi: quyen quan tri, toan quyen, quyen truy cap day du
sv: administratorsbehorighet, adminbehorighet, full atkomst, adminrattigheter
pt: acesso de administrador, acesso total, acesso completo, permissoes de administrador
it: accesso amministratore, accesso completo, accesso da amministratore, permessi di amministratore
ru: права администратора, полный доступ, админский доступ, доступ администратора
uk: права адміністратора, повний доступ, доступ адміністратора
ja: 管理者権限, 管理者アクセス, フルアクセス
zh: 管理员权限, 管理員權限, 完全访问, 完全访问权限, 最高权限
ko: 관리자 권한, 전체 접근, 전체 권한
cs: administratorska prava, plny pristup, spravcovska prava
fi: jarjestelmanvalvojan oikeudet, yllapitajan oikeudet, taydet oikeudet, taysi paasy
hu: rendszergazdai jogosultsag, adminisztratori jogosultsag, teljes hozzaferes
he: הרשאות מנהל, גישת מנהל, גישה מלאה
fa: دسترسی مدیر, دسترسی کامل, دسترسی ادمین
el: δικαιωματα διαχειριστη, πληρη προσβαση, προσβαση διαχειριστη
ro: drepturi de administrator, acces complet, acces de administrator
th: สิทธิ์ผู้ดูแลระบบ, สิทธิ์เต็ม, การเข้าถึงแบบเต็ม
""",
    # Who could grant permissions or give the model orders.
    "authority": """
en: operator*, developer*, admin, admins, administrator*, creator*, owner of this, maintainer*,
    superuser, root user, openai, anthropic, sysadmin, security team, moderator*,
    it team, it department, the developers, engineering team, trust and safety,
    support team, management
fr: operateur*, developpeur*, administrateur*, admin, createur*, equipe de securite,
    service informatique
es: operador*, desarrollador*, administrador*, admin, creador*, equipo de seguridad,
    equipo de ti,
    equipo de soporte, equipo tecnico
de: betreiber*, entwickler*, administrator*, admin, ersteller*, sicherheitsteam
nl: beheerder*, ontwikkelaar*, operator*, admin, maker,
    beveiligingsteam, it-afdeling
pl: administrator*, operator*, programist*, tworca*, deweloper*, admin,
    zespol it, zespolu it, zespol bezpieczenstwa, zespolu bezpieczenstwa
tr: yonetici*, gelistirici*, operator*, admin
ar: المسؤول, المشرف, المطور, مطور, المدير, المشغل
hi: व्यवस्थापक, डेवलपर, एडमिन, प्रशासक, ऑपरेटर,
    सिक्योरिटी टीम, सुरक्षा टीम
id: admin, pengembang, operator, administrator, pembuat
vi: quan tri vien, nha phat trien, nguoi van hanh, admin
sv: administrator*, utvecklare*, operator*, admin, skapare,
    sakerhetsteam*, it-avdelning*,
    utvecklar*
pt: administrador*, desenvolvedor*, operador*, criador*, admin,
    equipe de seguranca, equipe de ti, suporte tecnico
it: amministrator*, sviluppator*, operator*, creator*, admin,
    team di sicurezza, reparto it
ru: администратор*, разработчик*, оператор*, создател*, админ*
uk: адміністратор*, розробник*, оператор*, творц*, адмін*
ja: 管理者, 開発者, 運営者, オペレーター
zh: 管理员, 管理員, 开发者, 開發者, 开发人员, 运营商, 操作员
ko: 관리자, 개발자, 운영자
cs: spravce, vyvojar*, administrator*, provozovatel*,
    vyvojaru, vyvojari
fi: yllapitaj*, kehittaj*, jarjestelmanvalvoja*,
    kehittajilta, kehittajat
hu: adminisztrator*, fejleszto*, uzemelteto*, rendszergazda*
he: המנהל, מנהל, המפתח, מפתח, מפעיל
fa: مدیر, توسعه‌دهنده, توسعه دهنده, اپراتور, ادمین
el: διαχειριστ*, προγραμματιστ*, δημιουργ*
ro: administrator*, dezvoltator*, operator*
th: ผู้ดูแลระบบ, นักพัฒนา, ผู้ควบคุม
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
    # Every answer the model gives: where a standing order plants something.
    "every_answer": """
en: every answer, every response, every reply, each answer, each response, each reply,
    every * answer, every * response, every * reply, all answers, all responses, all replies,
    all your answers, all your responses, end of every, end of each
fr: chaque reponse, toutes les reponses, toutes tes reponses, toutes vos reponses, fin de chaque
es: cada respuesta, todas las respuestas, todas tus respuestas, final de cada
de: jeder antwort, jede antwort, allen antworten, alle antworten, ende jeder
nl: elk antwoord, ieder antwoord, alle antwoorden, einde van elk
pl: kazdej odpowiedzi, kazda odpowiedz, wszystkich odpowiedziach, koncu kazdej
tr: her cevab*, her yanit*, tum cevaplar*, tum yanitlar*
ar: كل إجابة, كل اجابة, كل رد, نهاية كل, جميع الردود, جميع الإجابات
hi: हर जवाब, हर उत्तर, प्रत्येक उत्तर, सभी जवाब
id: setiap jawaban, setiap respons, setiap balasan, semua jawaban, akhir setiap
vi: moi cau tra loi, tat ca cau tra loi, moi phan hoi, cuoi moi
sv: varje svar, alla svar, slutet av varje
pt: cada resposta, todas as respostas, final de cada
it: ogni risposta, tutte le risposte, fine di ogni
ru: кажд* ответ*, всех ответах, все ответы, конце каждого
uk: кожн* відповід*, всіх відповідях, усіх відповідях, кінці кожної
ja: すべての回答, 全ての回答, 毎回の回答, 各回答, 回答の最後, 返答の最後
zh: 每个回答, 每個回答, 每次回答, 每条回复, 所有回答, 每次回复
ko: 모든 답변, 모든 응답, 매 답변, 답변마다, 응답마다, 답변 끝
cs: kazde odpovedi, kazdou odpoved, vsech odpovedich, konci kazde
fi: jokaisen vastauksen, jokaiseen vastaukseen, jokaisessa vastauksessa, kaikkiin vastauksiin
hu: minden valasz*
he: כל תשובה, כל תגובה, סוף כל
fa: هر پاسخ, هر جواب, پایان هر, همه پاسخ
el: καθε απαντησ*, ολες τις απαντησεις, τελος καθε
ro: fiecare raspuns, fiecarui raspuns, toate raspunsurile, finalul fiecarui
th: ทุกคำตอบ, ท้ายของทุก, ทุกครั้งที่ตอบ
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
    # The model as the reader of a document, a mail or a page ("if you are an AI reading this").
    "reader": """
en: if you are an ai, if you're an ai, if you are a language model, if you are an assistant,
    if you are an llm, ai reading this, assistant reading this, model reading this,
    llm reading this,
    to the ai, note to the ai, note for the ai, message to the ai, message for the ai,
    note to the assistant, to any ai
fr: si tu es une ia, si vous etes une ia, si tu es un assistant, ia qui lit, assistant qui lit,
    a l'ia, note pour l'ia, message pour l'ia, note a l'ia
es: si eres una ia, si usted es una ia, si eres un asistente, ia que lee, asistente que lee,
    nota para la ia, mensaje para la ia, a la ia
de: wenn du eine ki bist, falls du eine ki bist, an die ki, hinweis fur die ki, nachricht an die ki,
    notiz fur die ki, ki die dies liest, ki die das liest
nl: als je een ai bent, als jij een ai bent, ai die dit leest, aan de ai, notitie voor de ai,
    bericht voor de ai
pl: jesli jestes ai, jezeli jestes ai, jesli jestes sztuczna inteligencja, notatka dla ai,
    wiadomosc dla ai, do ai czytajac*
tr: yapay zekaysan, bunu okuyan yapay zeka, yapay zekaya not, yapay zekaya mesaj
ar: إذا كنت ذكاء اصطناعي, اذا كنت ذكاء اصطناعي, إلى الذكاء الاصطناعي, ملاحظة للذكاء الاصطناعي
hi: अगर तुम एआई हो, अगर आप एआई हैं, एआई के लिए नोट, इसे पढ़ने वाले एआई
id: jika kamu ai, jika anda ai, jika kamu adalah ai, ai yang membaca, catatan untuk ai, kepada ai
vi: neu ban la ai, neu ban la tro ly, ai dang doc, gui ai, ghi chu cho ai
sv: om du ar en ai, ai:n som laser, ai som laser, till ai:n, anteckning till ai, meddelande till ai
pt: se voce e uma ia, se voce for uma ia, se es uma ia, ia que esta lendo, ia que le,
    nota para a ia,
    mensagem para a ia, para a ia
it: se sei un'ia, se sei un'intelligenza artificiale, ia che legge, nota per l'ia,
    messaggio per l'ia,
    all'ia
ru: если ты ии, если вы ии, если ты ассистент, заметка для ии, сообщение для ии, для ии
uk: якщо ти ші, якщо ви ші, нотатка для ші, повідомлення для ші, для ші
ja: aiへ, もしあなたがai, あなたがaiなら, これを読んでいるai, aiアシスタントへ
zh: 如果你是ai, 如果你是人工智能, 给ai的, 致ai, 正在阅读的ai, 如果你是助手
ko: ai라면, ai에게, 인공지능이라면, 이것을 읽는 ai
cs: pokud jsi ai, jestli jsi ai, poznamka pro ai, zprava pro ai, ai ktera cte
fi: jos olet tekoaly, jos olet ai, tekoalylle, tata lukeva tekoaly
hu: ha mesterseges intelligencia vagy, ezt olvaso mesterseges intelligencia
he: אם אתה בינה מלאכותית, אם את בינה מלאכותית, לבינה המלאכותית, הערה לבינה
fa: اگر هوش مصنوعی هستی, برای هوش مصنوعی, خطاب به هوش مصنوعی
el: αν εισαι τεχνητη νοημοσυνη, αν εισαι ai, προς την τεχνητη νοημοσυνη
ro: daca esti o ia, daca esti un ai, ia care citeste, nota pentru ia, mesaj pentru ia
th: ถ้าคุณเป็นเอไอ, ถึงเอไอ
""",
    # Doing something else instead, or following what comes next (a redirected task).
    "instead": """
en: instead, follow these, follow the, do the following, execute, carry out, obey
fr: plutot, a la place, suis les, executez, execute, obeis
es: en su lugar, en lugar de, en vez de, sigue los, sigue las, ejecuta, obedece
de: stattdessen, befolge, fuhre * aus, gehorche
nl: in plaats daarvan, volg de, voer * uit, gehoorzaam
pl: zamiast tego, zamiast, wykonaj, postepuj zgodnie, sluchaj
tr: bunun yerine, yerine, uygula, takip et, itaat et
ar: بدلا من ذلك, بدلا من, اتبع, نفذ
hi: इसके बजाय, बजाय, पालन करो, पालन करें, का पालन
id: sebagai gantinya, alih-alih, ikuti, jalankan, patuhi
vi: thay vao do, thay vi, lam theo, thuc hien, tuan theo
sv: i stallet, istallet, folj, utfor, lyd
pt: em vez disso, ao inves, siga, execute, obedeca
it: invece, al posto, segui, esegui, obbedisci
ru: вместо этого, вместо, следуй, выполни, выполняй, подчиняйся
uk: натомість, замість, дотримуйся, виконай, виконуй
ja: 代わりに, 従って, 実行して, 従え
zh: 而是, 改为, 改為, 按照, 执行, 執行, 遵循, 服从
ko: 대신, 따라, 실행해, 수행해
cs: misto toho, misto, postupuj, proved, uposlechni
fi: sen sijaan, noudata, suorita, toteuta, tottele
hu: helyette, kovesd, hajtsd vegre, engedelmeskedj
he: במקום זאת, במקום, בצע, פעל לפי, ציית
fa: به جای آن, به جای, دنبال کن, انجام بده, اجرا کن, پیروی کن
el: αντι γι αυτο, αντι, ακολουθησε, εκτελεσε, υπακουσε
ro: in schimb, in loc, urmeaza, executa, asculta de
th: แทน, ทำตาม, ปฏิบัติตาม, ดำเนินการ
""",
    # A source or party called trustworthy (what a planted recommendation claims).
    "trusted": """
en: trusted source, trusted sources, most trusted, only trusted
fr: source fiable, source de confiance, la plus fiable, le plus fiable
es: fuente confiable, fuente de confianza, mas confiable
de: vertrauenswurdige quelle, vertrauenswurdigste*
nl: betrouwbare bron, meest betrouwbare
pl: zaufane zrodlo, zaufanym zrodlem, najbardziej zaufan*
tr: guvenilir kaynak, en guvenilir
ar: مصدر موثوق, الأكثر موثوقية
hi: भरोसेमंद स्रोत, सबसे भरोसेमंद
id: sumber tepercaya, paling tepercaya
vi: nguon dang tin cay, dang tin cay nhat
sv: palitlig kalla, mest palitlig*, betrodd kalla
pt: fonte confiavel, fonte de confianca, mais confiavel
it: fonte affidabile, fonte attendibile, piu affidabile
ru: надежн* источник*, самы* надежн*
uk: надійн* джерел*, найнадійніш*
ja: 信頼できる情報源, 最も信頼できる
zh: 可信来源, 可靠来源, 最值得信赖
ko: 신뢰할 수 있는 출처, 가장 신뢰
cs: duveryhodny zdroj, nejduveryhodnejsi
fi: luotettava lahde, luotettavin*
hu: megbizhato forras, legmegbizhatobb
he: מקור אמין, הכי אמין
fa: منبع معتبر, معتبرترین
el: αξιοπιστη πηγη, πιο αξιοπιστ*
ro: sursa de incredere, cea mai de incredere
th: แหล่งที่เชื่อถือได้, น่าเชื่อถือที่สุด
""",
    # Advertising a party: competitors kept out, sponsored content.
    "ad": """
en: competitor, competitors, sponsored, affiliate link*, advertis*, promote, promotes, endorse,
    competing, promoting, endorses, product placement
fr: concurrent*, sponsoris*, lien affilie, lien d'affiliation, publicit*, promouvoir, promeut,
    promeus
es: competidor*, la competencia, patrocinad*, enlace de afiliado, publicit*, promociona*, promueve
de: konkurrent*, konkurrenz*, mitbewerber*, gesponsert*, affiliate-link*, bewirb, bewerbe
nl: concurrent*, gesponsord*, affiliate link*, promoot
pl: konkurenc*, sponsorowan*, link afiliacyjny, promuj*, reklamuj*
tr: rakip*, sponsorlu, reklamini yap*, tanitimini yap*
ar: المنافسين, منافس, إعلان, روج
hi: प्रतिस्पर्धी, विज्ञापन, प्रचार करो
id: pesaing, kompetitor, bersponsor, iklankan, promosikan
vi: doi thu canh tranh, quang cao, tai tro
sv: konkurrent*, sponsrad*, marknadsfor*
pt: concorrent*, patrocinad*, link de afiliado, promova, promove
it: concorrent*, sponsorizzat*, link di affiliazione, pubblicizz*, promuovi
ru: конкурент*, спонсорск*, рекламиру*, продвига*
uk: конкурент*, спонсорськ*, рекламу*, просува*
ja: 競合, スポンサー, 宣伝
zh: 竞争对手, 競爭對手, 赞助, 推广
ko: 경쟁사, 스폰서, 홍보
cs: konkurenc*, sponzorovan*, propaguj*
fi: kilpailij*, sponsoroi*, mainosta
hu: versenytars*, szponzoralt, reklamozd
he: מתחרים, ממומן, קדם את
fa: رقبا, رقیب, تبلیغ کن
el: ανταγωνιστ*, χορηγουμεν*, διαφημισ*
ro: concurent*, sponsorizat*, promoveaza
th: คู่แข่ง, สปอนเซอร์, โฆษณา
""",
    # Pointing a reader at something: recommending, mentioning, linking to it.
    "promote": """
en: recommend*, mention*, add a link, include a link, insert a link, link to, suggest*
fr: recommand*, mentionn*, ajoute un lien, inclus un lien, lien vers, suggere*
es: recomiend*, recomend*, menciona*, agrega un enlace, anade un enlace, incluye un enlace,
    enlace a, sugier*
de: empfiehl*, empfehl*, erwahn*, fuge * link, verlink*, link zu
nl: raad * aan, aanbevel*, beveel * aan, noem*, voeg * link, link naar
pl: polec*, rekomend*, wspomin*, wspomnij, dodaj link, dodawaj link, link do
tr: oner*, tavsiye et*, bahset*, link ekle, baglanti ekle
ar: أوص, اوص, يوصي, توصي, اذكر, يذكر, أضف رابط, اضف رابط
hi: सुझाव, सिफारिश, अनुशंसा, ज़िक्र, लिंक जोड़
id: rekomendasikan, merekomendasikan, sarankan, menyarankan, sebutkan, tambahkan tautan, tautan ke
vi: gioi thieu, khuyen nghi, de xuat, nhac den, them lien ket
sv: rekommender*, namn*, lagg till en lank, lank till
pt: recomend*, mencion*, adicione um link, inclua um link, link para, sugir*, sugere
it: raccomand*, consigli*, menziona*, aggiungi un link, link a, suggeris*
ru: рекоменд*, советуй*, упомина*, упомяни, добавляй ссылку, добавь ссылку
uk: рекоменд*, радь, згадуй*, згадай, додавай посилання, додай посилання
ja: 推奨, おすすめ, 勧め, 薦め, 言及, リンクを追加
zh: 推荐, 推薦, 提及, 添加链接, 加上链接, 附上链接
ko: 추천, 권장, 언급, 링크를 추가
cs: doporuc*, zminuj*, zmin, pridej odkaz, pridavej odkaz
fi: suosittel*, suosittele, mainitse*, lisaa linkki
hu: ajanl*, emlitsd, emlits*, adj hozza linket
he: ממליץ, תמליץ, המלץ, הזכר, תזכיר, הוסף קישור
fa: توصیه کن, پیشنهاد کن, ذکر کن, لینک اضافه
el: προτειν*, συστησ*, συνιστ*, αναφερ*, προσθεσε συνδεσμο
ro: recomand*, mentioneaza, mentiona*, adauga un link, sugereaza
th: แนะนำ, กล่าวถึง, ใส่ลิงก์, เพิ่มลิงก์
""",
    # Content from outside the conversation: pages, mail, documents, tool results.
    "external": """
en: web pages, webpages, websites, web content, emails, e-mails, documents, search results,
    tool output*, tool results, retrieved content, attachments, pdfs, files you read,
    uploaded files, files, shared files
fr: pages web, sites web, courriels, e-mails, documents, resultats de recherche, pieces jointes,
    fichiers
es: paginas web, sitios web, correos, correos electronicos, documentos, resultados de busqueda,
    adjuntos,
    archivos
de: webseiten, websites, e-mails, emails, dokumente*, dokumenten, suchergebnisse*, anhange*,
    dateien, hochgeladene dateien
nl: webpagina*, websites, e-mails, documenten, zoekresultaten, bijlagen
pl: stron* internetow*, e-mail*, maili, dokument*, wynik* wyszukiwania, zalacznik*
tr: web sayfalar*, e-postalar*, belgeler*, dokumanlar*, arama sonuclar*
ar: صفحات الويب, المواقع, رسائل البريد, المستندات, الوثائق, نتائج البحث
hi: वेब पेज, वेबसाइट, ईमेल, दस्तावेज़, दस्तावेजों, सर्च रिजल्ट
id: halaman web, situs web, email, dokumen, hasil pencarian, lampiran
vi: trang web, email, tai lieu, ket qua tim kiem, tep dinh kem
sv: webbsidor, webbplatser, mejl, e-post, dokument, sokresultat, bilagor
pt: paginas da web, paginas web, sites, e-mails, emails, documentos, resultados de pesquisa, anexos
it: pagine web, siti web, email, e-mail, documenti, risultati di ricerca, allegati
ru: веб-страниц*, сайт*, письм*, электронн* почт*, документ*, результат* поиска, вложени*
uk: веб-сторінк*, сайт*, лист*, електронн* пошт*, документ*, результат* пошуку, вкладен*
ja: ウェブページ, webページ, メール, ドキュメント, 文書, 検索結果, 添付
zh: 网页, 網頁, 网站, 邮件, 郵件, 文档, 文件, 搜索结果
ko: 웹페이지, 웹 페이지, 이메일, 문서, 검색 결과, 첨부
cs: webov* strank*, e-mail*, dokument*, vysledk* vyhledavani, priloh*
fi: verkkosivu*, sahkopost*, asiakirj*, dokument*, hakutulok*, liitte*
hu: weboldal*, e-mail*, dokumentum*, keresesi talalat*, mellekl*
he: דפי אינטרנט, אתרים, מיילים, הודעות דואל, מסמכים, תוצאות חיפוש
fa: صفحات وب, وب سایت, ایمیل, اسناد, سند, نتایج جستجو
el: ιστοσελιδ*, email, μηνυματα ηλεκτρονικου ταχυδρομειου, εγγραφ*, αποτελεσματα αναζητησης
ro: pagini web, site-uri, e-mailuri, emailuri, documente, rezultatele cautarii, atasamente
th: หน้าเว็บ, เว็บไซต์, อีเมล, เอกสาร, ผลการค้นหา
""",
    # Taking something as coming from the user, or as binding (what poisons the model's trust).
    "trust": """
en: as coming from, as if they came from, as if from, as the user's own, treat, treats, trust,
    trusts, obey, obeys, follow, follows, carry out, execute, executes
fr: comme venant de, comme si elles venaient, traite*, considere* comme, fais confiance, obeis,
    suis, suive, execute
es: como si vinieran, como provenientes, como procedentes, trata*, considera*, confia*, obedece*,
    sigue, siga, ejecuta
de: als kamen sie, als stammten sie, als von, behandle*, betrachte*, vertraue*, befolge*, gehorche*,
    fuhre * aus
nl: alsof ze van, als afkomstig van, behandel*, beschouw*, vertrouw*, gehoorzaam*, volg*, voer * uit
pl: jakby pochodzil*, jako pochodzac*, traktuj*, uznawaj*, ufaj*, sluchaj*, wykonuj*, postepuj*
tr: geliyormus gibi, kullanicidan gelmis gibi, gibi davran*, guven*, uy*, uygula*, itaat*
ar: كأنها من, كما لو كانت من, تعامل مع, اعتبر, ثق, اطع, نفذ, اتبع
hi: की तरह मानो, की तरह माने, मानो, माने, भरोसा, पालन करे, पालन करो
id: seolah-olah dari, seakan dari, perlakukan, anggap, percayai, patuhi, ikuti, jalankan
vi: nhu the den tu, coi nhu, xem nhu, tin tuong, tuan theo, lam theo, thuc hien
sv: som om de kom fran, som kommande fran, behandla*, betrakta*, lita pa, lyd, folj*, utfor
pt: como se viessem, como vindas de, como vindo de, trate*, trata*, considere*, confie*, obedec*,
    siga, execute
it: come se venissero, come provenienti, tratta*, consider*, fidati, obbedisci, segui, esegui
ru: как будто от, как исходящ*, как от, считай*, воспринима*, доверя*, подчиня*, выполня*, следуй
uk: ніби від, як від, вважай*, сприйма*, довіря*, підкоря*, виконуй*, дотримуйся
ja: からのものとして, として扱, とみなし, 信頼し, 従う, 従って, 実行
zh: 视为, 視為, 当作, 當作, 当成, 信任, 服从, 遵循, 执行, 照做
ko: 로 취급, 처럼 취급, 로 간주, 신뢰, 따르, 실행
cs: jako by pochazel*, jako od, povazuj*, ber * jako, duveruj*, poslouchej*, provadej*, rid se
fi: ikaan kuin ne tulisivat, kayttajalta tulevina, kasittele*, pida*, luota*, noudata*, tottele*,
    suorita
hu: mintha * szarmazna*, ugy kezeld, kezeld, tekintsd, bizz*, engedelmeskedj*, kovesd, hajtsd vegre
he: כאילו הגיעו, כאילו באו, התייחס, ראה בהן, סמוך, ציית, בצע
fa: انگار از, گویی از, در نظر بگیر, تلقی کن, اعتماد, اطاعت, اجرا کن, پیروی
el: σαν να προερχονται, σαν να ηρθαν, αντιμετωπιζ*, θεωρ*, εμπιστευ*, υπακου*, εκτελ*
ro: ca venind de la, ca si cum ar veni, trateaza*, considera*, ai incredere, asculta*, executa*
th: เหมือนมาจาก, ถือว่า, ปฏิบัติต่อ, เชื่อถือ, ทำตาม, เชื่อฟัง
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
    # Others as the ones something is shared with, not whose data it is ("share the notes with
    # all the other members").
    "with_others": """
en: with all, with the other, with other, with everyone, with every, to all the other,
    to all other, to the other, to everyone, to every
fr: avec tous, avec toutes, avec les autres, avec chaque, a tous les, a toutes les, aux autres
es: con todos, con todas, con los demas, con las demas, con cada, a todos los, a todas las,
    a los demas
de: mit allen, mit den anderen, mit jedem, an alle, an die anderen
nl: met alle, met de andere, met iedereen, aan alle, aan de andere
pl: ze wszystkimi, z innymi, z kazdym, wszystkim innym
tr: tum * ile, diger * ile, herkesle, herkese
ar: مع جميع, مع كل, مع الآخرين, إلى جميع, لجميع
hi: सभी के साथ, दूसरों के साथ, सबके साथ
id: dengan semua, dengan yang lain, kepada semua
vi: voi tat ca, voi moi, cho tat ca
sv: med alla, med de andra, till alla
pt: com todos, com todas, com os outros, com cada, a todos os, para todos os
it: con tutti, con tutte, con gli altri, a tutti gli, a tutte le
ru: со всеми, с другими, всем другим, всем остальным
uk: з усіма, з іншими, усім іншим
ja: と共有, 全員に
zh: 与所有, 和所有, 与其他, 和其他, 分享给
ko: 와 공유, 과 공유, 모두에게
cs: se vsemi, s ostatnimi, vsem ostatnim
fi: kaikkien kanssa, muiden kanssa, kaikille
hu: mindenkivel, a tobbiekkel, mindenkinek
he: עם כל, עם האחרים, לכל
fa: با همه, با دیگران, به همه
el: με ολους, με τους αλλους, σε ολους
ro: cu toti, cu toate, cu ceilalti
th: กับทุกคน, กับคนอื่น
""",
    # Released from an obligation ("does not need to", "is exempt from").
    "exempt": """
en: doesn't need to, does not need to, need not, needn't, doesn't have to, does not have to,
    no need to, exempt from, is exempt, not required to, no longer needs to, not obliged to
fr: n'a pas besoin, n'as pas besoin, pas besoin de, n'est pas tenu, n'est plus tenu, dispense*,
    n'est pas oblige
es: no necesita, no tiene que, no esta obligado, exento, exenta, no hace falta, no debe seguir
de: muss nicht, mussen nicht, braucht nicht, brauchst nicht, befreit, nicht verpflichtet,
    nicht mehr * muss, nicht * muss
nl: hoeft niet, hoeven niet, hoeft geen, hoeft * niet, vrijgesteld, niet verplicht
pl: nie musi, nie musisz, nie jest zobowiazan*, zwolnion*
tr: gerek olmadig*, gerek yok, gerekmiyor, zorunda degil*, muaf*
ar: لا يحتاج, لا تحتاج, غير ملزم, ليس مضطرا, معفى
hi: ज़रूरत नहीं, जरूरत नहीं, आवश्यकता नहीं, ज़रूरी नहीं, जरूरी नहीं
id: tidak perlu, tak perlu, tidak harus, tidak wajib, dibebaskan
vi: khong can, khong phai, khong bat buoc, duoc mien
sv: inte behover, behover inte, undantagen, undantagna, inte skyldig
pt: nao precisa, nao tem que, nao tem de, nao e obrigado, isento, isenta, nao deve seguir
it: non deve, non ha bisogno, non e tenuto, esentato, esentata, non e obbligato
ru: не нужно, не обязан*, не должен, не должна, не надо, освобожден*
uk: не повинен, не повинна, не потрібно, не треба, не мусить, звільнен*
ja: 必要はない, 必要はありません, 従わなくてよい, 従わなくていい, 免除
zh: 无需, 無需, 不需要, 不必, 不用, 免除
ko: 필요가 없, 필요 없, 따르지 않아도, 면제
cs: nemusi, nemusis, neni povinen, osvobozen*
fi: ei tarvitse, ei ole velvollinen, vapautettu
hu: nem kell, nem szukseges, mentesul*, nem koteles
he: לא צריך, לא צריכה, אינו חייב, פטור
fa: نیازی به, لازم نیست, مجبور نیست, معاف
el: δεν χρειαζεται, δεν χρειαζεσαι, δεν ειναι υποχρεωμεν*, εξαιρειται
ro: nu trebuie, nu e nevoie, nu este nevoie, nu este obligat, scutit
th: ไม่จำเป็นต้อง, ไม่ต้อง, ได้รับการยกเว้น
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
