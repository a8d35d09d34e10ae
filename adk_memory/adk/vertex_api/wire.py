"""Memory Bank's JSON shapes: adk-memory's objects as Vertex AI's REST API writes them, and the
request fields it reads.

Owns: the translation, both ways, of memories, revisions, topics, metadata values, generated
memories and profiles (camelCase, RFC 3339 times, Google's `Duration` strings), so the
official clients (`agentplatform` / `vertexai`) parse adk-memory's answers into their own
types. It never calls a service and never reads a request: the routes do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from ...config import ManagedTopic
from ...durations import parse_duration
from ...errors import InputValidationError
from ...memory.models import GenerateMemoriesOperation, Memory, MemoryRevision
from . import keys

_MANAGED = frozenset(topic.value for topic in ManagedTopic)
_METADATA_KINDS = ("stringValue", "doubleValue", "boolValue", "timestampValue")

Json = dict[str, Any]


def timestamp(moment: datetime | float | None) -> str | None:
    """RFC 3339 text (Google's `Timestamp` in JSON), from a datetime or epoch seconds."""
    if moment is None:
        return None
    if isinstance(moment, int | float):
        moment = datetime.fromtimestamp(moment, tz=UTC)
    return moment.isoformat().replace("+00:00", "Z")


def parse_time(value: Any, field: str) -> datetime | None:
    """A request's RFC 3339 time, or None when absent."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        raise InputValidationError(f"{field} is not an RFC 3339 time: {value!r}.") from exc


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


def topic_ids(topics: Sequence[str]) -> list[Json]:
    """Our topic names as Memory Bank's `MemoryTopicId`s (managed or custom)."""
    return [
        {"managedMemoryTopic": t} if t in _MANAGED else {"customMemoryTopicLabel": t}
        for t in topics
    ]


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


def metadata_out(metadata: Mapping[str, Any]) -> Json:
    """Our metadata values as Memory Bank's `MemoryMetadataValue`s."""
    out: Json = {}
    for key, value in metadata.items():
        if isinstance(value, bool):
            out[key] = {"boolValue": value}
        elif isinstance(value, int | float):
            out[key] = {"doubleValue": float(value)}
        elif isinstance(value, datetime):
            out[key] = {"timestampValue": timestamp(value)}
        else:
            out[key] = {"stringValue": value if isinstance(value, str) else str(value)}
    return out


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
    """A memory as Memory Bank's `Memory` resource, named under `engine_name`."""
    out: Json = {
        "name": memory_name(engine_name, memory.scope, memory.id),
        "fact": memory.fact,
        "scope": dict(memory.scope),
        "createTime": timestamp(memory.create_time),
        "updateTime": timestamp(memory.update_time),
    }
    if memory.topics:
        out["topics"] = topic_ids(memory.topics)
    if memory.metadata:
        out["metadata"] = metadata_out(memory.metadata)
    if memory.expire_time is not None:
        out["expireTime"] = timestamp(memory.expire_time)
    return out


def revision_json(revision: MemoryRevision, memory_name: str) -> Json:
    """A revision as Memory Bank's `MemoryRevision` (its labels carry our action)."""
    out: Json = {
        "name": f"{memory_name}/revisions/{revision.id}",
        "createTime": timestamp(revision.create_time),
        "labels": {**revision.labels},
    }
    if revision.fact is not None:
        out["fact"] = revision.fact
    if revision.extracted_facts:
        out["extractedMemories"] = [{"fact": fact} for fact in revision.extracted_facts]
    if revision.expire_time is not None:
        out["expireTime"] = timestamp(revision.expire_time)
    return out


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
