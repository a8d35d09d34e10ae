"""The MCP server's tools: search, create, update and forget one user's memories, and read the
user's structured profiles.

Owns: each tool's arguments (typed, bounded and described: their JSON schema is what an MCP
client sees), the mapping of a call to the memory service, and whose memories a call is about:
`UserScopes` gives the scope of every call, either one user fixed when the server starts
(`FixedUser`: stdio, or HTTP on localhost) or the user the verified caller of the HTTP request
is (`CallerUser`, through `adk_memory.identity`'s policy). No tool takes a scope, an app or a
user from its arguments, so no call can reach another user's memories; forgetting takes one
memory's id, never a description ("forget everything about X" finds candidates with search
first). A memory written here is the caller's choice, as with the agent's own `create_memory`
tool: its source is `implicit`. It never writes SQL and never shows a stored fact without
`results` (neutralised).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ..identity import IdentityPolicy, current_principal
from ..memory.checks import MAX_FACT_LENGTH, MAX_TOP_K
from ..memory.models import RetrievedMemory, SourceType
from ..memory.scope import Scope, user_scope
from ..memory.service import PostgresMemoryService
from .results import (
    CreateResult,
    ForgetResult,
    FoundMemory,
    ProfilesResult,
    SearchResult,
    ShownMemory,
    UpdateResult,
)

MAX_TOPICS = 20
"""Most topics one call may give a memory (a fact has a few; the bound keeps a schema honest)."""
MAX_TOPIC_LENGTH = 200
MAX_ID_LENGTH = 64
"""A memory id is a UUID (36 characters); the bound only keeps an absurd one out of messages."""

MemoryId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_ID_LENGTH,
        description="A memory's id, as search_memories or create_memory returned it.",
    ),
]
Topics = Annotated[
    tuple[Annotated[str, Field(min_length=1, max_length=MAX_TOPIC_LENGTH)], ...],
    Field(max_length=MAX_TOPICS, description="Labels for the kind of fact (e.g. preferences)."),
]
"""Plain arrays and strings, no `null` (`anyOf`): the schemas every client's model reads, Gemini
and the simplest function-calling dialects included; an empty value means "not given"."""


class UserScopes(Protocol):
    """Whose memories a call is about."""

    def scope_for(self, context: Context) -> Scope:
        """The scope (one user of one app) of the call `context` is about; ToolError when the
        call names nobody this server may act for."""
        ...


@dataclass(frozen=True)
class FixedUser:
    """One user, fixed when the server starts (`--app`, `--user`): stdio, or HTTP bound to
    127.0.0.1 without identity binding."""

    app_name: str
    user_id: str

    def __post_init__(self) -> None:
        user_scope(self.app_name, self.user_id)  # a bad name fails at start, not on each call

    def scope_for(self, context: Context) -> Scope:
        return user_scope(self.app_name, self.user_id)


@dataclass(frozen=True)
class CallerUser:
    """The user the HTTP request's verified caller is (the identity guard verified it; the
    policy's `user_claim` names its user id): a caller acts only as its own user, operators
    included (an operator's tools are the CLI and the inspector, not a model's)."""

    app_name: str
    policy: IdentityPolicy

    def scope_for(self, context: Context) -> Scope:
        request: Any = context.request_context.request
        principal = current_principal(request) if request is not None else None
        if principal is None:
            raise ToolError("This server acts for the verified caller, and this call has none.")
        user_id = self.policy.own_user(principal)
        if user_id is None:
            raise ToolError(
                f"The caller's credentials name no user (no {self.policy.user_claim!r} claim, "
                "or an e-mail not verified): nothing to search or remember."
            )
        return user_scope(self.app_name, user_id)


class MemoryTools:
    """The tools, bound to a memory service and to whose memories they are about."""

    def __init__(self, service: PostgresMemoryService, scopes: UserScopes) -> None:
        self.service = service
        self.scopes = scopes

    async def search_memories(
        self,
        ctx: Context,
        query: Annotated[
            str,
            Field(
                description=(
                    "What to look for, in a few words. Empty: the newest memories, to see what "
                    "is remembered."
                )
            ),
        ] = "",
        limit: Annotated[int, Field(ge=1, le=MAX_TOP_K, description="Most results.")] = 5,
    ) -> SearchResult:
        """Search the user's long-term memory: facts remembered from earlier conversations and
        tools. Results come most relevant first, each with its id, topics, confidence, score
        and times; prefer what the user says now over an old memory."""
        scope = self.scopes.scope_for(ctx)
        if query.strip():
            found = await self.service.retrieve_memories(scope, search_query=query, top_k=limit)
        else:  # score 0, as `retrieve_memories` scores a listing without a query
            page = await self.service.list_memories(scope, page_size=limit)
            found = [RetrievedMemory(memory=m, score=0.0) for m in page.memories]
        return SearchResult(memories=[FoundMemory.found(r) for r in found])

    async def create_memory(
        self,
        ctx: Context,
        fact: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_FACT_LENGTH,
                description="One fact about the user, as a short sentence.",
            ),
        ],
        topics: Topics = (),
    ) -> CreateResult:
        """Remember a fact about the user for later conversations (a preference, a detail of
        their life or work). The memory guard judges it first: a refused fact is an error and
        nothing is stored; a held one is stored for review and not remembered until approved."""
        scope = self.scopes.scope_for(ctx)
        memory = await self.service.create_memory(
            fact, scope, topics=list(topics), source_type=SourceType.IMPLICIT
        )
        return CreateResult.of(memory)

    async def update_memory(
        self,
        ctx: Context,
        memory_id: MemoryId,
        fact: Annotated[
            str,
            Field(max_length=MAX_FACT_LENGTH, description="The corrected fact (empty: kept)."),
        ] = "",
        topics: Annotated[Topics, Field(description="New topics (empty: kept).")] = (),
    ) -> UpdateResult:
        """Correct a remembered fact (or its topics) by the memory's id, when the user says it
        changed; the previous version is kept as a revision."""
        if not fact and not topics:
            raise ToolError("Give the new fact, new topics, or both.")
        scope = self.scopes.scope_for(ctx)
        memory = await self.service.update_memory(
            memory_id, scope, fact=fact or None, topics=list(topics) or None
        )
        return UpdateResult(memory=ShownMemory.of(memory))

    async def forget_memory(self, ctx: Context, memory_id: MemoryId) -> ForgetResult:
        """Forget one memory of the user by its id, when the user asks. To forget something
        described, search for it first and forget each memory the user meant."""
        scope = self.scopes.scope_for(ctx)
        memory = await self.service.get_memory(memory_id, scope)
        if memory is None:
            raise ToolError(f"No memory {memory_id} of this user.")
        await self.service.delete_memory(scope=scope, memory_id=memory.id)
        return ForgetResult(id=memory.id, fact=ShownMemory.of(memory).fact)

    async def get_profiles(self, ctx: Context) -> ProfilesResult:
        """The user's structured profiles: the fields configured schemas keep about them (for
        example their name, language or plan), one profile per schema. A lookup, no search."""
        scope = self.scopes.scope_for(ctx)
        return ProfilesResult.of(await self.service.retrieve_profiles(scope=scope))
