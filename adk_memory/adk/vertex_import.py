"""Copy a Vertex AI Agent Engine's Memory Bank memories and, optionally, its sessions with
their events into adk-memory; and write adk-memory's back out in the same shape.

Owns: what an import does with each record it reads (`vertex_source` reads them,
`vertex_records` maps them), and the rule that makes it safe to run again or to resume after a
stop: every write is keyed by the record's resource name. A memory is written through
`create_memories` with the key `vertex:<name>` (redacted and guarded like any write), keeping
its times and the TTL it has left; read again, a memory already here is left alone, and one
Memory Bank changed since (a later `updateTime`) is updated in place (an UPDATED revision
labelled `imported_from: vertex`). Its Memory Bank revisions join its history at their own
times (`import_revisions`, keyed by revision name) while it has none of them yet, so a run that
stopped between a memory and its history completes it. A session is created with its id and
final state, then its events are appended in order; read again, only the events it does not
hold yet are appended, so an import stopped half way through a session finishes it. A memory
deleted here after an earlier import is not brought back (counted as skipped). Nothing is ever
deleted. A record that cannot be read stops the import before its batch is written.

The engine's Memory Bank configuration (`contextSpec.memoryBankConfig`) is pushed as the app's
configuration (`import_config`, with `--app`: a configuration equal to the app's latest is
that version, so a rerun adds none), and its structured profile memories (`structuredContent`)
become the scope's profile fields (`import_profile`: a field already holding its value is left
alone, each change an UPDATED or CREATED field revision labelled `imported_from: vertex`).

An erased user stays erased (`memory.tombstones`): a memory or session whose id an erasure
tombstoned, or any record of an erased (app, user) from before their latest erasure (a memory
by its `createTime`, else `updateTime`; a session by its `updateTime`; a record without a time
counts as before), is not imported but counted as `erased`, with its events. What the user
does after the erasure (new memories, new sessions in the source) is imported as usual. An
operator who means to restore erased data passes `allow_erased`: then nothing is checked, and
a restored session's tombstone is lifted (its events may become memories again).

It never writes SQL (the services do) and reads the source only through `AgentEnginePages`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import IO, Any

from google.adk.events.event import Event

from .._retry import Backoff, RetryPolicy, retry_call
from ..errors import InputValidationError, OptedOutError
from ..memory.entries import keyed_ids
from ..memory.models import Memory
from ..memory.policy.screen import MemoryRejectedError
from ..memory.scope import Scope, scope_key
from ..memory.service import PostgresMemoryService
from ..memory.store.tombstones import Kind
from ..sessions.service import PostgresSessionService
from .vertex_records import (
    VertexMemory,
    VertexProfile,
    read_event,
    read_memory,
    read_profile,
    read_revisions,
    read_session,
    write_event,
    write_memory,
    write_revision,
    write_session,
)
from .vertex_source import AgentEnginePages, Listing, items, memory_bank_config

logger = logging.getLogger(__name__)

RETRY = RetryPolicy(Backoff(base=1.0, cap=30.0), max_attempts=6)
"""A page the API fails to serve for a transient reason (rate limit, 5xx, timeout) is asked
for again, five more times at most; anything else stops the import (run it again to resume)."""

FETCHES = 8
"""Memories whose revisions are listed at once (the API has no listing across memories)."""

BATCH = 1000
"""Memories read before they are written: a scope's memories in a batch are one write (Memory
Bank lists by creation time, so a page holds many users' memories, a few each)."""

IMPORTED_LABELS = {"imported_from": "vertex"}
"""The labels of the revision an import writes when it updates a memory."""

HISTORY_LABEL = "vertex_revision"
"""The label naming the Memory Bank revision an imported past revision is (`read_revisions`)."""


@dataclass
class Tally:
    """What an import did with one kind of record."""

    read: int = 0
    imported: int = 0
    updated: int = 0
    present: int = 0
    """Already here from an earlier run (nothing written)."""
    skipped: int = 0
    """Not written: expired, older than --since, not a natural-language memory, deleted here
    after an earlier import, refused by the memory guard, or of a user who opted out of
    memory (logged)."""
    quarantined: int = 0
    """Of `imported`, memories the guard held back (stored, not live until approved)."""
    erased: int = 0
    """Not written: an erased user's (see the module docstring)."""


@dataclass
class ImportReport:
    memories: Tally = field(default_factory=Tally)
    revisions: Tally = field(default_factory=Tally)
    profiles: Tally = field(default_factory=Tally)
    """Structured profile memories (counted in `memories` as read and skipped too: they are
    not natural-language memories)."""
    sessions: Tally = field(default_factory=Tally)
    events: Tally = field(default_factory=Tally)

    def rows(self) -> list[tuple[str, Tally]]:
        return [
            ("memories", self.memories),
            ("revisions", self.revisions),
            ("profiles", self.profiles),
            ("sessions", self.sessions),
            ("events", self.events),
        ]


Progress = Callable[[int], None]


class _Pages:
    """The source's pages, each fetched under `RETRY`."""

    def __init__(self, pages: AgentEnginePages) -> None:
        self._pages = pages

    async def page(
        self, listing: Listing, parent: str, page_token: str | None
    ) -> Mapping[str, Any]:
        return await retry_call(lambda: self._pages.page(listing, parent, page_token), RETRY)

    async def engine(self, name: str) -> Mapping[str, Any]:
        return await retry_call(lambda: self._pages.engine(name), RETRY)


class VertexImporter:
    """Import one Agent Engine (`engine`: its resource name) from `pages`.

    Args:
      memory: where memories go (None: not imported).
      sessions: where sessions go (None: not imported); with `app_name`, the app they belong
        to here (an Agent Engine session has no app name of its own).
      since: only records updated at or after this time (memories by `updateTime`, sessions
        by theirs); None: all.
      revisions: add each memory's Memory Bank revisions to its history (one more listing per
        memory: the first time, and again only while it has none here).
      allow_erased: import what an erasure removed too (an operator restoring it on purpose);
        by default it is counted as `erased` and not written.
    """

    def __init__(
        self,
        pages: AgentEnginePages,
        engine: str,
        *,
        memory: PostgresMemoryService | None = None,
        sessions: PostgresSessionService | None = None,
        app_name: str | None = None,
        since: datetime | None = None,
        revisions: bool = True,
        allow_erased: bool = False,
    ) -> None:
        if sessions is not None and not app_name:
            raise InputValidationError("Importing sessions needs the app they belong to here.")
        if sessions is not None and memory is None:
            raise InputValidationError(
                "Importing sessions needs the memory service too: it holds the erasures' "
                "tombstones."
            )
        if since is not None and since.tzinfo is None:
            since = since.replace(tzinfo=timezone.utc)
        self._pages = _Pages(pages)
        self._engine = engine
        self._memory = memory
        self._sessions = sessions
        self._app_name = app_name or ""
        self._since = since
        self._revisions = revisions
        self._allow_erased = allow_erased
        self.report = ImportReport()

    def _too_old(self, update_time: datetime | None) -> bool:
        return self._since is not None and (update_time is None or update_time < self._since)

    async def _erased(
        self, kind: Kind, app_name: str, user_id: str, times: Mapping[str, datetime | None]
    ) -> set[str]:
        """Which of one user's ids an erasure removed (`erased_among`); none with
        `allow_erased`."""
        if self._allow_erased or self._memory is None:
            return set()
        return await self._memory.erased_among(kind, app_name, user_id, times)

    # -------------------------------------------------------------------------- memories

    async def import_memories(self, progress: Progress | None = None) -> Tally:
        """Every memory of the engine, written in batches of about `BATCH` (each scope's
        memories of a batch in one write). Every record of a batch is read before any is
        written; when reading a page fails, what was read before it is written first."""
        service = self._memory
        if service is None:
            raise InputValidationError("No memory service to import memories into.")
        tally = self.report.memories
        pending: dict[str, list[VertexMemory]] = {}
        profiles: list[VertexProfile] = []
        pages = items(self._pages, Listing.MEMORIES, self._engine)
        while True:
            try:
                page = await anext(pages)
            except StopAsyncIteration:
                break
            except Exception:
                await self._flush(service, pending, profiles)
                raise
            now = datetime.now(timezone.utc)
            for record in page:
                tally.read += 1
                memory = read_memory(record)
                expired = (
                    memory is not None
                    and memory.expire_time is not None
                    and (memory.expire_time <= now)
                )
                profile = read_profile(record) if memory is None else None
                if profile is not None and not self._too_old(profile.update_time):
                    profiles.append(profile)
                if memory is None or expired or self._too_old(memory.update_time):
                    tally.skipped += 1
                else:
                    ttl = memory.expire_time - now if memory.expire_time is not None else None
                    memory = replace(memory, fact=replace(memory.fact, ttl=ttl))
                    pending.setdefault(scope_key(memory.scope), []).append(memory)
            if sum(map(len, pending.values())) + len(profiles) >= BATCH:
                await self._flush(service, pending, profiles)
            if progress is not None:
                progress(tally.read)
        await self._flush(service, pending, profiles)
        return tally

    async def import_config(self, app_name: str) -> tuple[int, bool] | None:
        """The engine's Memory Bank configuration pushed as app `app_name`'s (its version, and
        whether this call created it); None when the engine has none. A field adk-memory does
        not implement stops here (`UnsupportedConfigError`), before any memory is read."""
        if self._memory is None:
            raise InputValidationError("No memory service to import the configuration into.")
        engine = await self._pages.engine(self._engine)
        config = memory_bank_config(engine)
        if config is None:
            return None
        return await self._memory.push_config(app_name, config)

    async def _flush(
        self,
        service: PostgresMemoryService,
        pending: dict[str, list[VertexMemory]],
        profiles: list[VertexProfile],
    ) -> None:
        """Write the memories and profiles read and not written yet, and forget them."""
        for profile in profiles:
            await self._write_profile(service, profile)
        profiles.clear()
        for group in pending.values():
            try:
                await self._write_memories(service, group)
            except OptedOutError as exc:  # refused before anything of the group was written
                logger.warning("Memories not imported: %s", exc)
                self.report.memories.skipped += len(group)
        pending.clear()

    async def _write_profile(self, service: PostgresMemoryService, profile: VertexProfile) -> None:
        """One structured profile memory's fields (an erased user's counted, not written)."""
        tally = self.report.profiles
        tally.read += 1
        scope = profile.scope
        if "app_name" in scope and "user_id" in scope:
            times = {profile.name: profile.update_time}
            if await self._erased(Kind.MEMORY, scope["app_name"], scope["user_id"], times):
                tally.erased += 1
                return
        try:
            changed = await service.import_profile(
                scope, profile.schema_id, profile.data, labels=IMPORTED_LABELS
            )
        except OptedOutError as exc:
            logger.warning("Profile not imported: %s", exc)
            tally.skipped += 1
            return
        if changed:
            tally.imported += 1
        else:
            tally.present += 1

    async def _write_memories(
        self, service: PostgresMemoryService, group: Sequence[VertexMemory]
    ) -> None:
        """One scope's memories of a page: new ones created in one call, changed ones updated,
        then the history of each that lacks it (new ones, and any an interrupted run created
        without it)."""
        tally = self.report.memories
        scope = group[0].scope
        ids = {m.name: keyed_ids(scope, m.fact.key or "", m.fact.fact)[0] for m in group}
        if "app_name" in scope and "user_id" in scope:  # a user's: maybe an erased one's
            times = {ids[m.name]: m.fact.create_time or m.update_time for m in group}
            erased = await self._erased(Kind.MEMORY, scope["app_name"], scope["user_id"], times)
            tally.erased += sum(ids[m.name] in erased for m in group)
            group = [m for m in group if ids[m.name] not in erased]
        new: list[VertexMemory] = []
        history: list[VertexMemory] = []
        live = await service.get_memories(list(ids.values()), scope)
        for memory in group:
            here = live.get(ids[memory.name])
            if here is None:
                new.append(memory)
                continue
            if memory.update_time is not None and memory.update_time > here.update_time:
                await _update(service, here, memory, tally)
            else:
                tally.present += 1
            if self._revisions and not await _has_history(service, here):
                history.append(memory)
        if new:
            try:
                written = await service.create_memories([m.fact for m in new], scope)
            except MemoryRejectedError:  # the call is all or nothing: the others one by one
                written = []
                for memory in new:
                    try:
                        written += await service.create_memories([memory.fact], scope)
                    except MemoryRejectedError:
                        continue
            tally.imported += len(written)
            tally.quarantined += sum(m.quarantined for m in written)
            tally.skipped += len(new) - len(written)
            created = {m.id for m in written}
            history += [m for m in new if self._revisions and ids[m.name] in created]
        if history:
            await self._import_history(service, scope, {ids[m.name]: m for m in history})

    async def _import_history(
        self, service: PostgresMemoryService, scope: Scope, memories: dict[str, VertexMemory]
    ) -> None:
        """The memories' Memory Bank revisions (listed `FETCHES` at a time), added to their
        histories at their own times in one write."""
        limit = asyncio.Semaphore(FETCHES)

        async def listed(memory: VertexMemory) -> list[Mapping[str, Any]]:
            async with limit:
                pages = items(self._pages, Listing.REVISIONS, memory.name)
                return [record async for page in pages for record in page]

        outcomes = await asyncio.gather(
            *(listed(m) for m in memories.values()), return_exceptions=True
        )
        for outcome in outcomes:  # every listing has ended: none is left running
            if isinstance(outcome, BaseException):
                raise outcome
        found = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
        tally = self.report.revisions
        tally.read += sum(map(len, found))
        history = {i: read_revisions(r) for i, r in zip(memories, found, strict=True) if r}
        added = await service.import_revisions(scope, history)
        tally.imported += added
        tally.present += sum(map(len, found)) - added

    # -------------------------------------------------------------------------- sessions

    async def import_sessions(self, progress: Progress | None = None) -> Tally:
        """Every session of the engine with its events, one session at a time."""
        service = self._sessions
        if service is None:
            raise InputValidationError("No session service to import sessions into.")
        tally = self.report.sessions
        async for page in items(self._pages, Listing.SESSIONS, self._engine):
            for record in page:
                tally.read += 1
                session = read_session(record)
                if self._too_old(session.update_time):
                    tally.skipped += 1
                    continue
                owner = (self._app_name, session.user_id)
                if await self._erased(Kind.SESSION, *owner, {session.id: session.update_time}):
                    tally.erased += 1
                    continue
                events = [e async for e in self._events(session.name)]
                here = await service.get_session(
                    app_name=self._app_name, user_id=session.user_id, session_id=session.id
                )
                held = {event.id for event in here.events} if here is not None else set()
                missing = [event for event in events if event.id not in held]
                if here is None:
                    here = await service.create_session(
                        app_name=self._app_name,
                        user_id=session.user_id,
                        session_id=session.id,
                        state=session.state,
                    )
                    tally.imported += 1
                    if self._allow_erased and self._memory is not None:
                        await self._memory.lift_tombstones(Kind.SESSION, *owner, [session.id])
                elif missing:  # an earlier run stopped inside it, or Vertex added events since
                    tally.updated += 1
                else:
                    tally.present += 1
                for event in missing:
                    await service.append_event(here, event)
                self.report.events.imported += len(missing)
                self.report.events.present += len(events) - len(missing)
                if progress is not None:
                    progress(tally.read)
        return tally

    async def _events(self, session_name: str) -> AsyncIterator[Event]:
        """The session's events, oldest first; partial ones (never stored) skipped."""
        async for page in items(self._pages, Listing.EVENTS, session_name):
            for record in page:
                self.report.events.read += 1
                event = read_event(record)
                if event.partial:
                    self.report.events.skipped += 1
                else:
                    yield event


async def _has_history(service: PostgresMemoryService, memory: Memory) -> bool:
    """Whether the memory's Memory Bank history was imported (by an earlier run)."""
    history = await service.list_revisions(memory.id, memory.scope)
    return any(HISTORY_LABEL in revision.labels for revision in history)


async def _update(
    service: PostgresMemoryService, here: Memory, memory: VertexMemory, tally: Tally
) -> None:
    """A memory Memory Bank changed after it was imported: the change, as an UPDATED revision
    labelled `IMPORTED_LABELS`."""
    fact = memory.fact
    try:
        await service.update_memory(
            here.id,
            memory.scope,
            fact=fact.fact,
            topics=fact.topics,
            metadata=fact.metadata,
            ttl=fact.ttl,
            labels=IMPORTED_LABELS,
        )
    except MemoryRejectedError:
        tally.skipped += 1
    else:
        tally.updated += 1


# ------------------------------------------------------------------------------ export


def _line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


async def export_jsonl(
    out: IO[str],
    memories: AsyncIterator[Memory],
    memory: PostgresMemoryService,
    sessions: PostgresSessionService | None = None,
    app_name: str | None = None,
    user_id: str | None = None,
) -> tuple[int, int]:
    """Write `memories` (each with its revisions) and, with `sessions`, the app's sessions (one
    user's with `user_id`) with their events, one JSON line each in the shape `JsonlPages`
    reads; the numbers of memories and sessions written."""
    written = 0
    async for item in memories:
        name = f"memories/{item.id}"
        history = await memory.list_revisions(item.id, item.scope)
        out.write(
            _line(
                {
                    "memory": write_memory(item, name),
                    "revisions": [write_revision(r, name) for r in history],
                }
            )
        )
        written += 1
    count = 0
    if sessions is not None and app_name is not None:
        listed = await sessions.list_sessions(app_name=app_name, user_id=user_id)
        for summary in listed.sessions:
            full = await sessions.get_session(
                app_name=app_name, user_id=summary.user_id, session_id=summary.id
            )
            if full is None:  # deleted since it was listed
                continue
            name = f"sessions/{full.id}"
            events = [write_event(e, name) for e in full.events]
            out.write(_line({"session": write_session(full, name), "events": events}))
            count += 1
    return written, count
