"""Webhook bodies, each in the dialect its config was registered in (DIALECTS.md §d.2, §i.20).

* **v1.0**: a ``StreamResponse``, exactly what a stream of the task carries
  for that event: ``{"statusUpdate": …}``, ``{"artifactUpdate": …}``, and
  ``{"task": …}`` for the task's creation.
* **v0.2 / v0.3** (and the SAM and tutorial variants): the ``Task`` object
  (v0.3 encoding, ``kind: "task"``) as it stood after the status change.
* **v0.1**: the spec leaves the body to the server and shows
  ``{"eventType": "taskUpdate", "taskId", "status", "summary"}`` (seed 004
  §9.4). We send that, with ``summary`` the text of the status message when
  there is one, plus the whole v0.1 ``Task`` under ``task`` so that a
  receiver needs no ``tasks/get`` to read the artifacts.

Whole-task bodies are folded from the log up to the delivery's sequence
number, so a retried delivery says the same thing every time.
"""

from __future__ import annotations

import msgspec

from ...core import lifecycle
from ...core.dialects import get_codec
from ...core.model import ArtifactUpdate, Event, StatusUpdate, Task, TaskCreated
from ...stores.base import Delivery, EventLog, PushConfigRecord, push_mode

__all__ = ["build_body", "event_body", "task_body"]

def event_body(event: Event, dialect: str = "1.0") -> bytes | None:
    """The ``StreamResponse`` of one event to a config fed events (v1.0's); None for
    events streams do not carry."""
    codec = get_codec(dialect)
    if isinstance(event, StatusUpdate | ArtifactUpdate):
        return codec.encode_stream_item(event)
    if isinstance(event, TaskCreated):
        return codec.encode_stream_item(event.task)
    return None


def task_body(dialect: str, task: Task) -> bytes:
    """The whole-task body of a config fed tasks (v0.x), in its codec's shape."""
    return get_codec(dialect).encode_push_task(task)


def _fold(events: list[Event]) -> Task:
    first = events[0]
    if not isinstance(first, TaskCreated):
        raise ValueError(f"a task's log starts with TaskCreated, not {type(first).__name__}")
    created = first.task
    # Own lists: folding appends to them, and the log's objects are shared.
    task = msgspec.structs.replace(
        created,
        history=list(created.history),
        artifacts=[msgspec.structs.replace(a, parts=list(a.parts)) for a in created.artifacts],
    )
    for event in events[1:]:
        lifecycle.apply(task, event)
    return task


async def build_body(store: EventLog, delivery: Delivery, record: PushConfigRecord) -> bytes | None:
    """The body of ``delivery``; None when there is nothing to send (the
    event is gone, or is not one a stream carries)."""
    if push_mode(record.dialect) == "event":
        stored = await store.read_events(
            delivery.scope, delivery.task_id, after=delivery.seq - 1, limit=1
        )
        if not stored or stored[0].seq != delivery.seq:
            return None
        return event_body(stored[0].event, record.dialect)
    stored = await store.read_events(delivery.scope, delivery.task_id, after=0, limit=delivery.seq)
    if not stored:
        return None
    return task_body(record.dialect, _fold([s.event for s in stored]))
