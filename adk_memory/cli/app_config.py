"""`adk-memory config push` and `adk-memory config show`: an app's shared memory configuration.

Owns: the command-line side of an app's stored configuration: reading a file (JSON, or YAML for
any other suffix) in `AppMemoryConfig`'s shape (`MemoryBankConfig`'s fields, plus the guard and
the redactor by name) and printing a stored version. Validation, versioning and storage are the
memory service's (`push_config`, `app_config`). It never edits or deletes a stored version:
every push that changes something is a new version, and history is kept.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import click
import yaml

from ..errors import InputValidationError
from ..memory.app_config import AppConfigVersion
from .options import Target, database_options, run, user_errors
from .output import echo_json


@click.group("config")
def config() -> None:
    """An app's memory configuration, shared by its agents and every worker.

    Each generation job runs with the version of its app's configuration it was enqueued with:
    the one an agent that configures memory in code published, else the latest pushed here;
    an app with none stored is generated with each worker's own.
    """


def _read(path: Path) -> Any:
    """The document in `path`: JSON for a `.json` file, else YAML (which reads JSON too)."""
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        raise InputValidationError(f"Cannot read {path}: {' '.join(str(exc).split())}") from exc


async def _push(target: Target, app_name: str, document: Any) -> tuple[int, bool]:
    async with target.memory() as service:
        return await service.push_config(app_name, document)


@config.command()
@database_options
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--app", "app_name", required=True, help="The app (ADK's app name).")
def push(target: Target, file: Path, app_name: str) -> None:
    """Store FILE as the app's memory configuration.

    FILE (JSON, or YAML) holds MemoryBankConfig's fields (customization_configs with topics and
    few-shot examples, ttl, generation, retrieval) and optionally `guard` (default|none) and
    `redact` (pii|none). A file equal to the latest version changes nothing and prints that
    version; any other becomes the next version. Jobs already queued keep the version they were
    enqueued with.
    """
    with user_errors():
        document = _read(file)
    version, created = run(_push(target, app_name, document))
    click.echo(f"{app_name}: version {version}" + ("" if created else " (unchanged)"))


async def _show(target: Target, app_name: str, version: int | None) -> AppConfigVersion | None:
    async with target.memory() as service:
        return await service.app_config(app_name, version)


def _document(stored: AppConfigVersion) -> dict[str, Any]:
    created: datetime = stored.create_time
    return {
        "app_name": stored.app_name,
        "version": stored.version,
        "create_time": created.isoformat(),
        "config": stored.config.model_dump(mode="json"),
    }


@config.command()
@database_options
@click.option("--app", "app_name", required=True, help="The app (ADK's app name).")
@click.option("--version", type=click.IntRange(1), help="An earlier version (default: the latest).")
@click.option("--json", "as_json", is_flag=True, help="One JSON document instead of YAML.")
def show(target: Target, app_name: str, version: int | None, as_json: bool) -> None:
    """Print the app's memory configuration: its version, when it was stored, and the
    configuration itself (the `config` part is what `push` takes)."""
    stored = run(_show(target, app_name, version))
    if stored is None:
        which = f"version {version} of " if version is not None else ""
        raise click.ClickException(
            f"No {which}memory configuration is stored for app {app_name!r}: its generations "
            "use each worker's own."
        )
    if as_json:
        echo_json(_document(stored))
    else:
        click.echo(yaml.safe_dump(_document(stored), sort_keys=False, allow_unicode=True), nl=False)
