"""Procedural memory's API: learn playbooks from a successful session, read and remove an app's
procedures.

Owns: `PostgresMemoryService.procedures`: `learn_procedure` (a session that went well becomes
a durable procedure job, see `pipeline`), `retrieve_procedures` (what one user may see),
and the procedure-only reads and writes that the fact API cannot serve by a filter: revisions
and deletion by id (an erased user's support goes with `erase_user`: `procedure_support`). The
fact API with `MemoryFilter(memory_type="procedure")` on the app's scope (`app_scope`) finds
the procedures every user may see (`retrieve_memories`, `list_memories`).
Who sees what is the structural rule of `procedure_rule`: a procedure is shown to every user
only when enough users' sessions support it and none of its words is one user's alone; until
then only its supporters see it. It never writes SQL (the stores do) and never runs a model in
the caller's turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from google.adk.sessions.session import Session

from ...config import GenerationConfig
from ...errors import InputValidationError
from ...telemetry import traced
from ..checks import check_id
from ..models import (
    GenerateMemoriesOperation,
    Memory,
    MemoryFilter,
    MemoryRevision,
    RetrievedMemory,
)
from ..pipeline import procedure_payload
from ..policy.anonymise import identity_values
from ..policy.screen import FactScreen
from ..procedure_rule import PUBLIC, masked, public, viewer_key
from ..scope import app_scope, procedure_key, scope_key, user_scope
from ..store import MemoryStore
from ..store.support import AUDIENCE, SupportStore
from .core import Gate, Readiness
from .modes import Mode
from .operations import Operations
from .retrieval import Retrieval


def _identifiers(session: Session, given: Sequence[str]) -> list[str]:
    """What identifies the session's user: their id, the identity values of the session state
    (`anonymise.IDENTITY_KEYS`) and those the caller names."""
    if isinstance(given, str) or not all(isinstance(i, str) for i in given):
        raise InputValidationError("identifiers must be a list of strings.")
    found = [session.user_id, *identity_values(session.state), *given]
    return list(dict.fromkeys(i.strip() for i in found if i.strip()))


class Procedures:
    """Procedural memory (`PostgresMemoryService.procedures`). Built with the service's mode
    (learning needs a model), the gate, the screen (payloads are redacted), the operations (to
    wait for one), the memory store and the procedures' support, the retrieval, and the
    generation settings."""

    def __init__(
        self,
        generation: Mode,
        gate: Gate,
        screen: FactScreen,
        operations: Operations,
        store: MemoryStore,
        support: SupportStore,
        ready: Readiness,
        retrieval: Retrieval,
        *,
        config: GenerationConfig,
        revision_ttl: float | None,
    ) -> None:
        self._generation = generation
        self._gate = gate
        self._screen = screen
        self._operations = operations
        self._store = store
        self._support = support
        self._ready = ready
        self._retrieval = retrieval
        self._config = config
        self._revision_ttl = revision_ttl

    @traced("memory.learn_procedure")
    async def learn_procedure(
        self,
        session: Session,
        *,
        outcome: str | None = None,
        identifiers: Sequence[str] = (),
        revision_labels: Mapping[str, str] | None = None,
        wait_for_completion: bool = False,
    ) -> GenerateMemoriesOperation:
        """Learn how `session`'s task was done well: its playbooks (task, when to use, steps,
        pitfalls) become procedures of the app (scope `{"app_name": ...}`), consolidated into
        the ones it has (a better playbook updates the old one; revisions kept), in the
        background like `generate_memories`. Call it for a session that went well (the
        `remember_how` tool and the `ProcedureFeedbackPlugin` do).

        The user's id, the identity values in the session state (name, e-mail, phone...), the
        `identifiers` given, and every e-mail address, phone and card number are removed before
        the model sees the conversation and again from what it writes, and the guard judges
        each playbook. What no redactor can know (a name said in passing, an address, an id)
        is kept from other users structurally: the session supports what its job writes, and a
        procedure is shown to other users only when `generation.procedure_min_users` users
        support it and none of its words is one user's alone (README, "Procedural memory").
        `outcome`: what went well (a hint for the model, anonymised too). Returns the operation
        (of the session's user scope: the job and its conversation are the user's until done);
        with `wait_for_completion`, finished, its `generated_memories` read from the app's
        procedures as the session's user may see them (`get_operation` reports their ids and
        actions only). `erase_user` removes
        the user's support and withdraws what they alone supported; a session it erased is
        refused (`ErasedError`: its events from before the erasure are never learned again).
        """
        self._generation.require("Learning procedures")
        if not isinstance(session, Session):
            raise InputValidationError("session must be an ADK Session.")
        if outcome is not None and not isinstance(outcome, str):
            raise InputValidationError("outcome must be a string.")
        scope = user_scope(session.app_name, session.user_id)
        await self._gate.refuse_opted_out(scope, session.state)  # learning from them is remembering
        # An erased session replayed (a plugin or a retry holding it) must not bring its
        # material back as support: `ErasedError`, as for `add_session_to_memory`.
        events = await self._gate.refuse_erased_session(
            session.app_name, session.user_id, session.id, session.events
        )
        payload = procedure_payload(
            [e for e in events if not e.partial],
            session_id=session.id,
            identifiers=_identifiers(session, identifiers),
            outcome=outcome,
            revision_labels={str(k): str(v) for k, v in (revision_labels or {}).items()},
            screen=self._screen,
        )
        operation = await self._generation.submit(scope, payload)
        if not wait_for_completion:
            return operation
        operation = await self._operations.wait(operation)
        key = procedure_key(scope_key(app_scope(session.app_name)))
        live = await self._store.get_many([g.memory_id for g in operation.generated_memories], key)
        live = await self._as_seen_by(session.app_name, session.user_id, list(live.values()))
        return operation.model_copy(
            update={
                "generated_memories": [
                    g.model_copy(
                        update={"memory": None if g.quarantined else live.get(g.memory_id)}
                    )
                    for g in operation.generated_memories
                ]
            }
        )

    @traced("memory.procedure_revisions")
    async def procedure_revisions(
        self, app_name: str, memory_id: str, *, user_id: str | None = None
    ) -> list[MemoryRevision]:
        """A procedure's history, oldest first (kept after it is deleted), as `user_id` may see
        it (None: as every user of the app may): by the rule of the procedure itself, a
        revision's text and extracted playbooks together, public ones as stored and, for a
        supporter, the others masked (`procedure_rule`)."""
        key = procedure_key(scope_key(app_scope(app_name)))
        if user_id is not None:
            user_id = user_scope(app_name, user_id)["user_id"]
        store = await self._ready()
        revisions = await store.revisions(check_id(memory_id), key)
        support = (await self._support.support(key, [memory_id])).get(memory_id, {})
        least = self._config.procedure_min_users
        shown: list[MemoryRevision] = []
        for revision in revisions:
            texts = [revision.fact or "", *revision.extracted_facts]
            if public(texts, support, least):
                shown.append(revision)
            elif user_id is not None and user_id in support:
                fact = None if revision.fact is None else masked(revision.fact, support, user_id)
                extracted = [masked(t, support, user_id) for t in revision.extracted_facts]
                shown.append(
                    revision.model_copy(update={"fact": fact, "extracted_facts": extracted})
                )
        return shown

    async def _as_seen_by(
        self, app_name: str, user_id: str, memories: Sequence[Memory]
    ) -> dict[str, Memory]:
        """`memories` (procedures of the app) as `user_id` may see them, by id: the app's
        public ones as stored, the others (theirs: they support them) masked for them
        (`procedure_rule`)."""
        key = procedure_key(scope_key(app_scope(app_name)))
        private = [m.id for m in memories if m.metadata.get(AUDIENCE) != [PUBLIC]]
        support = await self._support.support(key, private)
        return {
            m.id: m.model_copy(update={"fact": masked(m.fact, support[m.id], user_id)})
            if m.id in support
            else m
            for m in memories
        }

    @traced("memory.retrieve_procedures")
    async def retrieve_procedures(
        self, app_name: str, user_id: str, *, search_query: str, top_k: int = 3
    ) -> list[RetrievedMemory]:
        """The `top_k` procedures most like `search_query` that `user_id` may see, best first:
        the app's public ones, as stored, and those the user's sessions support, masked for
        them (a word only another user gave is "…": `procedure_rule`)."""
        scope = user_scope(app_name, user_id)
        found: list[RetrievedMemory] = []
        for audience in (PUBLIC, viewer_key(scope["app_name"], scope["user_id"])):
            flt = MemoryFilter(memory_type="procedure", metadata={AUDIENCE: [audience]})
            found += await self._retrieval.retrieve_memories(
                app_scope(app_name), search_query=search_query, top_k=top_k, filter=flt
            )
        best = sorted(found, key=lambda r: -r.score)[:top_k]
        seen = await self._as_seen_by(app_name, scope["user_id"], [r.memory for r in best])
        return [r.model_copy(update={"memory": seen[r.memory.id]}) for r in best]

    @traced("memory.delete_procedure")
    async def delete_procedure(self, app_name: str, memory_id: str) -> bool:
        """Delete one of the app's procedures (a playbook that misleads), keeping its
        revisions; False if the app has no such procedure."""
        key = procedure_key(scope_key(app_scope(app_name)))
        store = await self._ready()
        return await store.delete(key, check_id(memory_id), None, self._revision_ttl) > 0
