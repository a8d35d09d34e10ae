"""What a verified principal may do: the users it may act as, and whether it is an operator.

Owns: `IdentityPolicy`, the one rule the guard applies: a principal acts as the user id its
`user_claim` holds (itself, by default its verified e-mail), and an operator (any one of the
`operators` claim/value pairs matches) may act as any user and reach the operators' pages. It
never reads a request and never verifies anything (`resolvers` did).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..settings.identity import DEFAULT_USER_CLAIM, IdentitySettings
from .principal import Principal


@dataclass(frozen=True)
class IdentityPolicy:
    """Maps principals to users (see the module docstring).

    Attributes:
      user_claim: the claim that is the principal's own user id (`email`, `sub`, ...). An
        `email` whose `email_verified` claim is false names nobody.
      operators: (claim, value) pairs; a principal whose claim equals the value (or, for a list
        claim such as `groups`, holds it) is an operator.
    """

    user_claim: str = DEFAULT_USER_CLAIM
    operators: Sequence[tuple[str, str]] = ()

    @classmethod
    def from_settings(cls, settings: IdentitySettings) -> IdentityPolicy:
        return cls(user_claim=settings.user_claim, operators=settings.operators)

    def own_user(self, principal: Principal) -> str | None:
        """The user id the principal is, or None when its credentials carry none."""
        value = principal.claims.get(self.user_claim)
        if self.user_claim == "email" and principal.claims.get("email_verified") is False:
            return None
        return value if isinstance(value, str) and value else None

    def is_operator(self, principal: Principal) -> bool:
        """Whether one of the operator pairs matches the principal's claims."""
        for claim, wanted in self.operators:
            value = principal.claims.get(claim)
            if value == wanted or (isinstance(value, list | tuple) and wanted in value):
                return True
        return False

    def may_act_as(self, principal: Principal, user_id: str) -> bool:
        """Whether the principal may read and write `user_id`'s data."""
        return self.own_user(principal) == user_id or self.is_operator(principal)
