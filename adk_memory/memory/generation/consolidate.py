"""Consolidation: one model call that merges new facts into a scope's existing memories.

Owns: the consolidation prompt, the shape of the model's decisions, and their validation into
`MemoryOperation`s (CREATE / UPDATE / DELETE / CONFIRM against the candidates it was shown,
each with the most trusted source of its facts). It never touches the store, and never decides
a conflict by trust: the caller fetched the candidates, has `memory.trust` enforce its rule on
the operations, and applies them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from google.adk.models.base_llm import BaseLlm
from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from ..checks import MAX_FACT_LENGTH
from ..models import Memory
from ..rendering import neutralise
from .extract import ExtractedFact
from .llm import GenerationOutputError, generate_structured
from .sources import FactSource, fact_source, strongest
from .templates import load_template


class MemoryOperation(BaseModel):
    """One change to apply to a scope's memories."""

    model_config = ConfigDict(frozen=True)

    action: Literal["CREATE", "UPDATE", "DELETE", "CONFIRM"]
    """CONFIRM: the new facts say what the target memory already says (a corroboration)."""
    fact: str | None = None
    """The memory's text after the change (CREATE and UPDATE)."""
    target_id: str | None = None
    """The existing memory changed (UPDATE, DELETE and CONFIRM)."""
    topic: str | None = None
    """The topic of the new fact behind the change."""
    extracted_facts: tuple[str, ...] = ()
    """The extracted facts that led to the change (for the revision's `extracted_facts`)."""
    source: FactSource = "implicit"
    """The most trusted source of those facts (`ExtractedFact.source`)."""
    forget: bool = False
    """A DELETE the user asked for (a forget request): never blocked by trust."""


class _Decision(BaseModel):
    action: Literal["CREATE", "UPDATE", "DELETE", "CONFIRM"]
    fact_numbers: list[int] = Field(description="The numbers of the new facts it accounts for.")
    target_id: str | None = Field(
        default=None, description="Existing memory id (UPDATE, DELETE, CONFIRM)."
    )
    fact: str | None = Field(default=None, description="The memory's new text (CREATE, UPDATE).")


class _Plan(BaseModel):
    operations: list[_Decision]


def _line(text: str) -> str:
    return " ".join(text.split())


def app_instructions(instructions: str) -> str:
    """A prompt section holding an app's extra instructions (`ConsolidationConfig`), "" for
    none: appended after a prompt's own rules, which it cannot lift (answers are validated in
    code)."""
    if not instructions.strip():
        return ""
    return f"\n## The application's own instructions\n\n{instructions.strip()}\n"


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
            MemoryOperation(
                action="CREATE",
                fact=text,
                topic=item.topic,
                extracted_facts=(text,),
                source=item.source,
            )
        )
    return operations


def _render_input(
    facts: Sequence[ExtractedFact],
    candidates: Sequence[Memory],
    earlier: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The consolidation model's input. Stored memories (written before any guard, perhaps)
    and new facts are shown `neutralise`d, as to every model: one line each, no tag or role
    marker that could pass as an instruction. `earlier`: a candidate's earlier facts (its
    latest revisions', newest first), shown on its line."""
    earlier = earlier or {}
    new_facts = "\n".join(
        f"{n}. ({f.topic}, source: {f.source}{', FORGET' if f.forget else ''}) {neutralise(f.fact)}"
        for n, f in enumerate(facts, 1)
    )
    existing = "\n".join(
        f"- id: {m.id} | topics: {', '.join(map(neutralise, m.topics)) or 'none'} | "
        f"updated: {m.update_time:%Y-%m-%d} | source: {fact_source(m.source_type)} | "
        f"confidence: {_confidence(m)} | {neutralise(m.fact)}"
        + (
            " | earlier: " + " / ".join(neutralise(f) for f in earlier[m.id])
            if earlier.get(m.id)
            else ""
        )
        for m in candidates
    )
    return load_template("consolidate_input").substitute(
        new_facts=new_facts, existing_memories=existing
    )


def _confidence(memory: Memory) -> str:
    """A candidate's confidence as the model is told it: effective (decayed) when the caller
    set it, else as stored; "unknown" when never set."""
    value = (
        memory.effective_confidence
        if memory.effective_confidence is not None
        else memory.confidence
    )
    return "unknown" if value is None else f"{value:.2f}"


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
    confirmed: list[MemoryOperation] = []
    for decision in plan.operations:
        sources = _sources(decision, facts)
        forget = any(s.forget for s in sources)
        action, target = decision.action, (decision.target_id or "").strip()
        text = _line(decision.fact or "")
        if action == "CONFIRM":  # a forget request confirming a memory means nothing: dropped
            if target in ids and not forget:
                confirmed.append(_operation(decision, None, target, sources))
            continue
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
            _operation(
                decision,
                None if action == "DELETE" else text,
                None if action == "CREATE" else target,
                sources,
            )
        )
    # A memory is confirmed once, and not when another operation changes it.
    for op in confirmed:
        if op.target_id not in targeted:
            targeted[op.target_id or ""] = "CONFIRM"
            operations.append(op)
    return operations


def _operation(
    decision: _Decision, text: str | None, target: str | None, sources: list[ExtractedFact]
) -> MemoryOperation:
    """A decision as an operation, with the provenance of the facts it accounts for."""
    return MemoryOperation(
        action=decision.action,
        fact=text,
        target_id=target,
        topic=sources[0].topic,
        extracted_facts=tuple(s.fact for s in sources),
        source=strongest(s.source for s in sources),
        forget=any(s.forget for s in sources),
    )


async def consolidate(
    llm: BaseLlm,
    facts: Sequence[ExtractedFact],
    candidates: Sequence[Memory],
    *,
    timeout: float = 60.0,
    instructions: str = "",
    prompt: str = "consolidate",
    earlier: Mapping[str, Sequence[str]] | None = None,
) -> list[MemoryOperation]:
    """How the new facts change the scope's memories, decided in one model call against the
    candidates (the most similar existing memories). A fact already known yields no operation.
    `prompt`: the system instruction's template (procedures have their own, with the same
    answer shape and rules).

    With no candidates there is nothing to reconcile, so no model call is made: every fact to
    remember is created. That keeps calls per generation at most one here, however large the
    store grows. `instructions`: the scope's extra consolidation instructions
    (`ConsolidationConfig.instructions`), appended to the prompt; the decisions are validated
    the same way whatever they say. `earlier`: each candidate's earlier facts, shown with it
    (`ConsolidationConfig.revisions_per_candidate_count`).
    """
    if not facts:
        return []
    if not candidates:
        return plain_creates(facts)
    plan = await generate_structured(
        llm,
        system_instruction=load_template(prompt).template + app_instructions(instructions),
        contents=[
            types.Content(
                role="user", parts=[types.Part(text=_render_input(facts, candidates, earlier))]
            )
        ],
        schema=_Plan,
        timeout=timeout,
    )
    return _validated(plan, facts, candidates)
