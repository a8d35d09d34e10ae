"""Row-level security on the memory tables (issue 26, docs/rls.md): the policies, not the
statements' filters, keep a scope's rows from every other scope.

One schema of its own, migrated by the test server's owner (a non-superuser: the policies apply
to it, FORCE), with the agent and worker LOGIN users `adk-memory db roles` makes (`apply_roles`).
Every policed table is seeded with two users' rows in all their key forms (the scope, its
quarantine, its procedures and theirs) on the owner's all-users path. Then, as each role: an
unfiltered `SELECT` gated by Alice's scope sees exactly her rows, with no gate nothing; a write
for Bob gated as Alice is refused; one connection alternating the two under custom and generic
plans never mixes them; the real store statements with their scope filters cut out still
return only the gated scope; and every transaction the memory side opens acts for one scope at
most (besides the worker's all-scope bookkeeping of its job). The static check holds every
statement of memory/store and the queue to the gate rule (`rls_checks.ungated`).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import pytest
from rls_checks import all_rows, levels, ungated
from sqlalchemy import event
from sqlalchemy.engine import make_url

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.db import rls
from adk_memory.db.engine import Database
from adk_memory.db.factory import make_engine
from adk_memory.db.migrations import INGEST_TABLES, MEMORY_SCOPED_TABLES
from adk_memory.db.roles import GRANTS, OPEN_TABLES, Login, apply_roles
from adk_memory.db.vectors import VECTOR_STRATEGIES
from adk_memory.memory.jobs import JobQueue
from adk_memory.memory.scope import (
    procedure_key,
    quarantine_key,
    scope_gate,
    scope_key,
    user_scope,
)
from adk_memory.memory.store import (
    AppConfigStore,
    AuditStore,
    MemoryStore,
    OptOutStore,
    ProfileStore,
    Search,
    SupportStore,
    Tombstones,
)
from adk_memory.memory.store import reads as store_reads
from adk_memory.memory.store.ingest import IngestStore
from adk_memory.testing import HashEmbedder, ScriptedLlm

SCHEMA = "rls_memory"
"""With the roles of `adk-memory db roles` (whose maintenance policies then pass its owner)."""
OWNED = "rls_memory_owned"
"""Without them: the single-role deployment, its owner policed by the policies (FORCE)."""
PREFIX = "rlsm_"
PASSWORD = "rlsm-secret"
APP = "travel"
ALICE_SCOPE = user_scope(APP, "alice")
BOB_SCOPE = user_scope(APP, "bob")
ALICE, BOB = scope_key(ALICE_SCOPE), scope_key(BOB_SCOPE)
CONFIG_APPS = ("cfg_app", "cfg_other")


def every_form(key: str) -> list[str]:
    return [key, quarantine_key(key), procedure_key(key), quarantine_key(procedure_key(key))]


SEEDED = {
    "memories": every_form,
    "memory_revisions": lambda key: [key, procedure_key(key)],
    "memory_jobs": lambda key: [key],
    "memory_scope_leases": lambda key: [key],
    "memory_watermarks": lambda key: [key],
    "memory_profile_fields": lambda key: [key],
    "memory_profile_revisions": lambda key: [key],
    "procedure_support": lambda key: [procedure_key(key)],
}
"""Each policed table's seeded keys of one user's scope (its quarantine and procedure forms)."""

_SEED = {
    "memories": "(id, scope_key, scope, fact, source_type, fts) "
    "SELECT gen_random_uuid(), $1, $2::jsonb, 'seeded', 'DIRECT', ''::tsvector",
    "memory_revisions": "(id, memory_id, scope_key, scope, action) "
    "SELECT gen_random_uuid(), gen_random_uuid(), $1, $2::jsonb, 'CREATED'",
    "memory_jobs": "(id, scope_key, scope, payload, max_attempts, status) "
    "SELECT gen_random_uuid(), $1, $2::jsonb, '{}', 1, 'done'",
    "memory_scope_leases": "(scope_key, job_id, lease_until) "
    "SELECT $1, gen_random_uuid(), now() - interval '1 hour' WHERE $2::jsonb IS NOT NULL",
    "memory_watermarks": "(scope_key, session_id, event_id, event_time) "
    "SELECT $1, 's1', 'e1', 1 WHERE $2::jsonb IS NOT NULL",
    "memory_profile_fields": "(scope_key, scope, schema_id, field, value, source_type) "
    "SELECT $1, $2::jsonb, 'prefs', 'seat', '\"window\"', 'DIRECT'",
    "memory_profile_revisions": "(id, scope_key, scope, schema_id, field, action) "
    "SELECT gen_random_uuid(), $1, $2::jsonb, 'prefs', 'seat', 'CREATED'",
    "procedure_support": "(scope_key, memory_id, user_id, session_id, tokens) "
    "SELECT $1, gen_random_uuid(), $2::jsonb->>'user_id', 's1', '{}'",
}


def dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


def login_url(database_url: str, role: str) -> str:
    url = make_url(database_url).set(username=f"{PREFIX}{role}_user", password=PASSWORD)
    return url.render_as_string(hide_password=False)


def schema_of(role: str) -> str:
    return OWNED if role == "owner" else SCHEMA


async def _setup(database_url: str) -> None:
    for schema in (SCHEMA, OWNED):
        async with PostgresMemoryService(
            database_url, schema=schema, embedder=HashEmbedder(), run_worker=False
        ) as owner:
            await owner.list_memories(page_size=1)  # migrate; fix the vector dimension
    conn = await asyncpg.connect(dsn(database_url))
    try:
        logins = [Login(role, f"{PREFIX}{role}_user", PASSWORD) for role in ("agent", "worker")]
        await apply_roles(conn, SCHEMA, prefix=PREFIX, logins=logins)
    finally:
        await conn.close()
    conn = await all_rows(database_url)
    try:
        for schema in (SCHEMA, OWNED):
            await _seed(conn, schema)
    finally:
        await conn.close()


async def _seed(conn: asyncpg.Connection, schema: str) -> None:
    for scope in (ALICE_SCOPE, BOB_SCOPE):
        key = scope_key(scope)
        for table, keys in SEEDED.items():
            statement = f"INSERT INTO {schema}.{table} {_SEED[table]}"
            for form in keys(key):
                await conn.execute(statement, form, json.dumps(scope))
    for app in CONFIG_APPS:
        await conn.execute(
            f"INSERT INTO {schema}.memory_app_configs (app_name, version, config) "
            "VALUES ($1, 1, '{}')",
            app,
        )


@pytest.fixture(scope="module")
def urls(database_url: str) -> Iterator[dict[str, str]]:
    """The owner's URL (the test server's) and the agent's and worker's LOGIN users'."""
    asyncio.run(_setup(database_url))
    yield {"owner": database_url} | {r: login_url(database_url, r) for r in ("agent", "worker")}


@pytest.fixture
async def connect(urls: dict[str, str]) -> AsyncIterator[Any]:
    opened: list[asyncpg.Connection] = []

    async def open_as(role: str) -> asyncpg.Connection:
        opened.append(await asyncpg.connect(dsn(urls[role])))
        return opened[-1]

    yield open_as
    for conn in opened:
        await conn.close()


def readable(role: str) -> list[str]:
    """The policed tables `role` may SELECT at all (the owner: every one)."""
    return [t for t in SEEDED if role == "owner" or "S" in GRANTS[t].get(role, "")]


@pytest.mark.parametrize("role", ["owner", "agent", "worker"])
async def test_an_unfiltered_select_sees_only_the_gated_scope(connect, role):
    assert set(SEEDED) == set(MEMORY_SCOPED_TABLES)
    conn, schema = await connect(role), schema_of(role)
    for table in readable(role):
        gated = f"SELECT scope_key FROM {schema}.{table} WHERE {schema}.act_as_scope($1)"
        ungated = await conn.fetchval(f"SELECT count(*) FROM {schema}.{table}")
        if role in OPEN_TABLES.get(table, {}):  # the worker's claim: every scope's jobs
            rows = await conn.fetch(gated, ALICE)
            assert len(rows) == ungated == len(SEEDED[table](ALICE) + SEEDED[table](BOB))
            continue
        for form in every_form(ALICE):  # each key form is a key of its own to the policy
            rows = await conn.fetch(gated, form)
            # a revision carries its memory's real key: a quarantine key's gate answers it
            seen = form.removeprefix("quarantine:") if table == "memory_revisions" else form
            expected = [seen] if seen in SEEDED[table](ALICE) else []
            assert [r[0] for r in rows] == expected, (table, form)
        assert ungated == 0, table
        every = await conn.fetchval(
            f"SELECT count(*) FROM {schema}.{table} WHERE {schema}.act_for_all()"
        )
        if role == "owner":  # the owner's all-users path (maintenance in one-role setups)
            assert every == len(SEEDED[table](ALICE)) + len(SEEDED[table](BOB)), table
        elif role == "agent":  # no all-users policy: the agent is strict
            assert every == 0, table
    configs = f"SELECT app_name FROM {schema}.memory_app_configs"
    gated = await conn.fetch(f"{configs} WHERE {schema}.act_as($1, NULL)", "cfg_app")
    assert [r[0] for r in gated] == ["cfg_app"]
    assert await conn.fetch(configs) == []


@pytest.mark.parametrize("role", ["owner", "agent"])
async def test_a_write_for_another_scope_is_refused(connect, role):
    conn, schema = await connect(role), schema_of(role)
    gated = f"{schema}.act_as_scope($2)"
    with pytest.raises(asyncpg.InsufficientPrivilegeError, match="row-level security"):
        await conn.execute(
            f"INSERT INTO {schema}.memories (id, scope_key, scope, fact, source_type, fts) "
            f"SELECT gen_random_uuid(), $1, '{{}}', 'planted', 'DIRECT', '' WHERE {gated}",
            BOB,
            ALICE,
        )
    for change in ("UPDATE {t} SET fact = 'changed'", "DELETE FROM {t}"):
        done = await conn.execute(
            f"{change.format(t=f'{schema}.memories')} WHERE scope_key = $1 AND {gated}",
            BOB,
            ALICE,
        )
        assert done.endswith(" 0"), done
    # An update that would move Alice's own row to Bob's scope is refused too (WITH CHECK).
    with pytest.raises(asyncpg.InsufficientPrivilegeError, match="row-level security"):
        await conn.execute(
            f"UPDATE {schema}.memories SET scope_key = $1 WHERE scope_key = $2 AND {gated}",
            BOB,
            ALICE,
        )


async def test_the_worker_cannot_write_a_watermark_for_another_scope(connect):
    conn = await connect("worker")
    with pytest.raises(asyncpg.InsufficientPrivilegeError, match="row-level security"):
        await conn.execute(
            f"INSERT INTO {SCHEMA}.memory_watermarks (scope_key, session_id, event_id, "
            f"event_time) SELECT $1, 's9', 'e9', 1 WHERE {SCHEMA}.act_as_scope($2)",
            BOB,
            ALICE,
        )


async def test_the_worker_role_runs_a_generation_for_its_scope_only(urls):
    """The agent enqueues, the worker (policed on the memories, open on the queue) claims the
    job across scopes and writes its memory under the job's scope; each user sees their own."""
    grace = user_scope(APP, "grace")
    async with (
        PostgresMemoryService(
            urls["agent"], schema=SCHEMA, llm=ScriptedLlm(), run_worker=False
        ) as agent,
        PostgresMemoryService(
            urls["worker"], schema=SCHEMA, llm=ScriptedLlm(), run_worker=False
        ) as worker,
    ):
        await agent.generate_memories(facts=["Grace sails on Sundays."], scope=grace)
        assert await worker.worker.run_once()
        mine = await agent.list_memories(grace)
        assert [m.fact for m in mine.memories] == ["Grace sails on Sundays."]
        assert (await agent.list_memories(user_scope(APP, "heidi"))).memories == []


def users_of(rows: list[asyncpg.Record], column: int = 1) -> set[str]:
    return {json.loads(r[column])["user_id"] for r in rows}


@pytest.mark.parametrize("mode", ["auto", "force_custom_plan", "force_generic_plan"])
async def test_one_connection_alternating_scopes_never_mixes_them(connect, mode):
    conn = await connect("agent")
    await conn.execute(f"SET plan_cache_mode = {mode}")
    unfiltered = await conn.prepare(
        f"SELECT DISTINCT scope::text FROM {SCHEMA}.memories WHERE {SCHEMA}.act_as_scope($1)"
    )
    listing = await conn.prepare(rls.render(store_reads._LIST, SCHEMA))
    for turn in range(8):
        key, user = (ALICE, "alice") if turn % 2 == 0 else (BOB, "bob")
        assert users_of(await unfiltered.fetch(key), 0) == {user}
        for form in (key, quarantine_key(key)):  # one key form a statement
            page = await listing.fetch(
                form, None, None, None, None, None, None, 50, True, None, None
            )
            assert len(page) == 1 and users_of(page) == {user}


def _without(statement: str, *removed: str) -> str:
    for text in removed:
        assert text in statement, text
        statement = statement.replace(text, "true")
    return statement


async def test_the_policies_not_the_filters_stop_another_scope(connect, urls):
    owner = await all_rows(urls["owner"])
    try:
        ids = [r[0] for r in await owner.fetch(f"SELECT id::text FROM {SCHEMA}.memories")]
    finally:
        await owner.close()
    conn = await connect("agent")
    get_many = rls.render(store_reads._GET_MANY, SCHEMA)
    unfiltered = _without(get_many, "m.scope_key = $2")
    assert users_of(await conn.fetch(unfiltered, ids, ALICE)) == {"alice"}
    assert users_of(await conn.fetch(unfiltered, ids, BOB)) == {"bob"}
    gate = rls.render(scope_gate("$2"), SCHEMA)
    ungated_too = unfiltered.replace(gate, "$2::text IS NOT NULL")
    assert ungated_too != unfiltered
    assert await conn.fetch(ungated_too, ids, ALICE) == []


async def test_a_search_with_its_scope_filters_cut_out_finds_only_the_gated_scope(urls):
    carol, dave = user_scope(APP, "carol"), user_scope(APP, "dave")
    async with PostgresMemoryService(
        urls["owner"], schema=SCHEMA, embedder=HashEmbedder(), run_worker=False
    ) as owner:
        await owner.create_memory("carol flies to Lisbon in May", carol)
        await owner.create_memory("dave flies to Lisbon in June", dave)
    engine = make_engine(urls["agent"])
    try:
        store = MemoryStore(Database(engine=engine, schema=SCHEMA))
        await store.prepare_embeddings(64)
        [query] = await HashEmbedder().embed(["flies to Lisbon"])
        search = Search(
            scope_key=scope_key(carol),
            query_text="flies to Lisbon",
            query_embedding=query,
            top_k=10,
            candidates=50,
            rrf_k=60,
            weights=(1.0, 0.0, 0.0),
            half_life_seconds=86400.0,
            flt=None,
            floors=(-1.0, 0.0),
        )
        statement, args = store.retrieval(search)
        unfiltered, cut = re.subn(r"\b(?:[mt]\.)?scope_key = \$1", "true", statement)
        assert cut >= 4  # the text and vector lists, the time window, the scope's size
        async with engine.connect() as conn:
            raw = await conn.get_raw_connection()
            rows = await raw.driver_connection.fetch(unfiltered, *args)
        assert rows and users_of(rows) == {"carol"}
    finally:
        await engine.dispose()


def _stores(database: Database) -> list[object]:
    """Every store of the memory side, as built (its statements rendered for `SCHEMA`)."""
    memory = MemoryStore(database)
    parts = [vars(memory)[name].__self__ for name in ("insert_many", "get", "watermark")]
    audit = AuditStore(database)
    return [
        *parts,
        ProfileStore(database),
        SupportStore(database),
        AppConfigStore(database),
        Tombstones(database, audit),
        OptOutStore(database),
        audit,
        JobQueue(database),
        IngestStore(database),
    ]


def statements(store: object) -> list[str]:
    """The rendered statements a store holds (its `str` attributes and dicts of them)."""
    found: list[str] = []
    for value in vars(store).values():
        values = value.values() if isinstance(value, dict) else [value]
        found += [v for v in values if isinstance(v, str) and f"{SCHEMA}." in v]
    return found


def test_every_memory_statement_gates_each_level_that_names_a_policed_table():
    """The static check over memory/store and the queue (every statement they hold, the search
    and consolidation's candidates for every way vectors are indexed). A statement added
    without its gates fails here, not in production (where it would answer no row)."""
    database = Database(engine=make_engine("postgresql+asyncpg://u@localhost/d"), schema=SCHEMA)
    tables = (*MEMORY_SCOPED_TABLES, *INGEST_TABLES, "memory_app_configs")
    every = [s for store in _stores(database) for s in statements(store)]
    retrieval = MemoryStore(database)._retrieval
    for strategy in VECTOR_STRATEGIES:
        retrieval.use_vectors(strategy)
        every += statements(retrieval)
    for statement in every:
        assert ungated(statement, SCHEMA, tables) == [], statement
        assert other_forms(statement) == [], statement
    assert len(every) >= 57


_GATED_KEY = re.compile(rf"{SCHEMA}\.act_as_scope\(((?:'[a-z:]+' \|\| )?\$\d+)\)")
_READ_KEY = re.compile(r"\bscope_key = ((?:'[a-z:]+' \|\| )?\$\d+)(?!:)")


def other_forms(statement: str) -> list[str]:
    """The levels of `statement` whose gate names one key (a parameter, or a prefix and one)
    while the level reads another (`scope_key = <parameter>`): the policy is one equality with
    the gated key, so such a level would answer nothing."""
    wrong = []
    for level in levels(statement):
        gated = set(_GATED_KEY.findall(level))
        if len(gated) == 1 and not set(_READ_KEY.findall(level)) <= gated:
            wrong.append(" ".join(level.split()))
    return wrong


_SCOPE_GATE = re.compile(
    rf"{OWNED}\.act_as_scope\((?:'[a-z:]+' \|\| )?(\$\d+|\(\$\d+::text\[\]\)\[1\])"
)
_APP_GATE = re.compile(rf"{OWNED}\.act_as\((\$\d+)")


def acting_for(query: str, args: tuple[Any, ...]) -> set[str]:
    """The scopes (and apps) a statement's gates name, from its bound values."""
    found: set[str] = set()
    for ref in _SCOPE_GATE.findall(query):
        value = args[int(re.search(r"\d+", ref).group()) - 1]
        value = value[0] if ref.startswith("(") else value
        found.add(value[value.index("{") :])
    found.update(f"app:{args[int(ref[1:]) - 1]}" for ref in _APP_GATE.findall(query))
    return found


async def test_no_transaction_of_the_memory_side_acts_for_two_scopes(urls):
    """Every transaction block (a deletion with its audit, a generation's effects and its job,
    an app's configuration, an erasure's steps) names one scope at most in its gates: a
    statement that lost its gate inside one could only ever see that scope's rows."""
    transactions: list[list[set[str]]] = []
    engine = make_engine(urls["owner"])

    def logged(dbapi_connection: Any, _record: Any) -> None:
        current: list[set[str]] | None = None

        def log(query: Any) -> None:
            nonlocal current
            text = query.query.strip().upper()
            if text.startswith("BEGIN"):
                current = []
            elif text.startswith(("COMMIT", "ROLLBACK")):
                if current is not None:
                    transactions.append(current)
                current = None
            elif current is not None:
                current.append(acting_for(query.query, tuple(query.args or ())))

        dbapi_connection.driver_connection.add_query_logger(log)

    event.listen(engine.sync_engine, "connect", logged)
    try:
        async with PostgresMemoryService(
            engine=engine,
            schema=OWNED,
            embedder=HashEmbedder(),
            llm=ScriptedLlm(),
            run_worker=True,
        ) as service:
            await service.push_config("cfg_pushed", MemoryBankConfig())
            erin, frank = user_scope(APP, "erin"), user_scope(APP, "frank")
            made = await service.create_memory("erin's window seat", erin)
            await service.delete_memory(scope=erin, memory_id=made.id)
            done = await service.generate_memories(
                facts=["Erin likes jazz."], scope=erin, wait_for_completion=True
            )
            assert done.done
            await service.create_memory("frank's aisle seat", frank)
            await service.erase_user(APP, "frank")
    finally:
        await engine.dispose()
    acted = [set().union(*t) for t in transactions if t]
    assert {scope_key(user_scope(APP, "erin")), "app:cfg_pushed"} <= set().union(*acted)
    for scopes in acted:
        assert len(scopes) <= 1, scopes
