"""Vertex AI Agent Engine records (Memory Bank memories and revisions, sessions and their
events) in the JSON the REST API speaks, and their adk-memory counterparts, both ways.

Owns: the mapping. A memory's `fact`, `scope` (kept as it is: Memory Bank and adk-memory scope
memories alike, ADK's calls by `{app_name, user_id}`), `topics` (a managed topic by its enum
name, as adk-memory stores managed topics; a custom one by its label), `metadata` (typed values
unwrapped), `createTime`, `updateTime` and `expireTime` (the time left becomes the TTL); a
revision's fact, labels, extracted facts and times; a session's user, state and time; an event
from its `rawEvent` (the whole ADK event, which ADK's `VertexAiSessionService` writes), else
from the named fields, as that service reads them back. Times are RFC 3339 (`Z`, up to 9
fractional digits), read with the fraction cut to microseconds.

It never reads a network or a database, and it raises only `InputValidationError`, naming the
record, for a record it cannot read.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.session import Session
from pydantic import ValidationError

from ..config import ManagedTopic
from ..errors import InputValidationError
from ..memory.models import (
    Memory,
    MemoryAction,
    MemoryFact,
    MemoryRevision,
    PastRevision,
    SourceType,
)
from ..memory.scope import Scope, validate_scope

KEY_PREFIX = "vertex:"
"""A memory's `MemoryFact.key` is this and its Memory Bank resource name: importing it again
(or resuming) finds the memory written the first time."""

_TIME = re.compile(r"^(.*?T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?$", re.IGNORECASE)
_MANAGED = {topic.value for topic in ManagedTopic}
_METADATA_KINDS = ("stringValue", "doubleValue", "boolValue", "timestampValue")
_COMPACTION = "_compaction"
_USAGE = "_usage_metadata"
"""Where ADK's Vertex session service keeps an event's compaction and usage in the event's
`customMetadata` when it writes field by field."""


def parse_time(value: object, what: str) -> datetime:
    """An RFC 3339 time (a naive one is UTC)."""
    match = _TIME.match(value) if isinstance(value, str) else None
    if match is None:
        raise InputValidationError(f"{what} is not an RFC 3339 time: {value!r}.")
    head, fraction, zone = match.groups()
    text = head + (f".{fraction[:6].ljust(6, '0')}" if fraction else "")
    text += "+00:00" if zone is None or zone.upper() == "Z" else zone
    try:
        return datetime.fromisoformat(text).astimezone(timezone.utc)
    except ValueError as exc:
        raise InputValidationError(f"{what} is not an RFC 3339 time: {value!r}.") from exc


def format_time(value: datetime) -> str:
    """A time as the API writes it: UTC, `Z`."""
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _optional_time(record: Mapping[str, Any], field: str, what: str) -> datetime | None:
    value = record.get(field)
    return None if value is None else parse_time(value, f"{what} {field}")


def last_part(name: str) -> str:
    """A resource name's id: `.../memories/123` -> `123`."""
    return name.rsplit("/", 1)[-1]


def _resource(record: object, what: str) -> tuple[Mapping[str, Any], str]:
    """A resource and its name; an InputValidationError when it is not an object or has none."""
    if not isinstance(record, Mapping):
        raise InputValidationError(f"A {what} must be a JSON object, got {record!r:.80}.")
    name = record.get("name")
    if not isinstance(name, str) or not name.strip("/"):
        raise InputValidationError(f"A {what} has no resource name: {dict(record)!r:.120}.")
    return record, name


# ------------------------------------------------------------------------------- memories


@dataclass(frozen=True)
class VertexMemory:
    """One Memory Bank memory, read: the scope and the fact to write, and its times."""

    name: str
    scope: Scope
    fact: MemoryFact
    update_time: datetime | None
    expire_time: datetime | None


def _topics(record: Mapping[str, Any], what: str) -> list[str]:
    topics = []
    for topic in record.get("topics") or []:
        label = topic.get("customMemoryTopicLabel") or topic.get("managedMemoryTopic")
        if not isinstance(label, str) or not label:
            raise InputValidationError(f"{what} has a topic without a label: {topic!r}.")
        topics.append(label)
    return topics


def _metadata(record: Mapping[str, Any], what: str) -> dict[str, Any]:
    metadata = {}
    for key, value in (record.get("metadata") or {}).items():
        kinds = [kind for kind in _METADATA_KINDS if kind in value]
        if len(kinds) != 1:
            raise InputValidationError(f"{what} metadata {key!r} is not one typed value.")
        metadata[key] = value[kinds[0]]
    return metadata


def read_memory(record: object) -> VertexMemory | None:
    """A Memory resource as its fact to import (keyed by its name); None for a memory with no
    natural-language fact (a structured profile's, which adk-memory does not hold)."""
    record, name = _resource(record, "memory")
    what = f"Memory {name}"
    fact = record.get("fact")
    if not fact:
        return None
    if not isinstance(fact, str):
        raise InputValidationError(f"{what}: fact is not a string.")
    create_time = _optional_time(record, "createTime", what)
    update_time = _optional_time(record, "updateTime", what)
    try:
        scope = validate_scope(record.get("scope"))
    except InputValidationError as exc:
        raise InputValidationError(f"{what}: {exc}") from exc
    return VertexMemory(
        name=name,
        scope=scope,
        fact=MemoryFact(
            fact,
            key=KEY_PREFIX + name,
            topics=_topics(record, what),
            metadata=_metadata(record, what),
            # Memory Bank keeps no provenance and most of its memories were extracted from
            # conversations: as bootstrapped data, no later correction by the user could
            # change them (`memory.trust`).
            source_type=SourceType.IMPLICIT,
            create_time=create_time,
            update_time=update_time or create_time,
        ),
        update_time=update_time or create_time,
        expire_time=_optional_time(record, "expireTime", what),
    )


@dataclass(frozen=True)
class VertexProfile:
    """One Memory Bank structured profile memory, read: its scope, schema and field values."""

    name: str
    scope: Scope
    schema_id: str
    data: dict[str, Any]
    update_time: datetime | None


def read_profile(record: object) -> VertexProfile | None:
    """A Memory resource holding a structured profile (`structuredContent`: `schemaId` and
    `data`, Memory Bank's `STRUCTURED_PROFILE` memories) as its fields to import; None for any
    other memory."""
    record, name = _resource(record, "memory")
    what = f"Memory {name}"
    content = record.get("structuredContent")
    if content is None:
        return None
    if not isinstance(content, Mapping) or not isinstance(content.get("schemaId"), str):
        raise InputValidationError(f"{what}: structuredContent has no schemaId.")
    data = content.get("data") or {}
    if not isinstance(data, Mapping):
        raise InputValidationError(f"{what}: structuredContent data is not an object.")
    try:
        scope = validate_scope(record.get("scope"))
    except InputValidationError as exc:
        raise InputValidationError(f"{what}: {exc}") from exc
    update_time = _optional_time(record, "updateTime", what)
    return VertexProfile(
        name=name,
        scope=scope,
        schema_id=content["schemaId"],
        data=dict(data),
        update_time=update_time or _optional_time(record, "createTime", what),
    )


def _metadata_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, (int, float)):
        return {"doubleValue": value}
    return {"stringValue": value if isinstance(value, str) else str(value)}


def write_memory(memory: Memory, name: str) -> dict[str, Any]:
    """A memory as a Memory resource named `name` (what `read_memory` reads back). Fields
    Memory Bank has no place for (importance, confidence, source, structured content) are left
    out; metadata values other than strings, numbers and booleans are written as text."""
    record: dict[str, Any] = {
        "name": name,
        "fact": memory.fact,
        "scope": dict(memory.scope),
        "createTime": format_time(memory.create_time),
        "updateTime": format_time(memory.update_time),
    }
    if memory.topics:
        record["topics"] = [
            {"managedMemoryTopic": t} if t in _MANAGED else {"customMemoryTopicLabel": t}
            for t in memory.topics
        ]
    if memory.metadata:
        record["metadata"] = {k: _metadata_value(v) for k, v in memory.metadata.items()}
    if memory.expire_time is not None:
        record["expireTime"] = format_time(memory.expire_time)
    return record


def write_revision(revision: MemoryRevision, memory_name: str) -> dict[str, Any]:
    """A revision as a MemoryRevision resource under the memory `memory_name`, its action kept
    as a label (so an export read back by `import vertex-jsonl` keeps it)."""
    record = revision_resource(revision, memory_name)
    record["labels"] = {"action": revision.action.value, **revision.labels}
    return record


def revision_resource(revision: MemoryRevision, memory_name: str) -> dict[str, Any]:
    """A revision as Memory Bank's MemoryRevision resource, its labels as stored (what the REST
    surface answers; `write_revision` adds the action for exports)."""
    record: dict[str, Any] = {
        "name": f"{memory_name}/revisions/{revision.id}",
        "createTime": format_time(revision.create_time),
        "labels": {**revision.labels},
    }
    if revision.fact is not None:
        record["fact"] = revision.fact
    if revision.extracted_facts:
        record["extractedMemories"] = [{"fact": fact} for fact in revision.extracted_facts]
    if revision.expire_time is not None:
        record["expireTime"] = format_time(revision.expire_time)
    return record


# ------------------------------------------------------------------------------- sessions


@dataclass(frozen=True)
class VertexSession:
    """One Agent Engine session, read: its id, user, state and last update."""

    name: str
    id: str
    user_id: str
    state: dict[str, Any]
    update_time: datetime | None


def read_session(record: object) -> VertexSession:
    record, name = _resource(record, "session")
    user_id = record.get("userId")
    if not isinstance(user_id, str) or not user_id:
        raise InputValidationError(f"Session {name} has no userId.")
    state = record.get("sessionState") or {}
    if not isinstance(state, dict):
        raise InputValidationError(f"Session {name}: sessionState is not an object.")
    return VertexSession(
        name=name,
        id=last_part(name),
        user_id=user_id,
        state=state,
        update_time=_optional_time(record, "updateTime", f"Session {name}"),
    )


def _from_fields(record: Mapping[str, Any], name: str) -> dict[str, Any]:
    """An event written field by field (no `rawEvent`), as ADK's Vertex service reads it."""
    metadata = record.get("eventMetadata") or {}
    custom = dict(metadata.get("customMetadata") or {})
    compaction, usage = custom.pop(_COMPACTION, None), custom.pop(_USAGE, None)
    actions = {
        ("transferToAgent" if key == "transferAgent" else key): value
        for key, value in (record.get("actions") or {}).items()
    }
    if compaction:
        actions["compaction"] = compaction
    fields: dict[str, Any] = {
        "id": last_part(name),
        "actions": actions,
        "content": record.get("content"),
        "errorCode": record.get("errorCode"),
        "errorMessage": record.get("errorMessage"),
        "customMetadata": custom or None,
        "usageMetadata": usage,
        "longRunningToolIds": set(metadata.get("longRunningToolIds") or []) or None,
    }
    for key in ("partial", "turnComplete", "interrupted", "branch", "groundingMetadata"):
        fields[key] = metadata.get(key)
    return {key: value for key, value in fields.items() if value is not None}


def read_event(record: object) -> Event:
    """A SessionEvent resource as the ADK event it holds."""
    record, name = _resource(record, "session event")
    raw = record.get("rawEvent")
    fields = copy.deepcopy(dict(raw)) if isinstance(raw, Mapping) and raw else None
    if fields is None:
        fields = _from_fields(record, name)
    elif not fields.get("id"):
        fields["id"] = last_part(name)
    fields.pop("invocation_id", None)
    fields["invocationId"] = record.get("invocationId") or ""
    fields["author"] = record.get("author") or fields.get("author") or "user"
    if record.get("timestamp") is not None:
        fields["timestamp"] = parse_time(record["timestamp"], f"Event {name} timestamp").timestamp()
    try:
        return Event.model_validate(fields)
    except ValidationError as exc:
        reason = exc.errors()[0]
        where = ".".join(map(str, reason["loc"]))
        raise InputValidationError(f"Event {name}: {where}: {reason['msg']}") from exc


def write_session(session: Session, name: str) -> dict[str, Any]:
    """A session (without its events) as a Session resource named `name`."""
    return {
        "name": name,
        "userId": session.user_id,
        "sessionState": dict(session.state),
        "updateTime": format_time(datetime.fromtimestamp(session.last_update_time, timezone.utc)),
    }


def write_event(event: Event, session_name: str) -> dict[str, Any]:
    """An event as a SessionEvent resource of the session `session_name`: the named fields the
    API lists, and the whole event in `rawEvent`, as ADK's Vertex service writes it."""
    raw = event.model_dump(exclude_none=True, mode="json", by_alias=True)
    record: dict[str, Any] = {
        "name": f"{session_name}/events/{event.id}",
        "author": event.author,
        "invocationId": event.invocation_id,
        "timestamp": format_time(datetime.fromtimestamp(event.timestamp, timezone.utc)),
        "rawEvent": raw,
    }
    if "content" in raw:
        record["content"] = raw["content"]
    return record


def read_revisions(records: Sequence[object]) -> list[PastRevision]:
    """A memory's MemoryRevision resources as its past revisions, oldest first: the oldest is
    its creation (CREATED), each later one an UPDATED; labelled with where they came from."""
    revisions = []
    for record in records:
        record, name = _resource(record, "memory revision")
        what = f"Revision {name}"
        fact = record.get("fact")
        if fact is not None and not isinstance(fact, str):
            raise InputValidationError(f"{what}: fact is not a string.")
        labels = record.get("labels") or {}
        if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
            raise InputValidationError(f"{what}: labels are not strings.")
        extracted = [m.get("fact") for m in record.get("extractedMemories") or []]
        revisions.append(
            PastRevision(
                key=name,
                fact=fact,
                create_time=parse_time(record.get("createTime"), f"{what} createTime"),
                labels={**labels, "imported_from": "vertex", "vertex_revision": name},
                extracted_facts=[f for f in extracted if isinstance(f, str) and f],
                expire_time=_optional_time(record, "expireTime", what),
            )
        )
    revisions.sort(key=lambda r: r.create_time)
    return [
        replace(r, action=MemoryAction.CREATED) if i == 0 else r for i, r in enumerate(revisions)
    ]
