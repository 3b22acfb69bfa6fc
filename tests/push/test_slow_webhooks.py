"""A webhook that answers a byte at a time is held to the timeout for the whole
exchange (``PushSettings.timeout``, "one HTTP exchange"), not for each read: it
cannot hold a delivery slot, and every other webhook's deliveries behind it, for
as long as it likes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from interlingua.core.model import Task
from interlingua.server import RequestInfo
from interlingua.server.push import Attempt, UrlGuard
from interlingua.server.push.sender import WebhookSender
from tests.live import raw_server

from .helpers import Hook, LoopbackOnly, dev_settings, echo, send, serve_hook, start_engine, until

#: an answer's head, then a body far longer than any timeout here, a byte at a time
_HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"


async def _drip(data: bytes, writer: asyncio.StreamWriter) -> None:
    for i in range(len(data)):
        writer.write(data[i:i + 1])
        await writer.drain()
        await asyncio.sleep(0.2)


@pytest.fixture(params=["head", "body"])
async def dripping(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, str]]:
    """(kind, URL) of a webhook dripping its answer's head ("head"), or answering
    200 at once and dripping its body ("body")."""
    kind: str = request.param

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        if kind == "head":
            await _drip(_HEAD, writer)
        else:
            writer.write(_HEAD)
            await _drip(b"x" * 100000, writer)

    async with raw_server(handle) as url:
        yield kind, url + "/hook"


async def test_one_exchange_ends_within_the_timeout(dripping: tuple[str, str]) -> None:
    kind, url = dripping
    sender = WebhookSender(UrlGuard(allow_http=True, allow_hosts=["127.0.0.1"]), timeout=1.0,
                           network_backend=LoopbackOnly())
    try:
        started = time.monotonic()
        result = await asyncio.wait_for(sender.post(url, [], b"{}"), 30)
        took = time.monotonic() - started
    finally:
        await sender.aclose()
    assert took < 2.5, f"the exchange took {took:.1f} s; the timeout is 1 s"
    if kind == "head":  # no answer in time: worth another try
        assert (result.status, result.error, result.final) == (None, "timed out after 1 s", False)
    else:  # the answer came in time; its body, which nothing reads, need not
        assert result.delivered and result.status == 200


async def test_a_dripping_webhook_does_not_hold_back_another(
        dripping: tuple[str, str]) -> None:
    kind, slow_url = dripping
    attempts: list[Attempt] = []
    # one delivery at a time: the slow webhook's would hold the only slot
    settings = dev_settings(attempts=attempts, concurrency=1, timeout=1.0, max_attempts=2)
    hook = Hook()
    with serve_hook(hook) as good_url:
        engine = await start_engine(echo, settings)
        try:
            await engine.handle(send("slow", slow_url), RequestInfo(dialect="1.0"))
            task = await engine.handle(send("quick", good_url), RequestInfo(dialect="1.0"))
            assert isinstance(task, Task)
            # every notification of the quick task arrives, long before the
            # slow webhook would have finished its answer (100,000 bytes at 5 a second)
            await until(lambda: len(hook.delivered()) >= 2, timeout=20)
            slow = [a for a in attempts if a.config_id and a.task_id != task.id]
            assert slow, attempts
            if kind == "head":
                assert {(a.outcome, a.error) for a in slow} <= {
                    ("retry", "timed out after 1 s"), ("dead", "timed out after 1 s")}
            else:
                assert {a.outcome for a in slow} == {"delivered"}
        finally:
            await engine.stop()
