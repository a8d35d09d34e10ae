"""Resource names of the Vertex AI REST surface, and the long-running operations it answers.

Owns: the URL prefix of a reasoning engine (`/v1beta1/projects/{p}/locations/{l}/
reasoningEngines/{engine}`), the engine's app name (the engine id, or the name an `engines`
mapping gives it), and operation names: an operation id is an opaque token carrying what a
later `GET` of it needs (the generation job's id and the scope it was for: our operations are
read by id *and* scope, so one scope's caller never reads another's). A token is not a
credential: reading it back still passes the scope check. It never calls a service.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import NotFoundError

API_VERSION = "v1beta1"
ENGINE_PATH = "/projects/{project}/locations/{location}/reasoningEngines/{engine}"


@dataclass(frozen=True)
class Engine:
    """One reasoning engine of a request: its resource name and the app it stands for."""

    name: str
    app_name: str

    @classmethod
    def of(cls, project: str, location: str, engine: str, engines: Mapping[str, str]) -> Engine:
        name = f"projects/{project}/locations/{location}/reasoningEngines/{engine}"
        return cls(name=name, app_name=engines.get(engine, engine))


def operation_name(parent: str, kind: str, scope: Mapping[str, str], job: str = "") -> str:
    """A new operation's name under `parent` (the engine: its one operations route)."""
    payload = {"k": kind, "s": dict(scope), "j": job or uuid.uuid4().hex}
    token = base64.urlsafe_b64encode(json.dumps(payload, sort_keys=True).encode()).decode()
    return f"{parent}/operations/{token.rstrip('=')}"


@dataclass(frozen=True)
class Operation:
    """What an operation token holds."""

    kind: str
    scope: dict[str, str]
    job: str


def read_operation(token: str) -> Operation:
    """The operation a token names; `NotFoundError` for one this server never handed out."""
    try:
        raw: Any = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        scope = raw["s"]
        if not isinstance(scope, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in scope.items()
        ):
            raise ValueError("scope")
        return Operation(kind=str(raw["k"]), scope=scope, job=str(raw["j"]))
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise NotFoundError(f"No operation {token!r}.") from exc


def done(name: str, response: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A finished operation, its result inline (the clients then poll nothing)."""
    out: dict[str, Any] = {"name": name, "done": True}
    if response is not None:
        out["response"] = dict(response)
    return out
