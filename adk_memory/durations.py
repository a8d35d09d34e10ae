"""Durations and timeouts as people write them in settings: `3600`, `90s`, `15m`, `1d12h`.

Owns: the grammar of a duration and of a timeout (a duration, or `none`/`0` for no limit), so a
URL's `connect_timeout`, a service URI's options, an `ADK_MEMORY_*` variable and a command's
option read them alike. A root helper: `db/` checks the timeouts in database URLs with it and
`adk_memory.settings` reads the settings with it. It never reads the environment.
"""

from __future__ import annotations

import re
from datetime import timedelta

from .errors import InputValidationError

__all__ = ["parse_duration", "parse_timeout"]

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)([wdhms]?)")
_UNIT_SECONDS = {"w": 604_800, "d": 86_400, "h": 3_600, "m": 60, "s": 1, "": 1}


def parse_duration(text: str) -> timedelta:
    """A positive duration: seconds (`3600`), or with units `90s`, `15m`, `12h`, `30d`, `2w`,
    combined as in `1d12h`: short enough for a URL query or an environment variable.

    Raises InputValidationError (a ValueError) saying what was expected.
    """
    cleaned = text.strip().lower()
    parts = _DURATION_PART.findall(cleaned)
    unitless = [number for number, unit in parts if not unit]
    seconds = sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)
    if (
        not parts
        or "".join(number + unit for number, unit in parts) != cleaned
        or (unitless and len(parts) > 1)
        or seconds <= 0
    ):
        raise InputValidationError(
            f"{text!r} is not a duration such as 3600, 90s, 15m, 12h, 30d or 1d12h"
        )
    return timedelta(seconds=seconds)


def parse_timeout(text: str) -> timedelta | None:
    """A timeout: a duration (`parse_duration`), or `none` or `0` for no limit (Postgres's and
    libpq's spelling of it). Raises InputValidationError (a ValueError)."""
    if text.strip().lower() in ("none", "0"):
        return None
    return parse_duration(text)
