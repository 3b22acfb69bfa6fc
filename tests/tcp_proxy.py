"""A TCP proxy on a loopback port, in a thread of its own, that a test cuts and
restores: a service (PostgreSQL) going out of reach of a server and coming back,
without touching the service itself.

    with TcpProxy(5432) as proxy:      # proxy.port forwards to 127.0.0.1:5432
        proxy.cut()                    # open connections reset, new ones refused
        proxy.restore()                # the same port forwards again
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

__all__ = ["TcpProxy"]


class TcpProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> TcpProxy:
        self._thread.start()
        self.restore()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cut()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def cut(self) -> None:
        """Stop listening and reset every connection through the proxy."""
        asyncio.run_coroutine_threadsafe(self._cut(), self._loop).result(10)

    def restore(self) -> None:
        """Listen again, on the same port."""
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)

    async def _listen(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port,
                                                      reuse_address=True)
            self.port = self._server.sockets[0].getsockname()[1]

    async def _cut(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        if server is not None:
            await server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        finally:
            for w in (writer, up_writer):
                w.transport.abort()
                self._writers.discard(w)

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.transport.abort()
