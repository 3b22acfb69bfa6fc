"""tests/live.py itself: servers start, answer, and stop cleanly, even mid-stream."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from interlingua.host import create_app
from tests.live import bind_loopback, live_agent, live_server, url_of

from .agents import agent


def test_server_answers_then_releases_its_port() -> None:
    with live_agent(agent) as url:
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(url + "/healthz").status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/healthz")


def test_an_open_stream_does_not_hold_up_shutdown() -> None:
    streaming = threading.Event()
    ended: list[str] = []

    def listen(url: str) -> None:
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                "params": {"message": {"messageId": "m1", "role": "ROLE_USER",
                                       "parts": [{"text": "sleep 60"}]}}}
        give_up = time.monotonic() + 30  # heartbeats would keep the reads alive
        try:
            with httpx.Client(timeout=30) as c, c.stream(
                "POST", url + "/", json=body, headers={"A2A-Version": "1.0"}
            ) as r:
                for line in r.iter_lines():
                    if line.startswith("data:"):
                        streaming.set()
                    if time.monotonic() > give_up:
                        ended.append("still open")
                        return
            ended.append("closed")
        except httpx.HTTPError as exc:
            ended.append(type(exc).__name__)

    sock = bind_loopback()
    app = create_app(agent, store="memory://", public_url=url_of(sock))
    # uvicorn alone would wait out its graceful shutdown (a minute here) for the
    # stream, and the server would not stop within live_server's 10 s.
    with live_server(app, sock=sock, timeout_graceful_shutdown=60) as url:
        reader = threading.Thread(target=listen, args=(url,))
        reader.start()
        assert streaming.wait(10), "the stream did not start"
    reader.join(10)
    # ended by the server, cleanly: not cut off when uvicorn gave up waiting
    assert ended == ["closed"]


def _failing_app() -> Starlette:
    async def boom(request: Request) -> Response:
        raise RuntimeError("boom")

    return Starlette(routes=[Route("/boom", boom)])


def test_an_error_raised_while_serving_fails_when_the_server_stops() -> None:
    with pytest.raises(RuntimeError, match="logged 1 error") as info:
        with live_server(_failing_app()) as url:
            assert httpx.get(url + "/boom").status_code == 500
    assert "boom" in str(info.value)


def test_a_test_that_provokes_errors_can_allow_them() -> None:
    with live_server(_failing_app(), allow_errors=True) as url:
        assert httpx.get(url + "/boom").status_code == 500
