"""What `adk-memory web` / `api_server` say and do as they start, before ADK serves.

Owns: the WARNING when the agents' Gemini models have no credentials (naming `--demo`), the
banner with the dev UI's and the memory inspector's addresses, and the keyless demo's start:
writing the demo user (`adk_memory.adk.demo.seed_demo`) into the command's database. It never
starts ADK's server and reads the database settings only from the environment the command
exported (`server.export_settings`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import click

from ..adk.demo import DEMO_APP, DEMO_USER, DemoLlm, seed_demo
from ..adk.inspector import DEV_UI_PATH, INSPECTOR_PATH, InspectorMode
from ..adk.stack import configure
from ..env import (
    GEMINI_CREDENTIAL_VARIABLES,
    application_default_credentials,
    environment,
    gemini_credentials,
)
from .failures import user_errors

__all__ = ["banner", "credentials_warning", "seed_demo_user", "starting"]


def credentials_warning(environ: Mapping[str, str]) -> str | None:
    """What to say at start-up when the agents' Gemini models cannot be called: no API key and
    no Vertex AI settings (every turn would fail with "No API key was provided"), or Vertex AI
    without Application Default Credentials on this machine. None when they look usable."""
    if not gemini_credentials(environ):
        return (
            "WARNING: no Gemini credentials found (GOOGLE_API_KEY or GEMINI_API_KEY, or "
            "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and Application Default "
            "Credentials): every agent turn on a Gemini model will fail. To try the samples "
            "without a key, run: adk-memory web samples --demo"
        )
    keys = GEMINI_CREDENTIAL_VARIABLES[:2]  # the API keys; else it is Vertex AI
    if not any(environ.get(key) for key in keys) and not application_default_credentials(environ):
        return (
            "WARNING: Vertex AI is on but no Application Default Credentials file was found "
            "(gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS); off "
            "Google Cloud, agent turns will fail. Without credentials: --demo."
        )
    return None


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
        warning = credentials_warning(environment())
        if warning:
            click.echo(warning, err=True)
    click.echo(banner(name, params, inspector, demo), err=True)
