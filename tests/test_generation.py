"""Memory generation's model-facing half: prompts, conversation contents, the structured call,
extraction and consolidation. A ScriptedLlm stands in for the model; no network, no database."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_memory.config import (
    CustomizationConfig,
    CustomTopic,
    GenerateMemoriesExample,
    ManagedTopic,
    MemoryBankConfig,
)
from adk_memory.memory.generation import (
    MANAGED_TOPIC_DESCRIPTIONS,
    ExtractedFact,
    GenerationOutputError,
    MemoryOperation,
    consolidate,
    conversation_contents,
    extract_facts,
    plain_creates,
    render_topics,
    resolve_llm,
    topic_label,
)
from adk_memory.memory.models import Memory
from adk_memory.testing import ScriptedLlm, function_call

FEEDBACK = CustomTopic(
    label="business_feedback",
    description="Feedback about the coffee shop:\n  drinks, food, staff and service speed.",
)
TALK = [types.Content(role="user", parts=[types.Part(text="I moved to Berlin last month.")])]
T0 = datetime(2025, 3, 1, 12, tzinfo=timezone.utc)


def facts_json(*facts: dict[str, Any]) -> str:
    return json.dumps({"facts": list(facts)})


def ops_json(*operations: dict[str, Any]) -> str:
    return json.dumps({"operations": list(operations)})


def system_text(request: LlmRequest) -> str:
    instruction = request.config.system_instruction
    assert isinstance(instruction, str)
    return instruction


def memory(memory_id: str, fact: str, topic: str = "USER_PERSONAL_INFO") -> Memory:
    return Memory(
        id=memory_id,
        scope={"user_id": "u1"},
        fact=fact,
        topics=[topic],
        create_time=T0,
        update_time=T0,
    )


# --- topics and the extraction prompt -------------------------------------------------------


def test_topic_labels_and_rendering():
    assert topic_label(ManagedTopic.USER_PREFERENCES) == "USER_PREFERENCES"
    assert topic_label(FEEDBACK) == "business_feedback"
    rendered = render_topics([FEEDBACK, ManagedTopic.USER_PREFERENCES, FEEDBACK])
    assert rendered.splitlines() == [
        "- business_feedback: Feedback about the coffee shop: drinks, food, staff and service "
        "speed.",
        f"- USER_PREFERENCES: {MANAGED_TOPIC_DESCRIPTIONS[ManagedTopic.USER_PREFERENCES]}",
    ]
    assert set(MANAGED_TOPIC_DESCRIPTIONS) == set(ManagedTopic)


async def test_default_prompt_describes_the_four_managed_topics():
    llm = ScriptedLlm([facts_json()])
    assert await extract_facts(llm, TALK, CustomizationConfig()) == []
    prompt = system_text(llm.requests[0])
    for topic in ManagedTopic:
        assert f"- {topic.value}: {MANAGED_TOPIC_DESCRIPTIONS[topic]}" in prompt
    assert "(none configured)" in prompt
    assert "$" not in prompt  # every placeholder was filled


async def test_prompt_has_custom_topics_and_few_shot_examples_including_an_empty_one():
    customization = CustomizationConfig(
        memory_topics=(FEEDBACK,),
        generate_memories_examples=(
            GenerateMemoriesExample(
                conversation=[
                    {"role": "model", "parts": [{"text": "Welcome back! Any feedback?"}]},
                    {"role": "user", "parts": [{"text": "The drip coffee was lukewarm."}]},
                ],
                generated_memories=["The user reported that the drip coffee was lukewarm."],
            ),
            GenerateMemoriesExample(
                conversation=[{"role": "user", "parts": [{"text": "Thanks for the coffee."}]}]
            ),
        ),
    )
    llm = ScriptedLlm([facts_json()])
    await extract_facts(llm, TALK, customization)
    prompt = system_text(llm.requests[0])
    assert "- business_feedback: Feedback about the coffee shop: drinks, food, staff" in prompt
    assert "USER_PERSONAL_INFO" not in prompt
    assert "Agent: Welcome back! Any feedback?" in prompt
    assert "User: The drip coffee was lukewarm." in prompt
    assert "- The user reported that the drip coffee was lukewarm." in prompt
    example_2 = prompt.split("### Example 2")[1]
    assert "User: Thanks for the coffee." in example_2
    assert "(nothing to remember)" in example_2


async def test_per_scope_customization_picks_the_scopes_topics():
    config = MemoryBankConfig(
        customization_configs=(
            CustomizationConfig(memory_topics=(ManagedTopic.USER_PREFERENCES,)),
            CustomizationConfig(
                scope_keys=frozenset({"user_id", "shop_id"}), memory_topics=(FEEDBACK,)
            ),
        )
    )
    llm = ScriptedLlm([facts_json(), facts_json()])
    await extract_facts(llm, TALK, config.customization_for(frozenset({"shop_id", "user_id"})))
    await extract_facts(llm, TALK, config.customization_for(frozenset({"user_id"})))
    shop, default = (system_text(r) for r in llm.requests)
    assert "business_feedback" in shop and "USER_PREFERENCES" not in shop
    assert "USER_PREFERENCES" in default and "business_feedback" not in default


async def test_conversation_date_turns_into_date_guidance():
    llm = ScriptedLlm([facts_json()])
    await extract_facts(llm, TALK, CustomizationConfig(), now=T0)
    assert "took place on Saturday 2025-03-01" in system_text(llm.requests[0])


# --- conversation contents ------------------------------------------------------------------


async def test_multimodal_parts_reach_the_model_and_thoughts_do_not():
    image = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG fake"))
    pdf = types.Part(
        file_data=types.FileData(mime_type="application/pdf", file_uri="gs://bucket/cv.pdf")
    )
    events = [
        Event(
            author="user",
            content=types.Content(role="user", parts=[types.Part(text="My dog:"), image]),
        ),
        Event(
            author="helper_agent",
            content=types.Content(
                role="model",
                parts=[types.Part(text="secret reasoning", thought=True), types.Part(text="Cute!")],
            ),
        ),
        Event(author="user", content=types.Content(role="user", parts=[pdf])),
    ]
    llm = ScriptedLlm([facts_json()])
    await extract_facts(llm, conversation_contents(events), CustomizationConfig())
    sent = llm.requests[0].contents
    assert [c.role for c in sent[:3]] == ["user", "model", "user"]
    assert sent[0].parts[1].inline_data.data == b"\x89PNG fake"
    assert sent[0].parts[1].inline_data.mime_type == "image/png"
    assert [p.text for p in sent[1].parts] == ["Cute!"]
    assert sent[2].parts[0].file_data.file_uri == "gs://bucket/cv.pdf"
    assert sent[-1].role == "user" and "memory system" in sent[-1].parts[0].text


def test_function_calls_dropped_by_default_and_kept_as_text_when_asked():
    response = types.Part(
        function_response=types.FunctionResponse(name="lookup", response={"city": "Berlin"})
    )
    events = [
        Event(author="user", content=types.Content(role="user", parts=[types.Part(text="Hi")])),
        Event(
            author="agent",
            content=types.Content(role="model", parts=[function_call("lookup", q="home")]),
        ),
        Event(author="agent", content=types.Content(role="user", parts=[response])),
        Event(
            author="agent", content=types.Content(role="model", parts=[types.Part(text="Done.")])
        ),
    ]
    plain = conversation_contents(events)
    assert [(c.role, [p.text for p in c.parts]) for c in plain] == [
        ("user", ["Hi"]),
        ("model", ["Done."]),
    ]
    full = conversation_contents(events, include_function_calls=True)
    assert [c.role for c in full] == ["user", "model"]  # the agent's turns merge into one
    texts = [p.text for p in full[1].parts]
    assert texts == [
        '[function call] lookup({"q": "home"})',
        '[function response] lookup: {"city": "Berlin"}',
        "Done.",
    ]
    assert all(p.function_call is None and p.function_response is None for p in full[1].parts)


def test_contents_drop_empty_turns_and_partial_events_and_map_roles():
    events: list[Event | types.Content] = [
        Event(author="user", content=None),
        Event(author="user", content=types.Content(role="user", parts=[types.Part(text="  ")])),
        Event(
            author="agent",
            partial=True,
            content=types.Content(role="model", parts=[types.Part(text="Hel")]),
        ),
        types.Content(role="model", parts=[types.Part(text="Hello")]),
        types.Content(role=None, parts=[types.Part(text="I like tea")]),
    ]
    contents = conversation_contents(events)
    assert [(c.role, c.parts[0].text) for c in contents] == [
        ("model", "Hello"),
        ("user", "I like tea"),
    ]


# --- the extraction answer ------------------------------------------------------------------


async def test_unknown_topics_blanks_and_repeats_are_dropped():
    llm = ScriptedLlm(
        [
            facts_json(
                {"fact": "The user lives in Berlin.", "topic": "USER_PERSONAL_INFO"},
                {"fact": "The  user lives in berlin.", "topic": "USER_PERSONAL_INFO"},
                {"fact": "The user likes tea.", "topic": "user_preferences"},
                {"fact": "Berlin is in Germany.", "topic": "GEOGRAPHY"},
                {"fact": "   ", "topic": "USER_PERSONAL_INFO"},
                {"fact": "The user's old address", "topic": "ADDRESSES", "forget": True},
            )
        ]
    )
    facts = await extract_facts(llm, TALK, CustomizationConfig())
    assert facts == [
        ExtractedFact(fact="The user lives in Berlin.", topic="USER_PERSONAL_INFO"),
        ExtractedFact(fact="The user likes tea.", topic="USER_PREFERENCES"),
        ExtractedFact(fact="The user's old address", topic="ADDRESSES", forget=True),
    ]


async def test_request_is_structured_json_at_temperature_zero():
    llm = ScriptedLlm([facts_json()], model="gemini-test")
    await extract_facts(llm, TALK, CustomizationConfig())
    (request,) = llm.requests
    assert request.model == "gemini-test"
    assert request.config.response_mime_type == "application/json"
    assert request.config.temperature == 0
    schema = request.config.response_schema
    assert isinstance(schema, type)
    assert schema.model_validate_json(facts_json()).facts == []  # type: ignore[attr-defined]
    assert request.contents[0] == TALK[0]


async def test_empty_conversation_makes_no_model_call():
    llm = ScriptedLlm()
    assert await extract_facts(llm, [], CustomizationConfig()) == []
    assert llm.requests == []


async def test_fenced_json_is_accepted():
    llm = ScriptedLlm(
        ["```json\n" + facts_json({"fact": "Likes tea", "topic": "USER_PREFERENCES"}) + "\n```"]
    )
    assert [f.fact for f in await extract_facts(llm, TALK, CustomizationConfig())] == ["Likes tea"]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ('{"facts": [{"fact": "unterminated', "unterminated"),
        ('{"memories": []}', "facts"),
        ('{"facts": [{"fact": "no topic"}]}', "topic"),
        ("", "not a valid"),
        (LlmResponse(error_code="SAFETY", error_message="blocked"), "SAFETY"),
        (LlmResponse(), "no content"),
    ],
)
async def test_unusable_answers_raise_generation_output_error(reply: Any, message: str):
    llm = ScriptedLlm([reply])
    with pytest.raises(GenerationOutputError, match=message):
        await extract_facts(llm, TALK, CustomizationConfig())


async def test_long_bad_answers_are_truncated_in_the_error():
    llm = ScriptedLlm(["x" * 5000])
    with pytest.raises(GenerationOutputError) as caught:
        await extract_facts(llm, TALK, CustomizationConfig())
    assert "(5000 characters)" in str(caught.value)
    assert len(str(caught.value)) < 1000


async def test_a_slow_model_times_out():
    async def slow(request: LlmRequest) -> str:
        await asyncio.sleep(5)
        return facts_json()

    llm = ScriptedLlm(responder=slow)
    with pytest.raises(TimeoutError):
        await extract_facts(llm, TALK, CustomizationConfig(), timeout=0.05)


def test_resolve_llm_passes_objects_through_and_resolves_names():
    llm = ScriptedLlm()
    assert resolve_llm(llm) is llm
    resolved = resolve_llm("gemini-2.5-flash")
    assert isinstance(resolved, BaseLlm)
    assert resolved.model == "gemini-2.5-flash"


# --- consolidation --------------------------------------------------------------------------

BERLIN = ExtractedFact(fact="The user lives in Berlin.", topic="USER_PERSONAL_INFO")
TEA = ExtractedFact(fact="The user likes green tea.", topic="USER_PREFERENCES")
FORGET_DOG = ExtractedFact(fact="The user's dog", topic="EXPLICIT_INSTRUCTIONS", forget=True)
PARIS = memory("m-paris", "The user lives in Paris.")
DOG = memory("m-dog", "The user has a dog named Rex.")


async def test_no_candidates_means_no_model_call():
    llm = ScriptedLlm()
    operations = await consolidate(llm, [BERLIN, FORGET_DOG, TEA], [])
    assert llm.requests == []
    assert [(o.action, o.fact, o.topic) for o in operations] == [
        ("CREATE", "The user lives in Berlin.", "USER_PERSONAL_INFO"),
        ("CREATE", "The user likes green tea.", "USER_PREFERENCES"),
    ]
    assert await consolidate(llm, [], [PARIS]) == []
    assert llm.requests == []


def test_plain_creates_skips_forget_requests_and_repeats():
    again = ExtractedFact(fact="the user likes green tea.", topic="USER_PREFERENCES")
    assert plain_creates([TEA, FORGET_DOG, again]) == [
        MemoryOperation(
            action="CREATE",
            fact="The user likes green tea.",
            topic="USER_PREFERENCES",
            extracted_facts=("The user likes green tea.",),
        )
    ]


async def test_consolidation_prompt_and_request():
    llm = ScriptedLlm([ops_json()])
    assert await consolidate(llm, [BERLIN, FORGET_DOG], [PARIS, DOG]) == []  # no-op
    (request,) = llm.requests
    assert request.config.response_mime_type == "application/json"
    assert request.config.response_schema is not None
    assert "FORGET" in system_text(request) and "UPDATE" in system_text(request)
    text = request.contents[0].parts[0].text
    assert "1. (USER_PERSONAL_INFO, source: implicit) The user lives in Berlin." in text
    assert "2. (EXPLICIT_INSTRUCTIONS, source: implicit, FORGET) The user's dog" in text
    assert (
        "id: m-paris | topics: USER_PERSONAL_INFO | updated: 2025-03-01 | source: bootstrapped | "
        "confidence: unknown | The user lives in Paris." in text
    )


async def test_create_update_and_delete():
    llm = ScriptedLlm(
        [
            ops_json(
                {
                    "action": "UPDATE",
                    "fact_numbers": [1],
                    "target_id": "m-paris",
                    "fact": "The user lives in Berlin (moved from Paris).",
                },
                {
                    "action": "CREATE",
                    "fact_numbers": [2],
                    "fact": "The user likes green tea.",
                    "target_id": "ignored",
                },
                {"action": "DELETE", "fact_numbers": [3], "target_id": "m-dog", "fact": "gone"},
            )
        ]
    )
    operations = await consolidate(llm, [BERLIN, TEA, FORGET_DOG], [PARIS, DOG])
    assert operations == [
        MemoryOperation(
            action="UPDATE",
            fact="The user lives in Berlin (moved from Paris).",
            target_id="m-paris",
            topic="USER_PERSONAL_INFO",
            extracted_facts=("The user lives in Berlin.",),
        ),
        MemoryOperation(
            action="CREATE",
            fact="The user likes green tea.",
            topic="USER_PREFERENCES",
            extracted_facts=("The user likes green tea.",),
        ),
        MemoryOperation(
            action="DELETE",
            target_id="m-dog",
            topic="EXPLICIT_INSTRUCTIONS",
            extracted_facts=("The user's dog",),
            forget=True,
        ),
    ]


async def test_forget_with_no_matching_memory_is_dropped():
    llm = ScriptedLlm(
        [
            ops_json(
                {"action": "DELETE", "fact_numbers": [1], "target_id": "m-cat"},
                {"action": "DELETE", "fact_numbers": [1], "target_id": None},
            )
        ]
    )
    assert await consolidate(llm, [FORGET_DOG], [PARIS]) == []


async def test_repeated_delete_of_one_memory_collapses():
    delete = {"action": "DELETE", "fact_numbers": [1], "target_id": "m-dog"}
    llm = ScriptedLlm([ops_json(delete, delete)])
    operations = await consolidate(llm, [FORGET_DOG], [DOG])
    assert [(o.action, o.target_id) for o in operations] == [("DELETE", "m-dog")]


@pytest.mark.parametrize(
    ("operations", "message"),
    [
        ([{"action": "UPDATE", "fact_numbers": [1], "target_id": "m-nope", "fact": "x"}], "m-nope"),
        ([{"action": "DELETE", "fact_numbers": [1], "target_id": "m-nope"}], "m-nope"),
        ([{"action": "UPDATE", "fact_numbers": [1], "target_id": "m-paris"}], "no fact"),
        ([{"action": "CREATE", "fact_numbers": [1], "fact": " "}], "no fact"),
        ([{"action": "CREATE", "fact_numbers": [7], "fact": "x"}], "fact numbers"),
        ([{"action": "CREATE", "fact_numbers": [], "fact": "x"}], "fact numbers"),
        ([{"action": "CREATE", "fact_numbers": [2], "fact": "The user's dog"}], "forget"),
        ([{"action": "UPDATE", "fact_numbers": [2], "target_id": "m-dog", "fact": "x"}], "forget"),
        (
            [
                {"action": "UPDATE", "fact_numbers": [1], "target_id": "m-paris", "fact": "x"},
                {"action": "DELETE", "fact_numbers": [1], "target_id": "m-paris"},
            ],
            "more than one",
        ),
        ([{"action": "MERGE", "fact_numbers": [1]}], "action"),
    ],
)
async def test_invalid_operations_raise_generation_output_error(
    operations: list[dict[str, Any]], message: str
):
    llm = ScriptedLlm([ops_json(*operations)])
    with pytest.raises(GenerationOutputError, match=message):
        await consolidate(llm, [BERLIN, FORGET_DOG], [PARIS, DOG])
