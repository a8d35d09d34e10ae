"""Memory Bank's IngestEvents: events buffered in a stream per (scope, stream id), generated
from when the stream's trigger says.

Owns: `Ingestion.ingest_events` (check a request, buffer its events once each by event id,
flush the stream when its trigger is met: `event_count` events waiting, `fixed_interval` since
its window opened, or `force_flush`; no rule flushes at once) and `Ingestion.flush_due` (the
worker's sweep of the streams a time rule made due: `fixed_interval`, and `idle_duration` since
the last event; run when the worker finds no job, never a task sleeping per stream). A flush
sends the waiting events, after the last `overlap_event_count` already processed ones, to
`generate_memories` with the options of the stream's last request. The trigger is the
request's, else the one an earlier request of the stream named, else the configuration's
(`GenerationConfig.trigger`). It never writes SQL (`store.ingest` does) and never runs a
generation (the worker does).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from google.adk.events.event import Event
from google.genai import types
from pydantic import ValidationError

from ...config import GenerationTrigger
from ...errors import InputValidationError, OptedOutError
from ...memory_bank_json import trigger as memory_bank_trigger
from ...telemetry import traced
from ..checks import check_mapping, check_merge_strategy, check_time, revision_options
from ..jobs import Worker
from ..models import GenerateMemoriesOperation, IngestEventsResult
from ..scope import scope_key, validate_scope
from ..store.ingest import CLAIM_LEASE, IngestStore
from .core import Gate, Readiness

logger = logging.getLogger(__name__)

MAX_INGEST_EVENTS = 1000
"""Events one request may carry."""

MAX_STREAM_ID_LENGTH = 128

Generate = Callable[..., Awaitable[GenerateMemoriesOperation]]
"""The mode's `generate_memories` (None without a model: ingestion is refused then)."""

Row = tuple[str, datetime, dict[str, Any]]


class Ingestion:
    """IngestEvents on the ingestion store, flushing through the mode's generation."""

    def __init__(
        self,
        store: IngestStore,
        generate: Generate | None,
        gate: Gate,
        ready: Readiness,
        default: GenerationTrigger | None,
        worker: Worker | None = None,
    ) -> None:
        self._worker = worker
        self._store = store
        self._generate = generate
        self._gate = gate
        self._ready = ready
        self._default = default

    @traced("memory.ingest_events")
    async def ingest_events(
        self,
        scope: Mapping[str, str],
        events: Sequence[Event | types.Content] = (),
        *,
        stream_id: str = "",
        trigger: GenerationTrigger | Mapping[str, Any] | None = None,
        force_flush: bool = False,
        metadata: Mapping[str, Any] | None = None,
        metadata_merge_strategy: str | None = None,
        revision_labels: Mapping[str, str] | None = None,
        revision_ttl: timedelta | None = None,
        disable_memory_revisions: bool = False,
        now: datetime | None = None,
    ) -> IngestEventsResult:
        """Memory Bank's IngestEvents: buffer `events` (ADK events, whose `id` deduplicates
        and `timestamp` orders them, or contents: ingested now, never deduplicated) in the
        stream `stream_id` of `scope`, and flush the stream into a generation when its
        trigger is met or `force_flush`. `trigger`: a `GenerationTrigger`, or Memory Bank's
        `generation_trigger_config` (`{"generation_rule": {...}}`; without a rule, at once);
        named once, it stays the stream's until another request names one (a request with no
        events may do only that). The generation options (`metadata`, its merge strategy,
        the revision options) are the stream's last request's. `now` is the request's time
        (tests; default the clock). Needs a generation model (`InputValidationError`
        otherwise), refuses an opted-out user (`OptedOutError`)."""
        if self._generate is None:
            raise InputValidationError(
                "IngestEvents needs a generation model: give the memory service an llm."
            )
        at = _now(now)
        checked = validate_scope(scope)
        stream = _stream_id(stream_id)
        rule = _trigger(trigger)
        rows = _rows(events, at)
        options = _options(
            metadata,
            metadata_merge_strategy,
            revision_labels,
            revision_ttl,
            disable_memory_revisions,
        )
        await self._gate.refuse_opted_out(checked)
        await self._ready()
        key = scope_key(checked)
        touched = await self._store.add(
            key,
            stream,
            checked,
            rows,
            rule=None if rule is None else rule.model_dump(mode="json"),
            rule_given=trigger is not None,
            options=options,
            now=at,
        )
        effective = rule or self._stored(touched.rule)
        window = at if touched.added and not touched.earlier else touched.window_start
        operation = None
        if touched.waiting and (force_flush or _met(effective, touched.waiting, window, at)):
            operation = await self._flush(key, stream, checked, effective, options, at)
        else:
            due = _due(effective, window, touched.last_event) if touched.waiting else None
            await self._store.set_due(key, stream, due, window)
            if due is not None and self._worker is not None:
                self._worker.start()  # the in-process worker's idle sweep will flush it
        return IngestEventsResult(
            stream_id=stream,
            ingested=touched.added,
            duplicates=len(rows) - touched.added,
            waiting=0 if operation is not None else touched.waiting,
            operation=operation,
        )

    async def flush_due(self, now: datetime | None = None, limit: int = 100) -> int:
        """Flush the streams whose time rule (`fixed_interval`, `idle_duration`) is due at
        `now` (default the clock), at most `limit`; how many flushed. The worker runs it when
        it finds no job; several workers may (a stream's events are claimed by one flush)."""
        if self._generate is None:
            return 0
        at = _now(now)
        await self._ready()
        flushed = 0
        for stream in await self._store.due(at, limit):
            rule = self._stored(stream.rule)
            try:
                operation = await self._flush(
                    stream.scope_key, stream.stream_id, stream.scope, rule, stream.options, at
                )
            except OptedOutError:
                continue  # its events were dropped with the flush
            except Exception:  # one stream's failure never stops the others: tried again later
                logger.exception("IngestEvents stream could not be flushed; retrying later.")
                await self._store.set_due(
                    stream.scope_key, stream.stream_id, at + CLAIM_LEASE, stream.window_start
                )
                continue
            flushed += operation is not None
        return flushed

    def _stored(self, rule: Mapping[str, Any] | None) -> GenerationTrigger | None:
        """A stream's stored trigger, else the configuration's."""
        return self._default if rule is None else GenerationTrigger.model_validate(rule)

    async def _flush(
        self,
        key: str,
        stream: str,
        scope: dict[str, str],
        rule: GenerationTrigger | None,
        options: Mapping[str, Any],
        now: datetime,
    ) -> GenerateMemoriesOperation | None:
        """Claim the stream's waiting events, enqueue their generation (after the overlap),
        mark them processed; None when another flush holds them (the stream is looked at
        again once that claim's lease is over)."""
        assert self._generate is not None
        overlap = rule.overlap_event_count if rule is not None else 0
        flush_id = uuid.uuid4()
        claimed = await self._store.claim(key, stream, flush_id, now, overlap)
        if not claimed.fresh:
            await self._store.set_due(key, stream, now + CLAIM_LEASE, now)
            return None
        contents = [types.Content.model_validate(c) for c in claimed.contents]
        try:
            operation = await self._generate(scope=scope, contents=contents, **_generation(options))
        except OptedOutError:  # nothing is remembered for them: their waiting events go
            await self._store.finish(key, stream, flush_id, now, 0)
            raise
        except BaseException:
            await self._store.release(key, stream, flush_id)
            raise
        await self._store.finish(key, stream, flush_id, now, overlap)
        return operation


def _now(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(timezone.utc)
    checked = check_time("now", now)
    assert checked is not None
    return checked


def _stream_id(stream_id: object) -> str:
    if not isinstance(stream_id, str) or len(stream_id) > MAX_STREAM_ID_LENGTH:
        raise InputValidationError(
            f"stream_id must be a string of at most {MAX_STREAM_ID_LENGTH} characters."
        )
    return stream_id


def _trigger(trigger: GenerationTrigger | Mapping[str, Any] | None) -> GenerationTrigger | None:
    """A request's trigger: ours, or Memory Bank's `generation_trigger_config` (no rule: at
    once, `GenerationTrigger()`); None when the request names none."""
    if trigger is None or isinstance(trigger, GenerationTrigger):
        return trigger
    try:
        if any(k in trigger for k in ("generation_rule", "generationRule")) or not trigger:
            return GenerationTrigger.model_validate(
                memory_bank_trigger(trigger, "generation_trigger_config") or {}
            )
        return GenerationTrigger.model_validate(trigger)
    except (ValueError, ValidationError) as exc:
        raise InputValidationError(f"Not a generation trigger: {exc}") from exc


def _rows(events: Sequence[Event | types.Content], now: datetime) -> list[Row]:
    """Each event as (id, time, content JSON): an ADK event's own id and time; a content's a
    new id and `now`. An event without content is left out (nothing to remember)."""
    if isinstance(events, Event | types.Content) or len(events) > MAX_INGEST_EVENTS:
        raise InputValidationError(f"Pass a list of at most {MAX_INGEST_EVENTS} events.")
    rows: list[Row] = []
    for event in events:
        if isinstance(event, types.Content):
            rows.append((str(uuid.uuid4()), now, event.model_dump(mode="json", exclude_none=True)))
        elif isinstance(event, Event):
            if event.content is None or event.partial:
                continue
            at = datetime.fromtimestamp(event.timestamp, timezone.utc) if event.timestamp else now
            content = event.content.model_dump(mode="json", exclude_none=True)
            rows.append((event.id or str(uuid.uuid4()), at, content))
        else:
            raise InputValidationError(f"Not an event: {type(event).__name__}.")
    return rows


def _options(
    metadata: Mapping[str, Any] | None,
    strategy: str | None,
    labels: Mapping[str, str] | None,
    ttl: timedelta | None,
    disabled: bool,
) -> dict[str, Any]:
    """The request's generation options, checked now (a flush must not fail on them later),
    as the JSON the stream keeps (metadata values as JSON: a datetime becomes its ISO text)."""
    revisions = revision_options(labels, ttl, disabled)
    options = {
        "metadata": check_mapping("metadata", metadata),
        "metadata_merge_strategy": check_merge_strategy(strategy),
        "revision_labels": revisions.labels or None,
        "revision_ttl": None if revisions.ttl is None else revisions.ttl.total_seconds(),
        "disable_memory_revisions": revisions.disabled,
    }
    return options


def _generation(options: Mapping[str, Any]) -> dict[str, Any]:
    """A stream's stored options as `generate_memories` keywords."""
    out = {k: v for k, v in options.items() if v is not None}
    if "revision_ttl" in out:
        out["revision_ttl"] = timedelta(seconds=out["revision_ttl"])
    return out


def _met(rule: GenerationTrigger | None, waiting: int, window: datetime, now: datetime) -> bool:
    """Whether a request's trigger flushes now: no rule, the event count reached, or the
    fixed interval over (idle time cannot be: the request itself is activity)."""
    if rule is None or (rule.event_count, rule.fixed_interval, rule.idle_duration) == (
        None,
        None,
        None,
    ):
        return True
    if rule.event_count is not None and waiting >= rule.event_count:
        return True
    return rule.fixed_interval is not None and now >= window + rule.fixed_interval


def _due(rule: GenerationTrigger | None, window: datetime, last_event: datetime) -> datetime | None:
    """When the worker's sweep flushes the stream: the earlier of its window's end and its
    idle time's; None when no time rule applies."""
    times = []
    if rule is not None and rule.fixed_interval is not None:
        times.append(window + rule.fixed_interval)
    if rule is not None and rule.idle_duration is not None:
        times.append(last_event + rule.idle_duration)
    return min(times, default=None)
