"""The statements of each app's stored memory configuration (`memory_app_configs`).

Owns: publishing a version and reading one, and the rule that makes publishing replay-safe (a
configuration equal to the app's latest version is that version; any other becomes the next
one, and history is kept). A stored document this adk-memory cannot read is `AppConfigError`
(worded by `app_config.problems`). It never edits or deletes a stored version (a queued job may
still name it) and never reads the job queue's table.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..._json import dump_json
from ...config import AppMemoryConfig
from ...db import rls
from ...db.engine import Database
from ...errors import AppConfigError
from ..app_config import AppConfigVersion, problems

# Serialised per app (two replicas starting at once publish one version), in one transaction
# with the write, so the latest version read below is the latest there is.
_LOCK = "SELECT pg_advisory_xact_lock(hashtext($1))"

_APP_GATE = "{act_as}($1, NULL)"
"""Every statement here is on one app's ($1) configurations and carries this gate (row-level
security, `db.rls`): the app, no user (the policy answers the app's rows)."""

# The app's latest version if it equals $2, else a new version after it: (version, created).
_PUBLISH = f"""
WITH latest AS (
    SELECT version, config FROM {{schema}}.memory_app_configs
     WHERE app_name = $1 AND {_APP_GATE} ORDER BY version DESC LIMIT 1
), inserted AS (
    INSERT INTO {{schema}}.memory_app_configs (app_name, version, config)
    SELECT $1, coalesce((SELECT version FROM latest), 0) + 1, $2::jsonb
     WHERE NOT EXISTS (SELECT 1 FROM latest WHERE config = $2::jsonb) AND {_APP_GATE}
    RETURNING version
)
SELECT version, true FROM inserted
UNION ALL
SELECT version, false FROM latest WHERE config = $2::jsonb
"""

# Version $2 of app $1, or its latest when $2 is null.
_GET = f"""
SELECT version, config::text, create_time FROM {{schema}}.memory_app_configs
 WHERE app_name = $1 AND ($2::integer IS NULL OR version = $2) AND {_APP_GATE}
 ORDER BY version DESC LIMIT 1
"""

_LATEST_VERSION = (
    f"SELECT max(version) FROM {{schema}}.memory_app_configs WHERE app_name = $1 AND {_APP_GATE}"
)


class AppConfigStore:
    """The app configurations' statements against one `Database`."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._publish = rls.render(_PUBLISH, db.schema)
        self._get = rls.render(_GET, db.schema)
        self._latest_version = rls.render(_LATEST_VERSION, db.schema)

    async def publish(self, app_name: str, config: AppMemoryConfig) -> tuple[int, bool]:
        """Store `config` as the app's configuration: (its version, whether this call created
        it). Equal to the latest version: that version, nothing written (a replay after a lost
        reply, or every replica of an agent starting); else the next version."""
        document = dump_json(config.model_dump(mode="json"))
        lock_key = f"adk_memory.app_config:{self._db.schema}:{app_name}"

        async def publish(conn: Any) -> tuple[int, bool]:
            async with conn.transaction():
                await conn.execute(_LOCK, lock_key)
                row = await conn.fetchrow(self._publish, app_name, document)
            return int(row[0]), bool(row[1])

        return await self._db.run(publish)

    async def get(self, app_name: str, version: int | None = None) -> AppConfigVersion | None:
        """Version `version` of the app's configuration (its latest when None), or None if
        there is none. A stored document this adk-memory cannot read is `AppConfigError`."""
        row = await self._db.run(lambda conn: conn.fetchrow(self._get, app_name, version))
        if row is None:
            return None
        try:
            config = AppMemoryConfig.model_validate(json.loads(row[1]))
        except ValidationError as exc:
            raise AppConfigError(
                f"The stored memory configuration of app {app_name!r}, version {row[0]}, is not "
                f"valid for this adk-memory ({problems(exc)}): upgrade it, or push a valid "
                "configuration with `adk-memory config push`."
            ) from exc
        return AppConfigVersion(app_name, int(row[0]), config, row[2])

    async def latest_version(self, app_name: str) -> int | None:
        """The app's latest version; None if it has none."""
        return await self._db.run(lambda conn: conn.fetchval(self._latest_version, app_name))
