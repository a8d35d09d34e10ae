"""Identity binding's settings: which credentials an HTTP front end verifies, and who may act as
whom, resolved once into typed, frozen settings.

Owns: `IdentitySettings` and `identity_settings`, which the deploy app and `adk-memory web` /
`api_server` resolve the `ADK_MEMORY_AUTH*` variables (or their command-line options) through,
so both check them alike and a missing audience fails at start-up, not on the first request.
It never fetches a key, verifies a token or builds a resolver (`adk_memory.identity` does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from ..errors import InputValidationError
from .variables import (
    AUTH_AUDIENCE_ENV,
    AUTH_ENV,
    AUTH_ISSUER_ENV,
    AUTH_JWKS_URL_ENV,
    AUTH_OPERATORS_ENV,
    AUTH_USER_CLAIM_ENV,
    chosen,
)

__all__ = ["AUTH_MODES", "AuthMode", "IdentitySettings", "identity_settings"]

AuthMode = Literal["none", "iap", "google", "oidc"]
"""How a front end learns who calls: not at all, IAP's signed header, a Google ID token, or an
OIDC / Firebase JWT from a configured issuer."""

AUTH_MODES: tuple[AuthMode, ...] = get_args(AuthMode)

DEFAULT_USER_CLAIM = "email"


@dataclass(frozen=True)
class IdentitySettings:
    """What a front end verifies. `audiences`, `issuers` and `jwks_url` empty/None mean the
    mode's own (Google's issuers and keys for `iap` and `google`); `operators` are
    (claim, value) pairs, any one of which makes a principal an operator."""

    mode: AuthMode = "none"
    audiences: tuple[str, ...] = ()
    issuers: tuple[str, ...] = ()
    jwks_url: str | None = None
    user_claim: str = DEFAULT_USER_CLAIM
    operators: tuple[tuple[str, str], ...] = ()


def _listed(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _mode(text: str) -> AuthMode:
    mode = text.strip().lower()
    if mode not in AUTH_MODES:
        raise InputValidationError(f"expected one of {', '.join(AUTH_MODES)}")
    return mode


def _operators(text: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for part in _listed(text):
        claim, equals, value = part.partition("=")
        if not equals or not claim.strip() or not value.strip():
            raise InputValidationError(f"expected CLAIM=VALUE, not {part!r}")
        pairs.append((claim.strip(), value.strip()))
    return tuple(pairs)


def identity_settings(
    environ: Mapping[str, str],
    *,
    mode: str | None = None,
    audience: str | None = None,
    issuer: str | None = None,
    jwks_url: str | None = None,
    user_claim: str | None = None,
    operators: str | None = None,
    default_mode: AuthMode = "none",
) -> IdentitySettings:
    """The settings from the arguments (a command's options), else the `ADK_MEMORY_AUTH*`
    variables, else the defaults (`default_mode`: `none` for the commands, `iap` for the deploy).
    Refused (InputValidationError): an unknown mode, a mode that verifies tokens without an
    audience (any token of the issuer's would do), `oidc` without its issuer and keys."""
    given_mode = _mode(mode) if mode else None
    chosen_mode: AuthMode = chosen(given_mode, environ, AUTH_ENV, _mode) or default_mode
    settings = IdentitySettings(
        mode=chosen_mode,
        audiences=_listed(chosen(audience, environ, AUTH_AUDIENCE_ENV, str) or ""),
        issuers=_listed(chosen(issuer, environ, AUTH_ISSUER_ENV, str) or ""),
        jwks_url=chosen(jwks_url, environ, AUTH_JWKS_URL_ENV, str),
        user_claim=chosen(user_claim, environ, AUTH_USER_CLAIM_ENV, str) or DEFAULT_USER_CLAIM,
        operators=chosen(
            _operators(operators) if operators is not None else None,
            environ,
            AUTH_OPERATORS_ENV,
            _operators,
        )
        or (),
    )
    if settings.mode == "none":
        return settings
    if not settings.audiences:
        raise InputValidationError(
            f"{AUTH_ENV}={settings.mode} needs an audience ({AUTH_AUDIENCE_ENV} or "
            f"--auth-audience): without one, a token the issuer made for any other service "
            f"would do. To serve without identity binding (local runs only): {AUTH_ENV}=none."
        )
    if settings.mode == "oidc" and not (settings.issuers and settings.jwks_url):
        raise InputValidationError(
            f"{AUTH_ENV}=oidc needs the issuer ({AUTH_ISSUER_ENV}) and its keys' URL "
            f"({AUTH_JWKS_URL_ENV})."
        )
    return settings
