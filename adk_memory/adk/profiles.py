"""`load_profiles`: the user's structured profiles as a tool, like ADK's
`VertexAiLoadProfilesTool`, on `PostgresMemoryService`.

Owns: the tool and the form the model gets the profiles in (ADK's: `{"profiles": [<profile
dict>, ...]}`, every string of them `rendering.neutralise`d). It never takes a scope from the
model (the invocation's app and user, as every adk-memory tool) and never writes.
"""

from __future__ import annotations

from typing import Any

from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext

from ..errors import InputValidationError
from ..memory.rendering import neutralise
from ..memory.service import PostgresMemoryService
from .callbacks import memory_service_of, scope_of


def _neutralised(value: Any) -> Any:
    """A stored JSON value with every string (keys too) `neutralise`d."""
    if isinstance(value, str):
        return neutralise(value)
    if isinstance(value, list):
        return [_neutralised(item) for item in value]
    if isinstance(value, dict):
        return {neutralise(str(k)): _neutralised(v) for k, v in value.items()}
    return value


class LoadProfilesTool(FunctionTool):
    """A tool that loads the current user's structured profiles (`retrieve_profiles`): a
    lookup by the user's key, no search. `memory_service`: None uses the Runner's."""

    def __init__(self, memory_service: PostgresMemoryService | None = None) -> None:
        if memory_service is not None and not isinstance(memory_service, PostgresMemoryService):
            raise InputValidationError("memory_service must be a PostgresMemoryService.")
        super().__init__(self.load_profiles)
        self.memory_service = memory_service

    async def load_profiles(self, tool_context: ToolContext) -> dict[str, Any]:
        """Loads structured user profiles for the current user."""
        service = memory_service_of(tool_context, self.memory_service)
        profiles = await service.retrieve_profiles(scope=scope_of(tool_context))
        return {"profiles": [_neutralised(p.profile) for p in profiles if p.profile]}


load_profiles = LoadProfilesTool()
"""`load_profiles` on the Runner's memory service."""
