"""The guard's lexicons of content planted for a model to act on: the model as the reader of a
page or a mail, content from outside taken as binding, a task redirected, and answers made to
advertise or favour a party.

Owns these word lists only, in the notation of `lexicon/__init__.py`; it never matches text and
holds no rule (`rules_concepts.py` compiles the lists and combines the concepts)."""

from __future__ import annotations

CONCEPTS: dict[str, str] = {
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
}
