"""The ADK-facing memory service: `PostgresMemoryService` and the components it is composed of.

Owns: the service class (`service.py`, ADK's `BaseMemoryService` and Memory Bank's API, each
method delegating to one component), the components, each built with only what it needs
(`building.py`): `Memories` (CRUD), `Retrieval` (search), `DirectWrites` (facts and ADK's
direct writes), `Generation`/`NoGeneration` (the two modes), `Operations` (generation
operations and app configurations), `Pipelines` (one generator per app configuration),
`Privacy` (erasure, purge, opt-out, quarantine), `Procedures`, `Profiles`, `Inspection`,
`Audit` (the audit of operator access); the
shared write path (`writes.Writer`), the gate every write passes (`core.Gate`), and the memory
URI table (`uri.py`). Its names resolve on first use (an eager face would load ADK for a
module of this room that needs none of it).

Arrows: it may import the pipeline room (`pipeline/`, `generation/`, `jobs/`), the store, the
policy, the guard and the shared vocabulary; none of those ever imports it. It never writes SQL
of its own (the stores do) and never decides what a job writes (the pipeline does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._faces import lazy_face

if TYPE_CHECKING:
    from .audit import Audit
    from .direct import DirectWrites
    from .inspection import Inspection
    from .memories import Memories
    from .modes import Generation, NoGeneration
    from .operations import Operations
    from .pipelines import Pipelines
    from .privacy import Privacy
    from .procedures import Procedures
    from .profiles import MemoryProfile, ProfileRevision, Profiles
    from .retrieval import Retrieval
    from .service import PostgresMemoryService
    from .uri import MemorySettings, memory_settings_from_uri
    from .writes import Writer

__getattr__, __dir__ = lazy_face(__name__, __file__, globals())

__all__ = [
    "Audit",
    "DirectWrites",
    "Generation",
    "Inspection",
    "Memories",
    "MemoryProfile",
    "MemorySettings",
    "NoGeneration",
    "Operations",
    "Pipelines",
    "PostgresMemoryService",
    "Privacy",
    "Procedures",
    "ProfileRevision",
    "Profiles",
    "Retrieval",
    "Writer",
    "memory_settings_from_uri",
]
