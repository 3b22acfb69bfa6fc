"""A message another process writes for a turn running here reaches the turn once,
however its write falls between this process's two reads (the log's new events,
then the task): never skipped by the run moving on past it, never handed twice."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from interlingua.core.model import HistoryAppended, Message, Role, TextPart
from interlingua.core.task_log import StoredEvent
from interlingua.server.peers import Peers
from interlingua.server.run import Writer


def _message(text: str) -> Message:
    return Message(message_id=text, role=Role.USER, parts=[TextPart(text=text)])


class RacingStore:
    """A log whose next write lands just after a read of its events (another
    process's write, between this process's two reads)."""

    def __init__(self) -> None:
        self.log: list[StoredEvent] = [StoredEvent(3, HistoryAppended(_message("one")))]
        self.then: list[StoredEvent] = [StoredEvent(4, HistoryAppended(_message("two")))]

    async def read_events(self, scope: Any, task_id: str, after: int) -> list[StoredEvent]:
        got = [e for e in self.log if e.seq > after]
        self.log += self.then
        self.then = []
        return got

    async def get_task(self, scope: Any, task_id: str, **_: Any) -> Any:
        task = SimpleNamespace(id=task_id, status=SimpleNamespace(state=None))
        return SimpleNamespace(task=task, version=self.log[-1].seq)


def test_a_message_written_between_the_two_reads_is_handed_over_once() -> None:
    async def go() -> list[str]:
        store = RacingStore()
        writer = Writer(store, None, lease=lambda: None)  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()
        run = SimpleNamespace(scope=None, task=SimpleNamespace(id="t"), version=2,
                              lock=asyncio.Lock(), inbox=asyncio.Queue(),
                              turn=loop.create_future())

        def moved_on(task: Any, version: int) -> None:
            run.version = version

        run.moved_on = moved_on
        runs = SimpleNamespace(by_key={"k": run})
        peers = Peers(store, None, runs, writer)  # type: ignore[arg-type]
        for seq in (3, 4):  # the news of each write, in order
            peers.remote_write("k", seq)
            while peers._checks:
                await asyncio.gather(*peers._checks)
        handed = []
        while not run.inbox.empty():
            handed.append(run.inbox.get_nowait().message_id)
        return handed

    assert asyncio.run(go()) == ["one", "two"]


def test_a_runs_key_is_the_bus_key_of_its_task() -> None:
    """``Run`` writes its key without calling ``task_key`` (a call fewer per send):
    the bus and ``Runs.by_key`` find a run by ``task_key``, so the two must agree."""
    from interlingua.bus.base import task_key
    from interlingua.core.model import Task, TaskState, TaskStatus
    from interlingua.server.run import Run
    from interlingua.stores.base import Scope

    writer = Writer(None, None, lease=lambda: None)  # type: ignore[arg-type]
    task = Task(id="t\x001", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    for scope in (Scope(), Scope(tenant="a", owner="b")):
        run = Run(writer, scope, task, 1, True, "1.0", None)  # type: ignore[arg-type]
        assert run.key == task_key(scope, task.id)
