"""Discovery: cards published periodically, withdrawn on a clean shutdown, kept by
consumers for a TTL; ``interlingua mesh agents``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from interlingua import Agent
from interlingua.mesh.broker import Inbound
from interlingua.mesh.discovery import Discovery, Registry
from interlingua.mesh.topics import Topics, parse_mesh_url

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
    card = b'{"name": "A", "description": "a"}'
    reg.take(Inbound(topics.discovery(), card, {"a2aInstance": "1"}), topics, now=0)
    reg.take(Inbound(topics.discovery(), card, {"a2aInstance": "2"}), topics, now=30)
    assert [len(a.instances) for a in reg.live(now=59)] == [2]
    assert [len(a.instances) for a in reg.live(now=61)] == [1]  # instance 1 went quiet
    reg.take(Inbound(topics.withdrawals(), b'{"name": "A", "instance": "2"}'), topics, now=62)
    assert reg.live(now=62) == []
    # a card without an instance (SAM's agents) is one instance; junk is ignored
    reg.take(Inbound(topics.discovery(), b'{"name": "S"}'), topics, now=0)
    assert reg.take(Inbound(topics.discovery(), b"not json"), topics, now=0) is None
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
