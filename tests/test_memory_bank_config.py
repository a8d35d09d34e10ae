"""Memory Bank's own configuration JSON (`context_spec.memory_bank_config`, as its REST API and SDK
spell it) read as `MemoryBankConfig`, written back, and its unsupported fields refused by name.

Field names and shapes are those of the SDK's types (`ReasoningEngineContextSpecMemoryBankConfig`
and its parts in google-cloud-agentplatform) and of Memory Bank's set-up docs. The database is the
real test server.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import TEST_SCHEMA
from pydantic import ValidationError

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.adk.stack import configure
from adk_memory.config import AppMemoryConfig, CustomTopic, GenerationTrigger, ManagedTopic
from adk_memory.errors import InputValidationError, UnsupportedConfigError
from adk_memory.memory.embeddings import GeminiEmbedder
from adk_memory.memory_bank_json import to_memory_bank
from adk_memory.testing import HashEmbedder

DOCS = json.loads((Path(__file__).parent / "data" / "memory_bank" / "docs_config.json").read_text())
SCOPE = {"app_name": "shop", "user_id": "u1"}

SNAKE: dict[str, Any] = {
    "customization_configs": [
        {
            "scope_keys": ["user_id"],
            "memory_topics": [
                {"managed_memory_topic": {"managed_topic_enum": "USER_PREFERENCES"}},
                {"custom_memory_topic": {"label": "pets", "description": "The user's pets."}},
            ],
            "disable_natural_language_memories": False,
            "enable_third_person_memories": False,
            "consolidation_config": {"revisions_per_candidate_count": 2},
        }
    ],
    "ttl_config": {"default_ttl": "86400s", "memory_revision_default_ttl": "3600s"},
    "generation_config": {
        "model": "projects/p/locations/l/publishers/google/models/gemini-x",
        "generation_trigger_config": {
            "generation_rule": {"event_count": 4, "idle_duration": "600s", "overlap_event_count": 1}
        },
    },
    "similarity_search_config": {"embedding_model": "text-multilingual-embedding-002"},
    "structured_memory_configs": [
        {
            "scope_keys": ["user_id"],
            "schema_configs": [
                {
                    "id": "travel-profile",
                    "memory_type": "STRUCTURED_PROFILE",
                    "memory_schema": {
                        "type": "OBJECT",
                        "properties": {
                            "home_airport": {"type": "STRING", "description": "IATA code"},
                            "seat": {"type": "STRING", "enum": ["aisle", "window"]},
                            "trips": {"type": "INTEGER", "nullable": True},
                        },
                    },
                }
            ],
        }
    ],
    "disable_memory_revisions": True,
}


def camel(value: Any) -> Any:
    """`value` with every key of Memory Bank's structure in camelCase (as its REST API writes
    it), the schema's properties and a conversation's content left alone."""
    if isinstance(value, list):
        return [camel(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        head, *rest = key.split("_")
        name = head + "".join(part.title() for part in rest)
        out[name] = item if key in ("properties", "content") else camel(item)
    return out


def test_snake_and_camel_case_read_alike_and_map_to_ours() -> None:
    config = MemoryBankConfig.model_validate(SNAKE)
    assert MemoryBankConfig.model_validate(camel(SNAKE)) == config
    wrapped = {"contextSpec": {"memoryBankConfig": camel(SNAKE)}}
    assert AppMemoryConfig.model_validate(wrapped) == AppMemoryConfig.of(config)
    [custom] = config.customization_configs
    assert custom.scope_keys == {"user_id"}
    assert custom.memory_topics == (
        ManagedTopic.USER_PREFERENCES,
        CustomTopic(label="pets", description="The user's pets."),
    )
    assert custom.consolidation_config.revisions_per_candidate_count == 2
    assert config.ttl.default_ttl == timedelta(days=1)
    assert config.ttl.revision_ttl == timedelta(hours=1)
    assert config.ttl.disable_memory_revisions and config.ttl.revision_seconds() == 0
    assert config.generation.model == "gemini-x"
    assert config.generation.trigger == GenerationTrigger(
        event_count=4, idle_duration=timedelta(minutes=10), overlap_event_count=1
    )
    assert config.retrieval.embedding_model == "text-multilingual-embedding-002"
    [schema] = config.structured_for(frozenset({"user_id"}))
    assert schema.id == "travel-profile"
    assert schema.fields["seat"] == {"type": "string", "enum": ["aisle", "window"]}
    assert schema.fields["trips"] == {"type": ["null", "integer"]}


def test_the_docs_config_and_ours_round_trip() -> None:
    docs = MemoryBankConfig.model_validate(DOCS)
    assert docs.ttl.create_ttl == timedelta(days=30)  # the docs' `granular_ttl` spelling
    assert docs.customization_configs[0].generate_memories_examples[0].generated_memories == [
        "The user reported that the drip coffee was lukewarm.",
        "The user felt the music in the shop was too loud.",
    ]
    for config in (docs, MemoryBankConfig.model_validate(SNAKE), MemoryBankConfig()):
        written = to_memory_bank(config.model_dump(mode="json"))
        assert MemoryBankConfig.model_validate(written) == config
    written = to_memory_bank(MemoryBankConfig.model_validate(SNAKE).model_dump(mode="json"))
    assert written["ttlConfig"] == {"defaultTtl": "86400s", "memoryRevisionDefaultTtl": "3600s"}
    schema = written["structuredMemoryConfigs"][0]["schemaConfigs"][0]["memorySchema"]
    assert schema["properties"]["trips"] == {"type": "INTEGER", "nullable": True}


@pytest.mark.parametrize(
    ("document", "named"),
    [
        (
            {"customizationConfigs": [{"enableThirdPersonMemories": True}]},
            "customization_configs[0].enable_third_person_memories=True",
        ),
        (
            {
                "customization_configs": [
                    {
                        "generate_memories_examples": [
                            {
                                "conversation_source": {"events": []},
                                "generated_memories": [
                                    {"fact": "x", "topics": [{"managed_memory_topic": "X"}]}
                                ],
                            }
                        ]
                    }
                ]
            },
            "generate_memories_examples[0].generated_memories[0].topics",
        ),
    ],
)
def test_an_unsupported_field_is_refused_by_name(document: dict[str, Any], named: str) -> None:
    with pytest.raises(UnsupportedConfigError, match=named.replace("[", r"\[").replace("]", r"\]")):
        MemoryBankConfig.model_validate(document)


def test_a_field_of_the_wrong_shape_or_given_twice_is_a_validation_error() -> None:
    for document, message in (
        ({"ttl_config": {"default_ttl": "one day"}}, "ttl_config.default_ttl must be a duration"),
        ({"ttl": {"default_ttl": 60}, "ttlConfig": {"defaultTtl": "60s"}}, "given twice"),
        ({"ttl_config": {"defaultTtl": "1s", "default_ttl": "2s"}}, "given twice"),
        ({"unknownField": 1}, "Extra inputs are not permitted"),
        (
            {"structured_memory_configs": [{"schema_configs": [{"id": "p", "memory_schema": 3}]}]},
            "memory_schema is not a schema",
        ),
    ):
        with pytest.raises(ValidationError, match=message):
            MemoryBankConfig.model_validate(document)


async def test_the_similarity_search_model_is_the_services_embedder(
    make_memory_service: Any,
) -> None:
    config = MemoryBankConfig.model_validate(
        {"similarity_search_config": {"embedding_model": "text-embedding-005"}}
    )
    service: PostgresMemoryService = make_memory_service(config=config, run_worker=False)
    assert isinstance(service.embedder, GeminiEmbedder)
    assert service.embedder.model == "text-embedding-005"
    await service.close()


async def test_disabled_revisions_are_never_listed(make_memory_service: Any) -> None:
    config = MemoryBankConfig.model_validate({"disableMemoryRevisions": True})
    service: PostgresMemoryService = make_memory_service(config=config, run_worker=False)
    memory = await service.create_memory("The user likes tea.", SCOPE)
    await service.update_memory(memory.id, SCOPE, fact="The user likes green tea.")
    assert await service.list_revisions(memory.id, SCOPE) == []
    assert (await service.get_memory(memory.id, SCOPE)).fact == "The user likes green tea."  # type: ignore[union-attr]
    await service.close()


async def test_an_imported_profile_is_checked_against_the_configured_schema(
    make_memory_service: Any,
) -> None:
    config = MemoryBankConfig.model_validate(SNAKE)  # travel-profile, for scopes of a user_id
    service: PostgresMemoryService = make_memory_service(
        config=config, embedder=HashEmbedder(), run_worker=False
    )
    scope = {"user_id": "u1"}
    values = {"seat": "aisle", "trips": 3}
    assert await service.import_profile(scope, "travel-profile", values) == 2
    assert await service.import_profile(scope, "travel-profile", {"seat": "aisle"}) == 0
    with pytest.raises(InputValidationError, match="'seat'"):
        await service.import_profile(scope, "travel-profile", {"seat": "middle"})
    with pytest.raises(InputValidationError, match="not a property"):
        await service.import_profile(scope, "travel-profile", {"shoe_size": 9})
    [profile] = await service.retrieve_profiles(scope=scope)
    assert profile.profile == values
    await service.close()


async def test_configure_and_the_service_take_memory_banks_json(
    make_memory_service: Any, database_url: str
) -> None:
    document = {"ttlConfig": {"defaultTtl": "86400s"}, "customizationConfigs": [{}]}
    stack = configure(
        database_url, schema=TEST_SCHEMA, environ={}, run_worker=False, memory=document
    )
    assert stack.memory_service.config.ttl.default_ttl == timedelta(days=1)
    await stack.close()
    service: PostgresMemoryService = make_memory_service(config=DOCS, embedder=HashEmbedder())
    assert service.config.ttl.create_ttl == timedelta(days=30)
    await service.close()
    with pytest.raises(UnsupportedConfigError, match="enable_third_person_memories"):
        configure(
            database_url,
            environ={},
            memory={"customizationConfigs": [{"enableThirdPersonMemories": True}]},
        )
    with pytest.raises(InputValidationError, match="Invalid memory configuration"):
        make_memory_service(config={"ttlConfig": {"defaultTtl": "soon"}})
