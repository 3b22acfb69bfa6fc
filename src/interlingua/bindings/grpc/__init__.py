"""The gRPC binding: the v1.0 (``lf.a2a.v1.A2AService``) and v0.3
(``a2a.v1.A2AService``) services in front of the front door.

Needs the ``grpc`` extra (``pip install 'interlingua[grpc]'``). Serve it beside
an app with ``add_grpc(app, "0.0.0.0:50051")``; ``interlingua serve`` does so
when asked (``--grpc-port``). Streams resume as described in
``grpc_wire/resume.py``; the protobuf modules live in ``grpc_wire`` too, shared
with the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...grpc_wire import EVENT_ID_KEY, INSTALL, LAST_EVENT_ID, RESUME_EXTENSION_URI, available

if TYPE_CHECKING:
    from .server import GrpcBinding
    from .serving import GrpcServer, add_grpc

__all__ = [
    "EVENT_ID_KEY",
    "INSTALL",
    "LAST_EVENT_ID",
    "RESUME_EXTENSION_URI",
    "GrpcBinding",
    "GrpcServer",
    "add_grpc",
    "available",
]


def __getattr__(name: str) -> Any:
    # grpc is imported only when the binding is used
    if name == "GrpcBinding":
        from .server import GrpcBinding

        return GrpcBinding
    if name in ("GrpcServer", "add_grpc"):
        from . import serving

        return getattr(serving, name)
    raise AttributeError(name)
