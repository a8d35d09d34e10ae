"""Local token estimates for context budgets, and the context windows of known Gemini models.

Budgets are checked on every model call, so the estimate must be local and cheap: it never calls
a model's `count_tokens` (a network round trip per turn). It errs high rather than low (about four
characters a token for text, JSON for calls and results, Gemini's fixed cost for media), so a
request that fits the estimate fits the model.

The one costly step is the JSON of function call arguments and tool results, which the
request-time plugins would otherwise repeat for the whole history on every model call.
`TokenCache` remembers it per payload stored in a session event, and `Estimator` is the one
estimate path, with or without that cache. Nothing here ever changes a content or an event.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

from google.adk.sessions.session import Session
from google.genai import types

from .._cache import LruCache

CHARS_PER_TOKEN = 4
"""Average characters per token of Gemini's tokenizer on English text and JSON."""

MEDIA_TOKENS = 258
"""What Gemini charges for an image or a file reference (one tile); audio/video are longer."""

CONTENT_OVERHEAD_TOKENS = 4
"""Role and turn markers per content."""

DEFAULT_CACHE_SIZE = 10_000
"""Stored payload estimates a `TokenCache` keeps (a few hundred bytes each)."""

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


PayloadKey = tuple[str, str, str, str, int, str]
"""Where a tool payload is stored: (app, user, session, event id, part index, field), field being
"args" (a function call's) or "response" (a function response's)."""


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


class Estimator:
    """Token estimates of parts and contents, each JSON payload serialised afresh.

    `json_tokens` is the costly step and the one a subclass may remember; everything else is
    counted the same way with or without a cache.
    """

    def json_tokens(self, value: object) -> int:
        """Tokens of a JSON payload: a function call's arguments or a function response."""
        return text_tokens(json.dumps(value, default=str, ensure_ascii=False))

    def part_tokens(self, part: types.Part) -> int:
        """Tokens of one part: text, a function call or response, code, or media."""
        if part.text is not None:
            return text_tokens(part.text)
        if part.function_call is not None:
            call = part.function_call
            return text_tokens(call.name) + self.json_tokens(call.args or {})
        if part.function_response is not None:
            response = part.function_response
            return text_tokens(response.name) + self.json_tokens(response.response or {})
        if part.executable_code is not None:
            return text_tokens(part.executable_code.code)
        if part.code_execution_result is not None:
            return text_tokens(part.code_execution_result.output)
        if part.inline_data is not None or part.file_data is not None:
            return MEDIA_TOKENS
        return 0

    def content_tokens(self, content: types.Content) -> int:
        """Tokens of one content: its parts plus the turn markers."""
        return CONTENT_OVERHEAD_TOKENS + sum(self.part_tokens(p) for p in content.parts or ())

    def contents_tokens(self, contents: Iterable[types.Content]) -> int:
        """Tokens of a list of contents, e.g. an `LlmRequest.contents`."""
        return sum(self.content_tokens(c) for c in contents)


_ESTIMATOR = Estimator()


def part_tokens(part: types.Part) -> int:
    """Tokens of one part: text, a function call or response, code, or media."""
    return _ESTIMATOR.part_tokens(part)


def content_tokens(content: types.Content) -> int:
    """Tokens of one content: its parts plus the turn markers."""
    return _ESTIMATOR.content_tokens(content)


def contents_tokens(contents: Iterable[types.Content]) -> int:
    """Tokens of a list of contents, e.g. an `LlmRequest.contents`."""
    return _ESTIMATOR.contents_tokens(contents)


class TokenCache:
    """Token estimates of the tool payloads stored in session events, kept across model calls.

    ADK rebuilds a request's contents from the session's events on every model call, and a
    session service hands out fresh copies of the events on every load, so neither the contents
    nor their payload objects outlive an invocation. What does is where a payload is stored: an
    event of an earlier invocation is stored, and a stored event never changes. Within a call,
    the request's copies share their payload objects with the session's events (ADK copies parts
    shallowly), which is how a request payload finds its event. Events of the running invocation
    are not keyed: they are not yet what the store holds (a session service may redact them on
    the way in, or round-trip values through JSON). This relies on ADK's rule that request
    processors and plugins replace parts, never change a payload in place.
    """

    def __init__(self, max_entries: int = DEFAULT_CACHE_SIZE) -> None:
        self._tokens: LruCache[PayloadKey, int] = LruCache(max_entries)

    def for_request(self, session: Session, invocation_id: str) -> CachedEstimator:
        """The estimator of one model call of `invocation_id` on `session`.

        Entries are keyed by where a payload is stored (`PayloadKey`: app, user, session,
        event), never by the invocation id, which a client may choose: the id only leaves the
        running invocation's events out (a reused one leaves more out, of the same session)."""
        stored: dict[int, tuple[object, PayloadKey]] = {}
        scope = (session.app_name, session.user_id, session.id)
        for event in session.events:
            if not event.id or event.invocation_id == invocation_id or event.content is None:
                continue
            for index, part in enumerate(event.content.parts or ()):
                call, response = part.function_call, part.function_response
                if call is not None and call.args:
                    stored[id(call.args)] = (call.args, (*scope, event.id, index, "args"))
                if response is not None and response.response:
                    payload = response.response
                    stored[id(payload)] = (payload, (*scope, event.id, index, "response"))
        return CachedEstimator(self._tokens, stored)


class CachedEstimator(Estimator):
    """The estimator of one model call: payloads stored in the session's events are serialised
    once (per `TokenCache`), everything else afresh. Use it for that call only."""

    def __init__(
        self, tokens: LruCache[PayloadKey, int], stored: dict[int, tuple[object, PayloadKey]]
    ) -> None:
        self._tokens = tokens
        self._stored = stored

    def payload_key(self, value: object) -> PayloadKey | None:
        """Where `value` (a request payload object) is stored, or None if it is not."""
        found = self._stored.get(id(value))
        return found[1] if found is not None and found[0] is value else None

    def json_tokens(self, value: object) -> int:
        """Tokens of a JSON payload, remembered when the payload is a stored one."""
        key = self.payload_key(value)
        if key is None:
            return super().json_tokens(value)
        tokens = self._tokens.get(key)
        if tokens is None:
            tokens = super().json_tokens(value)
            self._tokens.put(key, tokens)
        return tokens
