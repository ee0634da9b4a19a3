"""A minimal keep-alive HTTP/1.1 client for load generation (benchmarks/http_bench.py
``--client raw``): one connection, one request at a time, Content-Length bodies only.

httpx costs its process 0.3-4.5 ms of CPU a request (more the more connections its pool
holds, encode/httpx#3215); on this 2-core machine that CPU comes out of what the API
server and PostgreSQL could use, so a benchmark driven by httpx measures the client as
much as the API. This client does what wrk would do in C with a few dozen microseconds
of Python per request: write the request bytes, read the status line, the headers and
Content-Length bytes of body. It speaks just enough HTTP for the benchmark's routes, and
offers the subset of httpx.AsyncClient the benchmark calls (get, patch, aclose).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

# Reconnect before reusing a connection idle this long: uvicorn closes keep-alive
# connections idle for 5 s, and a request sent as it does so would fail.
IDLE_RECONNECT_S = 2.0


class Response:
    __slots__ = ("content", "status_code")

    def __init__(self, status_code: int, content: bytes) -> None:
        self.status_code = status_code
        self.content = content

    def json(self) -> Any:
        return json.loads(self.content)


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.buffer = bytearray()
        self.waiter: asyncio.Future[Response] | None = None
        self.transport: asyncio.Transport | None = None
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is not None and not self.waiter.done():
            self._answer(self.waiter)

    def connection_lost(self, error: Exception | None) -> None:
        self.lost = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionResetError("the server closed the connection"))

    def _answer(self, waiter: asyncio.Future[Response]) -> None:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        lines = bytes(self.buffer[:end]).split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                waiter.set_exception(ValueError("chunked responses are not supported"))
                return
        total = end + 4 + length
        if len(self.buffer) < total:
            return
        body = bytes(self.buffer[end + 4 : total])
        del self.buffer[:total]
        waiter.set_result(Response(status, body))


class RawHttpClient:
    """One keep-alive connection to ``host:port``; ``headers`` go with every request."""

    def __init__(self, host: str, port: int, headers: Mapping[str, str] | None = None) -> None:
        self.host, self.port = host, port
        self._headers = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._protocol: _Protocol | None = None
        self._used_at = 0.0

    async def get(
        self,
        path: str,
        *,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> Response:
        if params:
            path = f"{path}?{urlencode(params)}"
        return await self._request("GET", path, headers, None)

    async def patch(
        self, path: str, *, json: Any = None, headers: Mapping[str, str] | None = None
    ) -> Response:
        body = _dumps(json)
        return await self._request(
            "PATCH", path, {**(headers or {}), "Content-Type": "application/json"}, body
        )

    async def aclose(self) -> None:
        if self._protocol is not None and self._protocol.transport is not None:
            self._protocol.transport.close()
        self._protocol = None

    async def _request(
        self, method: str, path: str, headers: Mapping[str, str] | None, body: bytes | None
    ) -> Response:
        protocol = self._protocol
        now = time.monotonic()
        if protocol is None or protocol.lost or now - self._used_at > IDLE_RECONNECT_S:
            await self.aclose()
            loop = asyncio.get_running_loop()
            _, protocol = await loop.create_connection(_Protocol, self.host, self.port)
            self._protocol = protocol
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        length = f"Content-Length: {len(body)}\r\n" if body is not None else ""
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"{self._headers}{extra}{length}\r\n"
        ).encode("latin-1")
        waiter: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        protocol.waiter = waiter
        assert protocol.transport is not None
        protocol.transport.write(head + body if body is not None else head)
        try:
            return await waiter
        finally:
            protocol.waiter = None
            self._used_at = time.monotonic()


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()
