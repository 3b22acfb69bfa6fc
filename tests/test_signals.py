"""LazyEvent behaves as asyncio.Event does, and waits on two events with one future."""

from __future__ import annotations

import asyncio
import sys

import pytest

from interlingua.signals import DONE, LazyEvent, Mutex, Signal


async def test_waiters_wake_when_it_is_set() -> None:
    event = LazyEvent()
    assert isinstance(event, asyncio.Event) and not event.is_set()
    waiters = [asyncio.create_task(event.wait()) for _ in range(3)]
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiters)
    assert "waiters:3" in repr(event)
    event.set()
    assert await asyncio.gather(*waiters) == [True, True, True]
    assert event.is_set() and await event.wait() is True
    event.clear()
    assert not event.is_set()


async def test_a_cancelled_waiter_is_removed() -> None:
    event = LazyEvent()
    waiter = asyncio.create_task(event.wait())
    other = asyncio.create_task(event.wait())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert "waiters:1" in repr(event)
    event.set()
    assert await other is True


async def test_a_bare_future_filed_with_two_events_is_done_by_either_and_can_be_withdrawn() -> None:
    loop = asyncio.get_running_loop()
    news, tick = LazyEvent(), LazyEvent()
    fut: asyncio.Future[bool] = loop.create_future()
    news.add_waiter(fut)
    tick.add_waiter(fut)
    tick.set()
    assert await fut is True
    assert "waiters:1" in repr(news)  # still filed with the one that did not fire
    news.remove_waiter(fut)
    assert "waiters:0" in repr(news)
    news.remove_waiter(fut)  # withdrawing twice is harmless
    late: asyncio.Future[bool] = loop.create_future()
    late.cancel()
    news.add_waiter(late)
    news.set()  # a waiter that gave up is skipped, not completed
    assert late.cancelled()


async def test_woken_is_over_once_set_and_done_at_once_when_fired() -> None:
    signal = Signal()
    woken = [signal.woken(), signal.woken()]
    gone = signal.woken()
    assert "waiters:3" in repr(signal)
    waiting = asyncio.ensure_future(gone)
    await asyncio.sleep(0)
    waiting.cancel()  # a waiter that gave up stays listed until the signal fires
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert "waiters:3" in repr(signal)
    assert not any(w.done() for w in woken)  # type: ignore[attr-defined]
    signal.set()
    assert [await w for w in woken] == [True, True]
    assert "waiters:0" in repr(signal)
    assert signal.woken() is DONE


async def test_a_signal_is_the_same_event_in_less_room() -> None:
    signal = Signal()
    assert not hasattr(signal, "__dict__")
    assert sys.getsizeof(signal) < sys.getsizeof(LazyEvent())
    waiter = asyncio.create_task(signal.wait())
    bare: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    signal.add_waiter(bare)
    await asyncio.sleep(0)
    assert not waiter.done() and "waiters:2" in repr(signal)
    signal.set()
    assert await waiter is True and bare.result() is True
    assert signal.is_set() and await signal.wait() is True


# ------------------------------------------------------------------- DONE


async def test_done_is_over_at_once_every_time_it_is_awaited() -> None:
    for _ in range(3):
        assert await DONE is None
    assert not asyncio.iscoroutine(DONE)
    # awaited as a task would await it, it does not suspend
    it = DONE.__await__()
    with pytest.raises(StopIteration):
        next(it)


# ------------------------------------------------------------------ Mutex


async def _enter(lock: Mutex, name: str, entered: list[str]) -> None:
    async with lock:
        entered.append(name)


async def test_a_free_mutex_is_taken_and_given_back() -> None:
    lock = Mutex()
    assert not lock.locked()
    async with lock:
        assert lock.locked()
    assert not lock.locked()
    with pytest.raises(ValueError):
        async with lock:
            raise ValueError("inside")
    assert not lock.locked()  # given back on the way out of an error too
    with pytest.raises(RuntimeError):
        await lock.__aexit__(None, None, None)  # not held


async def test_waiters_get_the_mutex_in_the_order_they_came() -> None:
    lock = Mutex()
    order: list[int] = []

    async def take(n: int) -> None:
        async with lock:
            order.append(n)
            await asyncio.sleep(0)  # hold it across a loop turn
            assert lock.locked()

    async with lock:
        tasks = [asyncio.create_task(take(n)) for n in range(4)]
        await asyncio.sleep(0)
        assert "waiters:4" in repr(lock)
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3]
    assert not lock.locked()


async def test_the_holder_leaving_cannot_take_it_back_before_a_waiter() -> None:
    # Handed over, not set free: the next holder is the one that waited.
    lock = Mutex()
    order: list[str] = []

    async with lock:
        task = asyncio.create_task(_enter(lock, "waiter", order))
        await asyncio.sleep(0)
    async with lock:  # again at once, in the same step
        order.append("holder again")
    await task
    assert order == ["waiter", "holder again"]


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    lock = Mutex()
    entered: list[str] = []
    async with lock:
        first = asyncio.create_task(_enter(lock, "first", entered))
        second = asyncio.create_task(_enter(lock, "second", entered))
        await asyncio.sleep(0)
        first.cancel()
        await asyncio.sleep(0)
        assert "waiters:1" in repr(lock)
    await asyncio.wait_for(second, 5)
    assert first.cancelled() and entered == ["second"]
    assert not lock.locked()


async def test_a_waiter_cancelled_after_the_handover_passes_the_mutex_on() -> None:
    lock = Mutex()
    entered: list[str] = []
    await lock.__aenter__()
    first = asyncio.create_task(_enter(lock, "first", entered))
    second = asyncio.create_task(_enter(lock, "second", entered))
    await asyncio.sleep(0)
    await lock.__aexit__(None, None, None)  # handed to first, which has not run yet
    first.cancel()
    await asyncio.wait_for(asyncio.gather(first, second, return_exceptions=True), 5)
    assert first.cancelled() and entered == ["second"]
    assert not lock.locked()
