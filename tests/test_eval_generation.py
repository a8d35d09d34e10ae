"""The generation-quality harness: dataset validation, exact metrics on hand-made cases, the
shipped golden set end to end with a scripted model that answers like a perfect one, the LLM
judge, and the command line's no-key message. The database is real; only the model is scripted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.config import GenerationConfig
from adk_memory.eval.generation import (
    DEFAULT_SCOPE,
    EVAL_SCOPE_PREFIX,
    DatasetError,
    GenerationDataset,
    content_words,
    eval_scope,
    evaluate_generation,
    format_generation_report,
    lexical_match,
    llm_judge_matcher,
    load_generation_dataset,
    load_golden_dataset,
    main,
    match_facts,
    parse_generation_dataset,
    precision_recall_f1,
)
from adk_memory.memory.generation import GenerationOutputError
from adk_memory.testing import ScriptedLlm

MakeService = Callable[..., PostgresMemoryService]


def said(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def request_text(request: LlmRequest) -> str:
    return "\n".join(p.text for c in request.contents for p in c.parts or () if p.text)


def extraction(*facts: str, forget: tuple[str, ...] = ()) -> str:
    rows = [{"fact": f, "topic": "USER_PERSONAL_INFO", "forget": False} for f in facts]
    rows += [{"fact": f, "topic": "USER_PERSONAL_INFO", "forget": True} for f in forget]
    return json.dumps({"facts": rows})


NEW_FACT = re.compile(r"^(\d+)\. \((\w+), source: \w+(, FORGET)?\) (.*)$", re.MULTILINE)
CANDIDATE = re.compile(
    r"^- id: (\S+) \| topics: .* \| updated: \S+ \| source: \w+ \| confidence: \S+ \| (.*)$",
    re.MULTILINE,
)


def consolidation_input(request: LlmRequest) -> tuple[list[tuple[int, str, bool]], dict[str, str]]:
    """The numbered new facts (number, text, forget) and the candidates (id -> fact) that the
    consolidation prompt shows the model."""
    text = request_text(request)
    new = [(int(n), fact, bool(forget)) for n, _, forget, fact in NEW_FACT.findall(text)]
    return new, {memory_id: fact for memory_id, fact in CANDIDATE.findall(text)}


# ---------------------------------------------------------------------------------- dataset


def test_the_golden_set_is_valid_package_data_covering_every_kind_of_case():
    dataset = load_golden_dataset()
    assert dataset.name == "golden-generation"
    assert len(dataset.cases) == 13
    ids = {c.id for c in dataset.cases}
    assert {"update-home-city", "forget-address", "small-talk-greeting", "multi-fact-turn"} <= ids
    abstentions = [c.id for c in dataset.cases if c.abstention]
    assert sorted(abstentions) == [
        "forget-address",
        "small-talk-greeting",
        "small-talk-one-off-question",
    ]
    assert sum(bool(c.existing_memories) for c in dataset.cases) == 5
    assert dataset.cases[0].scope == DEFAULT_SCOPE  # the default, when a case names none


def test_every_dataset_problem_is_reported_with_its_location():
    data = {
        "name": "bad",
        "cases": [
            {
                "id": "a",
                "scope": {"app_name": "x*"},
                "conversation": [said("system", "hi"), {"role": "user", "parts": []}],
                "expected_memories": ["The user likes tea.", "the user likes  TEA."],
            },
            {"id": "a", "conversation": [said("user", "   ")], "expected_memories": []},
            {"id": "c", "conversation": [], "expected": []},
        ],
    }
    with pytest.raises(DatasetError) as caught:
        parse_generation_dataset(data, source="bad.json")
    message = str(caught.value)
    for where in (
        "cases[0].scope:",
        "cases[0].conversation[0].role:",
        "cases[0].conversation[1].parts:",
        "cases[0].expected_memories:",
        "cases[1].conversation[0].parts[0].text:",
        "cases[2].conversation:",
        "cases[2].expected_memories:",  # required, even when empty
        "cases[2].expected:",  # unknown keys are errors
    ):
        assert where in message, where
    assert message.startswith("bad.json: invalid generation dataset")
    # Only once every field is valid are ids compared.
    good = {"id": "a", "conversation": [said("user", "hi")], "expected_memories": []}
    with pytest.raises(DatasetError, match=r"cases\[1\]\.id: duplicate case id 'a'"):
        parse_generation_dataset({"name": "dup", "cases": [good, good]})


def test_load_generation_dataset_reads_files_and_rejects_bad_json(tmp_path: Path):
    path = tmp_path / "d.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(DatasetError, match="not valid JSON"):
        load_generation_dataset(path)
    case = {"id": "a", "conversation": [said("user", "I like tea")], "expected_memories": ["x"]}
    path.write_text(json.dumps({"name": "ok", "cases": [case]}), encoding="utf-8")
    assert load_generation_dataset(str(path)).cases[0].expected_memories == ["x"]


# ---------------------------------------------------------------------------------- metrics


def test_the_lexical_matcher():
    assert content_words("The user doesn't like cilantro.") == {"not", "like", "cilantro"}
    assert lexical_match("The user likes jazz.", "The user likes jazz music.")  # 2/3 words
    assert not lexical_match("The user lives in Paris.", "The user lives in Berlin.")  # 1/3
    assert not lexical_match("The user likes cilantro.", "The user doesn't like cilantro.")
    assert not lexical_match("The user is vegetarian.", "The user doesn't eat meat.")  # a floor
    assert lexical_match("!!!", "!!!") and not lexical_match("!!!", "?")


async def test_metrics_on_a_hand_made_case_with_known_counts():
    generated = [
        "The weather was nice today.",  # FP: noise
        "The user likes jazz.",  # TP with "likes jazz music"
        "The user lives in Berlin.",  # TP
        "The user lives in Paris.",  # FP: the stale version
    ]
    expected = ["The user lives in Berlin.", "The user likes jazz music.", "The user has a dog."]
    pairs = await match_facts(generated, expected)
    assert pairs == [(2, 0), (1, 1)]  # (generated, expected), in expected order; the dog: FN
    tp = len(pairs)
    fp, fn = len(generated) - tp, len(expected) - tp
    assert (tp, fp, fn) == (2, 2, 1)
    assert precision_recall_f1(tp, fp, fn) == (0.5, 2 / 3, 4 / 7)
    assert precision_recall_f1(0, 0, 0) == (None, None, None)  # nothing expected, nothing made
    assert precision_recall_f1(0, 0, 2) == (None, 0.0, 0.0)


async def test_matching_is_one_to_one_and_as_large_as_possible():
    # E0 fits G0 and G1, E1 only G0: greedy in order would give E0 G0 and miss E1.
    fits = {("G0", "E0"), ("G1", "E0"), ("G0", "E1")}

    async def matcher(generated: str, expected: str) -> bool:  # async matchers are awaited
        return (generated, expected) in fits

    assert await match_facts(["G0", "G1"], ["E0", "E1"], matcher) == [(1, 0), (0, 1)]
    # One generated fact never counts twice, however many expected facts it fits.
    assert await match_facts(["G0"], ["E0", "E1"], matcher) == [(0, 0)]


# ------------------------------------------------------------------------------- end to end

HAND_MADE: dict[str, Any] = {
    "name": "hand-made",
    "cases": [
        {
            "id": "mixed",
            "existing_memories": ["The user lives in Paris."],
            "conversation": [said("user", "I moved to Berlin. I love jazz.")],
            "expected_memories": [
                "The user lives in Berlin.",
                "The user likes jazz music.",
                "The user has a dog named Rex.",
            ],
        },
        {
            "id": "quiet",
            "scope": {"app_name": "shop", "user_id": "u7", "session_id": "s1"},
            "conversation": [said("user", "hello"), said("model", "Hi!")],
            "expected_memories": [],
        },
        {
            "id": "noisy",
            "conversation": [said("user", "Nice weather, isn't it?")],
            "expected_memories": [],
        },
        {
            "id": "broken",
            "existing_memories": ["The user is vegetarian."],
            "conversation": [said("user", "I drink green tea every morning.")],
            "expected_memories": ["The user is vegetarian.", "The user drinks green tea."],
        },
    ],
}

HAND_MADE_EXTRACTIONS = {
    "I moved to Berlin": extraction(
        "The user lives in Berlin.", "The user likes jazz.", "The weather is nice today."
    ),
    "hello": extraction(),
    "Nice weather": extraction("The user enjoys nice weather."),
    "green tea": "this is not JSON",  # -> dead-lettered: an error, scored on what is left
}


def hand_made_model(request: LlmRequest) -> str:
    """Extraction from the table above; consolidation creates every new fact."""
    new, _ = consolidation_input(request)
    if new:
        return json.dumps(
            {
                "operations": [
                    {"action": "CREATE", "fact_numbers": [n], "fact": f} for n, f, _ in new
                ]
            }
        )
    text = request_text(request)
    return next(answer for key, answer in HAND_MADE_EXTRACTIONS.items() if key in text)


async def test_exact_figures_isolation_and_errors_on_a_hand_made_dataset(
    make_memory_service: MakeService,
):
    dataset = parse_generation_dataset(HAND_MADE)
    service = make_memory_service(
        llm=ScriptedLlm(responder=hand_made_model),
        run_worker=True,
        config=MemoryBankConfig(generation=GenerationConfig(max_attempts=1)),
    )
    real = await service.create_memory("The user lives in Paris.", DEFAULT_SCOPE)  # not the eval's
    seen: list[tuple[str, int, int]] = []
    try:
        report = await evaluate_generation(
            service, dataset, progress=lambda *args: seen.append(args)
        )
        left = (await service.list_memories(page_size=1000)).memories
    finally:
        await service.close()
    assert [m.id for m in left] == [real.id]  # the eval scopes are purged; real memory untouched
    assert seen == [("mixed", 1, 4), ("quiet", 2, 4), ("noisy", 3, 4), ("broken", 4, 4)]

    mixed = report.case("mixed")
    assert mixed.generated == [
        "The user likes jazz.",
        "The user lives in Berlin.",
        "The user lives in Paris.",
        "The weather is nice today.",
    ]
    assert (mixed.true_positives, mixed.false_positives, mixed.false_negatives) == (2, 2, 1)
    assert mixed.missed == ["The user has a dog named Rex."]
    assert mixed.extra == ["The user lives in Paris.", "The weather is nice today."]
    assert (mixed.created, mixed.updated, mixed.deleted) == (3, 0, 0)
    assert report.case("quiet").abstained and report.case("quiet").f1 is None
    assert not report.case("noisy").abstained and report.case("noisy").precision == 0.0
    broken = report.case("broken")
    assert broken.error is not None and "GenerationOutputError" in broken.error
    assert (broken.true_positives, broken.false_negatives) == (1, 1)

    # Micro: TP 2+0+0+1, FP 2+0+1+0, FN 1+0+0+1.
    assert (report.true_positives, report.false_positives, report.false_negatives) == (3, 3, 2)
    assert report.precision == 0.5 and report.recall == 0.6 and report.f1 == 6 / 11
    assert (report.abstention_cases, report.abstained, report.abstention_accuracy) == (2, 1, 0.5)
    assert report.errors == 1 and report.model == "scripted-llm" and report.embedder is None
    assert report.matcher.startswith("lexical")

    text = format_generation_report(report)
    assert "Abstention accuracy 0.500: 1 of 2 cases" in text
    assert re.search(r"^micro\s+5\s+6\s+3\s+3\s+2\s+0\.500\s+0\.600\s+0\.545", text, re.M)
    assert "    missed: The user has a dog named Rex." in text
    assert "    error: GenerationOutputError" in text


def test_eval_scopes_keep_the_keys_and_hide_the_values():
    dataset = parse_generation_dataset(HAND_MADE)
    scope = eval_scope(dataset, dataset.cases[1])
    assert set(scope) == {"app_name", "user_id", "session_id"}  # same customization applies
    assert all(v.startswith(EVAL_SCOPE_PREFIX) for v in scope.values())
    assert len(set(scope.values())) == 3
    assert eval_scope(dataset, dataset.cases[0]) != eval_scope(dataset, dataset.cases[2])


def perfect_model(dataset: GenerationDataset) -> Callable[[LlmRequest], str]:
    """A scripted model that answers as a perfect one would on `dataset`.

    Extraction: the case is found by its conversation text; its new facts are the expected
    facts not already stored, and when there are none, existing memories no longer expected
    become forget requests. Consolidation: a memory no longer expected is updated into a new
    fact (or deleted when none is left), every other new fact is created.
    """

    def extract(request: LlmRequest) -> str:
        text = request_text(request)
        [case] = [
            c
            for c in dataset.cases
            if all((p.text or "") in text for turn in c.conversation for p in turn.parts or ())
        ]
        new = [f for f in case.expected_memories if f not in case.existing_memories]
        gone = [f for f in case.existing_memories if f not in case.expected_memories]
        return extraction(*new, forget=() if new else tuple(gone))

    def consolidate(request: LlmRequest) -> str:
        new, candidates = consolidation_input(request)
        facts = {fact for _, fact, _ in new}
        [case] = [
            c
            for c in dataset.cases
            if facts <= {*c.expected_memories, *c.existing_memories}
            and any(f in c.existing_memories for f in candidates.values())
        ]
        gone = [i for i, f in candidates.items() if f not in case.expected_memories]
        operations: list[dict[str, Any]] = []
        for number, fact, forget in new:
            if not forget and gone:
                target = gone.pop(0)
                operations.append(
                    {
                        "action": "UPDATE",
                        "fact_numbers": [number],
                        "target_id": target,
                        "fact": fact,
                    }
                )
            elif not forget:
                operations.append({"action": "CREATE", "fact_numbers": [number], "fact": fact})
        operations += [
            {"action": "DELETE", "fact_numbers": [new[0][0]], "target_id": target}
            for target in gone
        ]
        return json.dumps({"operations": operations})

    return lambda request: (
        consolidate(request) if consolidation_input(request)[0] else extract(request)
    )


async def test_the_golden_set_end_to_end_with_a_perfect_scripted_model(
    make_memory_service: MakeService,
):
    dataset = load_golden_dataset()
    llm = ScriptedLlm(responder=perfect_model(dataset))
    service = make_memory_service(llm=llm, run_worker=True)
    try:
        report = await evaluate_generation(service, dataset)
        left = (await service.list_memories(page_size=1000)).memories
    finally:
        await service.close()
    print(format_generation_report(report))  # shown with `pytest -s`
    assert left == []
    assert report.errors == 0
    for case in report.cases:
        assert not case.missed and not case.extra, case.case_id
    assert report.precision == report.recall == report.f1 == 1.0
    assert report.true_positives == report.expected == report.generated == 14
    assert (report.abstention_cases, report.abstained) == (3, 3)
    assert (report.case("update-home-city").updated, report.case("forget-address").deleted) == (
        1,
        1,
    )
    assert report.case("forget-one-of-two").generated == ["The user is allergic to peanuts."]
    assert report.case("already-known").created == 0  # no duplicate of a known fact
    # One extraction per case, and a consolidation for every case that had facts and candidates.
    extractions = sum("The conversation is over" in request_text(r) for r in llm.requests)
    assert extractions == 13 and len(llm.requests) == 13 + 4


# ---------------------------------------------------------------------------------- LLM judge


async def test_the_llm_judge_matcher_with_a_scripted_model():
    same = {("The user doesn't eat meat.", "The user is vegetarian.")}

    def judge_model(request: LlmRequest) -> str:
        text = request_text(request)
        pair = tuple(re.findall(r"^(?:GENERATED|EXPECTED): (.*)$", text, re.M))
        return json.dumps({"answer": "Yes" if pair in same else "no"})

    llm = ScriptedLlm(responder=judge_model)
    judge = llm_judge_matcher(llm)
    assert judge.name == "LLM judge (scripted-llm)"
    assert await judge("The user doesn't eat meat.", "The user is vegetarian.")
    assert not await judge("The user prefers window seats.", "The user prefers aisle seats.")
    assert await judge("The user likes  tea.", "the user likes tea.")  # identical: no call
    assert await judge("The user doesn't eat meat.", "The user is vegetarian.")  # asked once
    assert judge.calls == len(llm.requests) == 2
    config = llm.requests[0].config
    assert config.response_mime_type == "application/json" and config.temperature == 0
    assert "memory a person EXPECTED" in str(config.system_instruction)

    generated = ["The user prefers window seats.", "The user doesn't eat meat."]
    expected = ["The user is vegetarian.", "The user prefers aisle seats."]
    assert await match_facts(generated, expected, judge) == [(1, 0)]

    broken = llm_judge_matcher(ScriptedLlm(["maybe?"]))
    with pytest.raises(GenerationOutputError):  # a judge never guesses
        await broken("a", "b")


# ---------------------------------------------------------------------------- command line


def test_main_says_clearly_when_no_key_is_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
):
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    assert main(["--model", "gemini-2.5-flash"]) == 2
    err = capsys.readouterr().err
    assert "No model credentials" in err and "GOOGLE_API_KEY" in err and "ScriptedLlm" in err
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    assert main(["--dataset", str(bad)]) == 2
    assert "invalid generation dataset" in capsys.readouterr().err
