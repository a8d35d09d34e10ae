"""The small parts every component of the memory service shares.

Owns: readiness (migrations and the vector dimension, once per service: `Readiness`), the
embedder and its checked calls (`Embedding`, which an evaluation may swap on a live service),
the refusals every write for a user takes (`Gate`: the user's opt-out, a session an erasure
removed), and how a read hands out a memory (`believed`: with its effective confidence). Each
component of `PostgresMemoryService` is built with the parts it uses, never with the service.
It never writes SQL itself (the stores do).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TypeVar

from google.adk.events.event import Event
from google.genai import types

from ...config import TrustConfig
from ...errors import ErasedError, GenerationOutputError, InputValidationError, OptedOutError
from ...telemetry import traced
from ..checks import check_session_id
from ..embeddings import Embedder
from ..models import Memory
from ..policy.opt_out import UserState, stated_wish
from ..policy.trust import with_effective
from ..scope import Scope, user_scope
from ..store import MemoryStore
from ..store.opt_outs import OptOutStore
from ..store.tombstones import Kind, Tombstones

logger = logging.getLogger(__name__)

_Said = TypeVar("_Said", bound=Event | types.Content)
"""A session's material: its events, or a direct request's contents."""


def believed(memory: Memory, trust: TrustConfig) -> Memory:
    """`memory` with its effective confidence as of now, as every read returns it."""
    return with_effective(memory, trust, datetime.now(timezone.utc))


class Embedding:
    """The service's embedder (None: full-text search only) and the one checked way to call it.
    `embedder` may be replaced on a live service (the retrieval evaluation wraps it in a
    cache), so every component reads it here, never a copy."""

    def __init__(self, embedder: Embedder | None) -> None:
        if embedder is not None and not isinstance(embedder, Embedder):
            raise InputValidationError("embedder must have `dimensions` and `embed(texts)`.")
        self.embedder = embedder

    async def embed(self, texts: Sequence[str], task: str) -> list[list[float]] | None:
        """One vector per text (None without an embedder or texts); a wrong answer is a
        `GenerationOutputError`, never a vector stored at the wrong size."""
        if self.embedder is None or not texts:
            return None
        vectors = await self.embedder.embed(list(texts), task=task)  # type: ignore[arg-type]
        if len(vectors) != len(texts) or any(len(v) != self.embedder.dimensions for v in vectors):
            raise GenerationOutputError(
                "The embedder returned vectors of the wrong number or size."
            )
        return vectors


class Readiness:
    """Migrate once, and fix (or check) the vector dimension once, before the first call."""

    def __init__(self, store: MemoryStore, embedding: Embedding) -> None:
        self._store = store
        self._embedding = embedding
        self._prepared = False

    async def __call__(self) -> MemoryStore:
        if not self._prepared:
            await self._store.ready()
            embedder = self._embedding.embedder
            if embedder is not None:
                await self._store.prepare_embeddings(embedder.dimensions)
            self._prepared = True
        return self._store


class Gate:
    """The refusals every write for a user takes: the user opted out of memory, or the
    session it comes from was removed by an erasure (its tombstone). One place, so no write
    path can skip them."""

    def __init__(self, opt_outs: OptOutStore, tombstones: Tombstones, ready: Readiness) -> None:
        self._opt_outs = opt_outs
        self._tombstones = tombstones
        self._ready = ready

    @traced("memory.set_opt_out")
    async def set_opt_out(self, app_name: str, user_id: str, opted_out: bool = True) -> None:
        """Record that the user opted out of memory (False: opted back in). Opted out, every
        write for the user (any scope naming the app and user) raises `OptedOutError` and
        writes nothing; what was remembered before stays until it is erased (`erase_user`)."""
        scope = user_scope(app_name, user_id)
        if not isinstance(opted_out, bool):
            raise InputValidationError("opted_out must be True or False.")
        await self._ready()
        await self._opt_outs.set(scope["app_name"], scope["user_id"], opted_out)

    @traced("memory.is_opted_out")
    async def is_opted_out(
        self, app_name: str, user_id: str, *, state: UserState | None = None
    ) -> bool:
        """Whether the user opted out of memory. A `state` (a session's, or a tool context's)
        that holds `OPT_OUT_STATE_KEY` decides, and is recorded when the record says otherwise,
        so a later call that carries only a scope knows it; without the key, the record does."""
        scope = user_scope(app_name, user_id)
        await self._ready()
        recorded = await self._opt_outs.get(scope["app_name"], scope["user_id"])
        wish = stated_wish(state)
        if wish is not None and wish != recorded:
            await self._opt_outs.set(scope["app_name"], scope["user_id"], wish)
            return wish
        return recorded

    async def refuse_opted_out(
        self, scope: Mapping[str, str], state: UserState | None = None
    ) -> None:
        """The one opt-out check every write for a user takes (and reads, with
        `RetrievalConfig.opt_out_hides`): `OptedOutError` when the user the scope names opted
        out. A scope naming no user (an app's procedures) is no one's to refuse."""
        app, user = scope.get("app_name"), scope.get("user_id")
        if app is None or user is None:
            return
        if await self.is_opted_out(app, user, state=state):
            raise OptedOutError(
                f"User {user!r} of app {app!r} opted out of memory: nothing is remembered for them."
            )

    async def refuse_erased_session(
        self, app_name: str, user_id: str, session_id: str, events: Sequence[_Said]
    ) -> list[_Said]:
        """The `events` of a session that may be remembered: all of them, unless an erasure
        removed a session with this id (its tombstone). Then its events from before the erasure
        must not come back as memories (a trigger, a backfill or a replay holding the old
        session): `ErasedError` when they are all there is; only those from after it are kept
        (the user came back and the app gave their new session the same id, e.g. a fixed one:
        what they do after the erasure is theirs), the others dropped with a WARNING. A
        `Content` has no time: it counts as from before, as an import's record without one."""
        if not isinstance(session_id, str):
            raise InputValidationError("session_id must be a string.")
        await self._ready()
        erased = await self._tombstones.buried_at(Kind.SESSION, app_name, user_id, session_id)
        if erased is None:
            return list(events)
        after: list[_Said] = [
            e for e in events if isinstance(e, Event) and e.timestamp > erased.timestamp()
        ]
        if len(after) < len(events):
            if not after:
                raise ErasedError(
                    f"Session {session_id!r} of app {app_name!r} was erased with its user: "
                    "nothing of it is remembered again."
                )
            logger.warning(
                "%d events of a session erased with its user were not remembered (they are "
                "from before the erasure); its %d later events are.",
                len(events) - len(after),
                len(after),
            )
        return after

    async def admit_events(
        self, scope: Scope, session_id: str | None, events: Sequence[Event]
    ) -> tuple[str | None, list[Event]]:
        """ADK's `add_events_to_memory` refusals, in its order: the events of a `session_id`
        an erasure removed (`refuse_erased_session`), then the user's opt-out. Returns the
        checked session id and the events that may be remembered."""
        if session_id is not None:
            session_id = check_session_id(session_id)
            events = await self.refuse_erased_session(
                scope["app_name"], scope["user_id"], session_id, events
            )
        await self.refuse_opted_out(scope)
        return session_id, list(events)
