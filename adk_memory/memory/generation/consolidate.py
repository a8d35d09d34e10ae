"""Consolidation: one model call that merges new facts into a scope's existing memories.

Owns: the consolidation prompt, the shape of the model's decisions, and their validation into
`MemoryOperation`s (CREATE / UPDATE / DELETE against the candidates it was shown). It never
touches the store: the caller fetched the candidates and applies the operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from google.adk.models.base_llm import BaseLlm
from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from ..checks import MAX_FACT_LENGTH
from ..models import Memory
from ..rendering import neutralise
from .extract import ExtractedFact
from .llm import GenerationOutputError, generate_structured
from .templates import load_template


class MemoryOperation(BaseModel):
    """One change to apply to a scope's memories."""

    model_config = ConfigDict(frozen=True)

    action: Literal["CREATE", "UPDATE", "DELETE"]
    fact: str | None = None
    """The memory's text after the change (CREATE and UPDATE)."""
    target_id: str | None = None
    """The existing memory changed (UPDATE and DELETE)."""
    topic: str | None = None
    """The topic of the new fact behind the change."""
    extracted_facts: tuple[str, ...] = ()
    """The extracted facts that led to the change (for the revision's `extracted_facts`)."""


class _Decision(BaseModel):
    action: Literal["CREATE", "UPDATE", "DELETE"]
    fact_numbers: list[int] = Field(description="The numbers of the new facts it accounts for.")
    target_id: str | None = Field(default=None, description="Existing memory id (UPDATE, DELETE).")
    fact: str | None = Field(default=None, description="The memory's new text (CREATE, UPDATE).")


class _Plan(BaseModel):
    operations: list[_Decision]


def _line(text: str) -> str:
    return " ".join(text.split())


def plain_creates(facts: Sequence[ExtractedFact]) -> list[MemoryOperation]:
    """A CREATE for each fact to remember, without looking at existing memories: for
    `disable_consolidation`, and for a scope with no candidates. Forget requests have nothing
    to delete here and are dropped; repeated facts are created once."""
    seen: set[str] = set()
    operations: list[MemoryOperation] = []
    for item in facts:
        text = _line(item.fact)
        if item.forget or not text or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        operations.append(
            MemoryOperation(action="CREATE", fact=text, topic=item.topic, extracted_facts=(text,))
        )
    return operations


def _render_input(facts: Sequence[ExtractedFact], candidates: Sequence[Memory]) -> str:
    """The consolidation model's input. Stored memories (written before any guard, perhaps)
    and new facts are shown `neutralise`d, as to every model: one line each, no tag or role
    marker that could pass as an instruction."""
    new_facts = "\n".join(
        f"{n}. ({f.topic}{', FORGET' if f.forget else ''}) {neutralise(f.fact)}"
        for n, f in enumerate(facts, 1)
    )
    existing = "\n".join(
        f"- id: {m.id} | topics: {', '.join(map(neutralise, m.topics)) or 'none'} | "
        f"updated: {m.update_time:%Y-%m-%d} | {neutralise(m.fact)}"
        for m in candidates
    )
    return load_template("consolidate_input").substitute(
        new_facts=new_facts, existing_memories=existing
    )


def _sources(decision: _Decision, facts: Sequence[ExtractedFact]) -> list[ExtractedFact]:
    numbers = sorted(set(decision.fact_numbers))
    if not numbers or numbers[0] < 1 or numbers[-1] > len(facts):
        raise GenerationOutputError(
            f"{decision.action} names fact numbers {decision.fact_numbers}; "
            f"there are facts 1 to {len(facts)}"
        )
    return [facts[n - 1] for n in numbers]


def _validated(
    plan: _Plan, facts: Sequence[ExtractedFact], candidates: Sequence[Memory]
) -> list[MemoryOperation]:
    """The model's decisions as operations, or GenerationOutputError for any the store could
    not apply faithfully (unknown target, missing text, two changes to one memory, a forget
    request turned into a write). The only decision dropped rather than rejected is a forget
    request's DELETE of a memory that does not exist: there is nothing to forget."""
    ids = {m.id for m in candidates}
    targeted: dict[str, str] = {}
    created: set[str] = set()
    operations: list[MemoryOperation] = []
    for decision in plan.operations:
        sources = _sources(decision, facts)
        forget = any(s.forget for s in sources)
        action, target = decision.action, (decision.target_id or "").strip()
        text = _line(decision.fact or "")
        if forget and action != "DELETE":
            raise GenerationOutputError(f"a forget request can only DELETE, not {action}")
        if action == "DELETE" and target not in ids and all(s.forget for s in sources):
            continue
        if action != "CREATE" and target not in ids:
            raise GenerationOutputError(f"{action} targets {target!r}, not a candidate memory id")
        if action != "DELETE" and not text:
            raise GenerationOutputError(f"{action} has no fact text")
        if len(text) > MAX_FACT_LENGTH:  # the model is held to the limit a user is
            raise GenerationOutputError(f"{action}'s fact is over {MAX_FACT_LENGTH} characters")
        if action == "CREATE":
            if text.casefold() in created:
                continue
            created.add(text.casefold())
        elif target in targeted:
            if action == targeted[target] == "DELETE":
                continue
            raise GenerationOutputError(f"memory {target!r} is changed by more than one operation")
        else:
            targeted[target] = action
        operations.append(
            MemoryOperation(
                action=action,
                fact=None if action == "DELETE" else text,
                target_id=None if action == "CREATE" else target,
                topic=sources[0].topic,
                extracted_facts=tuple(s.fact for s in sources),
            )
        )
    return operations


async def consolidate(
    llm: BaseLlm,
    facts: Sequence[ExtractedFact],
    candidates: Sequence[Memory],
    *,
    timeout: float = 60.0,
    prompt: str = "consolidate",
) -> list[MemoryOperation]:
    """How the new facts change the scope's memories, decided in one model call against the
    candidates (the most similar existing memories). A fact already known yields no operation.
    `prompt`: the system instruction's template (procedures have their own, with the same
    answer shape and rules).

    With no candidates there is nothing to reconcile, so no model call is made: every fact to
    remember is created. That keeps calls per generation at most one here, however large the
    store grows.
    """
    if not facts:
        return []
    if not candidates:
        return plain_creates(facts)
    plan = await generate_structured(
        llm,
        system_instruction=load_template(prompt).template,
        contents=[
            types.Content(role="user", parts=[types.Part(text=_render_input(facts, candidates))])
        ],
        schema=_Plan,
        timeout=timeout,
    )
    return _validated(plan, facts, candidates)
