"""What ``interlingua subscribe`` shows: a task's events up to where the task stands.

The command ends at the first event that ends a turn: the task finishes, or waits for
input or authentication (a v1.0 subscription would go on; older dialects end it there).
But a waiting state can be one the task has left: the events replayed after
``--last-event-id`` hold every question asked, answered or not, and a live one may
have been answered just after. So at a waiting state the task is read (``GetTask``).
Still there: the command ends, and names the command that answers. Moved on: the
events after that one are asked for again (a server of an older dialect ends each
stream at such a state, replayed or not), until the one it stands at. An agent
without event ids cannot replay them: the task as read stands in for them.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from ..client import StreamEvent
from ..clients import AnyClient
from ..core import lifecycle
from ..core.model import StatusUpdate, Task
from .follow import said

__all__ = ["to_where_it_stands"]


async def to_where_it_stands(client: AnyClient, task_id: str, last_event_id: int | None,
                             ) -> AsyncGenerator[StreamEvent, None]:
    """The events of task ``task_id`` after ``last_event_id`` (None: from the task as
    it stands), up to the first that ends its turn and is where the task still is."""
    after = last_event_id
    while True:
        last: StreamEvent | None = None
        async with contextlib.aclosing(client.subscribe(task_id, last_event_id=after)) \
                as events:
            async for event in events:
                yield event
                if event.final:
                    last = event
                    break
        if last is None or last.reconciled or last.state not in lifecycle.INTERRUPTED_STATES:
            return
        task = await client.get_task(task_id, history_length=0)
        if _stands_at(task, last):
            return
        if last.seq is not None:
            after = last.seq
        elif task.status.state in lifecycle.RETURN_STATES:
            yield StreamEvent(None, task, client.last_result or b"", reconciled=True)
            return
        else:
            after = None  # a new subscription begins with the task as it stands


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
