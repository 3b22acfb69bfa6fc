"""Discovery: cards published periodically, withdrawn on a clean shutdown, kept by
consumers for a TTL; ``interlingua mesh agents``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from interlingua import Agent
from interlingua.mesh.broker import Inbound
from interlingua.mesh.discovery import Discovery, Registry
from interlingua.mesh.gateway import Gateway
from interlingua.mesh.topics import Topics, parse_mesh_url
from tests.live import live_server

from .helpers import BROKER, on_mesh

pytestmark = pytest.mark.timeout(40)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("interlingua")


async def _echo(text: str) -> str:
    return text


ECHO = Agent("Echo Agent", "Echoes.", _echo)
OTHER = Agent("Other", "Something else.", _echo)


def test_the_registry_forgets_an_instance_after_the_ttl_and_on_withdrawal() -> None:
    topics = Topics("ns")
    reg = Registry(ttl=60)
    card = b'{"name": "A", "description": "a", "url": "mqtt://h/ns/A"}'
    reg.take(Inbound(topics.discovery(), card, {"a2aInstance": "1"}), topics, now=0)
    reg.take(Inbound(topics.discovery(), card, {"a2aInstance": "2"}), topics, now=30)
    assert [len(a.instances) for a in reg.live(now=59)] == [2]
    assert [len(a.instances) for a in reg.live(now=61)] == [1]  # instance 1 went quiet
    reg.take(Inbound(topics.withdrawals(), b'{"name": "A", "instance": "2"}'), topics, now=62)
    assert reg.live(now=62) == []
    # a card without an instance (SAM's agents) is one instance; junk is ignored
    reg.take(Inbound(topics.discovery(), b'{"name": "S", "url": "mqtt://h/ns/S"}'), topics, now=0)
    assert reg.take(Inbound(topics.discovery(), b"not json"), topics, now=0) is None
    # and so is JSON that is not a card (a member of the wrong shape)
    assert reg.take(Inbound(topics.discovery(), b'{"name": "S", "url": "mqtt://h/ns/S", '
                                                b'"capabilities": "oops"}'), topics, now=0) is None
    assert [a.name for a in reg.live(now=1)] == ["S"]
    assert reg.live(now=61) == []


async def test_discovery_hears_cards_and_withdrawals(ns: str) -> None:
    heard: list[str] = []
    discovery = Discovery(parse_mesh_url(BROKER), Topics(ns), on_change=heard.append)
    await discovery.start()
    try:
        async with on_mesh(ECHO, ns, instance="i1"), on_mesh(OTHER, ns):
            for _ in range(50):
                if {a.name for a in discovery.live()} == {"Echo Agent", "Other"}:
                    break
                await asyncio.sleep(0.1)
            agent = discovery.get("Echo Agent")
            assert agent is not None and agent.instances.keys() == {"i1"}
            assert agent.description == "Echoes."
            assert json.loads(agent.card)["capabilities"] is not None
        await asyncio.sleep(0.3)  # the withdrawals
        assert discovery.live() == [], heard
    finally:
        await discovery.stop()


def _agents(ns: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), "mesh", "agents", "--mesh", BROKER, "--namespace", ns,
                           "--wait", "1.5", "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=30)


async def test_mesh_agents_lists_the_live_agents(ns: str) -> None:
    async with on_mesh(ECHO, ns), on_mesh(OTHER, ns):
        done = await asyncio.to_thread(_agents, ns)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["name"] for r in rows] == ["Echo Agent", "Other"]
    assert rows[0]["url"] == f"{BROKER}/{ns}/Echo_Agent"
    assert rows[0]["request_topic"] == f"{ns}/a2a/v1/agent/request/Echo_Agent"
    empty = await asyncio.to_thread(_agents, ns + "x")
    assert json.loads(empty.stdout) == []


def test_the_registry_keeps_an_instance_for_six_of_the_periods_its_card_says() -> None:
    topics = Topics("ns")
    reg = Registry(ttl=60)
    card = b'{"name": "A", "url": "mqtt://h/ns/A"}'
    reg.take(Inbound(topics.discovery(), card, {"a2aInstance": "1", "a2aCardInterval": "90"}),
             topics, now=0)
    assert [a.name for a in reg.live(now=539)] == ["A"]  # six periods of 90 s
    assert reg.live(now=541) == []
    # never sooner than the TTL; a period that cannot be read is not one
    for said in ("1", "0", "-5", "nan", "soon"):
        reg.take(Inbound(topics.discovery(), card, {"a2aInstance": "1", "a2aCardInterval": said}),
                 topics, now=0)
        assert [a.name for a in reg.live(now=59)] == ["A"], said
        assert reg.live(now=61) == [], said


async def test_the_gateway_keeps_an_agent_between_cards_of_a_long_period(ns: str) -> None:
    """An agent publishing its card every 2 s, a gateway whose TTL (for cards that say no
    period) is 1 s: the agent stays listed and served between its cards. It was dropped
    one TTL after each card, whatever the agent's period."""
    gateway = Gateway(parse_mesh_url(BROKER), ns, warmup=0, ttl=1.0)
    async with on_mesh(ECHO, ns, card_interval=2.0):
        with live_server(gateway) as url:
            async with httpx.AsyncClient() as http:
                for _ in range(100):
                    if (await http.get(url + "/agents")).json()["agents"]:
                        break
                    await asyncio.sleep(0.1)
                loop = asyncio.get_running_loop()
                end = loop.time() + 4.5  # past two of its periods
                while loop.time() < end:
                    got = await http.get(url + "/agents/Echo_Agent/.well-known/agent-card.json")
                    assert got.status_code == 200, got.text
                    await asyncio.sleep(0.1)
