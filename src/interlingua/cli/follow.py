"""``interlingua get URL TASK --wait``: follow a task by asking for it, not by a stream.

For agents that do not stream (or a network that cuts long streams), a task can be
followed with GetTask alone. With an agent spoken to in A2A 1.1 each request is a
long poll (``currentGeneration``): the agent answers once the task has moved on, so
every change is seen as it happens, with no request in between. An older agent has
no long poll: it is asked again every few seconds (a note on stderr says so), which
may miss states that pass quickly. Either way it stops when the task finishes or
waits for input, or when the time given runs out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..client import Client
from ..client.generations import GENERATIONS_VERSION, GenerationsNotSupported
from ..client.standing import said
from ..clients import AnyClient
from ..core import lifecycle
from ..core.model import Task

__all__ = ["POLL_PAUSES", "follow_task"]

#: seconds between plain polls of an agent without long polls: growing to the last
POLL_PAUSES = (0.5, 1.0, 2.0, 5.0)


async def follow_task(client: AnyClient, task_id: str, *, history_length: int | None,
                      within: float, show: Callable[[Task, bytes | None], None],
                      note: Callable[[str], None]) -> Task | None:
    """Show the task and each new state of it until it finishes or waits for input
    (that last task is returned), or until ``within`` seconds pass (None)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    task = await client.get_task(task_id, history_length=history_length)
    show(task, client.last_result)
    # an HTTP client finds out whether the agent has long polls; a mesh client speaks
    # 1.1 only when told to
    long_polls = isinstance(client, Client) or client.version == GENERATIONS_VERSION
    polls = 0
    while task.status.state not in lifecycle.RETURN_STATES:
        remaining = deadline - loop.time()
        if remaining <= 0:
            return None
        if long_polls:
            try:
                new = await client.get_task(task_id, history_length=history_length,
                                            after_generation=task.generation, wait=remaining)
            except GenerationsNotSupported as exc:
                long_polls = False
                note(f"no long polls ({exc}); asking again every few seconds")
                continue
        else:
            await asyncio.sleep(min(POLL_PAUSES[min(polls, len(POLL_PAUSES) - 1)], remaining))
            polls += 1
            new = await client.get_task(task_id, history_length=history_length)
        if _changed(task, new):
            show(new, client.last_result)
        task = new
    return task


def _changed(old: Task, new: Task) -> bool:
    return _as_seen(old) != _as_seen(new)


def _as_seen(task: Task) -> tuple[object, ...]:
    """What a person sees of ``task`` move on: its state, what its status message says,
    its artifacts and (A2A 1.1) its generation. Not the message's id, which a dialect
    that has none (v0.1) makes anew at each read, nor the time of its status."""
    return task.status.state, said(task.status.message), task.artifacts, task.generation
