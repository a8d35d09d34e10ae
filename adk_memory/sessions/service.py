"""PostgresSessionService: ADK's `BaseSessionService` on PostgreSQL.

Owns: ADK's session contract (the behaviour `InMemorySessionService` defines: scoped state,
temp state never stored, partial events never persisted, idempotent re-delivery, ordering,
`GetSessionConfig`, ADK's error types) plus what ADK lacks: optimistic concurrency across
replicas, TTL sweeps, PII redaction, strict per-user keys and reads from a read replica that
still see this process's own writes (`freshness.py`). Its arguments (adk-memory's, ADK's
spellings, or a URI) are resolved once by `adk_memory.settings` into `SessionSettings`, which
it is built from. It never writes SQL itself (the store does), never reads the environment and
never imports the memory service.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from google.adk.events.event import Event
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from sqlalchemy.ext.asyncio import AsyncEngine
from typing_extensions import override

from .._adk_private import set_storage_marker, storage_marker
from .._json import sanitise_text
from ..config import DatabaseTimeouts
from ..db.batches import in_batches
from ..db.engine import DEFAULT_SCHEMA
from ..db.replica import ReadFor
from ..errors import (
    AlreadyExistsError,
    InputValidationError,
    SessionNotFoundError,
    StaleSessionError,
)
from ..redaction import Redactor
from ..settings.database import constructor_database
from ..settings.sessions import (
    DEFAULT_EVENT_CACHE_BYTES,
    DEFAULT_EVENT_CACHE_SIZE,
    SessionSettings,
    session_settings,
)
from ..settings.uri import announce, check_uri_alone, without_agents_dir
from ..telemetry import traced
from . import codec
from .freshness import WrittenRevisions
from .store import IdleSession, SessionRow, SessionStore
from .uri import session_settings_from_uri

logger = logging.getLogger(__name__)

MAX_ID_LENGTH = 128
"""Longest app name, user id or session id accepted (the limit ADK's database service uses)."""

_STALE_MESSAGE = (
    "The session has been modified in storage since it was loaded. "
    "Reload it with get_session before appending more events."
)


def _check_key(name: str, value: object) -> str:
    """App names and user ids are identities: they are checked, never rewritten."""
    if not isinstance(value, str) or not value.strip():
        raise InputValidationError(f"{name} must be a non-empty string, got {value!r}.")
    if len(value) > MAX_ID_LENGTH:
        raise InputValidationError(f"{name} is longer than {MAX_ID_LENGTH} characters.")
    if sanitise_text(value) != value:
        raise InputValidationError(f"{name} contains a NUL character or a lone surrogate.")
    return value


def _clean_session_id(value: object) -> str:
    """Session ids are whitespace-stripped, as ADK's services strip them; '' means none."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputValidationError(f"session_id must be a string, got {type(value).__name__}.")
    return _check_key("session_id", value.strip()) if value.strip() else ""


def _marker_revision(session: Session) -> int | None:
    """The stored revision a session object was loaded at, if this service loaded it."""
    marker = storage_marker(session)
    return int(marker) if marker is not None and marker.isdigit() else None


def _to_session(app_name: str, row: SessionRow, events: list[Event]) -> Session:
    """Build the ADK session: session state, then `app:` and `user:` state under their prefixes."""
    state = codec.load_state(row.state_json)
    for key, value in codec.load_state(row.app_state_json).items():
        state[State.APP_PREFIX + key] = value
    for key, value in codec.load_state(row.user_state_json).items():
        state[State.USER_PREFIX + key] = value
    session = Session(
        id=row.id,
        app_name=app_name,
        user_id=row.user_id,
        state=state,
        events=events,
        last_update_time=row.last_update_time,
    )
    set_storage_marker(session, str(row.revision))
    return session


class PostgresSessionService(BaseSessionService):
    """ADK sessions on PostgreSQL: durable, shared by every replica, one round trip per call.

    Args:
      database_url: `postgresql://...` (any spelling SQLAlchemy/asyncpg accept, Unix sockets
        included). None and no engine: the embedded PostgreSQL in `data_dir`.
      engine: an existing SQLAlchemy `AsyncEngine` (e.g. shared with `PostgresMemoryService`).
      db_url, db_engine: ADK's `DatabaseSessionService` names for `database_url` and `engine`.
      schema: the Postgres schema holding the tables.
      data_dir: the embedded server's data directory (default `./.adk/pgdata`).
      auto_migrate: create/upgrade the tables on first use; off, a schema that is not current
        raises `SchemaVersionError` instead.
      redactor: applied to event text and state before anything is written, e.g.
        `PiiRedactor()`. The caller's own objects are not changed; what is read back later is
        the redacted form.
      session_ttl: sessions idle (no append) longer than this are deleted by
        `sweep_expired_sessions()`; None keeps sessions forever.
      event_cache_size: how many decoded events this process keeps to speed up re-reads (the
        runtime reloads a session every turn); reads always get independent copies. 0: off
        (every read decodes every event, most of them straight from their JSON).
      event_cache_bytes: what those events may weigh together, estimated at twice their JSON
        (default 128 MiB): a few huge events never grow the process without bound. 0: off.
      engine_kwargs: passed to `create_async_engine` (pool_size, max_overflow, ...).
      timeouts: how long a call may wait on the database before it raises
        `DatabaseTimeoutError` (`DatabaseTimeouts`; default: a statement 30 s, connecting
        10 s, a free pooled connection 30 s). They bound the engine built here; a shared
        `engine` keeps its own (build it with `make_engine(url, timeouts)`).
      read_url, read_engine: a read replica of the database (a streaming replica, a Cloud SQL
        read replica, an AlloyDB read pool): `get_session` and `list_sessions` read there;
        everything else (writes, `list_idle_sessions`, whose callers act on its answer) uses
        the primary. A session this service wrote that the replica does not hold as written
        yet is read from the primary (`adk_memory.sessions.freshness`). An unreachable replica
        is skipped for a while (reads go to the primary); one whose schema is not the
        primary's is a `SchemaVersionError`.
      uri: instead of all of the above, a session service URI (`postgresql://...?schema=...`,
        `adk-memory://`; see `adk_memory.adk.services`): its query parameters are the options,
        the `ADK_MEMORY_*` environment fills those it leaves out. ADK's `services.yaml`
        constructs services this way, so it can name this class.
      **adk_arguments: without `uri`, SQLAlchemy engine options (`pool_size=5`,
        `pool_pre_ping=True`, ...), as ADK's `DatabaseSessionService` takes them (they join
        `engine_kwargs`); with `uri`, what ADK passes beside it: `agents_dir` (ignored, as by
        the registered schemes) and `session_db_kwargs` (engine arguments). Anything else is a
        `TypeError`, as for any unexpected argument.
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        uri: str | None = None,
        engine: AsyncEngine | None = None,
        db_url: str | None = None,
        db_engine: AsyncEngine | None = None,
        schema: str = DEFAULT_SCHEMA,
        data_dir: str | None = None,
        auto_migrate: bool = True,
        redactor: Redactor | None = None,
        session_ttl: timedelta | None = None,
        event_cache_size: int = DEFAULT_EVENT_CACHE_SIZE,
        event_cache_bytes: int = DEFAULT_EVENT_CACHE_BYTES,
        engine_kwargs: dict[str, Any] | None = None,
        timeouts: DatabaseTimeouts | None = None,
        read_url: str | None = None,
        read_engine: AsyncEngine | None = None,
        **adk_arguments: Any,
    ) -> None:
        if uri is not None:
            check_uri_alone(PostgresSessionService.__init__, locals())
            engine_arguments = without_agents_dir(adk_arguments)
            settings = session_settings_from_uri(uri, None, engine_arguments)
        else:
            database = constructor_database(self, locals(), adk_arguments)
            settings = session_settings(
                database,
                redactor=redactor,
                session_ttl=session_ttl,
                event_cache_size=event_cache_size,
                event_cache_bytes=event_cache_bytes,
            )
        self._build(settings)
        if uri is not None:
            announce(self)

    def _build(self, settings: SessionSettings) -> None:
        """The service's parts, from its resolved settings."""
        self.settings = settings
        self.database = settings.database.database()
        self._store = SessionStore(self.database)
        self._written = WrittenRevisions() if self.database.has_replica else None
        self._redactor = settings.redactor
        self._events = codec.EventCache(settings.event_cache_size, settings.event_cache_bytes)
        self.session_ttl = settings.session_ttl

    @override
    @traced("session.create_session")
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
        **kwargs: Any,
    ) -> Session:
        """Create a session; `app:`/`user:` keys of `state` go to their scopes, `temp:` keys are
        dropped. Extra keyword arguments (other services' options) are accepted and ignored."""
        _check_key("app_name", app_name)
        _check_key("user_id", user_id)
        if state is not None and not isinstance(state, dict):
            raise InputValidationError(f"state must be a dict, got {type(state).__name__}.")
        if kwargs:
            logger.debug("create_session ignores unsupported options: %s", sorted(kwargs))
        session_id = _clean_session_id(session_id) or platform_uuid.new_uuid()
        deltas = codec.split_state(state or {})
        session_json = codec.dump_state(deltas["session"], self._redactor) or "{}"
        row = await self._store.create(
            app_name,
            user_id,
            session_id,
            session_json,
            platform_time.get_time(),
            codec.dump_state(deltas["app"], self._redactor),
            codec.dump_state(deltas["user"], self._redactor),
        )
        if row is None:
            raise AlreadyExistsError(f"Session with id {session_id} already exists.")
        if self._written is not None:
            self._written.wrote(app_name, user_id, session_id, row.revision)
        return _to_session(app_name, row, [])

    @override
    @traced("session.get_session")
    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """The session with merged state and its events (oldest first), or None. With a read
        replica, read there unless it does not yet hold what this service last wrote to the
        session (then from the primary)."""
        _check_key("app_name", app_name)
        _check_key("user_id", user_id)
        if config is not None and not isinstance(config, GetSessionConfig):
            raise InputValidationError("config must be a GetSessionConfig.")
        session_id = _clean_session_id(session_id)
        if not session_id:
            return None
        selection = (
            config.num_recent_events if config else None,
            config.after_timestamp if config else None,
        )
        replica = self._written is not None and ReadFor(app_name, user_id)
        row = await self._store.get(app_name, user_id, session_id, *selection, replica=replica)
        if self._written is not None and self._written.stale(
            app_name, user_id, session_id, None if row is None else row.revision
        ):
            row = await self._store.get(app_name, user_id, session_id, *selection)
        if row is None:
            return None
        return _to_session(app_name, row, self._events.load(row.event_texts))

    @override
    @traced("session.list_sessions")
    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """Sessions without events, oldest update first; every user's when `user_id` is None."""
        _check_key("app_name", app_name)
        if user_id is not None:
            _check_key("user_id", user_id)
        read = ReadFor(app_name, user_id or "")
        rows = await self._store.list_sessions(app_name, user_id, replica=read)
        return ListSessionsResponse(sessions=[_to_session(app_name, row, []) for row in rows])

    @override
    @traced("session.delete_session")
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session and its events; deleting a missing session is a no-op."""
        _check_key("app_name", app_name)
        _check_key("user_id", user_id)
        session_id = _clean_session_id(session_id)
        if session_id:
            await self._store.delete(app_name, user_id, session_id)
            if self._written is not None:
                self._written.deleted(app_name, user_id, session_id)

    @traced("session.erase_user")
    async def erase_user(
        self, *, app_name: str, user_id: str, request_id: uuid.UUID | None = None
    ) -> dict[str, int]:
        """Forget one user of one app: every session with its events (compaction summaries
        included) and the user's state, in one statement; counts per kind. Idempotent (a second
        call counts zeros; one with the `request_id` of an earlier call, as an erasure's re-run
        passes, counts what that call deleted). This process's decoded-event cache is emptied
        too, so none of the user's events stays in memory. App state is shared by all users
        and is kept."""
        _check_key("app_name", app_name)
        _check_key("user_id", user_id)
        sessions, events, summaries, states = await self._store.erase_user(
            app_name, user_id, request_id
        )
        self._events.clear()
        if self._written is not None:
            self._written.erased(app_name, user_id)
        return {
            "sessions": sessions,
            "events": events,
            "compaction_summaries": summaries,
            "user_states": states,
        }

    @override
    @traced("session.get_user_state")
    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The user's state with raw (unprefixed) keys; {} when none was stored."""
        _check_key("app_name", app_name)
        _check_key("user_id", user_id)
        return codec.load_state(await self._store.user_state(app_name, user_id))

    @override
    @traced("session.append_event")
    async def append_event(self, session: Session, event: Event) -> Event:
        """Persist `event` and apply it to `session`, atomically.

        Re-delivering an event the session already stores (an equal one with the same id) is a
        no-op, as in ADK: the store checks that in the same statement.

        Raises:
          SessionNotFoundError: the session does not exist (or was deleted).
          StaleSessionError: another writer appended since `session` was loaded.
        """
        if not isinstance(session, Session):
            raise InputValidationError("session must be an ADK Session.")
        if not isinstance(event, Event):
            raise InputValidationError("event must be an ADK Event.")
        if event.partial:
            return event
        delta = event.actions.state_delta if event.actions else None
        # Pydantic does not validate assignment: `event.actions.state_delta = ...` can hold
        # anything, and ADK's own state update would fail on it half way.
        if delta is not None and (
            not isinstance(delta, dict) or not all(isinstance(k, str) for k in delta)
        ):
            raise InputValidationError("event.actions.state_delta must be a dict with str keys.")
        _check_key("app_name", session.app_name)
        _check_key("user_id", session.user_id)
        _check_key("session_id", session.id)
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)

        delta = event.actions.state_delta if event.actions else None
        deltas = codec.split_state(delta) if delta else {}
        event_json = codec.dump_event(event, self._redactor)
        expected = _marker_revision(session)
        if expected is None:
            expected = await self._revision_of_unmarked(session)
        revision = await self._store.append(
            session.app_name,
            session.user_id,
            session.id,
            expected_revision=expected,
            timestamp=event.timestamp,
            event_id=sanitise_text(event.id),
            invocation_id=sanitise_text(event.invocation_id),
            event_json=event_json,
            session_delta_json=codec.dump_state(deltas.get("session"), self._redactor),
            app_delta_json=codec.dump_state(deltas.get("app"), self._redactor),
            user_delta_json=codec.dump_state(deltas.get("user"), self._redactor),
        )
        if revision is None:
            return await self._resolve_conflict(session, event, event_json)
        set_storage_marker(session, str(revision))
        if self._written is not None:
            self._written.wrote(session.app_name, session.user_id, session.id, revision)
        session.last_update_time = event.timestamp
        return self._commit_event_to_session(session, event)

    async def _revision_of_unmarked(self, session: Session) -> int:
        """The revision to write against for a session object this service did not load.

        As ADK's database service does, such an object is current unless storage moved past
        its last update time to an event it does not hold.
        """
        head = await self._store.head(session.app_name, session.user_id, session.id)
        if head is None:
            raise SessionNotFoundError(f"Session {session.id} not found.")
        if head.last_update_time > session.last_update_time:
            last_held = session.events[-1].id if session.events else None
            if head.last_event_id != last_held:
                raise StaleSessionError(_STALE_MESSAGE)
        return head.revision

    async def _resolve_conflict(self, session: Session, event: Event, event_json: str) -> Event:
        """Nothing was written: say why, unless the event is simply stored already (a
        re-delivery: a no-op). An event stored right after the revision `session` was loaded at
        never gets here: the append itself returns that revision (a retry, or this call's replay
        after a lost reply), and the session object is caught up."""
        keys = (session.app_name, session.user_id, session.id)
        head = await self._store.head(*keys)
        if head is None:
            raise SessionNotFoundError(f"Session {session.id} not found.")
        wanted = json.loads(event_json)
        stored = await self._store.events_with_id(*keys, sanitise_text(event.id))
        if not any(json.loads(text) == wanted for text in stored):
            raise StaleSessionError(_STALE_MESSAGE)
        return event

    @traced("session.sweep_expired_sessions")
    async def sweep_expired_sessions(
        self,
        *,
        batch_size: int = 1000,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Delete sessions idle longer than `session_ttl` (events go with them); how many.

        Works in batches so a large sweep never holds long locks; `progress` is called with the
        running total after each batch.
        """
        if self.session_ttl is None:
            return 0
        idle_seconds = self.session_ttl.total_seconds()

        async def step(size: int) -> tuple[int, bool]:
            deleted = await self._store.sweep(idle_seconds, size)
            return deleted, deleted == size

        return await in_batches(step, batch_size, progress)

    @traced("session.list_idle_sessions")
    async def list_idle_sessions(
        self,
        idle_for: timedelta,
        *,
        app_name: str | None = None,
        after: IdleSession | None = None,
        limit: int = 1000,
    ) -> list[IdleSession]:
        """Sessions with events that nobody appended to for longer than `idle_for`, one page in
        key order (app, user, session id); pass a page's last item as `after` for the next.

        Idleness is measured on the server's clock (the time of the last append), as the TTL
        sweep measures it; `last_update_time` is the last event's own timestamp, the one memory
        watermarks record. Memory triggers use it to find conversations that went quiet.
        """
        if not isinstance(idle_for, timedelta) or idle_for <= timedelta(0):
            raise InputValidationError("idle_for must be a positive timedelta.")
        if app_name is not None:
            _check_key("app_name", app_name)
        if not 1 <= limit <= 10_000:
            raise InputValidationError("limit must be between 1 and 10000.")
        if after is not None and not isinstance(after, IdleSession):
            raise InputValidationError("after must be an IdleSession from a previous page.")
        start = (
            (after.app_name, after.user_id, after.session_id) if after else (app_name or "", "", "")
        )
        return await self._store.idle(idle_for.total_seconds(), app_name, start, limit)

    async def close(self) -> None:
        """Release the connection pool (a shared engine is left to its owner)."""
        await self.database.close()

    async def __aenter__(self) -> PostgresSessionService:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
