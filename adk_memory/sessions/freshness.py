"""Read-your-writes for session reads served by a read replica.

Owns: what this process wrote last to each session (a bounded map of (app, user, session) to
the revision its create or append returned, or "deleted"), and the rule that decides whether a
session the replica returned is older than that, so the read must go to the primary instead.
ADK's Runner appends an event and reads the session again within the same turn; a replica a
few milliseconds behind would hand it the session without the event it just wrote, and its
next append would then fail the stale-writer check. It never reads the database itself.

Why the session's revision and not the WAL position (`pg_current_wal_lsn()` of the write
against the replica's `pg_last_wal_replay_lsn()`):

- the revision comes back from the write's own statement and the replica's row carries its
  own, so the check costs no round trip and no extra statement on either path; the commit's
  WAL position is only known after the commit, so reading it costs every append a second
  round trip (a position read inside the statement is before its commit record: a replica
  that replayed up to it may still not show the row);
- it asks exactly "does the replica hold this session as this process last wrote it", per
  session: a replica always a little behind under load still serves every other session,
  where a position compared process-wide would send most reads to the primary;
- it holds on any PostgreSQL-compatible replica (an AlloyDB read pool, a proxy in front of
  several replicas), where WAL replay positions are not comparable or not exposed.

What it does not cover: another process's writes (as with any replica, a session read may not
yet show a turn another worker just wrote: that worker's own reads do), a session deleted and
created again under the same id within the replica's lag (the new one's revisions start over),
app and user state
written through another session (visible once the replica catches up, usually milliseconds),
and sessions whose entry was evicted (`max_sessions` more recently written sessions since: far
longer ago than any replica's lag).
"""

from __future__ import annotations

from typing import Literal

from .._cache import LruCache

DELETED: Literal[-1] = -1
"""What `WrittenRevisions` remembers for a session this process deleted."""

DEFAULT_MAX_SESSIONS = 20_000
"""How many sessions' last written revision a service remembers (at most a few MB): far more
than any process writes within a replica's lag."""

_EVERY_SESSION = ""
"""The session id under which a user's erasure is remembered (session ids are never empty)."""


class WrittenRevisions:
    """The revision this process last wrote to each session, for the `stale` check."""

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        self._revisions: LruCache[tuple[str, str, str], int] = LruCache(max_sessions)

    def wrote(self, app_name: str, user_id: str, session_id: str, revision: int) -> None:
        """This process created or appended to the session, which is now at `revision`."""
        self._revisions.put((app_name, user_id, session_id), revision)

    def deleted(self, app_name: str, user_id: str, session_id: str) -> None:
        """This process deleted the session."""
        self._revisions.put((app_name, user_id, session_id), DELETED)

    def erased(self, app_name: str, user_id: str) -> None:
        """This process erased the user: every session of theirs is read from the primary
        while this is remembered, so none that is gone comes back from a lagging replica."""
        self._revisions.put((app_name, user_id, _EVERY_SESSION), DELETED)

    def stale(self, app_name: str, user_id: str, session_id: str, revision: int | None) -> bool:
        """Whether a replica's answer (the session at `revision`, None: no such session) is
        older than what this process wrote, so the primary must answer instead."""
        if self._revisions.get((app_name, user_id, _EVERY_SESSION)) is not None:
            return True
        wrote = self._revisions.get((app_name, user_id, session_id))
        if wrote is None:
            return False
        if wrote == DELETED:
            return revision is not None
        return revision is None or revision < wrote
