"""One broker connection with a task that reads it: what the mesh's requesters
(``Requester``, ``EmqxRequester``) share. Each reads its own way (``_read``) and
calls ``_connection_lost`` when the broker goes away."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from ..client.errors import AgentUnreachable
from .broker import Broker, MeshUnavailable

__all__ = ["ReadingConnection"]


class ReadingConnection:
    """Connects (once, however many callers ask) and subscribes to ``_listening()``
    before its reader starts; ``aclose`` stops the reader and the connection."""

    _broker: Broker
    _reader: asyncio.Task[None] | None
    _lock: asyncio.Lock

    def _listening(self) -> Sequence[str]:
        raise NotImplementedError

    async def _read(self) -> None:
        raise NotImplementedError

    async def ensure(self) -> None:
        if self._reader is not None:
            return
        async with self._lock:
            if self._reader is not None:
                return
            try:
                await self._broker.connect()
                await self._broker.subscribe(*self._listening())
            except MeshUnavailable as exc:
                await self._broker.close()
                raise AgentUnreachable(str(exc)) from None
            self._reader = asyncio.create_task(self._read())

    async def aclose(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None
        await self._broker.close()

    async def _connection_lost(self) -> None:
        """After the reader has told each waiting call: the next call connects again."""
        self._reader = None
        await self._broker.close()

