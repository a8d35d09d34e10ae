"""Row-level security on the session tables (issue 26): the policies, not the statements'
filters, keep users apart. The test server's URL names its owner role (not a superuser), so
every test here runs policed exactly as the default setup does; the agent role's side is in
`tests/test_roles.py` (it needs the roles that module creates)."""

from __future__ import annotations

import logging
import re
from typing import Any

import asyncpg
import pytest
from click.testing import CliRunner
from conftest import TEST_SCHEMA, said
from rls_checks import SESSION_TABLES, ungated

from adk_memory import PostgresSessionService
from adk_memory.cli import main
from adk_memory.db import owner
from adk_memory.db.engine import Database
from adk_memory.db.migrations import SESSION_MIGRATIONS, migrate
from adk_memory.db.rls import render
from adk_memory.errors import DatabasePermissionError, InputValidationError
from adk_memory.sessions import store
from adk_memory.settings.database import database_settings

APP = "app"
GATE = f"{TEST_SCHEMA}.act_as($1, $2)"


def test_every_session_statement_gates_each_level_that_names_a_policed_table() -> None:
    statements = {
        name: sql
        for name, sql in vars(store.SessionStore(_unconnected())).items()
        if isinstance(sql, str)
    }
    assert len(statements) == 16  # 13 operations, get_session in three shapes
    for name, sql in statements.items():
        assert ungated(sql, TEST_SCHEMA, SESSION_TABLES) == [], name


def test_the_static_check_finds_a_level_without_its_gate() -> None:
    sql = render(
        "SELECT (SELECT count(*) FROM {schema}.events WHERE user_id = $2) "
        "FROM {schema}.sessions WHERE {act_as}($1, $2)",
        TEST_SCHEMA,
    )
    assert ungated(sql, TEST_SCHEMA, SESSION_TABLES) == [
        f"SELECT count(*) FROM {TEST_SCHEMA}.events WHERE user_id = $2"
    ]


def _unconnected() -> Any:
    return Database("postgresql://nobody@localhost/none", schema=TEST_SCHEMA)


@pytest.fixture
async def two_users(session_service: PostgresSessionService) -> PostgresSessionService:
    """alice and bob, each with two sessions of two events, user state and the app's state."""
    for user in ("alice", "bob"):
        for sid in ("s1", "s2"):
            session = await session_service.create_session(
                app_name=APP, user_id=user, session_id=sid, state={"user:lang": user}
            )
            for n in range(2):
                await session_service.append_event(
                    session, said(f"{user} {sid} {n}", ts=float(n + 1))
                )
    await session_service.create_session(app_name=APP, user_id="carol", state={"app:x": 1})
    return session_service


async def test_an_unfiltered_select_sees_only_the_gated_user_and_nothing_ungated(
    two_users: PostgresSessionService, database_url: str
) -> None:
    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        expected = {"sessions": 2, "events": 4, "user_states": 1, "app_states": 1}
        for table in SESSION_TABLES:
            user = "NULL" if table == "app_states" else "user_id"
            rows = await conn.fetch(
                f"SELECT app_name, {user} FROM {TEST_SCHEMA}.{table} WHERE {GATE}", APP, "alice"
            )
            assert len(rows) == expected[table], table
            assert {r[0] for r in rows} == {APP}
            assert {r[1] for r in rows} <= {"alice", None}, table
            assert await conn.fetch(f"SELECT * FROM {TEST_SCHEMA}.{table}") == [], table
            other = await conn.fetch(
                f"SELECT * FROM {TEST_SCHEMA}.{table} WHERE {GATE}", "other-app", "alice"
            )
            assert other == [], table
    finally:
        await conn.close()


async def test_writing_another_users_row_is_refused_with_a_typed_error(
    two_users: PostgresSessionService,
) -> None:
    database = two_users.database
    insert = (
        f"INSERT INTO {TEST_SCHEMA}.user_states (app_name, user_id, state) "
        f"SELECT $1, 'mallory', '{{}}' WHERE {GATE}"
    )
    with pytest.raises(DatabasePermissionError, match="row-level security"):
        await database.run(lambda conn: conn.execute(insert, APP, "alice"))
    move = f"UPDATE {TEST_SCHEMA}.sessions SET user_id = 'bob' WHERE id = 's1' AND {GATE}"
    with pytest.raises(DatabasePermissionError, match="row-level security"):
        await database.run(lambda conn: conn.execute(move, APP, "alice"))
    # Another user's rows are not there to update or delete.
    touch = f"UPDATE {TEST_SCHEMA}.sessions SET state = '{{}}' WHERE user_id = 'bob' AND {GATE}"
    assert await database.run(lambda conn: conn.execute(touch, APP, "alice")) == "UPDATE 0"
    drop = f"DELETE FROM {TEST_SCHEMA}.events WHERE {GATE}"
    assert await database.run(lambda conn: conn.execute(drop, APP, "carol")) == "DELETE 0"
    bob = await two_users.get_session(app_name=APP, user_id="bob", session_id="s1")
    assert bob is not None and len(bob.events) == 2 and bob.state["user:lang"] == "bob"


@pytest.mark.parametrize("mode", ["auto", "force_generic_plan"])
async def test_one_statement_alternating_users_on_one_connection(
    two_users: PostgresSessionService, mode: str
) -> None:
    get = render(store._GET_ALL, TEST_SCHEMA)
    unfiltered = render(
        "SELECT array_agg(DISTINCT user_id) FROM {schema}.events WHERE {act_as}($1, $2)",
        TEST_SCHEMA,
    )
    async with two_users.database.connection() as conn:
        await conn.execute(f"SET plan_cache_mode = {mode}")
        try:
            for turn in range(8):  # past the five custom plans: the generic one too
                user = ("alice", "bob")[turn % 2]
                row = await conn.fetchrow(get, APP, user, "s1")
                assert row is not None and len(row[5]) == 2
                assert all(f'"{user} s1' in event for event in row[5])
                assert await conn.fetchval(unfiltered, APP, user) == [user]
        finally:
            await conn.execute("RESET plan_cache_mode")


async def test_the_session_read_settles_on_a_generic_plan(
    two_users: PostgresSessionService,
) -> None:
    """`get_session` was planned afresh on every call (docs/rls.md §6): each of its shapes now
    settles on the generic plan after the planner's five custom ones."""
    shapes = (
        (render(store._GET_ALL, TEST_SCHEMA), ("s1",)),
        (render(store._GET_RECENT, TEST_SCHEMA), ("s1", 1, None)),
    )
    async with two_users.database.connection() as conn:
        for _ in range(8):
            for sql, args in shapes:
                assert await conn.fetchrow(sql, APP, "alice", *args) is not None
        plans = await conn.fetch(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement = ANY($1::text[])",
            [sql for sql, _ in shapes],
        )
    assert len(plans) == len(shapes) and all(generic > 0 for generic, _ in plans), plans


async def test_the_sweeps_and_app_wide_listing_reach_every_user_as_the_owner(
    two_users: PostgresSessionService,
) -> None:
    listed = await two_users.list_sessions(app_name=APP)
    assert {s.user_id for s in listed.sessions} == {"alice", "bob", "carol"}
    idle = await two_users._store.idle(0.0, None, ("", "", ""), 10)
    assert {s.user_id for s in idle} == {"alice", "bob"}


async def _ungated_count(database: Database) -> int:
    await database.ensure_migrated("sessions", SESSION_MIGRATIONS)
    await database.run(
        lambda conn: conn.execute(
            render(
                "INSERT INTO {schema}.app_states (app_name) SELECT 'a' WHERE {act_as}('a', '') "
                "ON CONFLICT DO NOTHING",
                database.schema,
            )
        )
    )
    sql = f"SELECT count(*) FROM {database.schema}.app_states"
    return int(await database.run(lambda conn: conn.fetchval(sql)))


async def test_row_level_security_off_and_on_again(
    database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Off: the policed tables' row-level security is disabled (the policies stay), so an
    ungated statement sees rows again, with a warning; on again: back in force."""
    schema = "rls_setting_test"
    off = Database(database_url, schema=schema, row_level_security=False)
    try:
        with caplog.at_level(logging.WARNING, logger="adk_memory.db.enforcement"):
            assert await _ungated_count(off) == 1
        assert off.rls is not None and not off.rls.in_force and off.rls.enabled == ()
        assert "off (row_level_security is off" in caplog.text
    finally:
        await off.close()
    on = Database(database_url, schema=schema)
    try:
        assert await _ungated_count(on) == 0
        assert on.rls is not None and on.rls.in_force
        assert on.rls.policed == ("app_states", "events", "sessions", "user_states")
    finally:
        await on.close()


async def test_a_superuser_is_warned_that_row_level_security_is_not_in_force(
    superuser_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    database = Database(superuser_url, schema="rls_superuser_test")
    try:
        with caplog.at_level(logging.WARNING, logger="adk_memory.db.enforcement"):
            assert await _ungated_count(database) == 1  # the policies do not hold it back
        assert database.rls is not None and database.rls.bypass is not None
        assert "bypasses every policy" in caplog.text
    finally:
        await database.close()


def test_the_setting_reads_its_variable() -> None:
    assert database_settings(environ={}).row_level_security is True
    off = {"ADK_MEMORY_ROW_LEVEL_SECURITY": "off"}
    assert database_settings(environ=off).row_level_security is False
    with pytest.raises(InputValidationError, match="ADK_MEMORY_ROW_LEVEL_SECURITY"):
        database_settings(environ={"ADK_MEMORY_ROW_LEVEL_SECURITY": "maybe"})


def test_migrate_says_whether_row_level_security_is_in_force(
    database_url: str, superuser_url: str
) -> None:
    where = ("--schema", TEST_SCHEMA, "--component", "sessions", "--check")
    owner = CliRunner().invoke(main, ["migrate", "--database-url", database_url, *where])
    assert owner.exit_code == 0, owner.output
    # the schema's policed tables: the sessions' 4, and the memory tables if a test made them
    assert re.search(r"row-level security: in force on \d+ tables", owner.output), owner.output
    admin = CliRunner().invoke(main, ["migrate", "--database-url", superuser_url, *where])
    assert "row-level security: not in force: the database role is a superuser" in admin.output


async def test_an_existing_superuser_schema_is_given_to_the_owner_and_policed(
    database_url: str, superuser_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A data directory from before the owner role: its schema, made by the superuser at
    sessions version 2, is given to the owner at the next start, which then migrates it under
    row-level security; the rows stay, reachable through the gate only."""
    schema = "rls_legacy_test"
    admin = await asyncpg.connect(superuser_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await migrate(admin, schema, "sessions", SESSION_MIGRATIONS[:2])
        await admin.execute(
            f"INSERT INTO {schema}.sessions (app_name, user_id, id, last_update_time) "
            "VALUES ('app', 'alice', 's', 0)"
        )
    finally:
        await admin.close()
    monkeypatch.setattr(owner, "_READY", set())  # as a new process would
    plain = superuser_url.replace("postgresql+asyncpg://", "postgresql://")
    assert owner.ensure_owner(plain).startswith(f"postgresql://{owner.OWNER_ROLE}:@")
    database = Database(database_url, schema=schema)
    try:
        await database.ensure_migrated("sessions", SESSION_MIGRATIONS)
        assert database.rls is not None and database.rls.in_force
        gated = f"SELECT count(*) FROM {schema}.sessions WHERE {schema}.act_as('app', 'alice')"
        assert await database.run(lambda conn: conn.fetchval(gated)) == 1
        ungated = f"SELECT count(*) FROM {schema}.sessions"
        assert await database.run(lambda conn: conn.fetchval(ungated)) == 0
        owners = await database.run(
            lambda conn: conn.fetch(
                "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = $1", schema
            )
        )
        assert [r[0] for r in owners] == [owner.OWNER_ROLE]
    finally:
        await database.close()
