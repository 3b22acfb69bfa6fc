"""Server-sent events: an encoder and an incremental decoder. No I/O.

The encoder frames pre-encoded ``data`` (it must not contain newlines, which
compact JSON never does). The decoder takes bytes as they arrive and yields
complete events, following the WHATWG event-stream parsing rules for the
fields A2A uses (``id``, ``event``, ``data``, ``retry``, comments).
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from .reading import BOM

__all__ = ["SSEDecoder", "SSEEvent", "comment", "encode_event"]


def encode_event(data: bytes, *, id: int | str | None = None, event: str | None = None) -> bytes:
    head = b""
    if id is not None:
        head += b"id: " + str(id).encode() + b"\n"
    if event is not None:
        head += b"event: " + event.encode() + b"\n"
    return head + b"data: " + data + b"\n\n"


def comment(text: str = "") -> bytes:
    """A comment line: ignored by clients, keeps idle connections open through proxies."""
    return b": " + text.encode() + b"\n\n"


class SSEEvent(msgspec.Struct):
    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Feed bytes with ``feed``; iterate the complete events it returns."""

    def __init__(self) -> None:
        self._buf = b""
        self._data: list[str] = []
        #: characters of ``_data`` (with the newlines that join them)
        self._data_size = 0
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        #: the id of the last event dispatched (what a reconnect sends as Last-Event-ID)
        self.last_event_id: str | None = None
        #: the stream's first bytes are still to come: a byte order mark there is dropped
        self._start = True

    @property
    def pending(self) -> int:
        """Bytes (about: characters, for the lines read) held toward events not yet
        complete: what a reader bounds, so that a peer cannot grow one without end."""
        return len(self._buf) + self._data_size

    def feed(self, chunk: bytes) -> Iterator[SSEEvent]:
        buf = self._buf + chunk if self._buf else chunk
        if self._start:
            # one leading byte order mark is ignored (the event-stream format's rule);
            # kept until three bytes have come, as it may come split across chunks
            if len(buf) < 3 and BOM.startswith(buf):
                self._buf = buf
                return
            self._start = False
            if buf[:3] == BOM:
                buf = buf[3:]
        pos = 0
        try:
            while True:
                idx = _line_end(buf, pos)
                if idx is None:
                    break
                end, skip = idx
                event = self._line(buf[pos:end].decode("utf-8", "replace"))
                pos = end + skip
                if event is not None:
                    yield event
        finally:
            self._buf = buf[pos:]

    def end(self) -> Iterator[SSEEvent]:
        """The stream has ended: the event its very last byte completes, when that byte
        is a CR (a line's end that ``feed`` held, as the next chunk might have begun
        with the LF of a CRLF). An event left without its blank line is dropped, as
        the event-stream format says."""
        if self._buf.endswith(b"\r"):
            yield from self.feed(b"\n")  # (CR LF: the same one line end)

    def _line(self, line: str) -> SSEEvent | None:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            ev = SSEEvent(data="\n".join(self._data), event=self._event or "message",
                          id=self._id, retry=self._retry)
            if self._id is not None:
                self.last_event_id = self._id
            self._data = []
            self._data_size = 0
            self._event = ""
            self._retry = None
            return ev
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_size += len(value) + 1
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        # (ASCII digits, as the SSE grammar has it: str.isdigit() also takes "²",
        # which int() refuses)
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        return None


def _line_end(buf: bytes, pos: int) -> tuple[int, int] | None:
    """Where the line starting at ``pos`` ends: (index, terminator length).

    Lines end in CRLF, LF or CR; a CR at the very end waits for the next
    chunk, whose first byte may be the LF of a CRLF.
    """
    n = buf.find(b"\n", pos)
    r = buf.find(b"\r", pos, n if n != -1 else len(buf))
    if r == -1:
        return None if n == -1 else (n, 1)
    if r + 1 < len(buf):
        return r, 2 if buf[r + 1] == 10 else 1
    return None
