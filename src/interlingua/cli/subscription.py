"""What ``interlingua subscribe`` shows: a task's events up to where the task stands.

The command ends at the first event that ends a turn: the task finishes, or waits for
input or authentication (a v1.0 subscription would go on; older dialects end it there).
A waiting state the task has left (replayed after ``--last-event-id``, or answered just
after) is passed, as ``Client.subscribe`` passes it (``client/standing.py``), which ends
each turn's stream here: the command stops at a question the task still waits on, and
names the command that answers.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from ..client import StreamEvent
from ..client.standing import to_where_it_stands as _to_where_it_stands
from ..clients import AnyClient
from ..core.model import Task

__all__ = ["to_where_it_stands"]


def to_where_it_stands(client: AnyClient, task_id: str, last_event_id: int | None,
                       ) -> AsyncGenerator[StreamEvent, None]:
    """The events of task ``task_id`` after ``last_event_id`` (None: from the task as
    it stands), up to the first that ends its turn and is where the task still is."""

    def after(seq: int | None) -> AsyncGenerator[StreamEvent, None]:
        return client.subscribe(task_id, last_event_id=seq)

    async def read() -> tuple[Task, bytes]:
        task = await client.get_task(task_id, history_length=0)
        return task, client.last_result or b""

    return _to_where_it_stands(after, read, last_event_id, by_turn=True)
