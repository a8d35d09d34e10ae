"""`adk-memory mcp`: one user's memories as an MCP server, over stdio or streamable HTTP.

Owns: the command's options and the rules of whose memories it serves, where: over stdio, the
`--app` and `--user` given (the client that starts the process is that user's); over HTTP
without `--auth`, the same fixed user, on a loopback address only (any process of the machine
can reach the port, so it is said at start, and another host is refused); over HTTP with
`--auth`, each call acts as the user its verified caller is (`adk_memory.identity`), never
another (`--user` is refused then). It imports the server (and the `mcp` SDK, the optional
extra) only when it runs, so `adk-memory --help` and `adk-memory mcp --help` stay light and
say how to install the extra. It never writes to stdout (over stdio that is the protocol's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import click

from ..memory.embeddings import GeminiEmbedder
from ..settings.identity import IdentitySettings
from ..settings.variables import parse_redact
from .auth import identity_options, is_local
from .options import Target, database_options, embedding_model_option, redact_option, user_errors

if TYPE_CHECKING:
    from ..mcp.server import HttpEndpoint

DEFAULT_PORT = 8765
_TRANSPORTS = ("stdio", "http")


def _check_scope(
    transport: str, host: str, user_id: str | None, identity: IdentitySettings
) -> None:
    """Refuse what would serve someone else's memories (see the module docstring)."""
    if transport == "stdio":
        if identity.mode != "none":
            raise click.UsageError("--auth verifies HTTP callers; over stdio the user is --user.")
        if user_id is None:
            raise click.UsageError("Over stdio the memories served are one user's: give --user.")
        return
    if identity.mode != "none":
        if user_id is not None:
            raise click.UsageError(
                "With --auth each caller acts as the user its credentials name: drop --user."
            )
        return
    if user_id is None:
        raise click.UsageError(
            "Without --auth the memories served are one user's: give --user (or --auth to "
            "serve each caller its own)."
        )
    if not is_local(host):
        raise click.UsageError(
            f"Without --auth the MCP server binds a loopback address only (not --host {host}): "
            "any caller that reached the port would act as --user. Give --auth iap|google|oidc "
            "to serve beyond this machine."
        )


def _endpoint_path(ctx: click.Context, param: click.Parameter, path: str) -> str:
    if not path.startswith("/") or any(c in path for c in "?#\x00 "):
        raise click.BadParameter(f"{path!r} is not a URL path (it starts with /).")
    return path


def _announce(app_name: str, user_id: str | None, endpoint: HttpEndpoint | None) -> None:
    """What the server serves, and to whom, on stderr (stdout is the stdio protocol's)."""
    if endpoint is None:
        click.echo(f"adk-memory mcp: memories of user {user_id!r} of app {app_name!r}.", err=True)
    elif user_id is not None:
        click.echo(
            f"adk-memory mcp: memories of user {user_id!r} of app {app_name!r} at {endpoint.url}, "
            "without authentication: any process on this machine can use them (bound to "
            "localhost only; give --auth to serve each caller its own).",
            err=True,
        )
    else:
        click.echo(
            f"adk-memory mcp: memories of app {app_name!r} at {endpoint.url}; each caller acts "
            f"as the user its verified credentials name (--auth {endpoint.identity.mode}).",
            err=True,
        )


def _unwrapped(error: Exception) -> Exception:
    """The one error inside task groups' exception groups (the SDK's transports run in them),
    so `user_errors` can say it in one line (`exceptions`: Python 3.10 has no builtin
    `ExceptionGroup`; anyio's backport has the same shape)."""
    inner = getattr(error, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], Exception):
        error = inner[0]
        inner = getattr(error, "exceptions", None)
    return error


@click.command("mcp")
@database_options
@click.option("--app", "app_name", required=True, help="The app whose memories are served.")
@click.option(
    "--user",
    "user_id",
    help="The user whose memories are served (stdio, and HTTP without --auth).",
)
@click.option(
    "--transport",
    type=click.Choice(_TRANSPORTS),
    default="stdio",
    show_default=True,
    help="stdio (the client starts this command) or streamable HTTP.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: the address.")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True)
@click.option(
    "--path",
    default="/mcp",
    show_default=True,
    callback=_endpoint_path,
    help="HTTP: the endpoint's path.",
)
@embedding_model_option
@redact_option
@identity_options
def mcp(
    target: Target,
    app_name: str,
    user_id: str | None,
    transport: str,
    host: str,
    port: int,
    path: str,
    embedding_model: str | None,
    redact: str,
    identity: IdentitySettings,
) -> None:
    """Serve one user's memories to MCP clients (Gemini CLI, IDE agents, other frameworks):
    tools to search, create, update and forget memories and read the user's profiles.

    Over stdio the memories are --user's of --app. Over HTTP (--transport http) without
    --auth, the same, on a loopback address only; with --auth, each caller's own (the user its
    verified credentials name). Needs the mcp extra: pip install 'adk-memory[mcp]'.
    """
    _check_scope(transport, host, user_id, identity)
    try:
        from ..mcp.server import HttpEndpoint, serve
        from ..mcp.tools import CallerUser, FixedUser, UserScopes
    except ImportError as missing:
        raise click.ClickException(
            f"adk-memory mcp needs the MCP SDK ({missing}): pip install 'adk-memory[mcp]'."
        ) from missing
    from ..identity import IdentityPolicy

    scopes: UserScopes
    with user_errors():
        if user_id is None:
            scopes = CallerUser(app_name, IdentityPolicy.from_settings(identity))
        else:
            scopes = FixedUser(app_name, user_id)
        endpoint = None if transport == "stdio" else HttpEndpoint(host, port, path, identity)
        embedder = GeminiEmbedder(embedding_model) if embedding_model is not None else None
        service = target.memory(embedder=embedder, redactor=parse_redact(redact), run_worker=False)
    _announce(app_name, user_id, endpoint)
    with user_errors():
        try:
            anyio.run(serve, service, scopes, app_name, endpoint)
        except Exception as raised:
            inner = _unwrapped(raised)
            if inner is raised:
                raise
            raise inner from None
