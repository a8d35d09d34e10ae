"""Identity binding over the real front ends: the deploy app (`deploy.main.create_app`) and the
app `adk-memory api_server` serves, on the test database, with tokens signed here by keys made
here (tests/token_issuer.py, JWKS on 127.0.0.1). A caller authenticated as Alice gets 403 for
every route naming Bob (sessions, run, run_sse, run_live, artifacts, memory, the inspector),
and not for her own; no credentials or bad ones are 401; all before ADK runs."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Iterator

import httpx
import pytest
import test_deploy
from fastapi import FastAPI
from fastapi.routing import APIRoute
from token_issuer import AUDIENCE, Issuer, serving_issuer

from adk_memory.cli.auth import check_exposure, is_local
from adk_memory.cli.options import Target
from adk_memory.cli.server import service_uris, serving_inspector
from adk_memory.settings import identity_settings

APP = test_deploy.APP
ALICE, BOB = "alice@example.com", "bob@example.com"
serving = test_deploy.serving
deploy = test_deploy.deploy
environ = test_deploy.environ
restore_imports = test_deploy.restore_imports


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with serving_issuer() as issuer:
        yield issuer


def _auth(issuer: Issuer) -> dict[str, str]:
    return {
        "ADK_MEMORY_AUTH": "oidc",
        "ADK_MEMORY_AUTH_AUDIENCE": AUDIENCE,
        "ADK_MEMORY_AUTH_ISSUER": issuer.url,
        "ADK_MEMORY_AUTH_JWKS_URL": issuer.jwks_url,
        "ADK_MEMORY_AUTH_OPERATORS": "groups=memory-operators",
    }


def _as(issuer: Issuer, email: str, **claims: object) -> dict[str, str]:
    token = issuer.token({"sub": email.split("@")[0], "email": email, **claims})
    return {"Authorization": f"Bearer {token}"}


def _user_routes(app: FastAPI, user: str) -> list[tuple[str, str]]:
    """(method, concrete path) of every route of the app with a user in its path."""
    values = {"app_name": APP, "user_id": user, "session_id": "s-1", "artifact_name:path": "a.txt"}
    values |= {"version_id": "0", "event_id": "e-1"}
    routes = []
    for route in app.routes:
        if isinstance(route, APIRoute) and "{user_id}" in route.path:
            path = route.path
            for name, value in values.items():
                path = path.replace(f"{{{name}}}", value)
            routes += [(method, path) for method in sorted(route.methods)]
    return routes


def _run_body(user: str, session_id: str, text: str = "hello") -> dict[str, object]:
    message = {"role": "user", "parts": [{"text": text}]}
    return {"app_name": APP, "user_id": user, "session_id": session_id, "new_message": message}


async def _bob_is_refused_to_alice(app: FastAPI, client: httpx.AsyncClient, alice: dict) -> None:
    """Every route naming Bob answers Alice 403; her own routes pass the guard."""
    refused = {}
    for method, path in _user_routes(app, BOB):
        refused[(method, path)] = (await client.request(method, path, headers=alice)).status_code
    assert refused and set(refused.values()) == {403}, refused
    for method, path in _user_routes(app, ALICE):
        if path.startswith("/dev/"):  # ADK's dev tools: operators' only, her own user or not
            continue
        status = (await client.request(method, path, headers=alice, json={})).status_code
        assert status not in (401, 403), (method, path, status)
    for route in ("/run", "/run_sse"):
        body = _run_body(BOB, "s-1")
        for spelling in (body, {**body, "userId": BOB}):
            answer = await client.post(route, json=spelling, headers=alice)
            assert answer.status_code == 403, (route, answer.text)


async def _live_refused(app: FastAPI, headers: dict[str, str], user: str) -> int:
    """The close code a `/run_live` socket naming `user` gets over ASGI, as a server would
    open it: the guard closes it (before accepting) without ADK seeing it."""
    query = f"app_name={APP}&user_id={user}&session_id=s-1".encode()
    scope = {
        "type": "websocket",
        "path": "/run_live",
        "raw_path": b"/run_live",
        "query_string": query,
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "scheme": "ws",
        "server": ("agent.run.app", 80),
        "client": ("203.0.113.9", 50000),
        "root_path": "",
        "subprotocols": [],
    }
    sent: list[dict] = []
    incoming = [{"type": "websocket.connect"}]

    async def receive() -> dict:
        return incoming.pop(0) if incoming else {"type": "websocket.disconnect", "code": 1000}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    [closed] = sent
    assert closed["type"] == "websocket.close", sent
    return closed["code"]


async def test_the_deploy_app_binds_callers_to_their_own_user(
    deploy, environ, restore_imports, issuer
):
    migrate = importlib.import_module("deploy.migrate")
    main = importlib.import_module("deploy.main")
    settings = importlib.import_module("deploy.settings")
    environ |= {**_auth(issuer), "ADK_MEMORY_INSPECTOR": "read-only", "ADK_WEB_UI": "true"}
    await migrate.migrate(settings.Deployment.from_env(environ))
    alice, operator = (
        _as(issuer, ALICE),
        _as(issuer, "ops@example.com", groups=["memory-operators"]),
    )
    app = main.create_app(environ)
    async with serving(app) as client:
        mine = await client.post(f"/apps/{APP}/users/{ALICE}/sessions", json={}, headers=alice)
        assert mine.status_code == 200
        session_id = mine.json()["id"]
        ran = await client.post("/run", json=_run_body(ALICE, session_id, "hi"), headers=alice)
        assert (
            ran.status_code == 200 and ran.json()[-1]["content"]["parts"][0]["text"] == "echo: hi"
        )

        await _bob_is_refused_to_alice(app, client, alice)
        # Nothing of Bob's was made by those requests: the guard answered before ADK ran.
        listed = await client.get(f"/apps/{APP}/users/{BOB}/sessions", headers=operator)
        assert listed.status_code == 200 and listed.json() == []

        # No credentials, or bad ones: 401, before anything (health stays open).
        assert (await client.get(f"/apps/{APP}/users/{ALICE}/sessions")).status_code == 401
        expired = {
            "Authorization": "Bearer " + issuer.token({"sub": "a", "email": ALICE}, lifetime=-3600)
        }
        answer = await client.get(f"/apps/{APP}/users/{ALICE}/sessions", headers=expired)
        assert answer.status_code == 401 and "expired" in answer.json()["detail"]
        assert answer.headers["www-authenticate"] == "Bearer"
        assert (await client.get("/health")).status_code == 200

        # The inspector and ADK's dev tools are operators' only.
        for path in ("/memory-inspector/", f"/memory-inspector/user?app={APP}&user={BOB}"):
            assert (await client.get(path, headers=alice)).status_code == 403
            assert (await client.get(path, headers=operator)).status_code == 200
        # The operator's page views are audited under the verified principal (its subject).
        audit = await client.get("/memory-inspector/audit?principal=ops", headers=operator)
        assert audit.status_code == 200 and "No audit records." not in audit.text, audit.text
        nobody = await client.get(
            f"/memory-inspector/audit?principal={ALICE.split('@')[0]}", headers=operator
        )
        assert "No audit records." in nobody.text  # Alice's refused views recorded nothing
        trace = f"/dev/apps/{APP}/debug/trace/session/{session_id}"
        assert (await client.get(trace, headers=alice)).status_code == 403
        assert (await client.get(trace, headers=operator)).status_code != 403
        # An operator may act as any user.
        theirs = f"/apps/{APP}/users/{ALICE}/sessions/{session_id}"
        assert (await client.get(theirs, headers=operator)).status_code == 200

    assert await _live_refused(app, alice, BOB) == 1008
    assert await _live_refused(app, {}, ALICE) == 1008


async def test_the_deploy_app_verifies_iap_by_default(deploy, environ, restore_imports, issuer):
    main = importlib.import_module("deploy.main")
    del environ["ADK_MEMORY_AUTH"]
    with pytest.raises(Exception, match="needs an audience"):
        main.create_app(environ)
    environ |= {"ADK_MEMORY_AUTH_AUDIENCE": AUDIENCE, "ADK_MEMORY_AUTH_JWKS_URL": issuer.jwks_url}
    app = main.create_app(environ)
    iap = issuer.token(
        {"sub": "a", "email": ALICE}, kid="ec-1", issuer="https://cloud.google.com/iap"
    )
    async with serving(app) as client:
        path = f"/apps/{APP}/users/{ALICE}/sessions"
        assert (
            await client.get(path, headers={"x-goog-iap-jwt-assertion": iap})
        ).status_code == 200
        assert (
            await client.get(path, headers={"Authorization": f"Bearer {iap}"})
        ).status_code == 401
        other = f"/apps/{APP}/users/{BOB}/sessions"
        assert (
            await client.get(other, headers={"x-goog-iap-jwt-assertion": iap})
        ).status_code == 403


async def test_the_api_server_app_binds_callers_to_their_own_user(
    database_url, session_service, tmp_path, restore_imports, issuer
):
    agents = test_deploy.shutil.copytree(test_deploy.AGENTS, tmp_path / "agents")
    url = database_url.replace("postgresql+asyncpg://", "postgresql://")
    session_uri, memory_uri = service_uris(Target(url, test_deploy.TEST_SCHEMA, None), None, None)
    identity = identity_settings(_auth(issuer))
    from google.adk.cli import fast_api

    with serving_inspector("read-only", None, identity), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ADK's experimental-feature warnings
        app = fast_api.get_fast_api_app(
            agents_dir=str(agents),
            session_service_uri=session_uri,
            memory_service_uri=memory_uri,
            web=False,
        )
    alice = _as(issuer, ALICE)
    async with serving(app) as client:
        mine = await client.post(f"/apps/{APP}/users/{ALICE}/sessions", json={}, headers=alice)
        assert mine.status_code == 200
        await _bob_is_refused_to_alice(app, client, alice)
        assert (await client.get("/memory-inspector/", headers=alice)).status_code == 403
        assert (await client.get(f"/apps/{APP}/users/{ALICE}/sessions")).status_code == 401
    assert await _live_refused(app, alice, BOB) == 1008


def test_serving_beyond_localhost_without_auth_warns_and_keeps_the_inspector_local(capsys):
    import click

    none, oidc = identity_settings({}), identity_settings({}, mode="google", audience="a")
    assert is_local(None) and is_local("127.0.0.1") and is_local("::1") and is_local("localhost")
    assert not is_local("0.0.0.0") and not is_local("example.com")
    check_exposure("127.0.0.1", none, "read-only")
    check_exposure("0.0.0.0", oidc, "read-only")
    assert capsys.readouterr().err == ""
    check_exposure("0.0.0.0", none, "off")
    assert "WARNING: serving on 0.0.0.0 without --auth" in capsys.readouterr().err
    with pytest.raises(click.UsageError, match="needs an operator"):
        check_exposure("0.0.0.0", none, "read-only")


def test_the_commands_take_the_auth_options() -> None:
    from click.testing import CliRunner

    from adk_memory.cli import main

    for command in ("web", "api_server"):
        result = CliRunner().invoke(main, [command, "--auth", "iap", "."])
        assert result.exit_code == 1 and "needs an audience" in result.stderr
        result = CliRunner().invoke(main, [command, "--auth", "kerberos", "."])
        assert result.exit_code == 2 and "'iap'" in result.stderr
