"""Whether row-level security is in force for a database handle, and the `row_level_security`
setting applied.

Owns: reading, for one schema, which tables carry the gated policies (`db/rls.py`), which of
them have row-level security enabled and forced, and whether the connected role bypasses it (a
superuser or a BYPASSRLS role bypasses every policy, FORCE included); turning it on or off for
those tables as the setting says (only the tables' owner can, so only a process that migrates
tries); and the one WARNING per process and schema when it is not in force. It never creates
or drops a policy: that is the migrations' (policies stay whatever the setting: turning
row-level security back on needs no migration).

Off (`row_level_security=False`, `ADK_MEMORY_ROW_LEVEL_SECURITY=off`) means: the policed tables
get `DISABLE ROW LEVEL SECURITY` (and `NO FORCE`), so only the statements' own `WHERE` keeps
users apart, as before issue 26; the gates stay in the statements (one function call each).
It is the database's state, not the process's: set it alike for every process of a deployment.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import asyncpg

logger = logging.getLogger(__name__)

_STATE = """
SELECT CASE WHEN r.rolsuper THEN 'a superuser' WHEN r.rolbypassrls THEN 'a BYPASSRLS role' END,
       coalesce(array_agg(c.relname ORDER BY c.relname) FILTER (WHERE c.oid IS NOT NULL), '{}'),
       coalesce(array_agg(c.relname ORDER BY c.relname)
                FILTER (WHERE c.relrowsecurity AND c.relforcerowsecurity), '{}'),
       coalesce(array_agg(c.relname ORDER BY c.relname) FILTER (WHERE c.relrowsecurity), '{}')
  FROM pg_roles r
  LEFT JOIN (pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = $1)
         ON EXISTS (SELECT FROM pg_policy p
                     WHERE p.polrelid = c.oid AND p.polname = c.relname || '_gated')
 WHERE r.rolname = current_user
 GROUP BY r.rolsuper, r.rolbypassrls
"""

_warned: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class RlsState:
    """Row-level security in one schema, as one connection's role meets it."""

    bypass: str | None
    """'a superuser' / 'a BYPASSRLS role' when the role bypasses every policy, else None."""
    policed: tuple[str, ...]
    """The tables with the gated policies."""
    forced: tuple[str, ...]
    """Those with row-level security enabled and forced (the owner policed too)."""
    enabled: tuple[str, ...]
    """Those with row-level security enabled at all."""

    @property
    def in_force(self) -> bool:
        """Whether every policed table polices this role."""
        return self.bypass is None and bool(self.policed) and self.forced == self.policed

    def describe(self) -> str:
        """One line for people: in force, or why not."""
        if self.bypass is not None:
            return (
                f"not in force: the database role is {self.bypass}, which bypasses every "
                "policy (only the statements' own filters keep users apart; connect as a "
                "non-superuser owner, or with `adk-memory db roles`)"
            )
        if not self.policed:
            return "not set up (the schema is not migrated yet)"
        if self.forced != self.policed:
            return "off (row_level_security is off for these tables: only the filters hold)"
        return f"in force on {len(self.policed)} tables (owner included)"


async def read_state(conn: asyncpg.Connection, schema: str) -> RlsState:
    """What `conn`'s role meets in `schema` now."""
    row = await conn.fetchrow(_STATE, schema)
    return RlsState(row[0], tuple(row[1]), tuple(row[2]), tuple(row[3]))


async def apply_setting(
    conn: asyncpg.Connection, schema: str, on: bool, *, change: bool
) -> RlsState:
    """Bring the policed tables of `schema` to the setting `on` (with `change`: the caller
    migrates, so it owns them) and return the state, logging one WARNING per process and
    schema when row-level security is not in force. A role that may not change them (not the
    owner) leaves them as they are and says so."""
    state = await read_state(conn, schema)
    wrong = [t for t in state.policed if (t in state.forced) != on or (t in state.enabled) != on]
    if change and wrong:
        verbs = ("ENABLE", "FORCE") if on else ("DISABLE", "NO FORCE")
        try:
            async with conn.transaction():
                await conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtext($1))", f"adk_memory:{schema}"
                )
                for table in wrong:
                    await conn.execute(
                        f"ALTER TABLE {schema}.{table} {verbs[0]} ROW LEVEL SECURITY, "
                        f"{verbs[1]} ROW LEVEL SECURITY"
                    )
        except asyncpg.exceptions.InsufficientPrivilegeError as exc:
            _warn_once(
                schema,
                "owner",
                f"row_level_security={'on' if on else 'off'} could "
                f"not be applied ({exc}): only the tables' owner may change it",
            )
        state = await read_state(conn, schema)
    if not state.in_force and state.policed:
        _warn_once(
            schema,
            state.describe(),
            f"Row-level security in schema {schema!r} is {state.describe()}.",
        )
    return state


def _warn_once(schema: str, key: str, message: str) -> None:
    if (schema, key) not in _warned:
        _warned.add((schema, key))
        logger.warning(message)
