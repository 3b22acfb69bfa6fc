"""A stream notices its client going away through ``receive()``, whatever that awaits."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from interlingua.bindings.http.sse_writer import write_sse
from interlingua.bindings.jsonrpc.endpoint import jsonrpc_envelope
from interlingua.core.dialects import get_codec
from interlingua.server.dispatch import Items
from interlingua.server.streams import Stream


class IdleStream(Stream):
    """A stream with no news until ``finish()``: then it ends."""

    def __init__(self) -> None:
        super().__init__()
        self.news: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed = False

    def poll(self) -> Any:
        return [] if self.news.done() else self.news

    def finish(self) -> None:
        self.news.set_result(None)

    def close(self) -> None:
        self.closed = True


class Sent:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    async def __call__(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    @property
    def completed(self) -> bool:
        return any(m.get("more_body") is False for m in self.messages)


async def _serve(receive: Any) -> tuple[asyncio.Task[None], IdleStream, Sent]:
    stream, send = IdleStream(), Sent()
    task = asyncio.ensure_future(write_sse(send, receive, Items(stream), get_codec("1.0"),
                                           jsonrpc_envelope(1)))
    await asyncio.sleep(0.01)
    return task, stream, send


async def test_a_disconnect_ends_the_stream_at_once() -> None:
    gone = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    task, stream, _ = await _serve(receive)
    assert not task.done()
    gone.set()
    await asyncio.wait_for(task, 1)
    assert not task.cancelled() and stream.closed  # ended quietly, its subscription released


async def test_bare_yields_and_unread_body_keep_it_listening() -> None:
    calls = 0
    gone = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)  # a bare yield
        if calls < 3:
            return {"type": "http.request", "body": b"x", "more_body": True}
        await gone.wait()
        return {"type": "http.disconnect"}

    task, stream, _ = await _serve(receive)
    for _ in range(200):  # (a busy machine's loop takes its turns slowly)
        if calls == 3:
            break
        await asyncio.sleep(0.005)
    assert calls == 3 and not task.done()
    gone.set()
    await asyncio.wait_for(task, 1)
    assert stream.closed


async def test_a_failing_receive_counts_as_gone() -> None:
    async def receive() -> dict[str, Any]:
        await asyncio.sleep(0)
        raise OSError("connection reset")

    task, stream, _ = await _serve(receive)
    await asyncio.wait_for(task, 1)
    assert stream.closed


async def test_a_stream_that_ends_closes_its_receive() -> None:
    cleaned = asyncio.Event()

    async def receive() -> dict[str, Any]:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.set()
        return {"type": "http.disconnect"}

    task, stream, send = await _serve(receive)
    stream.finish()
    await asyncio.wait_for(task, 1)
    assert send.completed and cleaned.is_set()


async def test_a_stream_canceled_by_the_server_is_not_mistaken_for_a_gone_client() -> None:
    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    task, stream, _ = await _serve(receive)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stream.closed
