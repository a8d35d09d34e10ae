"""Memory Bank's JSON shapes: adk-memory's objects as Vertex AI's REST API writes them, and the
request fields it reads.

Owns: the translation, both ways, of memories, revisions, topics, metadata values, generated
memories and profiles (camelCase, RFC 3339 times, Google's `Duration` strings), so the
official clients (`agentplatform` / `vertexai`) parse adk-memory's answers into their own
types. It never calls a service and never reads a request: the routes do.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from ...durations import parse_duration
from ...errors import InputValidationError
from ...memory.models import GenerateMemoriesOperation, Memory, MemoryRevision
from ..vertex_records import format_time, revision_resource, write_memory
from ..vertex_records import parse_time as read_time
from . import keys

_METADATA_KINDS = ("stringValue", "doubleValue", "boolValue", "timestampValue")

Json = dict[str, Any]


def timestamp(moment: datetime | float | None) -> str | None:
    """RFC 3339 text (Google's `Timestamp` in JSON), from a datetime or epoch seconds (a
    session's and an event's times are stored as epoch seconds)."""
    if moment is None:
        return None
    if isinstance(moment, int | float):
        moment = datetime.fromtimestamp(moment, tz=UTC)
    return format_time(moment)


def parse_time(value: Any, field: str) -> datetime | None:
    """A request's RFC 3339 time (Google's nanoseconds and a naive time read as UTC, as
    `vertex_records.parse_time` reads them), or None when absent."""
    return None if value is None else read_time(value, field)


def integer(value: Any, field: str, default: int) -> int:
    """A request's integer (JSON number or query text), `default` when absent."""
    if value is None or value == "":
        return default
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise InputValidationError(f"{field} must be an integer, not {value!r}.") from exc


def duration(value: Any, field: str) -> timedelta | None:
    """A request's `Duration` (`"3600s"`, `"1.5s"`), or None when absent."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputValidationError(f"{field} must be a duration string such as '3600s'.")
    return parse_duration(value)


def topic_names(ids: Any) -> list[str] | None:
    """Memory Bank's topic ids (or plain names) in a request, as our topic names."""
    if ids is None:
        return None
    if not isinstance(ids, list):
        raise InputValidationError("topics must be a list.")
    names: list[str] = []
    for item in ids:
        if isinstance(item, str):
            names.append(item)
            continue
        name = (
            field(item, "managedMemoryTopic") or field(item, "customMemoryTopicLabel")
            if isinstance(item, Mapping)
            else None
        )
        if not isinstance(name, str):
            raise InputValidationError(f"Not a memory topic id: {item!r}.")
        names.append(name)
    return names


def metadata_in(metadata: Any) -> dict[str, Any] | None:
    """Memory Bank's `MemoryMetadataValue`s in a request, as plain values (a timestamp stays
    its text, as our metadata stores JSON)."""
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise InputValidationError("metadata must be an object of MemoryMetadataValue.")
    plain: dict[str, Any] = {}
    for key, value in metadata.items():
        if not isinstance(value, Mapping):
            raise InputValidationError(f"metadata[{key!r}] must be a MemoryMetadataValue.")
        found = [value[kind] for kind in _METADATA_KINDS if kind in value]
        found += [value[k] for k in ("string_value", "double_value", "bool_value") if k in value]
        if len(found) != 1:
            raise InputValidationError(f"metadata[{key!r}] must hold exactly one value.")
        plain[key] = found[0]
    return plain


def memory_name(engine_name: str, scope: Mapping[str, str], memory_id: str) -> str:
    """A memory's resource name (its id carries its scope: `keys`)."""
    return f"{engine_name}/memories/{keys.memory_id(scope, memory_id)}"


def memory_json(memory: Memory, engine_name: str) -> Json:
    """A memory as Memory Bank's `Memory` resource, named under `engine_name` (the resource
    `export vertex-jsonl` writes too: `vertex_records.write_memory`)."""
    return write_memory(memory, memory_name(engine_name, memory.scope, memory.id))


def revision_json(revision: MemoryRevision, memory_name: str) -> Json:
    """A revision as Memory Bank's `MemoryRevision`, its labels as stored."""
    return revision_resource(revision, memory_name)


def generated_json(operation: GenerateMemoriesOperation, engine_name: str) -> Json:
    """A finished generation's `GenerateMemoriesResponse`."""
    generated = []
    for change in operation.generated_memories:
        item: Json = {
            "memory": {"name": memory_name(engine_name, operation.scope, change.memory_id)},
            "action": change.action.value,
        }
        if change.memory is not None:
            item["memory"] = memory_json(change.memory, engine_name)
        generated.append(item)
    return {"generatedMemories": generated}


def field(body: Mapping[str, Any], camel: str) -> Any:
    """A request field by its JSON name (camelCase) or its proto name (snake_case): the
    clients send camelCase, curl users often the other."""
    if camel in body:
        return body[camel]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return body.get(snake)
