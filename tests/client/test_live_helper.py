"""tests/live.py itself: servers start, answer, and stop cleanly, even mid-stream."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from tests.live import live_agent

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
        try:
            with httpx.Client(timeout=30) as c, c.stream(
                "POST", url + "/", json=body, headers={"A2A-Version": "1.0"}
            ) as r:
                for line in r.iter_lines():
                    if line.startswith("data:"):
                        streaming.set()
            ended.append("closed")
        except httpx.HTTPError as exc:
            ended.append(type(exc).__name__)

    with live_agent(agent) as url:
        reader = threading.Thread(target=listen, args=(url,))
        reader.start()
        assert streaming.wait(10), "the stream did not start"
        started = time.monotonic()
    # uvicorn alone would wait its graceful-shutdown timeout (2 s) for the stream
    assert time.monotonic() - started < 1.5
    reader.join(10)
    assert ended, "the stream was not ended by the shutdown"
