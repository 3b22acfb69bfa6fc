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
A snapshot may go out as several items under one number (``_snapshot``): only
the last of them names it (``Entry.id_follows`` on the others), so a reader
cut off within the group holds no id past what it lacks, and hears it all again.

Contract with the consumer: the entries ``poll()`` hands out must be encoded
before the consumer awaits anything, since one of them may be the live task
projection, which keeps changing (this saves copying the task).
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Awaitable, Callable

import msgspec

from ..bus.base import Bus, Subscription, shared, task_key
from ..core import lifecycle
from ..core.calls import SendMessage, SubscribeToTask
from ..core.dialects import Codec, get_codec
from ..core.errors import InvalidParams, UnsupportedOperation, task_not_found
from ..core.model import (
    TERMINAL_STATES,
    ArtifactUpdate,
    Event,
    Message,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
)
from ..stores.base import Scope, StoredEvent, TaskPort
from .context import RequestInfo
from .leases import LeaseKeeper
from .run import Run, Runs

__all__ = ["Entry", "Heartbeat", "Lagged", "Stream", "Streams", "Unavailable"]


class Entry(msgspec.Struct, gc=False):
    """One stream item: a Task snapshot, a Message, or a status/artifact update."""

    seq: int
    item: Task | Message | StatusUpdate | ArtifactUpdate
    #: the log entry it came from (None for snapshots), whose encodings are shared
    stored: StoredEvent | None = None
    #: a later item of the same ``seq`` follows (a snapshot's, ``_snapshot``): this one
    #: goes out naming no event id, so that a reader cut off after it resumes from
    #: before the group, not past the rest of it (a status that ends the stream)
    id_follows: bool = False

    @property
    def event_id(self) -> int | None:
        """The event id the item goes out with (None: none, ``id_follows``)."""
        return None if self.id_follows else self.seq


class Heartbeat(msgspec.Struct):
    """Nothing happened for a while: the SSE layer sends a comment."""


class Lagged(msgspec.Struct):
    """The reader fell too far behind; it should reconnect from ``seq``."""

    seq: int


class Unavailable(msgspec.Struct):
    """The events the reader asked for are not in the log (any more)."""

    after: int
    message: str


#: (a ``StoredEvent`` only to a reader that asked for one, ``Stream.take_stored``)
StreamOutput = Entry | Heartbeat | Lagged | Unavailable | StoredEvent

#: events read from the store at a time by a reader catching up
READ_PAGE = 500
#: a stored event's event (read in C, over a batch)
_EVENT = operator.attrgetter("event")
#: seconds between an idle reader's looks at the store, when other processes write it
#: and no shared bus tells of their writes (two servers on one SQLite file)
STORE_POLL = 1.0


#: ``begin(call, request)``: start the turn a streaming send asks for (or find
#: the task of a repeated message)
Begin = Callable[[SendMessage, RequestInfo], Awaitable["Run | Task | Message"]]


class Streams:
    """Opens streams on a store's logs: what every stream of one engine shares."""

    def __init__(self, store: TaskPort, bus: Bus, runs: Runs, begin: Begin, *,
                 heartbeat_interval: float, max_lag: int,
                 leases: LeaseKeeper | None = None,
                 default_history_length: int | None = None,
                 view: Callable[[Task, int | None], Task] | None = None) -> None:
        self.store = store
        #: the history a streamed send's task snapshot carries when the send asks
        #: for no length, and how a task is trimmed to it: as a unary send's answer
        #: (``Sends.view``)
        self.default_history_length = default_history_length
        self.view = view
        self.bus = bus
        self._leases = leases
        #: a bus shared with other processes tells of their writes, while it is
        #: connected (Redis out of reach tells of none)
        self._shared_bus = shared(bus)
        self._connected: asyncio.Event | None = getattr(bus, "connected", None)
        self.runs = runs
        self.begin = begin
        #: the server is shutting down: open streams end (the engine's ``closing``;
        #: a flag, not a call, as every poll reads it)
        self.closing = False
        self.heartbeat_interval = heartbeat_interval
        self.max_lag = max_lag
        #: streams open now (a drain lets them deliver their ends)
        self.open_count = 0

    def unheard(self) -> bool:
        """Other processes write the store and no bus tells of their writes: none is
        shared, or the shared one is out of reach (read by an idle reader only)."""
        leases = self._leases
        if leases is None or not leases.shared:
            return False
        if not self._shared_bus:
            return True
        connected = self._connected
        return connected is not None and not connected.is_set()

    def open(
        self,
        call: SendMessage | SubscribeToTask,
        request: RequestInfo,
        *,
        last_event_id: int | None = None,
    ) -> Awaitable[Stream]:
        """Check the request; await the result for its stream (the coroutine that
        opens it, not one awaiting that: a frame fewer per stream).

        Errors that can be known before the stream starts (unknown task, a
        finished task, bad input) are raised here, so the caller answers them as
        an ordinary error instead of a broken stream.
        """
        if last_event_id is not None and last_event_id < 0:
            raise InvalidParams("Invalid params: Last-Event-ID must be a non-negative integer")
        if isinstance(call, SendMessage):
            if last_event_id is not None:
                raise InvalidParams(
                    "Invalid params: Last-Event-ID resumes a subscription; "
                    "resubscribe to the task instead of sending the message again"
                )
            return self._send_stream(call, request)
        return self._subscribe_stream(call, request, last_event_id)

    async def _send_stream(self, call: SendMessage, request: RequestInfo) -> Stream:
        begun = await self.begin(call, request)
        scope = request.scope
        codec = get_codec(request.dialect)
        # the history its task snapshots carry: as a unary send's answer does
        asked = call.config.history_length if call.config is not None else None
        history = self.default_history_length if asked is None else asked
        stream: Stream
        if isinstance(begun, Message):
            # A retried message that was answered with a bare message: that answer.
            return _Fixed(Entry(0, begun))
        if isinstance(begun, Task):
            # A retried message: follow its task as a fresh subscriber would.
            stream = await self._subscribe_stream(
                SubscribeToTask(id=begun.id), request, None, allow_finished=True)
        else:
            run = begun
            # Subscribed before the turn's first write can happen (it was only scheduled).
            sub = self.bus.subscribe(run.key, seen=run.version)
            if run.persisted:
                snapshot = Entry(run.version, run.task)
                stream = _Follow(self, scope, run.task.id, sub, run.version, first=snapshot,
                                 codec=codec)
            else:
                stream = _Follow(self, scope, run.task.id, sub, 0, new_run=run, codec=codec)
        if history is not None and isinstance(stream, _Follow):
            stream.history = history
        return stream

    async def _subscribe_stream(
        self,
        call: SubscribeToTask,
        request: RequestInfo,
        last_event_id: int | None,
        *,
        allow_finished: bool = False,
    ) -> Stream:
        scope = request.scope
        key = task_key(scope, call.id)
        run = self.runs.by_key.get(key)
        if run is not None and run.persisted:
            task, version = run.task, run.version
        else:
            rec = await self.store.get_task(scope, call.id)
            if rec is None:
                raise task_not_found(call.id)
            task, version = rec.task, rec.version
        # v1.0 subscriptions follow a task through its interruptions (input-required,
        # auth-required) to its end (spec v1.0 §3.1.6); older dialects, and a
        # streaming send's own stream, end at an interruption with ``final: true``.
        codec = get_codec(request.dialect)
        ends = TERMINAL_STATES if codec.follows_interruptions and not allow_finished \
            else lifecycle.RETURN_STATES

        if last_event_id is not None:
            # A resume: exactly the events after the one the client has.
            if last_event_id > version:
                raise InvalidParams(
                    f"Invalid params: Last-Event-ID {last_event_id} is beyond the last event "
                    f"({version}) of task {call.id}"
                )
            # seen=version: the log already holds events up to there, so the
            # reader fetches them at once instead of waiting for news.
            sub = self.bus.subscribe(key, seen=version)
            if last_event_id == version and task.status.state in ends:
                sub.close()
                return _empty()
            return _Follow(self, scope, call.id, sub, last_event_id, ends=ends)

        state = task.status.state
        if state in TERMINAL_STATES and not allow_finished:
            if codec.refuses_finished_subscription:
                raise UnsupportedOperation(
                    f"Task {call.id} is {state.value}; a finished task cannot be subscribed to "
                    "(resume with Last-Event-ID to receive events you missed)"
                )
            # Older dialects: the final state once, then the stream ends.
            return _single(Entry(version, _status_of(task)))
        sub = self.bus.subscribe(key, seen=version)
        if state in TERMINAL_STATES:
            sub.close()
            return _Fixed(*_snapshot(version, task, codec, ended=True))
        return _Follow(self, scope, call.id, sub, version, first=Entry(version, task), ends=ends,
                       codec=codec)


class Stream:
    """A stream's items, handed out as they become available.

    ``poll()`` returns the items that can be sent now (an empty list once the
    stream is over), or something to await before polling again: a bare
    future while the stream waits for news, so an idle stream holds no
    coroutine frames of its own, only its state. It is also an async
    iterator of single items, for readers that pull.
    """

    __slots__ = ("_buffer", "over")

    def __init__(self) -> None:
        self._buffer: list[StreamOutput] = []
        #: the batch ``poll()`` handed out last was the stream's last: the next
        #: poll ends it (a writer may end its response with that batch)
        self.over = False

    def poll(self) -> list[StreamOutput] | Awaitable[object]:
        raise NotImplementedError

    def close(self) -> None:
        """Stop reading (idempotent)."""

    def take_stored(self) -> None:
        """The reader takes a batch of status and artifact updates that it alone
        reads as the log's own entries (``StoredEvent``, whose event is the stream
        item), not an ``Entry`` made for each: it reads each one's seq and event,
        and keeps no encoding on it. (A stream that makes no such batches ignores
        it.)"""

    @property
    def lag(self) -> int | None:
        """Events in the log not yet handed out; None once the stream is over
        (for ``/metrics``, read when it is scraped)."""
        return None

    def __aiter__(self) -> Stream:
        return self

    async def __anext__(self) -> StreamOutput:
        while not self._buffer:
            got = self.poll()
            if type(got) is list:
                if not got:
                    self.close()
                    raise StopAsyncIteration
                got.reverse()
                self._buffer = got
            else:
                await got  # type: ignore[misc]
        return self._buffer.pop()

    async def aclose(self) -> None:
        self.close()


class _Fixed(Stream):
    """A stream whose items are known at once (a finished task, nothing left to resume)."""

    __slots__ = ("_items",)

    def __init__(self, *items: StreamOutput) -> None:
        super().__init__()
        self._items: list[StreamOutput] = list(items)

    def poll(self) -> list[StreamOutput]:
        items, self._items = self._items, []
        self.over = True
        return items


def _empty() -> Stream:
    return _Fixed()


def _single(entry: Entry) -> Stream:
    return _Fixed(entry)


def _status_of(task: Task) -> StatusUpdate:
    return StatusUpdate(task_id=task.id, context_id=task.context_id, status=task.status,
                        generation=task.generation)


def _snapshot(seq: int, task: Task, codec: Codec | None, *, ended: bool) -> list[StreamOutput]:
    """A snapshot of ``task`` as ``codec``'s dialect streams it (None: as the task);
    ``ended``: the stream ends with it.

    A stream that cannot carry a task (v0.1's) gets what the task says in events it
    can carry, all under the snapshot's id: each artifact whole (else a subscriber
    would get only the chunks after it joined), then the status, last as a status
    that ends a stream must be. A dialect whose last status event says so
    (``final``) gets that status after a task that ends the stream, as at any end.
    Only the group's last item names the id: a reader that resumed from it after an
    earlier one would never hear the rest (the ``final`` status: that it ended).
    """
    if codec is None or codec.streams_tasks:
        if ended and codec is not None and codec.marks_final:
            return [Entry(seq, task, id_follows=True), Entry(seq, _status_of(task))]
        return [Entry(seq, task)]
    done = task.status.state in TERMINAL_STATES  # no more chunks can come
    items: list[StreamOutput] = []
    for position, artifact in enumerate(task.artifacts):
        if artifact.index is None:  # known by its position, as in the task
            artifact = msgspec.structs.replace(artifact, index=position)
        update = ArtifactUpdate(task_id=task.id, context_id=task.context_id,
                                artifact=artifact, last_chunk=done)
        items.append(Entry(seq, update, id_follows=True))
    items.append(Entry(seq, _status_of(task)))
    return items


def _item(event: Event) -> Task | StatusUpdate | ArtifactUpdate | None:
    # ``type() is``: model classes are final, and a missing isinstance on a
    # Struct class costs a metaclass call per event.
    kind = type(event)
    if kind is ArtifactUpdate or kind is StatusUpdate:
        return event  # type: ignore[return-value]
    if kind is TaskCreated:
        return event.task  # type: ignore[union-attr]
    return None  # history additions are not stream items


class _Follow(Stream):
    """Everything after ``after``: from the log, then live, until the task stops.

    ``new_run``: the turn of a streaming send that made a new task; the
    stream starts once the task is stored (or ends with the bare message
    the turn answered with instead). ``ends``: the states that end it.
    ``codec``: the reader's dialect's, how its task snapshots go out (``_snapshot``).
    """

    __slots__ = (
        "_after",
        "_codec",
        "_deadline",
        "_done",
        "_ends",
        "_first",
        "_flushed_waiter",
        "_gap",
        "_level",
        "_new_run",
        "_page",
        "_polled",
        "_scope",
        "_source",
        "_stored",
        "_sub",
        "_task_id",
        "history",
    )

    def __init__(self, source: Streams, scope: Scope, task_id: str, sub: Subscription,
                 after: int, *, first: Entry | None = None, new_run: Run | None = None,
                 ends: frozenset[TaskState] = lifecycle.RETURN_STATES,
                 codec: Codec | None = None) -> None:
        super().__init__()
        self._ends = ends
        self._codec = codec
        self._source = source
        self._scope = scope
        self._task_id = task_id
        self._sub = sub
        self._after = after
        self._first = first
        self._new_run = new_run
        self._flushed_waiter: asyncio.Future[bool] | None = None
        # Lag is measured only once the reader has been level with the live end:
        # a reader catching up from the log (a resume) is not behind, just reading.
        self._level = False
        #: when an idle reader is owed a heartbeat
        self._deadline: float | None = None
        #: when an idle reader last read the store for news no bus would bring
        self._polled = 0.0
        #: events read from the store, not yet handed out
        self._page: list[StoredEvent] | None = None
        #: the log no longer has the events the reader needs next
        self._gap: Unavailable | None = None
        self._done = False
        #: a lone reader's batches of updates go out as the log holds them (take_stored)
        self._stored = False
        #: the messages of history its task snapshots keep (None: all), as a streamed
        #: send asked (``configuration.historyLength``)
        self.history: int | None = None
        source.open_count += 1

    def take_stored(self) -> None:
        self._stored = True

    def close(self) -> None:
        if not self._done:
            self._done = True
            self._source.open_count -= 1
            self._forget_flushed()
            self._sub.close()

    @property
    def lag(self) -> int | None:
        return None if self._done else max(self._sub.latest - self._after, 0)

    def _forget_flushed(self) -> None:
        if self._flushed_waiter is not None and self._new_run is not None:
            self._new_run.flushed.remove_waiter(self._flushed_waiter)
        self._flushed_waiter = None

    def _end(self, items: list[StreamOutput]) -> list[StreamOutput]:
        self.over = True
        self.close()
        return items

    def poll(self) -> list[StreamOutput] | Awaitable[object]:
        if self._done or self.over:
            return self._end([])
        run = self._new_run
        if run is not None:
            if not run.flushed.fired:
                if self._flushed_waiter is None:
                    self._flushed_waiter = asyncio.get_running_loop().create_future()
                    run.flushed.add_waiter(self._flushed_waiter)
                return self._flushed_waiter
            # (the set() that fired let go of the waiter: nothing to take off)
            self._flushed_waiter = None
            self._new_run = None
            if run.reply_message is not None:
                return self._end([Entry(0, run.reply_message)])
            if run.duplicate is not None:
                return self._follow_instead(run.duplicate)
            if run.abandoned is not None:  # its task was never written
                return self._end([Unavailable(0, run.abandoned.message)])
        first = self._first
        if first is not None:
            self._first = None
            task = first.item
            if type(task) is not Task:
                return [first]
            if self.history is not None:
                task = self._trimmed(task)
            # A snapshot of a running task is its live projection, which may have
            # moved on by the time the reader polls again; the events that moved
            # it must still be sent, so whether it ended is decided now (and what
            # it says is taken now).
            ended = task.status.state in self._ends
            items = _snapshot(first.seq, task, self._codec, ended=ended)
            return self._end(items) if ended else items
        while True:
            if self._source.closing:
                return self._end([])
            if self._gap is not None:
                return self._end([self._gap])
            events, self._page = self._page, None
            if events is None:
                sub, after = self._sub, self._after
                source = self._source
                latest = sub.latest
                if latest <= after:
                    now = asyncio.get_running_loop().time()
                    if self._deadline is None:
                        self._deadline = now + source.heartbeat_interval
                    elif now >= self._deadline:
                        self._deadline = None
                        self._level = True
                        return [Heartbeat()]
                    if source.unheard():
                        # another process writes this store, and no bus of theirs
                        # tells this one: its writes are read from the store
                        if now >= self._polled + STORE_POLL:
                            self._polled = now
                            return self._read_page()
                        fut = sub.wake_on_news(after, STORE_POLL)
                    else:
                        fut = sub.wake_on_news(after, source.heartbeat_interval)
                    if fut is not None:
                        return fut
                    latest = sub.latest
                self._deadline = None
                if self._level and latest - after > source.max_lag:
                    return self._end([Lagged(after)])
                events = sub.take(after)
                if events is None:
                    return self._read_page()
            items = self._entries(events)
            if items:
                return items

    def _trimmed(self, task: Task) -> Task:
        """``task`` with the last ``history`` messages of its history, as a unary
        send's answer is trimmed."""
        view = self._source.view
        return task if view is None else view(task, self.history)

    async def _follow_instead(self, task_id: str) -> None:
        """Another process made the task for this send's message first: follow it."""
        rec = await self._source.store.get_task(self._scope, task_id)
        self._sub.close()
        self._task_id = task_id
        if rec is None:  # purged meanwhile: nothing left to show
            self.over = True
            return
        self._sub = self._source.bus.subscribe(task_key(self._scope, task_id), seen=rec.version)
        self._after = rec.version
        self._first = Entry(rec.version, rec.task)

    async def _read_page(self) -> None:
        after = self._after
        # Paged, so a long catch-up holds one page in memory, not the log.
        events = await self._source.store.read_events(self._scope, self._task_id, after,
                                                      limit=READ_PAGE)
        if events and events[0].seq != after + 1:
            self._gap = Unavailable(after, f"events after {after} of task {self._task_id} "
                                           "are no longer available")
        else:
            self._page = events

    def _stored_batch(self, events: list[StoredEvent]) -> list[StreamOutput] | None:
        """A lone reader's batch as the log's entries (``take_stored``), each
        one's event its stream item, no loop and no ``Entry`` per event; None
        when the batch is not one of status and artifact updates (after a
        creation) whose last alone may end the stream.

        From the first event to the last, the log's generations moved as its
        seqs did: every event between is a status or an artifact update (a
        history entry takes a seq and no generation, core/generation.py). A
        status that ends a stream is waited for (Context.update, its ends): it is
        the last of its batch, or followed by a final status alone (a cancel
        queued meanwhile). So when the event before a last status is no status,
        none before the last ends the stream."""
        first, last = events[0], events[-1]
        head, tail = first.event, last.event
        kind = type(head)
        if kind is TaskCreated:
            generation = head.task.generation  # type: ignore[union-attr]
        elif kind is ArtifactUpdate or kind is StatusUpdate:
            generation = head.generation  # type: ignore[union-attr]
        else:
            return None
        ends_with = type(tail)
        if ends_with is StatusUpdate:
            # (a status alone, a turn's end after its chunks went out, has none before it)
            if len(events) > 1 and type(events[-2].event) is StatusUpdate:
                return None
        elif ends_with is not ArtifactUpdate:
            return None
        # A batch of several writes (a reader behind, a page of the log read on a
        # resume) may hold a status that ends this stream before its last event: an
        # agent that asked for input and carried on. Looked for in C (no bytecode per
        # event), and only then among the statuses.
        if StatusUpdate in map(type, map(_EVENT, events[:-1])):
            ends = self._ends
            for stored in events[:-1]:
                event = stored.event
                if type(event) is StatusUpdate and event.status.state in ends:
                    return None
        if tail.generation - generation != last.seq - first.seq:  # type: ignore[union-attr]
            return None
        after = self._after = last.seq
        batch: list[StreamOutput] = (
            events if ends_with is ArtifactUpdate else events[:-1])  # type: ignore[assignment]
        if kind is TaskCreated:
            created = head.task  # type: ignore[union-attr]
            if self.history is not None:
                created = self._trimmed(created)
            batch = [Entry(first.seq, created), *batch[1:]]
        if ends_with is StatusUpdate:
            batch.append(Entry(after, tail))  # type: ignore[arg-type]
            if tail.status.state in self._ends:  # type: ignore[union-attr]
                self.over = True  # ended at the next poll, as _entries ends it
                return batch
        if after >= self._sub.latest:
            self._level = True
        return batch

    def _entries(self, events: list[StoredEvent]) -> list[StreamOutput]:
        # A lone reader's encodings would only be kept alive, never reused.
        shared = not self._sub.alone()
        if self._stored and not shared and events:
            taken = self._stored_batch(events)
            if taken is not None:
                return taken
        batch: list[StreamOutput] = []
        after = self._after
        for stored in events:
            after = stored.seq
            event = stored.event
            if type(event) is ArtifactUpdate:  # most events: no call to _item for them
                batch.append(Entry(after, event, stored if shared else None))
                continue
            item = _item(event)
            if item is None:
                continue
            if type(item) is Task and self.history is not None:
                # its own snapshot (the send's historyLength): no encoding shared
                batch.append(Entry(after, self._trimmed(item)))
                continue
            batch.append(Entry(after, item, stored if shared else None))
            if type(item) is StatusUpdate and item.status.state in self._ends:
                # Ended at the next poll: until then this reader still counts, so
                # a reader of the same events now shares their encodings.
                self._after, self.over = after, True
                return batch
        self._after = after
        if after >= self._sub.latest:
            self._level = True
        return batch
