"""What `adk-memory web` / `api_server` say and do as they start, before ADK serves.

Owns: printing the WARNING when the agents' Gemini models have no credentials
(`settings.variables.credentials_warning`, naming `--demo`), the banner with the dev UI's and the
memory inspector's addresses, and the keyless demo's start: writing the demo user
(`adk_memory.adk.demo.seed_demo`) into the command's database. It never starts ADK's server
and reads the database settings only from the environment the command exported
(`server.export_settings`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import click

from ..adk.demo import DEMO_APP, DEMO_USER, DemoLlm, seed_demo
from ..adk.inspector import DEV_UI_PATH, INSPECTOR_PATH, InspectorMode
from ..adk.stack import configure
from ..settings.variables import credentials_warning
from .failures import user_errors

__all__ = ["banner", "seed_demo_user", "starting"]


def banner(name: str, params: Mapping[str, Any], inspector: InspectorMode, demo: bool) -> str:
    """Where to look, printed as the server starts: the dev UI (`web`), the memory inspector
    (unless off) and, in the demo, the seeded user's page."""
    host = params.get("host") or "127.0.0.1"
    root = f"http://{'[' + host + ']' if ':' in host else host}:{params.get('port')}"
    root += (params.get("url_prefix") or "").rstrip("/")
    lines = []
    if name == "web":
        lines.append(f"ADK dev UI:       {root}{DEV_UI_PATH}")
    if inspector != "off":
        lines.append(f"Memory inspector: {root}{INSPECTOR_PATH}/ ({inspector})")
        if demo:
            where = f"{root}{INSPECTOR_PATH}/user?app={DEMO_APP}&user={DEMO_USER}"
            lines.append(f"Demo user:        {where}")
    if demo:
        lines.append(
            "Demo: the samples run on the keyless demo model (no Gemini call). Tell an agent "
            "about yourself, say bye, then look in the inspector."
        )
    return "\n".join(lines)


def seed_demo_user() -> None:
    """Write the demo user (`adk_memory.adk.demo.seed_demo`) into the command's database, read
    from the settings `export_settings` put into the environment, with the tables created."""

    async def seed() -> None:
        stack = configure(
            model=DemoLlm(), run_worker=False, context=None, triggers=None, auto_migrate=True
        )
        async with stack:
            await seed_demo(stack.session_service, stack.memory_service)

    with user_errors():
        asyncio.run(seed())


def starting(name: str, params: Mapping[str, Any], inspector: InspectorMode, demo: bool) -> None:
    """Everything said and done before ADK serves: the demo user written (`demo`), else the
    credentials warning when it applies; then the banner. `params` are ADK's parsed options."""
    if demo:
        click.echo(
            "Demo: writing the demo user (one of its generations fails on purpose: the dead "
            "letter the inspector shows).",
            err=True,
        )
        seed_demo_user()
    else:
        warning = credentials_warning()
        if warning:
            click.echo(warning, err=True)
    click.echo(banner(name, params, inspector, demo), err=True)
