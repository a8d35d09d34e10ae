"""Extraction: one model call that turns a conversation into facts worth remembering.

Owns: which parts of a conversation the model sees, the extraction prompt (topics and few-shot
examples from the scope's `CustomizationConfig`), and cleaning the answer (unknown topics,
blanks and repeats removed). It never reads or writes memories: consolidation and the store
decide what the facts do.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime

from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...config import CustomizationConfig, GenerateMemoriesExample
from ...errors import InputValidationError
from ..checks import MAX_FACT_LENGTH
from .llm import generate_structured
from .sources import FactSource
from .templates import date_guidance, load_template
from .topics import render_topics, topic_label, unique_topics

logger = logging.getLogger(__name__)

_TOOL_TEXT_LIMIT = 2000
"""How much of a function call's arguments or response is shown to the model."""

_CLOSING_NOTE = (
    "[Note from the memory system, not from the user] The conversation is over. List the facts "
    "worth remembering from it, as JSON, following your instructions."
)


class ExtractedFact(BaseModel):
    """One piece of information the model found worth remembering (or, with `forget`, asked to
    be forgotten)."""

    model_config = ConfigDict(frozen=True)

    fact: str = Field(description="One self-contained statement.")
    topic: str = Field(description="The label of the topic the fact fits.")
    forget: bool = Field(
        default=False, description="True when the user asked to forget this information."
    )
    source: FactSource = Field(
        default="implicit",
        description="explicit: the user stated it; implicit: implied, or the agent's words the "
        "user accepted; tool: from a tool's output.",
    )


class _Extraction(BaseModel):
    facts: list[ExtractedFact]


def _clip(text: str) -> str:
    return text if len(text) <= _TOOL_TEXT_LIMIT else text[:_TOOL_TEXT_LIMIT] + "..."


def _tool_text(part: types.Part) -> str | None:
    """A function call or response as plain text: it keeps what happened readable to the model
    without the tool declarations, ids and call/response pairing that function parts demand."""
    if part.function_call is not None:
        call = part.function_call
        args = json.dumps(call.args or {}, ensure_ascii=False, default=str)
        return f"[function call] {call.name}({_clip(args)})"
    if part.function_response is not None:
        reply = part.function_response
        body = json.dumps(reply.response or {}, ensure_ascii=False, default=str)
        return f"[function response] {reply.name}: {_clip(body)}"
    return None


def _kept_part(part: types.Part, include_function_calls: bool) -> types.Part | None:
    """The part as the extraction model should see it, or None to drop it. Parts are rebuilt
    rather than copied so nothing model-specific (thought signatures, ids) leaks into a request
    to another model."""
    if part.thought:
        return None
    if part.text is not None and part.text.strip():
        return types.Part(text=part.text)
    if part.inline_data is not None:
        return types.Part(inline_data=part.inline_data, video_metadata=part.video_metadata)
    if part.file_data is not None:
        return types.Part(file_data=part.file_data, video_metadata=part.video_metadata)
    if include_function_calls and (text := _tool_text(part)) is not None:
        return types.Part(text=text)
    return None


def conversation_contents(
    events: Sequence[Event | types.Content], *, include_function_calls: bool = False
) -> list[types.Content]:
    """The conversation as model contents: what was said and shown (text, images, audio, video,
    files), without thoughts and, unless asked, without tool traffic; as Memory Bank, which
    extracts only from text, inline data and file data.

    An event's role follows its author (the user, or else the agent). Empty turns are dropped
    and consecutive turns of one role merged, so the model reads a clean alternation.
    """
    contents: list[types.Content] = []
    for item in events:
        if isinstance(item, Event):
            if item.partial or item.content is None:
                continue
            role, content = ("user" if item.author == "user" else "model"), item.content
        else:
            role, content = ("model" if item.role == "model" else "user"), item
        parts = [
            kept
            for part in content.parts or ()
            if (kept := _kept_part(part, include_function_calls)) is not None
        ]
        if not parts:
            continue
        if contents and contents[-1].role == role:
            contents[-1] = types.Content(role=role, parts=[*(contents[-1].parts or ()), *parts])
        else:
            contents.append(types.Content(role=role, parts=parts))
    return contents


def _example_part_text(part: types.Part) -> str | None:
    if part.text is not None and part.text.strip() and not part.thought:
        return " ".join(part.text.split())
    if part.inline_data is not None:
        return f"[attached {part.inline_data.mime_type or 'file'}]"
    if part.file_data is not None:
        return f"[attached {part.file_data.mime_type or 'file'}: {part.file_data.file_uri}]"
    return None


def _render_example(number: int, example: GenerateMemoriesExample) -> str:
    lines = [f"### Example {number}", "", "Conversation:"]
    for raw in example.conversation:
        try:
            content = types.Content.model_validate(raw)
        except ValidationError as exc:
            raise InputValidationError(
                f"few-shot example {number} has an invalid content: {exc}"
            ) from exc
        speaker = "Agent" if content.role == "model" else "User"
        texts = [t for p in content.parts or () if (t := _example_part_text(p)) is not None]
        if texts:
            lines.append(f"{speaker}: {' '.join(texts)}")
    lines += ["", "Facts to remember:"]
    facts = [" ".join(f.split()) for f in example.generated_memories if f.strip()]
    lines += [f"- {fact}" for fact in facts] or ["(nothing to remember)"]
    return "\n".join(lines)


def extraction_instruction(
    customization: CustomizationConfig, *, now: datetime | None = None
) -> str:
    """The extraction system instruction for a scope's customization."""
    examples = customization.generate_memories_examples
    return load_template("extract").substitute(
        topics=render_topics(customization.memory_topics),
        examples="\n\n".join(_render_example(i, e) for i, e in enumerate(examples, 1))
        or "(none configured)",
        date_guidance=date_guidance(now),
    )


def _cleaned(
    facts: Sequence[ExtractedFact], customization: CustomizationConfig
) -> list[ExtractedFact]:
    """The facts worth keeping: a known topic (spelled as configured), not blank, not repeated.
    Forget requests keep any topic: deleting is always allowed, and a privacy request must not
    be lost to a mislabelled topic."""
    labels = {
        topic_label(t).casefold(): topic_label(t)
        for t in unique_topics(customization.memory_topics)
    }
    seen: set[tuple[str, bool]] = set()
    kept: list[ExtractedFact] = []
    for item in facts:
        text = " ".join(item.fact.split())
        topic = labels.get(item.topic.strip().casefold())
        if not text or (topic is None and not item.forget):
            continue
        if len(text) > MAX_FACT_LENGTH:  # the model is held to the limit a user is
            logger.warning(
                "Extraction: dropped a fact of %d characters (the limit is %d).",
                len(text),
                MAX_FACT_LENGTH,
            )
            continue
        key = (text.casefold(), item.forget)
        if key in seen:
            continue
        seen.add(key)
        # A conversation never yields the application's own (bootstrapped) data.
        source: FactSource = "implicit" if item.source == "bootstrapped" else item.source
        kept.append(
            ExtractedFact(
                fact=text, topic=topic or item.topic.strip(), forget=item.forget, source=source
            )
        )
    return kept


async def extract_facts(
    llm: BaseLlm,
    contents: Sequence[types.Content],
    customization: CustomizationConfig,
    *,
    timeout: float = 60.0,
    now: datetime | None = None,
) -> list[ExtractedFact]:
    """The facts worth remembering from a conversation, in one model call (none for an empty
    conversation). `contents` is the conversation, as from `conversation_contents`; it is sent
    as the request's contents so images, audio and files reach the model as themselves. `now`
    (the conversation's time) lets relative dates become calendar dates.
    """
    if not contents:
        return []
    request_contents = [
        *contents,
        types.Content(role="user", parts=[types.Part(text=_CLOSING_NOTE)]),
    ]
    answer = await generate_structured(
        llm,
        system_instruction=extraction_instruction(customization, now=now),
        contents=request_contents,
        schema=_Extraction,
        timeout=timeout,
    )
    return _cleaned(answer.facts, customization)
