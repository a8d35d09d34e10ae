"""How the deployment's jobs fail (`python -m deploy.worker`, `deploy.migrate`, `deploy.sweep`):
one `Error:` line on stderr and exit status 1 for what the operator can fix.

Owns: running a job's entry point under the rule every `adk-memory` command follows
(`adk_memory.cli.failures.user_errors`: a bad setting, a missing model or credentials, an
unreachable database, a schema that needs migrating), so a misconfigured job's log says what to
change in one line instead of a traceback. Anything else (a bug) still raises with its
traceback. It never reads settings itself.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from adk_memory.cli.failures import user_errors


def run_job(body: Callable[[], int]) -> int:
    """`body()`'s exit status, or 1 after one `Error:` line for an error the operator can fix."""
    try:
        with user_errors():
            return body()
    except click.ClickException as exc:
        print(f"Error: {exc.format_message()}", file=sys.stderr)
        return 1
