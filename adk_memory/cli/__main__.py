"""`python -m adk_memory.cli`: the `adk-memory` command without the installed script."""

from . import main

main(prog_name="adk-memory")
