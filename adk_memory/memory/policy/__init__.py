"""The guard and screen policy: pure decisions on a fact's text and data, before it is stored.

Owns: the screen every fact passes (`screen.py`: redaction, then the guard's verdict, as
`Screened`; `MemoryRejectedError` on a rejection), provenance and trust (`trust.py`: initial and
effective confidence, corroboration and contradiction, and the enforcement of a generation's
decisions, given what was read), the anonymiser of procedures (`anonymise.py`), and what a
user's state says about opt-out (`opt_out.py`), and what a stored configuration's guard and
redactor names mean (`names.py`). The guard itself is `memory.guard` (public
path); this room imports it, never the reverse. Its names resolve on first use.

Arrows: it imports the guard, the generation room's types (`generation.MemoryOperation`, the
source ranks) and the shared vocabulary only. It never touches SQL, never runs a model of its
own, and never imports the service, the pipeline, the store or the jobs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._faces import lazy_face

if TYPE_CHECKING:
    from .anonymise import Anonymiser, identity_values
    from .names import guard_name, named_guard, redactor_name
    from .opt_out import OPT_OUT_STATE_KEY, UserState, stated_wish
    from .screen import FactScreen, Screened, guard_labels, guarded_fact
    from .trust import effective_confidence, fact_source, with_effective

__getattr__, __dir__ = lazy_face(__name__, __file__, globals())

__all__ = [
    "OPT_OUT_STATE_KEY",
    "Anonymiser",
    "FactScreen",
    "Screened",
    "UserState",
    "effective_confidence",
    "fact_source",
    "guard_labels",
    "guard_name",
    "guarded_fact",
    "identity_values",
    "named_guard",
    "redactor_name",
    "stated_wish",
    "with_effective",
]
