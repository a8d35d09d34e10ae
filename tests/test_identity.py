"""Identity binding's pieces with real signed tokens: an RSA and an EC key pair made here, their
JWKS served on 127.0.0.1 (tests/token_issuer.py), tokens verified by the resolvers, mapped by the
policy, and the settings that configure them. No database, no network beyond 127.0.0.1."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from token_issuer import AUDIENCE, Issuer, serving_issuer

from adk_memory.errors import AuthenticationError, InputValidationError
from adk_memory.identity import (
    CallableResolver,
    IdentityGuard,
    IdentityPolicy,
    JwtResolver,
    KeySet,
    Principal,
    current_principal,
    resolver_for,
)
from adk_memory.identity.principal import PRINCIPAL_KEY
from adk_memory.identity.resolvers import IAP_HEADER, bearer
from adk_memory.identity.routes import BODY_USERS, body_user
from adk_memory.settings import identity_settings

ALICE = {"sub": "alice-id", "email": "alice@example.com", "email_verified": True}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with serving_issuer() as issuer:
        yield issuer


def _scope(token: str | None, header: str = "authorization") -> dict:
    value = f"Bearer {token}" if header == "authorization" else token
    headers = [] if token is None else [(header.encode(), value.encode())]
    return {"type": "http", "path": "/", "headers": headers}


def _oidc(issuer: Issuer, **keys: float) -> JwtResolver:
    return JwtResolver(
        "oidc",
        bearer,
        KeySet(issuer.jwks_url, min_refresh=keys.get("min_refresh", 0.0)),
        [AUDIENCE],
        [issuer.url],
        ["RS256", "ES256"],
    )


async def test_a_valid_token_is_the_principal_it_names(issuer: Issuer) -> None:
    for kid in ("rsa-1", "ec-1"):
        principal = await _oidc(issuer).resolve(
            _scope(issuer.token({**ALICE, "groups": ["ops"]}, kid=kid))
        )
        assert principal is not None
        assert (principal.subject, principal.email, principal.groups) == (
            "alice-id",
            "alice@example.com",
            ("ops",),
        )
        assert principal.verified_by == "oidc" and principal.claims["aud"] == AUDIENCE
        with pytest.raises(TypeError):  # frozen all the way down
            principal.claims["email"] = "mallory@example.com"  # type: ignore[index]


async def test_no_credentials_is_no_principal(issuer: Issuer) -> None:
    assert await _oidc(issuer).resolve(_scope(None)) is None
    basic = {"type": "http", "headers": [(b"authorization", b"Basic YTpi")]}
    assert await _oidc(issuer).resolve(basic) is None


@pytest.mark.parametrize(
    ("forge", "reason"),
    [
        (lambda i: i.token(ALICE, lifetime=-3600, issued=int(time.time()) - 7200), "expired"),
        (lambda i: i.token(ALICE, issued=int(time.time()) + 3600), "future"),
        (lambda i: i.token(ALICE, audience="another-service"), "audience"),
        (lambda i: i.token(ALICE, issuer="https://evil.example.com"), "issuer"),
        (lambda i: i.token(ALICE, key=Issuer().rsa_key), "signature"),  # as rsa-1, wrong key
        (lambda i: i.token(ALICE, kid="ec-1", key=Issuer().ec_key), "signature"),
        (lambda i: i.token(ALICE, kid="rsa-9"), "does not publish"),
        (lambda i: i.unsigned(ALICE), "'none'"),
        (lambda i: i.token({"email": "x@example.com"}), "subject"),
        (lambda i: "not.a.jwt", "not a JWT"),
        (lambda i: i.token(ALICE) + "x", "signature"),
    ],
)
async def test_a_token_that_does_not_verify_is_refused(issuer: Issuer, forge, reason) -> None:
    with pytest.raises(AuthenticationError, match=reason) as raised:
        await _oidc(issuer).resolve(_scope(forge(issuer)))
    assert "eyJ" not in str(raised.value)  # the message never quotes a token


async def test_an_rsa_key_cannot_pass_for_an_ec_one(issuer: Issuer) -> None:
    """A token claiming ES256 under the RSA key's id (key confusion) does not verify."""
    token = issuer.token(ALICE, kid="rsa-1", key=issuer.ec_key)
    with pytest.raises(AuthenticationError):
        await _oidc(issuer).resolve(_scope(token))


async def test_keys_are_cached_and_fetched_again_for_an_unknown_key_id(issuer: Issuer) -> None:
    resolver = _oidc(issuer)
    before = issuer.fetches
    for _ in range(3):
        await resolver.resolve(_scope(issuer.token(ALICE)))
    assert issuer.fetches == before + 1  # cached
    rotated = Issuer()
    issuer.publish(rsa_1=issuer.rsa_key, ec_1=issuer.ec_key, rsa_2=rotated.rsa_key)
    try:
        principal = await resolver.resolve(
            _scope(issuer.token(ALICE, kid="rsa-2", key=rotated.rsa_key))
        )
        assert principal is not None and issuer.fetches == before + 2
    finally:
        issuer.publish(rsa_1=issuer.rsa_key, ec_1=issuer.ec_key)


async def test_unknown_key_ids_do_not_make_the_server_fetch_each_time(issuer: Issuer) -> None:
    resolver = _oidc(issuer, min_refresh=3600)
    await resolver.resolve(_scope(issuer.token(ALICE)))
    before = issuer.fetches
    for n in range(5):
        with pytest.raises(AuthenticationError):
            await resolver.resolve(_scope(issuer.token(ALICE, kid=f"made-up-{n}")))
    assert issuer.fetches == before


async def test_the_settings_build_the_iap_resolver_on_its_header(issuer: Issuer) -> None:
    settings = identity_settings(
        {
            "ADK_MEMORY_AUTH": "iap",
            "ADK_MEMORY_AUTH_AUDIENCE": AUDIENCE,
            "ADK_MEMORY_AUTH_JWKS_URL": issuer.jwks_url,
        }
    )
    resolver = resolver_for(settings)
    assert resolver is not None
    iap = issuer.token(ALICE, kid="ec-1", issuer="https://cloud.google.com/iap")
    principal = await resolver.resolve(_scope(iap, IAP_HEADER))
    assert principal is not None and principal.verified_by == "iap"
    # IAP signs with ES256 only; a bearer token is not IAP's header.
    with pytest.raises(AuthenticationError, match="RS256"):
        rsa = issuer.token(ALICE, issuer="https://cloud.google.com/iap")
        await resolver.resolve(_scope(rsa, IAP_HEADER))
    assert await resolver.resolve(_scope(iap)) is None


def test_settings_refuse_what_would_accept_any_token() -> None:
    assert identity_settings({}).mode == "none"
    assert identity_settings({}, default_mode="none", mode="none").mode == "none"
    for environ, message in [
        ({"ADK_MEMORY_AUTH": "iap"}, "needs an audience"),
        ({"ADK_MEMORY_AUTH": "oidc", "ADK_MEMORY_AUTH_AUDIENCE": "a"}, "needs the issuer"),
        ({"ADK_MEMORY_AUTH": "kerberos"}, "iap"),
        (
            {
                "ADK_MEMORY_AUTH": "google",
                "ADK_MEMORY_AUTH_AUDIENCE": "a",
                "ADK_MEMORY_AUTH_OPERATORS": "admins",
            },
            "CLAIM=VALUE",
        ),
    ]:
        with pytest.raises(InputValidationError, match=message):
            identity_settings(environ)
    with pytest.raises(InputValidationError, match="needs an audience"):
        identity_settings({}, default_mode="iap")
    google = identity_settings(
        {"ADK_MEMORY_AUTH_AUDIENCE": "a, b"},
        mode="google",
        operators="groups=ops,email=root@example.com",
        user_claim="sub",
    )
    assert (google.audiences, google.operators, google.user_claim) == (
        ("a", "b"),
        (("groups", "ops"), ("email", "root@example.com")),
        "sub",
    )


def test_the_policy_maps_a_principal_to_itself_and_operators_to_anyone() -> None:
    alice = Principal.from_claims(ALICE, "oidc")
    operator = Principal.from_claims({"sub": "o", "groups": ["ops", "x"]}, "oidc")
    unverified = Principal.from_claims({**ALICE, "email_verified": False}, "oidc")
    policy = IdentityPolicy(operators=[("groups", "ops")])
    assert policy.may_act_as(alice, "alice@example.com")
    assert not policy.may_act_as(alice, "bob@example.com")
    assert not policy.may_act_as(alice, "alice-id")  # the claim is email, not sub
    assert IdentityPolicy(user_claim="sub").may_act_as(alice, "alice-id")
    assert policy.may_act_as(operator, "bob@example.com") and policy.is_operator(operator)
    assert not policy.is_operator(alice)
    assert not policy.may_act_as(unverified, "alice@example.com")
    assert IdentityPolicy(operators=[("email", "alice@example.com")]).is_operator(alice)


async def test_a_callable_resolves_anything_else() -> None:
    async def from_proxy(headers):
        user = headers.get("x-proxy-user")
        return (
            Principal(subject=user, claims={"email": user}, verified_by="proxy") if user else None
        )

    resolver = CallableResolver(from_proxy)
    principal = await resolver.resolve({"headers": [(b"X-Proxy-User", b"carol@example.com")]})
    assert principal is not None and principal.subject == "carol@example.com"
    assert await resolver.resolve({"headers": []}) is None
    with pytest.raises(TypeError):
        await CallableResolver(lambda headers: "carol").resolve({"headers": []})


def test_current_principal_reads_what_the_guard_kept() -> None:
    alice = Principal.from_claims(ALICE, "oidc")
    assert current_principal({PRINCIPAL_KEY: alice}) is alice
    assert current_principal({}) is None
    assert current_principal(Request({"type": "http", PRINCIPAL_KEY: alice})) is alice


def _guarded() -> IdentityGuard:
    """The guard (callers named by an `x-user` header) around an app that echoes the path."""

    async def echo(request):
        principal = current_principal(request)
        return PlainTextResponse(principal.subject if principal else "nobody")

    app = Starlette(routes=[Route("/{rest:path}", echo, methods=["GET", "POST"])])

    def by_header(headers):
        user = headers.get("x-user")
        return (
            Principal(subject=user, claims={"email": user}, verified_by="header") if user else None
        )

    return IdentityGuard(app, CallableResolver(by_header))


async def test_a_url_prefix_does_not_hide_a_route_from_the_guard() -> None:
    """Behind ADK's --url_prefix (or a proxy's root path) `/adk/run` is `/run`: its body is
    read, and `/adk/health` stays open."""
    transport = httpx.ASGITransport(app=_guarded(), root_path="/adk")
    alice = {"x-user": "alice"}
    body = {"app_name": "a", "user_id": "bob", "session_id": "s", "new_message": {"parts": []}}
    async with httpx.AsyncClient(transport=transport, base_url="http://h") as client:
        assert (await client.post("/adk/run", json=body, headers=alice)).status_code == 403
        own = await client.post("/adk/run", json={**body, "user_id": "alice"}, headers=alice)
        assert (own.status_code, own.text) == (200, "alice")  # current_principal behind it
        assert (
            await client.get("/adk/apps/a/users/bob/sessions", headers=alice)
        ).status_code == 403
        assert (await client.get("/adk/health")).text == "nobody"
        preflight = {"Origin": "http://ui", "Access-Control-Request-Method": "POST"}
        assert (await client.options("/adk/run", headers=preflight)).status_code != 401
        assert (await client.options("/adk/run")).status_code == 401
        assert (await client.get("/adk/list-apps")).status_code == 401


async def test_an_unreachable_issuer_is_said_and_never_lets_a_token_through(issuer: Issuer) -> None:
    resolver = _oidc(issuer)
    resolver.keys = KeySet(f"{issuer.url}/nowhere", min_refresh=0.0)  # the server answers 404
    with pytest.raises(AuthenticationError, match="could not be fetched"):
        await resolver.resolve(_scope(issuer.token(ALICE)))


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,  # nested past the parser's recursion limit
        b"\xff\xfe\x00",  # not JSON text
        b'{"appName": "a", "userId": "al\\u0000ice"}',  # NUL in an id, and no valid request
        b'{"x": "' + b"a" * 10_000_000 + b'"}',  # 10 MB
    ],
)
def test_a_hostile_run_body_names_no_user_and_never_crashes_the_guard(body: bytes) -> None:
    """A body no ADK model accepts names no user (ADK refuses it itself) and raises nothing."""
    for path in BODY_USERS:
        assert body_user(path, body) is None
