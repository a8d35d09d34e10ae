"""Playbook extraction: one model call that distils how a successful conversation's task was
done (task, when to use, steps, pitfalls).

Owns: the procedure extraction prompt (`prompts/procedure_extract.md`, which also tells the
model to anonymise), the playbook's shape, and its rendering as one self-contained line, the
form a procedure is stored, consolidated (`consolidate(..., prompt=PROCEDURE_CONSOLIDATION)`)
and shown in. It never reads or writes memories and is not where anonymity is enforced: the
conversation it is given was anonymised before, and what it returns is anonymised and guarded
again by the job (`memory.pipeline`, its `PlaybookLearner`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from google.adk.models.base_llm import BaseLlm
from google.genai import types
from pydantic import BaseModel, Field

from ..checks import MAX_FACT_LENGTH
from ..rendering import neutralise
from .extract import ExtractedFact
from .llm import generate_structured
from .templates import load_template

logger = logging.getLogger(__name__)

PROCEDURE_TOPIC = "procedure"
"""The topic every playbook is stored under."""

PROCEDURE_CONSOLIDATION = "procedure_consolidate"
"""The consolidation prompt for playbooks (same answer shape as the facts' one)."""

_CLOSING_NOTE = (
    "[Note from the memory system, not from the user] The conversation is over and went well. "
    "Write the playbooks worth reusing from it, anonymised, as JSON, following your "
    "instructions."
)


class Playbook(BaseModel):
    """How a kind of task was done well."""

    task: str = Field(description="The kind of task, in general terms.")
    when_to_use: str = Field(default="", description="When the playbook applies.")
    steps: list[str] = Field(description="The steps that worked, in order.")
    pitfalls: list[str] = Field(default_factory=list, description="What to avoid.")

    def render(self) -> str:
        """The playbook as one line: "Task: ... When to use: ... Steps: 1) ...; 2) ...
        Pitfalls: ...". One line is what consolidation, search and the memory-context block
        work with; the labels keep its parts apart for the model reading it."""

        def clean(text: str) -> str:
            return " ".join(text.split()).rstrip(".;")

        steps = "; ".join(f"{n}) {clean(s)}" for n, s in enumerate(self.steps, 1) if clean(s))
        parts = [f"Task: {clean(self.task)}."]
        if clean(self.when_to_use):
            parts.append(f"When to use: {clean(self.when_to_use)}.")
        parts.append(f"Steps: {steps}.")
        pitfalls = "; ".join(clean(p) for p in self.pitfalls if clean(p))
        if pitfalls:
            parts.append(f"Pitfalls: {pitfalls}.")
        return " ".join(parts)


class _Playbooks(BaseModel):
    playbooks: list[Playbook]


def _outcome_note(outcome: str | None) -> str:
    if not outcome or not outcome.strip():
        return ""
    return f"\nWhat went well, as reported: {neutralise(outcome)}\n"


async def extract_playbooks(
    llm: BaseLlm,
    contents: Sequence[types.Content],
    *,
    outcome: str | None = None,
    timeout: float = 60.0,
) -> list[ExtractedFact]:
    """The playbooks worth keeping from a successful conversation, in one model call (none for
    an empty conversation), each rendered as one fact of topic `PROCEDURE_TOPIC`. `outcome`: what
    the feedback or the agent said went well (a hint; anonymised by the caller). A playbook
    without a task or steps, over the fact length limit, or repeated, is dropped."""
    if not contents:
        return []
    answer = await generate_structured(
        llm,
        system_instruction=load_template("procedure_extract").substitute(
            outcome=_outcome_note(outcome)
        ),
        contents=[*contents, types.Content(role="user", parts=[types.Part(text=_CLOSING_NOTE)])],
        schema=_Playbooks,
        timeout=timeout,
    )
    seen: set[str] = set()
    kept: list[ExtractedFact] = []
    for playbook in answer.playbooks:
        if not playbook.task.strip() or not any(s.strip() for s in playbook.steps):
            continue
        text = playbook.render()
        if len(text) > MAX_FACT_LENGTH or text.casefold() in seen:
            logger.warning("Procedure extraction: dropped a playbook (too long or repeated).")
            continue
        seen.add(text.casefold())
        kept.append(ExtractedFact(fact=text, topic=PROCEDURE_TOPIC))
    return kept
