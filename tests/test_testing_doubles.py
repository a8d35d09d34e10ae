"""The doubles users test their agents with: ScriptedLlm and HashEmbedder."""

from __future__ import annotations

import math

import pytest
from google.adk.models.llm_request import LlmRequest
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
