"""The guard's lexicons of the model and its instructions: who is spoken to ("you", the
assistant), what it was told (its rules, what came before) and an override's words (dropping
them, everything, taking precedence), with "me", the asker.

Owns these word lists only, in the notation of `lexicon/__init__.py`; it never matches text and
holds no rule (`rules_concepts.py` compiles the lists and combines the concepts)."""

from __future__ import annotations

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
}
