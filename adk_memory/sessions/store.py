"""SQL for sessions, events and scoped state: one named statement per operation.

Owns: every statement that touches the session tables, each keyed by (app_name, user_id) so no
call can reach another user's rows, and each a single round trip (the append writes the event,
the three state scopes and the stale-writer check in one statement), each safe to replay after
a lost reply (`Database.run`): a replay returns what the first attempt did. It speaks only strings,
numbers and JSON text: turning rows into ADK objects is the codec's job, deciding what to write
is the service's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import NamedTuple

from ..db.engine import Database
from ..db.migrations import SESSION_MIGRATIONS
from ..db.replica import ReadFor
from ..db.replies import FIRST_ATTEMPT, recorded
from ..db.rls import render

# Every statement is row-level-security gated (`db/rls.py`): `{act_as}($1, $2)` (the caller's
# app and user) in the WHERE of each query level that names a policed table, so the policies see
# the acting user before any of that level's rows; app-wide listings gate with `{act_as_app}`,
# the sweeps with `{act_for_all}`. An INSERT takes its row from a gated SELECT (the policy's
# WITH CHECK then sees the setting), never from VALUES.

# $8 is the call's request id. A taken id returns no row, unless the session holding it was
# created by this very call: its replay after a lost reply returns the session as created
# (revision 0, the state it was given) and merges nothing twice.
_CREATE = """
WITH s AS (
    INSERT INTO {schema}.sessions (app_name, user_id, id, state, last_update_time, request_id)
    SELECT $1, $2, $3, $4::json, $5, $8::uuid WHERE {act_as}($1, $2)
    ON CONFLICT DO NOTHING
    RETURNING revision
), mine AS (
    SELECT 0::bigint AS revision FROM {schema}.sessions
     WHERE app_name = $1 AND user_id = $2 AND id = $3 AND request_id = $8::uuid
       AND NOT EXISTS (SELECT 1 FROM s) AND {act_as}($1, $2)
), a AS (
    INSERT INTO {schema}.app_states AS t (app_name, state)
    SELECT $1, $6::json FROM s WHERE $6::json IS NOT NULL AND {act_as}($1, $2)
    ON CONFLICT (app_name) DO UPDATE
        SET state = {schema}.merge_state(t.state, EXCLUDED.state), update_time = now()
    RETURNING t.state
), u AS (
    INSERT INTO {schema}.user_states AS t (app_name, user_id, state)
    SELECT $1, $2, $7::json FROM s WHERE $7::json IS NOT NULL AND {act_as}($1, $2)
    ON CONFLICT (app_name, user_id) DO UPDATE
        SET state = {schema}.merge_state(t.state, EXCLUDED.state), update_time = now()
    RETURNING t.state
)
SELECT s.revision,
       coalesce((SELECT state FROM a),
                (SELECT state FROM {schema}.app_states
                  WHERE app_name = $1 AND {act_as}($1, $2)))::text,
       coalesce((SELECT state FROM u),
                (SELECT state FROM {schema}.user_states
                  WHERE app_name = $1 AND user_id = $2 AND {act_as}($1, $2)))::text
FROM (SELECT revision FROM s UNION ALL SELECT revision FROM mine) s
"""

# One session with its app and user state, and its events as `{events}` selects them: three
# shapes (`_GET_ALL`, `_GET_RECENT`, `_GET_NONE`) rather than one with a CASE on the selection,
# because the CASE folded away only in a plan made for the call's own values, so PostgreSQL
# planned the read afresh on every call (docs/rls.md §6); each shape settles on a generic plan.
_GET_SHAPE = """
SELECT s.state::text, s.revision, s.last_update_time,
       (SELECT state::text FROM {schema}.app_states WHERE app_name = $1 AND {act_as}($1, $2)),
       (SELECT state::text FROM {schema}.user_states
         WHERE app_name = $1 AND user_id = $2 AND {act_as}($1, $2)),
       {events}
FROM {schema}.sessions s
WHERE s.app_name = $1 AND s.user_id = $2 AND s.id = $3 AND {act_as}($1, $2)
"""

# Every event (the runtime's read each turn), read in index order as it is, without the
# selection's materialised, re-sorted set: half the server's time for a 500-event session.
_ALL_EVENTS = """ARRAY(
           SELECT data::text FROM {schema}.events
            WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND {act_as}($1, $2)
            ORDER BY seq)"""

# $4: how many recent events (NULL = all). $5: an inclusive lower timestamp bound, applied as
# ADK applies it: of those events, the newest run whose timestamps are all >= $5.
_RECENT_EVENTS = """(
           WITH recent AS (
               SELECT data, seq, "timestamp" FROM {schema}.events
                WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND {act_as}($1, $2)
                ORDER BY seq DESC
                LIMIT $4::bigint
           )
           SELECT array_agg(r.data::text ORDER BY r.seq) FROM recent r
            WHERE $5::float8 IS NULL
               OR r.seq > (SELECT coalesce(max(seq), -1) FROM recent
                            WHERE "timestamp" < $5::float8))"""

_GET_ALL = _GET_SHAPE.replace("{events}", _ALL_EVENTS)
_GET_RECENT = _GET_SHAPE.replace("{events}", _RECENT_EVENTS)

# No events at all (`num_recent_events=0`).
_GET_NONE = _GET_SHAPE.replace("{events}", "NULL::text[]")

_LIST_COLUMNS = """
SELECT s.user_id, s.id, s.state::text, s.revision, s.last_update_time, u.state::text
FROM {schema}.sessions s
LEFT JOIN {schema}.user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id
"""
_LIST_FOR_USER = (
    _LIST_COLUMNS
    + "WHERE s.app_name = $1 AND s.user_id = $2 AND {act_as}($1, $2)"
    + " ORDER BY s.last_update_time, s.id"
)
_LIST_FOR_APP = (
    _LIST_COLUMNS
    + "WHERE s.app_name = $1 AND {act_as_app}($1) ORDER BY s.last_update_time, s.user_id, s.id"
)

# The app's state (its policy reads the app only: $2 is the listing's user, or NULL).
_APP_STATE = """
SELECT state::text FROM {schema}.app_states WHERE app_name = $1 AND {act_as}($1, $2::text)
"""
_USER_STATE = """
SELECT state::text FROM {schema}.user_states
 WHERE app_name = $1 AND user_id = $2 AND {act_as}($1, $2)
"""

_DELETE = """
DELETE FROM {schema}.sessions WHERE app_name = $1 AND user_id = $2 AND id = $3 AND {act_as}($1, $2)
"""

# One user of one app, forgotten: events (compaction summaries counted apart), sessions and user
# state, counted under request id $3 (see `db.replies`). Events are deleted explicitly (not only
# by cascade) so they can be counted. Gated as that user: an erasure reaches no one else's rows.
_ERASE_USER = recorded(
    "{schema}.session_replies",
    "$3",
    f"""
e AS (
    DELETE FROM {{schema}}.events
     WHERE app_name = $1 AND user_id = $2 AND {FIRST_ATTEMPT} AND {{act_as}}($1, $2)
    RETURNING (data::jsonb -> 'actions' -> 'compaction') IS NOT NULL AS compaction
), s AS (DELETE FROM {{schema}}.sessions
          WHERE app_name = $1 AND user_id = $2 AND {FIRST_ATTEMPT} AND {{act_as}}($1, $2)
          RETURNING 1),
   u AS (DELETE FROM {{schema}}.user_states
          WHERE app_name = $1 AND user_id = $2 AND {FIRST_ATTEMPT} AND {{act_as}}($1, $2)
          RETURNING 1)""",
    [
        "(SELECT count(*) FROM s)",
        "(SELECT count(*) FILTER (WHERE NOT compaction) FROM e)",
        "(SELECT count(*) FILTER (WHERE compaction) FROM e)",
        "(SELECT count(*) FROM u)",
    ],
)

# Succeeds (returns the new revision) only if the session is still at revision $6 and does not
# hold this very event already (an equal re-delivery is a no-op, as in ADK): the optimistic
# check, the event insert and all three state merges commit together or not at all. `mine`
# answers this append's replay after a lost reply: when the event written at revision $6 + 1
# is this very event, that revision is returned again (nothing is written twice). It is read
# only when the update found nothing, so the hot path pays nothing for it.
_APPEND = """
WITH s AS (
    UPDATE {schema}.sessions
       SET state = CASE WHEN $4::json IS NULL THEN state
                        ELSE {schema}.merge_state(state, $4::json) END,
           revision = revision + 1, last_update_time = $5, active_time = now()
     WHERE app_name = $1 AND user_id = $2 AND id = $3 AND revision = $6 AND {act_as}($1, $2)
       AND NOT EXISTS (SELECT 1 FROM {schema}.events
                        WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND id = $7
                          AND data::jsonb = ($9::json)::jsonb AND {act_as}($1, $2))
    RETURNING revision
), e AS (
    INSERT INTO {schema}.events
        (app_name, user_id, session_id, seq, id, invocation_id, "timestamp", data)
    SELECT $1, $2, $3, revision, $7, $8, $5, $9::json FROM s WHERE {act_as}($1, $2)
), a AS (
    INSERT INTO {schema}.app_states AS t (app_name, state)
    SELECT $1, $10::json FROM s WHERE $10::json IS NOT NULL AND {act_as}($1, $2)
    ON CONFLICT (app_name) DO UPDATE
        SET state = {schema}.merge_state(t.state, EXCLUDED.state), update_time = now()
), u AS (
    INSERT INTO {schema}.user_states AS t (app_name, user_id, state)
    SELECT $1, $2, $11::json FROM s WHERE $11::json IS NOT NULL AND {act_as}($1, $2)
    ON CONFLICT (app_name, user_id) DO UPDATE
        SET state = {schema}.merge_state(t.state, EXCLUDED.state), update_time = now()
), mine AS (
    SELECT seq AS revision FROM {schema}.events
     WHERE NOT EXISTS (SELECT 1 FROM s)
       AND app_name = $1 AND user_id = $2 AND session_id = $3 AND seq = $6 + 1 AND id = $7
       AND data::jsonb = ($9::json)::jsonb AND {act_as}($1, $2)
)
SELECT revision FROM s UNION ALL SELECT revision FROM mine
"""

_HEAD = """
SELECT s.revision, s.last_update_time,
       (SELECT id FROM {schema}.events
         WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND {act_as}($1, $2)
         ORDER BY seq DESC LIMIT 1)
FROM {schema}.sessions s
WHERE s.app_name = $1 AND s.user_id = $2 AND s.id = $3 AND {act_as}($1, $2)
"""

_EVENTS_WITH_ID = """
SELECT data::text FROM {schema}.events
WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND id = $4 AND {act_as}($1, $2)
"""

# The TTL sweep: every user's sessions, so it acts for all users (the maintenance path).
_SWEEP = """
DELETE FROM {schema}.sessions WHERE {act_for_all}() AND ctid = ANY(ARRAY(
    SELECT ctid FROM {schema}.sessions
     WHERE active_time < now() - make_interval(secs => $1) AND {act_for_all}() LIMIT $2))
"""


# Sessions with events and no append for $1 seconds, in primary-key order after the key
# ($2, $3, $4): each page continues the previous one's index range scan, so a whole sweep reads
# the table's primary key once however many pages it takes (the table has no index on
# active_time, on purpose: see migration 1). A sweep across users: it acts for all of them.
_IDLE_COLUMNS = """
SELECT app_name, user_id, id, last_update_time FROM {schema}.sessions
 WHERE (app_name, user_id, id) > ($2, $3, $4) AND {act_for_all}()
   AND revision > 0 AND active_time < now() - make_interval(secs => $1)
"""
_IDLE = _IDLE_COLUMNS + "ORDER BY app_name, user_id, id LIMIT $5"
_IDLE_FOR_APP = _IDLE_COLUMNS + "AND app_name = $6 ORDER BY app_name, user_id, id LIMIT $5"


@dataclass(frozen=True)
class SessionRow:
    """A stored session as the database returns it: ids, JSON texts (state, and one per event
    when events were asked for) and its revision."""

    user_id: str
    id: str
    state_json: str
    revision: int
    last_update_time: float
    app_state_json: str | None
    user_state_json: str | None
    event_texts: list[str] | None = None


@dataclass(frozen=True)
class SessionHead:
    """What the stale-writer check needs to know about a stored session."""

    revision: int
    last_update_time: float
    last_event_id: str | None


class IdleSession(NamedTuple):
    """A session nobody appended to for a while: its keys and its last event's timestamp."""

    app_name: str
    user_id: str
    session_id: str
    last_update_time: float


class SessionStore:
    """Runs the session statements against one `Database` (and its schema)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        schema = db.schema
        self._create = render(_CREATE, schema)
        self._get_all = render(_GET_ALL, schema)
        self._get_recent = render(_GET_RECENT, schema)
        self._get_none = render(_GET_NONE, schema)
        self._list_for_user = render(_LIST_FOR_USER, schema)
        self._list_for_app = render(_LIST_FOR_APP, schema)
        self._app_state = render(_APP_STATE, schema)
        self._user_state = render(_USER_STATE, schema)
        self._delete = render(_DELETE, schema)
        self._erase_user = render(_ERASE_USER, schema)
        self._append = render(_APPEND, schema)
        self._head = render(_HEAD, schema)
        self._events_with_id = render(_EVENTS_WITH_ID, schema)
        self._sweep = render(_SWEEP, schema)
        self._idle = render(_IDLE, schema)
        self._idle_for_app = render(_IDLE_FOR_APP, schema)

    async def ready(self) -> None:
        """Migrate (or check) the session tables; cheap after the first call."""
        await self._db.ensure_migrated("sessions", SESSION_MIGRATIONS)

    async def create(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        state_json: str,
        last_update_time: float,
        app_delta_json: str | None,
        user_delta_json: str | None,
    ) -> SessionRow | None:
        """Insert a session and merge its app/user deltas; None if the id is taken (by another
        call: this call's own replay after a lost reply gets its session back)."""
        await self.ready()
        request_id = uuid.uuid4()
        row = await self._db.run(
            lambda conn: conn.fetchrow(
                self._create,
                app_name,
                user_id,
                session_id,
                state_json,
                last_update_time,
                app_delta_json,
                user_delta_json,
                request_id,
            )
        )
        if row is None:
            return None
        return SessionRow(user_id, session_id, state_json, row[0], last_update_time, row[1], row[2])

    async def get(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        num_recent_events: int | None,
        after_timestamp: float | None,
        *,
        replica: bool | ReadFor = False,
    ) -> SessionRow | None:
        """One session with merged-state inputs and its selected events, in one statement
        (on the read replica if `replica`: `Database.run`)."""
        await self.ready()
        arguments: tuple[object, ...]
        if num_recent_events == 0:
            get, arguments = self._get_none, (app_name, user_id, session_id)
        elif num_recent_events is None and after_timestamp is None:
            get, arguments = self._get_all, (app_name, user_id, session_id)
        else:
            get = self._get_recent
            arguments = (app_name, user_id, session_id, num_recent_events, after_timestamp)
        row = await self._db.run(lambda conn: conn.fetchrow(get, *arguments), replica=replica)
        if row is None:
            return None
        return SessionRow(user_id, session_id, row[0], row[1], row[2], row[3], row[4], row[5])

    async def list_sessions(
        self, app_name: str, user_id: str | None, *, replica: bool | ReadFor = False
    ) -> list[SessionRow]:
        """Sessions of one user (or of every user of the app), oldest update first (on the read
        replica if `replica`)."""
        await self.ready()
        if user_id is None:
            rows = await self._db.run(
                lambda conn: conn.fetch(self._list_for_app, app_name), replica=replica
            )
        else:
            rows = await self._db.run(
                lambda conn: conn.fetch(self._list_for_user, app_name, user_id), replica=replica
            )
        app_state = (
            await self._db.run(
                lambda conn: conn.fetchval(self._app_state, app_name, user_id), replica=replica
            )
            if rows
            else None
        )
        return [SessionRow(r[0], r[1], r[2], r[3], r[4], app_state, r[5]) for r in rows]

    async def delete(self, app_name: str, user_id: str, session_id: str) -> None:
        """Delete one session; its events go with it (ON DELETE CASCADE)."""
        await self.ready()
        await self._db.run(lambda conn: conn.execute(self._delete, app_name, user_id, session_id))

    async def erase_user(
        self, app_name: str, user_id: str, request_id: uuid.UUID | None = None
    ) -> tuple[int, int, int, int]:
        """Delete every session, event and the user state of one user; (sessions, events,
        compaction summaries, user states) deleted; a replay after a lost reply (or a call
        with the same `request_id`) returns the same counts."""
        request_id = request_id or uuid.uuid4()
        counts = await self._db.run(
            lambda conn: conn.fetchval(self._erase_user, app_name, user_id, request_id)
        )
        return int(counts[0]), int(counts[1]), int(counts[2]), int(counts[3])

    async def user_state(self, app_name: str, user_id: str) -> str | None:
        """The user's state as JSON text, or None when nothing was ever stored."""
        await self.ready()
        return await self._db.run(lambda conn: conn.fetchval(self._user_state, app_name, user_id))

    async def append(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        *,
        expected_revision: int,
        timestamp: float,
        event_id: str,
        invocation_id: str,
        event_json: str,
        session_delta_json: str | None,
        app_delta_json: str | None,
        user_delta_json: str | None,
    ) -> int | None:
        """Append one event if the session is still at `expected_revision`; the new revision.

        None means nothing was written: the session is gone or another writer got there first
        (`head` tells which).
        """
        await self.ready()
        return await self._db.run(
            lambda conn: conn.fetchval(
                self._append,
                app_name,
                user_id,
                session_id,
                session_delta_json,
                timestamp,
                expected_revision,
                event_id,
                invocation_id,
                event_json,
                app_delta_json,
                user_delta_json,
            )
        )

    async def head(self, app_name: str, user_id: str, session_id: str) -> SessionHead | None:
        """The stored revision, update time and newest event id of a session, if it exists."""
        await self.ready()
        row = await self._db.run(
            lambda conn: conn.fetchrow(self._head, app_name, user_id, session_id)
        )
        return None if row is None else SessionHead(row[0], row[1], row[2])

    async def events_with_id(
        self, app_name: str, user_id: str, session_id: str, event_id: str
    ) -> list[str]:
        """The JSON of every stored event of the session that carries `event_id`."""
        await self.ready()
        rows = await self._db.run(
            lambda conn: conn.fetch(self._events_with_id, app_name, user_id, session_id, event_id)
        )
        return [r[0] for r in rows]

    async def sweep(self, idle_seconds: float, batch_size: int) -> int:
        """Delete up to `batch_size` sessions idle for longer than `idle_seconds`; how many."""
        await self.ready()
        status = await self._db.run(
            lambda conn: conn.execute(self._sweep, idle_seconds, batch_size)
        )
        return int(status.split()[-1])

    async def idle(
        self,
        idle_seconds: float,
        app_name: str | None,
        after: tuple[str, str, str],
        limit: int,
    ) -> list[IdleSession]:
        """Up to `limit` sessions with events and no append for `idle_seconds`, in key order
        after the key `after` (app, user, session id), of one app or of all."""
        await self.ready()
        if app_name is None:
            rows = await self._db.run(
                lambda conn: conn.fetch(self._idle, idle_seconds, *after, limit)
            )
        else:
            rows = await self._db.run(
                lambda conn: conn.fetch(self._idle_for_app, idle_seconds, *after, limit, app_name)
            )
        return [IdleSession(r[0], r[1], r[2], r[3]) for r in rows]
