"""The doubles users test their agents with: ScriptedLlm and HashEmbedder."""

from __future__ import annotations

import logging
import math

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

from adk_memory.testing import HashEmbedder, ScriptedLlm, function_call


async def answers(llm: ScriptedLlm, text: str):
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=text)])])
    return [r async for r in llm.generate_content_async(request)]


async def test_scripted_llm_replays_its_script_then_fails_loudly():
    llm = ScriptedLlm(["hello", function_call("lookup", q="x")])
    (first,) = await answers(llm, "hi")
    assert first.content.parts[0].text == "hello"
    (second,) = await answers(llm, "again")
    assert second.content.parts[0].function_call.args == {"q": "x"}
    assert [r.contents[0].parts[0].text for r in llm.requests] == ["hi", "again"]
    with pytest.raises(AssertionError, match="no reply left"):
        await answers(llm, "one too many")


async def test_scripted_llm_responder_and_scripted_exceptions():
    llm = ScriptedLlm([TimeoutError("slow model")], responder=lambda r: f"echo {len(r.contents)}")
    with pytest.raises(TimeoutError):
        await answers(llm, "x")
    (reply,) = await answers(llm, "x")
    assert reply.content.parts[0].text == "echo 1"


async def test_scripted_llm_reports_token_usage_so_adk_does_not_warn_every_turn(caplog):
    """Every answer carries usage metadata (estimated from the request and the answer), as a
    real model's does; a scripted response with its own usage keeps it."""
    own = types.GenerateContentResponseUsageMetadata(prompt_token_count=7, total_token_count=9)
    scripted = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="mine")]), usage_metadata=own
    )
    llm = ScriptedLlm(["hello there", scripted])
    runner = InMemoryRunner(agent=LlmAgent(name="doubles", model=llm), app_name="doubles")
    session = await runner.session_service.create_session(app_name="doubles", user_id="u")
    replies = []
    with caplog.at_level(logging.WARNING):
        for text in ("hi", "again"):
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(
                user_id="u", session_id=session.id, new_message=message
            ):
                replies.append(event)
    await runner.close()
    assert not [r for r in caplog.records if "usage" in r.getMessage()]
    first, second = (event.usage_metadata for event in replies)
    assert first.prompt_token_count > 0 and first.candidates_token_count > 0
    assert first.total_token_count == first.prompt_token_count + first.candidates_token_count
    assert second == own and scripted.usage_metadata is own


async def test_hash_embedder_is_deterministic_normalised_and_similarity_aware():
    embedder = HashEmbedder(dimensions=32)
    a, b, c = await embedder.embed(
        ["I like green tea", "I like green tea a lot", "quarterly tax filing"]
    )
    assert a == (await HashEmbedder(dimensions=32).embed(["I like green tea"]))[0]
    assert math.isclose(sum(v * v for v in a), 1.0)

    def cosine(x, y):
        return sum(i * j for i, j in zip(x, y, strict=True))

    assert cosine(a, b) > cosine(a, c)
    assert len(a) == embedder.dimensions
