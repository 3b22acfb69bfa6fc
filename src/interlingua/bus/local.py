"""The in-process bus: wake-ups and recent events for readers in this process."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence

from ..core.task_log import StoredEvent
from ..signals import DONE, Signal

__all__ = ["LocalBus"]

# Recent events kept per task (at least this many, up to twice as many) for
# readers that are only slightly behind; a reader further behind reads the
# store, which always has everything.
RECENT_EVENTS = 512


class _Topic:
    __slots__ = ("changed", "latest", "recent", "subscribers")

    def __init__(self, latest: int) -> None:
        self.latest = latest
        # A list, trimmed in halves: a deque makes a 64-slot block at once, and
        # every open stream's task has a topic.
        self.recent: list[StoredEvent] = []
        self.changed = Signal()
        self.subscribers = 0


class _Clock:
    """Ticks for every reader that waits with the same timeout.

    A timer per wait would cost each idle stream its timer handle, and a
    streaming reader a timer armed and cancelled per batch of events. Ticks
    come every half timeout while someone waits, so a wait with a timeout
    ends between one and one and a half times that timeout after it began.
    """

    __slots__ = ("_period", "_round", "_timer")

    def __init__(self, timeout: float) -> None:
        self._period = timeout / 2
        self._round = Signal()
        self._timer: asyncio.TimerHandle | None = None

    def round(self) -> Signal:
        """The event the next tick sets."""
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._period, self._tick)
        return self._round

    def _tick(self) -> None:
        # Not re-armed here: the woken readers that still wait ask for the next round.
        self._timer = None
        done, self._round = self._round, Signal()
        done.set()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._round.set()


class _Subscription:
    __slots__ = ("_bus", "_closed", "_key", "_topic", "_waiter", "_waiting_on")

    def __init__(self, bus: LocalBus, key: str, topic: _Topic) -> None:
        self._bus = bus
        self._key = key
        self._topic = topic
        self._closed = False
        # the future handed out by the last wake_on_news, and the events it is filed with
        self._waiter: asyncio.Future[bool] | None = None
        self._waiting_on: tuple[Signal, ...] = ()

    @property
    def latest(self) -> int:
        return self._topic.latest

    def wake_on_news(self, after: int, timeout: float | None = None) -> asyncio.Future[bool] | None:
        self._forget_waiter()
        if self._topic.latest > after:
            return None
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiter, self._waiting_on = fut, self._file(fut, timeout)
        return fut

    def _file(self, fut: asyncio.Future[bool], timeout: float | None) -> tuple[Signal, ...]:
        # Woken by news, or by the bus's shared clock for this timeout: no timer
        # (and no task) per waiting reader.
        events: tuple[Signal, ...] = (self._topic.changed,) if timeout is None else \
            (self._topic.changed, self._bus._clock(timeout).round())
        for event in events:
            event.add_waiter(fut)
        return events

    def _forget_waiter(self) -> None:
        fut = self._waiter
        if fut is not None:
            # an event that fired has let go of it already; the others still hold it
            for event in self._waiting_on:
                event.remove_waiter(fut)
            self._waiter, self._waiting_on = None, ()

    def take(self, after: int) -> list[StoredEvent] | None:
        topic = self._topic
        recent = topic.recent
        # None also when the log is known to go further than the events held
        # (news from another process, or a subscriber that read ahead): the
        # reader reads the store rather than wait for events that are not coming.
        if not recent or recent[0].seq > after + 1 or recent[-1].seq < topic.latest:
            return None
        if recent[-1].seq <= after:
            return []
        # Events arrive in seq order, so the tail past ``after`` is contiguous.
        start = after + 1 - recent[0].seq
        if topic.subscribers <= 1:
            # A lone reader now has all there is, and nobody else is behind: keep
            # nothing for an idle stream to hold (a reader who comes later reads
            # the store first). It nearly always takes the whole list: handed
            # over as it is, not copied.
            topic.recent = []
            return recent[start:] if start else recent
        return recent[start:]

    def alone(self) -> bool:
        return self._topic.subscribers <= 1

    def close(self) -> None:
        self._forget_waiter()
        if not self._closed:
            self._closed = True
            self._bus._release(self._key, self._topic)


class LocalBus:
    """Fan-out within one process. Topics exist only while someone listens."""

    def __init__(self) -> None:
        self._topics: dict[str, _Topic] = {}
        self._clocks: dict[float, _Clock] = {}

    def _clock(self, timeout: float) -> _Clock:
        clock = self._clocks.get(timeout)
        if clock is None:
            clock = self._clocks[timeout] = _Clock(timeout)
        return clock

    def publish(self, key: str, events: Sequence[StoredEvent], *,
                created: bool = False) -> Awaitable[None]:
        # nothing to wait for here: no coroutine (every write of a task comes here)
        topic = self._topics.get(key)
        if topic is not None and events:
            self._hold(topic, events, numbered_here=True)
        return DONE

    def deliver(self, key: str, events: Sequence[StoredEvent]) -> bool:
        """Events another process wrote (committed, in seq order), carried by its
        news: held for the readers here, as if published here, when they continue
        what this process knows of the log; otherwise only their news is taken
        (``announce``), and the readers read the store. Returns whether anyone
        here listens to ``key``."""
        topic = self._topics.get(key)
        if topic is None:
            return False
        if not events:
            return True
        recent = topic.recent
        last = recent[-1].seq if recent else topic.latest
        if events[0].seq > last + 1:
            return self.announce(key, events[-1].seq)  # a gap: the store has the rest
        self._hold(topic, events)
        return True

    def _hold(self, topic: _Topic, events: Sequence[StoredEvent], *,
              numbered_here: bool = False) -> None:
        """Keep what is new of ``events``; ``numbered_here``: a batch this process
        wrote, numbered in order (what another process sent is looked at one by one)."""
        recent = topic.recent
        # (emptied by a lone reader who took it all: nothing at or before
        # ``latest`` may come back, or the tail would not be contiguous)
        last = recent[-1].seq if recent else topic.latest
        if numbered_here and events[0].seq > last:  # nearly always: all of them new
            recent.extend(events)
            last = events[-1].seq
        else:
            for ev in events:
                if ev.seq > last:
                    recent.append(ev)
                    last = ev.seq
        if len(recent) > 2 * RECENT_EVENTS:
            del recent[: len(recent) - RECENT_EVENTS]
        if last > topic.latest:
            topic.latest = last
        # Wake everyone waiting on the old Event; later waiters get a fresh one.
        # (With nobody waiting, as at a new task's first write, it stays unfired.)
        changed = topic.changed
        if changed._waiting:
            topic.changed = Signal()
            changed.set()

    def announce(self, key: str, seq: int) -> bool:
        """News from elsewhere (another process wrote): the log of ``key`` has
        events up to ``seq``. Readers here are woken to read them from the store.
        Returns whether anyone here listens to ``key``."""
        topic = self._topics.get(key)
        if topic is None:
            return False
        if seq > topic.latest:
            topic.latest = seq
            # what is held no longer reaches the end of the log
            topic.recent.clear()
            changed = topic.changed
            topic.changed = Signal()
            changed.set()
        return True

    def keys(self) -> list[str]:
        """The keys someone here listens to."""
        return list(self._topics)

    def latest(self, key: str) -> int | None:
        topic = self._topics.get(key)
        return None if topic is None else topic.latest

    def subscribe(self, key: str, *, seen: int = 0) -> _Subscription:
        topic = self._topics.get(key)
        if topic is None:
            topic = self._topics[key] = _Topic(seen)
        elif seen > topic.latest:
            # The subscriber read further in the log than this topic has heard.
            topic.latest = seen
        topic.subscribers += 1
        return _Subscription(self, key, topic)

    def _release(self, key: str, topic: _Topic) -> None:
        topic.subscribers -= 1
        if topic.subscribers <= 0 and self._topics.get(key) is topic:
            del self._topics[key]

    async def close(self) -> None:
        for topic in self._topics.values():
            topic.changed.set()
        self._topics.clear()
        for clock in self._clocks.values():
            clock.stop()
        self._clocks.clear()
