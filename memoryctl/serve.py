"""memoryctl serve: the HTTP API (openwop discovery and seams, OpenIntent memory REST)
as a process, until Ctrl-C.

    memoryctl serve [--host H] [--port P]

One top-level command, no group. Defaults: AGENT_MEMORY_API_HOST (127.0.0.1) and
AGENT_MEMORY_API_PORT (8000).
"""

from __future__ import annotations

import signal
import socket
import sys
from types import FrameType
from typing import Annotated, Any, NoReturn

import typer

from memoryctl.cli import (
    EXIT_FAILED,
    check_database_url,
    console,
    errors,
    run_action,
    temporal_client_made,
)
from schemas.errors import InvalidInput


class CannotListen(Exception):
    """The address is taken or not this machine's; the message is the one line."""

    exit_status = EXIT_FAILED


def serve(
    host: Annotated[
        str | None,
        typer.Option(
            "--host", help="Listen address (default: AGENT_MEMORY_API_HOST, else 127.0.0.1)."
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port", min=1, max=65535, help="Port (default: AGENT_MEMORY_API_PORT, else 8000)."
        ),
    ] = None,
) -> None:
    """Run the HTTP API until Ctrl-C (or SIGTERM), which stops it cleanly with exit 0.

    It migrates DATABASE_URL at start and starts even when the database or Temporal is
    down: discovery then says what is unavailable and requests that need it get a 503.
    An address already in use is one line and exit 1."""
    overrides: dict[str, Any] = {"api_host": host, "api_port": port}

    async def action() -> None:
        from api.serve import serve as serve_api
        from runtime.settings import Settings

        settings = Settings(**{name: v for name, v in overrides.items() if v is not None})
        check_database_url()
        _check_can_listen(settings.api_host, settings.api_port)
        console.print(
            f"serving the HTTP API on {_url(settings.api_host, settings.api_port)} "
            "(discovery: /.well-known/openwop, docs: /docs); Ctrl-C stops it",
            markup=False,
            soft_wrap=True,
        )
        sys.stdout.flush()
        temporal_client_made()  # the services connect to Temporal on first use
        await serve_api(settings)

    # uvicorn shuts down gracefully on SIGINT/SIGTERM and then raises the signal again;
    # this handler turns that into KeyboardInterrupt, which unwinds through the services
    # (the database engine is disposed) instead of killing the process mid-cleanup. Not
    # asyncio's own SIGINT handler, which would cancel that cleanup.
    previous = {sig: signal.signal(sig, _interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        run_action(action)
    except KeyboardInterrupt:
        errors.print("stopped", soft_wrap=True)
        raise typer.Exit(0) from None
    finally:
        for sig, handler in previous.items():
            if handler is not None:
                signal.signal(sig, handler)


def _interrupted(signum: int, frame: FrameType | None) -> NoReturn:
    raise KeyboardInterrupt


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def _check_can_listen(host: str, port: int) -> None:
    """Bind once before serving, so a taken port is one line (uvicorn would log it and
    exit). SO_REUSEADDR as uvicorn's listener: a port in TIME_WAIT is free to it."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise InvalidInput("--host", f"{host!r}: {error.strerror}") from None
    family, kind, proto, _, address = found[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            reason = error.strerror or type(error).__name__
            raise CannotListen(f"cannot listen on {host}:{port}: {reason}") from None
