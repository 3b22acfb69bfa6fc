"""Who is registered in an ``{org}/{unit}``: the retained cards on
``$a2a/v1/discovery/{org}/{unit}/+`` and their ``a2a-status``.

A retained card is the agent's registration; ``a2a-status: offline`` (said by
the agent on a clean stop, or by its last will) or an empty retained message
(a registration cleared) takes it off the live list. A card without
``a2a-status`` counts as online (the property is a SHOULD). As the profile
says, the status is advisory: a request to an agent listed offline is still
sent if asked for.

A broker that goes away takes no agent with it. Mosquitto stopping cleanly
publishes the last will of every connection it ends, so each agent's card turns
``offline`` just before the directory's own connection ends: those wills are the
broker's going, not the agents'. The agents that were online then are awaited
back: listed all the while the broker is away, and once it is back, until each
says where it is (its card again, retained or published anew) or ``RETURN_GRACE``
s have passed. A retained will met meanwhile is the last run's, and awaits still.
"""

from __future__ import annotations

import asyncio
import math
import secrets
import time

from ..broker import Broker, Inbound
from ..discovery import LiveAgent, read_card_head
from ..reading import DiscoveryListener
from ..topics import MeshURL
from .topics import STATUS, STATUS_SOURCE, Space

__all__ = ["RETURN_GRACE", "Directory", "list_registered"]

#: seconds an agent online when the broker went away has, once the directory is
#: connected again, to say where it is before it counts as gone
RETURN_GRACE = 10.0
#: seconds before the directory's connection ends within which a last will heard is
#: the broker's (it publishes every will as it stops), not the agent's
_WILLS_BEFORE_LOSS = 2.0
#: seconds between two looks at whether an awaited agent is back
_POLL = 0.05


class Directory(DiscoveryListener):
    """The registered agents of one space, kept up to date while started."""

    def __init__(self, url: MeshURL, space: Space) -> None:
        self.url = url
        self.space = space
        self._broker = Broker(url, space.client_id(f"interlingua-directory-{secrets.token_hex(6)}"))
        #: agent id -> its retained card
        self.cards: dict[str, LiveAgent] = {}
        #: agent id -> the ``a2a-status`` its card was retained with ("online", "offline")
        self.status: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None
        #: agent id -> when its last will was heard (monotonic), while connected
        self._wills: dict[str, float] = {}
        #: agents awaited back after the broker went away -> until when (monotonic;
        #: None while the broker is away)
        self._awaited: dict[str, float | None] = {}

    def live(self) -> dict[str, LiveAgent]:
        """The agents whose card says online, and those awaited back after the broker
        went away, by agent id."""
        return {a: c for a, c in sorted(self.cards.items())
                if self.status.get(a) == "online" or self._awaits(a)}

    def _awaits(self, agent: str) -> bool:
        if agent not in self._awaited:
            return False
        until = self._awaited[agent]
        return until is None or time.monotonic() < until

    async def back(self, agent: str) -> bool:
        """Once ``agent`` is not awaited back (at once if it is not): True when it has
        said where it is (or was not awaited), False when its time ran out. A request
        published before it has subscribed again is lost with a broker that kept
        nothing."""
        while agent in self._awaited:
            if not self._awaits(agent):
                return False
            await asyncio.sleep(_POLL)
        return True

    def take(self, msg: Inbound) -> str | None:
        """Take a discovery message; the agent it is about (None: not one of this space)."""
        agent = self.space.agent_of(msg.topic)
        if agent is None:
            return None
        if msg.payload and msg.properties.get(STATUS_SOURCE) == "lwt":
            if self._awaits(agent):
                return agent  # the broker's last run kept it: the agent is awaited still
            self._awaited.pop(agent, None)
            self._wills[agent] = time.monotonic()
        else:  # it said where it is
            self._awaited.pop(agent, None)
            self._wills.pop(agent, None)
        if not msg.payload:  # the registration cleared
            self.cards.pop(agent, None)
            self.status.pop(agent, None)
            return agent
        head = read_card_head(msg.payload, msg.topic)
        if head is None:  # the registration is not one a consumer can use
            self.cards.pop(agent, None)
            self.status.pop(agent, None)
            return agent
        self.cards[agent] = LiveAgent(head.name, msg.payload, head.description, head.version,
                                      {"": time.monotonic()})
        self.status[agent] = msg.properties.get(STATUS, "online")
        return agent

    async def _subscribe(self) -> None:
        # (connected again: the agents awaited have until then to say where they are)
        until = time.monotonic() + RETURN_GRACE
        for agent, then in self._awaited.items():
            if then is None:
                self._awaited[agent] = until
        await self._broker.subscribe(self.space.discovery_filter())

    def _lost(self) -> None:
        """The broker went away: the agents online then, and those whose will came
        just before, are awaited back."""
        now = time.monotonic()
        self._awaited = {a: None for a in self._awaited if self._awaits(a)}
        for agent, status in self.status.items():
            if status == "online" or now - self._wills.get(agent, -math.inf) \
                    <= _WILLS_BEFORE_LOSS:
                self._awaited[agent] = None
        self._wills.clear()

    _heard = take


async def list_registered(url: MeshURL, space: Space, *, wait: float = 1.0,
                          ) -> list[tuple[str, LiveAgent, str]]:
    """The agents registered in ``space`` (agent id, card, status), as retained when
    listened to for ``wait`` seconds."""
    directory = Directory(url, space)
    await directory.start()
    try:
        await asyncio.sleep(wait)
        return [(a, c, directory.status.get(a, "online"))
                for a, c in sorted(directory.cards.items())]
    finally:
        await directory.stop()
