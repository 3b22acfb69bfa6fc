"""Writing a stream as server-sent events over ASGI.

Each log event is encoded once per dialect (the bytes are kept on the log
entry and shared by every subscriber of that dialect); only the small JSON-RPC
envelope around it, which carries each subscriber's own request id, is
per-subscriber.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping
from typing import Any

from ...core import sse
from ...core.dialects import Codec
from ...core.errors import A2AError, InternalError, ResourceUnavailable
from ...server.dispatch import Items
from ...server.streams import Entry, Heartbeat, Lagged, StreamOutput, Unavailable
from ...stores.base import StoredEvent
from .chunk_frames import ChunkFrames

__all__ = ["Envelope", "write_sse"]

log = logging.getLogger("interlingua.server")

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    # keep reverse proxies from buffering the stream
    (b"x-accel-buffering", b"no"),
]
_HEARTBEAT = sse.comment("keep-alive")
_NO_VARS = contextvars.Context()


def encoded_item(entry: Entry, codec: Codec) -> bytes:
    stored = entry.stored
    if stored is None:
        return codec.encode_stream_item(entry.item)
    return stored.encoding(codec.name, codec.encode_stream_item, entry.item)


class _Disconnect:
    """Notices the client going away, and cancels the stream's task then.

    (The server's ``send`` gives no sign of a gone client, so without this a
    stream that waits for news would hold its subscription until the task
    ends.) The request's ``receive()`` is stepped here by hand, from the
    callbacks of the futures it awaits, as a task would step it: a task per
    open stream would hold more (the task, its entry in asyncio's set of tasks,
    a copied context). Like a task, it takes asyncio futures and bare
    yields; a ``receive()`` that fails or yields anything else counts as gone.
    """

    __slots__ = ("_coro", "_receive", "_stream_task", "_waiting", "gone")

    def __init__(self, receive: Receive, stream_task: asyncio.Task[Any]) -> None:
        self.gone = False
        self._receive = receive
        self._stream_task = stream_task
        #: what the coroutine waits on: a future, or the handle of its next step
        self._waiting: asyncio.Future[Any] | asyncio.Handle | None = None
        self._coro: Coroutine[Any, Any, Any] | None = None
        self._watch()

    def _watch(self) -> None:
        self._coro = self._receive()  # type: ignore[assignment]
        self._step()

    def _step(self, _done: object = None) -> None:
        coro, self._waiting = self._coro, None
        if coro is None:
            return
        try:
            yielded = coro.send(None)
        except StopIteration as stop:
            self._coro = None
            message = stop.value
            if isinstance(message, dict) and message.get("type") != "http.disconnect":
                self._watch()  # more of a request body nobody reads: keep listening
            else:
                self._gone()
            return
        except BaseException:
            self._coro = None
            self._gone()
            return
        if getattr(yielded, "_asyncio_future_blocking", False):
            yielded._asyncio_future_blocking = False
            self._waiting = yielded
            # no context of its own: receive() reads no context variables
            yielded.add_done_callback(self._step, context=_NO_VARS)
        elif yielded is None:  # a bare yield, as in sleep(0)
            self._waiting = asyncio.get_running_loop().call_soon(self._step, context=_NO_VARS)
        else:
            coro.close()
            self._coro = None
            self._gone()

    def _gone(self) -> None:
        self.gone = True
        self._stream_task.cancel()

    def stop(self) -> None:
        waiting, coro = self._waiting, self._coro
        self._waiting = self._coro = None
        if isinstance(waiting, asyncio.Handle):
            waiting.cancel()
        elif waiting is not None:
            waiting.remove_done_callback(self._step)
        if coro is not None:
            coro.close()  # runs receive()'s own cleanup (its finally blocks)


class Envelope:
    """How a binding wraps what an SSE event carries: each item's encoding goes
    between ``prefix`` and ``suffix``; ``error(codec, exc)`` is an error event's data
    (JSON-RPC: a response with the request's id; another binding: its own)."""

    __slots__ = ("error", "prefix", "suffix")

    def __init__(self, prefix: bytes, suffix: bytes,
                 error: Callable[[Codec, A2AError], bytes]) -> None:
        self.prefix = prefix
        self.suffix = suffix
        self.error = error


async def write_sse(
    send: Send,
    receive: Receive,
    items: Items,
    codec: Codec,
    envelope: Envelope,
) -> None:
    """Send ``items`` (``FrontDoor.enter``'s stream) as an SSE response until it ends
    or the client goes away."""
    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
    task = asyncio.current_task()
    assert task is not None
    client = _Disconnect(receive, task)
    # A lone reader's text chunks are spliced into their templates; an event
    # with several readers is encoded once for them all.
    frames = ChunkFrames(codec.encode_stream_item, envelope.prefix, envelope.suffix)
    # and its batches of artifact updates come as the log's entries (frames.write)
    stream = items.stream
    stream.take_stored()

    def other(out: StreamOutput) -> bytes:
        return _encoded(out, codec, envelope)

    #: the stream's last batch, sent with the response's end: one send less
    last = b""
    try:
        try:
            # The stream's own loop (Items.__anext__'s, written out): no coroutine
            # per batch
            poll = stream.poll
            while True:
                got = poll()
                if type(got) is not list:
                    await got  # type: ignore[misc]  # idle: one bare future (news, a tick)
                    continue
                if not got:
                    break
                # Everything that is ready leaves in one write.
                parts: list[bytes] = []
                frames.write(parts, got, other)
                chunk = b"".join(parts)
                del got, parts
                if stream.over:
                    last = chunk
                    break
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                # An idle stream waits for its next batch: hold nothing it sent.
                del chunk
        except A2AError as exc:
            await send({"type": "http.response.body", "more_body": True,
                        "body": _error_event(codec, envelope, exc)})
        except asyncio.CancelledError:
            if not client.gone:
                raise
            task.uncancel()
            return
        except Exception:
            log.exception("stream failed")
            await send({"type": "http.response.body", "more_body": True,
                        "body": _error_event(codec, envelope, InternalError())})
        try:
            await send({"type": "http.response.body", "body": last, "more_body": False})
        except OSError:
            pass
    finally:
        client.stop()
        items.close()


def _encoded(out: StreamOutput, codec: Codec, envelope: Envelope) -> bytes:
    if type(out) is StoredEvent:  # an update a lone reader reads (take_stored)
        return b"id: %d\ndata: %b%b%b\n\n" % (
            out.seq, envelope.prefix, codec.encode_stream_item(out.event),  # type: ignore[arg-type]
            envelope.suffix)
    if type(out) is Entry:
        if out.id_follows:  # a snapshot's item before its last: the last names the id
            return b"data: %b%b%b\n\n" % (envelope.prefix, encoded_item(out, codec),
                                           envelope.suffix)
        # one formatting: a chain of + would copy the event at every step
        return b"id: %d\ndata: %b%b%b\n\n" % (
            out.seq, envelope.prefix, encoded_item(out, codec), envelope.suffix)
    if type(out) is Heartbeat:
        return _HEARTBEAT
    if type(out) is Lagged:
        return _error_event(codec, envelope, ResourceUnavailable(
            f"This stream fell too far behind; reconnect with "
            f"Last-Event-ID: {out.seq} to continue from the log",
            data={"lastEventId": out.seq, "resumable": True}))
    assert isinstance(out, Unavailable)
    return _error_event(codec, envelope, ResourceUnavailable(
        out.message, data={"lastEventId": out.after, "resumable": False}))


def _error_event(codec: Codec, envelope: Envelope, err: A2AError) -> bytes:
    return sse.encode_event(envelope.error(codec, err), event="error")
