"""Who sent a request: the pluggable resolvers that turn its credentials into a `Principal`.

Owns: the `Resolver` protocol; `JwtResolver`, which verifies a signed JWT with google-auth
(`google.auth.jwt.decode`: signature, expiry and issue time with a small clock skew, audience)
against an issuer's cached keys (`keys.KeySet`), then its issuer and algorithm, from a header
of the request; the three kinds the settings name (`iap`: Cloud Run / IAP's
`x-goog-iap-jwt-assertion`, ES256; `google`: a Google ID token as `Authorization: Bearer`,
RS256; `oidc`: any OIDC or Firebase JWT from a configured issuer); and `CallableResolver` for
anything else. A resolver answers None when the request carries no credentials and raises
AuthenticationError when they do not verify; it never decides what a principal may do
(`policy` does) and never logs a token.
"""

from __future__ import annotations

import base64
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from google.auth import exceptions as auth_exceptions
from google.auth import jwt

from .._asgi import Scope
from ..errors import AuthenticationError, InputTypeError
from ..settings.identity import IdentitySettings
from .keys import KeySet
from .principal import Principal

CLOCK_SKEW_SECONDS = 30
"""Leeway on a token's `exp` and `iat` for clocks that disagree a little (IAP's documented 30 s)."""

IAP_HEADER = "x-goog-iap-jwt-assertion"
IAP_ISSUERS = ("https://cloud.google.com/iap",)
IAP_JWKS_URL = "https://www.gstatic.com/iap/verify/public_key-jwk"
GOOGLE_ISSUERS = ("https://accounts.google.com", "accounts.google.com")
GOOGLE_JWKS_URL = "https://www.googleapis.com/oauth2/v3/certs"
AUTHORIZATION = "authorization"


class Resolver(Protocol):
    """Turns a request's credentials into the caller's principal."""

    async def resolve(self, scope: Scope) -> Principal | None:
        """The verified principal; None without credentials; AuthenticationError when the
        credentials do not verify."""
        ...


def header(scope: Scope, name: str) -> str | None:
    """The request's header `name` (lower case), decoded; None when absent."""
    wanted = name.encode()
    for key, value in scope.get("headers", ()):
        if key.lower() == wanted:
            return bytes(value).decode("latin-1")
    return None


def bearer(scope: Scope) -> str | None:
    """The token of an `Authorization: Bearer TOKEN` header, or None."""
    value = header(scope, AUTHORIZATION)
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


class JwtResolver:
    """Verifies a JWT taken from the request by `token_of` (see the module docstring).

    Args:
      name: how principals it verifies were verified (`Principal.verified_by`).
      token_of: reads the token from the request's scope (None: no credentials).
      keys: the issuer's keys.
      audiences: the audiences a token must name one of (never empty).
      issuers: the issuers it may come from.
      algorithms: the signature algorithms accepted (`alg=none` never is).
    """

    def __init__(
        self,
        name: str,
        token_of: Callable[[Scope], str | None],
        keys: KeySet,
        audiences: Sequence[str],
        issuers: Sequence[str],
        algorithms: Sequence[str],
    ) -> None:
        if not audiences:
            raise ValueError("A JWT resolver needs an audience.")
        self.name = name
        self.token_of = token_of
        self.keys = keys
        self.audiences = list(audiences)
        self.issuers = frozenset(issuers)
        self.algorithms = frozenset(algorithms) - {"none"}

    async def resolve(self, scope: Scope) -> Principal | None:
        token = self.token_of(scope)
        if token is None:
            return None
        return Principal.from_claims(await self.verify(token), self.name)

    async def verify(self, token: str) -> Mapping[str, Any]:
        """The token's claims once its algorithm, signature, times, audience and issuer check
        out; AuthenticationError saying which did not."""
        header_fields = _header(token)
        algorithm = header_fields.get("alg")
        if algorithm not in self.algorithms:
            raise AuthenticationError(f"Tokens signed with {algorithm!r} are not accepted here.")
        kid = header_fields.get("kid")
        certs = await self.keys.key(kid if isinstance(kid, str) else None)
        try:
            claims = jwt.decode(
                token,
                certs=certs,
                audience=self.audiences,
                clock_skew_in_seconds=CLOCK_SKEW_SECONDS,
            )
        except (ValueError, TypeError, auth_exceptions.GoogleAuthError) as exc:
            raise AuthenticationError(f"The token does not verify: {_reason(exc)}") from exc
        if claims.get("iss") not in self.issuers:
            raise AuthenticationError("The token comes from an issuer not accepted here.")
        if not claims.get("sub"):
            raise AuthenticationError("The token names no subject.")
        return claims


def _header(token: str) -> Mapping[str, Any]:
    """A JWT's header, unverified: read only to choose the key and refuse an algorithm."""
    try:
        encoded = token.split(".", 1)[0]
        fields = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except ValueError as exc:  # binascii.Error and JSONDecodeError are ValueErrors
        raise AuthenticationError("The credentials are not a JWT.") from exc
    if not isinstance(fields, dict):
        raise AuthenticationError("The credentials are not a JWT.")
    return fields


def _reason(error: Exception) -> str:
    """google-auth's reason, without the token's own values it quotes (an audience, times)."""
    text = str(error)
    for kind in ("expired", "too early", "audience", "signature", "Certificate", "claim"):
        if kind in text:
            return {
                "expired": "expired.",
                "too early": "issued in the future.",
                "audience": "made for another audience.",
                "signature": "bad signature.",
                "Certificate": "unknown key.",
                "claim": "a required claim is missing.",
            }[kind]
    return "malformed."


def resolver_for(settings: IdentitySettings, *, min_refresh: float = 60.0) -> Resolver | None:
    """The resolver the settings name (None for `none`), on their keys' URL or the mode's own."""
    if settings.mode == "none":
        return None
    defaults = {
        "iap": (IAP_JWKS_URL, IAP_ISSUERS, ("ES256",), lambda s: header(s, IAP_HEADER)),
        "google": (GOOGLE_JWKS_URL, GOOGLE_ISSUERS, ("RS256",), bearer),
        "oidc": ("", (), ("RS256", "ES256"), bearer),
    }
    url, issuers, algorithms, token_of = defaults[settings.mode]
    return JwtResolver(
        settings.mode,
        token_of,
        KeySet(settings.jwks_url or url, min_refresh=min_refresh),
        settings.audiences,
        settings.issuers or issuers,
        algorithms,
    )


PrincipalOf = Callable[[Mapping[str, str]], "Principal | Awaitable[Principal | None] | None"]


class CallableResolver:
    """A resolver from any callable: it gets the request's headers (lower-case names) and
    returns the verified `Principal`, None without credentials, or raises AuthenticationError;
    sync or async. For a front of one's own (mTLS headers set by a proxy, an API key table)."""

    def __init__(self, principal_of: PrincipalOf) -> None:
        self.principal_of = principal_of

    async def resolve(self, scope: Scope) -> Principal | None:
        headers = {
            bytes(k).decode("latin-1").lower(): bytes(v).decode("latin-1")
            for k, v in scope.get("headers", ())
        }
        found = self.principal_of(headers)
        if inspect.isawaitable(found):
            found = await found
        if found is not None and not isinstance(found, Principal):
            raise InputTypeError("A resolver callable must return a Principal or None.")
        return found
