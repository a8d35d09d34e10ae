"""`python -m adk_memory.worker`: the deprecated alias of `adk-memory worker`, for one release.

Owns: nothing but the alias. It says on stderr that it is deprecated, then runs the one worker
command (`adk_memory.cli.worker`) with the arguments it was given, so its options, defaults,
errors and exit statuses are that command's; it keeps migrating the tables as this entry always
did. The worker's functions stay importable from here for one release.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import main as command_line
from .cli.worker import (
    check_model_credentials,
    failure,
    report,
    run_worker,
    serve,
    summary,
    unretrieved_errors_logged_once,
    worker,
    worker_service,
)

__all__ = [
    "check_model_credentials",
    "failure",
    "main",
    "report",
    "run_worker",
    "serve",
    "summary",
    "unretrieved_errors_logged_once",
    "worker_service",
]

DEPRECATION = (
    "DEPRECATED: `python -m adk_memory.worker` is `adk-memory worker` now (the same options); "
    "this alias goes in the next release."
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `adk-memory worker` with `argv` (default: the command line) after the deprecation
    notice; its exit status."""
    print(DEPRECATION, file=sys.stderr)
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        worker.main(
            ["--migrate", *arguments],
            prog_name="python -m adk_memory.worker",
            **command_line.context_settings,  # `-h` too, as `adk-memory worker` and argparse had
        )
    except SystemExit as exited:
        return 0 if exited.code is None else exited.code if isinstance(exited.code, int) else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
