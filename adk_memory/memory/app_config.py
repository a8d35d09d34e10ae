"""Each app's memory configuration, stored once and shared by every process that serves the app.

Owns: what a stored version is (`AppConfigVersion`), validation on the way in (ADK's
`InputValidationError`) and the wording of a stored document's problems (`problems`, which
`store.app_configs` raises as `AppConfigError`: never a raw pydantic error). What its guard
and redactor names mean is `policy.names`'s; the `memory_app_configs` table's statements are
`store.app_configs`'s. It never touches SQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ..config import AppMemoryConfig, MemoryBankConfig
from ..errors import AppConfigError as AppConfigError  # its home before errors.py
from ..errors import InputValidationError
from .scope import validate_scope

UNSHARED = AppMemoryConfig(guard="default", redact="none")
"""What a service with no configuration of its own would share: the defaults, which it does not
publish (its jobs name the app's latest stored version instead)."""


@dataclass(frozen=True)
class AppConfigVersion:
    """One stored version of an app's memory configuration."""

    app_name: str
    version: int
    config: AppMemoryConfig
    create_time: datetime


def check_app_name(app_name: object) -> str:
    """An app name as a scope holds it (the jobs of the app carry it as `app_name`)."""
    return validate_scope({"app_name": app_name})["app_name"]


def problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'config'}: {error['msg']}"
        for error in exc.errors()[:5]
    )


def parse_memory_config(document: Mapping[str, Any]) -> MemoryBankConfig:
    """A `MemoryBankConfig` from a mapping of its fields or of Memory Bank's own configuration
    JSON (`memory_bank_json`); `InputValidationError` naming each problem's field otherwise
    (`UnsupportedConfigError` for a Memory Bank field adk-memory does not implement)."""
    try:
        return MemoryBankConfig.model_validate(dict(document))
    except ValidationError as exc:
        raise InputValidationError(f"Invalid memory configuration: {problems(exc)}.") from exc


def parse_app_config(document: Any) -> AppMemoryConfig:
    """A configuration document (`AppMemoryConfig`'s shape, e.g. a pushed file's) validated;
    `InputValidationError` naming each problem's field otherwise."""
    if isinstance(document, AppMemoryConfig):
        return document
    if not isinstance(document, dict):
        raise InputValidationError(
            f"A memory configuration is a mapping of MemoryBankConfig's fields, got "
            f"{type(document).__name__}."
        )
    try:
        return AppMemoryConfig.model_validate(document)
    except ValidationError as exc:
        raise InputValidationError(f"Invalid memory configuration: {problems(exc)}.") from exc
