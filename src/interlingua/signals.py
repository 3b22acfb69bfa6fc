"""An ``asyncio.Event`` that makes its waiter queue on the first wait.

``asyncio.Event`` makes a ``deque`` at once. A server holds several events per
running task and per open stream (settled, flushed, cancelled, the bus's
wake-up), most of them never awaited; made lazily they cost a few dozen bytes
each. Every method is our own, not asyncio's, so nothing depends on asyncio's
private attributes.

``Signal`` is the event itself, with slots; ``LazyEvent`` is the same as a
subclass of ``asyncio.Event`` (with a ``__dict__``), for code typed for one
(``ctx.cancelled``).
"""

from __future__ import annotations

import asyncio
from typing import Literal

__all__ = ["LazyEvent", "Signal"]


class Signal:
    __slots__ = ("_is_set", "_waiting")

    def __init__(self) -> None:
        self._is_set = False
        self._waiting: list[asyncio.Future[bool]] | None = None

    def __repr__(self) -> str:
        state = "set" if self._is_set else "unset"
        waiting = len(self._waiting) if self._waiting else 0
        return f"<{type(self).__name__} [{state}, waiters:{waiting}]>"

    def is_set(self) -> bool:
        return self._is_set

    def set(self) -> None:
        if self._is_set:
            return
        self._is_set = True
        waiting, self._waiting = self._waiting, None
        if waiting:
            for fut in waiting:
                if not fut.done():
                    fut.set_result(True)

    def clear(self) -> None:
        self._is_set = False

    async def wait(self) -> Literal[True]:
        if self._is_set:
            return True
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.add_waiter(fut)
        try:
            await fut
        finally:
            self.remove_waiter(fut)
        return True

    def add_waiter(self, fut: asyncio.Future[bool]) -> None:
        """Have ``set()`` complete ``fut`` (unless it is done by then).

        For a waiter that is not a coroutine of its own: an idle stream awaits
        one bare future, done by news or by a clock tick, with no frame around it.
        The caller removes the future again if it stops waiting first.
        """
        if self._waiting is None:
            self._waiting = []
        self._waiting.append(fut)

    def remove_waiter(self, fut: asyncio.Future[bool]) -> None:
        # set() hands the waiters over and starts afresh: the future may be gone.
        waiting = self._waiting
        if waiting is not None:
            try:
                waiting.remove(fut)
            except ValueError:
                pass



class LazyEvent(Signal, asyncio.Event):
    # Signal's methods come first; asyncio.Event.__init__ is skipped on
    # purpose: it makes the deque.
    __slots__ = ()
