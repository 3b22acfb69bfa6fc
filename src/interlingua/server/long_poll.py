"""Long-polling ``GetTask`` (A2A 1.1, draft: ``currentGeneration``).

A request that names a generation the task has not passed is held until a
commit moves the task past it, for at most the server's ``long_poll_max_wait``
and while the caller is there; then it is answered with the task as it is.

A held request is one coroutine waiting on one future: the bus's wake-up for
the task's log (``bus.subscribe``), set by the commit in this process or, on a
shared bus, by the news of another replica's. No thread, no timer loop: one
timer handle for its deadline. Many requests held on one task are woken by one
commit (each re-reads the task: from the running turn's projection when the
turn runs here, else from the store). A write that does not move the
generation (a message joining the history) wakes them, and they wait again.

A task that has finished is answered at once: its generation will not move.
So is every request held when the server begins to stop (``close``), and any
that comes after: the caller is answered before the listeners close, not cut.
A binding tells of a caller that hung up through ``Inbound.gone`` (a callable
whose awaiting ends when the connection does), which the front door hands on
as ``CLIENT_GONE`` to a ``GetTask`` (the one call held); gRPC cancels the handler itself
when its caller's deadline passes or it cancels.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable

from ..bus.base import Bus, task_key
from ..core.calls import GetTask
from ..core.model import TERMINAL_STATES, Task
from ..core.task_log import Scope

#: how often a held request looks in the store for writes no bus tells of (s)
STORE_POLL = 1.0

__all__ = ["CLIENT_GONE", "LongPolls"]

#: set by an HTTP binding around a call that may be held: awaiting what it returns
#: ends when the caller's connection ends (ASGI ``http.disconnect``)
CLIENT_GONE: contextvars.ContextVar[Callable[[], Awaitable[object]] | None] = \
    contextvars.ContextVar("interlingua_client_gone", default=None)

#: reads the task (history trimmed as asked) and the version (seq) it is at
Read = Callable[[], Awaitable[tuple[Task, int]]]


class LongPolls:
    """The long polls of one engine: ``hold`` one, ``held`` how many are now,
    ``close`` to answer them all now (the server stops)."""

    def __init__(self, bus: Bus, max_wait: float,
                 unheard: Callable[[], bool] = lambda: False) -> None:
        self.bus = bus
        #: seconds a request is held at most (``EngineConfig.long_poll_max_wait``)
        self.max_wait = max_wait
        #: other processes write the store and no bus tells of their writes: a held
        #: request looks in the store every ``STORE_POLL`` s, as an idle stream does
        self.unheard = unheard
        #: set while the server stops: nothing is held (``close``; ``open`` again)
        self.closed = False
        #: the waits of the requests held now, which ``close`` ends
        self._waits: set[_Wait] = set()

    @property
    def held(self) -> int:
        """The requests held now."""
        return len(self._waits)

    def close(self) -> None:
        """Answer every request held now with the task as it is, and hold none
        from now on (the server stops: its callers answered, not cut)."""
        self.closed = True
        for wait in self._waits:
            wait.finish()

    def open(self) -> None:
        self.closed = False

    async def hold(self, call: GetTask, scope: Scope, read: Read) -> Task:
        """The task once its generation passes ``call.current_generation``, or as it
        is at the maximum wait, or when the caller goes."""
        after = call.current_generation
        assert after is not None
        task, version = await read()
        if _answered(task, after) or self.max_wait <= 0 or self.closed:
            return task
        loop = asyncio.get_running_loop()
        sub = self.bus.subscribe(task_key(scope, call.id), seen=version)
        # One future ends each wait, whatever ends it: the bus's news (a callback on
        # its wake-up future), the deadline (one timer for the whole hold) or the
        # caller's going; no task or timer per wake-up.
        wait = _Wait(loop)
        timer = loop.call_later(self.max_wait, wait.finish)
        gone = CLIENT_GONE.get()
        watcher = asyncio.ensure_future(gone()) if gone is not None else None
        if watcher is not None:
            watcher.add_done_callback(wait.watched)
        self._waits.add(wait)
        try:
            while True:
                if (watcher is not None and watcher.done()) or self.closed:
                    # the caller went (told perhaps as news woke this wait, or as the
                    # log was read: the wait it finished was over already), or the
                    # server stops
                    return task
                # a tick every STORE_POLL s (the bus's shared clock, no timer of its
                # own): whether other processes write unheard is known only once the
                # leases were looked at, which may be after the hold began
                news = sub.wake_on_news(version, STORE_POLL)
                if news is None:  # the log moved on: read it
                    task, version = await read()
                    if _answered(task, after):
                        return task
                    continue
                if wait.future.done():
                    return task  # the maximum wait, or nobody reads the answer
                news.add_done_callback(wait.finish)
                await wait.future
                if not news.done() or loop.time() >= timer.when() or self.closed:
                    return task
                if sub.latest <= version and self.unheard():
                    # a tick, no news: another process's writes are read from the store
                    task, version = await read()
                    if _answered(task, after):
                        return task
                wait.future = loop.create_future()  # news: read, then wait again if need be
        finally:
            self._waits.discard(wait)
            timer.cancel()
            sub.close()
            if watcher is not None and not watcher.done():
                watcher.cancel()


class _Wait:
    """The future the current wait of a long poll awaits, and what ends it."""

    __slots__ = ("future",)

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.future: asyncio.Future[None] = loop.create_future()

    def finish(self, *_: object) -> None:
        if not self.future.done():
            self.future.set_result(None)

    def watched(self, watcher: asyncio.Future[object]) -> None:
        """The caller's connection ended (or the watch was called off)."""
        if not watcher.cancelled():
            watcher.exception()  # retrieved: a receive that failed is a caller gone too
        self.finish()


def _answered(task: Task, after: int) -> bool:
    """Whether a request for a generation past ``after`` is answered with ``task`` now."""
    # 0: a task whose log predates generations, which will not say when it moves
    return task.generation > after or task.generation == 0 or task.status.state in TERMINAL_STATES
