"""Oversized heads, slow heads and bodies, and many connections from one address are
bounded, with either uvicorn parser, over real sockets."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from interlingua import Agent, create_app
from interlingua.server.connections import ConnectionLimits, uvicorn_connection_options
from tests.live import live_server

#: slow clients are cut off within a time bound
SERIAL = pytest.mark.serial

PARSERS = pytest.mark.parametrize("http", ["httptools", "h11"])


async def _echo(text: str) -> str:
    return text


@contextlib.contextmanager
def serve(http: str, **limits: float | int | None) -> Iterator[str]:
    app = create_app(Agent("Echo", "Echoes", _echo))
    options = uvicorn_connection_options(ConnectionLimits(**limits),  # type: ignore[arg-type]
                                         http=http)
    with live_server(app, **options) as url:
        yield url


def _connect(url: str, source: str = "127.0.0.1") -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=5, source_address=(source, 0))
    return s


def _read_all(s: socket.socket, limit: float = 5.0) -> bytes:
    """What the server sends until it closes the connection (within ``limit`` s)."""
    s.settimeout(limit)
    out = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := s.recv(65536):
            out += chunk
    return out


@SERIAL
@PARSERS
def test_head_over_the_limit_is_431(http: str) -> None:
    with serve(http, max_head_bytes=8192) as url, httpx.Client(timeout=10) as c:
        assert c.get(url + "/healthz", headers={"X-Pad": "a" * 6000}).status_code == 200
        assert c.get(url + "/healthz", headers={"X-Pad": "a" * 9000}).status_code == 431
        # a large body behind a small head is no head over the limit
        r = c.post(url + "/", content=b'{"jsonrpc":"2.0","id":1,"method":"GetTask",'
                   b'"params":{"id":"' + b"x" * 1_000_000 + b'"}}', headers={"A2A-Version": "1.0"})
        assert r.status_code == 200 and r.json()["error"]["code"] == -32001
        # 16 MB of header: refused once the limit is passed, not read to the end
        s = _connect(url)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ")
        sent = 0
        started = time.monotonic()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            while sent < 16 * 1024 * 1024:
                s.sendall(b"a" * 65536)
                sent += 65536
        assert time.monotonic() - started < 5
        answer = _read_all(s)
        s.close()
        assert sent < 16 * 1024 * 1024 or answer.startswith(b"HTTP/1.1 431")


@SERIAL
@PARSERS
def test_slow_head_and_body_are_cut_off(http: str) -> None:
    with serve(http, head_timeout=0.5, body_timeout=0.8) as url:
        started = time.monotonic()
        silent = _connect(url)  # sends nothing at all
        partial = _connect(url)
        partial.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
        assert _read_all(partial).startswith(b"HTTP/1.1 408")
        assert _read_all(silent).startswith(b"HTTP/1.1 408")
        assert time.monotonic() - started < 3
        silent.close()
        partial.close()
        body = _connect(url)
        body.sendall(b"POST / HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                     b"content-length: 100\r\n\r\n{\"jsonrpc\"")
        started = time.monotonic()
        answer = _read_all(body)
        body.close()
        assert time.monotonic() - started < 3
        assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer
        # a client that keeps its promises is served
        with httpx.Client(timeout=10) as c:
            assert c.get(url + "/healthz").status_code == 200


@SERIAL
@PARSERS
def test_slow_connections_from_one_address_do_not_lock_out_another(http: str) -> None:
    app = create_app(Agent("Echo", "Echoes", _echo))
    options = uvicorn_connection_options(
        ConnectionLimits(max_per_ip=20, head_timeout=30), http=http)
    # a global cap of 40: without the per-address cap 60 slow connections would fill it
    with live_server(app, limit_concurrency=40, **options) as url:
        slow: list[socket.socket] = []
        try:
            for _ in range(60):
                s = _connect(url)
                with contextlib.suppress(OSError):
                    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
                slow.append(s)
            time.sleep(0.2)
            refused = 0
            for s in slow[20:]:
                answer = _read_all(s, limit=2)
                refused += answer.startswith(b"HTTP/1.1 503") or answer == b""
            assert refused == 40
            started = time.monotonic()
            transport = httpx.HTTPTransport(local_address="127.0.0.2")
            with httpx.Client(transport=transport, timeout=5) as other:
                for _ in range(5):
                    assert other.get(url + "/healthz").status_code == 200
            assert time.monotonic() - started < 3
        finally:
            for s in slow:
                s.close()


@PARSERS
def test_interlingua_serve_applies_the_limits(
        http: str, alone: Callable[[], AbstractContextManager[None]]) -> None:
    from tests.cli.test_console_script import serving

    with serving("--http", http, "--max-head-bytes", "4096", "--head-timeout", "0.5",
                 "--max-connections-per-ip", "4") as (url, _):
        with httpx.Client(timeout=10) as c:
            assert c.get(url + "/healthz", headers={"X-Pad": "a" * 8000}).status_code == 431
        # the held connections are cut off after the head timeout too: the extra one
        # must come before that
        with alone():
            partial = _connect(url)
            partial.sendall(b"GET / HTTP/1.1\r\n")
            assert _read_all(partial).startswith(b"HTTP/1.1 408")
            partial.close()
            held = [_connect(url) for _ in range(4)]
            extra = _connect(url)
            assert _read_all(extra).startswith(b"HTTP/1.1 503")
            extra.close()
            for s in held:
                s.close()


@pytest.mark.parametrize(("limits", "complaint"), [
    ({"max_head_bytes": 0}, "max_head_bytes must be at least 1"),
    ({"head_timeout": 0.0}, "head_timeout must be above 0"),
    ({"body_timeout": float("nan")}, "body_timeout must be above 0"),
    ({"max_per_ip": 0}, "max_per_ip must be at least 1"),
])
def test_limits_that_would_refuse_every_request_are_refused(limits: dict[str, Any],
                                                           complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        ConnectionLimits(**limits)

