"""An agent served under a topic level other than its name's (``--mesh-name``): every
consumer reaches it there, as its card's mesh interface says. They went by the card's
name instead (``Echo_Agent``): the card lookup waited for a card it never matched,
``mesh agents`` printed a URL and request topic nobody listens to, and the gateway
listed the agent under that name and published its requests where nobody takes them."""

from __future__ import annotations

import asyncio
import json
import subprocess

import httpx
import pytest

from interlingua import Client, client_for
from interlingua.core.model import Task, TaskState
from interlingua.mesh.gateway import Gateway
from interlingua.mesh.topics import parse_mesh_url
from tests.live import live_server

from .helpers import BROKER, on_mesh
from .test_discovery import ECHO, ROOT, SCRIPT

pytestmark = pytest.mark.timeout(60)


async def test_the_card_is_read_at_the_mesh_name(ns: str) -> None:
    async with on_mesh(ECHO, ns, name="EchoX", http=False), \
            client_for(f"{BROKER}/{ns}/EchoX", timeout=5) as client:
        card = await client.get_card()
        assert card.name == "Echo Agent"


def _agents(ns: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), "mesh", "agents", "--mesh", BROKER, "--namespace", ns,
                           "--wait", "1.5", "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=30)


async def test_mesh_agents_names_the_mesh_name(ns: str) -> None:
    async with on_mesh(ECHO, ns, name="EchoX", http=False):
        done = await asyncio.to_thread(_agents, ns)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert row["name"] == "Echo Agent"
    assert row["url"] == f"{BROKER}/{ns}/EchoX"
    assert row["request_topic"] == f"{ns}/a2a/v1/agent/request/EchoX"


@pytest.mark.parametrize("http", [False, True], ids=["mesh-only", "beside-http"])
async def test_the_gateway_serves_the_agent_at_its_mesh_name(ns: str, http: bool) -> None:
    # (beside HTTP, the card lists the mesh interface too)
    gateway = Gateway(parse_mesh_url(BROKER), ns, warmup=0)
    async with on_mesh(ECHO, ns, name="EchoX", http=http):
        with live_server(gateway) as url:
            async with httpx.AsyncClient() as http:
                for _ in range(100):
                    listed = (await http.get(url + "/agents")).json()["agents"]
                    if listed:
                        break
                    await asyncio.sleep(0.1)
            assert [(a["name"], a["url"]) for a in listed] == [
                ("Echo Agent", url + "/agents/EchoX/")]
            async with Client(url + "/agents/EchoX/", timeout=10) as client:
                task = await client.send("hello")
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
            assert task.artifacts[0].parts[0].text == "hello"  # type: ignore[union-attr]


async def test_an_agent_of_another_card_on_the_same_mesh_name_is_warned_of(
        ns: str, caplog: pytest.LogCaptureFixture) -> None:
    """Two different agents given one ``--mesh-name`` share its requests, each answering
    as itself: nothing on one host can refuse the other, so each says so in its log."""
    from interlingua import Agent

    async def shout(text: str) -> str:
        return text.upper()

    shouter = Agent("Shouter", "Shouts.", shout)
    caplog.set_level("WARNING", logger="interlingua.mesh")
    async with on_mesh(ECHO, ns, name="Worker", http=False, card_interval=0.2), \
            on_mesh(shouter, ns, name="Worker", http=False, card_interval=0.2):
        for _ in range(50):
            said = [r.getMessage() for r in caplog.records if "another agent" in r.getMessage()]
            if len(said) >= 2:
                break
            await asyncio.sleep(0.1)
    assert any("'Shouter'" in s and "as 'Worker' too" in s for s in said), said
    assert any("'Echo Agent'" in s and "as 'Worker' too" in s for s in said), said
    # once for each: not with each of the cards heard since
    assert len(said) == 2, said


async def test_instances_of_one_agent_on_one_mesh_name_are_not_warned_of(
        ns: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("WARNING", logger="interlingua.mesh")
    async with on_mesh(ECHO, ns, name="Worker", http=False, card_interval=0.2,
                       instance="one"), \
            on_mesh(ECHO, ns, name="Worker", http=False, card_interval=0.2, instance="two"):
        await asyncio.sleep(1.0)  # five card periods each
    assert not [r for r in caplog.records if "another agent" in r.getMessage()]
