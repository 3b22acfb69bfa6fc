"""LazyEvent behaves as asyncio.Event does, and waits on two events with one future."""

from __future__ import annotations

import asyncio
import sys

import pytest

from interlingua.signals import LazyEvent, Signal


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
