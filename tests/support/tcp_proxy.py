"""A loopback TCP proxy (to a unix socket) a test can cut: the service behind it becomes really
unreachable (connections refused, open ones closed) without stopping it for others."""

from __future__ import annotations

import asyncio
import contextlib


class CuttableProxy:
    def __init__(
        self, unix_socket: str | None = None, *, tcp: tuple[str, int] | None = None
    ) -> None:
        # Embedded PostgreSQL listens on a unix socket; the proxy is TCP in front of it.
        # ``tcp``: a TCP service instead (the Temporal dev server).
        self.unix_socket = unix_socket
        self.tcp = tcp
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> CuttableProxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if self.tcp is not None:
                up_reader, up_writer = await asyncio.open_connection(*self.tcp)
            else:
                up_reader, up_writer = await asyncio.open_unix_connection(self.unix_socket)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def cut(self) -> None:
        """Refuse new connections and drop the open ones."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in self._writers:
            writer.close()
        self._writers.clear()

    async def restore(self) -> None:
        await self.start()
