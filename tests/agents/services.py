"""Loaded by ADK from the agents directory before it builds services: adk-memory's schemes."""

from adk_memory.adk.services import register

register()
