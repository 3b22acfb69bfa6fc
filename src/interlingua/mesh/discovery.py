"""Who is on the mesh: agents publish their cards every few seconds, consumers
keep what they heard for a while (a TTL registry, as SAM does).

An instance that shuts down cleanly says so on the withdrawals topic; one that
stops answering simply goes quiet, and is forgotten six of its card periods after
its last card (ours say the period in the user property ``a2aCardInterval``), and
never sooner than ``ttl`` seconds (60 by default: six of the default period; the
only bound for a card that says no period). Cards from publishers that
do not name their instance (SAM's agents) count as one instance per agent.

An agent is known by its topic level (the last level of its request topic), which
its card says in its mesh interface, ``mqtt://HOST:PORT/NS/AGENT``: ``--mesh-name``
makes it other than the card's name. A card that names no such interface (SAM's
agents, an agent served over HTTP) is read by the name rule, ``mesh_name``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from ..client.card import parse_card
from ..client.errors import InvalidCard
from .broker import Broker, Inbound
from .reading import DiscoveryListener
from .topics import MeshURL, Topics, mesh_name, parse_mesh_url

__all__ = ["CARD_INTERVAL", "CARD_PERIOD", "DEFAULT_TTL", "Discovery", "LiveAgent", "Registry",
           "agent_level", "list_agents", "read_card_head"]

log = logging.getLogger("interlingua.mesh")

#: how often an agent publishes its card by default (seconds)
CARD_INTERVAL = 10.0
DEFAULT_TTL = 60.0
INSTANCE = "a2aInstance"
#: the user property of a card that says how often its instance publishes it (seconds)
CARD_PERIOD = "a2aCardInterval"
#: an instance is kept for this many of its card periods after its last card
KEPT_PERIODS = 6


def _kept(properties: dict[str, str], ttl: float) -> float:
    """Seconds an instance is kept after a card published with ``properties``: six of
    the period it says, at least ``ttl`` (a card that says none: ``ttl``)."""
    try:
        period = float(properties.get(CARD_PERIOD, ""))
    except ValueError:
        return ttl
    return max(ttl, KEPT_PERIODS * period) if math.isfinite(period) and period > 0 else ttl


class _CardHead(msgspec.Struct):
    name: str
    description: str | None = None
    version: str | None = None


def read_card_head(payload: bytes, topic: str) -> _CardHead | None:
    """The name, description and version of the card ``payload`` heard on ``topic``;
    None, with a warning, when it is not a card its consumers can read whole (not
    JSON, no name or an empty or blank one, or a member of the wrong shape: a gateway
    serves the card it keeps)."""
    try:
        head = msgspec.json.decode(payload, type=_CardHead)
        parse_card(payload)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, InvalidCard) as exc:
        log.warning("a card on %s that cannot be read: %s", topic, exc)
        return None
    if not head.name.strip():
        # the card's one required member: a blank one names no agent to list or serve
        log.warning("a card on %s that cannot be read: it has no name", topic)
        return None
    return head


class _Withdrawal(msgspec.Struct):
    name: str
    instance: str = ""
    #: the agent's topic level (ours say it; without it, the card's name is matched)
    agent: str = ""


def agent_level(card: bytes, namespace: str) -> str:
    """The topic level of the agent whose card is ``card``: the agent of the first
    ``mqtt://…/NS/AGENT`` URL the card names in ``namespace`` (its url, then its
    interfaces), else its name as a topic level (a card without a mesh interface).
    Not its name alone: ``--mesh-name`` serves an agent under another level."""
    try:
        doc = msgspec.json.decode(card)
    except (msgspec.DecodeError, RecursionError):
        doc = None
    if not isinstance(doc, dict):
        return mesh_name("")
    urls = [doc.get("url")]
    for key in ("supportedInterfaces", "additionalInterfaces"):
        listed = doc.get(key)
        if isinstance(listed, list):
            urls += [i.get("url") for i in listed if isinstance(i, dict)]
    for url in urls:
        if not isinstance(url, str) or not url.lower().startswith("mqtt"):
            continue
        try:
            where = parse_mesh_url(url)
        except ValueError:
            continue
        if where.namespace == namespace and where.agent is not None:
            return where.agent
    name = doc.get("name")
    return mesh_name(name if isinstance(name, str) else "")


@dataclass
class LiveAgent:
    """An agent heard from: its last card and when each instance was last heard.
    ``agent`` is its topic level (the name in its URLs and request topic)."""

    name: str
    card: bytes
    description: str | None = None
    version: str | None = None
    instances: dict[str, float] = field(default_factory=dict)
    agent: str = ""
    #: seconds each instance is kept after its last card (as its card's period says)
    kept: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.agent:
            self.agent = mesh_name(self.name)

    @property
    def last_seen(self) -> float:
        return max(self.instances.values(), default=0.0)


class Registry:
    """Agents whose cards were heard within ``ttl`` seconds (time is passed in), by
    their topic level."""

    def __init__(self, ttl: float = DEFAULT_TTL) -> None:
        self.ttl = ttl
        self._agents: dict[str, LiveAgent] = {}

    def take(self, msg: Inbound, topics: Topics, now: float) -> str | None:
        """Take a discovery message; the name of the agent it was about (None: not one)."""
        if msg.topic == topics.discovery():
            head = read_card_head(msg.payload, msg.topic)
            if head is None:  # (the card kept, if any, stays)
                return None
            level = agent_level(msg.payload, topics.namespace)
            agent = self._agents.get(level)
            if agent is None:
                agent = self._agents[level] = LiveAgent(head.name, msg.payload, agent=level)
            agent.name, agent.card, agent.description, agent.version = (
                head.name, msg.payload, head.description, head.version)
            instance = msg.properties.get(INSTANCE, "")
            agent.instances[instance] = now
            agent.kept[instance] = _kept(msg.properties, self.ttl)
            return head.name
        if msg.topic == topics.withdrawals():
            try:
                gone = msgspec.json.decode(msg.payload, type=_Withdrawal)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                return None
            levels = [gone.agent] if gone.agent in self._agents else [
                level for level, a in self._agents.items() if a.name == gone.name]
            for level in levels:
                agent = self._agents[level]
                agent.instances.pop(gone.instance, None)
                agent.kept.pop(gone.instance, None)
                if not agent.instances:
                    del self._agents[level]
            return gone.name
        return None

    def live(self, now: float) -> list[LiveAgent]:
        """The agents with an instance heard within the time it is kept, by name."""
        for name in list(self._agents):
            agent = self._agents[name]
            for instance, seen in list(agent.instances.items()):
                if now - seen > agent.kept.get(instance, self.ttl):
                    del agent.instances[instance]
                    agent.kept.pop(instance, None)
            if not agent.instances:
                del self._agents[name]
        return sorted(self._agents.values(), key=lambda a: (a.name, a.agent))

    def get(self, name: str, now: float) -> LiveAgent | None:
        """The agent of topic level ``name``, else one whose card is named so."""
        live = self.live(now)
        return next((a for a in live if a.agent == name),
                    next((a for a in live if a.name == name), None))


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
