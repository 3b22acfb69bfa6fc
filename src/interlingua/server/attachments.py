"""What starts and stops with an app beside its HTTP routes: the gRPC server, the mesh.

``create_app`` puts an ``Attachments`` on ``app.state.attachments``, and the
app's lifespan runs it around the engine: each attachment's ``prepare`` before
the engine starts, its ``start`` once it has, and its ``stop`` before the
engine stops (last attached, first stopped). ``add_grpc`` and
``mesh.attach`` add theirs there instead of wrapping the app's lifespan.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

__all__ = ["Attachment", "Attachments"]

log = logging.getLogger("interlingua.server")


async def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Attachment:
    """``prepare``: before the engine starts (listen, so that the card can name the
    port; register for what the engine's start-up does). ``start``: once it has.
    ``stop``: before it stops, also when a later step of the start-up failed."""

    name: str
    prepare: Callable[[], Awaitable[None]] = _nothing
    start: Callable[[], Awaitable[None]] = _nothing
    stop: Callable[[], Awaitable[None]] = _nothing


class Attachments:
    """The attachments of one app, in the order added."""

    def __init__(self) -> None:
        self._items: list[Attachment] = []

    def add(self, attachment: Attachment) -> None:
        self._items.append(attachment)

    def __len__(self) -> int:
        return len(self._items)

    @asynccontextmanager
    async def around(self, start: Callable[[], Awaitable[None]],
                     stop: Callable[[], Awaitable[None]]) -> AsyncIterator[None]:
        """Prepare every attachment, ``start()`` the engine, start them; on the way
        out stop each one prepared, then ``stop()`` the engine."""
        items = list(self._items)
        prepared: list[Attachment] = []
        try:
            for item in items:
                prepared.append(item)
                await item.prepare()
            await start()
            try:
                for item in items:
                    await item.start()
                yield
            finally:
                await self._stop(prepared)
                prepared = []
                await stop()
        finally:
            await self._stop(prepared)  # the engine never started

    @staticmethod
    async def _stop(items: list[Attachment]) -> None:
        for item in reversed(items):
            try:
                await item.stop()
            except Exception:  # one's failure leaves the others to stop
                log.exception("stopping %s failed", item.name)
