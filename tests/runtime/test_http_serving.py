"""An app served inside the event loop (the quick start's API, the worker's health
endpoint) leaves Ctrl-C and SIGTERM to the process around it: uvicorn would otherwise
take them while it serves, stop only itself, and hand the signal back once its shutdown
finished, while the quick start went on with its dream."""

from __future__ import annotations

import signal
import socket

import httpx
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from runtime.http_serving import serving


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_serving_leaves_the_process_signal_handlers_as_they_were() -> None:
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("ok"))])
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    port = _free_port()
    async with serving(app, "127.0.0.1", port, setting="test"):
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"http://127.0.0.1:{port}/")).text == "ok"
        during = {sig: signal.getsignal(sig) for sig in before}
    assert during == before
