"""An event stream whose lines end in CR alone (the event-stream format allows CR, LF or
CRLF) is read whole by the client: its last event, ended by the stream's last byte, is
not lost waiting for a LF that never comes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import msgspec
import pytest

from interlingua.client import Client
from interlingua.core.model import StatusUpdate, Task, TaskState
from tests.live import raw_server

_TASK = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}
_DONE = {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}


def _frame(seq: int, result: dict[str, object]) -> bytes:
    body = msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "result": result})
    return b"id: %d\rdata: %s\r\r" % (seq, body)


@pytest.fixture
async def cr_agent() -> AsyncIterator[str]:
    """A server that answers any request with a two-event stream in CR line ends."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        body = _frame(1, {"task": _TASK}) + _frame(2, {"statusUpdate": _DONE})
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        await writer.drain()

    async with raw_server(handle) as url:
        yield url + "/"


async def test_a_stream_in_cr_line_ends_is_read_to_its_last_event(cr_agent: str) -> None:
    async with Client(cr_agent, dialect="1.0", timeout=10) as client:
        items = [e.item async for e in client.stream("hi")]
    assert [type(i) for i in items] == [Task, StatusUpdate]
    last = items[-1]
    assert isinstance(last, StatusUpdate) and last.status.state is TaskState.COMPLETED
