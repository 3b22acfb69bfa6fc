"""Key sets fetched from a host that answers a byte at a time, or without end, are
given up on within their time and size (``core.fetching``): the server's bearer
authentication and the push receiver's signature checks are refused, promptly,
instead of waiting with every request that needs the keys (httpx's own timeout
bounds each read, not the answer)."""

from __future__ import annotations

import asyncio
import contextlib
import socketserver
import threading
import time
from collections.abc import Iterator

import httpx
import msgspec
import pytest

from interlingua import Agent
from interlingua.client.push_receiver import JWKSCache, _Reject
from interlingua.server.auth import AuthConfig, BearerAuth
from interlingua.server.auth import jwt as bearer_jwt

from .helpers import Issuer, send_request, serve_agent

_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"


@contextlib.contextmanager
def key_host(kind: str, jwks: bytes = b'{"keys": []}') -> Iterator[str]:
    """A host whose every answer is ``jwks``, a 200 whose body comes a byte every 0.1 s
    ("drip"), or follows 8 MiB of JSON spaces sent as fast as they are read ("flood":
    keys that would be taken if the answer were read to its end)."""
    stop = threading.Event()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.recv(65536)
            try:
                if kind == "drip":
                    body = jwks + b" " * 10_000
                    self.request.sendall(_HEAD % len(body))
                    for i in range(len(body)):
                        if stop.is_set():
                            return
                        self.request.sendall(body[i:i + 1])
                        time.sleep(0.1)
                else:
                    body = b" " * (8 << 20) + jwks
                    self.request.sendall(_HEAD % len(body) + body)
            except OSError:
                pass

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


async def _whoami(text: str) -> str:
    return "hello"


@pytest.mark.parametrize("kind", ["drip", "flood"])
def test_a_key_host_that_will_not_finish_gets_the_caller_refused_promptly(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bearer_jwt, "FETCH_TIMEOUT", 1.0)
    issuer = Issuer()
    with key_host(kind, msgspec.json.encode(issuer.jwks)) as jwks_url:
        auth = AuthConfig(schemes={"bearer": BearerAuth(jwks_url=jwks_url,
                                                        audience="a2a-test")})
        with serve_agent(Agent("K", "d", _whoami), auth=auth) as url, \
                httpx.Client(timeout=30) as c:
            body, headers = send_request("1.0")
            started = time.monotonic()
            r = c.post(url + "/", json=body, headers={
                "Authorization": f"Bearer {issuer.token('erin')}", **headers})
            took = time.monotonic() - started
    assert r.status_code == 401, r.text
    assert took < 3.0, f"refused after {took:.1f} s; the keys' fetch has 1 s"


@pytest.mark.parametrize("kind", ["drip", "flood"])
async def test_the_push_receiver_gives_up_on_a_key_host_that_will_not_finish(
        kind: str) -> None:
    with key_host(kind, msgspec.json.encode(Issuer().jwks)) as jwks_url:
        keys = JWKSCache(jwks_url, timeout=1.0)
        started = time.monotonic()
        try:
            with pytest.raises(_Reject) as refused:
                await asyncio.wait_for(keys.keyset("k1"), 30)
        finally:
            await keys.aclose()
    assert refused.value.status == 401
    assert time.monotonic() - started < 3.0
