"""uvicorn's server, stopped as soon as it is told to rather than at its next look.

uvicorn looks at ``should_exit`` every 0.1 s, and once told waits 0.1 s, then looks
every 0.1 s, for its connections to close. ``interlingua serve``, ``listen``, ``inspect``
and ``gateway`` (on a signal) and the tests' in-process servers (on ``stop()``) use
this instead: ``wake()`` makes the loop look at once (a signal calls it), and
the connections are looked at every 5 ms while they close."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Iterator
from types import FrameType

import uvicorn
from uvicorn.server import HANDLED_SIGNALS

__all__ = ["PromptServer"]

_log = logging.getLogger("uvicorn.error")


class PromptServer(uvicorn.Server):
    #: seconds between uvicorn's looks when nothing wakes the loop
    tick = 0.1

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._told: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def main_loop(self) -> None:
        """uvicorn's tick (the Date header, ``should_exit``) every ``tick`` s, and a
        look at ``should_exit`` as soon as ``wake()`` is called, not at the next tick."""
        self._told = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864_000
            # asyncio.wait, not wait_for: a cancel that comes as the event is set
            # is not lost (Python 3.11's wait_for returns then)
            told = asyncio.ensure_future(self._told.wait())
            try:
                await asyncio.wait((told,), timeout=self.tick)
            finally:
                told.cancel()
            self._told.clear()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's, but the signal that stopped the server is raised again after it
        once, not once for every signal received, and once Ctrl-C stopped it, more of
        them are ignored while the process ends. A second and a third Ctrl-C, raised
        again while the event loop closed, left it half closed with a traceback
        (``RuntimeError: Cannot close a running event loop``); one pressed as the
        interpreter exited printed a ``KeyboardInterrupt`` traceback."""
        if threading.current_thread() is not threading.main_thread():
            yield  # signals are only for the main thread
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in HANDLED_SIGNALS}
        try:
            yield
        finally:
            stopped_by_ctrl_c = signal.SIGINT in self._captured_signals
            for sig, handler in original.items():
                signal.signal(sig, signal.SIG_IGN if sig == signal.SIGINT and stopped_by_ctrl_c
                              else handler)
        if self._captured_signals:
            signal.raise_signal(self._captured_signals[0])

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """uvicorn's (SIGINT or SIGTERM: stop; SIGINT again: stop at once), then the
        loop woken to act on it now."""
        try:
            super().handle_exit(sig, frame)
        finally:
            self.wake()

    def wake(self) -> None:
        """Make the loop look now, from any thread or a signal handler (whose task,
        or ``should_exit``, would otherwise wait for the selector to return)."""
        if self._loop is not None and self._told is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                self._loop.call_soon_threadsafe(self._told.set)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's, with ``close_connections``' prompter wait."""
        await self.close_connections(sockets)
        if not self.force_exit:
            await self.lifespan.shutdown()

    async def close_connections(self, sockets: list[socket.socket] | None) -> None:
        """uvicorn's shutdown up to the app's: no new connections, the open ones told
        to close (a response under way is finished first), then their connections and
        tasks awaited up to ``timeout_graceful_shutdown`` (then cancelled, logged as
        uvicorn logs it); a forced exit stops the wait."""
        _log.info("Shutting down")
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                await self._closed()
        except TimeoutError:
            tasks = self.server_state.tasks
            _log.error("Cancel %s running task(s), timeout graceful shutdown exceeded",
                       len(tasks))
            for task in tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")

    async def _closed(self) -> None:
        state = self.server_state
        while (state.connections or state.tasks) and not self.force_exit:
            await asyncio.sleep(0.005)
        for server in self.servers:
            await server.wait_closed()
