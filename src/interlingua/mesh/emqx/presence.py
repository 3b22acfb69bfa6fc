"""Who is registered in an ``{org}/{unit}``: the retained cards on
``$a2a/v1/discovery/{org}/{unit}/+`` and their ``a2a-status``.

A retained card is the agent's registration; ``a2a-status: offline`` (said by
the agent on a clean stop, or by its last will) or an empty retained message
(a registration cleared) takes it off the live list. A card without
``a2a-status`` counts as online (the property is a SHOULD). As the profile
says, the status is advisory: a request to an agent listed offline is still
sent if asked for.
"""

from __future__ import annotations

import asyncio
import secrets
import time

from ..broker import Broker, Inbound
from ..discovery import LiveAgent, read_card_head
from ..reading import DiscoveryListener
from ..topics import MeshURL
from .topics import STATUS, Space

__all__ = ["Directory", "list_registered"]


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

    def live(self) -> dict[str, LiveAgent]:
        """The agents whose card says online, by agent id."""
        return {a: c for a, c in sorted(self.cards.items()) if self.status.get(a) == "online"}

    def take(self, msg: Inbound) -> str | None:
        """Take a discovery message; the agent it is about (None: not one of this space)."""
        agent = self.space.agent_of(msg.topic)
        if agent is None:
            return None
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
        await self._broker.subscribe(self.space.discovery_filter())

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
