"""An ``asyncio.Event`` that makes its waiter queue on the first wait, and a
lock that costs no coroutine when it is free.

``asyncio.Event`` makes a ``deque`` at once. A server holds several events per
running task and per open stream (settled, flushed, cancelled, the bus's
wake-up), most of them never awaited; made lazily they cost a few dozen bytes
each. Every method is our own, not asyncio's, so nothing depends on asyncio's
private attributes.

``Signal`` is the event itself, with slots; ``LazyEvent`` is the same as a
subclass of ``asyncio.Event`` (with a ``__dict__``), for code typed for one
(``ctx.cancelled``).

``Mutex`` is an ``asyncio.Lock`` for ``async with`` only. Every task write
takes its run's lock (server/run.py), nearly always free: ``asyncio.Lock``
then still runs three coroutines (``__aenter__``, ``acquire``, ``__aexit__``),
``Mutex`` none. A waiter is handed the lock by the holder that leaves it, in
the order they came.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

__all__ = ["DONE", "LazyEvent", "Mutex", "Signal"]

T = TypeVar("T")


class _Waiting(Generic[T]):
    """Futures to complete later, in a list made when the first one comes."""

    __slots__ = ("_waiting",)
    # Set by each subclass's own __init__: calling this class's as well doubled
    # the cost of making a Signal, and a run makes several.
    _waiting: list[asyncio.Future[T]] | None

    def _count(self) -> int:
        return len(self._waiting) if self._waiting else 0

    def add_waiter(self, fut: asyncio.Future[T]) -> None:
        """Have ``fut`` completed in its turn (unless it is done by then): by
        ``Signal.set``, or with a ``Mutex`` handed over.

        For a waiter that is not a coroutine of its own (an idle stream awaits one
        bare future, done by news or by a clock tick, with no frame around it).
        The caller removes the future again if it stops waiting first.
        """
        if self._waiting is None:
            self._waiting = []
        self._waiting.append(fut)

    def remove_waiter(self, fut: asyncio.Future[T]) -> None:
        # Completing hands the waiters over (or takes one off): it may be gone.
        waiting = self._waiting
        if waiting is not None:
            try:
                waiting.remove(fut)
            except ValueError:
                pass


class Signal(_Waiting[bool]):
    __slots__ = ("fired",)

    def __init__(self) -> None:
        self._waiting = None
        #: ``is_set()`` as an attribute, for a caller that reads it on every request
        #: (read only: ``set`` and ``clear`` change it)
        self.fired = False

    def __repr__(self) -> str:
        state = "set" if self.fired else "unset"
        return f"<{type(self).__name__} [{state}, waiters:{self._count()}]>"

    def is_set(self) -> bool:
        return self.fired

    def set(self) -> None:
        if self.fired:
            return
        self.fired = True
        waiting, self._waiting = self._waiting, None
        if waiting:
            for fut in waiting:
                if not fut.done():
                    fut.set_result(True)

    def clear(self) -> None:
        self.fired = False

    def woken(self) -> Awaitable[object]:
        """``wait()`` without its coroutine, for a waiter the signal is sure to wake
        (one that is set in the end): DONE when fired, else the future ``set``
        completes. A waiter cancelled meanwhile leaves its future listed (done, and
        passed over) until then, where ``wait`` takes it off at once."""
        if self.fired:
            return DONE
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        if self._waiting is None:
            self._waiting = []
        self._waiting.append(fut)
        return fut

    async def wait(self) -> Literal[True]:
        if not self.fired:
            # woken's future (it files it), taken off again if the wait is cancelled
            fut: Any = self.woken()
            try:
                await fut
            finally:
                self.remove_waiter(fut)
        return True


class LazyEvent(Signal, asyncio.Event):
    # Signal's methods come first; asyncio.Event.__init__ is skipped on
    # purpose: it makes the deque.
    __slots__ = ()


class _Done:
    """An awaitable that is over at once (``await`` gives None), with no coroutine:
    what a method awaited on every request returns when it has nothing to do."""

    __slots__ = ()

    # ``await`` takes any iterator, and an empty one ends at once with None. A
    # builtin bound to the empty tuple, not a method: called with no self and no
    # Python frame (a third of the instructions of an ``await DONE``).
    if TYPE_CHECKING:
        def __await__(self) -> Generator[None, None, None]: ...
    else:
        __await__ = ().__iter__


DONE = _Done()


class Mutex(_Waiting[None]):
    """A lock for ``async with``, taken at no cost when free; fair when not.

    Its waiters are served first come, first served: each is handed the lock by its future."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._waiting = None
        self._held = False

    def __repr__(self) -> str:
        state = "held" if self._held else "free"
        return f"<{type(self).__name__} [{state}, waiters:{self._count()}]>"

    def locked(self) -> bool:
        return self._held

    def __aenter__(self) -> _Done | Coroutine[Any, Any, None]:
        if not self._held:
            self._held = True
            return DONE
        return self._wait()

    def __aexit__(self, *exc: object) -> _Done:
        if self._held and not self._waiting:
            self._held = False  # nobody waits (nearly always): _release's work, without the call
        else:
            self._release()
        return DONE

    async def _wait(self) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.add_waiter(fut)
        try:
            await fut  # done: the lock was handed over, and is held for us
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self._release()  # handed over, then cancelled: pass it on
            else:
                self.remove_waiter(fut)
            raise

    def _release(self) -> None:
        if not self._held:
            raise RuntimeError("Mutex released while not held")
        waiting = self._waiting
        while waiting:
            fut = waiting.pop(0)
            if not fut.done():
                fut.set_result(None)  # stays held: it is the waiter's now
                return
        self._held = False
