"""A card place that answers "not yet" (503 with ``Retry-After``) is asked again, over
real HTTP: after as long as it says, but never sooner than a backoff that doubles (as a
stream's resumption waits), and a few times at most. A server that says ``Retry-After:
0`` was asked again at once, over and over until the client's timeout: a thousand
requests a second at a server that says it is overloaded."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from interlingua import Client
from interlingua.client import card as card_module
from interlingua.client.errors import BadResponse
from tests.live import asgi_body, live_server

pytestmark = pytest.mark.timeout(30)

CARD = {"name": "late", "description": "d", "version": "1", "skills": [],
        "capabilities": {}, "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
        "supportedInterfaces": [{"url": "http://127.0.0.1:9/", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}]}


class NotYet:
    """Answers its card 503 with ``Retry-After: retry_after`` the first ``times`` times
    (every time, by default), then serves it; notes when each request came."""

    def __init__(self, retry_after: str, times: int = 1 << 30) -> None:
        self.retry_after = retry_after
        self.times = times
        self.asked: list[float] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await asgi_body(receive)
        self.asked.append(time.monotonic())
        if len(self.asked) <= self.times:
            await send({"type": "http.response.start", "status": 503, "headers": [
                (b"content-type", b"application/json"),
                (b"retry-after", self.retry_after.encode())]})
            await send({"type": "http.response.body", "body": b'{"error": "warming up"}'})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(CARD).encode()})


@contextlib.contextmanager
def serving(peer: NotYet) -> Iterator[str]:
    with live_server(peer) as url:
        yield url + "/.well-known/agent-card.json"  # (a card's URL: the one place asked)


def gaps(peer: NotYet) -> list[float]:
    return [b - a for a, b in zip(peer.asked, peer.asked[1:], strict=False)]


async def test_retry_after_0_is_asked_again_after_a_backoff_not_at_once() -> None:
    peer = NotYet("0")
    with serving(peer) as url:
        async with Client(url, timeout=2) as client:
            with pytest.raises(BadResponse, match="HTTP 503") as caught:
                await client.get_card()
    assert caught.value.status == 503
    # 0.25 s, 0.5 s, 1 s: the next (2 s) would pass the timeout
    assert 2 <= len(peer.asked) <= 4, len(peer.asked)
    assert all(gap >= 0.2 for gap in gaps(peer)), gaps(peer)


async def test_a_server_that_keeps_saying_not_yet_is_asked_a_few_times(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(card_module, "NOT_YET_BACKOFF", 0.01)  # (the test's pace)
    peer = NotYet("0")
    with serving(peer) as url:
        async with Client(url, timeout=20) as client:
            with pytest.raises(BadResponse, match="HTTP 503"):
                await client.get_card()
    assert len(peer.asked) == 1 + card_module.NOT_YET_RETRIES


async def test_a_longer_retry_after_is_waited_and_the_card_then_read() -> None:
    peer = NotYet("1", times=1)
    with serving(peer) as url:
        async with Client(url, timeout=10) as client:
            card = await client.get_card()
    assert card.name == "late"
    assert len(peer.asked) == 2 and gaps(peer)[0] >= 0.95
