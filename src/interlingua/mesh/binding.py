"""The MQTT binding as the service runs it (``MeshBinding``): the mesh agent
(``agent.py``, or the A2A-over-MQTT one, ``emqx/agent.py``) connects once the engine
has started, and stops when the server begins its drain (or else before the engine
stops).

It lives here, not under ``bindings/``: the mesh's topic layout, codec and
instance names are shared with its client, discovery and gateway, and the
gateway sits above the HTTP host, which sits above ``bindings``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..bindings.base import BaseBinding
from ..core.model import AgentInterface
from .card import mesh_only_card
from .profiles import profile_of
from .settings import MeshSettings
from .topics import mesh_name

if TYPE_CHECKING:
    from ..server.service import Service

__all__ = ["STOP_GRACE", "MeshBinding"]

log = logging.getLogger("interlingua.mesh")

#: seconds the requests in hand get past the drain's window (their turns are ended at
#: its close: their last events relayed) before the agent disconnects from the broker
STOP_GRACE = 5.0


class MeshBinding(BaseBinding):
    """``service``'s agent on the mesh of ``settings``, under ``name`` (default: its
    name as a topic level). Made before the service starts, so that an instance name
    another live process of this host holds is refused at once (``InstanceTaken``,
    a ``ValueError``), and so that the tasks the engine's start-up ends for a
    process gone are told of on the mesh. With ``settings.http`` False the card it
    publishes names its mesh address, and so does the service's."""

    name = "mqtt"

    def __init__(self, service: Service, settings: MeshSettings, *,
                 name: str | None = None) -> None:
        self.service = service
        self.settings = settings
        if not settings.http:
            # its card offers no push notifications (mesh_only_card): a send carrying
            # a config is refused as the card says, not delivered to webhooks
            service.push.withdraw()
        on_mesh = name or mesh_name(service.agent.name)
        #: the topic layout (mesh/profiles.py)
        self.profile = profile = profile_of(settings)
        self.address = profile.address(settings, on_mesh)
        self.agent = profile.agent(service.door, self._card(), on_mesh, settings)
        #: waits for the server's drain, and stops the agent as it begins
        self._on_drain: asyncio.Task[None] | None = None
        self._stop_begun = False

    def _card(self) -> bytes:
        if self.settings.http:
            return bytes(self.service.card.card_bytes)
        return mesh_only_card(self.service.card, self.address, self.profile.binding,
                              self.profile.protocol_version)

    def interfaces(self, base_url: str) -> Sequence[AgentInterface]:
        if self.settings.http and not self.profile.listed_beside_http:
            return ()  # its card is the HTTP one, which names HTTP's interfaces
        return (AgentInterface(url=self.address, binding=self.profile.binding,
                               protocol_version=self.profile.protocol_version),)

    async def prepare(self, service: Service) -> None:
        self.agent.card = self._card()  # as rendered now (the listeners' ports are known)

    async def start(self) -> None:
        await self.agent.start()
        self._on_drain = asyncio.create_task(self._stop_on_drain(),
                                             name=f"mesh-drain:{self.address}")

    async def _stop_on_drain(self) -> None:
        """The agent's stop, begun as the server's drain begins (SIGTERM): from then on
        it takes no request, leaving them to its session, and its instance name is
        marked as being let go of, so that a process started meanwhile waits for the
        name and resumes the session. Begun as the service stops instead (after the
        HTTP drain, up to its 30 s), a process started during the drain took the next
        name, or was refused the one given, and the session's requests waited for
        nobody; those that came during the drain were refused as sent to a server
        shutting down."""
        engine = self.service.engine
        await engine.drain_begun.wait()
        self._stop_begun = True
        await self.agent.stop(grace=engine.drain_left() + STOP_GRACE)

    async def stop(self) -> None:
        watcher, self._on_drain = self._on_drain, None
        if watcher is not None:
            if self._stop_begun:
                try:
                    await watcher  # the stop begun with the drain, to its end
                except Exception:
                    log.exception("stopping on the mesh failed")
            else:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
        await self.agent.stop()
