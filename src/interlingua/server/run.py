"""A task's run, and the one path by which events reach the store and the readers.

A *run* is one task's live state in this process while a turn of its executor
is under way (or while a request changes it). Its fields change here only: by
its own methods (a turn begins and ends, the task moved on elsewhere, a send
gave it up), its writer's and its registry's; other modules read them
(``tests/structure/test_run_state.py``). Every change is a batch of
events, checked against the lifecycle, committed to the store in one
transaction (stating the version it read), then folded into the live
projection, announced on the bus and handed to the ``on_commit`` listeners.
Nobody sees an event before it is durable. A write for a task whose turn runs in
another process (a cancel, a message) is the exception: the store writes it at
whatever version the task has reached, and checks it there
(``Writer.write_as_stored``).

A new task is written together with the executor's first event (one
transaction for "created + first status", and for a quick agent "created +
artifact + completed"), or as ``submitted`` on its own when the executor has
said nothing within a short grace (``server/grace.py``), so a slow first
step does not hide it; a non-blocking send writes it at once, since its
caller is answered with it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from ..bus.base import Bus, task_key
from ..core import lifecycle
from ..core.calls import ListTasks
from ..core.dialects import get_codec
from ..core.dialects._common import format_timestamp
from ..core.errors import (
    A2AError,
    ConcurrentModification,
    InternalError,
    InvalidTaskState,
    LifecycleError,
    StoreDown,
    task_not_found,
)
from ..core.generation import mismatch
from ..core.model import (
    Artifact,
    ArtifactUpdate,
    Event,
    HistoryAppended,
    Message,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
    TextPart,
)
from ..core.nesting import CARRIED
from ..core.parts import new_id
from ..hooks import Hooks, ended, started
from ..signals import LazyEvent, Mutex, Signal
from ..stores.base import (
    LeaseLost,
    MessageExists,
    MessageRecord,
    Scope,
    StoredEvent,
    StoreUnavailable,
    TaskExists,
    TaskPort,
    TaskRecord,
)
from .context import RequestInfo, TaskCanceled
from .idempotency import reused

__all__ = ["FLUSH_EVERY", "CommitListener", "MessageKey", "Run", "Runs", "Writer", "utcnow"]

#: a timestamp's last digits and zone, by millisecond: joined, not formatted, in
#: ``Writer.now``
_MILLIS = tuple(f"{ms:03d}Z" for ms in range(1000))

log = logging.getLogger("interlingua.engine")

#: events an executor may queue before its emit writes them (and lets readers
#: run). Only an executor that emits without ever awaiting reaches it (one that
#: awaits anything is flushed then); docs/architecture.md has the measurements.
FLUSH_EVERY = 256
#: what ``Run.queue`` looks up per chunk (and ``Writer.emit`` per emit), as plain
#: names: one load each, where an enum member's read on Python 3.11 goes through
#: its metaclass's ``__getattr__`` hook (about 1,000 instructions)
_QUEUED_AT_MOST = FLUSH_EVERY - 1
_ARTIFACT_STATES = lifecycle.ARTIFACT_STATES
_CANCELED = TaskState.CANCELED

#: what numbering a batch takes: consumed in C (a deque of no length keeps nothing)
_numbered: Callable[[Iterable[object]], None] = collections.deque[object](maxlen=0).extend
_GENERATION = itertools.repeat("generation")
_encode = msgspec.json.encode
#: seconds before each new try of a write the store failed (the last one repeated)
_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.5, 1.0)
#: how many times a write that lost to another writer's reads the task again and is
#: tried again before its loss is the caller's
_CATCH_UPS = 16

#: called after every commit with the run and the events it stored, in order
CommitListener = Callable[["Run", Sequence[StoredEvent]], None]
#: a message as sends tell it from others: (scope, message id, the digest of its
#: content, or b"" where the id alone names it; see server/idempotency.py)
MessageKey = tuple[Scope, str, bytes]
#: a follow-up message's write: its events, its (id, digest), and the generation
#: the task must be at for it (None: any)
_FollowUp = tuple[Sequence[Event], tuple[str, bytes], int | None]


def utcnow() -> datetime:
    return datetime.now(UTC)


def number(events: Sequence[Event], generation: int) -> int:
    """Number ``events`` on from ``generation`` (core/generation.py's ``after``);
    the generation after them. A batch with no history entry (nearly every one)
    is numbered in a loop in C: no bytecode per event."""
    if HistoryAppended in map(type, events):
        for event in events:
            if type(event) is not HistoryAppended:
                generation += 1
                event.generation = generation  # type: ignore[union-attr]
        return generation
    if events:
        _numbered(map(setattr, events, _GENERATION,
                      range(generation + 1, generation + 1 + len(events))))
    return generation + len(events)


class Run:
    """One task's live state in this process."""

    #: whether a write the store fails is tried again while it is out of reach (a
    #: turn's, which a blip would fail); a class attribute: no cost per run
    rides_outages = True

    __slots__ = (
        "__weakref__",  # server/grace.py holds runs weakly
        "abandoned",
        "cancelled",
        "dialect",
        "digest",
        "duplicate",
        "error",
        "flushed",
        "flusher",
        "followup",
        "if_generation",
        "inbox",
        "initial",
        "key",
        "lease",
        "lock",
        "looked_up",
        "message_id",
        "message_key",
        "now",
        "numbered",
        "other_found",
        "pending",
        "pending_state",
        "persisted",
        "push_configs",
        "reply_message",
        "request",
        "scope",
        "settled",
        "task",
        "turn",
        "version",
        "writer",
    )

    def __init__(
        self,
        writer: Writer,
        scope: Scope,
        task: Task,
        version: int,
        persisted: bool,
        dialect: str,
        request: RequestInfo,
        initial: Task | None = None,
        message_id: str | None = None,
        digest: bytes = b"",
        push_configs: list[PushConfig] | None = None,
        looked_up: bool = False,
        other_found: MessageRecord | None = None,
    ) -> None:
        self.writer = writer
        #: the writer's clock as text (its bound method: the context asks it for
        #: every status, and a method here would only forward the call)
        self.now: Callable[[], str] = writer.now
        self.scope = scope
        # task_key's text, without its call: a run is made for every send
        self.key = f"{scope.tenant}\x00{scope.owner}\x00{task.id}"
        self.task = task
        self.version = version
        self.persisted = persisted
        self.dialect = dialect
        self.request = request
        self.initial = initial
        self.message_id = message_id
        #: the send looked ``message_id`` up before making the task, and found
        #: ``other_found`` (another message under the id), or nothing: the store
        #: need not look again when it writes the task
        self.looked_up = looked_up
        self.other_found = other_found
        self.lock = Mutex()
        self.settled = Signal()
        # set once the task is in the store (or answered with a bare message)
        self.flushed = Signal()
        if persisted:
            self.flushed.set()
        self.cancelled = LazyEvent()
        self.reply_message: Message | None = None
        #: set when the send that made this run could not write its task: what
        #: the repeats of its message that joined it are answered with
        self.abandoned: A2AError | None = None
        self.turn: asyncio.Task[None] | None = None
        # events checked but not yet written, and the state they lead to
        self.pending: list[Event] = []
        self.pending_state = task.status.state
        #: the generation the event queued last took (core/generation.py): its
        #: pending events are numbered on from the batches before them, in order,
        #: so ``_write`` need only check the first of a batch (see ``number``)
        self.numbered = task.generation
        self.flusher: asyncio.Task[None] | None = None
        #: a background write that failed, raised at the executor's next emit
        self.error: BaseException | None = None
        # push configs a send carried, registered with the task's creation
        self.push_configs: list[PushConfig] = push_configs if push_configs is not None else []
        #: the digest of the message that started the current turn
        self.digest = digest
        #: the key of that message in ``Runs.by_message``, while the turn runs
        self.message_key: MessageKey | None = None
        #: a follow-up message's id and digest, recorded with its first write
        self.followup: tuple[str, bytes] | None = None
        #: with ``followup``: the generation the task must be at for it to be written
        #: (A2A 1.1's ifGenerationMatch), checked under the write's version check
        self.if_generation: int | None = None
        #: the task another process made for this run's message first
        self.duplicate: str | None = None
        #: messages sent while the turn works, for an agent that takes them
        self.inbox: asyncio.Queue[Message] | None = None
        #: the lease epoch its turn runs under: every write of the turn names it,
        #: so a turn whose lease was revoked is refused even after this process
        #: took a new one
        self.lease: int | None = None

    def begin_turn(self, turn: asyncio.Task[None], lease: int | None,
                   inbox: asyncio.Queue[Message] | None) -> None:
        """A turn of the executor runs (``turn``), under ``lease``, taking the
        messages of ``inbox`` (None: the agent takes none while it works)."""
        self.turn = turn
        self.lease = lease
        self.inbox = inbox

    def continued(self, request: RequestInfo, digest: bytes) -> None:
        """A message of ``request`` (with ``digest``) continues the task: its callers
        wait for the turn it starts to settle."""
        self.request = request
        self.settled = Signal()
        self.digest = digest

    def moved_on(self, task: Task, version: int) -> None:
        """The task as the store holds it now (written by another request or
        process); a cancel there drops what was queued here."""
        self.task, self.version = task, version
        if task.status.state is TaskState.CANCELED:
            self.pending, self.pending_state = [], TaskState.CANCELED
            self.numbered = task.generation

    def cancel(self) -> None:
        """Stop the turn (its task was canceled, or is taken away)."""
        self.cancelled.set()
        turn = self.turn
        if turn is not None and not turn.done():
            turn.cancel()

    def abandon(self, error: BaseException | None) -> None:
        """The send that made this run could not write its task: the repeats of its
        message that joined it are answered with ``error`` (an A2A error as it is;
        None: no error was raised)."""
        if isinstance(error, A2AError):
            self.abandoned = error
        elif isinstance(error, (StoreUnavailable, LeaseLost)):
            # (LeaseLost: this process was paused past its lease, and nothing was written)
            self.abandoned = StoreDown("The task store is unavailable; the task for this "
                                       "message was not written: send it again shortly")
        else:
            self.abandoned = InternalError(
                "Internal error: the task for this message could not be written; "
                "send it again")

    def lost_to(self, message_id: str, record: MessageRecord) -> None:
        """Another send holds this run's message id (another process wrote its task
        first): the callers following the run get that task if it holds this
        message, and the refusal if it holds other content (strict mode)."""
        if record.digest and self.digest and record.digest != self.digest:
            self.abandoned = reused(message_id)
        elif record.reply is not None:  # that send was answered with a bare message
            self.reply_message = record.reply
        else:
            self.duplicate = record.task_id

    # The executor's context talks to these (context._Sink).

    @property
    def max_nesting(self) -> int:
        return self.writer.max_nesting

    def emit(self, events: Sequence[Event], *, wait: bool = True) -> Coroutine[Any, Any, None]:
        # The writer's coroutine itself, not one awaiting it: a frame fewer for
        # every artifact chunk.
        return self.writer.emit(self, events, wait=wait)

    def queue(self, artifact: Artifact, append: bool,
              last_chunk: bool) -> Coroutine[Any, Any, None] | None:
        """``emit([chunk], wait=False)`` of the chunk of ``artifact``, or None when
        that would only queue it: then it is queued here, without a coroutine to
        run (the bulk of a stream's events come this way; here rather than on the
        writer, to save a call per chunk), made with its generation (the one after
        ``numbered``): none is set on it afterwards."""
        task = self.task
        if (self.error is not None or not self.persisted
                or self.pending_state not in _ARTIFACT_STATES
                or task.status.state is _CANCELED
                or len(self.pending) >= _QUEUED_AT_MOST):
            return self.writer.emit(self, [ArtifactUpdate(
                task.id, task.context_id, artifact, append, last_chunk)], wait=False)
        numbered = self.numbered = self.numbered + 1
        self.pending.append(ArtifactUpdate(task.id, task.context_id, artifact, append,
                                           last_chunk, None, numbered))
        if self.flusher is None:
            self.flusher = asyncio.get_running_loop().create_task(self.writer.flush_soon(self))
        return None

    async def reply(self, message: Message) -> None:
        await self.writer.reply(self, message)

    async def context_tasks(self) -> list[Task]:
        return await self.writer.context_tasks(self)

    def activity(self) -> int:
        """How far the task has moved (the inactivity limit watches it)."""
        return self.version


class OneOffRun(Run):
    """A run made for one write asked for now (a cancel, the end a recovery writes):
    a store out of reach is said at once (503, or the next heartbeat), not waited out
    while the caller or the heartbeat waits."""

    __slots__ = ()
    rides_outages = False


class Runs:
    """The runs of this process, by task and by the message that started their turn."""

    __slots__ = ("by_key", "by_message", "sending", "stranded")

    def __init__(self) -> None:
        self.by_key: dict[str, Run] = {}
        #: runs whose turn ended with their task left unfinished because the store
        #: failed its writes: ended failed once the store takes writes again
        #: (Recovery.end_stranded)
        self.stranded: dict[str, Run] = {}
        #: runs by the message that started their current turn
        self.by_message: dict[MessageKey, Run] = {}
        #: sends being begun, by message: a repeat waits for the first (on the
        #: future the first repeat put in place of None)
        self.sending: dict[MessageKey, asyncio.Future[None] | None] = {}

    def get(self, scope: Scope, task_id: str) -> Run | None:
        return self.by_key.get(task_key(scope, task_id))

    def track(self, run: Run, message: MessageKey | None = None) -> None:
        self.by_key[run.key] = run
        if message is not None:
            run.message_key = message
            self.by_message[message] = run

    def untrack(self, run: Run) -> None:
        if self.by_key.get(run.key) is run:
            del self.by_key[run.key]
        if run.message_key is not None and self.by_message.get(run.message_key) is run:
            del self.by_message[run.message_key]
        run.message_key = None

    def carry_on(self, run: Run) -> None:
        """``run``'s turn is over, and another begins at once that no send started
        (it takes the messages the last one left unread): the run stays tracked, no
        longer as the message that started the last turn."""
        if run.message_key is not None and self.by_message.get(run.message_key) is run:
            del self.by_message[run.message_key]
        run.message_key = None
        run.continued(run.request, b"")

    def finish(self, run: Run) -> None:
        """``run``'s turn is over (or will not begin): forgotten here, its lease let
        go, and whoever waits for it woken."""
        # untrack's body, not a call to it: a turn's end is on every send's path
        if self.by_key.get(run.key) is run:
            del self.by_key[run.key]
        if run.message_key is not None and self.by_message.get(run.message_key) is run:
            del self.by_message[run.message_key]
        run.message_key = None
        run.lease = None
        # set by the turn's writes, nearly always: no call then
        if not run.flushed.fired:
            run.flushed.set()
        if not run.settled.fired:
            run.settled.set()

    def all(self) -> list[Run]:
        return list(self.by_key.values())


class Writer:
    """Checks, commits and announces the events of runs.

    ``lease``: the epoch every write names (see server/leases.py).
    ``on_commit``: listeners called after each commit, in the order added
    (``hooks.committed``); ``hooks.commits`` are around each write.
    ``strict_ids``: a message id recorded with a write names one message, whatever
    its content (else the id and the digest do; server/idempotency.py).
    ``max_nesting``: the levels an agent's statuses and artifacts may nest (its
    data and metadata): what every binding carries by default (core/nesting.py;
    checked, with what else they must be, where the agent's context makes them:
    core/output.py).
    """

    def __init__(self, store: TaskPort, bus: Bus, *, lease: Callable[[], int | None],
                 clock: Callable[[], datetime] = utcnow, strict_ids: bool = False,
                 hooks: Hooks | None = None, max_nesting: int = CARRIED,
                 outage_grace: float = 10.0) -> None:
        self.store = store
        #: seconds a write the store failed (out of reach) is tried again for, on a
        #: new connection, before the turn is failed: the lease timeout, after which
        #: other processes may take the task
        self.outage_grace = outage_grace
        #: False once the server stops: its last writes are not held for an outage
        self.rides_outages = True
        self.max_nesting = max_nesting
        self.bus = bus
        self.lease = lease
        self.clock = clock
        self.strict_ids = strict_ids
        #: awaited when the store refuses a request's own write for this process's
        #: lease (``LeaseLost``): takes the new lease (``Recovery.retake_lease``), under
        #: which the write is made once more. None: the refusal is the caller's
        self.retake_lease: Callable[[], Awaitable[None]] | None = None
        hooks = hooks if hooks is not None else Hooks()
        self.on_commit: list[CommitListener] = hooks.committed
        self._commit_hooks = hooks.commits
        self._now_key: int | None = None
        self._now_text = ""
        self._second: int | None = None
        self._second_text = ""

    def now(self) -> str:
        if self.clock is utcnow:
            # Formatting a datetime costs more than the rest of a small event
            # (several µs): the text is kept for its millisecond, and the part
            # up to the second for its second.
            key = time.time_ns() // 1_000_000
            if key != self._now_key:
                second, ms = divmod(key, 1000)
                if second != self._second:
                    self._second = second
                    self._second_text = format_timestamp(
                        datetime.fromtimestamp(second, UTC))[:-4]
                self._now_key = key
                self._now_text = self._second_text + _MILLIS[ms]
            return self._now_text
        return format_timestamp(self.clock())

    def status(self, task: Task, state: TaskState, text: str | None = None) -> StatusUpdate:
        message = None
        if text is not None:
            message = Message(message_id=new_id(), role=Role.AGENT, parts=[TextPart(text=text)],
                              task_id=task.id, context_id=task.context_id)
        return StatusUpdate(task_id=task.id, context_id=task.context_id,
                            status=TaskStatus(state=state, message=message, timestamp=self.now()))

    async def fail(self, run: Run, text: str) -> None:
        """End the task failed, unless it ended (or was taken away) meanwhile."""
        with contextlib.suppress(LifecycleError, TaskCanceled, ConcurrentModification,
                                 LeaseLost, MessageExists):
            await self.emit(run, [self.status(run.task, TaskState.FAILED, text)])

    async def persist_created(self, run: Run) -> None:
        async with run.lock:
            if not run.persisted and run.reply_message is None:
                try:
                    await self._write(run, [])
                except LeaseLost:
                    if not await self._lease_retaken(run):
                        raise
                    await self._write(run, [])

    @staticmethod
    def waits_for_first_event(run: Run) -> bool:
        """A new task not yet written whose turn runs, silent so far."""
        turn = run.turn
        return (not run.persisted and run.reply_message is None and turn is not None
                and not turn.done())

    async def submit(self, run: Run) -> None:
        """Write ``run``'s new task as submitted, if its executor has still said
        nothing. A failed write reaches the executor at its next emit, as a
        background flush's does."""
        try:
            async with run.lock:
                if not self.waits_for_first_event(run):
                    return
                await self._write(run, [])
            if run.pending:  # queued while the task was being written
                await self.flush(run)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            run.error = exc

    def emit(self, run: Run, events: Sequence[Event], *, wait: bool = True
             ) -> Coroutine[Any, Any, None]:
        """Check ``events`` and have them written (await it; a refusal is raised
        by the call).

        ``wait=False`` (artifact chunks, progress updates) queues them and
        returns: a fast executor then gets many events into one transaction,
        and readers still see nothing before it commits. Queued events are
        written when the executor next yields, when the queue is full, or with
        the next waiting emit, whichever comes first.
        """
        if run.error is not None:
            error, run.error = run.error, None
            raise error
        if run.task.status.state is _CANCELED:
            raise TaskCanceled(f"task {run.task.id} was canceled")
        run.pending_state = lifecycle.check_from(run.pending_state, run.task.id, events)
        # numbered as they are queued (``number``, written out: no call more per emit)
        numbered = run.numbered
        if HistoryAppended in map(type, events):
            run.numbered = number(events, numbered)
        else:
            _numbered(map(setattr, events, _GENERATION,
                          range(numbered + 1, numbered + 1 + len(events))))
            run.numbered = numbered + len(events)
        run.pending.extend(events)
        # a waiting emit hands back the flush's coroutine: no frame of its own
        # (every turn's last write comes this way)
        return self.flush(run) if wait else self._queued(run)

    async def _queued(self, run: Run) -> None:
        """``emit(wait=False)``'s write, once its events are queued."""
        if not run.persisted or len(run.pending) >= FLUSH_EVERY:
            await self.flush(run)
            # An executor that never awaits anything else would keep the loop
            # to itself: let the streams send what was just committed.
            await asyncio.sleep(0)
        elif run.flusher is None:
            run.flusher = asyncio.get_running_loop().create_task(self.flush_soon(run))

    async def flush_soon(self, run: Run) -> None:
        """``flush`` until nothing is queued, a failure kept for the executor's next
        emit (a run's flusher task). While it is set an emit only queues: what was
        queued during a batch's write is written next, here, not left for whatever
        writes the task after (an executor waiting for a message may write nothing)."""
        try:
            await self.flush(run)
            # (no await between the last look and the flusher's end below)
            while run.pending:
                await self.flush(run)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # handed to the executor at its next emit
            run.error = exc
        finally:
            run.flusher = None

    async def flush(self, run: Run, message: _FollowUp | None = None) -> None:
        """Write what ``run`` has queued. ``message``: a follow-up message's events,
        then written in a batch of their own, after what was queued before them."""
        async with run.lock:
            while True:
                if run.pending or not run.persisted:
                    events, run.pending = run.pending, []
                    try:
                        try:
                            try:
                                await self._write(run, events)
                            except LeaseLost:
                                if not await self._lease_retaken(run):
                                    raise
                                await self._write(run, events)
                        except ConcurrentModification:
                            await self._write_caught_up(run, events)
                    except BaseException as exc:
                        # The batch is lost (its catch-up's failure too); what follows
                        # is checked against what was stored.
                        run.pending = []
                        run.pending_state = run.task.status.state
                        run.numbered = run.task.generation
                        if message is not None and not isinstance(exc, asyncio.CancelledError):
                            # the executor's events, written before a message's: its
                            # failure is the executor's too (at its next emit)
                            run.error = exc
                        raise
                    finally:
                        run.followup = run.if_generation = None
                if message is None:
                    return
                self._queue_message(run, message)
                message = None

    async def _lease_retaken(self, run: Run) -> bool:
        """After a write of ``run`` was refused for its lease (``LeaseLost``): whether
        it may be made once more, under the new lease this process has then taken.
        So for a request's own write (a new task, a follow-up message, a cancel: it
        was not written, and its caller would send it again), not for a turn's: a
        turn keeps the lease it began under, and is stopped once that is lost."""
        if run.lease is not None or self.retake_lease is None:
            return False
        await self.retake_lease()
        return True

    async def retake_lease_for(self, run: Run) -> None:
        """``run``'s turn ends, its new task refused for the lease the turn began under
        (lost): the process's new lease is taken now, not at its next heartbeat, so that
        the send its caller makes again is written. The turn, over, is not one of those
        the lease's loss stops. A store that fails it leaves it to the heartbeat."""
        run.lease = None
        if self.retake_lease is not None:
            try:
                await self.retake_lease()
            except Exception as exc:
                log.warning("the lease could not be taken again: %s", exc)

    @staticmethod
    def _queue_message(run: Run, message: _FollowUp) -> None:
        """``emit``'s checks and queuing, for a follow-up message's events, under
        ``run.lock``: the batch that takes them is the one that records its id. A
        failure kept for the executor (``run.error``) is left to it."""
        events, followup, if_generation = message
        if run.task.status.state is _CANCELED:
            raise TaskCanceled(f"task {run.task.id} was canceled")
        run.pending_state = lifecycle.check_from(run.pending_state, run.task.id, events)
        run.numbered = number(events, run.numbered)
        run.pending.extend(events)
        run.followup = followup
        run.if_generation = if_generation

    async def _write_caught_up(self, run: Run, events: list[Event]) -> None:
        """``events``, whose write found the task moved on by another writer (another
        request here, or another process: a cancel, a message for this turn), written
        after reading it again and checking them again; as often as it moves on
        meanwhile (each loss is another writer's write, so this ends), up to a bound.
        Under ``run.lock``."""
        for tries_left in range(_CATCH_UPS - 1, -1, -1):
            rec = await self.catch_up(run)
            if rec is None:
                raise task_not_found(run.task.id) from None
            run.pending_state = rec.task.status.state
            if rec.task.status.state is TaskState.CANCELED:
                raise TaskCanceled(f"task {run.task.id} was canceled") from None
            run.pending_state = lifecycle.check_all(run.task, events)
            try:
                await self._write(run, events)
                return
            except ConcurrentModification:
                if not tries_left:
                    raise

    async def catch_up(self, run: Run) -> TaskRecord | None:
        """``run``'s task read again after another writer's write (None: gone): the
        messages written for its turn up to what was read handed to the executor,
        then the run moved on to it. Under ``run.lock``. A task found canceled stops
        the run's turn, however its cancel was found (news of it, or a write of the
        turn's own that it made lose)."""
        rec = await self.store.get_task(run.scope, run.task.id)
        if rec is not None and rec.version != run.version:
            await self.hand_over_messages(run, rec.version)
            run.moved_on(rec.task, rec.version)
            if rec.task.status.state is _CANCELED:
                run.cancel()
        return rec

    async def resume(self, run: Run) -> bool:
        """Set ``run``'s task working again, for a new turn that takes the messages its
        last one left unread (it asked for input without reading them): only from
        input-required as the run holds it, at the run's version. Messages another
        process writes meanwhile are read into the inbox, and it is tried again; False
        when anything else moved the task on (an answer sent meanwhile, a cancel)."""
        async with run.lock:
            for _ in range(_CATCH_UPS):
                if run.pending or run.task.status.state is not TaskState.INPUT_REQUIRED:
                    return False
                # the task the last turn's callers were answered with is theirs: the
                # new turn folds its events into a copy of its own
                task = run.task
                run.task = msgspec.structs.replace(
                    task, history=list(task.history),
                    artifacts=[lifecycle.own_artifact(a) for a in task.artifacts])
                try:
                    await self._write(run, [self.status(run.task, TaskState.WORKING)])
                except ConcurrentModification:
                    if await self.catch_up(run) is None:
                        return False
                    continue
                run.pending_state = run.task.status.state
                return True
        return False

    async def taken_away(self, run: Run) -> None:
        """``run``'s turn lost its lease (another process revoked it, and ended or
        runs its task): the run moved on to the task as the store has it, which the
        callers here are answered with, not with what the turn last wrote. A store
        that fails the read leaves the run as it was."""
        if not run.persisted:
            return
        try:
            rec = await self.store.get_task(run.scope, run.task.id)
        except Exception as exc:
            log.warning("task %s could not be read once its lease was lost: %s",
                        run.task.id, exc)
            return
        if rec is not None and rec.version != run.version:
            run.moved_on(rec.task, rec.version)

    async def hand_over_messages(self, run: Run, upto: int) -> None:
        """Messages another process wrote into the log of a turn running here (for an
        agent that takes messages while it works), after the run's version up to
        ``upto`` (the version the run moves on to next): handed to the executor. Read
        the task first, then this: a message written between the two reads is left
        for the next look (its news names a later seq), neither skipped nor handed twice."""
        if run.inbox is None:
            return
        for stored in await self.store.read_events(run.scope, run.task.id, run.version):
            if stored.seq > upto:
                continue
            event = stored.event
            if type(event) is HistoryAppended and event.message.role is Role.USER:
                run.inbox.put_nowait(event.message)

    async def emit_message(self, run: Run, events: Sequence[Event], message_id: str,
                           digest: bytes, *, if_generation: int | None = None) -> None:
        """``emit``, the write recording a follow-up message's id and digest (so a
        retry finds it). ``if_generation``: written only if the task is then at that
        generation, else ``TaskGenerationMismatch`` (a write that lost the race to
        another one, here or in another process, is checked again against what won).

        The events are queued once the run's lock is held, and written in a batch
        of their own: a flush of the executor's events that took them along would
        write them without the id, or fail them and answer only its own caller."""
        await self.flush(run, (events, (message_id, digest), if_generation))

    async def write_as_stored(self, run: Run, events: Sequence[Event], *,
                              message: tuple[str, bytes] | None = None,
                              if_generation: int | None = None) -> None:
        """Write ``events`` for a task whose turn runs in no run of this process (a
        cancel, a message for a turn another process runs) at whatever version the
        task is at, not at ``run.version``: that turn may commit a version every few
        milliseconds, and a write that had to win a race with it for one would lose
        every time. The store checks them against the task as it is then, in the same
        transaction (``LifecycleError``; ``if_generation`` and ``message`` as
        ``emit_message`` has them), and numbers them; the turn's process, told of the
        write, catches up with it at its next write. The write does not make this
        process the task's owner. ``run`` then moves on to the task as stored."""
        ends = started(self._commit_hooks, run, events) if self._commit_hooks else None
        try:
            batch = list(events)
            version = await self.store.append(
                run.scope, run.task.id, None, batch, now=self.now(), message=message,
                strict=self.strict_ids, if_generation=if_generation)
            # (the batch's seqs: the last of the log at ``version``)
            stored = list(map(StoredEvent, range(version - len(batch) + 1, version + 1), batch))
            try:
                await self.bus.publish(run.key, stored, created=False)
            except Exception:  # committed: it stands (as in ``_write``)
                log.exception("the bus could not announce a committed write of task %s",
                              run.task.id)
            for listener in self.on_commit:
                try:
                    listener(run, stored)
                except Exception:  # a listener's fault is not the write's
                    log.exception("a commit listener failed")
        except BaseException as exc:
            if ends is not None:
                ended(ends, exc)
            raise
        if ends is not None:
            ended(ends, None)
        rec = await self.store.get_task(run.scope, run.task.id)
        if rec is None:
            raise task_not_found(run.task.id)
        run.moved_on(rec.task, rec.version)

    async def _write(self, run: Run, events: Sequence[Event]) -> None:
        # tested here, not in a wrapper: no call more per write when nothing is hooked
        ends = started(self._commit_hooks, run, events) if self._commit_hooks else None
        try:
            now = self.now()
            # the epoch the write names: its turn's, else this process's
            lease = run.lease if run.lease is not None else self.lease()
            # the events are numbered on from the task's generation (``number``):
            # checked by the batch's first, renumbered only when the task moved on
            # meanwhile (another writer) or a batch before it was lost
            generation = run.task.generation
            if events:
                first, last = events[0], events[-1]
                if (type(first) is HistoryAppended or type(last) is HistoryAppended
                        or first.generation != generation + 1):  # type: ignore[union-attr]
                    generation = number(events, generation)
                    # and what was queued after it meanwhile, on from it
                    run.numbered = number(run.pending, generation) if run.pending \
                        else generation
                else:
                    generation = last.generation  # type: ignore[union-attr]
            if not run.persisted:
                assert run.initial is not None
                batch: list[Event] = [TaskCreated(task=run.initial), *events]
                # (a failure is not tried again: the task's creation records its message,
                # so it is the request's own write, answered 503 and sent again)
                try:
                    version = await self.store.create_task(
                        run.scope, batch, dialect=run.dialect, now=now, message_id=run.message_id,
                        push_configs=run.push_configs, push_dialect=run.request.minor,
                        digest=run.digest, lease=lease,
                        strict=self.strict_ids, looked_up=run.looked_up,
                        other_found=run.other_found,
                    )
                except TaskExists:
                    raise await self._task_exists(run) from None
                run.persisted = True
                run.initial = None  # the created event holds it now, as long as it is needed
                run.flushed.set()
                base = 0
            else:
                batch = list(events)
                followup = run.followup
                try:
                    if followup is None:  # nearly every write: no message id to record
                        version = await self.store.append(run.scope, run.task.id, run.version,
                                                          batch, now=now, lease=lease)
                    else:
                        expected = run.if_generation
                        if expected is not None and expected != run.task.generation:
                            raise mismatch(run.task.id, expected, run.task.generation)
                        version = await self.store.append(
                            run.scope, run.task.id, run.version, batch, now=now, lease=lease,
                            message=followup, strict=self.strict_ids)
                except StoreUnavailable as exc:
                    if followup is not None or not (run.rides_outages and self.rides_outages):
                        # a message's write is its request's own: answered 503, and sent
                        # again by its caller (its message id makes that safe); so is a
                        # one-off write's, and none is held while the server stops
                        raise
                    version = await self._tried_again(run, batch, functools.partial(
                        self.store.append, run.scope, run.task.id, run.version, batch, now=now,
                        lease=lease), exc)
                base = run.version
            lifecycle.apply_checked(run.task, events)  # checked in emit
            run.task.generation = generation
            run.version = version
            # map: no bytecode per event, unlike a comprehension
            stored = list(map(StoredEvent, range(base + 1, base + 1 + len(batch)), batch))
            try:
                await self.bus.publish(run.key, stored, created=base == 0)
            except Exception:
                # The batch is committed: it stands, and the readers here were handed
                # it before a shared bus talks to its server (which keeps and resends
                # news it could not send).
                log.exception("the bus could not announce a committed write of task %s",
                              run.task.id)
            for listener in self.on_commit:
                try:
                    listener(run, stored)
                except Exception:  # a listener's fault is not the write's
                    log.exception("a commit listener failed")
            if run.task.status.state in lifecycle.RETURN_STATES:
                run.settled.set()
        except BaseException as exc:
            if ends is not None:
                ended(ends, exc)
            raise
        if ends is not None:
            ended(ends, None)

    async def _tried_again(self, run: Run, batch: Sequence[Event],
                           write: Callable[[], Coroutine[Any, Any, int]],
                           failed: StoreUnavailable) -> int:
        """The version ``write`` (of ``batch`` after ``run.version``) reached, tried
        again while the store is out of reach, for ``outage_grace`` seconds (then
        ``failed``, or the last failure, is raised). A try that failed may have been
        committed (the connection lost with the commit's answer): before each new try
        the log is read, and a batch found there is not written twice."""
        base = run.version
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.outage_grace
        delays = itertools.chain(_RETRY_DELAYS, itertools.repeat(_RETRY_DELAYS[-1]))
        while loop.time() + (delay := next(delays)) <= deadline:
            await asyncio.sleep(delay)
            try:
                if await self._committed(run, base, batch):
                    return base + len(batch)
                return await write()
            except StoreUnavailable as exc:
                failed = exc
        raise failed

    async def _committed(self, run: Run, base: int, batch: Sequence[Event]) -> bool:
        """Whether the log of ``run``'s task holds ``batch`` right after ``base``."""
        stored = await self.store.read_events(run.scope, run.task.id, base, limit=len(batch))
        # compared as stored: a value JSON does not keep (a tuple, a datetime) reads back
        # as another Python value, and the same bytes
        return len(stored) == len(batch) and all(
            _encode(s.event) == _encode(e) for s, e in zip(stored, batch, strict=True))

    async def _task_exists(self, run: Run) -> Exception:
        """What a new task whose id is taken (a client's choice) is refused with:
        ``MessageExists`` when its own message made that task (the same send, written
        at once by another process: the caller is answered with that task, as an
        exact retry is; in strict mode, other content under the id is refused as
        reused), else that the task exists."""
        if run.message_id is not None:
            found = await self.store.find_message(run.scope, run.message_id, run.digest)
            if found is not None and found.task_id == run.task.id and (
                    self.strict_ids or not found.digest or found.digest == run.digest):
                return MessageExists(run.message_id, found)
        return InvalidTaskState(f"Task {run.task.id} already exists")

    async def reply(self, run: Run, message: Message) -> None:
        # Under the lock: a grace write of the task in flight decides first.
        async with run.lock:
            if (not run.persisted and run.initial is not None and len(run.task.history) == 1
                    and get_codec(run.dialect).bare_replies):
                # A first answer with no task: the caller gets the bare message.
                # (v0.1 has no bare answers: its callers named the task, and they
                # get it completed with the message as its status message. So
                # does a caller whose task was already written, by its grace.)
                # Its message is recorded with the answer, so a retry gets that
                # answer and runs nothing: a write that fails, or finds the message
                # taken meanwhile by another process (MessageExists), fails the
                # turn as a task's first write would (TurnRunner).
                if run.message_id is not None:
                    await self.store.record_reply(run.scope, run.message_id, run.digest,
                                                  message, now=self.now(),
                                                  strict=self.strict_ids)
                run.reply_message = message
                run.flushed.set()
                run.settled.set()
                return
        message = msgspec.structs.replace(message, task_id=run.task.id)
        await self.emit(run, [StatusUpdate(
            task_id=run.task.id, context_id=run.task.context_id,
            status=TaskStatus(state=TaskState.COMPLETED, message=message, timestamp=self.now()))])

    async def context_tasks(self, run: Run) -> list[Task]:
        out: list[Task] = []
        token: str | None = None
        while True:
            page = await self.store.list_tasks(run.scope, ListTasks(
                context_id=run.task.context_id, page_size=100, page_token=token,
                include_artifacts=True))
            out.extend(t for t in page.tasks if t.id != run.task.id)
            token = page.next_page_token
            if not token:
                break
        out.reverse()
        return out
