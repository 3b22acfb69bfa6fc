"""The JSON-RPC binding: one URL (``rpc_path`` under the base URL), every dialect's
methods, answers or server-sent events. The host (``host/app.py``) routes POSTs
at that URL to ``JSONRPCBinding.endpoint``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...core.model import AgentInterface
from ..base import BaseBinding
from .endpoint import JSONRPCEndpoint, jsonrpc_envelope

if TYPE_CHECKING:
    from ...server.service import Service

__all__ = ["JSONRPCBinding", "JSONRPCEndpoint", "jsonrpc_envelope", "rpc_aliases"]


class JSONRPCBinding(BaseBinding):
    """JSON-RPC at ``service.settings.rpc_path``, v1.0 and v0.3 in the card."""

    name = "jsonrpc"

    def __init__(self, service: Service) -> None:
        path = service.settings.rpc_path
        #: the URL path it answers at
        self.path = path if path.startswith("/") else "/" + path
        self.endpoint = JSONRPCEndpoint(service.door, service.settings)

    def interfaces(self, base_url: str) -> Sequence[AgentInterface]:
        url = base_url + "/" if self.path == "/" else base_url + self.path
        return (AgentInterface(url=url, binding="JSONRPC", protocol_version="1.0"),
                AgentInterface(url=url, binding="JSONRPC", protocol_version="0.3"))


def rpc_aliases(path: str) -> frozenset[str]:
    """The JSON-RPC URL's other names: python-a2a's client posts v0.1 calls to
    ``{endpoint}/tasks/send`` (and its streams to ``…/tasks/sendSubscribe``)."""
    base = path.rstrip("/")
    return frozenset({base + "/tasks/send", base + "/tasks/sendSubscribe"})
