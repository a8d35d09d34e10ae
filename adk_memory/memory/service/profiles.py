"""Structured profiles, read: Memory Bank's RetrieveProfiles, and each field's history.

Owns: the memory service's profile reads (`PostgresMemoryService.profiles`:
`retrieve_profiles`, in ADK's form or with a scope, and `list_profile_revisions`), and the
public types they return (`MemoryProfile` has the attributes of Memory Bank's, which ADK's
Vertex service returns). A lookup is one indexed query on the scope's key: no search, no
embedding, no model. It writes a profile only for `import_profile` (profiles kept elsewhere,
Memory Bank's on import, checked against the configured schema); generation writes them
(`generator.py`), purge, erasure and the TTL sweep forget them (`privacy.py`). It never reads
or writes another scope's fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...config import SCHEMA_ID_PATTERN, MemoryBankConfig
from ...errors import InputValidationError
from ...telemetry import traced
from ..checks import scope_of
from ..generation.profiles import field_error
from ..models import MemoryAction, SourceType
from ..policy.screen import FactScreen
from ..scope import scope_key, validate_scope
from ..store.profiles import ProfileStore
from .core import Gate, Readiness

_FIELD_PATTERN = r"[^\x00]{1,256}"
"""A field name: a JSON schema property name, any text (bounded)."""


class MemoryProfile(BaseModel):
    """One structured profile of a scope: its schema's id and its fields' current values, as
    Memory Bank's `MemoryProfile` (ADK's load-profiles tool reads `.profile`)."""

    model_config = ConfigDict(frozen=True)

    schema_id: str
    profile: dict[str, Any] = Field(default_factory=dict)


class ProfileRevision(BaseModel):
    """One change of a profile field: what it was set to (None when cleared) and why."""

    model_config = ConfigDict(frozen=True)

    id: str
    schema_id: str
    field: str
    action: MemoryAction
    value: Any = None
    labels: dict[str, str] = Field(default_factory=dict)
    source_type: SourceType | None = None
    source_session_id: str | None = None
    create_time: datetime


def _check_name(kind: str, value: object, pattern: str) -> str:
    if not isinstance(value, str) or re.fullmatch(pattern, value) is None:
        raise InputValidationError(f"{kind} {value!r} is not valid.")
    return value


class Profiles:
    """The structured-profile reads (`PostgresMemoryService.profiles`). Built with the profile
    store and readiness."""

    def __init__(
        self,
        profiles: ProfileStore,
        ready: Readiness,
        gate: Gate,
        screen: FactScreen,
        config: MemoryBankConfig,
    ) -> None:
        self._profiles = profiles
        self._ready = ready
        self._gate = gate
        self._screen = screen
        self._config = config

    @traced("memory.import_profile")
    async def import_profile(
        self,
        scope: Mapping[str, str],
        schema_id: str,
        values: Mapping[str, Any],
        *,
        labels: Mapping[str, str] | None = None,
    ) -> int:
        """Set a scope's profile fields kept elsewhere (Memory Bank's structured profile
        memories, on `import vertex`), each with a revision labelled `labels`; a field already
        holding its value is left alone, so importing again changes nothing. Values are
        redacted as facts are (field names, the schema's, are not). When the service's
        configuration has the schema for this scope, every field must be one of its properties
        and valid against it (`InputValidationError` otherwise, nothing written); without it
        they are kept as given. Returns how many fields changed. A user who opted out is
        refused (`OptedOutError`)."""
        checked = validate_scope(scope)
        schema_id = _check_name("schema_id", schema_id, SCHEMA_ID_PATTERN)
        if not isinstance(values, Mapping):
            raise InputValidationError("A profile's values must be a mapping of its fields.")
        fields = {_check_name("field", f, _FIELD_PATTERN): v for f, v in values.items()}
        schema = {s.id: s for s in self._config.structured_for(frozenset(checked))}.get(schema_id)
        for field, value in fields.items():
            if schema is None:
                break
            error = (
                field_error(schema.field_schema(field), value)
                if field in schema.fields
                else "not a property of the schema"
            )
            if error is not None:
                raise InputValidationError(f"Profile {schema_id!r} field {field!r}: {error}.")
        if not fields:
            return 0
        await self._gate.refuse_opted_out(checked)
        await self._ready()
        return await self._profiles.set_fields(
            scope_key(checked),
            dict(checked),
            schema_id,
            {name: self._screen.json(value) for name, value in fields.items()},
            labels={str(k): str(v) for k, v in (labels or {}).items()},
            revision_ttl=self._config.ttl.revision_seconds(),
        )

    @traced("memory.retrieve_profiles")
    async def retrieve_profiles(
        self,
        *,
        app_name: str | None = None,
        user_id: str | None = None,
        scope: Mapping[str, str] | None = None,
    ) -> list[MemoryProfile]:
        """The structured profiles of the user (`app_name`, `user_id`: the call and return shape
        of ADK's `VertexAiMemoryBankService.retrieve_profiles`) or of a `scope`: one
        `MemoryProfile` (schema id, field values) per schema with a field set, by schema id.
        One lookup by the scope's key, no search; expired fields are left out. Generation fills
        them from `MemoryBankConfig.structured_memory_configs`."""
        key = scope_key(scope_of(app_name, user_id, scope))
        await self._ready()
        stored = await self._profiles.profiles(key)
        return [MemoryProfile(schema_id=s, profile=fields) for s, fields in stored.items()]

    @traced("memory.list_profile_revisions")
    async def list_profile_revisions(
        self, scope: Mapping[str, str], schema_id: str, field: str
    ) -> list[ProfileRevision]:
        """A profile field's history in `scope`, oldest first: every value generation set it
        to (CREATED, UPDATED) and its clearing or expiry (DELETED), within `revision_ttl`."""
        checked = validate_scope(scope)
        schema_id = _check_name("schema_id", schema_id, SCHEMA_ID_PATTERN)
        field = _check_name("field", field, _FIELD_PATTERN)
        await self._ready()
        revisions = await self._profiles.revisions(scope_key(checked), schema_id, field)
        return [
            ProfileRevision(
                id=r.id,
                schema_id=schema_id,
                field=field,
                action=r.action,
                value=r.value,
                labels=r.labels,
                source_type=r.source_type,
                source_session_id=r.source_session_id,
                create_time=r.create_time,
            )
            for r in revisions
        ]
