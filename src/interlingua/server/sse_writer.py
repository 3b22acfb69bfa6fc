"""Writing a stream as server-sent events over ASGI.

Each log event is encoded once per dialect (the bytes are kept on the log
entry and shared by every subscriber of that dialect); only the small JSON-RPC
envelope around it, which carries each subscriber's own request id, is
per-subscriber.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import msgspec

from ..core import sse
from ..core.dialects import Codec
from ..core.errors import A2AError, InternalError, ResourceUnavailable
from .streams import Entry, Heartbeat, Lagged, StreamOutput, Unavailable

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


async def write_sse(
    send: Send,
    receive: Receive,
    stream: AsyncIterator[StreamOutput],
    codec: Codec,
    rid: Any,
) -> None:
    """Send ``stream`` as an SSE response until it ends or the client goes away."""
    prefix = b'{"jsonrpc":"2.0","id":' + _encoder.encode(rid) + b',"result":'
    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
    task = asyncio.current_task()
    gone = False

    async def watch_disconnect() -> None:
        nonlocal gone
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                gone = True
                if task is not None:
                    task.cancel()
                return

    watcher = asyncio.get_running_loop().create_task(watch_disconnect())
    try:
        try:
            pending: list[bytes] = []
            async for out in stream:
                if isinstance(out, Entry):
                    pending.append(b"id: " + str(out.seq).encode() + b"\ndata: "
                                   + prefix + encoded_item(out, codec) + b"}\n\n")
                    if out.more:
                        continue  # events that arrived together leave in one write
                    chunk = b"".join(pending)
                    pending.clear()
                elif isinstance(out, Heartbeat):
                    chunk = _HEARTBEAT
                elif isinstance(out, Lagged):
                    chunk = _error_event(codec, rid, ResourceUnavailable(
                        f"This stream fell too far behind; reconnect with "
                        f"Last-Event-ID: {out.seq} to continue from the log",
                        data={"lastEventId": out.seq, "resumable": True}))
                else:
                    assert isinstance(out, Unavailable)
                    chunk = _error_event(codec, rid, ResourceUnavailable(
                        out.message, data={"lastEventId": out.after, "resumable": False}))
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                # An idle stream waits here for its next event: hold nothing it sent.
                del out, chunk
        except A2AError as exc:
            await send({"type": "http.response.body", "more_body": True,
                        "body": _error_event(codec, rid, exc)})
        except asyncio.CancelledError:
            if not gone:
                raise
            return
        except Exception:
            log.exception("stream failed")
            await send({"type": "http.response.body", "more_body": True,
                        "body": _error_event(codec, rid, InternalError())})
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await watcher
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()


def _error_event(codec: Codec, rid: Any, err: A2AError) -> bytes:
    body = (b'{"jsonrpc":"2.0","id":' + _encoder.encode(rid) + b',"error":'
            + codec.encode_error(err) + b"}")
    return sse.encode_event(body, event="error")
