"""Test doubles for the model boundary: a scripted LLM and a deterministic embedder.

Owns: the only fakes adk-memory's own tests use (the database is always real), offered to users
so they can test their agents the same way. Nothing here touches the network, and nothing in
the package's runtime code imports this module.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr

from .adk.tokens import content_tokens, contents_tokens
from .errors import InputValidationError

Reply = str | types.Part | types.Content | LlmResponse | BaseException
"""One scripted answer: text, a part (e.g. a function call), a whole content, a response, or an
exception to raise (to test retries and error paths)."""

Responder = Callable[[LlmRequest], Reply | Awaitable[Reply]]
"""A function of the request that returns the answer (sync or async)."""


def function_call(name: str, **args: Any) -> types.Part:
    """A function-call part, for scripting tool use: `ScriptedLlm([function_call("f", x=1)])`."""
    return types.Part(function_call=types.FunctionCall(name=name, args=args))


def _as_response(reply: Reply) -> LlmResponse:
    if isinstance(reply, BaseException):
        raise reply
    if isinstance(reply, LlmResponse):
        return reply
    if isinstance(reply, str):
        reply = types.Part(text=reply)
    if isinstance(reply, types.Part):
        reply = types.Content(role="model", parts=[reply])
    return LlmResponse(content=reply)


def _with_usage(response: LlmResponse, request: LlmRequest) -> LlmResponse:
    """The response with token usage, as a real model reports it (ADK warns on every turn
    without one): estimated locally from the request's and the response's contents. A scripted
    response that carries its own usage keeps it; the caller's object is never changed."""
    if response.usage_metadata is not None:
        return response
    prompt = contents_tokens(request.contents)
    answer = content_tokens(response.content) if response.content is not None else 0
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=answer,
        total_token_count=prompt + answer,
    )
    return response.model_copy(update={"usage_metadata": usage})


class ScriptedLlm(BaseLlm):
    """An ADK `BaseLlm` that answers from a script and records every request it receives.

    `ScriptedLlm(["hi", function_call("lookup", q="x"), "done"])` answers each model call with the
    next item; `ScriptedLlm(responder=fn)` answers with `fn(request)`. A script that runs dry is
    an error (a test that makes more model calls than it expects should fail loudly).
    """

    model: str = "scripted-llm"
    _script: deque[Reply] = PrivateAttr(default_factory=deque)
    _responder: Responder | None = PrivateAttr(default=None)
    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        responder: Responder | None = None,
        **data: Any,
    ) -> None:
        super().__init__(**data)
        self._script = deque(replies)
        self._responder = responder

    @property
    def requests(self) -> list[LlmRequest]:
        """Every request received, in order."""
        return self._requests

    def add(self, *replies: Reply) -> None:
        """Queue more answers."""
        self._script.extend(replies)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self._requests.append(llm_request)
        if self._script:
            reply: Reply = self._script.popleft()
        elif self._responder is not None:
            produced = self._responder(llm_request)
            reply = await produced if isinstance(produced, Awaitable) else produced
        else:
            raise AssertionError(f"ScriptedLlm has no reply left for call {len(self._requests)}.")
        yield _with_usage(_as_response(reply), llm_request)


_TOKEN = re.compile(r"\w+", re.UNICODE)


@functools.lru_cache(maxsize=65536)
def _token_hash(token: str, dimensions: int) -> tuple[int, float]:
    """A word's bucket and sign (words repeat: a batch of facts hashes each word once)."""
    digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dimensions, 1.0 if digest[4] & 1 else -1.0


class HashEmbedder:
    """A deterministic embedder: words hashed into `dimensions` buckets, L2-normalised.

    Texts sharing words get similar vectors, so retrieval tests behave like retrieval, with no
    model download and the same vector on every machine.
    """

    similarity_floor = 0.05
    """Calibrated relevance floor (see `RetrievalConfig.min_similarity`): one word shared by
    two texts of up to ten words each scores at least 0.1, texts with no word in common 0 (or,
    in a few dimensions, whatever two colliding words add: a toy embedder's noise)."""

    def __init__(self, dimensions: int = 64) -> None:
        if dimensions < 2:
            raise InputValidationError("dimensions must be at least 2.")
        self.dimensions = dimensions
        self.calls = 0

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for token in _TOKEN.findall(text.lower()):
            bucket, sign = _token_hash(token, self.dimensions)
            vector[bucket] += sign
        norm = math.sqrt(sum(v * v for v in vector if v))  # zeros add nothing
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return [v / norm for v in vector]

    async def embed(
        self,
        texts: Sequence[str],
        *,
        task: Literal["document", "query"] = "document",
    ) -> list[list[float]]:
        """One vector per text; `task` is accepted for protocol compatibility and ignored."""
        self.calls += 1
        return [self._vector(text) for text in texts]
