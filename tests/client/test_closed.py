"""A client that was closed says so on every binding: over HTTP httpx raised a bare
``RuntimeError``, and over gRPC the client opened new channels that nothing closed.
A call in flight that the close cuts says so too, while the caller's own cancel stays
a cancel."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from interlingua import Agent, Client, Context
from interlingua.client import ClientError
from tests.live import live_grpc_agent

CLOSED = "this client is closed"


@pytest.mark.parametrize("binding", ["jsonrpc", "rest", "grpc"])
async def test_a_closed_client_refuses_every_call(agent_url: str, binding: str) -> None:
    async with Client(agent_url, binding=binding) as client:
        task = await client.send("echo this")
    for call in (lambda: client.send("again"), lambda: client.get_task(task.id)):
        with pytest.raises(ClientError, match=CLOSED):
            await call()
    with pytest.raises(ClientError, match=CLOSED):
        [e async for e in client.stream("again")]
    assert not client._bindings  # nothing opened again


async def test_a_client_whose_httpx_client_was_closed_says_so(agent_url: str) -> None:
    http = httpx.AsyncClient()
    client = Client(agent_url, httpx_client=http)
    await http.aclose()
    with pytest.raises(ClientError, match=CLOSED):
        await client.send("hi")
    await client.aclose()


# ------------------------------------------------- a close that cuts a call in flight

#: the slow turn has begun (the server runs in a thread of its own)
STARTED = threading.Event()
#: the slow turns may end: the server then stops without cutting them
RELEASED = threading.Event()


async def _slow(ctx: Context) -> None:
    await ctx.update("working on it")
    STARTED.set()
    while not RELEASED.is_set():
        await asyncio.sleep(0.05)
    await ctx.complete("done")


SLOW = Agent("Slow", "Works for a long time.", _slow)

# (binding, dialect) of every way the client can speak to this server
WAYS = [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("rest", "1.0"), ("rest", "0.3"),
        ("grpc", "1.0"), ("grpc", "0.3")]


@pytest.fixture(scope="module")
def urls() -> Iterator[tuple[str, str]]:
    with live_grpc_agent(SLOW) as where:
        yield where
        RELEASED.set()


@pytest.fixture
async def live(urls: tuple[str, str]) -> AsyncIterator[tuple[str, str]]:
    """``urls``, kept a moment after the test: grpc tells the test's loop that a call
    the close (or a cancel) cut has ended a little later, and logs an error (which fails
    the server) were that loop closed by then."""
    yield urls
    await asyncio.sleep(0.2)


def _client(urls: tuple[str, str], way: tuple[str, str]) -> Client:
    base, target = urls
    binding, dialect = way
    address = {"jsonrpc": base + "/", "rest": base, "grpc": target}[binding]
    return Client(address, binding=binding, dialect=dialect, timeout=20)


async def _started() -> None:
    """Returns once the agent is in the slow turn: the call is in flight."""
    assert await asyncio.to_thread(STARTED.wait, 10)


async def _call(client: Client, kind: str) -> None:
    """A slow blocking send, or the stream of one read to its end."""
    if kind == "send":
        await client.send("slow")
    else:
        async for _ in client.stream("slow"):
            pass


@pytest.mark.parametrize("way", WAYS, ids="-".join)
@pytest.mark.parametrize("kind", ["send", "stream"])
async def test_a_call_the_client_s_close_cuts_says_the_client_is_closed(
    live: tuple[str, str], way: tuple[str, str], kind: str
) -> None:
    # (over gRPC the close cancelled the call: a CancelledError reached a task nobody
    # cancelled; over HTTP a send said the agent was unreachable)
    STARTED.clear()
    client = _client(live, way)
    call = asyncio.create_task(_call(client, kind))
    await _started()
    await client.aclose()
    async with asyncio.timeout(5):
        with pytest.raises(ClientError, match=CLOSED) as caught:
            await call
    assert caught.type is ClientError


@pytest.mark.parametrize("way", WAYS, ids="-".join)
async def test_a_stream_its_reader_closes_says_the_client_is_closed(
    live: tuple[str, str], way: tuple[str, str]
) -> None:
    client = _client(live, way)
    async with asyncio.timeout(5):
        with pytest.raises(ClientError, match=CLOSED) as caught:
            async for _ in client.stream("slow"):
                await client.aclose()
    assert caught.type is ClientError


@pytest.mark.parametrize("way", WAYS, ids="-".join)
@pytest.mark.parametrize("kind", ["send", "stream"])
async def test_the_caller_s_own_cancel_stays_a_cancel(
    live: tuple[str, str], way: tuple[str, str], kind: str
) -> None:
    # the client closed as the cancel leaves its block: still the caller's cancel
    async def caller() -> None:
        async with _client(live, way) as client:
            await _call(client, kind)

    STARTED.clear()
    call = asyncio.create_task(caller())
    await _started()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    # cancelled as another task closes its client: still the caller's cancel
    STARTED.clear()
    client = _client(live, way)
    call = asyncio.create_task(_call(client, kind))
    await _started()
    call.cancel()
    await client.aclose()
    with pytest.raises(asyncio.CancelledError):
        await call
    # and a timeout around the call is a timeout
    STARTED.clear()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5), _client(live, way) as client:
            await _call(client, kind)
