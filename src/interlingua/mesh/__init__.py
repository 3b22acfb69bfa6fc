"""Agents on an MQTT 5 broker, in the Solace Agent Mesh topic layout (docs/mesh.md).

Needs the ``mqtt`` extra (``pip install 'interlingua[mqtt]'``). Importing this
package loads neither aiomqtt nor the server: ``attach`` does, when called.
"""

from __future__ import annotations

from typing import Any

from .settings import MeshSettings
from .topics import MeshURL, Topics, mesh_name, parse_mesh_url

__all__ = ["MeshSettings", "MeshURL", "Topics", "attach", "mesh_name", "parse_mesh_url"]


def attach(app: Any, settings: MeshSettings, *, name: str | None = None) -> None:
    """Put the agent served by ``app`` (from ``create_app``) on the mesh for as long
    as the app runs: it connects after the engine starts and disconnects before it
    stops (``app.state.attachments``). ``app.state.mesh`` is the ``MeshAgent``. With
    ``settings.http`` False the card it publishes names its mesh address, not HTTP.
    ``InstanceTaken`` (a ``ValueError``) when another live process of this host
    holds the instance name (mesh/instance.py)."""
    from ..server.attachments import Attachment
    from .agent import MeshAgent

    server = app.state.a2a
    on_mesh = name or mesh_name(server.agent.name)

    def card() -> bytes:
        if settings.http:
            return bytes(server.card_bytes)
        from .card import mesh_address, mesh_only_card

        return mesh_only_card(server, mesh_address(settings.broker_url(),
                                                   settings.namespace, on_mesh))

    # made before the engine starts: the tasks its start-up ends for a process gone
    # are told of on the mesh once connected; and here, not when the app starts, so
    # that an instance name already held is refused before anything is served
    agent = MeshAgent(app.state.door, card(), on_mesh, settings)

    async def prepare() -> None:
        agent.card = card()  # as rendered now (the listeners' ports are known)

    async def start() -> None:
        await agent.start()
        app.state.mesh = agent

    async def stop() -> None:
        await agent.stop()

    app.state.attachments.add(Attachment("the mesh", prepare=prepare, start=start,
                                         stop=stop))
