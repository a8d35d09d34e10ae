"""The deployment's migration job (`python -m deploy.migrate`): brings the session and memory
tables up to date before a rollout, so the app and the worker (which run with
`auto_migrate=false`, and as roles that may not) never change the schema themselves; where the
least-privilege roles exist (`adk-memory db roles`), it then re-applies their grants, so a table
a migration added is covered before the new version serves.

Owns: running adk-memory's migrations, under their advisory lock, against the database and
schema the deployment's services use, as the maintenance user. Safe to run any number of times.
It never touches rows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from adk_memory.adk.services import memory_service_from_uri, session_service_from_uri
from adk_memory.db.migrations import MIGRATIONS
from adk_memory.db.roles import DEFAULT_PREFIX, GRANTS, apply_roles, roles_present
from adk_memory.env import environment

from .failures import run_job
from .settings import Deployment


async def migrate(deployment: Deployment, roles_prefix: str = DEFAULT_PREFIX) -> dict[str, int]:
    """Apply what is missing, then the grants of the roles named with `roles_prefix` when they
    exist; return each component's version now (with an embedding model, how many of the
    vectors' steps are in place; with roles, how many tables the grant table covers)."""
    sessions = session_service_from_uri(deployment.session_uri(auto_migrate="true"))
    memory = memory_service_from_uri(deployment.memory_uri(auto_migrate="true"))
    versions: dict[str, int] = {}
    async with sessions, memory:
        for component, database in (("sessions", sessions.database), ("memory", memory.database)):
            await database.ensure_migrated(component, MIGRATIONS[component])
            versions[component] = len(MIGRATIONS[component])
        if memory.embedder is not None:  # the vector column and index, for its dimension
            state = await memory.database.ensure_vectors(memory.embedder.dimensions)
            versions["vectors"] = state.done
        # A table a migration added gets its grants now, before the new version serves.
        async with memory.database.connection() as conn:
            if await roles_present(conn, roles_prefix):
                await apply_roles(conn, memory.database.schema, prefix=roles_prefix)
                versions["roles"] = len(GRANTS)
    return versions


def main(environ: Mapping[str, str] | None = None) -> int:
    """Command-line entry point; a setting it refuses is one `Error:` line (`run_job`)."""

    def body() -> int:
        deployment = Deployment.from_env(environment(environ), "maintenance")
        for component, version in asyncio.run(migrate(deployment)).items():
            print(f"{component}: version {version}")
        return 0

    return run_job(body)


if __name__ == "__main__":
    raise SystemExit(main())
