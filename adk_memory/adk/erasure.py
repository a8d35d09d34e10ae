"""Erasing one user everywhere: the right to be forgotten as one call.

Owns: the order of an erasure and its record. Archived tool results (ADK artifacts) go first,
because finding them needs the user's session ids; then memory (generation jobs first, so a
generation running for the user writes nothing; then memories, revisions, watermarks); then the
sessions with their events, compaction summaries and user state. Every step is idempotent, so an
erasure that was interrupted is finished by running it again, and a second run counts zeros.
The record it leaves holds the app, the counts and the times: never who was erased.

It never decides what a service stores: each service erases its own tables.
"""

from __future__ import annotations

from datetime import datetime, timezone

from google.adk.artifacts.base_artifact_service import BaseArtifactService

from ..memory.scope import user_scope
from ..memory.service import PostgresMemoryService
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
) -> dict[str, int]:
    """Erase one user of one app from sessions, memory and (when given) artifacts, record the
    erasure (counts only) and return the counts per kind (see the module docstring)."""
    start = datetime.now(timezone.utc)
    # Both services check the ids (listing the sessions is the session side's check) before
    # anything is deleted: an id one of them refuses must not leave a half-done erasure.
    user_scope(app_name, user_id)
    listed = await session_service.list_sessions(app_name=app_name, user_id=user_id)
    counts: dict[str, int] = {}
    if artifact_service is not None:
        session_ids = [session.id for session in listed.sessions]
        counts["artifacts"] = await erase_artifacts(
            artifact_service, app_name, user_id, session_ids
        )
    counts.update(await memory_service.erase_user(app_name, user_id))
    counts.update(await session_service.erase_user(app_name=app_name, user_id=user_id))
    await memory_service.record_erasure(app_name, counts, start)
    return counts
