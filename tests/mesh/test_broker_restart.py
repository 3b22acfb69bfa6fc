"""A broker outage: a private Mosquitto (on a free port, started by the test) is
stopped and started again under a connected agent, which reconnects, subscribes
again and serves the next request. The machine's shared broker is not touched."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path

import httpx
import pytest

from interlingua import Client
from interlingua.client.errors import AgentUnreachable
from interlingua.core.model import Task, TaskState
from interlingua.mesh.client import MeshClient
from interlingua.mesh.discovery import Discovery
from interlingua.mesh.gateway import Gateway
from interlingua.mesh.topics import Topics, parse_mesh_url
from tests.ci import unavailable
from tests.live import live_server
from tests.mesh.helpers import stop_child
from tests.ports import free_port

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("interlingua")




class PrivateBroker:
    """``mosquitto -p PORT``, which the test may stop (SIGTERM or SIGKILL) and start again."""

    def __init__(self) -> None:
        exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        if not Path(exe).exists():
            unavailable("mosquitto is not installed")
        self.exe = exe
        self.port = free_port()
        self.url = f"mqtt://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([self.exe, "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the private broker did not start")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)
        self.proc = None


@contextmanager
def private_broker() -> Iterator[PrivateBroker]:
    broker = PrivateBroker()
    broker.start()
    try:
        yield broker
    finally:
        broker.stop(signal.SIGKILL)


def _serve(url: str, ns: str, *options: str,
           spec: str = "examples/echo.py") -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", spec, "--store", "memory://", "--json",
         "--log-level", "warning", "--drain-seconds", "0", "--mesh", url, "--namespace", ns,
         "--mesh-card-interval", "0.3", "--mesh-session-expiry", "30", *options],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.communicate()
    json.loads(line)
    return proc


async def _heard(discovery: Discovery, since: float, timeout: float,
                 name: str = "Echo") -> None:
    """Until a card of ``name`` newer than ``since`` (monotonic) is heard."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        agent = discovery.get(name)
        if agent is not None and agent.last_seen > since:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"no card within {timeout} s")


async def _ask(client: MeshClient, text: str) -> Task:
    task = await client.send(text)
    assert isinstance(task, Task)
    return task


@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
@pytest.mark.parametrize("http", [True, False], ids=["with-http", "mesh-only"])
async def test_an_agent_serves_again_after_the_broker_restarts(how: str, http: bool) -> None:
    ns = "t" + uuid.uuid4().hex[:12]
    with private_broker() as broker:
        agent = _serve(broker.url, ns, *(["--port", "0"] if http else ["--no-http"]))
        discovery = Discovery(parse_mesh_url(broker.url), Topics(ns), ttl=5)
        # one client for the whole test: it reconnects at its first call after the outage
        client = MeshClient(f"{broker.url}/{ns}/Echo", timeout=10)
        try:
            await discovery.start()
            await _heard(discovery, 0.0, 10)
            assert (await _ask(client, "before")).status.state is TaskState.COMPLETED

            broker.stop(signal.SIGTERM if how == "sigterm" else signal.SIGKILL)
            await asyncio.sleep(1.5)  # the agent finds the connection gone, and retries
            broker.start()
            restarted = time.monotonic()
            # its card again, once it has subscribed again (the discovery reconnects too)
            await _heard(discovery, restarted, 15)
            for n in range(5):
                task = await _ask(client, f"after {n}")
                assert task.status.state is TaskState.COMPLETED
                assert task.artifacts[0].parts[0].text == f"after {n}"  # type: ignore[union-attr]
            assert agent.poll() is None
        finally:
            await client.aclose()
            await discovery.stop()
            stop_child(agent)


async def test_the_gateway_serves_again_after_the_broker_restarts() -> None:
    ns = "t" + uuid.uuid4().hex[:12]
    with private_broker() as broker:
        agent = _serve(broker.url, ns, "--no-http")
        gateway = Gateway(parse_mesh_url(broker.url), ns, ttl=5)
        try:
            with live_server(gateway) as url:
                echo = url + "/agents/Echo/"
                async with Client(echo) as client:
                    await _listed(url, 10)
                    before = await client.send("before")
                    assert isinstance(before, Task)
                    assert before.status.state is TaskState.COMPLETED

                    broker.stop(signal.SIGKILL)
                    await asyncio.sleep(1.5)
                    broker.start()
                    restarted = time.monotonic()
                    await _heard(gateway.discovery, restarted, 15)
                    for n in range(3):
                        task = await client.send(f"after {n}")
                        assert isinstance(task, Task)
                        assert task.status.state is TaskState.COMPLETED, task.status
                        assert task.artifacts[0].parts[0].text == f"after {n}"  # type: ignore[union-attr]
        finally:
            stop_child(agent)


async def _listed(url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            if (await http.get(url + "/agents")).json()["agents"]:
                return
            await asyncio.sleep(0.1)
    raise AssertionError("the gateway heard no agent")


async def test_a_stream_waiting_when_the_broker_goes_is_told_and_the_client_goes_on(
        alone_async: Callable[[], AbstractAsyncContextManager[None]]) -> None:
    ns = "t" + uuid.uuid4().hex[:12]
    with private_broker() as broker:
        agent = _serve(broker.url, ns, "--no-http", spec="tests/mesh/slow_agent.py")
        discovery = Discovery(parse_mesh_url(broker.url), Topics(ns), ttl=5)
        client = MeshClient(f"{broker.url}/{ns}/Slow", timeout=10)
        try:
            await discovery.start()
            await _heard(discovery, 0.0, 10, "Slow")
            async with alone_async():  # a time bound
                stream = client.stream("30")
                await anext(stream)  # the turn runs
                broker.stop(signal.SIGKILL)
                started = time.monotonic()
                with pytest.raises(AgentUnreachable, match="lost"):
                    async for _ in stream:
                        pass
                took = time.monotonic() - started
            assert took < 5
            broker.start()
            restarted = time.monotonic()
            await _heard(discovery, restarted, 15, "Slow")
            done = await client.send("0")
            assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
        finally:
            await client.aclose()
            await discovery.stop()
            stop_child(agent)


async def test_an_a2a_over_mqtt_agent_says_online_again_after_the_broker_comes_back() -> None:
    """The private broker keeps nothing across a restart (no persistence): the retained
    card is back only because the agent publishes it again once reconnected."""
    from interlingua import Agent, create_app
    from interlingua.mesh import MeshSettings, attach
    from interlingua.mesh.emqx.client import EmqxClient, retained_card
    from interlingua.mesh.emqx.topics import Space

    async def echo(ctx: object) -> None:
        await ctx.complete(ctx.text)  # type: ignore[attr-defined]

    with private_broker() as broker:
        app = create_app(Agent("Echo", "Echoes.", echo), store="memory://", freeze_gc=False)
        attach(app, MeshSettings(url=broker.url, namespace="", profile="emqx", org="o",
                                 unit="u", http=False, session_expiry=0,
                                 reconnect_delay=0.2))
        url, space = parse_mesh_url(broker.url), Space("o", "u")
        async with app.router.lifespan_context(app):
            assert (await retained_card(url, space, "Echo"))[1] == "online"
            broker.stop()
            broker.start()
            status = None
            for _ in range(100):
                try:
                    status = (await retained_card(url, space, "Echo", wait=0.3))[1]
                except AgentUnreachable:
                    status = None
                if status == "online":
                    break
                await asyncio.sleep(0.1)
            assert status == "online"
            async with EmqxClient(f"{broker.url}/o/u/Echo", timeout=10) as client:
                task = await client.send("back")
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED


async def test_an_a2a_over_mqtt_gateway_keeps_its_agents_across_a_clean_broker_restart() -> None:
    """A clean restart of the broker (SIGTERM): Mosquitto publishes every connected
    agent's last will (its card, ``offline``) as it stops. The gateway takes that for
    the broker going, not the agents: it keeps listing them while the broker is away,
    and a send after the restart, before the agent has subscribed again (it retries
    every 3 s), waits for the agent to say it is back and is answered. Before, every
    agent had left: listed no more, and sends refused ("no agent is live") until
    the agent published its card again."""
    from interlingua import Agent, create_app
    from interlingua.mesh import MeshSettings, attach
    from interlingua.mesh.emqx.link import EmqxLink

    async def echo(text: str) -> str:
        return text

    with private_broker() as broker:
        app = create_app(Agent("Echo", "Echoes.", echo), store="memory://", freeze_gc=False)
        attach(app, MeshSettings(url=broker.url, namespace="", profile="emqx", org="o",
                                 unit="u", http=False, session_expiry=30,
                                 reconnect_delay=3.0))
        url = parse_mesh_url(broker.url)
        gateway = Gateway(url, None, link=EmqxLink(url, "o", "u", "gw1"), warmup=0)
        async with app.router.lifespan_context(app):
            with live_server(gateway) as base:
                async with Client(base + "/agents/Echo/", timeout=30) as client, \
                        httpx.AsyncClient() as http:
                    await _listed(base, 10)
                    before = await client.send("before")
                    assert isinstance(before, Task)
                    assert before.status.state is TaskState.COMPLETED

                    broker.stop(signal.SIGTERM)
                    await asyncio.sleep(1.5)
                    listed = (await http.get(base + "/agents")).json()["agents"]
                    assert [a["name"] for a in listed] == ["Echo"]
                    broker.start()
                    for n in range(3):
                        task = await client.send(f"after {n}")
                        assert isinstance(task, Task)
                        assert task.status.state is TaskState.COMPLETED, task.status
                        assert task.artifacts[0].parts[0].text == f"after {n}"  # type: ignore[union-attr]


@pytest.mark.parametrize("how", ["stopped", "frozen"])
@pytest.mark.parametrize("layout", ["sam", "emqx"])
async def test_a_call_after_the_broker_went_fails_within_the_client_timeout(
        layout: str, how: str) -> None:
    """The broker stops (or hangs: SIGSTOP, its connections open) between two calls of
    a connected client: the second fails with ``AgentUnreachable`` naming the broker,
    within the client's ``timeout``. It waited for the broker's acknowledgement of its
    request for aiomqtt's fixed 10 s, then said only "Operation timed out"."""
    from interlingua import Agent, client_for
    from tests.mesh.helpers import in_layout

    async def echo(text: str) -> str:
        return text

    with private_broker() as broker:
        async with in_layout(Agent("Echo", "Echoes.", echo), layout, broker.url,
                             "t" + uuid.uuid4().hex[:10]) as url:
            async with client_for(url, timeout=3) as client:
                assert isinstance(await client.send("before"), Task)
                assert broker.proc is not None
                if how == "stopped":
                    broker.stop()  # (the client hears of it only while it calls)
                else:
                    broker.proc.send_signal(signal.SIGSTOP)
                started = time.monotonic()
                try:
                    with pytest.raises(AgentUnreachable) as caught:
                        await client.send("after")
                    took = time.monotonic() - started
                finally:
                    if how == "frozen":
                        broker.proc.send_signal(signal.SIGCONT)
            if how == "stopped":
                broker.start()  # the agent leaves the mesh on a broker that is there
    assert took < 3 + 1.0, took
    assert broker.url in str(caught.value)
