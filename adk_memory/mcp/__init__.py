"""adk-memory as an MCP server: one user's memories for any MCP client (Gemini CLI, IDE agents,
other frameworks, ADK's own `McpToolset`), over stdio or streamable HTTP (`adk-memory mcp`).

Owns: the server and its transports (`server.py`), its tools and whose memories each call is
about (`tools.py`: a user fixed at start, or the verified HTTP caller's own), and what the tools
return (`results.py`). It is a front end, like `cli/` and `adk/`'s inspector: it uses the memory
service's public API and `adk_memory.identity`, and never imports `sessions/`, `adk/` or `cli/`;
it never writes SQL. It needs the `mcp` extra (`pip install 'adk-memory[mcp]'`); nothing else
in the package imports it but the `adk-memory mcp` command, when it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._faces import lazy_face

if TYPE_CHECKING:
    from .results import (
        CreateResult,
        ForgetResult,
        FoundMemory,
        ProfilesResult,
        SearchResult,
        ShownMemory,
        ShownProfile,
        UpdateResult,
    )
    from .server import HttpEndpoint, MemoryMcpServer, http_app, memory_server, serve
    from .tools import CallerUser, FixedUser, MemoryTools, UserScopes

__getattr__, __dir__ = lazy_face(__name__, __file__, globals())

__all__ = [
    "CallerUser",
    "CreateResult",
    "FixedUser",
    "ForgetResult",
    "FoundMemory",
    "HttpEndpoint",
    "MemoryMcpServer",
    "MemoryTools",
    "ProfilesResult",
    "SearchResult",
    "ShownMemory",
    "ShownProfile",
    "UpdateResult",
    "UserScopes",
    "http_app",
    "memory_server",
    "serve",
]
