"""The client's ``timeout`` on a stream: the wait for each event, the first as the
next, over every binding alike (JSON-RPC, HTTP+JSON and gRPC, in A2A 1.0 and 0.3). A
stream quiet for longer ends at once with ``StreamTimeout``, resuming on or off: the
agent is slow, the connection is not broken. One that keeps delivering is never cut,
however long it lasts."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from interlingua.client import AgentTimeout, Client, StreamEvent, StreamTimeout
from interlingua.core.model import TaskState
from tests.e2e.agents import story
from tests.live import live_grpc_agent

# the agent's silences last 30 s: a stream waited on through them fails here first
pytestmark = pytest.mark.timeout(30)

WAYS = ["jsonrpc-1.0", "jsonrpc-0.3", "rest-1.0", "rest-0.3", "grpc-1.0", "grpc-0.3"]
#: a story whose first chunk is followed by 30 s of silence
QUIET = "2 30"


@pytest.fixture(scope="module")
def where() -> Iterator[tuple[str, str]]:
    with live_grpc_agent(story) as found:
        yield found


@contextlib.asynccontextmanager
async def client_for(where: tuple[str, str], way: str, **options: object
                     ) -> AsyncIterator[Client]:
    """A client speaking to the agent as ``way`` says, resuming broken streams as by
    default (5 attempts)."""
    url, target = where
    binding, _, dialect = way.partition("-")
    at = f"grpc://{target}" if binding == "grpc" else url
    async with Client(at, binding=binding, dialect=dialect,
                      **options) as client:  # type: ignore[arg-type]
        yield client


async def read_until_quiet(events: AsyncIterator[StreamEvent]
                           ) -> tuple[list[StreamEvent], StreamTimeout]:
    got: list[StreamEvent] = []
    with pytest.raises(StreamTimeout) as raised:
        async for event in events:
            got.append(event)
    return got, raised.value


@pytest.mark.parametrize("way", WAYS)
async def test_a_stream_gone_quiet_ends_at_the_timeout(where: tuple[str, str],
                                                       way: str) -> None:
    async with client_for(where, way, timeout=1) as client:
        started = time.monotonic()
        got, interrupted = await read_until_quiet(client.stream(QUIET))
        assert time.monotonic() - started < 2.5, "resumed"
        task_id = got[0].task_id
        assert task_id is not None
        await client.cancel(task_id)
    assert got[-1].seq is not None and interrupted.last_event_id == got[-1].seq
    assert interrupted.task_id == task_id
    assert isinstance(interrupted, AgentTimeout)
    assert str(interrupted).startswith(
        f"the stream of task {task_id} stopped after event {got[-1].seq}: "), interrupted
    assert str(interrupted).endswith(" sent nothing for 1 s"), interrupted


@pytest.mark.parametrize("way", WAYS)
async def test_a_subscription_quiet_from_its_start_ends_at_the_timeout(
        where: tuple[str, str], way: str) -> None:
    # nothing after the event asked from: the wait for the first event is bounded too
    async with client_for(where, way, timeout=1) as client:
        first = None
        async for first in client.stream(QUIET):
            if first.state is TaskState.WORKING:
                break
        assert first is not None and first.task_id is not None and first.seq is not None
        for _ in range(200):  # the first chunk, which comes at once
            if (await client.get_task(first.task_id)).artifacts:
                break
            await asyncio.sleep(0.01)
        started = time.monotonic()
        got, interrupted = await read_until_quiet(
            client.subscribe(first.task_id, last_event_id=first.seq + 1))
        assert time.monotonic() - started < 2.5, "resumed"
        await client.cancel(first.task_id)
    assert got == []
    assert interrupted.last_event_id == first.seq + 1
    assert interrupted.task_id == first.task_id
    assert str(interrupted).endswith(" sent nothing for 1 s"), interrupted


@pytest.mark.parametrize("way", WAYS)
async def test_a_stream_that_keeps_delivering_outlasts_the_timeout(where: tuple[str, str],
                                                                   way: str) -> None:
    async with client_for(where, way, timeout=1) as client:
        started = time.monotonic()
        events = [e async for e in client.stream("6 0.4")]
    assert time.monotonic() - started > 2
    assert events[-1].state is TaskState.COMPLETED
