"""A PostgreSQL wire-protocol proxy that loses replies after the server committed them.

Sits between asyncpg and the test server (a TCP listener on 127.0.0.1, forwarding to the server's
Unix socket or TCP address) and reads both directions of the protocol: the client's messages to
know which statements each transaction ran (Parse names them, Bind and Query run them), the
server's to see each transaction end. Armed (`drop_next_commit`), it waits for a transaction
that ran a matching statement to commit, that is for its CommandComplete (or PortalSuspended:
asyncpg's fetchrow and fetchval run a portal for one row, and a data-modifying statement has
done all its work by then) followed by ReadyForQuery with transaction status 'I', forwards
neither and closes the client's side: the
write is committed, the client only sees its connection lost mid-statement, exactly what a
network drop or an immediate shutdown after the commit looks like. One firing per arming.

The untyped messages are handled apart: the client's startup packets (an SSLRequest or a
GSSENCRequest is answered 'N' here, so the client goes on in plain text; the StartupMessage or a
CancelRequest is forwarded as it is). Everything after them is typed (a type byte and an int32
length that counts itself).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from sqlalchemy.engine import make_url

_SSL_REQUEST = 80877103
_GSSENC_REQUEST = 80877104

WRITES = r"\b(INSERT|UPDATE|DELETE)\b"
"""The default pattern: a transaction that ran any statement writing rows."""


@dataclass
class _Connection:
    """What one proxied connection has prepared and what its open transaction ran."""

    prepared: dict[bytes, str] = field(default_factory=dict)
    statements: list[str] = field(default_factory=list)


async def _read_message(reader: asyncio.StreamReader) -> tuple[bytes, bytes] | None:
    """One typed message (type byte, body), or None at the end of the stream."""
    try:
        header = await reader.readexactly(5)
        body = await reader.readexactly(struct.unpack("!i", header[1:])[0] - 4)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    return header[:1], body


def _frame(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


def _cstrings(body: bytes, count: int) -> list[str]:
    return [part.decode(errors="replace") for part in body.split(b"\0", count)[:count]]


class WireProxy:
    """The proxy (see the module docstring). `url` is the proxied database URL; `dropped`
    counts the replies it has lost."""

    def __init__(self, database_url: str) -> None:
        parsed = make_url(database_url)
        socket_dir = parsed.query.get("host")
        port = parsed.port or 5432
        if isinstance(socket_dir, str) and socket_dir.startswith("/"):
            self._upstream: tuple[str, int] | str = f"{socket_dir}/.s.PGSQL.{port}"
        else:
            self._upstream = (parsed.host or "localhost", port)
        self._parsed = parsed.difference_update_query(["host"])
        self._server: asyncio.AbstractServer | None = None
        self._pattern: re.Pattern[str] | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.url = ""
        self.dropped = 0

    async def start(self) -> str:
        """Listen on a free local port; return the URL that goes through the proxy."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = self._parsed.set(host="127.0.0.1", port=port).render_as_string(
            hide_password=False
        )
        return self.url

    async def close(self) -> None:
        """Stop listening and cut every proxied connection."""
        if self._server is not None:
            self._server.close()
        for writer in self._writers:
            writer.close()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def drop_next_commit(self, match: str = WRITES) -> None:
        """Lose the reply of the next transaction to commit that ran a statement matching the
        regular expression `match`."""
        self._pattern = re.compile(match)

    @property
    def armed(self) -> bool:
        """Whether the armed fault has not fired yet."""
        return self._pattern is not None

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(client_w)
        server_w: asyncio.StreamWriter | None = None
        try:
            if isinstance(self._upstream, str):
                server_r, server_w = await asyncio.open_unix_connection(self._upstream)
            else:
                server_r, server_w = await asyncio.open_connection(*self._upstream)
            self._writers.add(server_w)
            if not await self._startup(client_r, client_w, server_w):
                return
            conn = _Connection()
            pumps = [
                asyncio.ensure_future(self._from_client(client_r, server_w, conn)),
                asyncio.ensure_future(self._from_server(server_r, client_w, conn)),
            ]
            try:
                await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for pump in pumps:
                    pump.cancel()
                await asyncio.gather(*pumps, return_exceptions=True)
        except (OSError, asyncio.IncompleteReadError):
            pass  # the server is down or a side hung up: the client sees its connection close
        finally:
            for writer in (client_w, server_w):
                if writer is not None:
                    writer.close()
                    self._writers.discard(writer)
            self._tasks.discard(task)

    @staticmethod
    async def _startup(
        client_r: asyncio.StreamReader,
        client_w: asyncio.StreamWriter,
        server_w: asyncio.StreamWriter,
    ) -> bool:
        """Answer encryption requests with 'N' and forward the first other startup packet."""
        while True:
            try:
                length = struct.unpack("!i", await client_r.readexactly(4))[0]
                body = await client_r.readexactly(length - 4)
            except asyncio.IncompleteReadError:
                return False
            if struct.unpack("!i", body[:4])[0] in (_SSL_REQUEST, _GSSENC_REQUEST):
                client_w.write(b"N")
                await client_w.drain()
                continue
            server_w.write(struct.pack("!i", length) + body)
            await server_w.drain()
            return True

    @staticmethod
    async def _from_client(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, conn: _Connection
    ) -> None:
        """Forward the client's messages, noting the statements they prepare and run."""
        while (message := await _read_message(reader)) is not None:
            kind, body = message
            if kind == b"P":
                name, query = body.split(b"\0", 2)[:2]
                conn.prepared[name] = query.decode(errors="replace")
            elif kind == b"B":
                statement = body.split(b"\0", 2)[1]
                conn.statements.append(conn.prepared.get(statement, ""))
            elif kind == b"Q":
                conn.statements.append(_cstrings(body, 1)[0])
            writer.write(_frame(kind, body))
            await writer.drain()

    async def _from_server(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, conn: _Connection
    ) -> None:
        """Forward the server's messages; when armed, hold each CommandComplete until the next
        message says whether a matching transaction just committed, and if so lose both."""
        held: bytes | None = None
        while (message := await _read_message(reader)) is not None:
            kind, body = message
            committed = kind == b"Z" and body == b"I"
            if held is not None:
                # A failed transaction's COMMIT completes as ROLLBACK: nothing was committed.
                if committed and not held[5:].startswith(b"ROLLBACK") and self._matches(conn):
                    self._pattern = None
                    self.dropped += 1
                    return  # the caller closes both sides: the client sees a lost connection
                writer.write(held)
                held = None
            if committed:
                conn.statements.clear()  # before the client can send its next statement
            if kind in (b"C", b"s") and self._pattern is not None:
                held = _frame(kind, body)
                continue
            writer.write(_frame(kind, body))
            await writer.drain()

    def _matches(self, conn: _Connection) -> bool:
        pattern = self._pattern
        return pattern is not None and any(pattern.search(s) for s in conn.statements)


@contextlib.asynccontextmanager
async def running(database_url: str) -> AsyncIterator[WireProxy]:
    """A started `WireProxy` in front of `database_url`, closed on exit."""
    proxy = WireProxy(database_url)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.close()
