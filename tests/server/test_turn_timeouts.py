"""A turn's inactivity limit when its last report and the limit fall due together."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import pytest

from interlingua.server.turns import ExecutorTimeout, _timed


def test_a_report_that_comes_as_the_inactivity_limit_fires_logs_no_error() -> None:
    """The limit's timer and the activity check fall due in one turn of the loop (the
    executor held the loop past both): the limit fires first, and the check then sees
    the late report. It must leave the expiring limit alone (rescheduling it raised in
    the loop's callback, logged as an error), and the turn ends as timed out."""
    reports = [0]
    errors: list[dict[str, Any]] = []

    async def executor(ctx: object) -> None:
        await asyncio.sleep(0.17)  # three quiet checks; the fourth falls due at ~0.2 s
        reports[0] += 1
        time.sleep(0.1)  # holds the loop past the limit (0.2 s) and that check
        await asyncio.sleep(5)

    async def run() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, context: errors.append(context))
        limits = SimpleNamespace(run_timeout=None, idle_timeout=0.2)
        ctx = SimpleNamespace(deadline=None)
        with pytest.raises(ExecutorTimeout, match="inactivity"):
            await _timed(limits, executor, ctx, lambda: reports[0])  # type: ignore[arg-type]
        await asyncio.sleep(0.12)  # a check left behind would run by now

    asyncio.run(run())
    assert errors == []


@pytest.mark.parametrize(("run_timeout", "idle_timeout", "says"),
                         [(None, 0.2, "inactivity"), (0.3, None, "run timeout"),
                          (0.3, 5.0, "run timeout")])
def test_a_silent_executor_is_stopped_at_the_limit(run_timeout: float | None,
                                                   idle_timeout: float | None,
                                                   says: str) -> None:
    """An executor that reports nothing at all still meets its limit, at the limit's
    time (the limit is a point on the loop's clock, not a delay from it)."""

    async def executor(ctx: object) -> None:
        await asyncio.sleep(10)

    async def run() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        limits = SimpleNamespace(run_timeout=run_timeout, idle_timeout=idle_timeout)
        with pytest.raises(ExecutorTimeout, match=says):
            await _timed(limits, executor, SimpleNamespace(deadline=None),  # type: ignore[arg-type]
                         lambda: 0)
        return loop.time() - start

    assert asyncio.run(run()) < 3
