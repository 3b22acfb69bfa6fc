"""A gateway whose connection to the broker is lost while an agent on the mesh works
on a task (the broker restarted): the gateway asks for the task again once the broker
is back and ends it as the agent did, in both layouts. It failed the task for good
("the connection was lost") while the agent completed it. A Mosquitto of the test's
own, restarted on its port."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context, create_app
from interlingua.mesh import MeshSettings, attach
from interlingua.mesh.emqx.link import EmqxLink
from interlingua.mesh.gateway import Gateway
from interlingua.mesh.topics import parse_mesh_url
from tests.live import live_server
from tests.ports import free_port

from .helpers import need_broker, org_unit

pytestmark = pytest.mark.timeout(90)

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


class Mosquitto:
    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([MOSQUITTO, "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), \
                    socket.create_connection(("127.0.0.1", self.port), 0.5):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("mosquitto did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None


@pytest.fixture
def broker() -> Iterator[Mosquitto]:
    need_broker()  # the machine's Mosquitto: the program is there
    own = Mosquitto()
    own.start()
    try:
        yield own
    finally:
        own.stop()


async def slowly(ctx: Context) -> None:
    await asyncio.sleep(3)
    await ctx.complete(f"done: {ctx.text}")


AGENT = Agent("Slow", "Takes its time.", slowly)


@contextlib.asynccontextmanager
async def mesh_and_gateway(broker: Mosquitto, layout: str,
                           agent_back_after: float = 1.0) -> AsyncIterator[str]:
    url = f"mqtt://127.0.0.1:{broker.port}"
    org, unit = org_unit()
    app = create_app(AGENT, store="memory://", freeze_gc=False)
    mesh = parse_mesh_url(url)
    if layout == "sam":
        attach(app, MeshSettings(url=url, namespace=org, card_interval=0.3,
                                 session_expiry=60, http=False,
                                 reconnect_delay=agent_back_after))
        gateway = Gateway(mesh, org, warmup=0)
    else:
        attach(app, MeshSettings(url=url, namespace="", profile="emqx", org=org, unit=unit,
                                 session_expiry=60, http=False,
                                 reconnect_delay=agent_back_after))
        gateway = Gateway(mesh, None, link=EmqxLink(mesh, org, unit, "gw"), warmup=0)
    async with app.router.lifespan_context(app):
        with live_server(gateway) as base:
            async with httpx.AsyncClient(timeout=30) as http:
                for _ in range(100):
                    if (await http.get(base + "/agents")).json()["agents"]:
                        break
                    await asyncio.sleep(0.1)
            yield base + "/agents/Slow/"


@pytest.mark.parametrize("agent_back_after", [1.0, 2.5], ids=["agent-first", "gateway-first"])
@pytest.mark.parametrize("layout", ["sam", "emqx"])
async def test_a_task_outlives_a_broker_restart_through_the_gateway(
        broker: Mosquitto, layout: str, agent_back_after: float) -> None:
    """``gateway-first``: the agent connects again well after the gateway, which asks
    for the task before the agent has subscribed again; a restarted broker keeps no
    session, so that request is lost, and the gateway asks again (it waited for ever
    for an answer, the task "submitted" at the gateway)."""
    async with mesh_and_gateway(broker, layout, agent_back_after) as agent_url, \
            httpx.AsyncClient(timeout=30) as http:
        sent = (await http.post(agent_url, headers={"A2A-Version": "1.0"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": f"m-{layout}", "role": "ROLE_USER",
                            "parts": [{"text": "hello"}]},
                "configuration": {"returnImmediately": True}}})).json()
        task_id = sent["result"]["task"]["id"]
        await asyncio.sleep(1.0)  # the agent is at work
        broker.stop()
        await asyncio.sleep(1.0)
        broker.start()
        got = await _ended(http, agent_url, task_id, within=40)
        assert got["status"]["state"] == "TASK_STATE_COMPLETED", got


async def _ended(http: httpx.AsyncClient, agent_url: str, task_id: str, *,
                 within: float) -> Any:
    """The task as the gateway has it once it has left submitted and working (or as it
    is when ``within`` seconds have passed)."""
    deadline = time.monotonic() + within
    while True:
        got = (await http.post(agent_url, headers={"A2A-Version": "1.0"}, json={
            "jsonrpc": "2.0", "id": 2, "method": "GetTask",
            "params": {"id": task_id}})).json()["result"]
        if got["status"]["state"] not in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING") \
                or time.monotonic() >= deadline:
            return got
        await asyncio.sleep(0.3)


async def test_a_request_the_restarted_broker_dropped_is_sent_again(broker: Mosquitto) -> None:
    """A send through the gateway right after the broker restarted, before the agent has
    subscribed again: the broker drops the request (it keeps no session). The gateway,
    with no first answer, asks the agent for the task and publishes the request again;
    the task completes. It stayed "submitted" at the gateway for ever."""
    async with mesh_and_gateway(broker, "sam", agent_back_after=3.0) as agent_url, \
            httpx.AsyncClient(timeout=30) as http:
        broker.stop()
        await asyncio.sleep(0.5)
        broker.start()
        await asyncio.sleep(0.3)  # the gateway's connections see the old one is gone
        sent = (await http.post(agent_url, headers={"A2A-Version": "1.0"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": "m-dropped", "role": "ROLE_USER",
                            "parts": [{"text": "hello"}]},
                "configuration": {"returnImmediately": True}}})).json()
        task_id = sent["result"]["task"]["id"]
        got = await _ended(http, agent_url, task_id, within=20)
        assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
        assert got["status"]["message"]["parts"][0]["text"] == "done: hello"
