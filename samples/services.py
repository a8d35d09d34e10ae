"""Loaded by `adk web` / `adk api_server` from this agents directory before they build services:
registers adk-memory's URI schemes (`adk-memory://`, `postgresql://`), so
`--session_service_uri` / `--memory_service_uri` can point at PostgreSQL."""

from adk_memory.adk.services import register

register()
