"""The grace a new task's executor has to say something before the task is
written as ``submitted`` without it.

A new task is written together with its executor's first event, so that a
quick agent's task is one transaction and its first answer may still be a
bare message. An executor slow to say anything (a model before its first
token) would leave its callers with nothing at all meanwhile; once the grace
is over, its task is written on its own, and streams get it at once.

One timer serves every waiting task: the grace is the same for all, so they
fall due in the order they began. Tasks due within ``SLACK`` of each other are
written together, so that their creations share one group commit.

The timer holds each run weakly: a quick turn ends long before its grace, and
its run (task, history, request) is then freed at once, not a grace later,
when the memory it took has gone cold.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque

from .run import Run, Writer

__all__ = ["SLACK", "Grace"]

#: seconds early a task may be written, to share the write of one due before it
SLACK = 0.001


class Grace:
    """Writes each watched run's new task as submitted ``seconds`` after it began,
    unless it was written (or answered with a bare message) before."""

    def __init__(self, writer: Writer, seconds: float) -> None:
        self.writer = writer
        self.seconds = seconds
        #: (when due, run), in the order due
        self._due: deque[tuple[float, weakref.ref[Run]]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        #: the writes under way (kept referenced until they end)
        self._writing: set[asyncio.Task[None]] = set()

    def watch(self, run: Run) -> None:
        loop = asyncio.get_running_loop()
        at = loop.time() + self.seconds
        self._due.append((at, weakref.ref(run)))
        if self._timer is None:
            self._timer = loop.call_at(at, self._fire)

    def _fire(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        until = loop.time() + SLACK
        due = self._due
        ready: list[Run] = []
        while due and due[0][0] <= until:
            run = due.popleft()[1]()
            if run is not None and self.writer.waits_for_first_event(run):
                ready.append(run)
        if due:
            self._timer = loop.call_at(due[0][0], self._fire)
        if ready:
            # One task for them all: their writes begin together.
            task = loop.create_task(self._write(ready))
            self._writing.add(task)
            task.add_done_callback(self._writing.discard)

    async def _write(self, runs: list[Run]) -> None:
        await asyncio.gather(*(self.writer.submit(run) for run in runs))

    def close(self) -> None:
        """Forget every waiting run (the server stops)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due.clear()
