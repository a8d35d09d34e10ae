"""Compaction plugins: keep long conversations within budget without touching stored events.

One module a plugin; the stored session events are never modified or deleted by any of them.
"""
