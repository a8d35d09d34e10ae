"""`python -m adk_memory.eval.generation` (see `command.main`)."""

import sys

from .command import main

sys.exit(main())
