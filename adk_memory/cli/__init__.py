"""The `adk-memory` command (`python -m adk_memory.cli`).

Owns: the command tree: which subcommands exist and under which names. Each subcommand lives in
its own module. Nothing in the package imports this one.
"""

from __future__ import annotations

import click

from .backfill import backfill
from .db import db, migrate
from .erase import erase
from .maintenance import sweep, worker
from .memories import memories
from .quarantine import quarantine
from .server import api_server, web


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="adk-memory")
def main() -> None:
    """Durable sessions and long-term memory for ADK agents, on PostgreSQL.

    Commands that use a database take --database-url (or $ADK_MEMORY_DATABASE_URL); without
    one they use the embedded PostgreSQL in ./.adk/pgdata.
    """


for _command in (web, api_server, db, migrate, worker, sweep, memories, backfill, erase):
    main.add_command(_command)
memories.add_command(quarantine)

__all__ = ["main"]
