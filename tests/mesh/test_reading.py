"""``read_reconnecting`` stops when its task is canceled, even when a library call
it awaited lost the cancel (Python 3.11's ``asyncio.wait_for``, which aiomqtt
awaits its subscriptions with, returns a result that came with the cancel)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from interlingua.mesh.broker import Inbound
from interlingua.mesh.reading import read_reconnecting


class _Broker:
    """Connects at once; its messages never come."""

    connected = False

    async def connect(self) -> None:
        self.connected = True

    async def messages(self) -> AsyncIterator[Inbound]:
        await asyncio.Event().wait()
        yield  # type: ignore[misc]

    async def close(self) -> None:
        self.connected = False


async def test_a_cancel_lost_while_subscribing_still_stops_the_reader() -> None:
    subscribing = asyncio.Event()

    async def subscribe_losing_the_cancel() -> None:
        subscribing.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            pass  # as wait_for does when the result came in the same loop turn

    reader = asyncio.create_task(read_reconnecting(
        _Broker(), lambda msg: None, on_connect=subscribe_losing_the_cancel, delay=0.01,  # type: ignore[arg-type]
        warning="%s"))
    await subscribing.wait()
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(reader, 5)


class _Saying(_Broker):
    """Connects at once and has two messages, then none."""

    async def messages(self) -> AsyncIterator[Inbound]:
        yield Inbound("a/first", b"1")
        yield Inbound("a/second", b"2")
        await asyncio.Event().wait()


async def test_a_message_the_taker_fails_on_is_logged_and_the_reading_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    taken: list[str] = []
    second = asyncio.Event()

    def take(msg: Inbound) -> None:
        if msg.topic == "a/first":
            raise RecursionError("maximum recursion depth exceeded while deserializing")
        taken.append(msg.topic)
        second.set()

    async def subscribed() -> None:
        pass

    with caplog.at_level("ERROR", logger="interlingua.mesh"):
        reader = asyncio.create_task(read_reconnecting(
            _Saying(), take, on_connect=subscribed, delay=0.01, warning="%s"))  # type: ignore[arg-type]
        await asyncio.wait_for(second.wait(), 5)
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader
    assert taken == ["a/second"]
    assert any("a/first could not be taken" in r.getMessage() for r in caplog.records)
