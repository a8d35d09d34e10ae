"""`adk-memory import vertex|vertex-jsonl` and `adk-memory export vertex-jsonl`: moving from
Vertex AI Agent Engine (Memory Bank and Sessions) to adk-memory, and back out in the same shape.

Owns: the options (the engine, `--since`, `--sessions` with the `--app` they belong to here,
the file), the progress shown while an import runs, the final count table (stdout; printed too
when an import stops part way, with how to resume), and one-line errors for what the user can
fix: bad arguments, the `vertex` extra not installed, the API refusing (permissions, a missing
engine). What is imported and how it stays idempotent is `adk_memory.adk.vertex_import`'s.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime, timezone
from typing import IO, Any

import click

from .._retry import describe, is_permanent, is_transient
from ..adk.vertex_import import ImportReport, VertexImporter, export_jsonl
from ..adk.vertex_records import parse_time
from ..adk.vertex_source import (
    AgentEnginePages,
    JsonlPages,
    VertexClientPages,
    engine_name,
    import_vertexai,
)
from ..errors import InputValidationError
from ..memory.embeddings import GeminiEmbedder
from ..memory.scope import Scope
from ..memory.service import PostgresMemoryService
from ..sessions.service import PostgresSessionService
from ..settings.variables import parse_duration, parse_redact
from .memories import _memories, scope_options
from .options import (
    Overrides,
    Target,
    database_options,
    embedding_model_option,
    redact_option,
    run,
    user_errors,
    with_options,
)
from .output import echo_table, held_in_quarantine, note, plural, running_count


class _Since(click.ParamType):
    """A time (`2025-06-01`, `2025-06-01T12:00:00Z`) or how long ago (`30d`, `12h`)."""

    name = "time|duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> datetime:
        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        if not text.isdigit():  # a bare number is a year or a typo, never seconds here
            with suppress(ValueError):
                return datetime.now(timezone.utc) - parse_duration(text)
        with suppress(ValueError):
            day = datetime.fromisoformat(text)
            return day if day.tzinfo else day.replace(tzinfo=timezone.utc)
        with suppress(ValueError):  # what Python < 3.11 does not read: `Z`, 9 digits
            return parse_time(text, "--since")
        self.fail(
            f"{value!r} is neither a time (2025-06-01T12:00:00Z) nor a duration (30d).", param, ctx
        )


def _import_options(command: Any) -> Any:
    return with_options(
        command,
        [
            database_options,
            embedding_model_option,
            redact_option,
            click.option(
                "--since",
                type=_Since(),
                help="Only memories and sessions updated since then: a time (2025-06-01, "
                "2025-06-01T12:00:00Z) or how long ago (30d, 12h).",
            ),
            click.option(
                "--revisions/--no-revisions",
                "with_revisions",
                default=True,
                show_default=True,
                help="Add each memory's Memory Bank revisions to its history (one more request "
                "per memory).",
            ),
            click.option(
                "--sessions",
                "with_sessions",
                is_flag=True,
                help="Import the sessions with their events too (needs --app).",
            ),
            click.option(
                "--app",
                "app_name",
                metavar="APP",
                help="The ADK app's name here: the engine's Memory Bank configuration is pushed "
                "as this app's (`config push`), and with --sessions the sessions get it (an Agent "
                "Engine session has none of its own).",
            ),
            click.option(
                "--allow-erased",
                is_flag=True,
                help="Import erased users' data too (restoring it on purpose). Without it, what "
                "an erasure removed is counted as ERASED and not imported.",
            ),
        ],
    )


def _table(report: ImportReport) -> None:
    """The counts; an ERASED column (what erasures keep out) when an erased user's data was
    read."""
    rows = [(kind, t) for kind, t in report.rows() if kind == "memories" or t.read]
    erased = any(t.erased for _, t in rows)
    echo_table(
        ["", "READ", "IMPORTED", "UPDATED", "ALREADY_HERE", "SKIPPED"] + ["ERASED"] * erased,
        [
            [kind, *map(str, (t.read, t.imported, t.updated, t.present, t.skipped))]
            + [str(t.erased)] * erased
            for kind, t in rows
        ],
    )
    held_in_quarantine(report.memories.quarantined)


async def _run(
    importer: VertexImporter,
    memory: PostgresMemoryService,
    sessions: PostgresSessionService | None,
    app_name: str | None,
) -> None:
    """The import, its services opened and closed here; an API error the user can act on (or
    that outlasted the retries) becomes one line. With `app_name`, the engine's configuration
    first (a field adk-memory does not implement stops the import before any memory)."""
    try:
        async with memory:
            if app_name:
                pushed = await importer.import_config(app_name)
                if pushed is None:
                    note("The Agent Engine has no Memory Bank configuration: none pushed.")
                else:
                    version, created = pushed
                    unchanged = "" if created else " (unchanged)"
                    note(f"Memory Bank configuration: {app_name} version {version}{unchanged}.")
            with running_count("memories read") as progress:
                await importer.import_memories(progress)
        if sessions is not None:
            async with sessions:
                with running_count("sessions read") as progress:
                    await importer.import_sessions(progress)
    except Exception as exc:
        if is_permanent(exc) or is_transient(exc):
            raise click.ClickException(f"Reading from Vertex AI failed: {describe(exc)}") from exc
        raise


def _import(
    target: Target,
    pages: AgentEnginePages,
    engine: str,
    *,
    embedding_model: str | None,
    redact: str,
    since: datetime | None,
    with_revisions: bool,
    with_sessions: bool,
    app_name: str | None,
    allow_erased: bool,
) -> None:
    if with_sessions and not app_name:
        raise click.UsageError("--sessions needs --app: the app the sessions belong to here.")
    overrides = click.get_current_context().find_object(Overrides) or Overrides()
    embedder = overrides.embedder or (
        GeminiEmbedder(embedding_model) if embedding_model is not None else None
    )
    redactor = parse_redact(redact)
    memory = target.memory(embedder=embedder, redactor=redactor, run_worker=False)
    sessions = target.sessions(redactor=redactor) if with_sessions else None
    importer = VertexImporter(
        pages,
        engine,
        memory=memory,
        sessions=sessions,
        app_name=app_name,
        since=since,
        revisions=with_revisions,
        allow_erased=allow_erased,
    )
    resume = "Run the same command again to resume: nothing is imported twice."
    try:
        run(_run(importer, memory, sessions, app_name))
    except click.ClickException as exc:
        _table(importer.report)
        raise click.ClickException(f"{exc.message} {resume}") from exc
    except BaseException:  # a bug, or Ctrl-C: what was done, and how to go on
        _table(importer.report)
        note(f"Stopped. {resume}")
        raise
    _table(importer.report)


@click.group("import")
def import_group() -> None:
    """Import memories and sessions from Vertex AI Agent Engine (Memory Bank, Sessions)."""


@import_group.command("vertex")
@click.option("--project", required=True, help="The Google Cloud project of the Agent Engine.")
@click.option("--location", required=True, help="Its region, e.g. us-central1.")
@click.option(
    "--agent-engine",
    required=True,
    metavar="ID",
    help="The Agent Engine's id: the last part of projects/P/locations/L/reasoningEngines/ID.",
)
@_import_options
def import_vertex(
    target: Target,
    project: str,
    location: str,
    agent_engine: str,
    embedding_model: str | None,
    redact: str,
    since: datetime | None,
    with_revisions: bool,
    with_sessions: bool,
    app_name: str | None,
    allow_erased: bool,
) -> None:
    """Copy an Agent Engine's Memory Bank memories (fact, scope, topics, metadata, times, the
    TTL left) and structured profiles, with --app its Memory Bank configuration (pushed as the
    app's), and with --sessions its sessions with their events, through
    google-cloud-aiplatform (pip install "adk-memory[vertex]"; Application Default
    Credentials). Memories are redacted and guarded as the agent's own writes: use the agent's
    --embedding-model and --redact. Safe to run again, or to resume after a stop: nothing is
    imported twice, and a memory changed in Memory Bank since is updated. What an erasure
    removed (`adk-memory erase`) is not imported again (counted as ERASED) unless
    --allow-erased."""
    try:
        engine = engine_name(project, location, agent_engine)
    except InputValidationError as exc:
        raise click.UsageError(str(exc)) from exc
    overrides = click.get_current_context().find_object(Overrides) or Overrides()
    pages = overrides.vertex
    if pages is None:
        try:
            import_vertexai()
        except ImportError as exc:
            raise click.ClickException(str(exc)) from exc
        pages = VertexClientPages(project, location)
    _import(
        target,
        pages,
        engine,
        embedding_model=embedding_model,
        redact=redact,
        since=since,
        with_revisions=with_revisions,
        with_sessions=with_sessions,
        app_name=app_name,
        allow_erased=allow_erased,
    )


@import_group.command("vertex-jsonl")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@_import_options
def import_vertex_jsonl(
    target: Target,
    source: IO[str],
    embedding_model: str | None,
    redact: str,
    since: datetime | None,
    with_revisions: bool,
    with_sessions: bool,
    app_name: str | None,
    allow_erased: bool,
) -> None:
    """Import the JSON lines `export vertex-jsonl` writes (Memory Bank's memory and session
    shapes), as `import vertex` imports an Agent Engine: safe to run again, and what an erasure
    removed is not imported again unless --allow-erased."""
    with user_errors():
        pages = JsonlPages(source)
    _import(
        target,
        pages,
        source.name,
        embedding_model=embedding_model,
        redact=redact,
        since=since,
        with_revisions=with_revisions,
        with_sessions=with_sessions,
        app_name=app_name,
        allow_erased=allow_erased,
    )


@click.group("export")
def export_group() -> None:
    """Export memories and sessions in Vertex AI Agent Engine's shapes (JSON lines)."""


async def _export(
    target: Target,
    scope: Scope | None,
    within: Scope | None,
    with_sessions: bool,
    out: IO[str],
) -> tuple[int, int]:
    named = scope if scope is not None else within or {}
    async with target.memory() as memory, target.sessions() as sessions:
        memories, sessions_out = await export_jsonl(
            out,
            _memories(memory, scope, within, None),
            memory,
            sessions if with_sessions else None,
            app_name=named.get("app_name"),
            user_id=scope.get("user_id") if scope is not None else None,
        )
        counts = {"memories": memories, "sessions": sessions_out}
        await memory.record_access("export", scope or within, counts=counts)
        return memories, sessions_out


@export_group.command("vertex-jsonl")
@database_options
@scope_options(across_users=True)
@click.option(
    "--sessions", "with_sessions", is_flag=True, help="The app's sessions with their events too."
)
@click.option(
    "--output",
    "-o",
    type=click.File("w", encoding="utf-8", lazy=False),  # created even when nothing is exported
    default="-",
    help="Write to this file instead of stdout.",
)
def export_vertex_jsonl(
    target: Target,
    scope: Scope | None,
    within: Scope | None,
    with_sessions: bool,
    output: IO[str],
) -> None:
    """Export a scope's (or with --all-users an app's) live memories with their revisions, and
    with --sessions the sessions with their events, as JSON lines of Memory Bank's and Agent
    Engine Sessions' resources: what `import vertex-jsonl` reads. Memories the guard
    quarantined are never exported here: Memory Bank has no quarantine, so an imported one would
    be live (`memories export --include-quarantined` exports them, marked). The export is
    audited (`adk-memory audit list`): this process's user, the scope, the counts."""
    named = scope if scope is not None else within or {}
    if with_sessions and "app_name" not in named:
        raise click.UsageError("--sessions needs --app.")
    memories, sessions = run(_export(target, scope, within, with_sessions, output))
    done = plural(memories, "memory", "memories")
    if with_sessions:
        done += f" and {plural(sessions, 'session')}"
    note(f"Exported {done}.")


__all__ = ["export_group", "import_group"]
