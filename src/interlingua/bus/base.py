"""The bus: how readers of a task's log learn that it has grown.

Writers publish "task K has events up to seq N" *after* the events are
committed to the store. Readers (a blocking send, an SSE stream, the push
dispatcher) wait for a sequence number beyond the one they have seen and then
read the log. A bus may hand over the events themselves as a fast path; the
store stays the source of truth, so a reader that missed a wake-up or fell
behind reads what it lacks from the log.

The in-process bus serves one process; a cross-replica bus (Redis) implements
the same protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from ..core.task_log import Scope, StoredEvent

__all__ = ["Bus", "Subscription", "TaskVersion", "shared", "task_key"]

#: where a task's log has got to: the seq of its last event, or None when there
#: is no such task (a shared bus asks after a reconnection; the store answers)
TaskVersion = Callable[[Scope, str], Awaitable[int | None]]


def shared(bus: object) -> bool:
    """``bus`` is shared with other processes (Redis), and tells of their writes: it
    takes a listener for them (``on_remote``), which the in-process bus has not."""
    return hasattr(bus, "on_remote")


def task_key(scope: Scope, task_id: str) -> str:
    # NUL cannot occur in ids that arrived as JSON strings from a well-behaved
    # peer, and a tenant or owner containing it only harms its own keys.
    return f"{scope.tenant}\x00{scope.owner}\x00{task_id}"


class Subscription(Protocol):
    """A reader's handle on one task's wake-ups."""

    @property
    def latest(self) -> int:
        """The latest seq this subscription knows to be in the log."""
        ...

    def wake_on_news(self, after: int, timeout: float | None = None) -> asyncio.Future[bool] | None:
        """None when the log is known to have events after ``after``; else a future
        that is done once it has, at the next tick of a clock that ticks every half
        ``timeout`` (the caller keeps its own deadline), or when the bus closes,
        whichever is first. Each call drops the future the last one handed out;
        ``close`` drops it too."""
        ...

    def take(self, after: int) -> list[StoredEvent] | None:
        """Events after ``after`` that the bus still holds in memory, or None
        when it cannot supply all of them (then read them from the store)."""
        ...

    def alone(self) -> bool:
        """True while this is the only reader of the task in this process (an
        event's encoding is then not worth keeping for others)."""
        ...

    def close(self) -> None: ...


class Bus(Protocol):
    def publish(self, key: str, events: Sequence[StoredEvent], *,
                created: bool = False) -> Awaitable[None]:
        """Announce committed events (in seq order) of task ``key`` (await it: an
        ``async def``, or a method that hands back an awaitable).

        ``created``: the write created the task. No reader in another process
        can be waiting for it (a reader reads the store before it waits, and the
        task was not there), so a shared bus need only tell this process's.
        """
        ...

    def subscribe(self, key: str, *, seen: int = 0) -> Subscription:
        """Start listening to ``key``; ``seen`` is the latest seq known to be in
        the log (a wait for anything before it returns at once)."""
        ...

    async def close(self) -> None: ...
