"""The MCP server: adk-memory's memory tools for any MCP client, over stdio or streamable HTTP.

Owns: the server (`memory_server`: the tools of `tools.py` on one memory service, with their
annotations), how a failed call reads (`MemoryMcpServer.call_tool`: arguments that do not fit
the schema and errors the caller can act on, adk-memory's typed errors, become one-line MCP
tool errors; anything else stays the SDK's generic "Error executing tool", its traceback in
the server's log only), the HTTP app (stateless streamable HTTP, JSON answers, behind the
identity guard when identity binding is on) and `serve`, which checks the database once, then
serves until stdin closes (stdio) or the process is stopped (HTTP). Whose memories a call is
about is `tools.UserScopes`'; what is allowed on which host is the command's
(`adk_memory.cli.mcp`). It never builds the memory service (its caller does, through the
settings resolver) and never migrates a schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from google.adk.errors.input_validation_error import (
    InputValidationError as AdkInputValidationError,
)
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import ValidationError
from starlette.applications import Starlette

from ..db.driver import driver_error
from ..errors import AdkMemoryError
from ..memory.scope import app_scope
from ..memory.service import PostgresMemoryService
from ..settings.identity import IdentitySettings
from .tools import MemoryTools, UserScopes

SERVER_NAME = "adk-memory"
DEFAULT_PATH = "/mcp"
INSTRUCTIONS = (
    "Long-term memory of the user, kept across conversations and shared with the user's other "
    "agents. Search it when answering needs something the user said before; remember lasting "
    "facts the user shares about themselves; correct or forget them when the user asks."
)


@dataclass(frozen=True)
class HttpEndpoint:
    """Where the HTTP transport serves, and who may call it."""

    host: str
    port: int
    path: str = DEFAULT_PATH
    identity: IdentitySettings = field(default_factory=IdentitySettings)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"


def _package_version() -> str:
    try:
        return version("adk-memory")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0"


def _arguments_message(name: str, invalid: ValidationError) -> str:
    """What was wrong with a call's arguments, one clause per argument (never the value: it
    may be megabytes, and it is the caller's own)."""
    problems = [
        f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
        for error in invalid.errors()
    ]
    return f"Invalid arguments for {name}: {'; '.join(problems)}."


class MemoryMcpServer(MCPServer[Any]):
    """`MCPServer` whose failed calls read as the caller can act on them (see the module)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as failed:
            cause = failed.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(_arguments_message(name, cause)) from None
            if not isinstance(failed, UnexpectedToolError) or cause is None:
                raise
            error = driver_error(cause)
            if not isinstance(error, (AdkMemoryError, AdkInputValidationError)):
                raise  # a bug: the generic message here, the traceback in the server's log
            said = " ".join(str(error).split())
            raise ToolError(f"Error executing tool {name}: {said}") from None


def memory_server(service: PostgresMemoryService, scopes: UserScopes) -> MemoryMcpServer:
    """The MCP server of `service`'s memories, each call about the user `scopes` names."""
    # The SDK configures the root logger when there is none: WARNING, as the other commands log
    # (a refused call is the caller's to read; a crash is still logged with its traceback).
    server = MemoryMcpServer(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        version=_package_version(),
        log_level="WARNING",
    )
    tools = MemoryTools(service, scopes)
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    forgets = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
    for tool, hints in (
        (tools.search_memories, reads),
        (tools.create_memory, writes),
        (tools.update_memory, writes),
        (tools.forget_memory, forgets),
        (tools.get_profiles, reads),
    ):
        # The docstring is the model's description: one paragraph, without its indentation.
        description = " ".join((tool.__doc__ or "").split())
        server.add_tool(tool, description=description, annotations=hints, structured_output=True)
    return server


def http_app(server: MCPServer[Any], endpoint: HttpEndpoint) -> Starlette:
    """The streamable HTTP app: stateless (each request stands alone, its caller verified on
    its own, so a session id taken from another caller grants nothing, and any replica can
    answer), JSON answers, and the identity guard in front when the endpoint's identity
    settings turn it on. The SDK refuses a foreign `Host` or `Origin` when the host is a
    loopback address (DNS rebinding)."""
    from ..identity import add_identity_guard  # its routes table loads ADK's API server

    app = server.streamable_http_app(
        streamable_http_path=endpoint.path,
        stateless_http=True,
        json_response=True,
        host=endpoint.host,
    )
    add_identity_guard(app, endpoint.identity, operator_paths=())
    return app


async def check_database(service: PostgresMemoryService, app_name: str) -> None:
    """One read before serving, so a database that is unreachable, unmigrated or of another
    version fails the start with its one-line error, not the client's first call. The app's
    own scope (no user) is the cheapest read that names nobody."""
    await service.retrieve_profiles(scope=app_scope(app_name))


async def serve_http(app: Starlette, host: str, port: int) -> None:
    """Serve `app` with uvicorn until the process is stopped (its access log off: the command
    says where it serves)."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


async def serve(
    service: PostgresMemoryService, scopes: UserScopes, app_name: str, http: HttpEndpoint | None
) -> None:
    """Check the database, then serve the memory tools over stdio (`http` None: until stdin
    closes) or HTTP (until the process is stopped); the service is closed after."""
    async with service:
        await check_database(service, app_name)
        server = memory_server(service, scopes)
        if http is None:
            await server.run_stdio_async()
            return
        await serve_http(http_app(server, http), http.host, http.port)
