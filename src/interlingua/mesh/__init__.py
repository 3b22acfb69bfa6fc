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
    as the app runs: a ``MeshBinding`` registered on its service
    (``app.state.service``), which connects after the engine starts and disconnects
    before it stops. ``app.state.mesh`` is the ``MeshAgent``. With ``settings.http``
    False the card it publishes names its mesh address, not HTTP. ``InstanceTaken``
    (a ``ValueError``) when another live process of this host holds the instance
    name (mesh/instance.py)."""
    from .binding import MeshBinding

    binding = app.state.service.add_binding(MeshBinding(app.state.service, settings, name=name))
    app.state.mesh = binding.agent
