"""Raw frames: every HTTP exchange the inspector's client makes, as it went.

``RecordingTransport`` wraps the client's ``Transport`` and reports each
request and its answer (status, headers, body; a stream's body as its bytes
arrive) to a callback. It is handed to ``Client(transport=...)``, so the
client itself carries no recording code and costs nothing when it is not
inspected. Credential headers are masked before a frame leaves this module:
the browser never sees them.
"""

from __future__ import annotations

import asyncio
import itertools
import shlex
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from ..client.transport import HTTPReply, StreamReply, Transport

__all__ = ["MASK", "SECRET_HEADERS", "Frame", "RecordingTransport", "curl_command"]

MASK = "<redacted>"
#: headers that carry credentials (an API key header's name is added per session)
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})
# a stream's body is kept up to this size; the rest is counted, not kept
_MAX_BODY = 64 * 1024
#: seconds between two reports of a stream's frame while its body arrives
STREAM_REPORT_INTERVAL = 0.25

_ids = itertools.count(1)


class Frame:
    """One HTTP exchange: the request as sent, the answer as received."""

    def __init__(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                 secret: frozenset[str]) -> None:
        self.id = next(_ids)
        self.method = method
        self.url = url
        self.request_headers = {k: (MASK if k.lower() in secret else v)
                                for k, v in headers.items()}
        self.request_body = body or b""
        self.status: int | None = None
        self.response_headers: dict[str, str] = {}
        self.response_body = bytearray()
        self.truncated = 0
        self.streaming = False
        self.done = False
        self.error: str | None = None
        self.started = time.time()
        self.duration_ms: float | None = None

    def answered(self, status: int, headers: Mapping[str, str]) -> None:
        self.status = status
        self.response_headers = dict(headers.items())

    def add_body(self, chunk: bytes) -> None:
        room = _MAX_BODY - len(self.response_body)
        if room > 0:
            self.response_body += chunk[:room]
        self.truncated += max(0, len(chunk) - max(room, 0))

    def finish(self, error: str | None = None) -> None:
        self.done = True
        self.error = error
        self.duration_ms = round((time.time() - self.started) * 1000, 1)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "method": self.method,
            "url": self.url,
            "request": {"headers": self.request_headers,
                        "body": self.request_body.decode("utf-8", "replace")},
            "response": {"status": self.status, "headers": self.response_headers,
                         "body": bytes(self.response_body).decode("utf-8", "replace"),
                         "truncated": self.truncated},
            "sse": self.response_headers.get("content-type", "").startswith("text/event-stream"),
            "streaming": self.streaming,
            "done": self.done,
            "error": self.error,
            "started": self.started,
            "durationMs": self.duration_ms,
            "curl": curl_command(self.method, self.url, self.request_headers,
                                 self.request_body, stream=self.streaming),
        }


def curl_command(method: str, url: str, headers: Mapping[str, str], body: bytes,
                 *, stream: bool = False) -> str:
    """The request as a curl command line (masked credentials stay masked)."""
    words = ["curl"]
    if stream:
        words.append("-N")  # print SSE events as they come
    if method != "GET" or body:
        words += ["-X", method]
    words.append(shlex.quote(url))
    for name, value in headers.items():
        if name.lower() in ("content-length", "host"):
            continue
        words += ["-H", shlex.quote(f"{name}: {value}")]
    if body:
        words += ["--data-raw", shlex.quote(body.decode("utf-8", "replace"))]
    return " ".join(words)


Listener = Callable[[Frame], None]


class RecordingTransport(Transport):
    """``inner`` with every exchange reported to ``listener`` (when it starts
    streaming, as its body arrives, and once it is done)."""

    def __init__(self, inner: Transport, listener: Listener,
                 secret: frozenset[str] = SECRET_HEADERS) -> None:
        self.inner = inner
        self.listener = listener
        self.secret = frozenset(s.lower() for s in secret)

    async def get(self, url: str, headers: Mapping[str, str]) -> HTTPReply:
        return await self.request("GET", url, None, headers)

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> HTTPReply:
        return await self.request("POST", url, body, headers)

    async def request(self, method: str, url: str, body: bytes | None,
                      headers: Mapping[str, str]) -> HTTPReply:
        frame = Frame(method, url, headers, body, self.secret)
        try:
            reply = await self.inner.request(method, url, body, headers)
        except Exception as exc:
            frame.finish(str(exc))
            self.listener(frame)
            raise
        frame.answered(reply.status, reply.headers)
        frame.add_body(reply.content)
        frame.finish()
        self.listener(frame)
        return reply

    async def post_stream(self, url: str, body: bytes,
                          headers: Mapping[str, str]) -> StreamReply:
        return await self.request_stream("POST", url, body, headers)

    async def request_stream(self, method: str, url: str, body: bytes | None,
                             headers: Mapping[str, str]) -> StreamReply:
        frame = Frame(method, url, headers, body, self.secret)
        frame.streaming = True
        try:
            reply = await self.inner.request_stream(method, url, body, headers)
        except Exception as exc:
            frame.finish(str(exc))
            self.listener(frame)
            raise
        frame.answered(reply.status, reply.headers)
        self.listener(frame)
        return _RecordedStream(reply, frame, self.listener)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _RecordedStream(StreamReply):
    def __init__(self, inner: StreamReply, frame: Frame, listener: Listener) -> None:
        self._inner = inner
        self._frame = frame
        self._listener = listener
        self.status = inner.status
        self.headers = inner.headers
        self.url = inner.url
        self._reported = time.monotonic()  # (reported as it started)
        self._pending: asyncio.TimerHandle | None = None

    def _report_soon(self) -> None:
        """Report the body so far, at most once per STREAM_REPORT_INTERVAL (each report
        is the whole frame again), and never later than that after a chunk came."""
        if self._pending is None:
            delay = self._reported + STREAM_REPORT_INTERVAL - time.monotonic()
            self._pending = asyncio.get_running_loop().call_later(max(0.0, delay), self._report)

    def _report(self) -> None:
        self._pending = None
        self._reported = time.monotonic()
        if not self._frame.done:
            self._listener(self._frame)

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        try:
            async for chunk in self._inner.chunks():
                self._frame.add_body(chunk)
                self._report_soon()
                yield chunk
        except Exception as exc:
            self._frame.error = str(exc)
            raise

    async def aclose(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        try:
            await self._inner.aclose()
        finally:
            if not self._frame.done:
                self._frame.finish(self._frame.error)
                self._listener(self._frame)
