"""The broker's Maximum Packet Size (Mosquitto's ``max_packet_size``, said in its CONNACK)
holds on the mesh as ``max_answer_bytes`` does: an answer, or a stream event, that the
broker would not take is refused to its requester with -32603 naming the limit, the
agent keeping its connection (and the other streams on it); a request past it is refused
by the client at once, not published to time out. Both layouts, on a Mosquitto of the
test's own."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from interlingua import Agent, Context, client_for
from interlingua.client.errors import AgentUnreachable, ClientError
from interlingua.core.errors import InternalError
from interlingua.core.model import Task, TaskState
from tests.ci import unavailable
from tests.mesh.helpers import in_layout
from tests.ports import free_port

pytestmark = pytest.mark.timeout(60)

#: bytes the test's broker takes in one packet
LIMIT = 20_000


async def sized(ctx: Context) -> None:
    """An artifact of N characters for "big N"; ten updates over a second for "slow"."""
    word, _, n = (ctx.text or "").partition(" ")
    if word == "big":
        await ctx.artifact("x" * int(n))
    elif word == "slow":
        for _ in range(10):
            await asyncio.sleep(0.1)
            await ctx.update("working")
    await ctx.complete()


SIZED = Agent("Sized", "Answers as large as asked.", sized, streaming=True)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Mosquitto that takes packets of at most ``LIMIT`` bytes."""
    exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    if not Path(exe).exists():
        unavailable("mosquitto is not installed")
    port = free_port()
    conf = tmp_path_factory.mktemp("mosquitto") / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    f"max_packet_size {LIMIT}\n")
    proc = subprocess.Popen([exe, "-c", str(conf)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the broker did not start") from None
                time.sleep(0.05)
        yield f"mqtt://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait(10)


def served(broker: str, layout: str) -> Any:
    """``SIZED`` on the broker in ``layout``; its mesh URL."""
    return in_layout(SIZED, layout, broker, "t" + uuid.uuid4().hex[:10])


@pytest.fixture(params=["sam", "emqx"])
async def agent_url(request: pytest.FixtureRequest, broker: str) -> AsyncIterator[str]:
    async with served(broker, request.param) as url:
        yield url


async def test_an_answer_past_the_brokers_limit_is_refused_and_other_streams_go_on(
        agent_url: str) -> None:
    async with client_for(agent_url, timeout=8) as client:
        # a stream running meanwhile on the same agent (its connection is kept)
        running = asyncio.create_task(_events(client, "slow"))
        await asyncio.sleep(0.2)
        begun = time.monotonic()
        with pytest.raises(InternalError, match=f"limit of {LIMIT} bytes"):
            await client.send(f"big {LIMIT}")
        assert time.monotonic() - begun < 3  # told at once, not at the timeout
        events = await running
        assert events[-1].status.state is TaskState.COMPLETED, events  # type: ignore[attr-defined]
        assert sum(1 for e in events if getattr(e, "status", None) is not None) >= 10, events
        task = await client.send(f"big {LIMIT // 4}")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED


async def test_a_stream_event_past_the_brokers_limit_ends_the_stream_with_the_refusal(
        agent_url: str) -> None:
    async with client_for(agent_url, timeout=8) as client:
        begun = time.monotonic()
        with pytest.raises(InternalError, match=f"limit of {LIMIT} bytes"):
            await _events(client, f"big {LIMIT}")  # its artifact update is past it
        assert time.monotonic() - begun < 3
        events = await _events(client, "small")
        assert events[-1].status.state is TaskState.COMPLETED  # type: ignore[attr-defined]


async def test_a_request_past_the_brokers_limit_is_refused_by_the_client_at_once(
        agent_url: str) -> None:
    async with client_for(agent_url, timeout=20) as client:
        begun = time.monotonic()
        with pytest.raises(ClientError, match=f"maximum packet size of {LIMIT} bytes") as err:
            await client.send("x" * LIMIT)
        assert not isinstance(err.value, AgentUnreachable)  # (nor its AgentTimeout)
        assert time.monotonic() - begun < 3
        task = await client.send("small")  # the client's connection is still there
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED


async def _events(client: object, text: str) -> list[object]:
    return [e.item async for e in client.stream(text)]  # type: ignore[attr-defined]
