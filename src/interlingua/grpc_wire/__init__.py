"""What both sides of gRPC share: the generated protobuf modules of the v1.0
(``lf.a2a.v1``) and v0.3 (``a2a.v1``) services (``protos/``), ProtoJSON to and
from protobuf messages (``pbjson``), and how a stream resumes (``resume``).

The server's binding (``bindings.grpc``) and the client's (``client.grpc``)
import these; nothing here imports either, so the client needs no server code.
Needs the ``grpc`` extra, but for ``resume`` and ``available``.
"""

from __future__ import annotations

from .resume import EVENT_ID_KEY, LAST_EVENT_ID, RESUME_EXTENSION_URI

__all__ = ["EVENT_ID_KEY", "INSTALL", "LAST_EVENT_ID", "RESUME_EXTENSION_URI", "available"]

#: how to get the ``grpc`` extra
INSTALL = "pip install 'interlingua[grpc]'"


def available() -> bool:
    """Whether the ``grpc`` extra (grpcio, protobuf) is installed."""
    import importlib.util

    try:
        return all(importlib.util.find_spec(m) is not None for m in ("grpc", "google.protobuf"))
    except ModuleNotFoundError:  # no google package at all
        return False
