"""LazyEvent behaves as asyncio.Event does, and waits on two events with one future."""

from __future__ import annotations

import asyncio

import pytest

from interlingua.core.lazy_event import LazyEvent


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


async def test_wait_either_says_which_event_ended_it_and_leaves_no_waiter() -> None:
    news, tick = LazyEvent(), LazyEvent()
    waiting = asyncio.create_task(news.wait_either(tick))
    await asyncio.sleep(0)
    tick.set()
    assert await waiting is False
    assert "waiters:0" in repr(news)
    waiting = asyncio.create_task(news.wait_either(LazyEvent()))
    await asyncio.sleep(0)
    news.set()
    assert await waiting is True
    assert await news.wait_either(tick) is True  # already set: at once
