"""Memory tools for ADK agents: remember (`create_memory`), recall (`load_memory`), forget
(`forget_memory`), and proactive recall into the system instruction (`preload_memory`).

Owns: the tools' declarations (their descriptions name the kinds of memories the bank keeps,
from the configured topics, so the model knows when to call them) and the mapping of a call to
the memory service. A mistake the model can fix (a blank fact, an unknown topic or id) comes back
to it as `{"error": ...}`, ADK's convention; so does a fact the memory guard refused
(`"status": "refused"` with the rule ids), and one it quarantined comes back as
`"status": "held_for_review"` with the rule ids and a note that it is not remembered: the model
is never told a fact was saved when it was not. Infrastructure errors are raised, as ADK's own
tools do, for the Runner and its plugins to handle.

It never takes a scope from the model: every call is scoped to the invocation's app and user,
so one user can never read, write or delete another's memories. It never deletes without a
memory id: a description only finds candidates (similarity search always returns the nearest
memories, related or not, so deleting by it would sooner or later delete the wrong one). It
never returns a stored fact to the model without `rendering.neutralise`.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

from ..config import CustomizationConfig, MemoryBankConfig, MemoryTopic
from ..errors import InputValidationError, MemoryRejectedError, OptedOutError
from ..memory.checks import MAX_TOP_K
from ..memory.generation.topics import render_topics, topic_label, unique_topics
from ..memory.models import MemoryAction, SourceType
from ..memory.rendering import neutralise
from ..memory.scope import Scope
from ..memory.service import PostgresMemoryService
from .callbacks import ContextMemory, MemoryContextCallback, bound_service

TopicSource = MemoryBankConfig | CustomizationConfig | Sequence[MemoryTopic]
"""Where a tool's topics come from: a bank's config (its default customization), one
customization, or the topics themselves."""

_USER_SCOPE_KEYS = frozenset({"app_name", "user_id"})

MAX_MEMORIES_SHOWN = 20
"""Most candidates `forget_memory` lists for a description."""


def configured_topics(source: TopicSource) -> list[MemoryTopic]:
    """The topics of `source` (for a bank's config, those of the customization that applies to
    ADK's app + user scopes), repeated labels removed."""
    if isinstance(source, MemoryBankConfig):
        source = source.customization_for(_USER_SCOPE_KEYS)
    if isinstance(source, CustomizationConfig):
        return unique_topics(source.memory_topics)
    if isinstance(source, str) or not isinstance(source, Sequence):
        raise InputValidationError(
            "topics must be a MemoryBankConfig, a CustomizationConfig or a list."
        )
    return unique_topics(list(source))


def _declaration(
    name: str, description: str, properties: dict[str, Any], required: Sequence[str]
) -> types.FunctionDeclaration:
    return types.FunctionDeclaration(
        name=name,
        description=description,
        parameters_json_schema={
            "type": "object",
            "properties": properties,
            "required": list(required),
        },
    )


def _text_arg(args: dict[str, Any], name: str) -> str | None:
    """A string argument, stripped; None when absent or blank."""
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputValidationError(f"{name} must be a string.")
    return value.strip() or None


def _error(exc: InputValidationError) -> dict[str, str]:
    return {"error": exc.message}


def _shown(memory: ContextMemory) -> dict[str, Any]:
    """A memory as a tool returns it to the model (its fact and topics already `neutralise`d by
    `ContextMemory.of`, as in the memory-context block)."""
    shown: dict[str, Any] = {
        "id": memory.id,
        "fact": memory.fact,
        "age": memory.age,
        "time": memory.time.isoformat(),
        "topics": list(memory.topics),
    }
    if memory.confidence is not None:
        shown["confidence"] = memory.confidence
    return shown


class _MemoryTool(BaseTool):
    """A declared memory tool bound to a service (or the Runner's) and the topics it names."""

    def __init__(
        self,
        *,
        name: str,
        memory_service: PostgresMemoryService | None,
        topics: TopicSource | None,
    ) -> None:
        if memory_service is not None and not isinstance(memory_service, PostgresMemoryService):
            raise InputValidationError("memory_service must be a PostgresMemoryService.")
        if topics is None and memory_service is not None:
            topics = memory_service.config
        self.memory_service = memory_service
        self.topics = configured_topics(topics) if topics is not None else []
        super().__init__(name=name, description=self._describe())

    @abstractmethod
    def _describe(self) -> str:
        """The tool's description for the model."""

    def _kinds(self, heading: str) -> str:
        """The topics as a paragraph of the description ("" when none are configured)."""
        return f"\n\n{heading}\n{render_topics(self.topics)}" if self.topics else ""

    async def _service(self, context: ToolContext) -> tuple[PostgresMemoryService, Scope]:
        return await bound_service(context, self.memory_service)


class CreateMemoryTool(_MemoryTool):
    """Memory-as-a-tool: the model decides what is worth remembering and stores it as a fact.

    The fact is consolidated into the user's memories by default: with a service that has a
    generation model, it goes through `generate_memories(facts=[fact])`, so a memory it
    contradicts or refines is UPDATED instead of duplicated (and a fact already known changes
    nothing); without a model, or with `consolidate=False`, it is created as given. The call
    waits up to `timeout` seconds for the consolidation, then reports the pending operation (it
    still completes in the background: the job is durable).

    Args:
      memory_service: a `PostgresMemoryService`; None: the Runner's.
      topics: the kinds of memories to describe and accept as `topic` (default: the service's
        configured topics when a service is given).
      consolidate: merge into existing memories (needs the service's `llm`).
      timeout: seconds to wait for consolidation before answering "pending".
    """

    def __init__(
        self,
        memory_service: PostgresMemoryService | None = None,
        *,
        topics: TopicSource | None = None,
        consolidate: bool = True,
        timeout: float = 30.0,
        name: str = "create_memory",
    ) -> None:
        if timeout <= 0:
            raise InputValidationError("timeout must be positive.")
        self.consolidate = consolidate
        self.timeout = timeout
        super().__init__(name=name, memory_service=memory_service, topics=topics)

    def _describe(self) -> str:
        kinds = "the kinds listed below" if self.topics else "preferences, personal details, plans"
        return (
            "Remember a fact about the user for future conversations. Call it when the user "
            f"tells you something worth knowing next time ({kinds}), or asks you to remember "
            "something. Write the fact as one self-contained sentence in the third person "
            '("The user prefers window seats."), not a quote. Do not store small talk, what '
            "only matters for this conversation, or secrets such as passwords. If the fact "
            "changes something remembered before, the old memory is updated."
            + self._kinds("Kinds of information worth remembering (pass one as `topic`):")
        )

    @override
    def _get_declaration(self) -> types.FunctionDeclaration:
        topic: dict[str, Any] = {"type": "string", "description": "The kind of information."}
        if self.topics:
            topic["enum"] = [topic_label(t) for t in self.topics]
        fact = {"type": "string", "description": "The fact, one sentence about the user."}
        return _declaration(self.name, self.description, {"fact": fact, "topic": topic}, ["fact"])

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            fact = _text_arg(args, "fact")
            topic = _text_arg(args, "topic")
            if fact is None:
                raise InputValidationError("fact must be a non-empty sentence.")
            labels = [topic_label(t) for t in self.topics]
            if topic is not None and labels and topic not in labels:
                raise InputValidationError(f"topic must be one of {labels}.")
            service, scope = await self._service(tool_context)
            metadata = {"tool": self.name, "session_id": tool_context.session.id}
            if self.consolidate and service.llm is not None:
                return await self._consolidate(service, scope, fact, topic, metadata)
            memory = await service.create_memory(
                fact,
                scope,
                topics=[topic] if topic else None,
                metadata=metadata,
                source_type=SourceType.IMPLICIT,  # the agent's choice, not the app's own data
            )
        except MemoryRejectedError as exc:
            return _refused([exc.rule])
        except InputValidationError as exc:
            return _error(exc)
        if memory.quarantined:
            return _held([memory.guard.rule if memory.guard else "policy"])
        return {
            "status": "saved",
            "changes": [_change(MemoryAction.CREATED, memory.id, memory.fact)],
        }

    async def _consolidate(
        self,
        service: PostgresMemoryService,
        scope: Scope,
        fact: str,
        topic: str | None,
        metadata: dict[str, str],
    ) -> dict[str, Any]:
        operation = await service.generate_memories(
            facts=[fact],
            topic=topic,
            scope=scope,
            metadata=metadata,
            revision_labels={"tool": self.name},
            source_type=SourceType.IMPLICIT,
        )
        try:
            operation = await service.wait(operation, timeout=self.timeout)
        except asyncio.TimeoutError:  # not builtin TimeoutError before Python 3.11
            return {"status": "pending", "operation_id": operation.id}
        if operation.error is not None:
            return {"error": "The memory could not be saved; try again later."}
        if operation.rejected:
            return _refused([r.rule for r in operation.rejected])
        changes = [  # a memory this generation deleted is gone, fact and all: its id remains
            _change(
                generated.action,
                generated.memory_id,
                generated.memory.fact if generated.memory is not None else None,
            )
            for generated in operation.generated_memories
            if not generated.quarantined
        ]
        held = [g.guard.rule if g.guard else "policy" for g in operation.quarantined]
        if held and not changes:
            return _held(held)
        return {"status": "saved" if changes else "already_known", "changes": changes}


def _refused(rules: Sequence[str]) -> dict[str, Any]:
    """What the model is told when the guard refused the fact: nothing was stored, and which
    rule refused it (never the fact: the model wrote it, and an echo would only repeat it)."""
    named = ", ".join(dict.fromkeys(rules))
    return {
        "status": "refused",
        "rules": list(dict.fromkeys(rules)),
        "error": (
            f"Not saved: the memory guard refused this fact (rule {named}). Nothing was "
            "remembered; do not tell the user it was."
        ),
    }


def _held(rules: Sequence[str]) -> dict[str, Any]:
    """What the model is told when the guard quarantined the fact: stored for an operator's
    review, not remembered for now, and which rule held it."""
    named = ", ".join(dict.fromkeys(rules))
    return {
        "status": "held_for_review",
        "rules": list(dict.fromkeys(rules)),
        "changes": [],
        "note": (
            f"Not remembered for now: the memory guard held this fact for review (rule "
            f"{named}). It will not be recalled unless an operator approves it; do not tell the "
            "user it was remembered."
        ),
    }


def _change(action: MemoryAction, memory_id: str, fact: str | None) -> dict[str, str]:
    """A write as a tool reports it to the model. The fact is a stored one (an UPDATE merges
    into an old fact, a delete reports the old fact), so it is `neutralise`d like any other;
    None (a memory deleted since) reports the id alone."""
    change = {"action": action.value.lower(), "id": memory_id}
    if fact is not None:
        change["fact"] = neutralise(fact)
    return change


class LoadMemoryTool(_MemoryTool):
    """Reactive recall: the model searches the user's memories when it needs them. Results come
    best first, each with its age ("3 days ago"), topics and, where known, confidence.

    Args:
      memory_service: a `PostgresMemoryService`; None: the Runner's.
      topics: the kinds of memories the description names (default: the service's).
      top_k: results per search (default: the service's `retrieval.top_k`).
    """

    def __init__(
        self,
        memory_service: PostgresMemoryService | None = None,
        *,
        topics: TopicSource | None = None,
        top_k: int | None = None,
        name: str = "load_memory",
    ) -> None:
        if top_k is not None and not 1 <= top_k <= MAX_TOP_K:
            raise InputValidationError(f"top_k must be between 1 and {MAX_TOP_K}.")
        self.top_k = top_k
        super().__init__(name=name, memory_service=memory_service, topics=topics)

    def _describe(self) -> str:
        return (
            "Search your long-term memory of this user: facts remembered from earlier "
            "conversations. Call it when answering needs something about the user that was not "
            "said in this conversation. Results come most relevant first, each with how long "
            "ago it was remembered; prefer what the user says now over an old memory."
            + self._kinds("The kinds of information remembered:")
        )

    @override
    def _get_declaration(self) -> types.FunctionDeclaration:
        query = {"type": "string", "description": "What to look for, in a few words."}
        return _declaration(self.name, self.description, {"query": query}, ["query"])

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            query = _text_arg(args, "query")
            if query is None:
                raise InputValidationError("query must say what to look for.")
        except InputValidationError as exc:
            return _error(exc)
        service, scope = await self._service(tool_context)
        top_k = self.top_k or service.config.retrieval.top_k
        try:
            found = await service.retrieve_memories(scope, search_query=query, top_k=top_k)
        except OptedOutError as exc:  # with `RetrievalConfig.opt_out_hides`
            return _error(exc)
        now = datetime.now(timezone.utc)
        return {"memories": [_shown(ContextMemory.of(r, now)) for r in found]}


class ForgetMemoryTool(_MemoryTool):
    """Forgetting on request ("forget that I ..."): deletes one memory of the user by id.

    Given a `query` instead, it deletes nothing and returns the user's memories that match, with
    their ids, for the model to delete the ones the user meant; so a vague or unmatched request
    never deletes the wrong memory, and no call can delete all of a user's memories.

    Args:
      memory_service: a `PostgresMemoryService`; None: the Runner's.
      candidates: how many matches a `query` returns.
    """

    def __init__(
        self,
        memory_service: PostgresMemoryService | None = None,
        *,
        candidates: int = 5,
        name: str = "forget_memory",
    ) -> None:
        if not 1 <= candidates <= MAX_MEMORIES_SHOWN:
            raise InputValidationError(f"candidates must be between 1 and {MAX_MEMORIES_SHOWN}.")
        self.candidates = candidates
        super().__init__(name=name, memory_service=memory_service, topics=())

    def _describe(self) -> str:
        return (
            "Forget something remembered about the user, when the user asks you to. Pass "
            "`memory_id` (from load_memory or from an earlier forget_memory call) to delete "
            "that memory. Pass `query` instead, describing what to forget, to find the "
            "matching memories first: nothing is deleted then; call again with the memory_id "
            "of each one the user meant."
        )

    @override
    def _get_declaration(self) -> types.FunctionDeclaration:
        properties = {
            "memory_id": {"type": "string", "description": "The id of the memory to delete."},
            "query": {"type": "string", "description": "What to forget, to find its memories."},
        }
        return _declaration(self.name, self.description, properties, [])

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            memory_id = _text_arg(args, "memory_id")
            query = _text_arg(args, "query")
            if (memory_id is None) == (query is None):
                raise InputValidationError("Pass either memory_id or query (one of them).")
            service, scope = await self._service(tool_context)
            if memory_id is None:  # so the query is given (exactly one of them is)
                found = await service.retrieve_memories(
                    scope, search_query=query, top_k=self.candidates
                )
                now = datetime.now(timezone.utc)
                return {
                    "status": "nothing_deleted_yet",
                    "matches": [_shown(ContextMemory.of(r, now)) for r in found],
                }
            memory = await service.get_memory(memory_id, scope)
            if memory is None:
                raise InputValidationError(f"No memory {memory_id} of this user.")
            await service.delete_memory(scope=scope, memory_id=memory.id)
        except InputValidationError as exc:
            return _error(exc)
        return {
            "status": "deleted",
            "changes": [_change(MemoryAction.DELETED, memory.id, memory.fact)],
        }


class PreloadMemoryTool(BaseTool):
    """Proactive recall as a tool, like ADK's `PreloadMemoryTool`: before every model call it
    appends the user's memories to the system instruction. It is `MemoryContextCallback` in tool
    form (same retrieval, budget, formatting and per-invocation cache); the model never calls it.
    """

    def __init__(self, callback: MemoryContextCallback | None = None) -> None:
        super().__init__(name="preload_memory", description="preload_memory")
        self.callback = callback or MemoryContextCallback()

    @override
    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        await self.callback(tool_context, llm_request)


create_memory = CreateMemoryTool()
"""`create_memory` on the Runner's memory service (generic description: no topics known)."""
load_memory = LoadMemoryTool()
"""`load_memory` on the Runner's memory service."""
forget_memory = ForgetMemoryTool()
"""`forget_memory` on the Runner's memory service."""
preload_memory = PreloadMemoryTool()
"""`preload_memory` on the Runner's memory service, default budget and formatting."""
