"""A subscription that ends where the task stands, not at a question it has left.

A stream of A2A 0.1-0.3 ends at every status that ends a turn (input-required,
auth-required), live or replayed: the events after a ``Last-Event-ID`` hold every
question the task asked, answered or not, and a live one may be answered just after it
is sent. So at such a status the task is read (``GetTask``). Still there: the stream
ends. Moved on: the events after that one are asked for again, until the status the
task stands at, or its end. An agent without event ids cannot replay them: the task as
read stands in for them (``reconciled``), or, while it runs, a new subscription begins
with it. ``Client.subscribe`` ends so in every dialect (a v1.0 stream itself goes on
through those statuses); ``interlingua subscribe``, which stops at a question the task
waits on in v1.0 too, ends each turn's stream itself and is passed on the same way.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable

from ..core import lifecycle
from ..core.model import Message, StatusUpdate, Task
from .stream import StreamEvent

__all__ = ["said", "to_where_it_stands"]

#: the events of a subscription after an event id (None: from the task as it stands)
Subscriber = Callable[[int | None], AsyncGenerator[StreamEvent, None]]
#: the task as it stands, and the agent's answer as sent
Reader = Callable[[], Awaitable[tuple[Task, bytes]]]


async def to_where_it_stands(subscribe: Subscriber, read: Reader, last_event_id: int | None,
                             *, by_turn: bool = False) -> AsyncGenerator[StreamEvent, None]:
    """The events ``subscribe`` gives after ``last_event_id``, passing each question the
    task has left, up to the end of the subscription where the task stands. ``by_turn``:
    each subscription is ended at its first event that ends a turn (a v1.0 one would go
    on through a question the task still waits on)."""
    after = last_event_id
    while True:
        last: StreamEvent | None = None
        async with contextlib.aclosing(subscribe(after)) as events:
            async for event in events:
                yield event
                last = event
                if by_turn and event.final:
                    break
        if last is None or last.reconciled or last.state not in lifecycle.INTERRUPTED_STATES:
            return
        task, raw = await read()
        if _stands_at(task, last):
            return
        if last.seq is not None:
            after = last.seq
        elif task.status.state in lifecycle.RETURN_STATES:
            yield StreamEvent(None, task, raw, reconciled=True)
            return
        else:
            after = None  # a new subscription begins with the task as it stands


def said(message: Message | None) -> object:
    """What ``message`` says, comparable: its role and parts, not its id."""
    return (message.role, message.parts) if message is not None else None


def _stands_at(task: Task, event: StreamEvent) -> bool:
    """Whether ``task``'s status is the one ``event`` set: its state, what its message
    says (not the message's id, which v0.1 makes anew at each read), and, where both
    say them, its time and (A2A 1.1) generation."""
    item = event.item
    assert isinstance(item, (Task, StatusUpdate))  # an event that sets a state
    now, then = task.status, item.status
    if now.state != then.state or said(now.message) != said(then.message):
        return False
    if now.timestamp and then.timestamp and now.timestamp != then.timestamp:
        return False
    return not (task.generation and item.generation and task.generation != item.generation)
