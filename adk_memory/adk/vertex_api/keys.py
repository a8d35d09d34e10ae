"""Resource ids that carry their owner: a memory's scope, a session's user.

Owns: the one codec of this surface's resource ids. Memory Bank names a memory and Agent
Engine a session by id alone, while adk-memory reads a memory by id *and* scope and a session
by app, user *and* id (no statement reaches a row without its owner). So the id handed to a
client is `<hex of the owner>-<our id>`: opaque to the client, and reading it back names the
owner the access check then applies to (a forged owner finds nothing: the store still
matches id and owner together). Hex keeps the id within ADK's session-id alphabet
(`[A-Za-z0-9_-]`). It never calls a service.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ...errors import NotFoundError

_SEPARATOR = "-"


def encode(owner: str, local_id: str) -> str:
    """The resource id of `local_id` owned by `owner`."""
    return owner.encode().hex() + _SEPARATOR + local_id


def decode(resource_id: str) -> tuple[str, str] | None:
    """(owner, local id) of an id `encode` made; None for an id it did not make (a bare id)."""
    owner_hex, separator, local_id = resource_id.partition(_SEPARATOR)
    if not separator or not local_id or not owner_hex:
        return None
    try:
        owner = bytes.fromhex(owner_hex).decode()
    except ValueError:  # not hex, or not UTF-8
        return None
    return (owner, local_id) if owner.isprintable() else None  # a client's own id, by chance hex


def memory_id(scope: Mapping[str, str], local_id: str) -> str:
    """A memory's resource id: its scope (canonical JSON) and its id."""
    return encode(json.dumps(dict(scope), sort_keys=True, separators=(",", ":")), local_id)


def memory_key(resource_id: str) -> tuple[dict[str, str], str]:
    """(scope, memory id) of a memory's resource id; `NotFoundError` for any other id."""
    decoded = decode(resource_id)
    if decoded is not None:
        try:
            scope = json.loads(decoded[0])
        except ValueError:
            scope = None
        if isinstance(scope, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in scope.items()
        ):
            return scope, decoded[1]
    raise NotFoundError(f"No memory {resource_id!r}.")
