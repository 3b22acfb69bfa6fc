"""Readers of a task's log that follow it live: streaming sends and subscriptions.

A stream is a reader like any other: it reads the log from the store, waits
on the bus for more, and reads again. Nothing is pushed into a per-subscriber
queue, so a slow subscriber costs the executor and the other subscribers
nothing: it simply reads from further back in the log. One that falls more
than ``max_lag`` events behind the live end is told to reconnect (with
``Last-Event-ID``) and closed.

Every entry carries the task's sequence number, which the SSE layer sends as
the event ``id``; a client that reconnects with ``Last-Event-ID: N`` gets
every event after N from the log, then the live ones — no gap, no duplicate.

Contract with the consumer: a yielded ``Entry`` whose ``item`` is the live
task projection must be encoded before the consumer awaits anything, since
the projection keeps changing (this saves copying the task).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import msgspec

from ..bus.base import Subscription, task_key
from ..core import lifecycle
from ..core.calls import SendMessage, SubscribeToTask
from ..core.errors import InvalidParams, TaskNotFound, UnsupportedOperation
from ..core.model import (
    TERMINAL_STATES,
    ArtifactUpdate,
    Event,
    Message,
    StatusUpdate,
    Task,
    TaskCreated,
)
from ..stores.base import Scope, StoredEvent
from .context import RequestInfo

if TYPE_CHECKING:
    from .engine import Engine, _Run

__all__ = ["Entry", "Heartbeat", "Lagged", "Unavailable", "open_stream"]


class Entry(msgspec.Struct, gc=False):
    """One stream item: a Task snapshot, a Message, or a status/artifact update."""

    seq: int
    item: Task | Message | StatusUpdate | ArtifactUpdate
    #: the log entry it came from (None for snapshots), whose encodings are shared
    stored: StoredEvent | None = None
    #: more entries follow at once (the writer sends them together)
    more: bool = False


class Heartbeat(msgspec.Struct):
    """Nothing happened for a while: the SSE layer sends a comment."""


class Lagged(msgspec.Struct):
    """The reader fell too far behind; it should reconnect from ``seq``."""

    seq: int


class Unavailable(msgspec.Struct):
    """The events the reader asked for are not in the log (any more)."""

    after: int
    message: str


StreamOutput = Entry | Heartbeat | Lagged | Unavailable

#: events read from the store at a time by a reader catching up
READ_PAGE = 500


async def open_stream(
    engine: Engine,
    call: SendMessage | SubscribeToTask,
    request: RequestInfo,
    *,
    last_event_id: int | None = None,
) -> AsyncIterator[StreamOutput]:
    """Check the request and return its stream.

    Errors that can be known before the stream starts (unknown task, a
    finished task, bad input) are raised here, so the caller answers them as
    an ordinary JSON-RPC error instead of a broken stream.
    """
    if last_event_id is not None and last_event_id < 0:
        raise InvalidParams("Invalid params: Last-Event-ID must be a non-negative integer")
    if isinstance(call, SendMessage):
        if last_event_id is not None:
            raise InvalidParams(
                "Invalid params: Last-Event-ID resumes a subscription; "
                "resubscribe to the task instead of sending the message again"
            )
        return await _send_stream(engine, call, request)
    return await _subscribe_stream(engine, call, request, last_event_id)


async def _send_stream(engine: Engine, call: SendMessage,
                       request: RequestInfo) -> AsyncIterator[StreamOutput]:
    begun = await engine._begin(call, request)
    scope = engine.scope_of(request)
    if isinstance(begun, Task):
        # A retried message: follow its task as a fresh subscriber would.
        return await _subscribe_stream(
            engine, SubscribeToTask(id=begun.id), request, None, allow_finished=True)
    run = begun
    # Subscribed before the turn's first write can happen (it was only scheduled).
    sub = engine.bus.subscribe(run.key, seen=run.version)
    if run.persisted:
        snapshot = Entry(run.version, run.task)
        return _follow(engine, scope, run.task.id, sub, run.version, first=snapshot)

    return _follow(engine, scope, run.task.id, sub, 0, new_run=run)


async def _subscribe_stream(
    engine: Engine,
    call: SubscribeToTask,
    request: RequestInfo,
    last_event_id: int | None,
    *,
    allow_finished: bool = False,
) -> AsyncIterator[StreamOutput]:
    scope = engine.scope_of(request)
    key = task_key(scope, call.id)
    run = engine._runs.get(key)
    if run is not None and run.persisted:
        task, version = run.task, run.version
    else:
        rec = await engine.store.get_task(scope, call.id)
        if rec is None:
            raise TaskNotFound(f"Task not found: {call.id}")
        task, version = rec.task, rec.version

    if last_event_id is not None:
        # A resume: exactly the events after the one the client has.
        if last_event_id > version:
            raise InvalidParams(
                f"Invalid params: Last-Event-ID {last_event_id} is beyond the last event "
                f"({version}) of task {call.id}"
            )
        # seen=version: the log already holds events up to there, so the
        # reader fetches them at once instead of waiting for news.
        sub = engine.bus.subscribe(key, seen=version)
        if last_event_id == version and task.status.state in lifecycle.RETURN_STATES:
            sub.close()
            return _empty()
        return _follow(engine, scope, call.id, sub, last_event_id)

    state = task.status.state
    if state in TERMINAL_STATES and not allow_finished:
        if request.dialect == "1.0":
            raise UnsupportedOperation(
                f"Task {call.id} is {state.value}; a finished task cannot be subscribed to "
                "(resume with Last-Event-ID to receive events you missed)"
            )
        # Older dialects: the final state once, then the stream ends.
        final = StatusUpdate(task_id=task.id, context_id=task.context_id, status=task.status)
        return _single(Entry(version, final))
    sub = engine.bus.subscribe(key, seen=version)
    if state in TERMINAL_STATES:
        sub.close()
        return _single(Entry(version, task))
    return _follow(engine, scope, call.id, sub, version, first=Entry(version, task))


async def _empty() -> AsyncIterator[StreamOutput]:
    return
    yield  # an async generator that yields nothing


async def _single(entry: Entry) -> AsyncIterator[StreamOutput]:
    yield entry


def _item(event: Event) -> Task | StatusUpdate | ArtifactUpdate | None:
    # ``type() is``: model classes are final, and a missing isinstance on a
    # Struct class costs a metaclass call per event.
    kind = type(event)
    if kind is ArtifactUpdate or kind is StatusUpdate:
        return event  # type: ignore[return-value]
    if kind is TaskCreated:
        return event.task  # type: ignore[union-attr]
    return None  # history additions are not stream items


async def _follow(
    engine: Engine,
    scope: Scope,
    task_id: str,
    sub: Subscription,
    after: int,
    *,
    first: Entry | None = None,
    new_run: _Run | None = None,
) -> AsyncIterator[StreamOutput]:
    """Everything after ``after``: from the log, then live, until the task stops.

    ``new_run``: the turn of a streaming send that made a new task; the
    stream starts once the task is stored (or ends with the bare message
    the turn answered with instead).
    """
    cfg = engine.config
    # Lag is measured only once the reader has been level with the live end:
    # a reader catching up from the log (a resume) is not behind, just reading.
    level = False
    try:
        if new_run is not None:
            # Here, not in a generator around this one: each event would pass
            # through both, and an open stream would hold both.
            await new_run.flushed.wait()
            if new_run.reply_message is not None:
                yield Entry(0, new_run.reply_message)
                return
        if first is not None:
            # Decided before the yield: a snapshot of a running task is its live
            # projection, which may have moved on by the time the reader asks
            # for more, and the events that moved it must still be sent.
            ended = isinstance(first.item, Task) and \
                first.item.status.state in lifecycle.RETURN_STATES
            yield first
            if ended:
                return
        while True:
            latest = await sub.wait(after, cfg.heartbeat_interval)
            if engine.closing:
                return
            if latest <= after:
                level = True
                yield Heartbeat()
                continue
            if level and latest - after > cfg.max_lag:
                yield Lagged(after)
                return
            events = sub.take(after)
            if events is None:
                # Paged, so a long catch-up holds one page in memory, not the log.
                events = await engine.store.read_events(scope, task_id, after, limit=READ_PAGE)
                if events and events[0].seq != after + 1:
                    yield Unavailable(after, f"events after {after} of task {task_id} "
                                             "are no longer available")
                    return
            batch: list[Entry] = []
            last = False
            # A lone reader's encodings would only be kept alive, never reused.
            shared = not sub.alone()
            for stored in events:
                after = stored.seq
                item = _item(stored.event)
                if item is None:
                    continue
                batch.append(Entry(stored.seq, item, stored if shared else None, more=True))
                if type(item) is StatusUpdate and item.status.state in lifecycle.RETURN_STATES:
                    last = True
                    break
            if batch:
                batch[-1].more = False
            for entry in batch:
                yield entry
            if last:
                return
            if after >= latest:
                level = True
    finally:
        sub.close()
