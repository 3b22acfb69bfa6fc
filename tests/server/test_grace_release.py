"""The grace timer (server/grace.py) must not keep a finished run alive: a quick
turn's run is freed when the turn ends, not when its grace would have been over."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

import pytest

from interlingua.bus import LocalBus
from interlingua.core.calls import SendConfig, SendMessage
from interlingua.core.model import Message, Role, TaskState, TextPart
from interlingua.core.parts import new_id
from interlingua.server import Agent, Context, Engine, EngineConfig, RequestInfo
from interlingua.stores import open_store

pytestmark = pytest.mark.timeout(30)

REQ = RequestInfo(principal="p")


def _send(text: str, *, blocking: bool = True) -> SendMessage:
    return SendMessage(
        message=Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text=text)]),
        config=SendConfig(blocking=blocking))


@pytest.mark.parametrize("store_url", ["memory://", "sqlite:///:memory:"])
async def test_a_quick_turn_frees_its_run_long_before_its_grace(store_url: str) -> None:
    runs: list[weakref.ref[Any]] = []

    async def quick(ctx: Context) -> None:
        runs.append(weakref.ref(ctx._sink))  # the run the turn writes through
        await ctx.complete(artifact=ctx.text)

    engine = Engine(Agent("t", "t", quick), open_store(store_url), LocalBus(),
                    config=EngineConfig(submit_grace=30.0))
    await engine.start()
    gc.disable()  # freed by its last reference going, not by a collector pass
    try:
        for n in range(3):
            task = await engine.send(_send(f"m{n}"), REQ)
            assert task.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
        for _ in range(5):  # the turns' tasks finish and drop their frames
            await asyncio.sleep(0)
        assert len(runs) == 3
        assert [ref() is None for ref in runs] == [True, True, True]
    finally:
        gc.enable()
        await engine.stop()


async def test_a_slow_first_step_is_still_written_when_its_grace_is_over() -> None:
    """Held weakly, a waiting run is still found by the timer: its live turn holds it."""
    go = asyncio.Event()

    async def slow(ctx: Context) -> None:
        await go.wait()
        await ctx.complete("done")

    engine = Engine(Agent("t", "t", slow), open_store("memory://"), LocalBus(),
                    config=EngineConfig(submit_grace=0.05))
    await engine.start()
    try:
        sending = asyncio.create_task(engine.send(_send("hi"), REQ))
        for _ in range(100):
            await asyncio.sleep(0.01)
            if await _listed(engine):
                break
        listed = await _listed(engine)
        assert [t.status.state for t in listed] == [TaskState.SUBMITTED]
        go.set()
        task = await sending
        assert task.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
    finally:
        go.set()
        await engine.stop()


async def _listed(engine: Engine) -> list[Any]:
    from interlingua.core.calls import ListTasks
    page = await engine.store.list_tasks(REQ.scope, ListTasks())
    return list(page.tasks)
