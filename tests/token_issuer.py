"""A token issuer for the identity tests: real key pairs made here, their JWKS served on
127.0.0.1 by a tiny http.server thread, and JWTs signed with google-auth's own signers."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from google.auth import crypt, jwt

AUDIENCE = "adk-memory-test"


def _b64(number: int, size: int | None = None) -> str:
    raw = number.to_bytes(size or (number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@dataclass
class Issuer:
    """An RSA key (`rsa-1`) and an EC P-256 key (`ec-1`) and the JWKS publishing them."""

    url: str = ""
    rsa_key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    ec_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    published: dict[str, Any] = field(default_factory=dict)
    fetches: int = 0

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks"

    def jwk(self, kid: str, key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> dict:
        if isinstance(key, rsa.RSAPrivateKey):
            numbers = key.public_key().public_numbers()
            return {
                "kty": "RSA",
                "kid": kid,
                "alg": "RS256",
                "n": _b64(numbers.n),
                "e": _b64(numbers.e),
            }
        point = key.public_key().public_numbers()
        return {
            "kty": "EC",
            "kid": kid,
            "crv": "P-256",
            "alg": "ES256",
            "x": _b64(point.x, 32),
            "y": _b64(point.y, 32),
        }

    def publish(self, **keys: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> None:
        """Publish exactly these keys (kid=key)."""
        self.published = {"keys": [self.jwk(kid.replace("_", "-"), k) for kid, k in keys.items()]}

    def token(
        self,
        claims: dict[str, Any],
        *,
        kid: str = "rsa-1",
        key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | None = None,
        issuer: str | None = None,
        audience: str = AUDIENCE,
        lifetime: int = 600,
        issued: int | None = None,
    ) -> str:
        """A JWT for `claims`, signed by `key` (default: the one `kid` names) as `kid`."""
        key = key or (self.ec_key if kid.startswith("ec") else self.rsa_key)
        now = int(time.time()) if issued is None else issued
        payload = {
            "iss": issuer or self.url,
            "aud": audience,
            "iat": now,
            "exp": now + lifetime,
            **claims,
        }
        if isinstance(key, rsa.RSAPrivateKey):
            signer: crypt.Signer = crypt.RSASigner.from_string(_pem(key), key_id=kid)
        else:
            signer = crypt.ES256Signer.from_string(_pem(key), key_id=kid)
        return jwt.encode(signer, payload).decode()

    def unsigned(self, claims: dict[str, Any]) -> str:
        """The same claims with `alg: none` and no signature."""
        now = int(time.time())
        parts = [
            {"alg": "none", "typ": "JWT"},
            {"iss": self.url, "aud": AUDIENCE, "iat": now, "exp": now + 600, **claims},
        ]
        encoded = [base64.urlsafe_b64encode(json.dumps(p).encode()).rstrip(b"=") for p in parts]
        return b".".join([*encoded, b""]).decode()


@contextmanager
def serving_issuer() -> Iterator[Issuer]:
    """An `Issuer` whose JWKS (both keys published) is served on 127.0.0.1 while in use."""
    issuer = Issuer()
    issuer.publish(rsa_1=issuer.rsa_key, ec_1=issuer.ec_key)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            issuer.fetches += 1
            body = json.dumps(issuer.published).encode()
            self.send_response(200 if self.path == "/jwks" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    issuer.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
