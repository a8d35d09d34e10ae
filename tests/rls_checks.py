"""Row-level security helpers shared by the tests: a direct connection that sees every row (for
a test that inspects or ages stored rows itself), and the static check that every statement
gates each query level naming a policed table (`db/rls.py`'s rule), for any store's SQL.

The test server's URL names the owner role, which the policies police like any other (FORCE):
an ungated statement of a test sees nothing. `all_rows` is the owner's all-users path, the one
a sweep takes (`act_for_all`), set for a whole connection of the test's own (never a pooled
one: a service's statement must never find it set).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import asyncpg

from adk_memory.db import rls

EVERY_ROW = {rls.ALL_USERS_SETTING: "on"}
"""Server settings for a test's own connection that sees every row as the owner."""

SESSION_TABLES = ("sessions", "events", "user_states", "app_states")
"""The policed session tables (sessions migration 3)."""


async def all_rows(database_url: str) -> asyncpg.Connection:
    """A direct connection to the test database, as its owner, that sees every user's rows."""
    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
    return await asyncpg.connect(dsn, server_settings=EVERY_ROW)


def for_all(schema: str) -> str:
    """The gate a test's own statement on a pooled connection carries to reach every row."""
    return f"{schema}.act_for_all()"


_STATEMENT = re.compile(r"\(\s*(?:SELECT|WITH|INSERT|UPDATE|DELETE)\b", re.IGNORECASE)


def levels(sql: str) -> list[str]:
    """`sql` split into its query levels: the text of each parenthesised statement (a CTE body,
    a subquery, an `ARRAY(SELECT ...)`) without its own nested statements, and the outermost
    level's text likewise (a CTE's name and `AS` belong to the level that holds it)."""
    found: list[str] = []

    def walk(text: str) -> str:
        kept, i = [], 0
        while (match := _STATEMENT.search(text, i)) is not None:
            kept.append(text[i : match.start()])
            depth, j = 0, match.start()
            while True:  # the matching parenthesis (statements never hold an unbalanced one)
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            found.append(walk(text[match.start() + 1 : j]))
            kept.append("(...)")
            i = j + 1
        kept.append(text[i:])
        return "".join(kept)

    found.append(walk(sql))
    return found


def ungated(sql: str, schema: str, tables: Iterable[str]) -> list[str]:
    """The levels of `sql` (rendered: `rls.render`) that name one of `tables` (FROM, JOIN,
    UPDATE, INSERT INTO, DELETE FROM) without a gate of their own: the rule is a gate in the
    WHERE of every query level that reads or writes a policed table, so the policies never run
    before the settings they read were set."""
    names = "|".join(re.escape(t) for t in tables)
    policed = re.compile(
        rf"\b(?:FROM|JOIN|UPDATE|INTO)\s+{re.escape(schema)}\.(?:{names})\b", re.IGNORECASE
    )
    gate = re.compile(rf"\b{re.escape(schema)}\.(?:{'|'.join(rls.GATES)})\(")
    return [
        " ".join(level.split())
        for level in levels(sql)
        if policed.search(level) and not gate.search(level)
    ]
