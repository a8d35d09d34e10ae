"""Memory generation's model-facing half: conversation -> facts (extraction, one model call)
-> operations on existing memories (consolidation, at most one more); structured profiles from
the same material (at most one more).

Owns: prompts, topics, the structured model call and the validation of what the model says.
It never touches the database or the job queue; those call in here and apply the result.
"""

from ..models import FieldChange
from .consolidate import MemoryOperation, consolidate, plain_creates
from .extract import ExtractedFact, conversation_contents, extract_facts, extraction_instruction
from .llm import GenerationOutputError, generate_structured, resolve_llm
from .profiles import update_profiles
from .topics import MANAGED_TOPIC_DESCRIPTIONS, render_topics, topic_description, topic_label

__all__ = [
    "MANAGED_TOPIC_DESCRIPTIONS",
    "ExtractedFact",
    "FieldChange",
    "GenerationOutputError",
    "MemoryOperation",
    "consolidate",
    "conversation_contents",
    "extract_facts",
    "extraction_instruction",
    "generate_structured",
    "plain_creates",
    "render_topics",
    "resolve_llm",
    "topic_description",
    "topic_label",
    "update_profiles",
]
