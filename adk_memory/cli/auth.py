"""`adk-memory web` / `api_server`'s identity binding: the `--auth*` options, and what the
command says or refuses when it serves beyond localhost.

Owns: the options (each falling back to its `ADK_MEMORY_AUTH*` variable, resolved by
`adk_memory.settings.identity_settings`, so a missing audience is one line at start-up), and the
rule for a server reachable from other machines: without `--auth`, a WARNING that any caller may
act as any user, and the memory inspector (every user's memories) refused unless it is off.
It never verifies a token (`adk_memory.identity` does, in the guard the server mounts).
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable
from typing import Any

import click

from ..adk.inspector import INSPECTOR_PATH, InspectorMode
from ..settings.identity import AUTH_MODES, IdentitySettings, identity_settings
from ..settings.variables import (
    AUTH_AUDIENCE_ENV,
    AUTH_ENV,
    AUTH_ISSUER_ENV,
    AUTH_JWKS_URL_ENV,
    AUTH_OPERATORS_ENV,
    AUTH_USER_CLAIM_ENV,
    environment,
)
from .failures import user_errors

__all__ = ["check_exposure", "identity_options", "is_local"]

_OPTIONS = (
    ("--auth", "mode", AUTH_ENV, "Who calls: iap, google, oidc or none (the default)."),
    ("--auth-audience", "audience", AUTH_AUDIENCE_ENV, "Audiences a token must be for."),
    ("--auth-issuer", "issuer", AUTH_ISSUER_ENV, "Issuers accepted (required for oidc)."),
    ("--auth-jwks-url", "jwks_url", AUTH_JWKS_URL_ENV, "The issuer's keys (required for oidc)."),
    ("--auth-user-claim", "user_claim", AUTH_USER_CLAIM_ENV, "The claim that is the user id."),
    ("--auth-operators", "operators", AUTH_OPERATORS_ENV, "CLAIM=VALUE,... of operators."),
)


def identity_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the `--auth*` options to `command`, which gets them resolved as `identity`
    (`IdentitySettings`)."""

    @functools.wraps(command)
    def resolved(*args: Any, **kwargs: Any) -> Any:
        given = {f"auth_{name}": kwargs.pop(f"auth_{name}") for _, name, _, _ in _OPTIONS}
        with user_errors():
            kwargs["identity"] = identity_settings(
                environment(), **{name.removeprefix("auth_"): v for name, v in given.items()}
            )
        return command(*args, **kwargs)

    for flag, name, variable, text in reversed(_OPTIONS):
        choice = click.Choice(AUTH_MODES) if name == "mode" else None
        resolved = click.option(flag, f"auth_{name}", type=choice, help=f"{text} (${variable})")(
            resolved
        )
    return resolved


def is_local(host: str | None) -> bool:
    """Whether a server bound to `host` is reachable from this machine only (ADK's default
    host is 127.0.0.1)."""
    if not host or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: another machine may resolve it to us
        return False


def check_exposure(host: str | None, identity: IdentitySettings, inspector: InspectorMode) -> None:
    """Serving beyond localhost without identity binding: a WARNING (ADK's API trusts the user
    id in every path and body), and a refusal to serve the memory inspector, which shows every
    user's memories and needs an operator principal there."""
    if is_local(host) or identity.mode != "none":
        return
    if inspector != "off":
        raise click.UsageError(
            f"The memory inspector ({INSPECTOR_PATH}) shows every user's memories: served beyond "
            f"localhost (--host {host}) it needs an operator, so give --auth (with "
            f"--auth-operators), or --memory-inspector off."
        )
    click.echo(
        f"WARNING: serving on {host} without --auth: any caller that reaches the port may read "
        "and write any user's sessions and memories by naming them. Put an authenticating "
        "front before it, or give --auth iap|google|oidc (see the README's Privacy and safety).",
        err=True,
    )
