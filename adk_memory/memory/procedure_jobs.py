"""Procedure generation jobs: a successful session -> anonymised playbooks -> the app's
procedures, consolidated, with revisions.

Owns: the job kind (`PROCEDURE_SOURCE` payloads) and its handler. A procedure job is queued in
the session's user scope (so the user's erasure or purge deletes it with its conversation, and
it takes that user's lease), and writes to the app-level scope's procedures
(`store.procedure_key` of `{"app_name": ...}`). The conversation is anonymised when the job
is built (`Anonymiser`: the user's identifiers, the service's redactor and a `PiiRedactor`),
the model is told to anonymise (`prompts/procedure_extract.md`), and every playbook it writes,
extracted or consolidated, is anonymised again and judged by the guard before it is stored.
What no redactor finds is kept from other users structurally (`procedure_rule`): the
consolidation model sees existing procedures masked for the job's user, and the job's user and
session are recorded, in its transaction, as supporting what it wrote (`procedure_support`),
which decides who may see it. The stored procedure names no session, event or user.

The work is `Generator`'s, reused whole (judging, candidates, consolidation with the procedure
prompt, one transaction with the job's completion, retries), with the extraction swapped for
`extract_playbooks`. It never writes SQL and never runs in a turn: the worker runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from google.adk.events.event import Event
from google.genai import types

from ..config import ConsolidationConfig
from . import procedure_rule
from .anonymise import Anonymiser
from .generation import (
    ExtractedFact,
    FieldChange,
    MemoryOperation,
    consolidate,
    conversation_contents,
)
from .generation.procedure import PROCEDURE_CONSOLIDATION, extract_playbooks
from .generator import Generator, Material, _events_data
from .jobs import ClaimedJob
from .models import Memory, MemoryAction
from .procedure_support import SupportStore
from .scope import app_scope, procedure_key, scope_key
from .screen import FactScreen, Screened
from .store import Watermark
from .trust import Decisions

PROCEDURE_SOURCE = "procedure"
"""The `source` of a procedure job's payload."""


def anonymising_screen(screen: FactScreen, identifiers: Sequence[str]) -> FactScreen:
    """`screen` with the `Anonymiser` for these identifiers as its redactor (same guard)."""
    return FactScreen(Anonymiser(identifiers, screen.redactor), screen.guard)


def procedure_payload(
    events: Sequence[Event],
    *,
    session_id: str,
    identifiers: Sequence[str],
    outcome: str | None,
    revision_labels: dict[str, str],
    screen: FactScreen,
) -> dict[str, Any]:
    """A job that learns playbooks from a successful session's events, anonymised now. The
    identifiers are kept, in the user's own scope, to anonymise what the model writes; those the
    redactors catch on their own (e-mail addresses, phone numbers) are not: a job's payload never
    holds what the redactor removes. `session_id`: the session that supports what the job
    writes (`procedure_support`); it is not a source of the procedures (`session_id` None)."""
    anonymous = anonymising_screen(screen, identifiers)
    redactors = Anonymiser((), screen.redactor)
    return {
        "source": PROCEDURE_SOURCE,
        "session_id": None,
        "supporting_session": session_id,
        "events": _events_data(events, anonymous),
        "identifiers": [i for i in identifiers if redactors.redact(i) == i],
        "outcome": anonymous.text(outcome) if outcome else None,
        "disable_consolidation": False,
        "metadata": {},
        "revision_labels": revision_labels,
    }


class ProcedureGenerator(Generator):
    """The job handler: procedure jobs as described above, every other job as `Generator`.

    Args:
      support: who supports which procedure (`procedure_support`).
      **kwargs: `Generator`'s.
    """

    def __init__(self, *, support: SupportStore, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._support = support

    async def __call__(self, job: ClaimedJob) -> None:
        if job.payload.get("source") != PROCEDURE_SOURCE:
            await super().__call__(job)
            return
        app = app_scope(job.scope["app_name"])
        target = replace(job, scope=app, scope_key=procedure_key(scope_key(app)))
        identifiers = [str(i) for i in job.payload.get("identifiers", [])]
        learner = _PlaybookLearner(
            support=self._support,
            supporter=(job.scope["user_id"], str(job.payload.get("supporting_session") or "")),
            store=self._store,
            profiles=self._profiles,
            queue=self._queue,
            llm=self._llm,
            embed=self._embed,
            config=self._config,
            revision_ttl=self._revision_ttl,
            screen=anonymising_screen(self._screen, identifiers),
        )
        await learner(target)


class _PlaybookLearner(Generator):
    """`Generator` for one procedure job, targeted at the app's procedures, its screen the
    anonymising one: playbooks instead of facts, the procedure consolidation prompt, no session
    or event ids on what it writes, candidates masked for the job's user, and the job's user
    and session recorded as supporting what it writes (`procedure_rule`).

    Args:
      support: the support store.
      supporter: the job's (user id, session id).
      **kwargs: `Generator`'s.
    """

    def __init__(self, *, support: SupportStore, supporter: tuple[str, str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._support = support
        self._supporter = supporter
        self._material: set[str] = set()

    def _conversation(self, payload: dict[str, Any], events: list[Event]) -> list[types.Content]:
        # Tool calls are how a task gets done: a playbook is written from them too.
        return conversation_contents(events, include_function_calls=True)

    async def _facts(self, job: ClaimedJob, material: Material) -> list[ExtractedFact]:
        outcome = material.payload.get("outcome") or ""
        said = [p.text for c in material.conversation for p in c.parts or () if p.text]
        self._material = procedure_rule.material(outcome, *said)
        return await extract_playbooks(
            self._llm, material.conversation, outcome=material.payload.get("outcome")
        )

    async def _operations(
        self,
        job: ClaimedJob,
        facts: list[ExtractedFact],
        disable_consolidation: bool,
        settings: ConsolidationConfig,
    ) -> list[MemoryOperation]:
        if not facts:
            return []
        candidates = await self._candidates(job, facts)
        return await consolidate(self._llm, facts, candidates, prompt=PROCEDURE_CONSOLIDATION)

    async def _candidates(self, job: ClaimedJob, facts: list[ExtractedFact]) -> list[Memory]:
        """The similar procedures, each masked for the job's user: the model is never shown a
        word of another user's it could copy into what this user supports."""
        found = await super()._candidates(job, facts)
        support = await self._support.support(job.scope_key, [m.id for m in found])
        user = self._supporter[0]
        masked = []
        for memory in found:
            users = dict(support.get(memory.id, {}))
            users[user] = users.get(user, frozenset()) | self._material
            fact = procedure_rule.masked(memory.fact, users, user)
            masked.append(memory.model_copy(update={"fact": fact}))
        return masked

    async def _in_transaction(
        self, conn: Any, job: ClaimedJob, applied: list[tuple[MemoryAction, Memory]]
    ) -> None:
        written = [(m.id, m.fact) for action, m in applied if action != MemoryAction.DELETED]
        if written:
            await self._support.record(
                conn,
                key=job.scope_key,
                app_name=job.scope["app_name"],
                supporter=self._supporter,
                hashes=self._material,
                written=written,
                min_users=self._config.generation.procedure_min_users,
            )

    async def _profile_changes(
        self, job: ClaimedJob, material: Material
    ) -> tuple[list[FieldChange], list[Screened]]:
        return [], []  # a playbook is the app's: no user's profile is learned from it

    async def _apply(
        self,
        job: ClaimedJob,
        payload: dict[str, Any],
        decisions: Decisions,
        held: list[tuple[ExtractedFact, Screened]],
        refused: list[Screened],
        events: list[Event],
        watermark: Watermark | None,
        profile: list[FieldChange],
    ) -> None:
        await super()._apply(job, payload, decisions, held, refused, [], None, [])
