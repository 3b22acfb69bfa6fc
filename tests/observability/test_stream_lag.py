"""A stream's lag, as ``/metrics`` reads it: the events in the log that its reader
has not been handed yet; None once it is closed."""

from __future__ import annotations

import asyncio

from interlingua import Agent, Context
from interlingua.bus import LocalBus
from interlingua.core.calls import SendConfig, SendMessage, SubscribeToTask
from interlingua.core.model import Task
from interlingua.core.parts import user_message
from interlingua.hooks import Hooks
from interlingua.observability.install import Observer
from interlingua.observability.metrics import Metrics
from interlingua.server import Engine, RequestInfo
from interlingua.stores import open_store

go = asyncio.Event()


async def _chunks(ctx: Context) -> None:
    await ctx.update("ready")
    await go.wait()
    for n in range(5):
        await ctx.update(f"step {n}")
    await asyncio.sleep(30)


async def test_lag_counts_events_not_yet_handed_out():
    go.clear()
    engine = Engine(Agent("Chunks", "Works in steps.", _chunks), open_store("memory://"),
                    LocalBus())
    await engine.start()
    try:
        info = RequestInfo(dialect="1.0")
        task = await engine.handle(SendMessage(message=user_message("x"),
                                               config=SendConfig(blocking=False)), info)
        assert isinstance(task, Task)
        stream = await engine.open_stream(SubscribeToTask(id=task.id), info)
        got = stream.poll()
        assert isinstance(got, list) and got  # the task as it is now
        await asyncio.sleep(0.05)  # "ready" is committed by now (0 or 1 behind)
        base = stream.lag
        assert base in (0, 1)
        go.set()
        for _ in range(100):
            if stream.lag == base + 5:
                break
            await asyncio.sleep(0.01)
        assert stream.lag == base + 5
        got = stream.poll()
        assert isinstance(got, list) and len(got) == base + 5
        assert stream.lag == 0
        stream.close()
        assert stream.lag is None
    finally:
        await engine.stop()


async def test_an_open_streams_lag_reaches_the_metrics_through_the_streams_hook():
    """The engine hands each stream it opens to the ``streams`` hook point, where the
    metrics keep it to read its lag when scraped."""
    go.clear()
    hooks = Hooks()
    metrics = Metrics()
    Observer(metrics=metrics).register(hooks)
    engine = Engine(Agent("Chunks", "Works in steps.", _chunks), open_store("memory://"),
                    LocalBus(), hooks=hooks)
    await engine.start()
    try:
        info = RequestInfo(dialect="1.0")
        task = await engine.handle(SendMessage(message=user_message("x"),
                                               config=SendConfig(blocking=False)), info)
        assert isinstance(task, Task)
        stream = await engine.open_stream(SubscribeToTask(id=task.id), info)
        stream.poll()
        go.set()
        for _ in range(100):
            if (stream.lag or 0) >= 5:
                break
            await asyncio.sleep(0.01)
        lag = stream.lag
        assert lag is not None and lag >= 5
        assert f'interlingua_stream_lag_events{{stat="max"}} {lag}' \
            in (await metrics.render()).decode()
        stream.close()
    finally:
        await engine.stop()
