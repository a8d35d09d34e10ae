"""Who is calling: the verified principal of one HTTP request.

Owns: `Principal` (frozen: the subject, e-mail, groups and claims a resolver verified, and how),
where the identity guard keeps it in the ASGI scope, and `current_principal`, the one way code
behind the guard (the inspector's audit, a route of one's own) reads it. It never verifies
anything: a `Principal` exists only once a resolver has.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

PRINCIPAL_KEY = "adk_memory.principal"
"""The ASGI scope's key the guard stores the request's `Principal` under."""


@dataclass(frozen=True)
class Principal:
    """A caller whose credentials verified.

    Attributes:
      subject: the issuer's stable id of the caller (`sub`).
      email: the caller's e-mail, when the credentials carry one.
      groups: the groups the credentials name (`groups` claim), if any.
      claims: every verified claim, read-only (the policy maps one to a user id).
      verified_by: how: `iap`, `google`, `oidc`, or a callable resolver's name.
    """

    subject: str
    email: str | None = None
    groups: tuple[str, ...] = ()
    claims: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    verified_by: str = ""

    def __post_init__(self) -> None:
        # Frozen all the way down: nothing behind the guard can change what was verified.
        object.__setattr__(self, "claims", MappingProxyType(dict(self.claims)))

    @classmethod
    def from_claims(cls, claims: Mapping[str, Any], verified_by: str) -> Principal:
        """The principal a verified token's claims describe."""
        groups = claims.get("groups", ())
        return cls(
            subject=str(claims.get("sub", "")),
            email=claims.get("email") if isinstance(claims.get("email"), str) else None,
            groups=(groups,) if isinstance(groups, str) else tuple(map(str, groups or ())),
            claims=claims,
            verified_by=verified_by,
        )


class _HasScope(Protocol):
    @property
    def scope(self) -> MutableMapping[str, Any]: ...


def current_principal(request_or_scope: _HasScope | MutableMapping[str, Any]) -> Principal | None:
    """The principal the identity guard verified for this request (a Starlette/FastAPI
    `Request` or `WebSocket`, or its ASGI scope); None when the app serves without identity
    binding (`ADK_MEMORY_AUTH=none`) or the route needs none (`/health`)."""
    if isinstance(request_or_scope, MutableMapping):
        scope = request_or_scope
    else:
        scope = request_or_scope.scope
    principal = scope.get(PRINCIPAL_KEY)
    return principal if isinstance(principal, Principal) else None
