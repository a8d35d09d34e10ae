"""Local token estimates for context budgets, and the context windows of known Gemini models.

Budgets are checked on every model call, so the estimate must be local and cheap: it never calls
a model's `count_tokens` (a network round trip per turn). It errs high rather than low (about four
characters a token for text, JSON for calls and results, Gemini's fixed cost for media), so a
request that fits the estimate fits the model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

from google.genai import types

CHARS_PER_TOKEN = 4
"""Average characters per token of Gemini's tokenizer on English text and JSON."""

MEDIA_TOKENS = 258
"""What Gemini charges for an image or a file reference (one tile); audio/video are longer."""

CONTENT_OVERHEAD_TOKENS = 4
"""Role and turn markers per content."""

GEMINI_CONTEXT_WINDOWS: dict[str, int] = {
    "gemini-3-pro": 1_048_576,
    "gemini-3-flash": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash-lite": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "gemini-2.0-flash-lite": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemma-3": 131_072,
}
"""Input context windows (tokens) by model family; longest prefix wins, so
`gemini-2.5-flash-lite-preview-09-2025` finds `gemini-2.5-flash-lite`."""


def context_window(model: str | None) -> int | None:
    """The input context window of `model` (`models/...` and Vertex resource names accepted),
    or None when the model is unknown."""
    if not model:
        return None
    name = model.rsplit("/", 1)[-1].lower()
    best = max((p for p in GEMINI_CONTEXT_WINDOWS if name.startswith(p)), key=len, default=None)
    return GEMINI_CONTEXT_WINDOWS[best] if best else None


def text_tokens(text: str | None) -> int:
    """Tokens of a piece of text (rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def _json_tokens(value: object) -> int:
    return text_tokens(json.dumps(value, default=str, ensure_ascii=False))


def part_tokens(part: types.Part) -> int:
    """Tokens of one part: text, a function call or response, code, or media."""
    if part.text is not None:
        return text_tokens(part.text)
    if part.function_call is not None:
        call = part.function_call
        return text_tokens(call.name) + _json_tokens(call.args or {})
    if part.function_response is not None:
        response = part.function_response
        return text_tokens(response.name) + _json_tokens(response.response or {})
    if part.executable_code is not None:
        return text_tokens(part.executable_code.code)
    if part.code_execution_result is not None:
        return text_tokens(part.code_execution_result.output)
    if part.inline_data is not None or part.file_data is not None:
        return MEDIA_TOKENS
    return 0


def content_tokens(content: types.Content) -> int:
    """Tokens of one content: its parts plus the turn markers."""
    return CONTENT_OVERHEAD_TOKENS + sum(part_tokens(p) for p in content.parts or ())


def contents_tokens(contents: Iterable[types.Content]) -> int:
    """Tokens of a list of contents, e.g. an `LlmRequest.contents`."""
    return sum(content_tokens(c) for c in contents)
