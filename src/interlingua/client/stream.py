"""Following a task's event stream, and picking it up again when it breaks.

Theory of operation
-------------------
A stream (``SendStreamingMessage`` / ``message/stream``, or a subscription,
``SubscribeToTask`` / ``tasks/resubscribe``) is an SSE response whose events
carry JSON-RPC responses. interlingua servers give every event the task's
sequence number as its SSE ``id``; a subscription sent with
``Last-Event-ID: N`` gets every event after N from the task's log, then the
live ones.

``follow`` turns that into one uninterrupted sequence of ``StreamEvent``:

- it ends cleanly once the task is in a final state for the turn (terminal,
  ``input-required`` or ``auth-required``) or the agent answered with a bare
  message;
- when the connection breaks or ends before such a state, it subscribes to
  the task again with ``Last-Event-ID`` = the last sequence number received,
  after an exponential backoff with jitter; attempts that bring nothing new
  are counted, and after ``ResumePolicy.retries`` of them in a row it gives
  up with ``StreamInterrupted``;
- a stream that sends nothing for the client's timeout has not broken: the
  agent is slower than the caller would wait. It ends at once with
  ``StreamTimeout`` (an ``AgentTimeout``), naming the task and the last event;
- a resumption answered 503 or 429 with ``Retry-After`` (a gateway warming up
  after a restart, a server draining or rate-limiting) waits as long as the
  server says, up to ``ResumePolicy.max_retry_after``, before the next attempt
  (each such answer counts as an attempt that brought nothing);
- a reader that fell too far behind is told so by the server (an error whose
  data says ``resumable``); it reconnects at once, without waiting;
- any other ``event: error`` is raised as the ``A2AError`` it decodes to;
- events at or before the last sequence number seen are dropped, so the
  consumer sees each event once, in order;
- a stream that ends, or whose resumption is refused, before its final event
  while the task has finished meanwhile (some agents refuse to subscribe to a
  finished task, or end the subscription silently) ends with the task read then
  (``GetTask``): its final state and artifacts, marked ``reconciled``, never an
  end without them; a task that ``GetTask`` finds not to exist ends it at once
  with ``TaskNotFound``, not after every attempt.

The task id needed to resubscribe comes from the first event (a ``Task``
snapshot or any update). A stream that breaks before its first event is
not retried: the message may or may not have reached the agent, and sending
it again could start a second task. The error is raised as it is.

Servers that send no SSE ids can still be resumed, but only from "now": the
resubscription starts with the task as it stands, and events in between are
not replayed. A snapshot the same, byte for byte, as the event delivered just
before it is no news and is not delivered again.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..core import lifecycle
from ..core.calls import SendMessage, SubscribeToTask
from ..core.dialects.base import Codec, StreamItem
from ..core.errors import A2AError, TaskNotFound
from ..core.model import TERMINAL_STATES, Message, StatusUpdate, Task, TaskState
from ..core.reading import ascii_int
from ..core.sse import SSEDecoder, SSEEvent
from .card import retry_after
from .errors import (
    AgentTimeout,
    AgentUnreachable,
    BadResponse,
    ClientError,
    too_deep,
    too_large,
)
from .generations import GenerationTracker, generation_of
from .transport import HTTPReply, StreamReply

__all__ = [
    "Connection",
    "ResumePolicy",
    "StreamEvent",
    "StreamInterrupted",
    "StreamTimeout",
    "follow",
]


class StreamEvent(msgspec.Struct, frozen=True):
    """One event of a stream: what happened, and where it stands in the task's log.

    ``item`` is a ``Task`` (a snapshot, usually first), a ``Message`` (a
    bare reply, which ends the stream), a ``StatusUpdate`` or an
    ``ArtifactUpdate``. ``seq`` is the event's sequence number in the
    task's log (the SSE id; None when the server sent none). ``raw`` is the
    JSON-RPC ``result`` member exactly as the agent sent it.
    """

    seq: int | None
    item: StreamItem
    raw: bytes = b""
    #: the item is the task fetched because events were missed (a generation gap, or a
    #: stream that ended, or whose resumption was refused, before its final event
    #: came), standing in for them; ``raw`` is then the ``GetTask`` answer
    reconciled: bool = False

    @property
    def generation(self) -> int:
        """The task's generation after this event (A2A 1.1); 0 when not known."""
        item = self.item
        return 0 if isinstance(item, Message) else item.generation

    @property
    def task_id(self) -> str | None:
        item = self.item
        return item.id if isinstance(item, Task) else item.task_id

    @property
    def state(self) -> TaskState | None:
        """The task's state after this event, when the event says it."""
        item = self.item
        if isinstance(item, (Task, StatusUpdate)):
            return item.status.state
        return None

    @property
    def final(self) -> bool:
        """True when nothing follows in this stream: the turn is over."""
        if isinstance(self.item, Message):
            return True
        state = self.state
        return state is not None and state in lifecycle.RETURN_STATES


def _sleep(seconds: float) -> Awaitable[None]:
    return asyncio.sleep(seconds)


@dataclass(frozen=True, kw_only=True)
class ResumePolicy:
    """How a broken stream is resumed.

    ``retries``: reconnection attempts in a row that bring no new event
    before giving up (0: never resume). The n-th waits
    ``min(max_backoff, backoff * 2**(n-1))`` seconds, of which the fraction
    ``jitter`` is random (so many clients cut at once do not return at once).
    An attempt answered 503 or 429 with ``Retry-After`` waits, before the next,
    as long as the server said if that is longer, up to ``max_retry_after``
    seconds. ``sleep`` and ``random`` are replaceable for tests.
    """

    retries: int = 5
    backoff: float = 0.25
    max_backoff: float = 8.0
    jitter: float = 0.5
    max_retry_after: float = 30.0
    sleep: Callable[[float], Awaitable[None]] = field(default=_sleep, repr=False)
    random: Callable[[], float] = field(default=random.random, repr=False)

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ValueError("retries must be >= 0")
        if self.backoff < 0 or self.max_backoff < 0 or self.max_retry_after < 0:
            raise ValueError("backoff, max_backoff and max_retry_after must be >= 0")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError("jitter must be between 0 and 1")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before attempt ``attempt`` (1-based); ``retry_after``: the
        seconds the last attempt's 503 or 429 said (waited, up to ``max_retry_after``,
        when longer than the backoff)."""
        ceiling = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        wait = ceiling * (1.0 - self.jitter + self.jitter * self.random())
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_retry_after))
        return wait


class StreamInterrupted(AgentUnreachable):
    """The stream broke and could not be resumed within the allowed attempts."""

    def __init__(self, message: str, *, task_id: str | None, last_event_id: int | None) -> None:
        super().__init__(message)
        self.task_id = task_id
        self.last_event_id = last_event_id


class StreamTimeout(AgentTimeout):
    """The stream sent nothing for the client's timeout: the agent did not answer in
    time, as a call's ``AgentTimeout`` says. Not resumed (nothing broke):
    ``subscribe(task_id, last_event_id=...)`` goes on where it stopped."""

    def __init__(self, message: str, *, task_id: str | None, last_event_id: int | None) -> None:
        super().__init__(message)
        self.task_id = task_id
        self.last_event_id = last_event_id


# ----------------------------------------------------------------- one connection


class _Frame(msgspec.Struct):
    # One SSE event's data: a JSON-RPC response; every member optional.
    jsonrpc: str | msgspec.UnsetType = msgspec.UNSET
    id: Any = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: Any = msgspec.UNSET


_frame = msgspec.json.Decoder(_Frame)


def envelope_fault(jsonrpc: Any, answered: Any, *, result: bool, error: bool,
                   rid: int | None) -> str | None:
    """What makes a JSON-RPC response (its members ``jsonrpc`` and ``id``; whether it has
    a ``result``, an ``error``) no answer to the request ``rid``, said after "answered";
    None when it is one (JSON-RPC 2.0 §5). An id of null is taken (an error to a request
    whose id could not be read; a peer's success), as is an envelope without a version."""
    if result and error:
        return "both a result and an error"
    if not isinstance(jsonrpc, msgspec.UnsetType) and jsonrpc != "2.0":
        return f"JSON-RPC {jsonrpc!r}, not 2.0"
    if (rid is not None and answered is not None and not isinstance(answered, msgspec.UnsetType)
            and (type(answered) is not int or answered != rid)):
        return f"request {answered!r}, not {rid}"
    return None


class _Lagged(Exception):
    """The server dropped a reader that fell behind; it may resume."""

    def __init__(self, message: str, last_event_id: int | None) -> None:
        super().__init__(message)
        self.last_event_id = last_event_id


class Connection:
    """One HTTP request of a stream: its events as (seq, raw result).

    Either an SSE answer (``reply``) or, from a server that answered the
    streaming request with a plain JSON-RPC result, that one result
    (``single``).
    """

    def __init__(self, codec: Codec, url: str, *, reply: StreamReply | None = None,
                 single: bytes | None = None, rid: int | None = None) -> None:
        self.codec = codec
        self.url = url
        self._reply = reply
        self._single = single
        #: the id of the JSON-RPC request, which every event answers (None: not checked)
        self._rid = rid

    async def events(self) -> AsyncGenerator[tuple[int | None, bytes], None]:
        if self._reply is None:
            if self._single is not None:
                yield None, self._single
            return
        decoder = SSEDecoder()
        limit = self._reply.max_bytes
        async with contextlib.aclosing(self._reply.chunks()) as chunks:
            async for chunk in chunks:
                for ev in decoder.feed(chunk):
                    yield self._read(ev, limit)
                if limit is not None and decoder.pending > limit:
                    # one event that never ends (or a line that never does)
                    raise too_large(self.url, limit)
        for ev in decoder.end():  # an event the stream's last byte, a CR, ended
            yield self._read(ev, limit)

    def _read(self, ev: SSEEvent, limit: int | None) -> tuple[int | None, bytes]:
        if limit is not None and len(ev.data) > limit:
            raise too_large(self.url, limit)
        try:
            return self._event(ev)
        except RecursionError:  # deeper than the decoder goes
            raise too_deep(self.url) from None

    async def aclose(self) -> None:
        if self._reply is not None:
            await self._reply.aclose()

    def _event(self, ev: SSEEvent) -> tuple[int | None, bytes]:
        try:
            frame = _frame.decode(ev.data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise BadResponse(
                f"{self.url} sent a stream event that is not a JSON-RPC response: "
                f"{_clip(ev.data)}"
            ) from None
        result = not isinstance(frame.result, msgspec.UnsetType)
        error = frame.error is not msgspec.UNSET
        if result or error or not isinstance(frame.jsonrpc, msgspec.UnsetType):
            # a JSON-RPC response (a bare task's "id" is its own), checked first: an
            # error to another request is not this stream's
            fault = envelope_fault(frame.jsonrpc, frame.id, rid=self._rid, result=result,
                                   error=error)
            if fault is not None:
                raise BadResponse(f"{self.url} sent a stream event that answered {fault}")
        if frame.error is not msgspec.UNSET:
            raise self._error(frame.error)
        if isinstance(frame.result, msgspec.UnsetType):
            if isinstance(frame.jsonrpc, msgspec.UnsetType) and ev.event != "error":
                # no JSON-RPC envelope at all: the event is the result itself (python-a2a
                # streams bare task objects); the codec says whether it is one
                return _seq(ev.id), ev.data.encode()
            what = "an error event" if ev.event == "error" else "a stream event"
            raise BadResponse(f"{self.url} sent {what} with neither result nor error")
        return _seq(ev.id), bytes(frame.result)

    def _error(self, error: Any) -> Exception:
        code = error.get("code") if isinstance(error, dict) else None
        if not isinstance(code, int) or isinstance(code, bool):
            return BadResponse(f"{self.url} sent a JSON-RPC error without an integer code")
        return lagged_or(self.codec.decode_error(error))


def lagged_or(err: A2AError) -> Exception:
    """``err``, or the lag it reports (its data says ``resumable``)."""
    data = err.data
    if isinstance(data, dict) and data.get("resumable") in (True, "true"):
        return _Lagged(err.message, _seq(data.get("lastEventId")))
    return err


#: an event's sequence number as the agent wrote it (its id, a resume hint), if it is one
_seq = ascii_int


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:117] + "..."


# ------------------------------------------------------------------ the follower

#: opens one request of a stream: the call, and the Last-Event-ID to send (or None)
Opener = Callable[[SendMessage | SubscribeToTask, int | None], Awaitable[Connection]]
#: the task and the agent's answer as sent, when it is in a final state for its turn
#: (None while it runs): asked when a stream ends, or a resumption is refused, before
#: its final event
FinishedCheck = Callable[[str], Awaitable[tuple[Task, bytes] | None]]
#: the task as it stands, and the agent's answer as sent (to fill a generation gap)
Reconcile = Callable[[str], Awaitable[tuple[Task, bytes]]]


async def follow(
    open_stream: Opener,
    call: SendMessage | SubscribeToTask,
    *,
    last_event_id: int | None = None,
    policy: ResumePolicy,
    finished: FinishedCheck,
    through_interruptions: bool = False,
    reconcile: Reconcile | None = None,
) -> AsyncGenerator[StreamEvent, None]:
    """Every event of the stream ``call`` opens, resuming it when it breaks.

    ``through_interruptions``: a v1.0 subscription, which goes on through
    input-required and auth-required to the task's end; otherwise the stream
    ends with the turn (or, in older dialects, the server ends it there).
    ``reconcile``: an A2A 1.1 stream, whose events' generations are checked; a
    gap is filled with the task fetched through it.
    """
    state = _Position(call.id if isinstance(call, SubscribeToTask) else None, last_event_id)
    state.through_interruptions = through_interruptions
    if reconcile is not None:
        state.generations = GenerationTracker()
        state.reconcile = reconcile
    failures = 0
    resuming = False
    while True:
        state.progressed = state.lagged = state.done = False
        # the task found finished when the stream ended without its final event: that
        # event's stand-in, the stream's last (its artifacts and final state, never lost)
        end: tuple[Task, bytes] | None = None
        #: the seconds the server said to wait (a 503 or 429 with ``Retry-After``)
        later: float | None = None
        try:
            conn = await open_stream(call, state.last)
        except (A2AError, ClientError) as exc:
            reason, later, end = await _unopened(exc, state, resuming, finished)
        else:
            try:
                async with contextlib.aclosing(state.read(conn)) as events:
                    async for event in events:
                        yield event
                if state.done:
                    return
                reason = "the stream ended before the task reached a final state"
                if (not state.progressed and isinstance(call, SubscribeToTask)
                        and (state.last is not None or resuming)):
                    end = await finished(call.id)
                    if end is not None and not resuming:
                        # Nothing after the caller's ``last_event_id`` and the task is
                        # done: the events asked for were its last, none missed.
                        return
            except _Lagged as exc:
                state.lagged = True
                reason = str(exc)
                if state.last is None:
                    state.last = exc.last_event_id
            except AgentUnreachable as exc:
                # A resumption that breaks before its first event, of a task that has
                # finished meanwhile, from an agent without event ids (nothing to replay):
                # some refuse such a subscription by breaking off the stream they began
                # (a2a-sdk 0.3's HTTP+JSON routes). It is over. With event ids, another
                # attempt may still replay what came after the last one.
                if (resuming and not state.progressed and state.last is None
                        and state.task_id is not None):
                    end = await _quietly(finished, state.task_id)
                if end is None and isinstance(exc, AgentTimeout):
                    # quiet, not broken: the agent is slower than the caller waits
                    raise _gone_quiet(str(exc), state.task_id, state.last) from None
                reason = str(exc)
            except TaskNotFound:
                raise
            except A2AError:
                # As above: a resumption answered with an error instead of events.
                if resuming and state.task_id is not None:
                    end = await _quietly(finished, state.task_id)
                if end is None:
                    raise
            finally:
                await conn.aclose()
        if end is not None:
            task, raw = end
            yield StreamEvent(None, task, raw, reconciled=True)
            return
        task_id = state.task_id
        if task_id is None:
            raise StreamInterrupted(
                f"the stream broke before it named its task, so it cannot be resumed ({reason})",
                task_id=None, last_event_id=state.last,
            )
        failures = 1 if state.progressed else failures + 1
        if failures > policy.retries:
            raise StreamInterrupted(
                f"the stream of task {task_id} broke ({reason}); " + _given_up(policy, state.last),
                task_id=task_id, last_event_id=state.last,
            )
        if not state.lagged:
            await policy.sleep(policy.delay(failures, later))
        call = SubscribeToTask(id=task_id, tenant=call.tenant)
        resuming = True


async def _unopened(exc: A2AError | ClientError, state: _Position, resuming: bool,
                    finished: FinishedCheck
                    ) -> tuple[str, float | None, tuple[Task, bytes] | None]:
    """A stream's request that failed: why (for a resumption), the seconds its server
    said to wait, and the task's end where a resumption was refused as the task is
    over. ``exc`` itself is raised when it is not one to resume."""
    later = retry_after_of(exc) if resuming else None
    if later is not None:
        # "not yet": a gateway warming up after a restart, a server draining, a rate
        # limit. Asked again when it says (within the policy's bound).
        return str(exc), later, None
    if isinstance(exc, (AgentUnreachable, BadResponse)):
        if not resuming or not _retryable(exc):
            raise exc
        return str(exc), None, None
    if isinstance(exc, TaskNotFound) or not isinstance(exc, A2AError):
        raise exc
    # A resume refused because the task has finished meanwhile (some agents refuse
    # to subscribe to a finished task): the stream is over.
    end = await _quietly(finished, state.task_id) \
        if resuming and state.task_id is not None else None
    if end is None:
        raise exc
    return str(exc), None, end


async def _quietly(finished: FinishedCheck, task_id: str) -> tuple[Task, bytes] | None:
    """``finished(task_id)``, None when even that cannot be asked. ``TaskNotFound`` is
    raised: the agent's answer that there is nothing to resume (a2a-sdk's v0.3
    HTTP+JSON routes break off a subscription to a task they do not have)."""
    try:
        return await finished(task_id)
    except TaskNotFound:
        raise
    except (A2AError, AgentUnreachable, BadResponse):
        return None


class _Position:
    """Where a followed stream stands: its task, the last event delivered, and
    what the current connection did."""

    def __init__(self, task_id: str | None, last: int | None) -> None:
        self.task_id = task_id
        self.last = last
        #: the current connection delivered something new / ended the stream / lagged
        self.progressed = False
        self.done = False
        self.lagged = False
        self.through_interruptions = False
        #: the last event delivered as sent: an event without an id counts as new
        #: only if it differs (a peer that sends none repeats its snapshot on each
        #: resumption, which is no progress)
        self.last_raw: bytes | None = None
        #: an A2A 1.1 stream's generations, and how a gap in them is filled
        self.generations: GenerationTracker | None = None
        self.reconcile: Reconcile | None = None

    async def read(self, conn: Connection) -> AsyncGenerator[StreamEvent, None]:
        """The new events of one connection, in order, up to a final one."""
        terminal_only = self.through_interruptions and conn.codec.follows_interruptions
        # only what came before this connection is skipped: a peer may repeat an id
        # within one stream (python-a2a sends every event as id 1)
        before = self.last
        async with contextlib.aclosing(conn.events()) as events:
            async for seq, raw in events:
                if seq is not None and before is not None and seq <= before:
                    continue  # delivered before the reconnect
                try:
                    item = conn.codec.decode_stream_item(raw)
                except A2AError as exc:
                    raise BadResponse(f"{conn.url}: {exc.message}") from None
                except RecursionError:
                    raise too_deep(conn.url) from None
                if seq is None and raw == self.last_raw and type(item) is Task:
                    # the snapshot delivered last, the same again (a peer without event
                    # ids begins each resumption with the task as it stands): no news
                    continue
                event = StreamEvent(seq, item, raw)
                if seq is not None:
                    self.last = seq
                    self.progressed = True
                elif raw != self.last_raw:
                    self.progressed = True
                self.last_raw = raw
                self.task_id = event.task_id or self.task_id
                if self.generations is not None and type(item) is not Message:
                    found = await self._in_order(event)
                    if found is None:
                        continue  # already in a task delivered before
                    event = found
                yield event
                if event.final and not (terminal_only and event.state is not None
                                        and event.state not in TERMINAL_STATES):
                    self.done = True
                    return


    async def _in_order(self, event: StreamEvent) -> StreamEvent | None:
        """``event`` as the generations place it: itself, None when a task delivered
        before holds it already, or (after a gap) the task fetched in its stead."""
        assert self.generations is not None and self.reconcile is not None
        item = event.item
        assert not isinstance(item, Message)
        if not item.generation:  # a codec that left it out: as the agent sent it
            item.generation = generation_of(event.raw, streamed=True)
        verdict = self.generations.see(item.generation, snapshot=type(item) is Task)
        if verdict == "old":
            return None
        if verdict != "gap" or self.task_id is None:
            return event
        # Events were missed (an agent that cannot replay them, or did not): the task
        # as it stands now holds them and this one.
        task, raw = await self.reconcile(self.task_id)
        self.generations.reconciled(task.generation)
        return StreamEvent(event.seq, task, raw, reconciled=True)


def _gone_quiet(reason: str, task_id: str | None, last: int | None) -> StreamTimeout:
    after = f" after event {last}" if last is not None else ""
    what = f"the stream of task {task_id}" if task_id is not None else "the stream"
    return StreamTimeout(f"{what} stopped{after}: {reason}", task_id=task_id,
                         last_event_id=last)


def _given_up(policy: ResumePolicy, last: int | None) -> str:
    after = f" after event {last}" if last is not None else ""
    if policy.retries == 0:
        return f"resuming is switched off (stopped{after})"
    tries = policy.retries
    return f"gave up after {tries} attempt{'s' if tries != 1 else ''} to resume it{after}"


#: the statuses whose ``Retry-After`` a resumption waits for: "not yet", "not so fast"
_TRY_LATER = (429, 503)


def note_retry_after(exc: Exception, reply: HTTPReply) -> None:
    """Mark ``exc``, the error a stream's request was answered with, with the seconds
    its 503 or 429 said to wait (``Retry-After``: its ``retry_after``), which ``follow``
    waits before resuming."""
    if reply.status in _TRY_LATER:
        wait = retry_after(reply)
        if wait is not None:
            exc.__dict__["retry_after"] = wait


def retry_after_of(exc: BaseException) -> float | None:
    """The seconds ``note_retry_after`` marked ``exc`` with (None: none)."""
    wait = exc.__dict__.get("retry_after")
    return float(wait) if isinstance(wait, (int, float)) else None


def _retryable(exc: ClientError) -> bool:
    # Unreachable (refused, reset, timeout) or a gateway's 5xx while the agent restarts.
    if isinstance(exc, AgentUnreachable):
        return True
    status = getattr(exc, "status", None)
    return isinstance(status, int) and status >= 500

