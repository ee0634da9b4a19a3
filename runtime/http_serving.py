"""An ASGI app served by uvicorn inside the running event loop, for as long as a block
runs: the worker's health endpoint (worker.py) and the quick start's API
(memoryctl/demo_api.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import uvicorn
from starlette.types import ASGIApp


def uvicorn_server(app: ASGIApp, host: str, port: int) -> uvicorn.Server:
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="off", access_log=False
    )
    return uvicorn.Server(config)


@contextlib.asynccontextmanager
async def serving(app: ASGIApp, host: str, port: int, *, setting: str) -> AsyncIterator[None]:
    """Listening when the block starts; stopped when it ends. A port that cannot be
    bound raises OSError naming ``setting`` (the variable or option that chose it)."""
    server = uvicorn_server(app, host, port)
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
