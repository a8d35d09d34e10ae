"""`adk-memory web` and `adk-memory api_server`: ADK's own dev UI and API server, on adk-memory's
sessions and memory.

Owns: turning the database options into the session and memory service URIs that
`adk_memory.adk.services` understands, exporting the same settings to the environment
`configure()` reads (so the agents' own stacks use the same database: one database, one
embedded server per command), registering those URI schemes, and handing every other argument
to ADK's command unchanged (so each `adk web` / `adk api_server` option works as documented by
ADK), and adding the memory inspector (`adk_memory.adk.inspector`), and on request Vertex AI's
REST API (`adk_memory.adk.vertex_api`), to the app ADK builds, on the very services ADK built
from those URIs (what it says and seeds at start-up, `--demo` included,
is `startup.py`'s). It never starts the server itself and never opens a connection (but for
the demo's seeding): ADK builds the services, which connect (and start the embedded server) on
first use.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import click
from click.core import ParameterSource
from sqlalchemy.engine import make_url

from .._adk_private import fast_api_app_built
from ..adk.demo import DEMO_MODEL
from ..adk.http_errors import add_error_responses
from ..adk.inspector import (
    DEV_UI_PATH,
    INSPECTOR_MODES,
    INSPECTOR_PATH,
    InspectorMode,
    inspector_router,
)
from ..adk.services import EMBEDDED_SCHEME, collect_services, register
from ..adk.vertex_api import vertex_api_router
from ..db.embedded import resolve_data_dir
from ..db.urls import normalise_url
from ..identity import DEV_PATH, IdentityPolicy, add_identity_guard, current_principal
from ..memory.service import PostgresMemoryService
from ..sessions.service import PostgresSessionService
from ..settings.identity import IdentitySettings
from ..settings.variables import (
    DATA_DIR_ENV,
    DATABASE_URL_ENV,
    DEMO_ENV,
    EMBEDDING_MODEL_ENV,
    MODEL_ENV,
    REDACT_ENV,
    SCHEMA_ENV,
    export,
)
from .auth import check_exposure, identity_options
from .options import (
    Target,
    database_options,
    embedding_model_option,
    redact_option,
    user_errors,
)
from .startup import starting

_OWN_URIS = ("--session_service_uri", "--memory_service_uri")
_RELOAD_FLAGS = ("--reload", "--no-reload")


def service_uris(
    target: Target, memory_model: str | None, embedding_model: str | None, redact: str = "none"
) -> tuple[str, str]:
    """(session URI, memory URI) for the target: its URL with adk-memory's options as query
    parameters, or `adk-memory://` with the data directory spelled out, so the server uses the
    same embedded database as every other `adk-memory` command run from here. `redact` (`pii`
    or `none`) goes into both: one redactor for sessions and memory."""
    # Always spelled out, like embedding_model below: --redact none must override
    # $ADK_MEMORY_REDACT, which the factories would otherwise read.
    session = {"schema": target.schema, "redact": redact}
    memory = dict(session)
    if memory_model:
        memory["model"] = memory_model
    # Always spelled out: the factory would otherwise read $ADK_MEMORY_EMBEDDING_MODEL, which
    # --embedding-model none must override.
    memory["embedding_model"] = embedding_model or "none"
    if target.database_url is None:
        where = {"data_dir": str(resolve_data_dir(target.data_dir))}
        return (
            f"{EMBEDDED_SCHEME}://?{urlencode({**where, **session})}",
            f"{EMBEDDED_SCHEME}://?{urlencode({**where, **memory})}",
        )
    given = {name for name, _ in parse_qsl(urlsplit(target.database_url).query)}
    clash = sorted(given & set(memory))
    if clash:
        raise click.BadParameter(
            f"give {', '.join(clash)} as options, not in the URL", param_hint="--database-url"
        )
    normalise_url(target.database_url)  # any other mistake: one clear error, before ADK starts
    url = make_url(target.database_url)
    session_uri, memory_uri = (
        url.update_query_dict(options).render_as_string(hide_password=False)
        for options in (session, memory)
    )
    return session_uri, memory_uri


def export_settings(
    target: Target, memory_model: str | None, embedding_model: str | None, redact: str
) -> None:
    """Put the command's settings in this process's environment, where `configure()` reads
    them, before ADK imports the agents. An agent that builds its stack at import (the samples
    do) then uses the command's database, schema, models and redactor: the same as ADK's
    services, not a second embedded server in ./.adk/pgdata. A URL goes as given: a password
    kept out of it stays in `$ADK_MEMORY_DATABASE_PASSWORD`."""
    settings: dict[str, str | None] = {
        SCHEMA_ENV: target.schema,
        REDACT_ENV: redact,
        EMBEDDING_MODEL_ENV: embedding_model or "none",
        DATABASE_URL_ENV: target.database_url,
    }
    if memory_model:
        settings[MODEL_ENV] = memory_model
    if target.database_url is None:
        settings[DATA_DIR_ENV] = str(resolve_data_dir(target.data_dir))
    export(settings)


def adk_arguments(passed: Sequence[str], session_uri: str, memory_uri: str) -> list[str]:
    """ADK's command line: what the user passed, the two service URIs, and `--no-reload` unless
    the user chose (ADK's reloader cannot restart a server built in-process)."""
    clash = [arg for arg in passed if arg.split("=", 1)[0] in _OWN_URIS]
    if clash:
        raise click.UsageError(
            f"{clash[0].split('=', 1)[0]} is set by adk-memory: use --database-url instead."
        )
    reload = [] if any(arg in _RELOAD_FLAGS for arg in passed) else ["--no-reload"]
    return [
        *passed,
        *reload,
        "--session_service_uri",
        session_uri,
        "--memory_service_uri",
        memory_uri,
    ]


@contextmanager
def serving_inspector(
    mode: InspectorMode,
    dev_ui: str | None = None,
    identity: IdentitySettings | None = None,
    vertex_api: bool = False,
) -> Iterator[None]:
    """Inside the block, the app ADK builds answers adk-memory's errors with their HTTP status
    codes (`add_error_responses`), and gets the memory inspector at `INSPECTOR_PATH` (unless
    `mode` is off), reading and writing through the services ADK built for the app (the same
    pools as the agents' runners); with `dev_ui` (its path), session ids link to the
    conversations there. With `vertex_api`, Vertex AI's Memory Bank and session REST API is
    served too (`adk_memory.adk.vertex_api`), on the same services. With `identity` on, the
    identity guard stands in front of it all (the inspector and ADK's `/dev/` tools for
    operators only)."""
    with collect_services() as services:

        def mount(app: Any) -> None:
            add_error_responses(app)
            memory = [s for s in services if isinstance(s, PostgresMemoryService)]
            sessions = [s for s in services if isinstance(s, PostgresSessionService)]
            if memory and mode != "off":
                router = inspector_router(
                    memory[0],
                    session_service=sessions[0] if sessions else None,
                    writable=mode == "writable",
                    dev_ui=dev_ui,
                    principal=current_principal,
                )
                app.include_router(router)
            guarded = identity or IdentitySettings()
            if vertex_api:
                app.include_router(
                    vertex_api_router(
                        memory[0] if memory else None,
                        sessions[0] if sessions else None,
                        policy=IdentityPolicy.from_settings(guarded),
                    )
                )
            add_identity_guard(app, guarded, operator_paths=(INSPECTOR_PATH, DEV_PATH))

        with fast_api_app_built(mount):
            yield


def _adk_command(name: str) -> click.Command:
    """ADK's click command, imported only when a server is started (it pulls in FastAPI)."""
    from google.adk.cli import cli_tools_click

    return cli_tools_click.main.commands[name]


_demo_option = click.option(
    "--demo",
    is_flag=True,
    help=(
        f"No Gemini key needed: the samples' agents and memory generation run on the "
        f"deterministic demo model (${DEMO_ENV}), and a demo user with memories, revisions, "
        "a quarantined fact and a failed generation is written first."
    ),
)
_vertex_api_option = click.option(
    "--vertex-api",
    is_flag=True,
    help=(
        "Also serve Vertex AI's Memory Bank and session REST API at /v1beta1, so the "
        "official clients and ADK's Vertex services work by pointing their base URL here."
    ),
)


def _server_command(name: str, what: str, inspector: InspectorMode) -> click.Command:
    """`name` (ADK's command of that name), serving the memory inspector as `inspector` unless
    told otherwise."""

    @click.command(
        name,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        help=(
            f"{what} on adk-memory's sessions and memory.\n\n"
            f"Every other argument (AGENTS_DIR, --port, --host, ...) goes to `adk {name}` "
            f"unchanged: see `adk {name} --help`."
        ),
    )
    @database_options
    @click.option(
        "--memory-model",
        envvar=MODEL_ENV,
        help=(
            f"Generate memories with this model (${MODEL_ENV}); unset, each event with text "
            "is remembered as it is."
        ),
    )
    @embedding_model_option
    @redact_option
    @click.option(
        "--memory-inspector",
        "inspector",
        type=click.Choice(INSPECTOR_MODES),
        default=inspector,
        show_default=True,
        help=(
            f"Serve the memory inspector at {INSPECTOR_PATH}: read-only, writable (approve / "
            "reject quarantined memories, retry failed generations, erase a user) or off. "
            "Beyond localhost it needs --auth and an operator."
        ),
    )
    @_demo_option
    @_vertex_api_option
    @identity_options
    @click.argument("adk_args", nargs=-1, type=click.UNPROCESSED)
    @click.pass_context
    def command(
        ctx: click.Context,
        target: Target,
        memory_model: str | None,
        embedding_model: str | None,
        redact: str,
        inspector: InspectorMode,
        demo: bool,
        vertex_api: bool,
        adk_args: tuple[str, ...],
        identity: IdentitySettings,
    ) -> None:
        if demo:
            given = ctx.get_parameter_source("memory_model") == ParameterSource.COMMANDLINE
            if given and memory_model != DEMO_MODEL:
                raise click.UsageError("--demo generates memories with the demo model.")
            memory_model = DEMO_MODEL
        with user_errors():
            session_uri, memory_uri = service_uris(target, memory_model, embedding_model, redact)
        argv = adk_arguments(adk_args, session_uri, memory_uri)
        export_settings(target, memory_model, embedding_model, redact)
        export({DEMO_ENV: "1" if demo else None})
        register()
        adk = _adk_command(name)
        # Named as this command, under the group: ADK's usage line then reads
        # `adk-memory web [OPTIONS] [AGENTS_DIR]`, not this command's usage and ADK's run together.
        with user_errors(), adk.make_context(ctx.info_name, argv, parent=ctx.parent) as sub:
            check_exposure(sub.params.get("host"), identity, inspector)
            starting(name, sub.params, inspector, demo)
            dev_ui = DEV_UI_PATH if name == "web" else None
            with serving_inspector(inspector, dev_ui, identity, vertex_api):
                adk.invoke(sub)

    return command


# The dev UI is for development, next to the inspector's pages; an API server is often reachable
# by clients, and lists no users unless asked to.
web = _server_command("web", "ADK's dev UI", "read-only")
api_server = _server_command("api_server", "ADK's API server", "off")
