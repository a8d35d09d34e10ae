"""One generation scenario end to end, pinned to what the code before the memory redesign
(issue 24, commit 8b25eb7) produced: the same jobs (session, contents, facts, procedure) give the
same operations, memories, revisions and model calls.

The model is `ScriptedLlm` with a responder that answers each kind of call from its request
(extraction: a fact per user line; consolidation: update the existing memory that shares a
word, delete it for a FORGET fact, else create; procedure: the agent's lines as steps), so the
figures below are the pipeline's decisions, not a script's order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions.session import Session
from google.genai import types

from adk_memory import PostgresMemoryService
from adk_memory.memory import GenerateMemoriesOperation, MemoryAction
from adk_memory.testing import ScriptedLlm

SCOPE = {"app_name": "a", "user_id": "u"}
_FILLER = {"the", "user", "likes", "lives", "in", "now"}


def _texts(request: LlmRequest, role: str) -> list[str]:
    return [
        part.text
        for content in request.contents or []
        if content.role == role
        for part in content.parts or []
        if part.text and not part.text.startswith("[Note")
    ]


def _extraction(request: LlmRequest) -> dict[str, Any]:
    facts = []
    for line in _texts(request, "user"):
        if line.lower().startswith("forget"):
            liked = line.split()[-1].strip(".")
            facts.append({"fact": f"The user likes {liked}.", "topic": "x", "forget": True})
        elif line.startswith("I "):
            said = line[2:].replace("like ", "likes ").replace("live ", "lives ")
            facts.append({"fact": f"The user {said}", "topic": "user_preferences"})
    return {"facts": facts}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower())) - _FILLER


def _plan(request: LlmRequest) -> dict[str, Any]:
    text = "\n".join(_texts(request, "user"))
    existing = re.findall(r"^- id: (\S+) \|.*\| (.+)$", text, re.M)
    operations: list[dict[str, Any]] = []
    for number, meta, fact in re.findall(r"^(\d+)\. \(([^)]*)\) (.+)$", text, re.M):
        hit = next((i for i, old in existing if _words(fact) & _words(old)), None)
        numbers = [int(number)]
        if "FORGET" in meta and hit:
            operations.append({"action": "DELETE", "fact_numbers": numbers, "target_id": hit})
        elif hit:
            update = {"action": "UPDATE", "fact_numbers": numbers, "target_id": hit, "fact": fact}
            operations.append(update)
        elif "FORGET" not in meta:
            operations.append({"action": "CREATE", "fact_numbers": numbers, "fact": fact})
    return {"operations": operations}


def _playbooks(request: LlmRequest) -> dict[str, Any]:
    steps = _texts(request, "model")[:3]
    return {"playbooks": [{"task": "Reset a router password", "steps": steps}]}


ANSWERS: dict[str, Callable[[LlmRequest], dict[str, Any]]] = {
    "_Extraction": _extraction,
    "_Plan": _plan,
    "_Playbooks": _playbooks,
}


class Model:
    """The responder, and the kinds of call it answered, in order."""

    def __init__(self) -> None:
        self.kinds: list[str] = []
        self.llm = ScriptedLlm(responder=self.answer)

    def answer(self, request: LlmRequest) -> str:
        assert request.config is not None
        kind = getattr(request.config.response_schema, "__name__", "")
        self.kinds.append(kind)
        return json.dumps(ANSWERS[kind](request))


def said(author: str, text: str, n: int) -> Event:
    role = "user" if author == "user" else "model"
    content = types.Content(role=role, parts=[types.Part(text=text)])
    return Event(
        id=f"e{n}", author=author, invocation_id=f"i{n}", timestamp=1000.0 + n, content=content
    )


def user_content(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def outcome(operation: GenerateMemoriesOperation, ids: dict[str, int]) -> list[tuple[Any, ...]]:
    assert operation.done and operation.error is None and operation.rejected == []
    return [
        (
            ids.setdefault(g.memory_id, len(ids)),
            g.action,
            g.memory.fact if g.memory else None,
        )
        for g in operation.generated_memories
    ]


async def test_each_job_kind_gives_what_it_gave_before_the_redesign(
    make_memory_service: Callable[..., PostgresMemoryService],
) -> None:
    model = Model()
    # No in-process worker: one left running would claim later tests' jobs on these tables.
    service = make_memory_service(llm=model.llm, run_worker=False)
    ids: dict[str, int] = {}

    async def done(operation: GenerateMemoriesOperation) -> list[tuple[Any, ...]]:
        await service.worker.run_until_idle()
        return outcome(await service.wait(operation), ids)

    async def run(**source: Any) -> list[tuple[Any, ...]]:
        return await done(await service.generate_memories(**source))

    talk = [said("user", "I like tea.", 1), said("agent", "Noted.", 2)]
    session = Session(id="s1", app_name="a", user_id="u", events=talk)
    assert await run(session=session) == [(0, MemoryAction.CREATED, "The user likes tea.")]
    assert await run(contents=[user_content("I like green tea now.")], scope=SCOPE) == [
        (0, MemoryAction.UPDATED, "The user likes green tea now.")
    ]
    paris = ["The user lives in Paris."]
    assert await run(facts=paris, scope=SCOPE) == [(1, MemoryAction.CREATED, paris[0])]
    assert await run(facts=paris, scope=SCOPE) == [(1, MemoryAction.UPDATED, paris[0])]
    assert await run(contents=[user_content("Forget that I like tea.")], scope=SCOPE) == [
        (0, MemoryAction.DELETED, None)
    ]
    router = [
        said("user", "My router password is lost.", 3),
        said("agent", "Hold the reset button for 10 seconds.", 4),
        said("agent", "Then log in with the default password.", 5),
        said("user", "It worked, thanks!", 6),
    ]
    learned = await done(
        await service.learn_procedure(Session(id="s2", app_name="a", user_id="u", events=router))
    )
    playbook = (
        "Task: Reset a router password. Steps: 1) Hold the reset button for 10 seconds; "
        "2) Then log in with the default password."
    )
    assert learned == [(2, MemoryAction.CREATED, None)]  # a procedure is read as its viewer's
    [found] = await service.retrieve_procedures("a", "u", search_query="router password")
    assert found.memory.fact == playbook

    [memory] = (await service.list_memories(SCOPE)).memories
    assert (memory.fact, memory.topics, memory.source_type.value) == (paris[0], [], "bootstrapped")
    revisions = await service.list_revisions(memory.id, SCOPE)
    assert [(r.action, r.fact, r.extracted_facts, r.labels) for r in revisions] == [
        (MemoryAction.CREATED, paris[0], paris, {}),
        (MemoryAction.UPDATED, paris[0], paris, {}),
    ]
    assert model.kinds == [
        "_Extraction",
        "_Extraction",
        "_Plan",
        "_Plan",
        "_Plan",
        "_Extraction",
        "_Plan",
        "_Playbooks",
    ]
