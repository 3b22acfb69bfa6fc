"""The two streaming ceilings of servers/raw.py, over real HTTP: the same events, written
one send per event (``/stream``) or together when ready (``/stream-coalescing``).

uvicorn writes each ASGI send as one HTTP/1.1 chunk, so the chunks of the answer show
how the events were written.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import msgspec
import pytest
import raw
from echo_modes import STREAM_CHUNKS

from tests.live import live_server

EVENTS = STREAM_CHUNKS + 2


def _body(request_id: int, text: str) -> bytes:
    message = {"messageId": f"m-{request_id}", "role": "ROLE_USER", "parts": [{"text": text}]}
    return msgspec.json.encode(
        {"jsonrpc": "2.0", "id": request_id, "method": "SendStreamingMessage",
         "params": {"message": message}}
    )


def _request(base_url: str, path: str, body: bytes) -> bytes:
    host = urlsplit(base_url).netloc
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    return head.encode() + body


def _connect(base_url: str) -> socket.socket:
    parts = urlsplit(base_url)
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def _chunks(base_url: str, path: str, body: bytes) -> list[bytes]:
    """The chunks of a chunked 200 answer, read to the end of the connection."""
    with _connect(base_url) as sock:
        sock.sendall(_request(base_url, path, body))
        data = b""
        while piece := sock.recv(1 << 16):
            data += piece
    head, _, rest = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert b"transfer-encoding: chunked" in head.lower()
    chunks = []
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return chunks
        chunks.append(rest[:size])
        assert rest[size : size + 2] == b"\r\n"
        rest = rest[size + 2 :]


def _events(body: bytes) -> list[bytes]:
    *events, rest = body.split(b"\n\n")
    assert rest == b""
    return events


@pytest.fixture(scope="module")
def base_url():
    with live_server(raw.app) as url:
        yield url


def test_one_write_ceiling_sends_each_event_on_its_own(base_url: str) -> None:
    chunks = _chunks(base_url, "/stream", _body(7, "hello"))
    assert len(chunks) == EVENTS
    assert all(len(_events(c)) == 1 for c in chunks)


def test_coalescing_ceiling_sends_the_same_events_together(base_url: str) -> None:
    one_by_one = b"".join(_chunks(base_url, "/stream", _body(7, "hello")))
    chunks = _chunks(base_url, "/stream-coalescing", _body(7, "hello"))
    assert b"".join(chunks) == one_by_one
    events = _events(one_by_one)
    assert len(events) == EVENTS
    assert b'"id":7,' in events[0] and b'"TASK_STATE_SUBMITTED"' in events[0]
    assert b'"TASK_STATE_COMPLETED"' in events[-1]
    # Written together: fewer sends than events, each a whole number of events.
    assert len(chunks) < EVENTS // 10
    assert all(c.endswith(b"\n\n") for c in chunks)


def test_coalescing_ceiling_streams_the_length_asked_for(base_url: str) -> None:
    body = b"".join(_chunks(base_url, "/stream-coalescing", _body(8, "stream 5")))
    events = _events(body)
    assert len(events) == 5 + 2
    assert all(b'"id":8,' in e for e in events)
    assert b'"lastChunk":true' in events[-2]


def test_coalescing_ceiling_idles_until_the_client_leaves(base_url: str) -> None:
    # The idle stream's two events, then nothing; leaving ends it without an error
    # (the live server fails the test on any error it logs).
    with _connect(base_url) as sock:
        sock.sendall(_request(base_url, "/stream-coalescing", _body(9, "idle")))
        data = b""
        while data.count(b"\n\n") < 2:
            data += sock.recv(1 << 16)
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            sock.recv(1 << 16)
    assert b'"TASK_STATE_WORKING"' in data
