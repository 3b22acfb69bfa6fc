"""The client's ``timeout`` bounds a whole answer over HTTP, as a gRPC call's deadline
does: an agent (or a card's host) that sends its answer a byte at a time gets
``AgentTimeout`` once it is up, not a call held open for as long as it likes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from interlingua.client import AgentTimeout, Client
from tests.live import raw_server

_ANSWER = (b'{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c",'
           b'"status":{"state":"TASK_STATE_COMPLETED"}}}' + b" " * 2000)


@pytest.fixture
async def dripping() -> AsyncIterator[str]:
    """The URL of a server that answers every request with a 200 head at once, then
    a body of JSON (and spaces) one byte every 0.1 s."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(_ANSWER))
        for i in range(len(_ANSWER)):
            writer.write(_ANSWER[i:i + 1])
            await writer.drain()
            await asyncio.sleep(0.1)

    async with raw_server(handle) as url:
        yield url


async def test_a_call_answered_a_byte_at_a_time_times_out(dripping: str) -> None:
    async with Client(dripping + "/", dialect="1.0", timeout=1.0) as client:
        started = time.monotonic()
        with pytest.raises(AgentTimeout, match="did not answer within 1 s"):
            await asyncio.wait_for(client.get_task("t"), 30)
    took = time.monotonic() - started
    assert took < 2.5, f"the call took {took:.1f} s; the timeout is 1 s"


async def test_a_card_sent_a_byte_at_a_time_times_out(dripping: str) -> None:
    started = time.monotonic()
    with pytest.raises(AgentTimeout):
        await asyncio.wait_for(Client.connect(dripping, timeout=1.0), 30)
    assert time.monotonic() - started < 2.5


async def test_a_client_the_caller_brought_keeps_its_own_timeouts(dripping: str) -> None:
    # its settings win over ``timeout`` (Client's docstring): here, no deadline of ours
    async with httpx.AsyncClient(timeout=5.0) as http, \
            Client(dripping + "/", dialect="1.0", timeout=0.5, httpx_client=http) as client:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.get_task("t"), 1.5)
