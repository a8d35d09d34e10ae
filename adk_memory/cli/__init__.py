"""The `adk-memory` command (`python -m adk_memory.cli`).

Owns: the command tree: which subcommands exist, under which names, and which module holds
each. Each subcommand lives in its own module, imported only when it runs or its own help is
asked for: `adk-memory --version` and `--help` import neither ADK nor a database driver (most
commands need ADK, whose import takes over a second). Nothing in the package imports this one.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import click


@dataclass(frozen=True)
class _Entry:
    """Where a subcommand is, and its one-line help for `adk-memory --help` (kept equal to the
    command's own by a test, so listing the commands imports none of them)."""

    module: str
    attribute: str
    summary: str
    children: tuple[tuple[str, str], ...] = ()
    """Subcommands kept in modules of their own: (module, attribute)."""
    deferred: tuple[tuple[str, str, str, str], ...] = ()
    """Subcommands of a light group (`db`: its server commands import no ADK nor SQLAlchemy)
    whose module is heavy: (name, module, attribute, one-line help), imported when they run."""


_COMMANDS: dict[str, _Entry] = {
    "api_server": _Entry(
        ".server", "api_server", "ADK's API server on adk-memory's sessions and memory."
    ),
    "audit": _Entry(
        ".audit",
        "audit",
        "The audit of operator access: inspector page views, exports, erasures, approvals and "
        "rejections of quarantined memories, dead-letter retries and opt-out changes.",
    ),
    "backfill": _Entry(".backfill", "backfill", "Generate memories from stored sessions."),
    "config": _Entry(
        ".app_config",
        "config",
        "An app's memory configuration, shared by its agents and every worker.",
    ),
    "db": _Entry(
        ".db",
        "db",
        "The embedded PostgreSQL (no server to install).",
        deferred=(
            (
                "roles",
                ".roles",
                "roles",
                "Create the least-privilege roles and grant them what each process needs.",
            ),
        ),
    ),
    "erase": _Entry(
        ".erase",
        "erase",
        "Erase one user of one app: sessions, events, compaction summaries, user state, "
        "memories (every scope naming the user, quarantined ones too), revisions, watermarks "
        "and generation jobs.",
    ),
    "export": _Entry(
        ".vertex",
        "export_group",
        "Export memories and sessions in Vertex AI Agent Engine's shapes (JSON lines).",
    ),
    "import": _Entry(
        ".vertex",
        "import_group",
        "Import memories and sessions from Vertex AI Agent Engine (Memory Bank, Sessions).",
    ),
    "memories": _Entry(
        ".memories",
        "memories",
        "Read memories (list, show, search, revisions, export), import them (import), rebuild "
        "their full-text index (reindex); review quarantined ones (quarantine); forget those "
        "no longer believed (prune); roll one back to a revision (rollback); delete those a "
        "filter matches (purge).",
        children=(
            (".quarantine", "quarantine"),
            (".memory_bank", "rollback"),
            (".memory_bank", "purge"),
            (".ingest", "import_memories"),
            (".ingest", "reindex"),
            (".prune", "prune"),
        ),
    ),
    "mcp": _Entry(
        ".mcp",
        "mcp",
        "Serve one user's memories to MCP clients (Gemini CLI, IDE agents, other frameworks): "
        "tools to search, create, update and forget memories and read the user's profiles.",
    ),
    "migrate": _Entry(
        ".migrate", "migrate", "Create or upgrade the tables, and the vector column and index."
    ),
    "opt-out": _Entry(
        ".opt_out",
        "opt_out",
        "Record that a user opted out of memory: from now on nothing is remembered for them "
        "by any path (tools, generation, procedures, imports; queued generations are refused "
        "when they run).",
    ),
    "sweep": _Entry(
        ".maintenance",
        "sweep",
        "Delete expired sessions and memories, and finished generation jobs.",
    ),
    "web": _Entry(".server", "web", "ADK's dev UI on adk-memory's sessions and memory."),
    "worker": _Entry(".worker", "worker", "Run memory-generation jobs."),
}


def _load(entry: _Entry) -> click.Command:
    """The subcommand `entry` names, its module imported (with its children attached)."""
    command: click.Command = getattr(
        importlib.import_module(entry.module, __name__), entry.attribute
    )
    if isinstance(command, click.Group):
        for module, attribute in entry.children:
            command.add_command(getattr(importlib.import_module(module, __name__), attribute))
        for name, module, attribute, summary in entry.deferred:
            command.add_command(_Deferred(name, module, attribute, summary))
    return command


class _Deferred(click.Command):
    """A subcommand listed by its one-line help and imported when it runs (or its own help is
    asked for): what the group's help shows costs no import."""

    def __init__(self, name: str, module: str, attribute: str, summary: str) -> None:
        super().__init__(name, help=summary, short_help=summary)
        self._where = (module, attribute)

    def real(self) -> click.Command:
        module, attribute = self._where
        command: click.Command = getattr(importlib.import_module(module, __name__), attribute)
        return command

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        return self.real().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        return ctx.command.invoke(ctx)


class _Commands(dict[str, click.Command]):
    """`main.commands`: a subcommand is imported the first time it is looked up."""

    def __missing__(self, name: str) -> click.Command:
        if name not in _COMMANDS:
            raise KeyError(name)
        command = self[name] = _load(_COMMANDS[name])
        return command


class _LazyGroup(click.Group):
    """A group whose subcommands are imported when they are used."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _Commands()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self.commands[cmd_name] if cmd_name in _COMMANDS else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        limit = formatter.width - 6 - max(len(name) for name in _COMMANDS)
        # Shortened as click shortens a command's own help (a command made of the summary).
        rows = [
            (name, click.Command(name, help=_COMMANDS[name].summary).get_short_help_str(limit))
            for name in sorted(_COMMANDS)
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="adk-memory")
def main() -> None:
    """Durable sessions and long-term memory for ADK agents, on PostgreSQL.

    Commands that use a database take --database-url (or $ADK_MEMORY_DATABASE_URL); without
    one they use the embedded PostgreSQL in ./.adk/pgdata.
    """


__all__ = ["main"]
