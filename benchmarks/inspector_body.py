"""Memory inspector body benchmark: how much memory a write form's body costs the server when a
client sends far more than a form, without declaring its length (chunked), printed as a table.

Why: the inspector's write routes are reachable by anyone who can reach the server (the form
token is checked after the body is read). A body read whole before its size is checked costs
the server its size, and more (the copies made on the way); one counted as it arrives costs the
cap (16 KB) and one chunk, whatever is sent. The figure is the peak of Python's allocations
(`tracemalloc`) while the request is served in process (ASGI: no network, no database: the
body is refused before any statement).

    python benchmarks/inspector_body.py [--megabytes 200] [--chunk-kb 64]
"""

from __future__ import annotations

import argparse
import asyncio
import tracemalloc
from collections.abc import AsyncIterator

import httpx
from fastapi import FastAPI

from adk_memory import PostgresMemoryService
from adk_memory.adk.inspector import inspector_router

BASE = "http://inspector.test"


async def post(megabytes: int, chunk_kb: int) -> tuple[int, int, float]:
    """(status, bytes the client got to send, peak MB allocated while serving)."""
    app = FastAPI()
    app.include_router(inspector_router(PostgresMemoryService(), writable=True, token="t"))
    chunk = b"x" * (chunk_kb * 1024)
    sent = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b"token=t&app=a&user=u&id=x&padding="
        for _ in range(megabytes * 1024 // chunk_kb):
            sent += len(chunk)
            yield chunk

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        tracemalloc.start()
        response = await client.post(
            "/memory-inspector/quarantine/approve",
            content=body(),
            headers={"origin": BASE, "content-type": "application/x-www-form-urlencoded"},
        )
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return response.status_code, sent, peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--chunk-kb", type=int, default=64)
    args = parser.parse_args()
    status, sent, peak = asyncio.run(post(args.megabytes, args.chunk_kb))
    print(f"{'offered':>10} {'read':>10} {'status':>6} {'peak MB':>8}")
    print(f"{args.megabytes:>8} MB {sent / 2**20:>7.2f} MB {status:>6} {peak:>8.2f}")


if __name__ == "__main__":
    main()
