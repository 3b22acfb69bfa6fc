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


def _counting_ticks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    ticks = [0]
    tick = _Clock._tick

    def counting(self: _Clock) -> None:
        ticks[0] += 1
        tick(self)

    monkeypatch.setattr(_Clock, "_tick", counting)
    return ticks


async def test_a_wait_with_a_timeout_is_woken_by_the_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Counted in clock ticks (every half timeout), not in wall time, so a loaded
    # machine cannot make it flaky.
    ticks = _counting_ticks(monkeypatch)
    bus = LocalBus()
    sub = bus.subscribe("k")
    woken = sub.wake_on_news(0, timeout=0.1)
    assert woken is not None
    await woken
    assert ticks[0] == 1 and sub.latest == 0  # a tick, not news
    await bus.close()


async def test_news_wakes_every_reader_at_once_and_many_share_one_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ticks = _counting_ticks(monkeypatch)
    bus = LocalBus()
    subs = [bus.subscribe("k") for _ in range(50)]
    waits = [s.wake_on_news(0, timeout=30) for s in subs]
    assert len(bus._clocks) == 1 and not any(w is None or w.done() for w in waits)
    await bus.publish("k", [event(1)])
    await asyncio.gather(*(w for w in waits if w is not None))
    assert [s.latest for s in subs] == [1] * 50
    assert ticks[0] == 0  # woken by the news, not by the clock (its first tick is 15 s away)
    assert [e.seq for e in subs[0].take(0) or []] == [1]
    # with news already there, there is nothing to wait for
    assert subs[0].wake_on_news(0, timeout=30) is None
    await bus.close()


async def test_closing_the_bus_wakes_readers() -> None:
    bus = LocalBus()
    sub = bus.subscribe("k")
    timed = sub.wake_on_news(0, timeout=30)
    other = bus.subscribe("k").wake_on_news(0)
    await bus.close()
    assert timed is not None and other is not None
    await asyncio.wait_for(asyncio.gather(timed, other), 1)


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


async def test_a_batch_that_repeats_events_held_adds_only_the_new_ones() -> None:
    bus = LocalBus()
    sub = bus.subscribe("k")
    await bus.publish("k", [event(1), event(2)])
    await bus.publish("k", [event(2), event(3)])  # one held already, one new
    await bus.publish("k", [event(4), event(5)])  # all new
    assert [e.seq for e in bus._topics["k"].recent] == [1, 2, 3, 4, 5]
    assert [e.seq for e in sub.take(0) or []] == [1, 2, 3, 4, 5]
    await bus.close()


async def test_events_from_another_process_are_held_in_order_whatever_order_they_came_in() -> None:
    bus = LocalBus()
    sub = bus.subscribe("k")
    assert bus.deliver("k", [event(1), event(3), event(2), event(4)])
    seqs = [e.seq for e in bus._topics["k"].recent]
    assert seqs == sorted(set(seqs)) and seqs[-1] == 4  # never a step back
    assert sub.latest == 4
    await bus.close()
