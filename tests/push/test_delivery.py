"""Delivery through the outbox: order, backoff, dead letters, coalescing, several configs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from interlingua import Agent, Context
from interlingua.core.calls import DeletePushConfig, SetPushConfig
from interlingua.core.model import PushConfig, Task
from interlingua.server import RequestInfo
from interlingua.server.push import Attempt

from .helpers import FakeClock, Hook, dev_settings, echo, send, serve_hook, start_engine, until

V1 = RequestInfo(dialect="1.0")
V03 = RequestInfo(dialect="0.3")


async def stream_seqs(engine: Any, task_id: str) -> list[int]:
    """The seqs of the task's events that a v1.0 config is owed (not history)."""
    from interlingua.core.model import HistoryAppended
    from interlingua.stores import Scope

    events = await engine.store.read_events(Scope(), task_id)
    return [e.seq for e in events if not isinstance(e.event, HistoryAppended)]


async def test_500_twice_then_200_arrives_in_order_after_backoff() -> None:
    clock = FakeClock()
    attempts: list[Attempt] = []

    def respond(hook: Hook, headers: dict[str, str], body: bytes, path: str) -> int:
        return 500 if hook.count(headers["x-a2a-notification-id"]) < 2 else 200

    hook = Hook(respond)
    settings = dev_settings(attempts=attempts, clock=clock, sleep=clock.sleep,
                            random=lambda: 0.5, jitter=0.5, backoff_base=1.0,
                            backoff_max=60.0, poll_interval=5.0, max_attempts=5)
    with serve_hook(hook) as url:
        engine = await start_engine(echo, settings)
        try:
            task = await engine.handle(send("hello", url), V1)
            assert isinstance(task, Task)
            expected = await stream_seqs(engine, task.id)
            assert await engine.push.idle(15)
        finally:
            await engine.stop()
    # every event arrived once, in log order, each after two failures
    delivered = hook.delivered()
    assert [r.seq for r in delivered] == expected
    assert [r.status for r in hook.requests] == [500, 500, 200] * len(expected)
    first = [a for a in attempts if a.seq == expected[0]]
    assert [a.outcome for a in first] == ["retry", "retry", "delivered"]
    # backoff: base 1 s doubling, less jitter 0.5 x random 0.5 -> 0.75 s, then 1.5 s
    assert [a.delay for a in first] == [0.75, 1.5, None]
    assert first[1].at >= first[0].retry_at  # never tried before it was due
    assert first[2].at >= first[1].retry_at
    # the next event was not sent before the first was delivered
    assert hook.requests.index(delivered[1]) > hook.requests.index(delivered[0])


def test_backoff_schedule_doubles_is_capped_and_jittered() -> None:
    from interlingua.server.push.dispatcher import Dispatcher

    def schedule(rnd: float, retry_after: float | None = None) -> list[float]:
        s = dev_settings(backoff_base=2.0, backoff_max=30.0, jitter=0.5, random=lambda: rnd)
        d = Dispatcher.__new__(Dispatcher)
        d.settings = s
        return [d.backoff(n, retry_after) for n in range(1, 7)]

    assert schedule(0.0) == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert schedule(0.999) == pytest.approx([x * (1 - 0.5 * 0.999) for x in
                                             [2.0, 4.0, 8.0, 16.0, 30.0, 30.0]])
    assert schedule(0.0, retry_after=10.0)[:3] == [10.0, 10.0, 10.0]  # Retry-After wins
    assert schedule(0.0, retry_after=999.0)[0] == 30.0  # but is capped too


async def test_dead_after_max_attempts_while_later_deliveries_go_on() -> None:
    attempts: list[Attempt] = []
    failing = {"on": True}

    def respond(hook: Hook, headers: dict[str, str], body: bytes, path: str) -> int:
        first = headers["x-a2a-notification-id"].split(":")[2] == "1"
        return 503 if first and failing["on"] else 200

    hook = Hook(respond)
    with serve_hook(hook) as url:
        engine = await start_engine(echo, dev_settings(attempts=attempts, max_attempts=3))
        try:
            task = await engine.handle(send("x", url), V1)
            assert isinstance(task, Task)
            expected = await stream_seqs(engine, task.id)
            assert await engine.push.idle(10)
            assert [r.seq for r in hook.delivered()] == expected[1:]
            [dead] = await engine.push.dead_letters()
            assert (dead.task_id, dead.seq, dead.attempts, dead.last_error) == (
                task.id, 1, 3, "HTTP 503")
            assert [a.outcome for a in attempts if a.seq == 1] == ["retry", "retry", "dead"]
            assert await engine.push.outbox_counts() == {"pending": 0, "dead": 1}
            # the receiver is fixed; the dead letter is sent again on request
            failing["on"] = False
            assert await engine.push.redrive(dead.id) is True
            assert await engine.push.idle(10)
            assert [r.seq for r in hook.delivered()][-1] == 1
            assert await engine.push.dead_letters() == []
        finally:
            await engine.stop()


async def _one_task_pushed(hook: Hook, settings: Any) -> None:
    """A task made with a push config to ``hook``, its deliveries run to their end."""
    with serve_hook(hook) as url:
        engine = await start_engine(echo, settings)
        try:
            task = await engine.handle(send("x", url), V1)
            assert isinstance(task, Task)
            assert await engine.push.idle(10)
        finally:
            await engine.stop()


@pytest.mark.parametrize(("status", "tries", "outcome"),
                         [(404, 1, "dead"), (401, 1, "dead"), (408, 3, "dead"),
                          (429, 3, "dead"), (502, 3, "dead")])
async def test_4xx_is_final_but_408_429_and_5xx_are_retried(status: int, tries: int,
                                                             outcome: str) -> None:
    attempts: list[Attempt] = []
    await _one_task_pushed(Hook(lambda h, headers, b, p: status),
                           dev_settings(attempts=attempts, max_attempts=3))
    first = [a for a in attempts if a.seq == 1]
    assert len(first) == tries and first[-1].outcome == outcome
    assert first[-1].status == status


@pytest.mark.parametrize("retry_after", ["\u00b2", "\u0661\u0662", "soon"],
                         ids=["superscript-two", "arabic-indic-digits", "a-word"])
async def test_a_retry_after_that_is_not_ascii_seconds_nor_a_date_is_ignored(
        retry_after: str) -> None:
    # "²" passes str.isdigit() and float() refuses it; "١٢" passes both, and HTTP's
    # delay-seconds is ASCII digits: neither may stop or stretch the retries
    attempts: list[Attempt] = []
    # a cap far above the backoff: a Retry-After taken as seconds would show
    await _one_task_pushed(Hook(lambda h, headers, b, p: (503, [("retry-after", retry_after)])),
                           dev_settings(attempts=attempts, max_attempts=3, backoff_base=0.02,
                                        backoff_max=60.0))
    first = [a for a in attempts if a.seq == 1]
    assert [a.outcome for a in first] == ["retry", "retry", "dead"]
    assert all(a.delay is not None and a.delay < 1.0 for a in first[:2])
    assert first[-1].error == "HTTP 503"


async def test_a_send_that_fails_unexpectedly_counts_as_an_attempt() -> None:
    attempts: list[Attempt] = []
    with serve_hook(Hook()) as url:
        engine = await start_engine(echo, dev_settings(attempts=attempts, max_attempts=2))

        async def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the sender broke")

        engine.push.dispatcher.sender.post = broken  # type: ignore[union-attr,method-assign]
        try:
            task = await engine.handle(send("x", url), V1)
            assert isinstance(task, Task)
            assert await engine.push.idle(10)
            [dead, *_] = await engine.push.dead_letters()
            assert (dead.attempts, dead.last_error) == (2, "could not send: RuntimeError")
        finally:
            await engine.stop()
    assert [a.outcome for a in attempts if a.seq == 1] == ["retry", "dead"]


async def test_a_store_outage_is_one_warning_and_every_attempt_is_counted(
        caplog: pytest.LogCaptureFixture) -> None:
    """While the store is down the dispatcher says so once (no traceback at every
    poll), and a POST the store could not record still counts as an attempt."""
    from interlingua.stores import StoreUnavailable

    attempts: list[Attempt] = []
    down = True
    with serve_hook(Hook()) as url:
        engine = await start_engine(echo, dev_settings(attempts=attempts, poll_interval=0.02))
        store = engine.push.dispatcher.store  # type: ignore[union-attr]
        claim, done = store.claim_deliveries, store.delivery_done

        async def claim_or_fail(*args: Any) -> Any:
            if down:
                raise StoreUnavailable("the store is out of reach")
            return await claim(*args)

        async def done_then_fail(delivery_id: int) -> None:
            await done(delivery_id)
            raise StoreUnavailable("the store went away before the commit was heard")

        store.claim_deliveries = claim_or_fail
        try:
            with caplog.at_level("WARNING", logger="interlingua.push"):
                task = await engine.handle(send("x", url, blocking=True), V1)
                assert isinstance(task, Task)
                await asyncio.sleep(0.3)  # about 15 polls while the store is down
                assert attempts == []
                store.delivery_done = done_then_fail
                down = False
                await until(lambda: bool(attempts))
                await asyncio.sleep(0.1)
        finally:
            store.delivery_done = done
            await engine.stop()
    messages = [r.getMessage() for r in caplog.records]
    assert len([m for m in messages if "store is unavailable" in m]) == 1, messages
    assert any("store is back" in m for m in messages), messages
    assert not [r for r in caplog.records if r.levelname == "ERROR" or r.exc_info]
    assert attempts[0].outcome == "delivered"  # counted though its record failed
    assert any("did not record" in m for m in messages), messages


async def _long_stream(ctx: Context) -> None:
    await ctx.update("streaming")
    aid = None
    for i in range(10_000):
        aid = await ctx.artifact(f"{i};", artifact_id=aid, append=aid is not None,
                                 last_chunk=i == 9_999)
        if i % 1000 == 999:
            await ctx.update(f"{i + 1} chunks")
    await ctx.complete("all done")


streamer = Agent("Streamer", "Streams a lot.", _long_stream, push_notifications=True)


async def test_whole_task_deliveries_queued_behind_a_slow_one_are_coalesced() -> None:
    hook = Hook()
    hook.gate.clear()  # the receiver holds the first notification ...
    with serve_hook(hook) as url:
        engine = await start_engine(streamer, dev_settings())
        try:
            task = await engine.handle(send("go", url, blocking=False), V03)
            assert isinstance(task, Task)
            await until(lambda: engine.runs.by_key == {}, timeout=60)  # ... until the task is done
            hook.gate.set()
            assert await engine.push.idle(10)
        finally:
            await engine.stop()
    bodies = [r.json() for r in hook.delivered()]
    # 10,000 chunks and 12 status changes: two whole-task notifications, not thousands
    assert len(bodies) == 2
    assert bodies[0]["kind"] == "task" and bodies[0]["status"]["state"] == "submitted"
    last = bodies[1]
    assert last["status"]["state"] == "completed"
    assert len(last["artifacts"][0]["parts"]) == 10_000
    assert last["artifacts"][0]["parts"][-1]["text"] == "9999;"


async def test_several_configs_each_get_their_own_dialect_and_delete_stops_one() -> None:
    release = asyncio.Event()

    async def waits(ctx: Context) -> None:
        await ctx.update("waiting")
        await release.wait()
        await ctx.complete("done")

    agent = Agent("Waits", "Waits.", waits, push_notifications=True)
    h1, h2 = Hook(), Hook()
    with serve_hook(h1) as u1, serve_hook(h2) as u2:
        engine = await start_engine(agent, dev_settings())
        try:
            task = await engine.handle(send("x", u1, blocking=False), V1)
            assert isinstance(task, Task)
            second = await engine.handle(
                SetPushConfig(task_id=task.id, config=PushConfig(url=u2, id="second")), V03)
            assert isinstance(second, PushConfig) and second.id == "second"
            await until(lambda: any(r.json().get("statusUpdate") for r in h1.delivered()))
            await until(lambda: len(h2.delivered()) >= 1)
            await engine.handle(DeletePushConfig(task_id=task.id, config_id="second"), V03)
            release.set()
            await until(lambda: any(
                r.json().get("statusUpdate", {}).get("status", {}).get("state")
                == "TASK_STATE_COMPLETED" for r in h1.delivered()))
            assert await engine.push.idle(10)
        finally:
            await engine.stop()
    # the v1.0 config got StreamResponses, the v0.3 one a Task, until it was deleted
    assert all(set(r.json()) <= {"task", "statusUpdate", "artifactUpdate"} for r in h1.delivered())
    assert all(r.json()["kind"] == "task" for r in h2.delivered())
    assert all(r.json()["status"]["state"] != "completed" for r in h2.delivered())
    assert h1.delivered()[0].headers["content-type"] == "application/a2a+json"
    assert h2.delivered()[0].headers["content-type"] == "application/json"
