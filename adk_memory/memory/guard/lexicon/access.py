"""The guard's lexicons of secrets, people's data and permissions: what an exfiltration asks
for (secrets, accounts, data, others, making them known) and what a claim of authority hands out
(permission, elevated access, who could grant it, a release from the rules).

Owns these word lists only, in the notation of `lexicon/__init__.py`; it never matches text and
holds no rule (`rules_concepts.py` compiles the lists and combines the concepts)."""

from __future__ import annotations

CONCEPTS: dict[str, str] = {
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
}
