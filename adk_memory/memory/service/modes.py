"""The memory service's two modes, one object each: with a generation model or without.

Owns: what differs between the modes, chosen once when the service is built
(`PostgresMemoryService.generation`). `Generation` (a model): `generate_memories` turns one
source (a session, contents, or pre-extracted facts) into a durable job (its payload redacted,
direct facts guarded first), and ADK's add_* calls enqueue generation (the turn never waits).
`NoGeneration` (no model): generation is refused with the same `InputValidationError` as
always, and sessions are remembered as raw events (one memory per event with text, never
twice) through the one write path (`writes.Writer`). Callers never ask which mode they are in.
It never writes SQL itself and never runs a job (the worker does: `pipelines.py`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, NoReturn

from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.sessions.session import Session
from google.genai import types

from ...config import TtlConfig
from ...errors import InputValidationError
from ...telemetry import traced
from ..checks import (
    MAX_DIRECT_FACTS,
    MAX_FACT_LENGTH,
    check_mapping,
    check_merge_strategy,
    check_session_id,
    check_source_type,
    check_timestamp,
    check_topics,
    revision_options,
)
from ..entries import event_text, raw_event_memory_id
from ..models import GenerateMemoriesOperation, SourceType
from ..pipeline import JobPayload, contents_payload, facts_payload, session_payload
from ..pipeline.payload import MetadataMergeStrategy
from ..policy.screen import FactScreen
from ..policy.trust import fact_source
from ..scope import Scope, scope_key, user_scope, validate_scope
from .core import Gate
from .operations import Operations
from .pipelines import Submitter
from .writes import Draft, Writer

AddEvents = Callable[..., Awaitable[None]]
"""ADK's `add_events_to_memory` as the service has it (keyword arguments), which the raw mode
remembers a session's events through."""


class Generation:
    """The mode with a generation model: every source becomes a job (`generate_memories`)."""

    def __init__(
        self,
        llm: BaseLlm,
        screen: FactScreen,
        gate: Gate,
        writer: Writer,
        submitter: Submitter,
        operations: Operations,
    ) -> None:
        self.llm: BaseLlm | None = llm
        self._screen = screen
        self._gate = gate
        self._writer = writer
        self._submitter = submitter
        self._operations = operations

    def require(self, what: str) -> None:
        """Nothing to refuse: this mode has a model."""

    async def submit(self, scope: Scope, payload: JobPayload) -> GenerateMemoriesOperation:
        """Enqueue a job whose payload is built (a procedure job: `procedures.py`)."""
        return await self._submitter.submit(scope, payload)

    @traced("memory.generate_memories")
    async def generate_memories(
        self,
        *,
        session: Session | None = None,
        start_time: datetime | None = None,
        end_time: datetime | None = None,
        contents: Sequence[Event | types.Content] | None = None,
        facts: Sequence[str] | None = None,
        topic: str | None = None,
        scope: Mapping[str, str] | None = None,
        session_id: str | None = None,
        disable_consolidation: bool = False,
        wait_for_completion: bool = False,
        metadata: Mapping[str, Any] | None = None,
        revision_labels: Mapping[str, str] | None = None,
        source_type: SourceType = SourceType.BOOTSTRAPPED,
        revision_ttl: timedelta | None = None,
        disable_memory_revisions: bool = False,
        allowed_topics: Sequence[str] | None = None,
        metadata_merge_strategy: MetadataMergeStrategy | None = None,
    ) -> GenerateMemoriesOperation:
        """Turn one source into memories of `scope`, in the background (Memory Bank's
        GenerateMemories). Exactly one source: a `session` (optionally only its events between
        `start_time` and `end_time`; only events not processed before are used), direct
        `contents` (events or `types.Content`, a delta; images, audio and files reach the model),
        or up to 5 pre-extracted `facts` to consolidate (with the memory `topic` they are
        about, if known: extraction gives the others theirs). `scope` defaults to the session's
        user. Returns at once with an operation to poll, unless `wait_for_completion`.
        `source_type`: where direct `facts` come from, for the trust rule (`memory.trust`;
        the application's own data by default); a conversation's facts get theirs from
        extraction. A session an erasure removed is refused (`ErasedError`). Without a model
        (`NoGeneration`), `InputValidationError`. The revisions it writes carry
        `revision_labels` and are kept for `revision_ttl` (default: the configuration's), or
        never listed with `disable_memory_revisions` (Memory Bank's GenerateMemories options).
        `allowed_topics` (topic labels: a managed topic's name, a custom topic's label) narrows
        extraction to those of the configured topics; `metadata_merge_strategy` says what the
        memories it updates do with `metadata`: OVERWRITE, MERGE (the request's keys win), or
        REQUIRE_EXACT_MATCH (only memories with exactly this metadata are consolidated with);
        None: they keep theirs."""
        revisions = revision_options(revision_labels, revision_ttl, disable_memory_revisions)
        if sum(source is not None for source in (session, contents, facts)) != 1:
            raise InputValidationError("Pass exactly one of session, contents or facts.")
        if topic is not None:
            if facts is None:
                raise InputValidationError("A topic goes with direct facts only.")
            [topic] = check_topics([topic]) or [""]
        if scope is None:
            if session is None:
                raise InputValidationError("A scope is required unless a session is given.")
            scope = user_scope(session.app_name, session.user_id)
        checked = validate_scope(scope)
        if session_id is not None:
            session_id = check_session_id(session_id)
        own = session is not None and user_scope(session.app_name, session.user_id).items() <= (
            checked.items()
        )
        await self._gate.refuse_opted_out(checked, session.state if own and session else None)
        options = {
            "disable_consolidation": disable_consolidation,
            "metadata": self._screen.json(check_mapping("metadata", metadata) or {}),
            "revision_labels": dict(revisions.labels),
            "revision_ttl_seconds": revisions.seconds(None),
            "allowed_topics": check_topics(allowed_topics),
            "metadata_merge_strategy": check_merge_strategy(metadata_merge_strategy),
        }
        if session is not None:
            payload = await self._session_payload(session, start_time, end_time, options)
        elif contents is not None:
            payload = await self._contents_payload(checked, contents, session_id, options)
        else:
            payload = await self._facts_payload(checked, facts or (), topic, source_type, options)
        operation = await self._submitter.submit(checked, payload)
        return await self._operations.wait(operation) if wait_for_completion else operation

    async def _session_payload(
        self,
        session: Session,
        start_time: datetime | None,
        end_time: datetime | None,
        options: dict[str, Any],
    ) -> JobPayload:
        """A session job's payload: its events in [start_time, end_time), a session an erasure
        removed refused."""
        kept = await self._gate.refuse_erased_session(
            session.app_name, session.user_id, session.id, session.events
        )
        events = [
            e
            for e in kept
            if (start_time is None or e.timestamp >= start_time.timestamp())
            and (end_time is None or e.timestamp < end_time.timestamp())
        ]
        return session_payload(session.id, events, options, self._screen)

    async def _contents_payload(
        self,
        scope: Scope,
        contents: Sequence[Event | types.Content],
        session_id: str | None,
        options: dict[str, Any],
    ) -> JobPayload:
        """A contents job's payload: the contents of a session an erasure removed refused."""
        given = list(contents)
        if session_id is not None and "user_id" in scope and "app_name" in scope:
            given = await self._gate.refuse_erased_session(
                scope["app_name"], scope["user_id"], session_id, given
            )
        return contents_payload(given, session_id, options, self._screen)

    async def _facts_payload(
        self,
        scope: Scope,
        facts: Sequence[str],
        topic: str | None,
        source_type: SourceType,
        options: dict[str, Any],
    ) -> JobPayload:
        """A direct facts job's payload: 1 to `MAX_DIRECT_FACTS` facts, each screened as a
        direct write (one rejected fact refuses them all), with their trust source."""
        if not 1 <= len(facts) <= MAX_DIRECT_FACTS:
            raise InputValidationError(f"Pass 1 to {MAX_DIRECT_FACTS} facts.")
        source = "tool" if "tool" in options["metadata"] else "api"
        kind = fact_source(check_source_type(source_type))
        screened = await self._writer.screen(facts, scope, source, direct=True)
        return facts_payload([s.fact for s in screened], topic or "", options, kind)

    async def remember_session(self, session: Session, add_events: AddEvents) -> None:
        """ADK's `add_session_to_memory`: generation from the session's new events (not
        through `add_events`, the raw mode's door: the session's watermark decides)."""
        await self.generate_memories(session=session)

    async def remember_events(
        self,
        scope: Scope,
        events: Sequence[Event],
        session_id: str | None,
        metadata: Mapping[str, object],
    ) -> None:
        """ADK's `add_events_to_memory` (its refusals taken): generation from the events."""
        await self.generate_memories(
            contents=list(events), scope=scope, session_id=session_id, metadata=dict(metadata)
        )

    async def regenerate(
        self, facts: Sequence[str], scope: Scope
    ) -> list[GenerateMemoriesOperation]:
        """What a revoked source's memories' other sources said, generated again."""
        return [
            await self.generate_memories(
                facts=facts[i : i + MAX_DIRECT_FACTS],
                scope=scope,
                revision_labels={"reason": "regenerated_after_revocation"},
                source_type=SourceType.IMPLICIT,  # what remains was said, not bootstrapped
            )
            for i in range(0, len(facts), MAX_DIRECT_FACTS)
        ]


class NoGeneration:
    """The mode without a generation model: generation refused, sessions remembered as raw
    events (see the module docstring)."""

    llm: BaseLlm | None = None

    def __init__(self, gate: Gate, writer: Writer, ttl: TtlConfig) -> None:
        self._gate = gate
        self._writer = writer
        self._ttl = ttl

    def require(self, what: str) -> NoReturn:
        """`InputValidationError`: `what` needs a model."""
        raise InputValidationError(f"{what} needs a model: pass llm=... .")

    async def submit(self, scope: Scope, payload: JobPayload) -> NoReturn:
        """Refused: no job is enqueued without a model."""
        self.require("Memory generation")

    @traced("memory.generate_memories")
    async def generate_memories(self, **source: Any) -> GenerateMemoriesOperation:
        """Refused: `InputValidationError` (memory generation needs a model)."""
        self.require("Memory generation")

    async def remember_session(self, session: Session, add_events: AddEvents) -> None:
        """ADK's `add_session_to_memory`: the session's events, raw, through `add_events`
        (the service's `add_events_to_memory`, a subclass's override included, as it always
        went). The session's state may hold the user's opt-out key: it decides (and is
        recorded)."""
        await self._gate.refuse_opted_out(
            user_scope(session.app_name, session.user_id), session.state
        )
        await add_events(
            app_name=session.app_name,
            user_id=session.user_id,
            events=session.events,
            session_id=session.id,
        )

    async def remember_events(
        self,
        scope: Scope,
        events: Sequence[Event],
        session_id: str | None,
        metadata: Mapping[str, object],
    ) -> None:
        """Each event with text once (an event already remembered, or remembered and then
        deleted, is skipped: its id is derived from the event's), redacted and judged by the
        guard: an event it rejects is not remembered (logged), one it quarantines is held for
        an operator."""
        key = scope_key(scope)
        picked = [(e, event_text(e)[:MAX_FACT_LENGTH]) for e in events if not e.partial]
        picked = [(e, text) for e, text in picked if text]
        screened = await self._writer.screen(
            [t for _, t in picked], scope, "raw_event", direct=False
        )
        ttl = self._ttl.for_create()
        drafts = []
        for (event, _), fact in zip(picked, screened, strict=True):
            if fact.rejected:
                continue
            drafts.append(
                Draft(
                    raw_event_memory_id(key, session_id, event.id),
                    fact,
                    ttl,
                    metadata=_event_metadata(event, session_id, metadata),
                    source_type=SourceType.USER_INPUT
                    if event.author == "user"
                    else SourceType.AGENT,
                    source_session_id=session_id,
                    source_event_ids=[event.id],
                    create_time=check_timestamp("An event's timestamp", event.timestamp),
                )
            )
        await self._writer.write(scope, drafts)

    async def regenerate(
        self, facts: Sequence[str], scope: Scope
    ) -> list[GenerateMemoriesOperation]:
        """Nothing is generated again without a model."""
        return []


Mode = Generation | NoGeneration
"""The service's mode: what `PostgresMemoryService.generation` is."""


def _event_metadata(
    event: Event, session_id: str | None, metadata: Mapping[str, object]
) -> dict[str, object]:
    """A raw event's memory's metadata: the call's, then who said it and where."""
    kept: dict[str, object] = {
        **metadata,
        "author": event.author,
        "event_id": event.id,
        "invocation_id": event.invocation_id,
    }
    if session_id:
        kept["session_id"] = session_id
    return kept
