"""ASGI plumbing shared by the middlewares that read a request's body before the app does.

Owns: the ASGI callable types, reading a whole request body (and the message that cut it
short, a client's disconnect), and replaying it to the wrapped app, so the identity guard
(`adk_memory.identity`) and the deploy's invocation-id guard read ADK's run requests one way.
It never parses a body and never answers a request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def read_body(receive: Receive) -> tuple[bytes, Message | None]:
    """The whole request body, and the message that cut it short (a disconnect), if any."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), message
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), None


def replaying(body: bytes, cut_short: Message | None, receive: Receive) -> Receive:
    """A `receive` for the wrapped app: `body` once (then the message that cut it short, if
    any), then the client's own messages (ADK's `/run` waits for a disconnect)."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
    if cut_short is not None:
        pending.append(cut_short)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay
