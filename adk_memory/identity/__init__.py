"""Identity binding at the edge: who calls an HTTP front end, and which users they may act as.

Owns: the request's verified `Principal` and `current_principal`; the pluggable resolvers
(`iap`, `google`, `oidc` JWTs verified with google-auth against an issuer's cached keys, and a
callable for anything else); the `IdentityPolicy` (a principal acts as itself, operators as
anyone); and the `IdentityGuard` ASGI middleware that answers 401 / 403 before ADK runs, for
ADK's API server, the deploy app and the memory inspector alike. `add_identity_guard` puts the
guard the settings (`adk_memory.settings.identity_settings`) describe in front of an app.

It sits below `adk/` and above `settings/` and the root helpers: it never imports `memory/`,
`sessions/` or `adk/`, never reads the database, and never logs a token. Row-level security
(the database's own check of the same rule) is not here: see the README's "Privacy and safety".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._faces import lazy_face

if TYPE_CHECKING:
    from .guard import IdentityGuard, add_identity_guard
    from .keys import KeySet, jwk_to_pem
    from .policy import IdentityPolicy
    from .principal import PRINCIPAL_KEY, Principal, current_principal
    from .resolvers import CallableResolver, JwtResolver, Resolver, resolver_for
    from .routes import DEV_PATH, path_user

__getattr__, __dir__ = lazy_face(__name__, __file__, globals())

__all__ = [
    "DEV_PATH",
    "PRINCIPAL_KEY",
    "CallableResolver",
    "IdentityGuard",
    "IdentityPolicy",
    "JwtResolver",
    "KeySet",
    "Principal",
    "Resolver",
    "add_identity_guard",
    "current_principal",
    "jwk_to_pem",
    "path_user",
    "resolver_for",
]
