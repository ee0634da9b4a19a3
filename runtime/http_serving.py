"""An ASGI app served by uvicorn inside the running event loop, for as long as a block
runs: the worker's health endpoint (worker.py) and the quick start's API
(memoryctl/demo_api.py).

Served this way, uvicorn does not take Ctrl-C (SIGINT) or SIGTERM: the process around it
owns them. Left to itself, uvicorn's ``serve`` captures both while it runs, stops only
its own server on Ctrl-C and raises the signal again once that server has shut down, so
the quick start went on with its dream (and then met its own API gone) until then."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

import uvicorn
from starlette.types import ASGIApp


def _config(app: ASGIApp, host: str, port: int) -> uvicorn.Config:
    return uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="on", access_log=False
    )


def uvicorn_server(app: ASGIApp, host: str, port: int) -> uvicorn.Server:
    """A server that is the process's main work (``memoryctl serve``): it handles Ctrl-C
    and SIGTERM itself, with a graceful shutdown."""
    return uvicorn.Server(_config(app, host, port))


class _InLoopServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the process that runs the loop handles its signals


@contextlib.asynccontextmanager
async def serving(app: ASGIApp, host: str, port: int, *, setting: str) -> AsyncIterator[None]:
    """Listening when the block starts; stopped when it ends. A port that cannot be
    bound raises OSError naming ``setting`` (the variable or option that chose it)."""
    server = _InLoopServer(_config(app, host, port))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                with contextlib.suppress(BaseException):
                    task.result()  # uvicorn logs why; it exits instead of raising
                raise OSError(f"{setting}: could not listen on {host}:{port}")
            await asyncio.sleep(0.02)
        yield
    finally:
        server.should_exit = True
        with contextlib.suppress(BaseException):
            await task
