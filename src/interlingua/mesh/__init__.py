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
    ``settings.http`` False the card it publishes names its mesh address, not HTTP."""
    from ..server.attachments import Attachment

    held: list[Any] = []

    async def prepare() -> None:
        from .agent import MeshAgent

        server = app.state.a2a
        on_mesh = name or mesh_name(server.agent.name)
        card = server.card_bytes
        if not settings.http:
            from .card import mesh_address, mesh_only_card

            card = mesh_only_card(server, mesh_address(settings.broker_url(),
                                                       settings.namespace, on_mesh))
        # made before the engine starts: the tasks its start-up ends for a process
        # gone are told of on the mesh once connected
        held[:] = [MeshAgent(app.state.door, card, on_mesh, settings)]

    async def start() -> None:
        await held[0].start()
        app.state.mesh = held[0]

    async def stop() -> None:
        if held:
            await held.pop().stop()

    app.state.attachments.add(Attachment("the mesh", prepare=prepare, start=start,
                                         stop=stop))
