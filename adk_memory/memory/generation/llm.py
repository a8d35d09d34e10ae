"""The one way generation talks to a model: a single structured (JSON) call through ADK.

Owns: resolving a model name to an ADK `BaseLlm`, building the request, enforcing the timeout,
and turning the answer into a validated pydantic object. Anything wrong with the answer itself
becomes `GenerationOutputError`, which the job queue retries; transport errors and timeouts
propagate unchanged so the queue's retry policy (`adk_memory._retry`) sees them for what they
are: retried when transient, dead-lettered at once when permanent (a rejected key, a 4xx). It
never retries itself (one call per try of a job) and knows nothing of memories.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TypeVar

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.models.registry import LLMRegistry
from google.genai import types
from pydantic import BaseModel, ValidationError

from ...errors import GenerationOutputError, InputTypeError
from ...telemetry import annotate, traced

ModelT = TypeVar("ModelT", bound=BaseModel)

_SHOWN_OUTPUT = 500
"""How much of a bad answer an error message quotes (enough to diagnose, not a log flood)."""


def resolve_llm(model: str | BaseLlm) -> BaseLlm:
    """The model object for a name (through ADK's registry, as agents resolve theirs), or the
    object itself, so callers can pass `"gemini-2.5-flash"` or any `BaseLlm`."""
    if isinstance(model, BaseLlm):
        return model
    if not isinstance(model, str):  # ADK's registry would fail on it with a bare TypeError
        raise InputTypeError(
            f"llm must be a model name or an ADK BaseLlm, not {type(model).__name__}."
        )
    return LLMRegistry.new_llm(model)


def _shown(text: str) -> str:
    if len(text) <= _SHOWN_OUTPUT:
        return repr(text)
    return f"{text[:_SHOWN_OUTPUT]!r}... ({len(text)} characters)"


def _strip_fence(text: str) -> str:
    """The JSON inside a Markdown code fence, which models without a JSON mode sometimes add."""
    text = text.strip()
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        text = text[3:-3]
        first_line, _, rest = text.partition("\n")
        if first_line.strip().isalpha() or not first_line.strip():
            text = rest
    return text.strip()


def _final_text(response: LlmResponse | None) -> str:
    if response is None or response.content is None or not response.content.parts:
        raise GenerationOutputError("the model returned no content")
    return "".join(p.text for p in response.content.parts if p.text and not p.thought)


async def _final_response(llm: BaseLlm, request: LlmRequest) -> LlmResponse | None:
    final: LlmResponse | None = None
    async with contextlib.aclosing(llm.generate_content_async(request, stream=False)) as stream:
        async for response in stream:
            if response.error_code:
                raise GenerationOutputError(
                    f"the model returned error {response.error_code}: {response.error_message}"
                )
            if not response.partial:
                final = response
    return final


@traced("generation.model_call", database=False)
async def generate_structured(
    llm: BaseLlm,
    *,
    system_instruction: str,
    contents: list[types.Content],
    schema: type[ModelT],
    timeout: float,
) -> ModelT:
    """Ask the model once for a `schema` object and return it, validated.

    The schema is sent as the response schema with JSON output and temperature 0, so the model
    is constrained where it can be and the answer is as repeatable as the model allows.
    Raises `GenerationOutputError` for an unusable answer and `TimeoutError` when the model
    takes longer than `timeout` seconds.
    """
    request = LlmRequest(
        model=llm.model,
        contents=contents,
        config=types.GenerateContentConfig(
            system_instruction=system_instruction,
            response_mime_type="application/json",
            response_schema=schema,
            temperature=0,
        ),
    )
    annotate("model", name=llm.model, schema=schema.__name__)
    try:
        response = await asyncio.wait_for(_final_response(llm, request), timeout)
    except asyncio.TimeoutError as exc:  # an alias of TimeoutError only from Python 3.11
        raise TimeoutError(f"the model did not answer within {timeout:g} seconds") from exc
    text = _strip_fence(_final_text(response))
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "the answer"
        raise GenerationOutputError(
            f"the model's answer is not a valid {schema.__name__} "
            f"({where}: {problem['msg']}): {_shown(text)}"
        ) from exc
