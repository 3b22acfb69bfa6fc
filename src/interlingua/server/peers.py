"""What this process hears of other processes' writes, through a shared bus.

A bus shared with other processes (Redis) tells the engine when another process
wrote to a task. When that task's turn runs here, the write may be a cancel
(``CancelTask`` served by another replica), or a message for an agent that
takes messages while it works: the task is read again, a message is handed to
the executor, and a turn whose task was canceled is stopped. The in-process bus
has nothing of the sort.
"""

from __future__ import annotations

import asyncio
import logging

from ..bus.base import Bus
from ..core.model import TaskState
from ..stores.base import Scope, TaskPort
from .run import Run, Runs, Writer

__all__ = ["Peers"]

log = logging.getLogger("interlingua.engine")


class Peers:
    def __init__(self, store: TaskPort, bus: Bus, runs: Runs, writer: Writer) -> None:
        self.writer = writer
        self.store = store
        self.bus = bus
        self.runs = runs
        #: looks at tasks other processes wrote to
        self._checks: set[asyncio.Task[None]] = set()

    async def join(self) -> None:
        """Hand a shared bus what it needs (where a task has got to in the store,
        our listener) and open it."""
        # A shared bus's own methods, which the Bus protocol leaves out: the
        # in-process bus has none of them.
        attach = getattr(self.bus, "attach_versions", None)
        if attach is not None:
            attach(self.version_of)
        if hasattr(self.bus, "on_remote"):  # (shared(): the same test, which mypy reads)
            self.bus.on_remote = self.remote_write
        if hasattr(self.bus, "runs_here"):
            self.bus.runs_here = self.runs_here
        opener = getattr(self.bus, "open", None)
        if opener is not None:
            await opener()

    async def version_of(self, scope: Scope, task_id: str) -> int | None:
        """Where the log of a task has got to in the store (None: no such task)."""
        rec = await self.store.get_task(scope, task_id, history_length=0, include_artifacts=False)
        return None if rec is None else rec.version

    def runs_here(self, key: str) -> bool:
        """Whether the turn of a task runs in this process: its writes then need
        to reach only the readers of other processes, not every process."""
        run = self.runs.by_key.get(key)
        return run is not None and run.turn is not None and not run.turn.done()

    async def look_in_store(self) -> None:
        """Without a shared bus, other processes' writes to the tasks whose turns run
        here (a cancel served there) are found in the store, as ``remote_write`` is told
        of them: a turn canceled elsewhere stops, and its blocking caller is answered."""
        for run in self.runs.all():
            if run.turn is None or run.turn.done() or not run.persisted:
                continue
            version = await self.version_of(run.scope, run.task.id)
            if version is not None:
                self.remote_write(run.key, version)

    def remote_write(self, key: str, seq: int) -> None:
        """Another process wrote to a task: if its turn runs here, that write may
        be a cancel (CancelTask served elsewhere); look, and stop the turn if so."""
        run = self.runs.by_key.get(key)
        if run is None or seq <= run.version or run.turn is None or run.turn.done():
            return
        check = asyncio.get_running_loop().create_task(self._check_cancel(run))
        self._checks.add(check)
        check.add_done_callback(self._checks.discard)

    async def _check_cancel(self, run: Run) -> None:
        try:
            async with run.lock:  # after a write in flight, which then finds it moved on
                # a message written for this turn by another process reaches the executor
                rec = await self.writer.catch_up(run)
        except Exception:  # the executor's next write finds out anyway
            log.warning("task %s: could not read it after news of another process's write",
                        run.task.id)
            return
        if rec is None or rec.task.status.state is not TaskState.CANCELED:
            return
        run.cancel()
