"""Database URLs as hosted providers hand them out: one parser (`adk_memory.db.urls`) for every
path (the services, `configure()`, `$ADK_MEMORY_DATABASE_URL`, the service URIs, the CLI).

The shapes are parsed without a network; the TLS parameters are then used for real, over TCP
on 127.0.0.1 with a self-signed certificate made here (see `TlsFront`), so `sslmode`,
`sslrootcert`, `options` and `application_name` are known to mean to asyncpg what they mean to
libpq.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import os
import ssl
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from google.adk.errors.input_validation_error import InputValidationError
from sqlalchemy.engine import make_url

from adk_memory import (
    DatabaseUnavailableError,
    PostgresMemoryService,
    PostgresSessionService,
    configure,
)
from adk_memory.adk.services import memory_service_from_uri, session_service_from_uri
from adk_memory.cli import main
from adk_memory.db.urls import PARAMETERS, create_engine, normalise_url, parse_url
from adk_memory.env import DATABASE_URL_ENV

# ------------------------------------------------------------------------------ shapes, parsed

SHAPES: list[tuple[str, str, dict[str, Any]]] = [
    (
        "Neon",
        "postgresql://alex:AbC123dEf@ep-cool-darkness-123456.us-east-2.aws.neon.tech/neondb"
        "?sslmode=require",
        {"dsn": "postgresql://?sslmode=require"},
    ),
    (
        "Neon without SNI: the endpoint in options",
        "postgresql://alex:pw@ep-cool-darkness-123456.us-east-2.aws.neon.tech/neondb"
        "?sslmode=require&options=endpoint%3Dep-cool-darkness-123456",
        {
            "dsn": "postgresql://?sslmode=require",
            "server_settings": {"options": "endpoint=ep-cool-darkness-123456"},
        },
    ),
    (
        "Supabase pooler",
        "postgresql://postgres.abcdefghijklmnop:pw@aws-0-us-east-1.pooler.supabase.com:5432/"
        "postgres",
        {},
    ),
    (
        "Cloud SQL over a Unix socket",
        "postgresql://app:pw@/agents?host=/cloudsql/my-project:us-central1:my-instance",
        {},
    ),
    (
        "Cloud SQL over IP with client certificates",
        "postgresql://app:pw@10.0.0.3:5432/agents?sslmode=verify-ca&sslrootcert=server-ca.pem"
        "&sslcert=client-cert.pem&sslkey=client-key.pem",
        {
            "dsn": "postgresql://?sslmode=verify-ca&sslrootcert=server-ca.pem"
            "&sslcert=client-cert.pem&sslkey=client-key.pem"
        },
    ),
    (
        "AlloyDB",
        "postgres://app:pw@10.1.2.3/postgres?sslmode=require",
        {"dsn": "postgresql://?sslmode=require"},
    ),
    (
        "Amazon RDS",
        "postgresql://app:pw@db.abc123.us-east-1.rds.amazonaws.com:5432/agents"
        "?sslmode=verify-full&sslrootcert=/certs/global-bundle.pem",
        {"dsn": "postgresql://?sslmode=verify-full&sslrootcert=%2Fcerts%2Fglobal-bundle.pem"},
    ),
    (
        "Azure",
        "postgresql://admin%40srv:pw@srv.postgres.database.azure.com:5432/postgres"
        "?sslmode=require&application_name=agents",
        {
            "dsn": "postgresql://?sslmode=require",
            "server_settings": {"application_name": "agents"},
        },
    ),
    (
        "CockroachDB",
        "postgresql://app:pw@free-tier.gcp-us-central1.cockroachlabs.cloud:26257/defaultdb"
        "?sslmode=verify-full&options=--cluster%3Dmy-cluster-123",
        {
            "dsn": "postgresql://?sslmode=verify-full",
            "server_settings": {"options": "--cluster=my-cluster-123"},
        },
    ),
    (
        "SQLAlchemy's asyncpg spelling",
        "postgresql+asyncpg://app:pw@db.internal/agents?ssl=require",
        {"dsn": "postgresql://?sslmode=require"},
    ),
    (
        "IPv6 host, a search path and timeouts",
        "postgresql://app@[2001:db8::1]:5432/agents?options=-c%20search_path%3Dtenant_a"
        "&connect_timeout=10",
        {"server_settings": {"options": "-c search_path=tenant_a"}, "timeout": 10.0},
    ),
    ("connect_timeout=0: no limit", "postgresql://h/d?connect_timeout=0", {"timeout": None}),
    ("connect_timeout as a duration", "postgresql://h/d?connect_timeout=1m", {"timeout": 60.0}),
    (
        "Two servers, the primary chosen",
        "postgresql://app@/agents?host=pg-1:5432&host=pg-2:5432&target_session_attrs=read-write",
        {"target_session_attrs": "read-write"},
    ),
    ("libpq's host list", "postgresql://app@/agents?host=pg-1,pg-2&port=5432,5433", {}),
    ("channel binding preferred", "postgresql://h/d?channel_binding=prefer", {}),
]
"""(provider, URL, the asyncpg arguments expected beside the host and port)."""


@pytest.mark.parametrize(("provider", "url", "expected"), SHAPES, ids=[s[0] for s in SHAPES])
def test_real_world_shapes_parse(provider: str, url: str, expected: dict[str, Any]) -> None:
    parsed = parse_url(url)
    assert parsed.connect_args == expected
    assert parsed.url.drivername == "postgresql+asyncpg"
    assert set(parsed.url.query) <= {"host", "port"}
    # The normalised URL keeps every parameter and reads back the same.
    assert parse_url(normalise_url(url)) == parsed
    # The engine is built without connecting.
    create_engine(url, pool_size=2)


def test_hosts_reach_asyncpg_as_written() -> None:
    dialect = create_engine("postgresql://h/d").dialect
    cases = {
        "postgresql://u@/d?host=/cloudsql/p:us-central1:i": {"host": "/cloudsql/p:us-central1:i"},
        "postgresql://u@[2001:db8::1]:6543/d": {"host": "2001:db8::1", "port": 6543},
        "postgresql://u@/d?host=a:5432&host=b:5433": {"host": ["a", "b"], "port": [5432, 5433]},
    }
    for url, expected in cases.items():
        _, kwargs = dialect.create_connect_args(parse_url(url).url)
        assert {k: kwargs[k] for k in expected} == expected


BAD: list[tuple[str, str]] = [
    ("postgresql://u:secret@h/d?sslmod=require", "Unknown parameter 'sslmod'"),
    ("postgresql://u:secret@h:54 32/d", r"port in the .* is not a number"),
    ("postgresql://u:secret@h:abc/d", r"port in the .* is not a number"),
    ("postgresql://u:secret@h:70000/d", "out of range"),
    ("postgresql://u:secret@/d?host=a:5432&host=b:x", "Invalid host or port"),
    ("postgresql://u:secret@h/d?sslmode=on", "expected one of disable, allow, prefer"),
    ("postgresql://u:secret@h/d?sslmode=require&sslmode=disable", "repeats 'sslmode'"),
    ("postgresql://u:secret@h/d?ssl=require&sslmode=require", "both ssl and sslmode"),
    ("postgresql://u:secret@h/d?connect_timeout=soon", "is not a duration"),
    ("postgresql://u:secret@h/d?target_session_attrs=master", "read-write"),
    ("postgresql://u:secret@h/d?channel_binding=require", "no channel binding"),
    ("mysql://u:secret@h/d", "Unsupported database URL scheme 'mysql'"),
    ("host=h dbname=d", "Not a database URL"),
]


@pytest.mark.parametrize(("url", "message"), BAD)
def test_bad_urls_are_one_clear_error_on_every_path(url: str, message: str) -> None:
    builders = {
        "PostgresSessionService": lambda: PostgresSessionService(url),
        "PostgresMemoryService": lambda: PostgresMemoryService(url),
        "configure(url)": lambda: configure(url, environ={}),
        DATABASE_URL_ENV: lambda: configure(environ={DATABASE_URL_ENV: url}),
        "create_engine": lambda: create_engine(url),
    }
    if url.startswith("postgresql://"):  # the service URIs: their own scheme check differs
        builders["session URI"] = lambda: session_service_from_uri(url, environ={})
        builders["memory URI"] = lambda: memory_service_from_uri(url, environ={})
    for path, build in builders.items():
        with pytest.raises(InputValidationError, match=message) as raised:
            build()
        assert "secret" not in str(raised.value), path


def test_an_unknown_parameter_names_the_accepted_ones() -> None:
    with pytest.raises(InputValidationError) as raised:
        parse_url("postgresql://h/d?search_path=x")
    for name in PARAMETERS:
        assert name in str(raised.value)


# ------------------------------------------------------------------ a real server, over TLS


class TlsFront:
    """The test server behind TLS on 127.0.0.1, as a hosted PostgreSQL with `ssl=on` answers.

    Why not `ssl=on` on an embedded server: the wheel's PostgreSQL is built without OpenSSL
    ("SSL is not supported by this build"). So this speaks the server's side of PostgreSQL's
    TLS negotiation (an SSLRequest answered `S`, then the handshake with a self-signed
    certificate) and relays the decrypted protocol to the real test server; a client that
    does not ask for TLS is relayed in the clear, as a server with `host` lines answers it.
    It records whether each connection was encrypted. Runs in a thread of its own, so
    commands with their own event loops (the CLI) connect through it too.
    """

    _SSL_REQUEST = 80877103

    def __init__(self, upstream: str, context: ssl.SSLContext) -> None:
        self._upstream = make_url(upstream)
        self._context = context
        self.encrypted: list[bool] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop
        )
        self._server = started.result(timeout=30)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def _open_upstream(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        host = self._upstream.query.get("host") or self._upstream.host or "localhost"
        assert isinstance(host, str)
        port = self._upstream.port or 5432
        if host.startswith("/"):
            return await asyncio.open_unix_connection(f"{host}/.s.PGSQL.{port}")
        return await asyncio.open_connection(host, port)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            first = await reader.readexactly(8)
        except (asyncio.IncompleteReadError, ConnectionError):  # a client that gave up
            writer.close()
            return
        _, code = struct.unpack("!ii", first)
        tls = code == self._SSL_REQUEST
        if tls:
            writer.write(b"S")
            await writer.drain()
            try:
                await writer.start_tls(self._context)
            except (ssl.SSLError, ConnectionError):  # the client refused our certificate
                writer.close()
                return
            first = b""
        self.encrypted.append(tls)
        up_reader, up_writer = await self._open_upstream()
        up_writer.write(first)
        await asyncio.gather(
            self._relay(reader, up_writer), self._relay(up_reader, writer), return_exceptions=True
        )

    @staticmethod
    async def _relay(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        finally:
            sink.close()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)


@dataclass(frozen=True)
class TlsServer:
    """Where the test connects over TLS, and the certificates to verify it with."""

    front: TlsFront
    root_cert: Path
    """The server's self-signed certificate: the root a client verifies it with."""
    other_cert: Path
    """A certificate of another, unrelated authority."""
    user: str
    """The test database's role (the embedded server's owner: not a superuser, so the schema
    the tests make is one it may drop)."""
    database: str

    def url(self, query: str) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.front.port}/{self.database}?{query}"


def _self_signed(names: list[str], addresses: list[str]) -> tuple[bytes, bytes]:
    """(certificate, key) in PEM: a self-signed certificate for these names and addresses."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.timezone.utc)
    alternative = [x509.DNSName(n) for n in names] + [
        x509.IPAddress(ipaddress.ip_address(a)) for a in addresses
    ]
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem_key = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), pem_key


TLS_SCHEMA = "adk_memory_tls"
"""The schema every connection over TLS works in (dropped afterwards)."""


@pytest.fixture(scope="module")
def tls_server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsServer]:
    """The test server behind TLS, with a certificate for localhost and 127.0.0.1."""
    certs = tmp_path_factory.mktemp("certs")
    cert, key = _self_signed(["localhost"], ["127.0.0.1"])
    other, _ = _self_signed(["someone-else.example"], [])
    for name, content in (("root.crt", cert), ("server.key", key), ("other.crt", other)):
        (certs / name).write_bytes(content)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs / "root.crt", certs / "server.key")
    front = TlsFront(database_url, context)
    try:
        target = make_url(database_url)
        yield TlsServer(
            front,
            certs / "root.crt",
            certs / "other.crt",
            target.username or "postgres",
            target.database or "postgres",
        )
    finally:
        front.close()
        asyncio.run(_drop_schema(database_url))


async def _drop_schema(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {TLS_SCHEMA} CASCADE")
    finally:
        await engine.dispose()


@pytest.fixture
def no_home_certificates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty home and no PGSSL* variables: nothing beside the URL names a certificate."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in list(os.environ):
        if name.startswith("PGSSL"):
            monkeypatch.delenv(name)


async def _round_trip(service: PostgresSessionService, front: TlsFront) -> list[bool]:
    """Create and read back a session; whether each connection it opened was encrypted."""
    before = len(front.encrypted)
    async with service:
        created = await service.create_session(app_name="tls", user_id="u", state={"k": 1})
        got = await service.get_session(app_name="tls", user_id="u", session_id=created.id)
        assert got is not None and got.state["k"] == 1
    return front.encrypted[before:]


@pytest.mark.usefixtures("no_home_certificates")
async def test_sslmode_require_and_verify_full_on_every_path(tls_server: TlsServer) -> None:
    front = tls_server.front
    require = tls_server.url("sslmode=require")
    verified = tls_server.url(f"sslmode=verify-full&sslrootcert={tls_server.root_cert}")
    for url in (require, verified):
        assert set(await _round_trip(PostgresSessionService(url, schema=TLS_SCHEMA), front)) == {
            True
        }
    plain = PostgresSessionService(tls_server.url("sslmode=disable"), schema=TLS_SCHEMA)
    assert set(await _round_trip(plain, front)) == {False}
    # configure() with the URL, or with $ADK_MEMORY_DATABASE_URL.
    for stack in (
        configure(require, schema=TLS_SCHEMA, environ={}),
        configure(schema=TLS_SCHEMA, environ={DATABASE_URL_ENV: verified}),
    ):
        try:
            assert set(await _round_trip(stack.session_service, front)) == {True}
        finally:
            await stack.close()
    # The service URIs (adk web / api_server).
    uri = session_service_from_uri(f"{verified}&schema={TLS_SCHEMA}", environ={})
    assert set(await _round_trip(uri, front)) == {True}


async def test_options_and_application_name_reach_the_server(tls_server: TlsServer) -> None:
    url = tls_server.url(
        "sslmode=require&application_name=agents-eu&options=-c%20search_path%3Dtenant_a"
        "&connect_timeout=30"
    )
    service = PostgresSessionService(url)
    async with service, service.database.connection() as conn:
        assert await conn.fetchval("SHOW search_path") == "tenant_a"
        assert await conn.fetchval("SHOW application_name") == "agents-eu"


async def test_the_url_overrides_connect_args_one_by_one(tls_server: TlsServer) -> None:
    engine = create_engine(
        tls_server.url("sslmode=require&application_name=agents-eu"),
        connect_args={"server_settings": {"jit": "off", "application_name": "default"}},
    )
    try:
        async with engine.connect() as conn:
            show = conn.exec_driver_sql
            assert (await show("SHOW application_name")).scalar() == "agents-eu"
            assert (await show("SHOW jit")).scalar() == "off"
    finally:
        await engine.dispose()


@pytest.mark.usefixtures("no_home_certificates")
async def test_verify_full_without_the_root_is_refused_clearly(tls_server: TlsServer) -> None:
    # No root certificate anywhere: asyncpg (libpq's rule) refuses before it connects.
    service = PostgresSessionService(tls_server.url("sslmode=verify-full"), schema=TLS_SCHEMA)
    # One typed error (the driver's reason in its message and as its cause).
    with pytest.raises(DatabaseUnavailableError, match=r"root certificate file .* does not exist"):
        await _round_trip(service, tls_server.front)
    # Another authority's root: the server's certificate does not verify.
    other = PostgresSessionService(
        tls_server.url(f"sslmode=verify-full&sslrootcert={tls_server.other_cert}"),
        schema=TLS_SCHEMA,
    )
    with pytest.raises(DatabaseUnavailableError, match="certificate verify failed") as refused:
        await _round_trip(other, tls_server.front)
    assert isinstance(refused.value.__cause__, ssl.SSLCertVerificationError)


@pytest.mark.usefixtures("no_home_certificates")
def test_the_cli_connects_over_tls_and_says_why_it_cannot(tls_server: TlsServer) -> None:
    env = {"ADK_MEMORY_DATABASE_URL": None, "ADK_MEMORY_SCHEMA": TLS_SCHEMA}
    verified = tls_server.url(f"sslmode=verify-full&sslrootcert={tls_server.root_cert}")
    ok = CliRunner(env=env).invoke(main, ["migrate", "--database-url", verified])
    assert ok.exit_code == 0, ok.output
    assert "sessions" in ok.stdout
    for query, reason in (
        ("sslmode=verify-full", "root certificate file"),
        (f"sslmode=verify-full&sslrootcert={tls_server.other_cert}", "certificate verify failed"),
    ):
        refused = CliRunner(env=env).invoke(
            main, ["migrate", "--database-url", tls_server.url(query)]
        )
        assert refused.exit_code == 1
        assert refused.stderr.startswith("Error: Could not connect to the database: ")
        assert reason in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
