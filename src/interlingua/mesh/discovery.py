"""Who is on the mesh: agents publish their cards every few seconds, consumers
keep what they heard for a while (a TTL registry, as SAM does).

An instance that shuts down cleanly says so on the withdrawals topic; one that
stops answering simply goes quiet, and is forgotten ``ttl`` seconds after its
last card (60 by default, six missed publications). Cards from publishers that
do not name their instance (SAM's agents) count as one instance per agent.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from .broker import Broker, Inbound
from .reading import DiscoveryListener
from .topics import MeshURL, Topics

__all__ = ["CARD_INTERVAL", "DEFAULT_TTL", "Discovery", "LiveAgent", "Registry", "list_agents"]

log = logging.getLogger("interlingua.mesh")

#: how often an agent publishes its card by default (seconds)
CARD_INTERVAL = 10.0
DEFAULT_TTL = 60.0
INSTANCE = "a2aInstance"


class _CardHead(msgspec.Struct):
    name: str
    description: str | None = None
    version: str | None = None


class _Withdrawal(msgspec.Struct):
    name: str
    instance: str = ""


@dataclass
class LiveAgent:
    """An agent heard from: its last card and when each instance was last heard."""

    name: str
    card: bytes
    description: str | None = None
    version: str | None = None
    instances: dict[str, float] = field(default_factory=dict)

    @property
    def last_seen(self) -> float:
        return max(self.instances.values(), default=0.0)


class Registry:
    """Agents whose cards were heard within ``ttl`` seconds (time is passed in)."""

    def __init__(self, ttl: float = DEFAULT_TTL) -> None:
        self.ttl = ttl
        self._agents: dict[str, LiveAgent] = {}

    def take(self, msg: Inbound, topics: Topics, now: float) -> str | None:
        """Take a discovery message; the name of the agent it was about (None: not one)."""
        if msg.topic == topics.discovery():
            try:
                head = msgspec.json.decode(msg.payload, type=_CardHead)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
                log.warning("a card on %s that cannot be read: %s", msg.topic, exc)
                return None
            agent = self._agents.get(head.name)
            if agent is None:
                agent = self._agents[head.name] = LiveAgent(head.name, msg.payload)
            agent.card, agent.description, agent.version = (
                msg.payload, head.description, head.version)
            agent.instances[msg.properties.get(INSTANCE, "")] = now
            return head.name
        if msg.topic == topics.withdrawals():
            try:
                gone = msgspec.json.decode(msg.payload, type=_Withdrawal)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                return None
            agent = self._agents.get(gone.name)
            if agent is not None:
                agent.instances.pop(gone.instance, None)
                if not agent.instances:
                    del self._agents[gone.name]
            return gone.name
        return None

    def live(self, now: float) -> list[LiveAgent]:
        """The agents with an instance heard within ``ttl``, by name."""
        for name in list(self._agents):
            agent = self._agents[name]
            for instance, seen in list(agent.instances.items()):
                if now - seen > self.ttl:
                    del agent.instances[instance]
            if not agent.instances:
                del self._agents[name]
        return sorted(self._agents.values(), key=lambda a: a.name)

    def get(self, name: str, now: float) -> LiveAgent | None:
        return next((a for a in self.live(now) if a.name == name), None)


class Discovery(DiscoveryListener):
    """Listens to a namespace's discovery topics and keeps a ``Registry``;
    ``on_change(name)`` is called for each card or withdrawal heard."""

    def __init__(self, url: MeshURL, topics: Topics, *, ttl: float = DEFAULT_TTL,
                 on_change: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        self.topics = topics
        self.registry = Registry(ttl)
        self.on_change = on_change
        self.clock = clock
        self._broker = Broker(url, f"{topics.namespace}-discovery-{secrets.token_hex(6)}")
        self._task: asyncio.Task[None] | None = None

    def live(self) -> list[LiveAgent]:
        return self.registry.live(self.clock())

    def get(self, name: str) -> LiveAgent | None:
        return self.registry.get(name, self.clock())

    async def _subscribe(self) -> None:
        await self._broker.subscribe(self.topics.discovery_filter(), qos=0)

    def _heard(self, msg: Inbound) -> None:
        name = self.registry.take(msg, self.topics, self.clock())
        if name is not None and self.on_change is not None:
            self.on_change(name)


async def list_agents(url: MeshURL, topics: Topics, *, wait: float = 11.0,
                      ttl: float = DEFAULT_TTL) -> list[LiveAgent]:
    """The agents heard on the mesh within ``wait`` seconds (they publish every 10)."""
    discovery = Discovery(url, topics, ttl=ttl)
    await discovery.start()
    try:
        await asyncio.sleep(wait)
        return discovery.live()
    finally:
        await discovery.stop()
