"""The memory service's URI options: which query parameters a memory service URI takes, the
environment variables that fill those it leaves out, and the `PostgresMemoryService`
arguments and typed settings they mean (the retrieval and TTL config, the embedder, the
generation model).

Owns: the memory column of the URI option table (the grammar is
`adk_memory/settings/uri.py`'s) and `MemorySettings`, what a memory service URI resolves to
(it lives here, not in `adk_memory.settings`, because it holds memory's own types). It
never connects and never calls a model: a model or embedder named in a URI is only built (an
unknown name fails here, at start-up) and called when memories are generated or searched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.models.base_llm import BaseLlm
from pydantic import ValidationError

from ...config import MemoryBankConfig, RetrievalConfig, TtlConfig
from ...errors import InputValidationError
from ...redaction import Redactor
from ...settings.database import DatabaseSettings, database_from
from ...settings.uri import (
    COMMON_OPTIONS,
    REPLICA_VARIABLES,
    TIMEOUT_VARIABLES,
    Parser,
    boolean,
    choice,
    count,
    number,
    parse_service_uri,
    text,
    uri_connection_arguments,
    without_agents_dir,
)
from ...settings.variables import (
    EMBEDDING_MODEL_ENV,
    MEMORY_TTL_ENV,
    MODEL_ENV,
    REDACT_ENV,
    SCHEMA_ENV,
    parse_duration,
    parse_embedding_model,
)
from ..embeddings import Embedder, GeminiEmbedder
from ..generation import resolve_llm


def _model(raw: str) -> BaseLlm:
    """The generation model, resolved while parsing so an unknown name fails at start-up
    (resolving builds the client object only; nothing is called)."""
    return resolve_llm(text(raw))


MEMORY_OPTIONS: Mapping[str, Parser] = {
    **COMMON_OPTIONS,
    "model": _model,  # generation model, e.g. gemini-2.5-flash (unset: raw events)
    "embedding_model": parse_embedding_model,  # Gemini embedding model (none: full text only)
    "embedding_dimensions": count(1),  # embedding size (default 768)
    "retrieval_mode": choice("hybrid", "vector", "text"),
    "top_k": count(1),  # memories ADK's search_memory returns (default 3)
    "text_search_language": text,  # Postgres text-search configuration or auto (english)
    "min_similarity": number,  # cosine floor of vector results (default: the embedder's)
    "min_text_relevance": number,  # text-relevance floor, 0..1 (default 0)
    "temporal_cues": boolean,  # match times the query names against memory time (default true)
    "memory_ttl": parse_duration,  # how long memories live (default forever)
    "revision_ttl": parse_duration,  # how long memory revisions are kept (default forever)
    "worker": boolean,  # run generation jobs in this process (default true)
}
"""adk-memory's options for a memory service URI."""

MEMORY_VARIABLES: Mapping[str, str] = {
    "schema": SCHEMA_ENV,
    "model": MODEL_ENV,
    "embedding_model": EMBEDDING_MODEL_ENV,
    "memory_ttl": MEMORY_TTL_ENV,
    "redact": REDACT_ENV,
    **TIMEOUT_VARIABLES,
    **REPLICA_VARIABLES,
}
"""The environment variable each memory option is read from when the URI leaves it out."""


def _memory_config(options: dict[str, Any]) -> MemoryBankConfig:
    """The retrieval and TTL options, validated by the config's own rules."""
    retrieval = _take(options, retrieval_mode="mode", top_k="top_k")
    retrieval |= _take(
        options,
        text_search_language="text_search_language",
        min_similarity="min_similarity",
        min_text_relevance="min_text_relevance",
        temporal_cues="temporal_cues",
    )
    ttl = _take(options, memory_ttl="default_ttl", revision_ttl="revision_ttl")
    try:
        return MemoryBankConfig(retrieval=RetrievalConfig(**retrieval), ttl=TtlConfig(**ttl))
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise InputValidationError(
            f"Invalid memory service URI option ({problem['loc'][-1]}): {problem['msg']}."
        ) from exc


def _take(options: dict[str, Any], **renames: str) -> dict[str, Any]:
    """Remove the named options that are present, keyed by their config field names; a None
    value (`embedding_model=none`) is left out."""
    taken = {field: options.pop(name) for name, field in renames.items() if name in options}
    return {field: value for field, value in taken.items() if value is not None}


def memory_arguments(uri: str, environ: Mapping[str, str] | None) -> dict[str, Any]:
    """The `PostgresMemoryService` arguments a memory service URI means. Without `model` it
    remembers raw events; with one (e.g. `model=gemini-2.5-flash`) it generates memories.
    Without `embedding_model` (or with `none`) it searches full text only and needs no API key;
    `embedding_model=gemini-embedding-001` adds vector search (`GeminiEmbedder`). `environ`
    (default `os.environ`) is read for the password, the data directory and
    `MEMORY_VARIABLES`."""
    target = parse_service_uri(uri, "memory", MEMORY_OPTIONS, MEMORY_VARIABLES, environ)
    options = dict(target.options)
    settings = uri_connection_arguments(target, options, {})
    config = _memory_config(options)
    embedding = _take(options, embedding_model="model", embedding_dimensions="dimensions")
    if embedding and "model" not in embedding:
        raise InputValidationError("embedding_dimensions needs embedding_model.")
    if config.retrieval.mode == "vector" and not embedding:
        raise InputValidationError("retrieval_mode=vector needs embedding_model.")
    return {
        **settings,
        "embedder": GeminiEmbedder(**embedding) if embedding else None,
        "llm": options.pop("model", None),
        "config": config,
        "run_worker": options.pop("worker", True),
        "redactor": options.pop("redact", None),
        # A URI's options are this process's own settings, not the app's configuration: its
        # generations name the app's pushed configuration (`adk-memory config push`), if any.
        "publish_config": False,
    }


@dataclass(frozen=True)
class MemorySettings:
    """What a memory service URI means to `PostgresMemoryService`, resolved: its database
    (`adk_memory.settings.DatabaseSettings`) and the service's own settings."""

    database: DatabaseSettings
    embedder: Embedder | None
    llm: BaseLlm | None
    config: MemoryBankConfig
    run_worker: bool
    redactor: Redactor | None
    publish_config: bool


def memory_settings_from_uri(
    uri: str, environ: Mapping[str, str] | None, adk_arguments: Mapping[str, Any]
) -> MemorySettings:
    """The settings a memory service URI means (`memory_arguments`), the database resolved as
    arguments written in code are (`adk_memory.settings.database_settings`). `adk_arguments`
    are what ADK passed beside the URI: only `agents_dir` (ignored) is expected."""
    unexpected = sorted(without_agents_dir(adk_arguments))
    if unexpected:
        raise InputValidationError(f"Unexpected memory service arguments: {', '.join(unexpected)}.")
    arguments = memory_arguments(uri, environ)
    database = database_from(arguments, owner="PostgresMemoryService", environ=environ)
    return MemorySettings(database, **arguments)
