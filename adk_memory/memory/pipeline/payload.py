"""A generation job's payload: one typed variant per job kind, and the builders that make them.

Owns: the variants (`SessionPayload`, `ContentsPayload`, `FactsPayload`, `ProcedurePayload`),
their union `JobPayload` discriminated by `source`, the adapter the job queue stores and
validates them with (`JOB_PAYLOADS`: the queue checks a payload when it claims its job, and a
malformed one is dead-lettered there), and the builders the service calls (each returns its
variant, typed as the union so one variable holds any of them). The JSON stored in
`memory_jobs.payload` keeps the shape jobs were queued with before the payload was typed, and
fields added since have defaults, so a job queued by an earlier release still runs. A new job
kind is a new variant here and its handler in `kinds`.

Privacy: a payload is built from text already redacted (the events through the service's
screen; a procedure's through the anonymising one), so a queued job never holds what the
redactor removes. It never reads or writes the database and never calls a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from google.adk.events.event import Event
from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ...config import CustomizationConfig
from ..generation.sources import FactSource
from ..generation.topics import topic_label
from ..policy.anonymise import Anonymiser
from ..policy.screen import FactScreen

MetadataMergeStrategy = Literal["OVERWRITE", "MERGE", "REQUIRE_EXACT_MATCH"]
"""Memory Bank's `MemoryMetadataMergeStrategy` values (`_Payload.metadata_merge_strategy`)."""

PROCEDURE_SOURCE = "procedure"
"""The `source` of a procedure job's payload."""


def _unset(value: object) -> bool:
    """An option added after payloads were first stored is stored only when given, so a job's
    payload keeps the shape earlier releases stored (and read)."""
    return value is None


class _Payload(BaseModel):
    """What every job kind carries: the events it learns from (their JSON, redacted) and the
    caller's options. Fields unknown to this release are ignored (a job queued by a newer or
    older one still runs)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    events: list[dict[str, Any]] = []
    disable_consolidation: bool = False
    metadata: dict[str, Any] | None = None
    revision_labels: dict[str, Any] | None = None
    revision_ttl_seconds: float | None = Field(default=None, exclude_if=_unset)
    """How long the job's revisions are kept (0: disabled, written already expired); None: the
    configuration's `revision_ttl`."""
    allowed_topics: list[str] | None = Field(default=None, exclude_if=_unset)
    """Memory Bank's `allowed_topics`: extraction keeps only facts of these topics (the
    configured topics narrowed to them); None: every configured topic."""
    metadata_merge_strategy: MetadataMergeStrategy | None = Field(default=None, exclude_if=_unset)
    """Memory Bank's `metadata_merge_strategy` for the memories the job updates: `OVERWRITE`
    (their metadata becomes the request's), `MERGE` (the request's keys added, replacing equal
    keys), `REQUIRE_EXACT_MATCH` (only memories whose metadata equals the request's are
    consolidated with). None: an updated memory keeps its metadata."""

    @property
    def labels(self) -> dict[str, str]:
        """The labels every revision the job writes carries."""
        return {str(k): str(v) for k, v in (self.revision_labels or {}).items()}

    def customization(self, configured: CustomizationConfig) -> CustomizationConfig:
        """The scope's customization, its topics narrowed to `allowed_topics`."""
        if self.allowed_topics is None:
            return configured
        allowed = set(self.allowed_topics)
        kept = tuple(t for t in configured.memory_topics if topic_label(t) in allowed)
        return configured.model_copy(update={"memory_topics": kept})

    def revision_seconds(self, default: float | None) -> float | None:
        """Its revisions' time to live: its own, else `default` (the configuration's)."""
        return default if self.revision_ttl_seconds is None else self.revision_ttl_seconds


class SessionPayload(_Payload):
    """Turn a session's new events (after its watermark) into memories."""

    source: Literal["session"] = "session"
    session_id: str


class ContentsPayload(_Payload):
    """Turn given events or contents (a delta, not a whole session) into memories."""

    source: Literal["contents"] = "contents"
    session_id: str | None = None
    contents: list[dict[str, Any]] = []


class FactsPayload(_Payload):
    """Consolidate already extracted facts (about `topic`, "" when unknown) into the scope's
    memories."""

    source: Literal["facts"] = "facts"
    facts: list[str]
    topic: str = ""  # jobs enqueued before topics were carried have none
    fact_source: FactSource = "bootstrapped"

    @property
    def session_id(self) -> None:
        """Direct facts come from no session."""
        return None


class ProcedurePayload(_Payload):
    """Learn playbooks from a successful session's (anonymised) events for the app's
    procedures. `supporting_session` supports what the job writes; it is not their source."""

    source: Literal["procedure"] = "procedure"
    session_id: None = None
    supporting_session: str = ""
    identifiers: list[str] = []
    outcome: str | None = None


JobPayload = Annotated[
    SessionPayload | ContentsPayload | FactsPayload | ProcedurePayload,
    Field(discriminator="source"),
]
"""A generation job's payload, one variant per kind, told apart by `source`."""

JOB_PAYLOADS: TypeAdapter[JobPayload] = TypeAdapter(JobPayload)
"""How the job queue writes payloads and validates them when it claims a job."""


def _events_data(events: Sequence[Event], screen: FactScreen) -> list[dict[str, Any]]:
    return [
        screen.event_data(e.model_dump(mode="json", exclude_none=True, by_alias=True))
        for e in events
    ]


def session_payload(
    session_id: str, events: Sequence[Event], options: dict[str, Any], screen: FactScreen
) -> JobPayload:
    """A job that turns a session's (new) events into memories (their text redacted)."""
    return SessionPayload(session_id=session_id, events=_events_data(events, screen), **options)


def contents_payload(
    contents: Sequence[Event | types.Content],
    session_id: str | None,
    options: dict[str, Any],
    screen: FactScreen,
) -> JobPayload:
    """A job that turns given events or contents (a delta, not a whole session) into memories
    (their text redacted)."""
    return ContentsPayload(
        session_id=session_id,
        events=_events_data([c for c in contents if isinstance(c, Event)], screen),
        contents=[
            screen.json(c.model_dump(mode="json", exclude_none=True))
            for c in contents
            if isinstance(c, types.Content)
        ],
        **options,
    )


def facts_payload(
    facts: Sequence[str],
    topic: str,
    options: dict[str, Any],
    fact_source: FactSource = "bootstrapped",
) -> JobPayload:
    """A job that consolidates already extracted facts (about `topic`, "" when unknown; from
    `fact_source`) into the scope's memories."""
    return FactsPayload(facts=list(facts), topic=topic, fact_source=fact_source, **options)


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
) -> JobPayload:
    """A job that learns playbooks from a successful session's events, anonymised now. The
    identifiers are kept, in the user's own scope, to anonymise what the model writes; those the
    redactors catch on their own (e-mail addresses, phone numbers) are not: a job's payload never
    holds what the redactor removes. `session_id`: the session that supports what the job
    writes (`procedure_support`); it is not a source of the procedures (`session_id` None)."""
    anonymous = anonymising_screen(screen, identifiers)
    redactors = Anonymiser((), screen.redactor)
    return ProcedurePayload(
        supporting_session=session_id,
        events=_events_data(events, anonymous),
        identifiers=[i for i in identifiers if redactors.redact(i) == i],
        outcome=anonymous.text(outcome) if outcome else None,
        metadata={},
        revision_labels=revision_labels,
    )
