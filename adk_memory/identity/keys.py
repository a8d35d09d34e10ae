"""An issuer's signing keys: fetched from its JWKS URL, converted to PEM, cached.

Owns: turning a JWKS document's RSA and EC (P-256) keys into the PEM public keys google-auth
verifies with (via `cryptography`), and `KeySet`, the bounded cache of one URL's keys: fetched on
first use, fetched again when a token names a key id it does not hold (the issuer rotated), but
not more often than `min_refresh` apart, so a flood of made-up key ids cannot turn the server
into a client of the issuer's endpoint. It never verifies a token and never trusts a key it did
not fetch from its URL.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from ..errors import AuthenticationError

logger = logging.getLogger(__name__)

MAX_KEYS = 32
"""Keys kept of one JWKS (issuers publish two or three; more is a wrong URL)."""

FETCH_TIMEOUT = 10.0
"""Seconds a fetch of the keys may take."""

Fetch = Callable[[str], bytes]


def _integer(text: str) -> int:
    return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")


def jwk_to_pem(jwk: Mapping[str, Any]) -> str | None:
    """The PEM public key of one JWK (RSA, or EC on P-256 for ES256); None for a key of another
    kind or use (an encryption key), which no token here may be signed with."""
    if jwk.get("use", "sig") != "sig":
        return None
    public: rsa.RSAPublicKey | ec.EllipticCurvePublicKey
    if jwk.get("kty") == "RSA":
        public = rsa.RSAPublicNumbers(_integer(jwk["e"]), _integer(jwk["n"])).public_key()
    elif jwk.get("kty") == "EC" and jwk.get("crv") == "P-256":
        x, y = _integer(jwk["x"]), _integer(jwk["y"])
        public = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
    else:
        return None
    pem = public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem.decode()


def parse_jwks(document: bytes) -> dict[str, str]:
    """Key id -> PEM of a JWKS document's signing keys (at most `MAX_KEYS`)."""
    keys = json.loads(document).get("keys", [])
    pems: dict[str, str] = {}
    for jwk in keys:
        pem = jwk_to_pem(jwk) if isinstance(jwk, dict) and jwk.get("kid") else None
        if pem is not None and len(pems) < MAX_KEYS:
            pems[str(jwk["kid"])] = pem
    return pems


def _fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT) as response:
        body: bytes = response.read()
        return body


class KeySet:
    """One JWKS URL's keys, cached (see the module docstring).

    Args:
      url: the issuer's JWKS URL.
      min_refresh: seconds between two fetches at least (an unknown key id within them is
        refused without a fetch).
      fetch: reads a URL's body (default: urllib, in a worker thread); tests may not pass one.
    """

    def __init__(self, url: str, *, min_refresh: float = 60.0, fetch: Fetch = _fetch) -> None:
        self.url = url
        self.min_refresh = min_refresh
        self._fetch = fetch
        self._keys: dict[str, str] = {}
        self._fetched_at: float | None = None
        self._unreachable = False
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> Mapping[str, str]:
        """The keys to check a token naming key `kid` against: that key alone (fetching the
        set again if it is unknown and the last fetch is old enough), or every key when the
        token names none. Raises AuthenticationError when there is no such key."""
        if kid is None or kid not in self._keys:
            await self._refresh()
        if kid is None:
            if not self._keys:
                raise AuthenticationError("No signing keys of the issuer to check the token with.")
            return dict(self._keys)
        if kid not in self._keys:
            if self._unreachable:  # say so: the token may be fine
                raise AuthenticationError("The issuer's signing keys could not be fetched.")
            raise AuthenticationError("The token is signed with a key the issuer does not publish.")
        return {kid: self._keys[kid]}

    async def _refresh(self) -> None:
        async with self._lock:
            now = time.monotonic()
            if self._fetched_at is not None and now - self._fetched_at < self.min_refresh:
                return
            self._fetched_at = now
            try:
                document = await asyncio.to_thread(self._fetch, self.url)
                self._keys, self._unreachable = parse_jwks(document), False
            except (OSError, ValueError) as exc:  # keep the keys we had: the issuer may be back
                self._unreachable = True
                logger.warning("Could not fetch the signing keys at %s: %s", self.url, exc)
