"""Whether the gRPC binding can serve an agent at all, asked by every way a gRPC
port is opened (``add_grpc``, ``serve --grpc-port``, one agent or several)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...server.service import Service

__all__ = ["check_servable"]


def check_servable(service: Service) -> None:
    """``ValueError`` when the gRPC binding cannot serve ``service``'s agent: its
    security needs what gRPC does not carry (``AuthConfig.grpc_refusal``: mutual TLS
    alone). Refused before a port is opened, not served refusing every call."""
    auth = service.door.security.auth
    why = auth.grpc_refusal() if auth is not None else None
    if why is not None:
        raise ValueError(f"{service.agent.name}: {why}")
