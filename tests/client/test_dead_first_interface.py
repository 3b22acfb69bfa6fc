"""A card whose first interface cannot be reached (nothing listens there): the client
passes it over for the card's next, as the README says, for a send, a stream and a read
alike, and keeps to the one that answered. An interface that took the connection and
then failed is not passed over: the call may have been carried out there. Over real
HTTP, the dead interfaces at ports nothing listens on."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from interlingua import Agent, Client, Task, TaskState, create_app
from interlingua.client import AgentTimeout, AgentUnreachable
from interlingua.core.errors import TaskNotFound
from tests.client.test_old_peers import OnlyOld
from tests.live import bind_loopback, live_server, raw_server, url_of
from tests.ports import free_port

pytestmark = pytest.mark.timeout(30)

V10_METHODS = {"SendMessage", "SendStreamingMessage", "GetTask"}
V03_METHODS = {"message/send", "message/stream", "tasks/get"}
Card = Callable[[str], dict[str, Any]]


async def _echo(ctx: Any) -> None:
    await ctx.complete(artifact=f"got {ctx.text}")


def _v10(*interfaces: dict[str, str]) -> dict[str, Any]:
    return {"name": "Two", "description": "d", "version": "1", "skills": [],
            "capabilities": {"streaming": True}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "supportedInterfaces": list(interfaces)}


def _v10_jsonrpc(url: str) -> dict[str, str]:
    return {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}


def _dead_http() -> str:
    return f"http://127.0.0.1:{free_port()}/"


def _dead_grpc() -> str:
    return f"127.0.0.1:{free_port()}"


def _v03_grpc_first(dead: str) -> Card:
    return lambda base: {
        "name": "Two", "description": "d", "version": "1", "protocolVersion": "0.3.0",
        "url": dead, "preferredTransport": "GRPC", "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [], "additionalInterfaces": [
            {"url": dead, "transport": "GRPC"}, {"url": base + "/", "transport": "JSONRPC"}]}


# (card for the agent at base, the methods it answers)
CARDS: dict[str, tuple[Card, set[str]]] = {
    "v1.0 JSON-RPC, then JSON-RPC": (
        lambda base: _v10(_v10_jsonrpc(_dead_http()), _v10_jsonrpc(base + "/")), V10_METHODS),
    "v1.0 gRPC, then JSON-RPC": (
        lambda base: _v10({"url": _dead_grpc(), "protocolBinding": "GRPC",
                           "protocolVersion": "1.0"}, _v10_jsonrpc(base + "/")), V10_METHODS),
    "v0.3 gRPC preferred, JSON-RPC beside": (_v03_grpc_first(_dead_grpc()), V03_METHODS),
}


@contextlib.contextmanager
def serving(card: Card, methods: set[str]) -> Iterator[str]:
    """A real agent answering ``methods`` at its URL, its card ``card(its URL)``."""
    sock = bind_loopback()
    base = url_of(sock)
    app = create_app(Agent("Two", "An agent", _echo), public_url=base)
    with live_server(OnlyOld(app, methods, card(base)), sock=sock) as url:
        yield url


@pytest.mark.parametrize("case", CARDS)
async def test_send_stream_and_get_go_to_the_next_interface(case: str) -> None:
    card, methods = CARDS[case]
    with serving(card, methods) as url:
        async with Client(url, timeout=10) as client:
            task = await client.send("hi")
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
            # the one that answered is kept: later calls do not go by the dead one
            assert client.endpoint is not None and client.endpoint.url == url + "/"
            assert [event async for event in client.stream("again")]
            got = await client.get_task(task.id)
            assert got.id == task.id
        async with Client(url, timeout=10) as fresh:  # each call first, alone
            assert [e async for e in fresh.stream("hi")]
        async with Client(url, timeout=10) as fresh:
            with pytest.raises(TaskNotFound):
                await fresh.get_task("no-such-task")
            assert fresh.endpoint is not None and fresh.endpoint.url == url + "/"


async def test_when_no_interface_can_be_reached_each_is_named() -> None:
    first, second = _dead_http(), _dead_http()
    with serving(lambda base: _v10(_v10_jsonrpc(first), _v10_jsonrpc(second)),
                 V10_METHODS) as url:
        async with Client(url, timeout=10) as client:
            with pytest.raises(AgentUnreachable) as caught:
                await client.send("hi")
    assert f"cannot reach {first}" in str(caught.value)
    assert second in str(caught.value)


async def _hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.read(65536)
    await asyncio.sleep(30)  # the request taken, no answer


async def _drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.read(65536)  # the request taken, the connection closed unanswered


@pytest.mark.parametrize("handle", [_hang, _drop], ids=["hangs", "drops"])
async def test_a_send_the_first_interface_took_is_not_sent_again(handle: Any) -> None:
    async with raw_server(handle) as taker:
        peer_card = lambda base: _v10(_v10_jsonrpc(taker + "/"), _v10_jsonrpc(base + "/"))  # noqa: E731
        sock = bind_loopback()
        base = url_of(sock)
        app = create_app(Agent("Two", "An agent", _echo), public_url=base)
        peer = Counting(OnlyOld(app, V10_METHODS, peer_card(base)))
        with live_server(peer, sock=sock) as url:
            async with Client(url, timeout=1) as client:
                with pytest.raises(AgentUnreachable) as caught:
                    await client.send("hi")
    assert taker in str(caught.value)
    if handle is _hang:
        assert isinstance(caught.value, AgentTimeout)
    assert peer.posts == 0  # never sent to the second interface


class Counting:
    """``inner``, counting the calls (POSTs) it is sent."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.posts = inner, 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            self.posts += 1
        await self.inner(scope, receive, send)
