"""``client_for(url)``: the client that reaches the agent at ``url``.

An ``http(s)://`` URL (or a gRPC ``host:port``) gets a ``Client``, which speaks
JSON-RPC, HTTP+JSON or gRPC as the card says; an ``mqtt(s)://HOST[:PORT]/NS/AGENT``
URL gets a ``MeshClient`` (the ``mqtt`` extra), which has the same API over the
mesh's topics (SAM's layout), and ``mqtt(s)://HOST[:PORT]/ORG/UNIT/AGENT`` an
``EmqxClient`` (the A2A-over-MQTT profile). The choice lives here, above both: the mesh's client is built from
the client's parts, so the client itself knows nothing of the mesh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from .client import Client
from .core.urls import lower_scheme

if TYPE_CHECKING:
    from .mesh.client import MeshClient
    from .mesh.emqx.client import EmqxClient

__all__ = ["MESH_SCHEMES", "AnyClient", "client_for"]

#: what ``client_for`` gives: both have the same calls
AnyClient: TypeAlias = "Client | MeshClient | EmqxClient"

#: the URL schemes of agents on an MQTT mesh
MESH_SCHEMES = ("mqtt://", "mqtts://")


def client_for(url: str, **options: Any) -> AnyClient:
    """A client for the agent at ``url``, not yet connected: use it as ``async
    with client_for(url) as client:``. ``options`` are ``Client``'s keywords
    (``dialect``, ``binding``, ``headers``, ``timeout``, TLS, …); a mesh client
    uses ``timeout``, ``headers`` and ``max_answer_bytes`` and passes over the
    HTTP-only ones."""
    url = lower_scheme(url)
    if url.startswith(MESH_SCHEMES):
        # imported here: aiomqtt is an optional dependency (the mqtt extra)
        from .mesh.topics import parse_mesh_url

        if parse_mesh_url(url).profile == "emqx":
            from .mesh.emqx.client import EmqxClient

            return EmqxClient(url, **options)
        from .mesh.client import MeshClient

        return MeshClient(url, **options)
    return Client(url, **options)
