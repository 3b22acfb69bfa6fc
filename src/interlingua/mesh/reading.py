"""Reading a broker connection. ``ReadingConnection``: what the mesh's requesters
(``Requester``, ``EmqxRequester``) share; each reads its own way (``_read``) and
calls ``_connection_lost`` when the broker goes away. ``read_reconnecting``: the
loop of the agents and the discovery listeners (``DiscoveryListener``), which
connect again by themselves."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from ..client.errors import AgentUnreachable
from .broker import Broker, Inbound, MeshUnavailable

__all__ = ["DiscoveryListener", "ReadingConnection", "read_reconnecting"]

log = logging.getLogger("interlingua.mesh")


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


async def read_reconnecting(broker: Broker, take: Callable[[Inbound], object], *,
                            on_connect: Callable[[], Awaitable[None]], delay: float,
                            warning: str, stopping: Callable[[], bool] = lambda: False,
                            on_lost: Callable[[], None] | None = None) -> None:
    """Hand each message of ``broker`` to ``take``; when the broker goes away, log
    ``warning`` (``%s``: why), wait ``delay`` s, connect again and ``on_connect``
    (subscribe again), until ``stopping()``. ``on_lost``: what is no longer true
    while the connection is down."""
    me = asyncio.current_task()
    while not stopping():
        try:
            if not broker.connected:
                await broker.connect()
                await on_connect()
                # aiomqtt waits for a subscription with asyncio.wait_for, which on
                # Python 3.11 can lose a cancel that comes as it completes; the task
                # still counts it
                if me is not None and me.cancelling():
                    raise asyncio.CancelledError
            async for msg in broker.messages():
                try:
                    take(msg)
                except Exception:  # one message's fault: the reading goes on
                    log.exception("a message on %s could not be taken", msg.topic)
        except MeshUnavailable as exc:
            if on_lost is not None:
                on_lost()
            if stopping():
                return
            log.warning(warning, exc)
            await broker.close()
            await asyncio.sleep(delay)


class DiscoveryListener:
    """What ``Discovery`` and the A2A-over-MQTT ``Directory`` share: connect and
    ``_subscribe``, then hand each card heard to ``_heard`` (reconnecting by itself)
    until ``stop``."""

    _broker: Broker
    _task: asyncio.Task[None] | None

    async def _subscribe(self) -> None:
        raise NotImplementedError

    def _heard(self, msg: Inbound) -> object:
        raise NotImplementedError

    def _lost(self) -> None:
        """The connection to the broker is down (said at each failed try to connect
        again too)."""

    async def start(self) -> None:
        await self._broker.connect()
        await self._subscribe()
        self._task = asyncio.create_task(self._listen())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        await self._broker.close()

    async def _listen(self) -> None:
        # connected again, the retained cards (A2A over MQTT) come again
        await read_reconnecting(self._broker, self._heard, on_connect=self._subscribe,
                                delay=1.0, warning="discovery: %s; listening again in 1 s",
                                on_lost=self._lost)
