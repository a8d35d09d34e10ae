"""Tool-result archiving: large function responses leave the model request for ADK artifacts.

Owns: finding function responses in a model request that are estimated above a token threshold,
saving each one once as an ADK artifact (through the invocation's artifact service, scoped to
its app, user and session), and replacing it *in the request only* with a short function
response: its size, top-level keys, the head of its JSON, and the artifact's filename and
version. The call/response pairing the model API requires is kept (same name and id).

Must never: modify the stored session event (the full result stays in the session), save a
result more than once, or touch another session's artifacts. With a `redactor`, it never lets
an unredacted value of the result into the artifact or the reference: both are made from the
redacted result (`redact_json`: string values; keys and numbers are kept, as everywhere), and so
is the filename's digest.

The artifact filename is derived from the tool name and a digest of the result, not from the
function call id: for Gemini, ADK strips its own `adk-` call ids from request contents, so the id
is not there to read. The digest is deterministic, so every later model call, process and
replica finds the same artifact (an existing one is reused, never re-saved). Each filename holds
exactly one version, so ADK's `load_artifacts` tool (which loads the latest version by name)
reads an archived result back: add it to the agent's tools to let the model ask for one.

ADK rebuilds the request from the session on every model call, so every earlier result comes
back each time. A result stored in the session never changes, so its size, digest and head are
worked out once per process (`tokens.TokenCache` says which results are stored), not per call.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types
from typing_extensions import override

from ..._cache import LruCache
from ...errors import InputValidationError
from ...redaction import Redactor, redact_json
from ...telemetry import traced
from ..tokens import CachedEstimator, PayloadKey, TokenCache

ARTIFACT_PREFIX = "tool_result_"
"""Every archived result's artifact filename starts with this."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_MAX_KEYS = 20
"""Top-level keys listed in a reference (enough to know what to ask for)."""


def _payload(response: dict[str, Any] | None, redactor: Redactor | None) -> str:
    """The result as canonical JSON, redacted first when there is a redactor: what is saved,
    quoted in the reference and digested."""
    value = response or {}
    if redactor is not None:
        value = redact_json(value, redactor)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def artifact_filename(name: str | None, payload: str) -> str:
    """`tool_result_<tool>_<digest>.json`: stable for a given result, safe for every artifact
    service (no `user:` prefix, so it is scoped to the session)."""
    tool = _UNSAFE.sub("_", name or "tool").strip("_")[:48] or "tool"
    digest = hashlib.sha256(f"{name}\0{payload}".encode()).hexdigest()[:24]
    return f"{ARTIFACT_PREFIX}{tool}_{digest}.json"


@dataclass(frozen=True)
class _Archived:
    """What a reference says about a result besides its version: worked out from the result's
    JSON once, then remembered for results stored in the session (they never change)."""

    filename: str
    head: str
    keys: tuple[str, ...]

    @classmethod
    def of(
        cls, response: types.FunctionResponse, head_chars: int, redactor: Redactor | None
    ) -> _Archived:
        """Serialise (redacted) and digest the result (the costly step the cache saves)."""
        payload = _payload(response.response, redactor)
        head = payload[:head_chars]
        return cls(
            filename=artifact_filename(response.name, payload),
            head=head + ("..." if len(head) < len(payload) else ""),
            keys=tuple(sorted(response.response or {})[:_MAX_KEYS]),
        )


class ToolResultArchivePlugin(BasePlugin):
    """Keeps large tool results out of model requests; the model sees a reference instead.

    Needs an artifact service on the Runner (`artifact_service=`). By default the newest tool
    results (those the model is answering right now) are sent whole and archived from the next
    model call on; `archive_latest=True` archives them at once too. Register it before plugins
    that trim requests to a budget, so they measure the smaller request.
    """

    def __init__(
        self,
        *,
        threshold_tokens: int = 2_000,
        head_chars: int = 400,
        archive_latest: bool = False,
        cache_size: int = 10_000,
        redactor: Redactor | None = None,
        name: str = "tool_result_archive",
    ) -> None:
        """Set what counts as large and how much of it the reference keeps.

        Args:
          threshold_tokens: results estimated above this many tokens are archived.
          head_chars: characters of the result's JSON kept in the reference.
          archive_latest: also archive the results in the request's last content (the ones
            the model has not seen yet); off, the model reads a fresh result whole once.
          cache_size: results remembered in this process: artifact versions (so a result is
            looked up in the artifact service once per process, not per call), and the size,
            digest and head of results stored in the session (so they are serialised once, not
            on every model call).
          redactor: redacts the saved artifact and the reference the model gets, e.g.
            `PiiRedactor()`: the stack's redactor. None: both hold the result as it is.
          name: the plugin's name (unique within a Runner).
        """
        if threshold_tokens < 1:
            raise InputValidationError("threshold_tokens must be at least 1.")
        if head_chars < 0:
            raise InputValidationError("head_chars must not be negative.")
        if cache_size < 0:
            raise InputValidationError("cache_size must not be negative.")
        if redactor is not None and not isinstance(redactor, Redactor):
            raise InputValidationError("redactor must have a `redact(text) -> str` method.")
        super().__init__(name)
        self.threshold_tokens = threshold_tokens
        self.head_chars = head_chars
        self.archive_latest = archive_latest
        self.redactor = redactor
        # Keyed by app, user and session, never by an invocation id (a client may choose that):
        # versions by (app, user, session, filename), the filename a digest of the exact result;
        # descriptions by where the result is stored (`PayloadKey` starts with the same three).
        self._versions: LruCache[tuple[str, str, str, str], int] = LruCache(cache_size)
        self._archived: LruCache[tuple[PayloadKey, str | None], _Archived] = LruCache(cache_size)
        self._tokens = TokenCache(cache_size)

    @override
    @traced("compaction.archive", database=False)
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Swap large function responses in the request for references. The request's contents
        are copies, but their parts' payloads are shared with the session's events, so parts are
        replaced, never changed in place."""
        contents = llm_request.contents
        last = len(contents) - 1
        estimator = self._tokens.for_request(
            callback_context.session, callback_context.invocation_id
        )
        for index, content in enumerate(contents):
            if index == last and not self.archive_latest:
                break
            parts = content.parts or []
            sizes = [estimator.part_tokens(p) if p.function_response else 0 for p in parts]
            if max(sizes, default=0) <= self.threshold_tokens:
                continue
            new_parts = [
                await self._reference(callback_context, estimator, part, size)
                if size > self.threshold_tokens
                else part
                for part, size in zip(parts, sizes, strict=True)
            ]
            contents[index] = content.model_copy(update={"parts": new_parts})
        return None

    async def _reference(
        self, context: CallbackContext, estimator: CachedEstimator, part: types.Part, size: int
    ) -> types.Part:
        """The stand-in for one large function response (archiving the result if it is new);
        a part without one (never measured as large) is its own stand-in."""
        response = part.function_response
        if response is None:
            return part
        archived = self._describe(estimator, response)
        version = await self._archive(context, archived.filename, response)
        reference = {
            "archived": True,
            "artifact": archived.filename,
            "version": version,
            "size_tokens": size,
            "keys": list(archived.keys),
            "head": archived.head,
            "note": (
                f"The full result is stored as artifact '{archived.filename}' (version {version}); "
                "this is its beginning."
            ),
        }
        return part.model_copy(
            update={"function_response": response.model_copy(update={"response": reference})}
        )

    def _describe(self, estimator: CachedEstimator, response: types.FunctionResponse) -> _Archived:
        """Filename, head and keys of a result: remembered if it is stored in the session."""
        stored = estimator.payload_key(response.response)
        if stored is None:
            return _Archived.of(response, self.head_chars, self.redactor)
        key = (stored, response.name)
        archived = self._archived.get(key)
        if archived is None:
            archived = _Archived.of(response, self.head_chars, self.redactor)
            self._archived.put(key, archived)
        return archived

    async def _archive(
        self, context: CallbackContext, filename: str, response: types.FunctionResponse
    ) -> int:
        """The artifact version holding this result: remembered, found, or saved now (once)."""
        session = context.session
        key = (session.app_name, session.user_id, session.id, filename)
        version = self._versions.get(key)
        if version is not None:
            return version
        service = context.get_invocation_context().artifact_service
        if service is None:
            raise InputValidationError(
                "ToolResultArchivePlugin needs an artifact service: pass artifact_service= to "
                "the Runner (e.g. InMemoryArtifactService or GcsArtifactService)."
            )
        existing = await service.list_versions(
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.id,
            filename=filename,
        )
        if existing:
            version = max(existing)
        else:
            payload = _payload(response.response, self.redactor).encode()
            blob = types.Blob(mime_type="application/json", data=payload, display_name=filename)
            version = await context.save_artifact(filename, types.Part(inline_data=blob))
        self._versions.put(key, version)
        return version
