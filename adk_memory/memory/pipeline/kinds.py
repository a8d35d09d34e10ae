"""What differs between job kinds: one handler per payload variant, none of which touches the
database.

Owns: `Material` (what a job generates from: its events after the watermark as model contents,
its customization, when it happened, the watermark to move), and the two handlers the
orchestrator (`run`) asks for the steps that differ by kind:

- `FactLearner` (session, contents and facts payloads): extraction with the scope's topics (or
  the given facts as they are), consolidation unless turned off (for the job or a topic),
  structured profiles learned from the same material.
- `PlaybookLearner` (procedure payloads): written to the app's procedures, its screen the
  anonymising one, playbooks extracted instead of facts (tool calls included), always
  consolidated with the procedure prompt against candidates masked for the job's user
  (`procedure_rule`), no profile, no session or event ids on what it writes, and the job's user
  and session recorded as supporting what it writes (`SupportWrite`).

A new job kind is a payload variant (`payload`) and a handler here (a `Learner`), chosen in
`handler_for`: handlers share functions, never a base class. A handler is built per job from
its payload; it reads nothing (the reads are `read`'s, passed in) and writes nothing (its part
of the plan is data the write phase applies).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.genai import types

from ...config import CustomizationConfig, MemoryBankConfig
from .. import procedure_rule
from ..generation import (
    ExtractedFact,
    MemoryOperation,
    consolidate,
    conversation_contents,
    extract_facts,
)
from ..generation.procedure import PROCEDURE_CONSOLIDATION, extract_playbooks
from ..generation.sources import source_type_of
from ..models import Memory, SourceType
from ..policy.screen import FactScreen
from ..procedure_rule import Support
from ..scope import app_scope, procedure_key, scope_key
from ..store import Watermark
from .payload import (
    ContentsPayload,
    FactsPayload,
    JobPayload,
    ProcedurePayload,
    SessionPayload,
    anonymising_screen,
)


@dataclass(frozen=True)
class Target:
    """The scope a job writes to (its own, or the app's procedures for a procedure job)."""

    scope: dict[str, str]
    key: str


@dataclass(frozen=True)
class Material:
    """What a job's steps generate from, worked out once: its conversation as model contents,
    the scope's customization, when the conversation happened, the ids of the events its
    writes cite, and the watermark its write moves (a session job's only)."""

    conversation: list[types.Content]
    customization: CustomizationConfig
    time: datetime | None
    cited: list[str]
    watermark: Watermark | None = None
    hashes: frozenset[str] = frozenset()
    """A procedure job's material (`procedure_rule.material`): what its user supports."""


@dataclass(frozen=True)
class SupportWrite:
    """Who supports what a procedure job writes (`procedure_support`): the job's (user,
    session) with the hashes of its material."""

    app_name: str
    supporter: tuple[str, str]
    hashes: frozenset[str]


def after_watermark(events: list[Event], watermark: tuple[str, float] | None) -> list[Event]:
    """The events not yet processed: after the watermark event if it is among them, else those
    newer than its time."""
    if watermark is None:
        return events
    event_id, event_time = watermark
    for i, event in enumerate(events):
        if event.id == event_id:
            return events[i + 1 :]
    return [e for e in events if e.timestamp > event_time]


class Learner(Protocol):
    """A job kind's handler: the steps of a generation that differ by kind."""

    target: Target
    screen: FactScreen
    source_id: str | None
    """The trust rule's source (the session the facts came from; None: one of its own)."""
    follows: str | None
    """The session whose watermark the job reads and moves (a session job's), else None."""
    learns_profiles: bool
    reads_support: bool
    """Whether the candidates' support is read (`shown` masks them with it)."""

    def material(self, processed: tuple[str, float] | None) -> Material:
        """The job's material; `processed`: the session's watermark (a session job's)."""
        ...

    async def extract(self, llm: BaseLlm, material: Material) -> list[ExtractedFact]:
        """The facts (or playbooks) to consolidate."""
        ...

    def split(
        self, facts: list[ExtractedFact], material: Material
    ) -> tuple[list[ExtractedFact], list[ExtractedFact]]:
        """(created as given, consolidated)."""
        ...

    def shown(
        self, candidates: list[Memory], support: Mapping[str, Support], material: Material
    ) -> list[Memory]:
        """The candidates as the consolidation model sees them."""
        ...

    async def consolidate(
        self,
        llm: BaseLlm,
        facts: list[ExtractedFact],
        shown: list[Memory],
        material: Material,
        earlier: Mapping[str, list[str]],
    ) -> list[MemoryOperation]:
        """One consolidation call; `earlier`: each candidate's earlier facts (may be empty)."""
        ...

    def profile_facts(self) -> list[str]:
        """Facts the scope's profiles are learned from besides the conversation."""
        ...

    def profile_source(self) -> SourceType:
        """A profile field's source type."""
        ...

    def support(self, material: Material) -> SupportWrite | None:
        """Who supports what the job writes (procedure jobs), else None."""
        ...


def _events(payload: JobPayload, screen: FactScreen) -> list[Event]:
    """The payload's events as ADK events, redacted again (for jobs queued before a redactor
    was configured)."""
    return [Event.model_validate(screen.event_data(e)) for e in payload.events]


def _time(events: list[Event]) -> datetime | None:
    """When the conversation happened: its last event's time (None without events)."""
    return datetime.fromtimestamp(events[-1].timestamp, timezone.utc) if events else None


class FactLearner:
    """Session, contents and facts jobs: facts about the scope's user into its memories."""

    learns_profiles = True
    reads_support = False

    def __init__(
        self,
        payload: JobPayload,
        *,
        scope: dict[str, str],
        key: str,
        screen: FactScreen,
        config: MemoryBankConfig,
    ) -> None:
        self.payload = payload
        self.target = Target(scope, key)
        self.screen = screen
        self.source_id: str | None = payload.session_id
        self.follows = payload.session_id if isinstance(payload, SessionPayload) else None
        self._config = config

    def material(self, processed: tuple[str, float] | None) -> Material:
        """The job's material; `processed`: the session's watermark (a session job's)."""
        events = _events(self.payload, self.screen)
        mark = None
        if isinstance(self.payload, SessionPayload):
            events = after_watermark(events, processed)
            if events:
                mark = Watermark(
                    self.target.key, self.payload.session_id, events[-1].id, events[-1].timestamp
                )
        conversation: list[types.Content] = []
        if not isinstance(self.payload, FactsPayload):
            contents: list[Event | types.Content] = [*events]
            given = self.payload.contents if isinstance(self.payload, ContentsPayload) else []
            contents += [types.Content.model_validate(c) for c in given]
            conversation = conversation_contents(
                contents, include_function_calls=self._config.generation.include_function_calls
            )
        return Material(
            conversation=conversation,
            customization=self.payload.customization(
                self._config.customization_for(frozenset(self.target.scope))
            ),
            time=_time(events),
            cited=[e.id for e in events],
            watermark=mark,
        )

    async def extract(self, llm: BaseLlm, material: Material) -> list[ExtractedFact]:
        """The job's facts: a facts job's as given, else one extraction call (none without a
        conversation)."""
        payload = self.payload
        if isinstance(payload, FactsPayload):
            return [
                ExtractedFact(fact=f, topic=payload.topic, source=payload.fact_source)
                for f in payload.facts
            ]
        if not material.conversation:
            return []
        return await extract_facts(
            llm, material.conversation, material.customization, now=material.time
        )

    def split(
        self, facts: list[ExtractedFact], material: Material
    ) -> tuple[list[ExtractedFact], list[ExtractedFact]]:
        """(created as given, consolidated): all created with `disable_consolidation`, else
        those of a topic in `disabled_topics` (a forget request is still consolidated: only
        consolidation can find what to delete)."""
        if self.payload.disable_consolidation:
            return facts, []
        unmerged = set(material.customization.consolidation_config.disabled_topics)
        apart = [f for f in facts if f.topic in unmerged and not f.forget]
        return apart, [f for f in facts if f not in apart]

    def shown(
        self, candidates: list[Memory], support: Mapping[str, Support], material: Material
    ) -> list[Memory]:
        """The candidates as the consolidation model sees them: as they are."""
        return candidates

    async def consolidate(
        self,
        llm: BaseLlm,
        facts: list[ExtractedFact],
        shown: list[Memory],
        material: Material,
        earlier: Mapping[str, list[str]],
    ) -> list[MemoryOperation]:
        """One consolidation call, with the scope's extra instructions and the candidates'
        earlier facts."""
        instructions = material.customization.consolidation_config.instructions
        return await consolidate(llm, facts, shown, instructions=instructions, earlier=earlier)

    def profile_facts(self) -> list[str]:
        """A facts job's facts, which its profiles are learned from too (else none)."""
        return list(self.payload.facts) if isinstance(self.payload, FactsPayload) else []

    def profile_source(self) -> SourceType:
        """A profile field's source (a memory's is its operation's: `trust`)."""
        if isinstance(self.payload, FactsPayload):
            return source_type_of(self.payload.fact_source)
        return SourceType.USER_INPUT

    def support(self, material: Material) -> SupportWrite | None:
        """Fact jobs record no support."""
        return None


class PlaybookLearner:
    """Procedure jobs (module docstring)."""

    learns_profiles = False  # a playbook is the app's: no user's profile is learned from it
    reads_support = True
    source_id: str | None = None  # a procedure's source is no session (its support is)
    follows: str | None = None

    def __init__(
        self,
        payload: ProcedurePayload,
        *,
        scope: dict[str, str],
        screen: FactScreen,
        config: MemoryBankConfig,
    ) -> None:
        app = app_scope(scope["app_name"])
        self.target = Target(app, procedure_key(scope_key(app)))
        self.screen = anonymising_screen(screen, payload.identifiers)
        self.procedure = payload
        self.supporter = (scope["user_id"], payload.supporting_session)
        self._config = config

    def material(self, processed: tuple[str, float] | None) -> Material:
        """Tool calls are how a task gets done: a playbook is written from them too. What it
        writes cites no event (the procedure names no session or event)."""
        events = _events(self.procedure, self.screen)
        conversation = conversation_contents(events, include_function_calls=True)
        said = [p.text for c in conversation for p in c.parts or () if p.text]
        return Material(
            conversation=conversation,
            customization=self._config.customization_for(frozenset(self.target.scope)),
            time=_time(events),
            cited=[],
            hashes=frozenset(procedure_rule.material(self.procedure.outcome or "", *said)),
        )

    async def extract(self, llm: BaseLlm, material: Material) -> list[ExtractedFact]:
        """Playbooks instead of facts (one model call)."""
        return await extract_playbooks(llm, material.conversation, outcome=self.procedure.outcome)

    def split(
        self, facts: list[ExtractedFact], material: Material
    ) -> tuple[list[ExtractedFact], list[ExtractedFact]]:
        """Every playbook is consolidated."""
        return [], facts

    def shown(
        self, candidates: list[Memory], support: Mapping[str, Support], material: Material
    ) -> list[Memory]:
        """The similar procedures, each masked for the job's user: the model is never shown a
        word of another user's it could copy into what this user supports."""
        user = self.supporter[0]
        masked = []
        for memory in candidates:
            users = dict(support.get(memory.id, {}))
            users[user] = users.get(user, frozenset()) | material.hashes
            fact = procedure_rule.masked(memory.fact, users, user)
            masked.append(memory.model_copy(update={"fact": fact}))
        return masked

    async def consolidate(
        self,
        llm: BaseLlm,
        facts: list[ExtractedFact],
        shown: list[Memory],
        material: Material,
        earlier: Mapping[str, list[str]],
    ) -> list[MemoryOperation]:
        """One consolidation call with the procedure prompt. A playbook's earlier texts are
        never shown: they were not masked for this job's user (`shown` is)."""
        return await consolidate(llm, facts, shown, prompt=PROCEDURE_CONSOLIDATION)

    def profile_facts(self) -> list[str]:
        """None: no profile is learned."""
        return []

    def profile_source(self) -> SourceType:
        """Never asked (no profile is learned); what a playbook's user said."""
        return SourceType.USER_INPUT

    def support(self, material: Material) -> SupportWrite | None:
        """The job's user and session support what it writes, with its material."""
        return SupportWrite(self.target.scope["app_name"], self.supporter, material.hashes)


def handler_for(
    payload: JobPayload,
    scope: dict[str, str],
    key: str,
    screen: FactScreen,
    config: MemoryBankConfig,
) -> Learner:
    """The handler of a job of this payload, in scope `scope` (key `key`)."""
    if isinstance(payload, ProcedurePayload):
        return PlaybookLearner(payload, scope=scope, screen=screen, config=config)
    return FactLearner(payload, scope=scope, key=key, screen=screen, config=config)
