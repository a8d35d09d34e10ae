"""Memory Bank's own configuration JSON, read as adk-memory's `MemoryBankConfig` and written back.

Owns: the mapping between Vertex AI Memory Bank's `context_spec.memory_bank_config` (as its REST
API and SDK spell it: snake_case or camelCase; `ttl_config` with durations such as "3600s",
`managed_memory_topic` / `custom_memory_topic` topics, few-shot examples with a
`conversation_source`, `structured_memory_configs` whose `memory_schema` is an OpenAPI schema,
`generation_config`, `similarity_search_config`, `disable_memory_revisions`) and the fields of
`config.MemoryBankConfig`, both ways; and the list of Memory Bank fields adk-memory does not
implement, each refused by name (`UnsupportedConfigError`) instead of dropped. A document may mix
both shapes (our own fields pass through untouched, for pydantic to judge); a field given in both
shapes at once is an error. It never validates our own fields (the models do), never reads a file
or the environment, and imports nothing of the package but its errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .errors import UnsupportedConfigError

Doc = dict[str, Any]

_DURATION = TypeAdapter(timedelta)
"""A duration as our models dump it (ISO 8601) or take it."""

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake(name: str) -> str:
    """`customizationConfigs` -> `customization_configs` (a snake_case name is unchanged)."""
    return _CAMEL.sub("_", name).lower()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _unsupported(path: str, why: str) -> UnsupportedConfigError:
    return UnsupportedConfigError(f"Memory Bank's {path} is not supported by adk-memory: {why}")


def _object(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{path} must be an object")
    return value


def _list(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{path} must be a list")
    return value


def _fields(
    obj: object, path: str, known: Mapping[str, Callable[[Any, str], Any]], out: Doc
) -> Doc:
    """Read `obj`'s fields into `out`: a Memory Bank field (`known`, by its snake_case name,
    given in either case) through its handler, which returns (our name, value) pairs to set;
    any other field unchanged (one of ours). A field given twice (both cases, or ours and
    Memory Bank's) is a ValueError."""
    for key, value in _object(obj, path).items():
        name = snake(key)
        handler = known.get(name)
        pairs = handler(value, f"{path}.{name}" if path else name) if handler else [(key, value)]
        for ours, mapped in pairs:
            if ours in out:
                raise ValueError(f"{path or 'the configuration'}: {ours} is given twice")
            out[ours] = mapped
    return out


Handler = Callable[[Any, str], list[tuple[str, Any]]]
"""Reads one Memory Bank field (its value, its path) as (our name, value) pairs."""


def _each(read: Callable[[Any, str], Any], ours: str) -> Handler:
    """A list field, each object in it read by `read` (its path indexed). Anything else (a
    tuple of our models, a value of the wrong type) is left for the models to judge."""

    def each(value: Any, path: str) -> list[tuple[str, Any]]:
        if not isinstance(value, list):
            return [(ours, value)]
        return [
            (
                ours,
                [
                    read(v, f"{path}[{i}]") if isinstance(v, Mapping) else v
                    for i, v in enumerate(value)
                ],
            )
        ]

    return each


def _same(name: str) -> Handler:
    return lambda value, path: [(name, value)]


def _default_only(default: Any, why: str) -> Handler:
    """A Memory Bank switch adk-memory always behaves as its `default` value does: that value
    (or null) is accepted and dropped (it changes nothing), any other refused."""

    def check(value: Any, path: str) -> list[tuple[str, Any]]:
        if value is None or value == default:
            return []
        raise _unsupported(f"{path}={value!r}", why)

    return check


# -------------------------------------------------------------------------------- durations


def duration(value: object, path: str) -> float:
    """A protobuf Duration as JSON gives it ("3600s", "1.5s") or a number of seconds."""
    if isinstance(value, bool):
        raise ValueError(f"{path} must be a duration such as '3600s'")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?s", value.strip()):
        return float(value.strip()[:-1])
    raise ValueError(f"{path} must be a duration such as '3600s', got {value!r}")


def _seconds(value: timedelta) -> str:
    """A protobuf Duration's JSON form: "3600s", "0.5s"."""
    return f"{value.total_seconds():.9f}".rstrip("0").rstrip(".") + "s"


# ------------------------------------------------------------------------------- from Memory Bank


def _ttl(value: Any, path: str) -> list[tuple[str, Any]]:
    def ttl(ours: str) -> Handler:
        return lambda v, p: [(ours, None if v is None else duration(v, p))]

    granular = {
        name: ttl(name) for name in ("create_ttl", "generate_created_ttl", "generate_updated_ttl")
    }

    def nested(v: Any, p: str) -> list[tuple[str, Any]]:
        return list(_fields(v, p, granular, {}).items())

    known = {
        "default_ttl": ttl("default_ttl"),
        "memory_revision_default_ttl": ttl("revision_ttl"),
        "granular_ttl_config": nested,
        "granular_ttl": nested,  # the docs' spelling
    }
    return [("ttl", _fields(value, path, known, {}))]


def model_name(value: object, path: str) -> str:
    """`projects/P/locations/L/publishers/google/models/gemini-2.5-flash` -> its model id (the
    name ADK's model registry and google-genai take); a bare id is unchanged."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{path} must be a model name")
    return value.strip().rsplit("/models/", 1)[-1]


def _generation(value: Any, path: str) -> list[tuple[str, Any]]:
    known = {
        "model": lambda v, p: [("model", model_name(v, p))],
        "generation_trigger_config": lambda v, p: [("trigger", trigger(v, p))],
    }
    return [("generation", _fields(value, path, known, {}))]


def trigger(value: Any, path: str) -> Doc | None:
    """Memory Bank's `MemoryGenerationTriggerConfig` (`{"generation_rule": {...}}`, durations
    such as "600s") as our `GenerationTrigger` fields; no rule is None (flush at once)."""
    found = {snake(k): v for k, v in _object(value, path).items()}
    unknown = sorted(found.keys() - {"generation_rule"})
    if unknown:
        raise ValueError(f"{path}: unknown field(s) {', '.join(unknown)}")
    if found.get("generation_rule") is None:
        return None
    rule_path = f"{path}.generation_rule"

    def seconds(name: str) -> Handler:
        return lambda v, p: [(name, None if v is None else duration(v, p))]

    known = {"fixed_interval": seconds("fixed_interval"), "idle_duration": seconds("idle_duration")}
    rule = _object(found["generation_rule"], rule_path)
    names = {snake(k): v for k, v in rule.items()}  # every field is Memory Bank's: snake_case
    if len(names) < len(rule):
        raise ValueError(f"{rule_path}: a field is given twice")
    return _fields(names, rule_path, known, {})


def _similarity(value: Any, path: str) -> list[tuple[str, Any]]:
    known = {"embedding_model": lambda v, p: [("embedding_model", model_name(v, p))]}
    return [("retrieval", _fields(value, path, known, {}))]


def _topic(value: Any, path: str) -> Any:
    if not isinstance(value, Mapping):
        return value  # ours: a managed topic's name, or a custom topic's fields
    found = {snake(key): item for key, item in value.items()}
    if "managed_memory_topic" in found:
        managed = _object(found["managed_memory_topic"], f"{path}.managed_memory_topic")
        return {snake(k): v for k, v in managed.items()}.get("managed_topic_enum")
    if "custom_memory_topic" in found:
        custom = _object(found["custom_memory_topic"], f"{path}.custom_memory_topic")
        return {snake(k): v for k, v in custom.items()}
    return value


def _example(value: Any, path: str) -> Any:
    found = {snake(key): item for key, item in _object(value, path).items()}
    if "conversation_source" not in found:
        return value  # ours
    out: Doc = {}
    for name, item in found.items():
        if name == "conversation_source":
            source = {snake(k): v for k, v in _object(item, f"{path}.{name}").items()}
            events = _list(source.get("events") or [], f"{path}.{name}.events")
            out["conversation"] = [
                _object(event, f"{path}.{name}.events[{i}]").get("content")
                for i, event in enumerate(events)
            ]
        elif name == "generated_memories":
            out["generated_memories"] = [
                _generated(memory, f"{path}.generated_memories[{i}]")
                for i, memory in enumerate(_list(item, f"{path}.{name}"))
            ]
        else:
            out[name] = item
    return out


def _generated(value: Any, path: str) -> Any:
    if not isinstance(value, Mapping):
        return value  # ours: the fact itself
    found = {snake(key): item for key, item in value.items()}
    if found.get("topics"):
        raise _unsupported(
            f"{path}.topics",
            "a few-shot example's memories are facts only (their topics come from extraction)",
        )
    return found.get("fact")


def _consolidation(value: Any, path: str) -> list[tuple[str, Any]]:
    known = {"revisions_per_candidate_count": _same("revisions_per_candidate_count")}
    return [("consolidation_config", _fields(value, path, known, {}))]


def _customization(value: Any, path: str) -> Doc:
    known = {
        "scope_keys": _same("scope_keys"),
        "memory_topics": _each(_topic, "memory_topics"),
        "generate_memories_examples": _each(_example, "generate_memories_examples"),
        "disable_natural_language_memories": _same("disable_natural_language_memories"),
        "consolidation_config": _consolidation,
        "enable_third_person_memories": _default_only(
            False, "memories are written as facts about the user, in the user's words"
        ),
    }
    return _fields(value, path, known, {})


def json_schema(value: object, path: str) -> Doc:
    """Memory Bank's `memory_schema` (an OpenAPI schema, `google.genai.types.Schema`: types in
    capitals, `nullable`) as the JSON schema our profiles validate against. google-genai is
    imported here, not at the top: `config` imports this module, and commands that only read a
    pid file (`adk-memory db status`) must not load it."""
    from google.genai import types as genai_types

    try:
        schema = genai_types.Schema.model_validate(value)
    except ValidationError as exc:
        raise ValueError(f"{path} is not a schema: {exc.errors()[0]['msg']}") from exc
    dumped: Doc = schema.json_schema.model_dump(mode="json", exclude_none=True, by_alias=True)
    return dumped


def _schema_config(value: Any, path: str) -> Doc:
    known = {
        "memory_schema": lambda v, p: [("json_schema", json_schema(v, p))],
        "memory_type": _same("memory_type"),
    }
    return _fields(value, path, known, {})


def _structured(value: Any, path: str) -> Doc:
    known = {
        "scope_keys": _same("scope_keys"),
        "schema_configs": _each(_schema_config, "schema_configs"),
    }
    return _fields(value, path, known, {})


_TOP: dict[str, Handler] = {
    "customization_configs": _each(_customization, "customization_configs"),
    "structured_memory_configs": _each(_structured, "structured_memory_configs"),
    "ttl_config": _ttl,
    "generation_config": _generation,
    "similarity_search_config": _similarity,
    "disable_memory_revisions": lambda v, p: [("ttl", {"disable_memory_revisions": v})],
}


def _unwrap(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """The memory bank config inside `{"context_spec": {"memory_bank_config": ...}}` or
    `{"memory_bank_config": ...}` (an Agent Engine's or its spec's JSON), else `doc`."""
    for wrapper in ("context_spec", "memory_bank_config"):
        keys = [key for key in doc if snake(key) == wrapper]
        if keys and len(doc) == 1:
            inner = doc[keys[0]]
            return _unwrap(inner) if isinstance(inner, Mapping) else doc
    return doc


def from_memory_bank(doc: Mapping[str, Any]) -> Doc:
    """`doc` (Memory Bank's shape, ours, or a mix) in our shape: Memory Bank's fields mapped,
    the sections both shapes name (`ttl` from `ttl_config`, `generation` from
    `generation_config`, `retrieval` from `similarity_search_config`) merged with ours, our own
    fields unchanged. Raises UnsupportedConfigError for a Memory Bank field adk-memory does not
    implement, ValueError for one of the wrong shape or given twice."""
    plain = {k: v for k, v in _unwrap(doc).items()}
    out: Doc = {}
    for key, value in plain.items():
        name = snake(key)
        handler = _TOP.get(name)
        pairs = handler(value, name) if handler else [(key, value)]
        for ours, mapped in pairs:
            if ours in out and isinstance(out[ours], dict) and isinstance(mapped, Mapping):
                clash = out[ours].keys() & mapped.keys()
                if clash:
                    raise ValueError(f"{ours}: {', '.join(sorted(clash))} given twice")
                out[ours] = {**out[ours], **mapped}
            elif ours in out:
                raise ValueError(f"{ours} is given twice")
            else:
                out[ours] = dict(mapped) if isinstance(mapped, Mapping) else mapped
    return out


def unsupported_cause(exc: ValidationError) -> UnsupportedConfigError | None:
    """The UnsupportedConfigError pydantic wrapped in `exc` (it is a ValueError), if any."""
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, UnsupportedConfigError):
            return cause
    return None


# --------------------------------------------------------------------------------- to Memory Bank


def to_memory_bank(config: Mapping[str, Any]) -> Doc:
    """A configuration in our shape (`MemoryBankConfig.model_dump(mode="json")`) as Memory
    Bank's `memory_bank_config` JSON (camelCase, as its REST API returns it): the fields Memory
    Bank has. Ours without a Memory Bank equivalent (retrieval weights, trust, the job queue's
    retries, consolidation instructions) are left out: they stay in our own shape."""
    from google.genai import types as genai_types  # as in `json_schema`: only when used

    out: Doc = {}
    ttl = {k: v for k, v in (config.get("ttl") or {}).items() if v is not None and v is not False}
    mb_ttl: Doc = {}
    if "default_ttl" in ttl:
        mb_ttl["defaultTtl"] = _seconds(_delta(ttl["default_ttl"]))
    granular = {
        _camel(k): _seconds(_delta(ttl[k]))
        for k in ("create_ttl", "generate_created_ttl", "generate_updated_ttl")
        if k in ttl
    }
    if granular:
        mb_ttl["granularTtlConfig"] = granular
    if "revision_ttl" in ttl:
        mb_ttl["memoryRevisionDefaultTtl"] = _seconds(_delta(ttl["revision_ttl"]))
    if mb_ttl:
        out["ttlConfig"] = mb_ttl
    generation = config.get("generation") or {}
    mb_generation: Doc = {"model": generation["model"]} if generation.get("model") else {}
    rule = {
        _camel(k): _seconds(_delta(v)) if k in ("fixed_interval", "idle_duration") else v
        for k, v in (generation.get("trigger") or {}).items()
        if v not in (None, 0)
    }
    if generation.get("trigger") is not None:
        mb_generation["generationTriggerConfig"] = {"generationRule": rule}
    if mb_generation:
        out["generationConfig"] = mb_generation
    embedding = (config.get("retrieval") or {}).get("embedding_model")
    if embedding:
        out["similaritySearchConfig"] = {"embeddingModel": embedding}
    if ttl.get("disable_memory_revisions"):
        out["disableMemoryRevisions"] = True
    out["customizationConfigs"] = [
        _customization_out(c) for c in config.get("customization_configs") or []
    ]
    structured = [
        {
            **({"scopeKeys": s["scope_keys"]} if s.get("scope_keys") is not None else {}),
            "schemaConfigs": [
                {
                    "id": schema["id"],
                    "memorySchema": genai_types.Schema.from_json_schema(
                        json_schema=genai_types.JSONSchema.model_validate(schema["json_schema"]),
                        api_option="VERTEX_AI",
                    ).model_dump(mode="json", exclude_none=True, by_alias=True),
                    "memoryType": schema.get("memory_type", "STRUCTURED_PROFILE"),
                }
                for schema in s.get("schema_configs") or []
            ],
        }
        for s in config.get("structured_memory_configs") or []
    ]
    if structured:
        out["structuredMemoryConfigs"] = structured
    return out


def _delta(value: object) -> timedelta:
    return _DURATION.validate_python(value)


def _customization_out(config: Mapping[str, Any]) -> Doc:
    out: Doc = {}
    if config.get("scope_keys") is not None:
        out["scopeKeys"] = sorted(config["scope_keys"])
    out["memoryTopics"] = [
        {"managedMemoryTopic": {"managedTopicEnum": topic}}
        if isinstance(topic, str)
        else {"customMemoryTopic": {"label": topic["label"], "description": topic["description"]}}
        for topic in config.get("memory_topics") or []
    ]
    examples = config.get("generate_memories_examples") or []
    if examples:
        out["generateMemoriesExamples"] = [
            {
                "conversationSource": {"events": [{"content": c} for c in e["conversation"]]},
                "generatedMemories": [{"fact": f} for f in e.get("generated_memories") or []],
            }
            for e in examples
        ]
    if config.get("disable_natural_language_memories"):
        out["disableNaturalLanguageMemories"] = True
    count = (config.get("consolidation_config") or {}).get("revisions_per_candidate_count")
    if count:
        out["consolidationConfig"] = {"revisionsPerCandidateCount": count}
    return out
