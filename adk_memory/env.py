"""The old home of the `ADK_MEMORY_*` variables: `adk_memory.settings.variables` now.

Kept for one release so `from adk_memory.env import ...` keeps working; it defines nothing.
"""

from __future__ import annotations

from .settings.variables import *  # noqa: F403
from .settings.variables import __all__ as __all__
