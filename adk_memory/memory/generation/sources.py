"""Where a fact came from: the source names extraction gives facts, their source types, and how
much each source type is trusted.

Owns: `FactSource` (the names the model and the payloads use), their mapping to `SourceType`,
and the trust ranking (`RANK`) that picks the strongest source of a decision's facts. It sits
below both generation and `memory.trust` (which applies the ranking to conflicts), so neither
imports the other for these names. It never decides a conflict: `memory.trust` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ..models import SourceType

RANK: dict[SourceType, int] = {
    SourceType.BOOTSTRAPPED: 3,
    SourceType.USER_INPUT: 2,
    SourceType.IMPLICIT: 1,
    SourceType.AGENT: 1,
    SourceType.TOOL_OUTPUT: 0,
}
"""How much each source type is trusted: higher wins a conflict."""

FactSource = Literal["bootstrapped", "explicit", "implicit", "tool"]
"""Where an extracted fact came from, as extraction names it (`ExtractedFact.source`)."""

FACT_SOURCES: dict[FactSource, SourceType] = {
    "bootstrapped": SourceType.BOOTSTRAPPED,
    "explicit": SourceType.USER_INPUT,
    "implicit": SourceType.IMPLICIT,
    "tool": SourceType.TOOL_OUTPUT,
}
"""The names an extracted fact's source goes by (`ExtractedFact.source`), as source types."""


def fact_source(source_type: SourceType) -> FactSource:
    """The name `ExtractedFact.source` gives facts of this source type (the agent's own words
    count as implicit conversation)."""
    for name, kind in FACT_SOURCES.items():
        if kind is source_type:
            return name
    return "implicit"


def source_type_of(name: FactSource) -> SourceType:
    """The source type of an extracted fact's source name."""
    return FACT_SOURCES[name]


def strongest(names: Iterable[FactSource]) -> FactSource:
    """The most trusted of these source names ("implicit" when there are none)."""
    return max(names, key=lambda n: RANK[source_type_of(n)], default="implicit")
