"""Structured profiles' model call: the current profiles plus new material -> field changes.

Owns: the profile prompt (each schema's fields with their JSON schemas, the current values
`neutralise`d, the scope's extra consolidation instructions), the shape of the model's answer,
and its validation into `FieldChange`s: a change names a configured schema and one of its
fields, and its value is valid against that field's JSON schema (`jsonschema`), or it is
dropped (logged by schema and field, never by value), so a bad answer never corrupts a stored
profile and a field absent from the schema is never written. One model call per job, none when
there is no material. It never touches the database: the generator applies the changes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.genai import types
from jsonschema.validators import validator_for
from pydantic import BaseModel, Field

from ...config import StructuredMemorySchemaConfig
from ..models import FieldChange
from ..rendering import neutralise
from .consolidate import app_instructions
from .llm import generate_structured
from .templates import date_guidance, load_template

logger = logging.getLogger(__name__)

_CLOSING_NOTE = (
    "[Note from the memory system, not from the user] The conversation is over. List the "
    "profile fields it changes, as JSON, following your instructions."
)

Profiles = Mapping[str, Mapping[str, Any]]
"""Profiles by schema id: {field: value}."""


class _FieldUpdate(BaseModel):
    schema_id: str = Field(description="The id of the profile the field belongs to.")
    field: str = Field(description="The field's name, as listed.")
    value_json: str = Field(description="The field's new value as JSON text; null clears it.")


class _ProfileAnswer(BaseModel):
    updates: list[_FieldUpdate]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))


def _render_schemas(schemas: Sequence[StructuredMemorySchemaConfig]) -> str:
    blocks = []
    for schema in schemas:
        lines = [f"### Profile `{schema.id}`"]
        lines += [f"- {name}: {_compact(spec)}" for name, spec in schema.fields.items()]
        lines += [
            f"({key}, which the fields' $ref point to: {_compact(schema.json_schema[key])})"
            for key in ("$defs", "definitions")
            if key in schema.json_schema
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _render_current(schemas: Sequence[StructuredMemorySchemaConfig], current: Profiles) -> str:
    """The stored values, one `neutralise`d line each (stored text is data, whoever wrote it)."""
    blocks = []
    for schema in schemas:
        values = current.get(schema.id, {})
        lines = [f"### Profile `{schema.id}`"]
        lines += [
            f"- {name}: {neutralise(_compact(values[name]))}"
            for name in schema.fields
            if name in values
        ] or ["(empty)"]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def profile_instruction(
    schemas: Sequence[StructuredMemorySchemaConfig],
    *,
    instructions: str = "",
    now: datetime | None = None,
) -> str:
    """The profile call's system instruction for these schemas (and the scope's extra
    consolidation instructions, if any)."""
    return load_template("profile").substitute(
        schemas=_render_schemas(schemas),
        date_guidance=date_guidance(now),
        instructions=app_instructions(instructions),
    )


def _validated(
    answer: _ProfileAnswer, schemas: Sequence[StructuredMemorySchemaConfig], current: Profiles
) -> list[FieldChange]:
    """The answer's changes that may be written: a known schema and field, JSON that parses and
    is valid against the field's schema, a real change; the first change of a field wins."""
    by_id = {schema.id: schema for schema in schemas}
    seen: set[tuple[str, str]] = set()
    changes: list[FieldChange] = []
    for update in answer.updates:
        where = (update.schema_id, update.field)
        problem = None
        schema = by_id.get(update.schema_id)
        spec = schema.fields.get(update.field) if schema is not None else None
        value: Any = None
        if spec is None:
            problem = "not a field of a configured schema"
        elif where in seen:
            problem = "changed twice in one answer"
        else:
            try:
                value = json.loads(update.value_json)
            except ValueError:
                problem = "value is not JSON"
        if problem is None and value is not None and schema is not None:
            error = field_error(schema.field_schema(update.field), value)
            problem = f"value not valid against the field's schema ({error})" if error else None
        if problem is not None:
            logger.warning("Profile update %s.%s dropped: %s.", *where, problem)
            continue
        seen.add(where)
        stored = current.get(update.schema_id, {})
        if value is None:
            if update.field in stored:
                changes.append(FieldChange(update.schema_id, update.field, clear=True))
        elif update.field not in stored or stored[update.field] != value:
            changes.append(FieldChange(update.schema_id, update.field, value))
    return changes


def field_error(spec: Mapping[str, Any], value: Any) -> str | None:
    """Why `value` is not valid against a field's JSON schema `spec`; None when it is."""
    validator = validator_for(spec)(spec)
    error = next(iter(validator.iter_errors(value)), None)
    return None if error is None else error.message[:200]


async def update_profiles(
    llm: BaseLlm,
    schemas: Sequence[StructuredMemorySchemaConfig],
    current: Profiles,
    *,
    conversation: Sequence[types.Content] = (),
    facts: Sequence[str] = (),
    instructions: str = "",
    now: datetime | None = None,
    timeout: float = 60.0,
) -> list[FieldChange]:
    """The changes the new material (a conversation, or facts) makes to the scope's profiles,
    decided in one model call; none, and no call, without schemas or material."""
    if not schemas or not (conversation or facts):
        return []
    if facts:
        material = "\n".join(f"{n}. {neutralise(fact)}" for n, fact in enumerate(facts, 1))
    else:
        material = "The conversation is in the messages that follow."
    opening = load_template("profile_input").substitute(
        current=_render_current(schemas, current), material=material
    )
    contents = [types.Content(role="user", parts=[types.Part(text=opening)])]
    if conversation:
        contents += [
            *conversation,
            types.Content(role="user", parts=[types.Part(text=_CLOSING_NOTE)]),
        ]
    answer = await generate_structured(
        llm,
        system_instruction=profile_instruction(schemas, instructions=instructions, now=now),
        contents=contents,
        schema=_ProfileAnswer,
        timeout=timeout,
    )
    return _validated(answer, schemas, current)
