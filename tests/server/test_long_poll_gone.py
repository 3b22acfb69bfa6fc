"""A held ``GetTask`` (A2A 1.1's long poll) lets go when its caller goes, whatever else
wakes it at that moment (``server/long_poll.py``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from interlingua.core.calls import GetTask
from interlingua.core.model import Task, TaskState, TaskStatus
from interlingua.core.task_log import Scope
from interlingua.server.long_poll import CLIENT_GONE, LongPolls


class _Ticking:
    """A subscription whose every wait ends at once, as the bus's clock ticks: each
    wake of the hold is news, and the caller's going falls among them."""

    latest = 0

    def wake_on_news(self, after: int, timeout: float | None = None) -> asyncio.Future[bool]:
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        fut.set_result(True)
        return fut

    def close(self) -> None:
        pass


class _Bus:
    def subscribe(self, key: str, seen: int = 0) -> _Ticking:
        return _Ticking()


async def test_a_caller_gone_while_the_clock_ticks_is_let_go() -> None:
    """Before: the caller's going, told in the same turn of the loop as a tick, finished a
    wait already finished; the hold waited on, to its maximum wait."""
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING),
                generation=1)

    async def read() -> tuple[Task, int]:
        return task, 1

    async def gone() -> Any:
        await asyncio.sleep(0.05)

    polls = LongPolls(_Bus(), max_wait=5.0)  # type: ignore[arg-type]
    token = CLIENT_GONE.set(gone)
    try:
        began = time.monotonic()
        answered = await polls.hold(GetTask(id="t", current_generation=1), Scope(), read)
    finally:
        CLIENT_GONE.reset(token)
    assert answered is task
    assert time.monotonic() - began < 2, "held past its caller's going"
    assert polls.held == 0
