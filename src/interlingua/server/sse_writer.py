"""Writing a stream as server-sent events over ASGI.

Each log event is encoded once per dialect (the bytes are kept on the log
entry and shared by every subscriber of that dialect); only the small JSON-RPC
envelope around it, which carries each subscriber's own request id, is
per-subscriber.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import msgspec

from ..core import sse
from ..core.dialects import Codec
from ..core.errors import A2AError, InternalError, ResourceUnavailable
from .streams import Entry, Heartbeat, Lagged, Stream, StreamOutput, Unavailable

__all__ = ["write_sse"]

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
_encoder = msgspec.json.Encoder()


def encoded_item(entry: Entry, codec: Codec) -> bytes:
    stored = entry.stored
    if stored is None:
        return codec.encode_stream_item(entry.item)
    name = codec.name
    # Most events have readers of one dialect: one slot, no dict per event.
    if stored.encoded_for == name:
        return stored.encoded_once
    if stored.encoded_for is None:
        data = stored.encoded_once = codec.encode_stream_item(entry.item)
        stored.encoded_for = name
        return data
    cache = stored.encoded
    if cache is None:
        cache = stored.encoded = {}
    found = cache.get(name)
    if found is None:
        found = cache[name] = codec.encode_stream_item(entry.item)
    return found


class _Disconnect:
    """Notices the client going away, and cancels the stream's task then.

    The request's ``receive()`` runs as a task of its own, with nothing of ours
    around it; its result arrives in a callback. (The server's ``send`` gives no
    sign of a gone client, so without this a stream that waits for news would
    hold its subscription until the task ends.)
    """

    __slots__ = ("_receive", "_stream_task", "_watcher", "gone")

    def __init__(self, receive: Receive, stream_task: asyncio.Task[Any]) -> None:
        self.gone = False
        self._receive = receive
        self._stream_task = stream_task
        self._watcher: asyncio.Future[Any] | None = None
        self._watch()

    def _watch(self) -> None:
        watcher = self._watcher = asyncio.ensure_future(self._receive())
        # run in no context of its own: it reads no context variables, and the
        # default would copy the current context for every open stream
        watcher.add_done_callback(self._done, context=_NO_VARS)

    def _done(self, watcher: asyncio.Future[Any]) -> None:
        if watcher.cancelled():
            return
        if watcher.exception() is None and watcher.result().get("type") != "http.disconnect":
            self._watch()  # more of a request body nobody reads: keep listening
            return
        self.gone = True
        self._stream_task.cancel()

    def stop(self) -> None:
        watcher = self._watcher
        if watcher is not None and not watcher.done():
            watcher.remove_done_callback(self._done)
            watcher.cancel()


async def write_sse(
    send: Send,
    receive: Receive,
    stream: Stream,
    codec: Codec,
    rid: Any,
) -> None:
    """Send ``stream`` as an SSE response until it ends or the client goes away."""
    prefix = b'{"jsonrpc":"2.0","id":' + _encoder.encode(rid) + b',"result":'
    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
    task = asyncio.current_task()
    assert task is not None
    client = _Disconnect(receive, task)
    try:
        try:
            while True:
                got = stream.poll()
                if type(got) is not list:
                    # Idle: one bare future (news, a heartbeat tick), no frames below this one.
                    await got  # type: ignore[misc]
                    continue
                if not got:
                    break
                # Everything that is ready leaves in one write. (A loop, not a
                # comprehension: that would keep codec, prefix and rid in cells.)
                parts = []
                for out in got:
                    parts.append(_encoded(out, codec, prefix, rid))
                chunk = b"".join(parts)
                del got, parts, out
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                # An idle stream waits in the next poll: hold nothing it sent.
                del chunk
        except A2AError as exc:
            await send({"type": "http.response.body", "more_body": True,
                        "body": _error_event(codec, rid, exc)})
        except asyncio.CancelledError:
            if not client.gone:
                raise
            task.uncancel()
            return
        except Exception:
            log.exception("stream failed")
            await send({"type": "http.response.body", "more_body": True,
                        "body": _error_event(codec, rid, InternalError())})
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        client.stop()
        stream.close()


def _encoded(out: StreamOutput, codec: Codec, prefix: bytes, rid: Any) -> bytes:
    if type(out) is Entry:
        return (b"id: " + str(out.seq).encode() + b"\ndata: " + prefix
                + encoded_item(out, codec) + b"}\n\n")
    if type(out) is Heartbeat:
        return _HEARTBEAT
    if type(out) is Lagged:
        return _error_event(codec, rid, ResourceUnavailable(
            f"This stream fell too far behind; reconnect with "
            f"Last-Event-ID: {out.seq} to continue from the log",
            data={"lastEventId": out.seq, "resumable": True}))
    assert isinstance(out, Unavailable)
    return _error_event(codec, rid, ResourceUnavailable(
        out.message, data={"lastEventId": out.after, "resumable": False}))


def _error_event(codec: Codec, rid: Any, err: A2AError) -> bytes:
    body = (b'{"jsonrpc":"2.0","id":' + _encoder.encode(rid) + b',"error":'
            + codec.encode_error(err) + b"}")
    return sse.encode_event(body, event="error")
