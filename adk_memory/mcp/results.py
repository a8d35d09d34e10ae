"""What the MCP server's tools return: typed, structured results (ids, facts, scores, times).

Owns: the result models (their JSON schemas are the tools' output schemas, so an MCP client
knows their shape before it calls) and the one mapping of a stored memory to what a caller is
shown: the fact and every profile string `rendering.neutralise`d, as every adk-memory tool shows
stored text to a model (an MCP client is usually one), with its id, topics, confidence and times.
It never reads the database and never names a scope: the tools' caller knows whose memories they
are, and a scope shown back would only repeat it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..memory.models import Memory, RetrievedMemory
from ..memory.rendering import neutralise, neutralise_value
from ..memory.service import MemoryProfile


class ShownMemory(BaseModel):
    """One memory as the tools show it."""

    id: str = Field(description="The memory's id: what update_memory and forget_memory take.")
    fact: str
    topics: list[str] = Field(default_factory=list)
    confidence: float | None = Field(
        default=None,
        description="How much the fact is believed (0 to 1), as of now; None: unknown.",
    )
    create_time: datetime
    update_time: datetime
    expire_time: datetime | None = None

    @classmethod
    def of(cls, memory: Memory) -> ShownMemory:
        return cls(
            id=memory.id,
            fact=neutralise(memory.fact),
            topics=[neutralise(topic) for topic in memory.topics],
            confidence=memory.effective_confidence,
            create_time=memory.create_time,
            update_time=memory.update_time,
            expire_time=memory.expire_time,
        )


class FoundMemory(ShownMemory):
    """A search result: a memory and its ranking score (higher is better)."""

    score: float

    @classmethod
    def found(cls, retrieved: RetrievedMemory) -> FoundMemory:
        shown = ShownMemory.of(retrieved.memory)
        return cls(**shown.model_dump(), score=retrieved.score)


class SearchResult(BaseModel):
    """The memories a search found, best first (newest first without a query)."""

    memories: list[FoundMemory]


class CreateResult(BaseModel):
    """A fact written as a memory, or held back by the memory guard for an operator's review."""

    status: Literal["stored", "held_for_review"]
    memory: ShownMemory | None = Field(
        default=None, description="The memory stored; None when the fact is held for review."
    )
    rule: str | None = Field(default=None, description="The guard's rule that held the fact.")
    note: str | None = None

    @classmethod
    def of(cls, memory: Memory) -> CreateResult:
        """Stored, or (a quarantined memory) held: not remembered until an operator approves
        it, said so the caller never tells its user a fact was remembered when it was not."""
        if not memory.quarantined:
            return cls(status="stored", memory=ShownMemory.of(memory))
        rule = memory.guard.rule if memory.guard is not None else None
        return cls(
            status="held_for_review",
            rule=rule,
            note=(
                f"Not remembered for now: the memory guard held this fact for review (rule "
                f"{rule or 'policy'}). It is not recalled unless an operator approves it."
            ),
        )


class UpdateResult(BaseModel):
    """A memory after its change (an UPDATED revision records the one before)."""

    status: Literal["updated"] = "updated"
    memory: ShownMemory


class ForgetResult(BaseModel):
    """A memory deleted (its revisions stay, as Memory Bank keeps them)."""

    status: Literal["forgotten"] = "forgotten"
    id: str
    fact: str = Field(description="The fact that was forgotten.")


class ShownProfile(BaseModel):
    """One structured profile: its schema's id and its fields' current values."""

    schema_id: str
    profile: dict[str, Any]


class ProfilesResult(BaseModel):
    """The user's structured profiles (one per schema with a field set)."""

    profiles: list[ShownProfile]

    @classmethod
    def of(cls, profiles: list[MemoryProfile]) -> ProfilesResult:
        return cls(
            profiles=[
                ShownProfile(schema_id=p.schema_id, profile=neutralise_value(p.profile))
                for p in profiles
            ]
        )
