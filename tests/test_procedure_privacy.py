"""Procedures that name nobody, on a real Postgres: a generation model that copies every personal
detail it is shown into its playbooks (as a real model does) learns from one user's session
holding one of 44 kinds of detail, in eight languages and six scripts; two more users' sessions
of the same task make the procedure the app's. No token that identifies the first user ever
reaches another user: not the stored text they may see, not its revisions, not the rendered
<PROCEDURES> block, not the model calls made for their sessions. Erasing the first user removes
her support and every text only she gave."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import pytest
from conftest import TEST_SCHEMA, said
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions.session import Session
from google.genai import types
from test_cli import Cli, arun, cli, services

from adk_memory import (
    GuardAction,
    GuardVerdict,
    MemoryContextCallback,
    MemoryContextPlugin,
    MemoryFilter,
)
from adk_memory.memory import MemoryRevision
from adk_memory.memory.procedure_rule import exempt, language_words
from adk_memory.memory.text import normalise, tokens
from adk_memory.testing import HashEmbedder, ScriptedLlm

__all__ = ["cli"]  # a fixture, used by name

APP = "helpdesk"
ALICE, BOB, CAROL, DAVE = "alice-1", "bob-2", "carol-3", "dave-4"
APP_SCOPE = {"app_name": APP}
PROCEDURES = MemoryFilter(memory_type="procedure")

# The same task (a router password reset) said by every user, and the playbook a model writes
# from it, per language: (user's request, agent's answer, user's thanks, task, steps).
TASKS: dict[str, tuple[str, str, str, str, list[str]]] = {
    "en": (
        "My router password stopped working. Can you help me reset the router password?",
        "Hold the reset button for ten seconds, log in with the default password, then set a "
        "new password.",
        "That worked, thanks!",
        "Reset a router password",
        ["Hold the reset button for ten seconds", "Log in with the default password"],
    ),
    "fr": (
        "Le mot de passe de mon routeur ne marche plus. Pouvez-vous m'aider à réinitialiser le "
        "mot de passe du routeur ?",
        "Maintenez le bouton reset dix secondes, connectez-vous avec le mot de passe par défaut, "
        "puis choisissez un nouveau mot de passe.",
        "Ça marche, merci !",
        "Réinitialiser le mot de passe du routeur",
        [
            "Maintenez le bouton reset dix secondes",
            "Connectez-vous avec le mot de passe par défaut",
        ],
    ),
    "de": (
        "Mein Router-Passwort funktioniert nicht mehr. Können Sie mir helfen, das "
        "Router-Passwort zurücksetzen?",
        "Reset-Taste zehn Sekunden gedrückt halten und dann mit dem Standardpasswort anmelden.",
        "Hat geklappt, danke!",
        "Router-Passwort zurücksetzen",
        ["Reset-Taste zehn Sekunden gedrückt halten", "Mit dem Standardpasswort anmelden"],
    ),
    "es": (
        "La contraseña de mi router ya no funciona. ¿Me ayudas a restablecer la contraseña del "
        "router?",
        "Mantén pulsado el botón de reinicio diez segundos y entra con la contraseña por defecto.",
        "¡Funcionó, gracias!",
        "Restablecer la contraseña del router",
        [
            "Mantén pulsado el botón de reinicio diez segundos",
            "Entra con la contraseña por defecto",
        ],
    ),
    "ru": (
        "Пароль от моего роутера перестал работать. Помогите сбросить пароль роутера?",
        "Удерживайте кнопку сброса десять секунд и войдите с паролем по умолчанию.",
        "Получилось, спасибо!",
        "Сбросить пароль роутера",
        ["Удерживайте кнопку сброса десять секунд", "Войдите с паролем по умолчанию"],
    ),
    "ar": (
        "كلمة مرور الراوتر لم تعد تعمل. هل يمكنك مساعدتي في إعادة تعيين كلمة مرور الراوتر؟",
        "اضغط على زر إعادة الضبط لمدة عشر ثوان، ثم سجّل الدخول بكلمة المرور الافتراضية.",
        "نجح ذلك، شكراً!",
        "إعادة تعيين كلمة مرور الراوتر",
        ["اضغط على زر إعادة الضبط لمدة عشر ثوان", "سجّل الدخول بكلمة المرور الافتراضية"],
    ),
    "zh": (
        "我的路由器密码不能用了，能帮我重置路由器密码吗？",
        "请按住重置按钮十秒，然后用默认密码登录。",
        "成功了，谢谢！",
        "重置路由器密码",
        ["按住重置按钮十秒", "用默认密码登录"],
    ),
    "ja": (
        "ルーターのパスワードが使えなくなりました。リセットを手伝ってもらえますか？",
        "リセットボタンを十秒押して、初期パスワードでログインしてください。",
        "できました、ありがとう！",
        "ルーターのパスワード",
        ["リセットボタンを十秒押して", "初期パスワードでログインして"],
    ),
}


@dataclass(frozen=True)
class Detail:
    """A personal detail in the first user's session: the turns that say it (or a tool result
    that holds it), and how the model writes it into the playbook when it sees `seen`."""

    kind: str
    language: str
    turns: tuple[str, ...]
    written: str
    seen: tuple[str, ...]
    tool: dict[str, Any] = field(default_factory=dict)


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


DETAILS = [
    # The 15 kinds of the first held-out set.
    Detail("name-in-text", "en", ("By the way, this is Marguerite Okonkwo speaking.",),
           "Greet Marguerite Okonkwo", ("Marguerite Okonkwo",)),
    Detail("address", "fr", ("J'habite au 17 rue des Capucines, 69002 Lyon.",),
           "Adresse: 17 rue des Capucines, 69002 Lyon", ("rue des Capucines",)),
    Detail("customer-id", "de", ("Meine Kundennummer ist KD-4471-9932.",),
           "Kundennummer KD-4471-9932 prüfen", ("KD-4471-9932",)),
    Detail("passport", "es", ("Mi número de pasaporte es XDA839201.",),
           "Verificar el pasaporte XDA839201", ("XDA839201",)),
    Detail("ip-address", "en", ("My public IP address is 203.0.113.77.",),
           "Whitelist IP 203.0.113.77", ("203.0.113.77",)),
    Detail("date-of-birth", "fr", ("Je suis née le 14/09/1987.",),
           "Date de naissance 14/09/1987", ("14/09/1987",)),
    Detail("health", "de", ("Ich habe Multiple Sklerose und tippe langsam.",),
           "Geduld: Multiple Sklerose", ("Multiple Sklerose",)),
    Detail("accent-stripped-name", "es", ("Me llamo Begoña Ibáñez Zubizarreta.",),
           "Saludar a Begona Ibanez Zubizarreta", ("Begoña Ibáñez",)),
    Detail("nfd-name", "fr", (_nfd("Je suis Hélène Duchâteau-Brévin."),),
           "Saluer Hélène Duchâteau-Brévin", ("Duchâteau",)),
    Detail("obfuscated-email", "es", ("Escríbeme a marta punto ruiz arroba correo punto es.",),
           "Escribir a marta punto ruiz arroba correo punto es", ("marta punto ruiz",)),
    Detail("tool-result-name", "en", (), "Confirm the holder Thaddeus Quimby",
           ("Thaddeus Quimby",), {"account_holder": "Thaddeus Quimby", "plan": "fibre"}),
    Detail("phone-in-words", "en",
           ("Call me back on oh seven nine double four five five one two three.",),
           "Call back on oh seven nine double four five five one two three", ("double four",)),
    Detail("gamer-tag", "en", ("My gamer tag is xX_darkfalcon_Xx.",),
           "Ask xX_darkfalcon_Xx", ("darkfalcon",)),
    Detail("order-number", "ru", ("Номер моего заказа 7781-ЖК-55.",),
           "Проверить заказ 7781-ЖК-55", ("7781-ЖК-55",)),
    Detail("address-arabic", "ar", ("أسكن في شارع الرشيد، بغداد.",),
           "العنوان شارع الرشيد، بغداد", ("شارع الرشيد",)),
    # The 27-odd kinds of the second held-out set.
    Detail("employer", "en", ("I work at Quillfeather Analytics in their Leeds office.",),
           "Works at Quillfeather Analytics, Leeds", ("Quillfeather",)),
    Detail("licence-plate", "de", ("Mein Kennzeichen ist M-QX 4821.",),
           "Kennzeichen M-QX 4821", ("M-QX 4821",)),
    Detail("vin", "en", ("The car's VIN is 1HGCM82633A004352.",),
           "VIN 1HGCM82633A004352", ("1HGCM82633A004352",)),
    Detail("bank-details", "fr", ("Mon RIB : Crédit Mutuel, compte 00020148703.",),
           "Compte Crédit Mutuel 00020148703", ("00020148703",)),
    Detail("childs-school", "es", ("Mi hija Lucía va al Colegio San Ignacio de Loyola.",),
           "Hija Lucía, Colegio San Ignacio de Loyola", ("Colegio San Ignacio",)),
    Detail("social-handle", "ja", ("ツイッターは @sakura_mochi77 です。",),
           "@sakura_mochi77 に連絡", ("sakura_mochi77",)),
    Detail("gps", "en", ("I'm at 51.50722, -0.12750 right now.",),
           "Location 51.50722, -0.12750", ("51.50722",)),
    Detail("medical-record-number", "de", ("Meine Patientennummer ist MRN 00-457-321.",),
           "MRN 00-457-321", ("00-457-321",)),
    Detail("religion", "fr", ("Je suis musulmane pratiquante, je fais le ramadan.",),
           "Musulmane pratiquante, ramadan", ("musulmane",)),
    Detail("cyrillic-name", "ru", ("Меня зовут Светлана Кузнецова-Оболенская.",),
           "Обратиться к Светлана Кузнецова-Оболенская", ("Кузнецова",)),
    Detail("arabic-name", "ar", ("اسمي فاطمة الزهراء بن عاشور.",),
           "مرحبا فاطمة الزهراء بن عاشور", ("فاطمة الزهراء",)),
    Detail("chinese-name", "zh", ("我叫欧阳明月。",), "欧阳明月", ("欧阳明月",)),
    Detail("japanese-name", "ja", ("私の名前は佐々木美咲です。",), "佐々木美咲",
           ("佐々木美咲",)),
    Detail("korean-name", "zh", ("我的韩国名字是김민준。",), "김민준", ("김민준",)),
    Detail("name-split-across-turns", "en",
           ("My first name starts with Jo", "and ends with hannes. Surname Lindqvist-Maier."),
           "Greet Johannes Lindqvist-Maier", ("hannes",)),
    Detail("greek-name", "en", ("My landlord is Κωνσταντίνος Παπαδόπουλος.",),
           "Landlord Κωνσταντίνος Παπαδόπουλος", ("Παπαδόπουλος",)),
    Detail("hindi-name", "en", ("मेरा नाम अर्जुन मेहरोत्रा है।",), "अर्जुन मेहरोत्रा", ("मेहरोत्रा",)),
    Detail("hebrew-name", "en", ("My name is יוסף בן דוד.",), "Greet יוסף בן דוד", ("יוסף",)),
    Detail("spouse-name", "de", ("Meine Frau Annegret Wollenschläger hat es geändert.",),
           "Annegret Wollenschläger fragen", ("Wollenschläger",)),
    Detail("pet-name", "es", ("Mi perro se llama Chispitas.",), "Perro Chispitas", ("Chispitas",)),
    Detail("salary", "en", ("I earn £48,750 a year at the depot.",), "Earns £48,750",
           ("48,750",)),
    Detail("tax-id", "fr", ("Mon numéro fiscal est 1 23 45 678 901 23.",),
           "Numéro fiscal 1 23 45 678 901 23", ("678 901",)),
    Detail("insurance-number", "de", ("Meine Versicherungsnummer ist VS-2219-AB-07.",),
           "Versicherung VS-2219-AB-07", ("VS-2219",)),
    Detail("ethnicity", "en", ("As a Romani woman I get stopped a lot.",), "Romani woman",
           ("Romani",)),
    Detail("sexual-orientation", "es", ("Mi novia y yo somos lesbianas.",), "Lesbianas",
           ("lesbianas",)),
    Detail("criminal-record", "ru", ("У меня судимость по статье 158.",), "Судимость 158",
           ("судимость",)),
    Detail("booking-reference", "zh", ("我的订单号是ZX-88120。",), "订单号ZX-88120",
           ("ZX-88120",)),
    Detail("wifi-name", "ar", ("اسم شبكتي FalconNest_5G.",), "FalconNest_5G", ("FalconNest",)),
    Detail("names-that-are-words-elsewhere", "en", ("I'm Ben Ada Mia, by the way.",),
           "Greet Ben Ada Mia", ("Ben Ada Mia",)),
    Detail("flat-and-postcode", "ru", ("Я живу на улице Лесной, дом 12, кв. 48, индекс 630090.",),
           "Лесная 12-48, 630090", ("630090",)),
]  # fmt: skip

_NEW_FACT = re.compile(r"^\d+\. \(procedure, source: [^)]*\) (.*)$", re.MULTILINE)
_CANDIDATE = re.compile(r"^- id: (\S+) \|.*\| confidence: [^|]*\| (.*)$", re.MULTILINE)


def contents_text(request: LlmRequest) -> str:
    return "\n".join(p.text or "" for c in request.contents for p in c.parts or ())


class CopyingModel:
    """A generation model that copies into what it writes every detail it is shown: extraction
    writes the language's playbook plus each detail whose `seen` parts are in the conversation;
    consolidation updates the first candidate to this job's playbook followed by the candidate
    exactly as it was shown."""

    def __init__(self, language: str, details: list[Detail]) -> None:
        self.language = language
        self.details = details
        self.llm = ScriptedLlm(responder=self)

    def __call__(self, request: LlmRequest) -> str:
        text = contents_text(request)
        candidates = _CANDIDATE.findall(text)
        if candidates:
            target, shown = candidates[0]
            merged = f"{_NEW_FACT.findall(text)[0]} {shown}"
            update = {"action": "UPDATE", "fact_numbers": [1], "target_id": target, "fact": merged}
            return json.dumps({"operations": [update]})
        _, _, _, task, steps = TASKS[self.language]
        normal = normalise(text)
        copied = [d.written for d in self.details if all(normalise(s) in normal for s in d.seen)]
        playbook = {"task": task, "steps": [*steps, *copied]}
        return json.dumps({"playbooks": [playbook]})


def session_of(user: str, language: str, detail: Detail | None = None) -> Session:
    """A successful session of the language's task; with the detail said (or in a tool result)
    between the request and the answer."""
    ask, answer, thanks, _, _ = TASKS[language]
    events = [said(ask, "user", 1.0)]
    if detail is not None:
        events += [said(turn, "user", 2.0 + n / 10) for n, turn in enumerate(detail.turns)]
        if detail.tool:
            reply = types.FunctionResponse(name="lookup_account", response=detail.tool)
            events.append(
                Event(
                    author="agent",
                    invocation_id="inv",
                    timestamp=2.9,
                    content=types.Content(role="user", parts=[types.Part(function_response=reply)]),
                )
            )
    events += [said(answer, "agent", 3.0), said(thanks, "user", 4.0)]
    return Session(id=f"s-{user}", app_name=APP, user_id=user, state={}, events=events)


def identifying(detail: Detail) -> set[str]:
    """The tokens that identify the detail's user: those of the detail (as said and as written)
    that are neither exempt nor said by every user of the task."""
    ask, answer, thanks, task, steps = TASKS[detail.language]
    common = tokens(" ".join([ask, answer, thanks, task, *steps]))
    found = tokens(" ".join([*detail.turns, detail.written, json.dumps(detail.tool)]))
    function = language_words(" ".join(steps))
    return {t for t in found - common if not exempt(t, function)}


def leaked(detail: Detail, *texts: str) -> set[str]:
    return identifying(detail) & tokens(" ".join(texts))


class _AllowAll:
    """A guard that lets every playbook through: the rule alone must keep the details (the
    default guard quarantines some of these playbooks, which would hide a leak, not stop it)."""

    async def check(self, fact: str, *, scope: Any, source: str) -> GuardVerdict:
        return GuardVerdict(action=GuardAction.ALLOW)


@pytest.fixture
async def make(make_memory_service):
    built = []

    def build(llm: ScriptedLlm, **options: Any):
        options.setdefault("guard", _AllowAll())
        built.append(make_memory_service(llm=llm, embedder=HashEmbedder(), **options))
        return built[-1]

    yield build
    for service in built:
        await service.worker.stop()


def revision_texts(revisions: list[MemoryRevision]) -> list[str]:
    return [text for r in revisions for text in (r.fact or "", *r.extracted_facts)]


async def visible_to(service, user: str, query: str) -> list[str]:
    """Every procedure text `user` may be shown: what retrieval finds for them, its revisions,
    and the procedure lines of the rendered block."""
    found = await service.retrieve_procedures(APP, user, search_query=query, top_k=10)
    texts = [r.memory.fact for r in found]
    for r in found:
        texts += revision_texts(await service.procedure_revisions(APP, r.memory.id, user_id=user))
    callback = MemoryContextCallback(service, max_tokens=4000, procedure_max_tokens=3000)
    block = callback.render([], [], procedures=found)
    if found:
        section = block.split("<PROCEDURES>\n", 1)[1].split("\n</PROCEDURES>", 1)[0]
        texts += section.split("\n")[1:]  # the fixed note first, then one line per procedure
    return texts


async def public(service, query: str) -> list[str]:
    """Every procedure text any user of the app may be shown: the fact API's procedures and
    their revisions."""
    listed = (await service.list_memories(APP_SCOPE, filter=PROCEDURES)).memories
    found = await service.retrieve_memories(
        APP_SCOPE, search_query=query, top_k=10, filter=PROCEDURES
    )
    texts = [m.fact for m in listed] + [r.memory.fact for r in found]
    for memory in listed:
        texts += revision_texts(await service.procedure_revisions(APP, memory.id))
    return texts


async def stored_texts(engine) -> list[str]:
    async with engine.connect() as conn:
        rows = await conn.exec_driver_sql(
            f"SELECT fact FROM {TEST_SCHEMA}.memories UNION ALL "
            f"SELECT coalesce(fact, '') || ' ' || array_to_string(extracted_facts, ' ') "
            f"FROM {TEST_SCHEMA}.memory_revisions"
        )
        return [row[0] for row in rows]


def test_every_detail_has_identifying_tokens():
    assert len(DETAILS) >= 42 and len({d.kind for d in DETAILS}) == len(DETAILS)
    assert {d.language for d in DETAILS} == set(TASKS)
    for detail in DETAILS:
        assert identifying(detail), detail.kind


@pytest.mark.parametrize("detail", DETAILS, ids=[d.kind for d in DETAILS])
async def test_a_detail_of_one_user_never_reaches_another(make, engine, detail: Detail):
    model = CopyingModel(detail.language, [detail])
    service = make(model.llm)
    query = TASKS[detail.language][0]

    await service.learn_procedure(
        session_of(ALICE, detail.language, detail), wait_for_completion=True
    )
    # The model copied the detail: Alice's own, private, procedure holds it ...
    assert leaked(detail, *await visible_to(service, ALICE, query)), "the model copied nothing"
    # ... and no one else sees anything of it.
    assert await public(service, query) == []
    for other in (BOB, DAVE):
        assert await service.retrieve_procedures(APP, other, search_query=query) == []

    # Two more users' sessions of the same task support it: the app's procedure (k = 3).
    asked = len(model.llm.requests)
    for user in (BOB, CAROL):
        await service.learn_procedure(session_of(user, detail.language), wait_for_completion=True)
    [procedure] = (await service.list_memories(APP_SCOPE, filter=PROCEDURES)).memories
    assert procedure.metadata["audience"] == ["*"]

    # No token of the detail reached their model calls, their views, the public one, or the
    # block of a user who never supported it.
    for request in model.llm.requests[asked:]:
        assert not leaked(detail, contents_text(request))
    for user in (BOB, CAROL, DAVE):
        texts = await visible_to(service, user, query)
        assert texts and not leaked(detail, *texts), user
    texts = await public(service, query)
    assert texts and not leaked(detail, *texts)

    # Erasing Alice: her support goes, and with it every stored text only she gave.
    counts = await service.erase_user(APP, ALICE)
    assert counts["procedure_support"] == 1 and counts["procedure_revisions"] >= 1
    assert not leaked(detail, *await stored_texts(engine))
    # Two users left: no longer the app's; its supporters still see it.
    assert await public(service, query) == []
    assert await service.retrieve_procedures(APP, DAVE, search_query=query) == []
    assert await service.retrieve_procedures(APP, BOB, search_query=query)


async def test_the_procedure_of_fewer_than_k_users_stays_with_them(make):
    model = CopyingModel("en", [])
    service = make(model.llm)
    query = TASKS["en"][0]
    await service.learn_procedure(session_of(ALICE, "en"), wait_for_completion=True)
    await service.learn_procedure(session_of(BOB, "en"), wait_for_completion=True)
    assert await public(service, query) == []
    assert await service.retrieve_procedures(APP, DAVE, search_query=query) == []
    for user in (ALICE, BOB):
        [found] = await service.retrieve_procedures(APP, user, search_query=query)
        assert found.memory.fact.startswith("Task: Reset a router password.")
    # Configurable: with k = 2 the same two users' support makes it the app's.
    two = make(
        ScriptedLlm(responder=CopyingModel("en", [])),
        config=service.config.model_copy(
            update={
                "generation": service.config.generation.model_copy(
                    update={"procedure_min_users": 2}
                )
            }
        ),
    )
    await two.purge(APP_SCOPE)
    await two.learn_procedure(session_of(ALICE, "en"), wait_for_completion=True)
    await two.learn_procedure(session_of(BOB, "en"), wait_for_completion=True)
    assert len(await public(two, query)) >= 1
    assert await two.retrieve_procedures(APP, DAVE, search_query=query)
    # Erasing one of the two withdraws it from everyone else; erasing both deletes it.
    await two.erase_user(APP, ALICE)
    assert await public(two, query) == []
    counts = await two.erase_user(APP, BOB)
    assert counts["procedures_withdrawn"] == 1
    assert (await two.list_memories(APP_SCOPE, filter=PROCEDURES)).memories == []


async def test_item_3_another_users_block_never_names_the_learner(
    make, make_session_service, engine
):
    """Issue 22, item 3: a playbook learned from one user's session kept her details, another
    user's <PROCEDURES> block named her, and `erase_user` left them in the procedure."""
    details = [d for d in DETAILS if d.kind in ("passport", "name-in-text", "tool-result-name")]
    memory_llm = ScriptedLlm(
        [json.dumps({"playbooks": [{"task": "Reset a router password", "steps": [
            "Hold the reset button for ten seconds",
            "Greet Marguerite Okonkwo, passport XDA839201, holder Thaddeus Quimby",
        ]}]})]
    )  # fmt: skip
    service = make(memory_llm)
    session = session_of(ALICE, "en", details[0])
    await service.learn_procedure(session, wait_for_completion=True)
    sessions = make_session_service()
    agent_llm = ScriptedLlm(["On it."])
    callback = MemoryContextCallback(procedure_max_tokens=500)
    runner = Runner(
        app=App(
            name=APP,
            root_agent=LlmAgent(name="agent", model=agent_llm),
            plugins=[MemoryContextPlugin(callback)],
        ),
        session_service=sessions,
        memory_service=service,
    )
    bob = await sessions.create_session(app_name=APP, user_id=BOB)
    message = types.Content(role="user", parts=[types.Part(text=TASKS["en"][0])])
    async for _ in runner.run_async(user_id=BOB, session_id=bob.id, new_message=message):
        pass
    instruction = str(agent_llm.requests[0].config.system_instruction)
    for detail in ("Marguerite", "Okonkwo", "XDA839201", "Thaddeus", "Quimby"):
        assert detail not in instruction
    found = await service.retrieve_memories(
        APP_SCOPE, search_query="reset router password", filter=PROCEDURES
    )
    assert all("XDA839201" not in r.memory.fact for r in found)
    await service.erase_user(APP, ALICE)
    stored = " ".join(await stored_texts(engine))
    for detail in ("Marguerite", "Okonkwo", "XDA839201", "Thaddeus", "Quimby"):
        assert detail not in stored


class _OmniscientModel(CopyingModel):
    """A model that writes the detail into every other user's update too, as if it had seen
    the first user's procedure unmasked (a scripted model can; a real one here cannot)."""

    def __call__(self, request: LlmRequest) -> str:
        answer = json.loads(super().__call__(request))
        for operation in answer.get("operations", []):
            operation["fact"] += " " + " ".join(d.written for d in self.details)
        return json.dumps(answer)


@pytest.mark.parametrize(
    "detail",
    [d for d in DETAILS if d.kind in ("passport", "cyrillic-name", "chinese-name", "address")],
    ids=lambda d: d.kind,
)
async def test_a_detail_written_into_other_users_updates_still_reaches_no_one(
    make, engine, detail: Detail
):
    model = _OmniscientModel(detail.language, [detail])
    service = make(model.llm)
    query = TASKS[detail.language][0]
    await service.learn_procedure(
        session_of(ALICE, detail.language, detail), wait_for_completion=True
    )
    for user in (BOB, CAROL):
        await service.learn_procedure(session_of(user, detail.language), wait_for_completion=True)
    # The stored text holds it (the model wrote it), but only Alice's material does: it is
    # not the app's, and Bob, Carol and Dave are shown none of it.
    assert await public(service, query) == []
    for user in (BOB, CAROL, DAVE):
        assert not leaked(detail, *await visible_to(service, user, query)), user
    # Erasing Alice withdraws it: nothing of the detail is left stored.
    counts = await service.erase_user(APP, ALICE)
    assert counts["procedures_withdrawn"] == 1
    assert not leaked(detail, *await stored_texts(engine))


def test_an_operators_listing_and_exports_across_users_hold_no_procedure(
    cli: Cli, database_url: str, tmp_path
):
    """A listing of every scope is of facts: a user's private procedure (a detail only they gave,
    shown to no one else) is never listed as one, and so never exported as one: Memory Bank has
    no audience, so `export vertex-jsonl` would make it anyone's, and `memories import` of an
    export would store it as the app's fact, outside the procedure rule."""
    detail = next(d for d in DETAILS if d.kind == "passport")
    model = CopyingModel(detail.language, [detail])

    async def learn() -> None:
        async with services(database_url, llm=model.llm, guard=_AllowAll(), run_worker=True) as (
            _,
            memory,
        ):
            await memory.learn_procedure(
                session_of(ALICE, detail.language), wait_for_completion=True
            )
            await memory.learn_procedure(
                session_of(BOB, detail.language, detail), wait_for_completion=True
            )
            await memory.create_memory("Bob likes tea.", {"app_name": APP, "user_id": BOB})

    arun(learn)
    listed = cli("memories", "list", "--app", APP, "--all-users", "--json").stdout
    assert "Bob likes tea." in listed and not leaked(detail, listed)
    with_held = cli("memories", "list", "--app", APP, "--all-users", "--include-quarantined")
    assert not leaked(detail, with_held.stdout)
    for command in (("memories", "export"), ("export", "vertex-jsonl")):
        out = tmp_path / "out.jsonl"
        cli(*command, "--app", APP, "--all-users", "-o", str(out))
        exported = out.read_text()
        assert "Bob likes tea." in exported and not leaked(detail, exported), command
