"""The in-process bus: waits end on news, on their timeout, or when the bus closes."""

from __future__ import annotations

import asyncio

import pytest

from interlingua.bus import LocalBus
from interlingua.bus.local import _Clock
from interlingua.core.model import StatusUpdate, TaskState, TaskStatus
from interlingua.stores.base import StoredEvent


def event(seq: int) -> StoredEvent:
    return StoredEvent(seq, StatusUpdate(task_id="t", context_id="c",
                                         status=TaskStatus(state=TaskState.WORKING)))


async def test_a_wait_with_a_timeout_ends_after_it_and_not_much_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Counted in clock ticks (every half timeout), not in wall time, so a loaded
    # machine cannot make it flaky: the wait ends at the second tick, or at the
    # third when the second came a hair before the deadline.
    ticks = 0
    tick = _Clock._tick

    def counting(self: _Clock) -> None:
        nonlocal ticks
        ticks += 1
        tick(self)

    monkeypatch.setattr(_Clock, "_tick", counting)
    bus = LocalBus()
    sub = bus.subscribe("k")
    assert await sub.wait(0, timeout=0.1) == 0
    # a tick is half the timeout: two are a whole one
    assert ticks in (2, 3), ticks
    await bus.close()


async def test_news_ends_a_wait_at_once_and_many_waits_share_one_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ticks = 0
    tick = _Clock._tick

    def counting(self: _Clock) -> None:
        nonlocal ticks
        ticks += 1
        tick(self)

    monkeypatch.setattr(_Clock, "_tick", counting)
    bus = LocalBus()
    subs = [bus.subscribe("k") for _ in range(50)]
    waits = [asyncio.create_task(s.wait(0, timeout=30)) for s in subs]
    while not bus._clocks:  # every wait has begun once the clock is asked for
        await asyncio.sleep(0)
    for _ in range(3):
        await asyncio.sleep(0)
    assert len(bus._clocks) == 1 and not any(w.done() for w in waits)
    await bus.publish("k", [event(1)])
    assert await asyncio.gather(*waits) == [1] * 50
    assert ticks == 0  # ended by the news, not by the clock (its first tick is 15 s away)
    assert [e.seq for e in subs[0].take(0) or []] == [1]
    await bus.close()


async def test_closing_the_bus_ends_waits() -> None:
    bus = LocalBus()
    sub = bus.subscribe("k")
    waiting = asyncio.create_task(sub.wait(0, timeout=30))
    plain = asyncio.create_task(sub.wait(0))
    await asyncio.sleep(0.01)
    await bus.close()
    assert await asyncio.wait_for(asyncio.gather(waiting, plain), 1) == [0, 0]


async def test_recent_events_stay_bounded_and_contiguous() -> None:
    from interlingua.bus.local import RECENT_EVENTS

    bus = LocalBus()
    sub = bus.subscribe("k")
    for seq in range(1, 3 * RECENT_EVENTS + 1):
        await bus.publish("k", [event(seq)])
    assert len(bus._topics["k"].recent) <= 2 * RECENT_EVENTS
    assert sub.take(0) is None  # too far back: read the store
    recent = sub.take(3 * RECENT_EVENTS - 10)
    assert [e.seq for e in recent or []] == list(range(3 * RECENT_EVENTS - 9, 3 * RECENT_EVENTS + 1))
    await bus.close()


async def test_a_lone_reader_that_took_everything_leaves_nothing_kept() -> None:
    bus = LocalBus()
    sub = bus.subscribe("k")
    await bus.publish("k", [event(1), event(2)])
    assert [e.seq for e in sub.take(0) or []] == [1, 2]
    assert bus._topics["k"].recent == []  # an idle stream holds no events
    # a late repeat of a taken event is not kept: the tail stays contiguous
    await bus.publish("k", [event(2)])
    await bus.publish("k", [event(3), event(4)])
    assert [e.seq for e in sub.take(2) or []] == [3, 4]

    # with a second reader, the events stay for whoever is behind
    other = bus.subscribe("k", seen=4)
    await bus.publish("k", [event(5), event(6)])
    assert [e.seq for e in sub.take(4) or []] == [5, 6]
    assert [e.seq for e in other.take(4) or []] == [5, 6]
    assert [e.seq for e in other.take(5) or []] == [6]
    other.close()
    # a reader that comes after the events were let go reads the store
    late = bus.subscribe("k", seen=0)
    assert late.take(0) is None
    await bus.close()
