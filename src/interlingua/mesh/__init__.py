"""Agents on an MQTT 5 broker, in the Solace Agent Mesh topic layout (docs/mesh.md).

Needs the ``mqtt`` extra (``pip install 'interlingua[mqtt]'``).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from .agent import MeshAgent, MeshSettings
from .topics import MeshURL, Topics, parse_mesh_url

__all__ = ["MeshAgent", "MeshSettings", "MeshURL", "Topics", "attach", "mesh_name",
           "parse_mesh_url"]


def mesh_name(name: str) -> str:
    """An agent's name as one topic level: characters a level cannot hold become ``_``."""
    slug = re.sub(r"[^A-Za-z0-9_.\-]", "_", name.strip())[:128]
    return slug or "agent"


def attach(app: Any, settings: MeshSettings, *, name: str | None = None) -> None:
    """Put the agent served by ``app`` (from ``create_app``) on the mesh for as long
    as the app runs: its lifespan connects after the engine starts and
    disconnects before it stops. ``app.state.mesh`` is the ``MeshAgent``."""
    inner: Callable[[Any], AbstractAsyncContextManager[None]] = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(host: Any) -> AsyncIterator[None]:
        async with inner(host):
            server = app.state.a2a
            agent = MeshAgent(app.state.door, server.card_bytes,
                              name or mesh_name(server.agent.name), settings)
            await agent.start()
            app.state.mesh = agent
            try:
                yield
            finally:
                await agent.stop()

    app.router.lifespan_context = lifespan
