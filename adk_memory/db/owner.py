"""The embedded server's owner role: who the default setup connects as, so that row-level
security applies to it.

Owns: creating, at a server's first use by this process, the non-superuser LOGIN role
(`OWNER_ROLE`) that the embedded server's URL names, the extensions that role may not create
itself and the leakproof full-text match (in the server's database and in template1), and the
one-time transfer to it of the adk-memory schemas a superuser created (data directories from
before this role existed). It runs as the server's bootstrap superuser (`postgres`) only here,
never for a store's statement.

Why: PostgreSQL lets a superuser (and a BYPASSRLS role) bypass every policy, FORCE ROW LEVEL
SECURITY included, and the embedded server's only role was `postgres`, a superuser. Connecting
as an owner that is neither puts the default setup (and every test) under the policies its
migrations create (`db/rls.py`).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

OWNER_ROLE = "adk_memory_owner"
"""The embedded server's owner: LOGIN, NOSUPERUSER, NOBYPASSRLS. CREATEROLE so that
`adk-memory db roles` works on the embedded server too (a CREATEROLE role can create neither
superusers nor BYPASSRLS roles: RLS still holds), CREATEDB so that benchmarks and evaluations
can make databases of their own (each made from template1, which holds the extensions)."""

SUPERUSER = "postgres"
"""The embedded server's bootstrap superuser (the wheel's `initdb -U postgres`)."""

_SETUP = f"""
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{OWNER_ROLE}') THEN
        CREATE ROLE {OWNER_ROLE} LOGIN;
    END IF;
END $$;
ALTER ROLE {OWNER_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS CREATEROLE CREATEDB;
GRANT CREATE ON DATABASE {SUPERUSER} TO {OWNER_ROLE};
-- Dropping a database of its own WITH (FORCE) may have to end an autovacuum worker there.
GRANT pg_signal_backend TO {OWNER_ROLE};
"""

_EXTENSIONS = """
-- pgvector is not a trusted extension: only a superuser may create it. btree_gin is, but
-- creating both keeps the migrations' CREATE EXTENSION IF NOT EXISTS a no-op.
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS btree_gin;
"""
"""Run in the server's database and in template1, so a database the owner creates has them."""

_LEAKPROOF = """
ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
"""
"""Full-text matching (`fts @@ query`) declared leakproof, in the server's database and in
template1 (pg_proc is per database). On a policed table PostgreSQL evaluates a qual that is not
leakproof only after the policy's, so it may not be an index condition: the search's text list
then read the whole scope from the heap and filtered `@@` per row (+20 % on the hybrid search
at 1,000 memories a scope, more with bigger scopes; docs/rls.md §7). Leakproof, `@@` is an index
condition again (+2 %). Only a superuser may declare it; `ts_match_vq` compares a parsed
document with a parsed query and raises nothing that depends on the values. A server given by
URL needs it from its administrator (docs/rls.md)."""

_TRANSFER = f"""
DO $$
DECLARE
    s name;
    r record;
BEGIN
    FOR s IN SELECT n.nspname FROM pg_namespace n
              WHERE n.nspowner = 10
                AND EXISTS (SELECT FROM pg_class c WHERE c.relnamespace = n.oid
                               AND c.relname = 'schema_versions') LOOP
        EXECUTE format('ALTER SCHEMA %I OWNER TO {OWNER_ROLE}', s);
        FOR r IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = s AND c.relowner = 10 AND c.relkind IN ('r', 'p', 'v', 'm')
        LOOP
            EXECUTE format('ALTER TABLE %I.%I OWNER TO {OWNER_ROLE}', s, r.relname);
        END LOOP;
        FOR r IN SELECT p.oid::regprocedure AS f FROM pg_proc p
                   JOIN pg_namespace n ON n.oid = p.pronamespace
                  WHERE n.nspname = s AND p.proowner = 10 LOOP
            EXECUTE format('ALTER ROUTINE %s OWNER TO {OWNER_ROLE}', r.f);
        END LOOP;
    END LOOP;
END $$;
"""
"""Every adk-memory schema (one holding `schema_versions`) still owned by the bootstrap
superuser (oid 10), and its tables, views and functions, given to the owner: a data directory
made before the owner existed is converted once (a schema `adk-memory db roles` gave its
maintenance role is not the superuser's, so it is left alone)."""

_READY: set[str] = set()
"""The servers (by superuser URL) this process has set up."""
_LOCK = threading.Lock()


def owner_url(superuser_url: str) -> str:
    """The URL of the owner role on the server `superuser_url` (the wheel's URL, naming
    `postgres` with no password: the embedded server trusts its local socket)."""
    prefix = f"postgresql://{SUPERUSER}:@"
    if not superuser_url.startswith(prefix):
        raise ValueError(f"not an embedded server's URL: {superuser_url!r}")
    return f"postgresql://{OWNER_ROLE}:@" + superuser_url[len(prefix) :]


def ensure_owner(superuser_url: str) -> str:
    """Create the owner role on the embedded server at `superuser_url` (first use by this
    process; each step is idempotent, so processes sharing a server may race) and return its
    URL. Blocking: a short connection in a thread of its own, whatever loop the caller runs."""
    with _LOCK:
        if superuser_url not in _READY:
            failure: list[BaseException] = []

            def work() -> None:
                try:
                    asyncio.run(_set_up(superuser_url))
                except BaseException as exc:  # re-raised in the caller's thread
                    failure.append(exc)

            thread = threading.Thread(target=work, name="adk-memory-owner")
            thread.start()
            thread.join()
            if failure:
                raise failure[0]
            _READY.add(superuser_url)
    return owner_url(superuser_url)


async def _set_up(superuser_url: str) -> None:
    import asyncpg  # here: `adk-memory db status` imports this module and must start fast

    conn: Any = await asyncpg.connect(superuser_url)
    try:
        # One at a time per server: two processes creating the role at once would collide on
        # pg_authid's unique index.
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext('adk_memory:owner'))")
            await conn.execute(_SETUP)
            await conn.execute(_EXTENSIONS)
            await conn.execute(_LEAKPROOF)
            await conn.execute(_TRANSFER)
    finally:
        await conn.close()
    template = await asyncpg.connect(superuser_url.replace(f"/{SUPERUSER}?", "/template1?", 1))
    try:
        async with template.transaction():
            await template.execute("SELECT pg_advisory_xact_lock(hashtext('adk_memory:owner'))")
            await template.execute(_EXTENSIONS)
            await template.execute(_LEAKPROOF)
    finally:
        await template.close()
