"""Recorded replies: counting deletions whose replay returns the first attempt's counts.

Owns: the one shape every counting deletion takes so that it is safe to replay after a lost
reply (see `Database.run`). A deletion is idempotent, but its counts are not: replayed after
its first attempt committed, it would delete nothing and report zeros (an erasure record
saying nothing was erased). So the statement records its counts under the caller's request id,
in the same transaction, and a replay finds that record, deletes nothing more and returns it.
It never holds a deletion of its own: each store writes its CTEs and names its reply table
(one per migration component, created in `migrations.py`); records keep counts only, never
whose rows they were, and each is dropped a day later by a later recorded statement.
"""

from __future__ import annotations

from collections.abc import Sequence

FIRST_ATTEMPT = "NOT EXISTS (SELECT 1 FROM prior)"
"""The condition each deletion in a recorded statement adds: false when the statement replays a
request whose first attempt committed (nothing is deleted twice)."""


def recorded(table: str, request: str, ctes: str, counts: Sequence[str]) -> str:
    """A statement running `ctes` (data-modifying CTEs, each restricted by `FIRST_ATTEMPT`) that
    returns `counts` (SQL expressions over them) as one `bigint[]`, recorded in `table` under
    the request id parameter `request` (e.g. "$3"). The replay of a committed request returns
    the recorded array instead."""
    values = ", ".join(counts)
    return f"""
WITH prior AS (SELECT counts FROM {table} WHERE id = {request}::uuid),
{ctes},
expired AS (DELETE FROM {table} WHERE create_time < now() - interval '1 day'),
reply AS (SELECT ARRAY[{values}]::bigint[] AS counts),
saved AS (
    INSERT INTO {table} (id, counts) SELECT {request}::uuid, counts FROM reply
     WHERE {FIRST_ATTEMPT}
)
SELECT coalesce((SELECT counts FROM prior), (SELECT counts FROM reply))
"""
