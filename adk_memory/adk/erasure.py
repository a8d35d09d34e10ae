"""Erasing one user everywhere: the right to be forgotten as one call.

Owns: the order of an erasure and its record. First the tombstones (`memory.tombstones`: keyed
hashes of the user, their session ids and memory ids, no text) and the record are written, so
nothing deleted afterwards can be imported or replayed back even if the erasure stops half way.
Archived tool results (ADK artifacts) go next, because finding them needs the user's session
ids; then memory (generation jobs first, so a generation running for the user writes nothing;
then memories, revisions, watermarks); then the sessions with their events, compaction
summaries and user state. Every step is idempotent and counted in the record as it ends, under
a request id derived from the record's: an erasure interrupted (a kill -9, a lost reply) is
finished by running it again, under the same record, and its counts are those of the rows
deleted by both runs; an erasure run again after it finished is a new one and counts zeros.
Last, each service's database sends the user's reads to the primary until its replica has
replayed the erasure (`Database.fence_replica`). The record holds the app, the counts and the
times: never who was erased (the user's tombstone names it, so a re-run finds it). The
operators' audit (`memory.service.audit`) gets one record of it, with who asked and the counts,
and loses the user's name from its earlier records.

It never decides what a service stores: each service erases its own tables.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from google.adk.artifacts.base_artifact_service import BaseArtifactService

from ..memory.scope import user_scope
from ..memory.service import PostgresMemoryService
from ..memory.service.audit import Principal
from ..sessions.service import PostgresSessionService


async def erase_artifacts(
    artifacts: BaseArtifactService, app_name: str, user_id: str, session_ids: list[str]
) -> int:
    """Delete every artifact of the user: each session's and the user-namespace ones (`user:`
    file names, shared by the user's sessions). Returns how many files were deleted."""
    deleted = 0
    for session_id in [*session_ids, None]:
        keys = await artifacts.list_artifact_keys(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        for filename in keys:
            if session_id is not None and filename.startswith("user:"):
                continue  # the user's own namespace: deleted once, in the last pass
            await artifacts.delete_artifact(
                app_name=app_name, user_id=user_id, filename=filename, session_id=session_id
            )
            deleted += 1
    return deleted


async def erase_user(
    *,
    app_name: str,
    user_id: str,
    session_service: PostgresSessionService,
    memory_service: PostgresMemoryService,
    artifact_service: BaseArtifactService | None = None,
    principal: Principal | None = None,
) -> dict[str, int]:
    """Erase one user of one app from sessions, memory and (when given) artifacts, tombstone
    what went, record the erasure (counts only) and return the counts per kind (see the module
    docstring). The operators' audit records it as `principal`'s (None: this process's), with
    the counts, in the transaction that finishes it."""
    start = datetime.now(timezone.utc)
    # Both services check the ids (listing the sessions is the session side's check) before
    # anything is deleted: an id one of them refuses must not leave a half-done erasure.
    user_scope(app_name, user_id)
    listed = await session_service.list_sessions(app_name=app_name, user_id=user_id)
    session_ids = [session.id for session in listed.sessions]
    erasure, recorded = await memory_service.begin_erasure(app_name, user_id, session_ids, start)
    counts: dict[str, int] = {}
    if artifact_service is not None:
        # Files deleted are gone: a re-run's count adds to what the record holds already.
        deleted = await erase_artifacts(artifact_service, app_name, user_id, session_ids)
        counts["artifacts"] = recorded.get("artifacts", 0) + deleted
        await memory_service.count_erasure(erasure, counts)
    memory = await memory_service.erase_user(app_name, user_id, erasure_id=erasure)
    await memory_service.count_erasure(erasure, memory)
    sessions = await session_service.erase_user(
        app_name=app_name, user_id=user_id, request_id=uuid.uuid5(erasure, "sessions")
    )
    await memory_service.count_erasure(erasure, sessions)
    await memory_service.finish_erasure(
        erasure, app_name=app_name, user_id=user_id, principal=principal
    )
    # Reads of the user go to the primary until each replica has replayed all of this.
    for database in (memory_service.database, session_service.database):
        await database.fence_replica(app_name, user_id)
    return counts | memory | sessions
