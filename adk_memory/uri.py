"""The old home of the service URI grammar: `adk_memory.settings.uri` now.

Kept for one release so `from adk_memory.uri import ...` keeps working; it defines nothing.
"""

from __future__ import annotations

from .settings.uri import *  # noqa: F403
from .settings.uri import __all__ as __all__
