"""The gRPC binding as the service runs it: a ``grpc.aio`` server that listens
before the engine starts (port 0: an ephemeral port, known once it listens), is
listed in the card (``supportedInterfaces`` with ``protocolBinding: GRPC``, and
v0.3's ``additionalInterfaces``, with the resume extension), serves health checking
and reflection beside them (``standard.py``), and stops, letting open calls finish
for a few seconds, before the engine does.

``service.add_binding(GrpcServer("0.0.0.0:50051"))``, or, beside an app made by
``create_app``, ``add_grpc(app, "0.0.0.0:50051")``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import grpc

from ...core.errors import MethodNotFound
from ...core.model import AgentCard, AgentInterface
from ...grpc_wire.resume import grpc_interfaces, resume_extension
from ..base import BaseBinding
from .address import _card_host, _split
from .listener import Listener
from .servable import check_servable
from .server import V03_SERVICE, V1_SERVICE, GrpcBinding, server_options
from .standard import StandardServices

if TYPE_CHECKING:
    from ...server.service import Service
    from .tenants import GrpcTenants

__all__ = ["GrpcServer", "add_grpc", "check_servable"]


class GrpcServer(Listener, BaseBinding):
    """Both A2A gRPC services of one service, on ``address`` (``host:port``).

    ``url``: what the card names (default: the host of the public URL, else the
    address's host, with the port it listens on). ``credentials``:
    ``grpc.ssl_server_credentials(...)`` to serve TLS; plain text otherwise.
    ``max_message_bytes``: default the service's ``max_body_bytes``. ``port`` is
    the port it listens on, once prepared; ``on_listening(port)`` is called then.
    """

    name = "grpc"

    def __init__(self, address: str = "127.0.0.1:50051", *, url: str | None = None,
                 max_message_bytes: int | None = None,
                 credentials: grpc.ServerCredentials | None = None,
                 grace: float = 5.0,
                 on_listening: Callable[[int], None] | None = None,
                 before_binding: Callable[[], None] | None = None) -> None:
        super().__init__(address, url=url, max_message_bytes=max_message_bytes,
                         credentials=credentials, grace=grace, on_listening=on_listening,
                         before_binding=before_binding)
        #: the handlers, once prepared
        self.binding: GrpcBinding | None = None
        self._listening_at: str | None = None

    def interfaces(self, base_url: str) -> Sequence[AgentInterface]:
        return grpc_interfaces(self._listening_at) if self._listening_at else ()

    def extend_card(self, card: AgentCard) -> AgentCard:
        return resume_extension(card) if self._listening_at else card

    async def prepare(self, service: Service) -> None:
        check_servable(service)  # (add_grpc and serve said so already)
        # listening before the engine starts: the card names the port
        card = service.card
        self.binding = GrpcBinding(service.door, lambda: (card.card, card.rpc_url))
        limit = self.max_message_bytes or service.settings.max_body_bytes
        port = await self._listen(self.binding, limit)
        if self._standard is not None:
            self._standard.follow(service.engine)
        if self.on_listening is not None:
            self.on_listening(port)
        host, _ = _split(self.address)
        self._listening_at = self.url or \
            f"{_card_host(service.settings.public_url or '', host)}:{port}"
        card.render_again()

    async def _listen(self, binding: GrpcBinding, max_message_bytes: int) -> int:
        server = grpc.aio.server(options=server_options(max_message_bytes))
        server.add_generic_rpc_handlers(binding.handlers())
        door = binding.door

        def unknown(method: str, metadata: Mapping[str, str]) -> None:
            # counted as every binding counts a method it does not have: "unread"
            door.refused_unread("grpc", None, metadata, MethodNotFound(
                f"Method not found: {method}"))

        return await self._open(server, StandardServices(server, [V1_SERVICE, V03_SERVICE]),
                                unknown)

    async def stop(self) -> None:
        # calls in flight end before the engine under them stops
        server, self._server = self._server, None
        if server is not None:
            if self._standard is not None:
                await self._standard.stopping()  # probes see it go before it goes
            await server.stop(self.grace)


def add_grpc(app: Any, address: str = "127.0.0.1:50051", *, url: str | None = None,
             credentials: grpc.ServerCredentials | None = None,
             grace: float = 5.0,
             on_listening: Callable[[int], None] | None = None) -> GrpcServer | GrpcTenants:
    """Serve the gRPC binding of ``app`` (made by ``create_app``) on ``address``
    (``host:port``) for as long as the app runs: a ``GrpcServer`` registered on its
    service (``app.state.service``). Returns it (``.port`` once started).

    An app of several agents (``create_app([a, b])``) has them all served on that one
    port: a ``GrpcTenants``, each agent reached by the ``tenant`` its card names.

    ``ValueError`` for an agent whose security gRPC cannot meet (mutual TLS alone:
    gRPC reads no client certificate), rather than a port that refuses every call."""
    services = getattr(app.state, "services", None)
    for service in services.values() if services is not None else [app.state.service]:
        check_servable(service)
    if services is not None:
        from .tenants import GrpcTenants

        hub = GrpcTenants(address, url=url, credentials=credentials, grace=grace,
                          on_listening=on_listening)
        for name, service in services.items():
            service.add_binding(hub.member(name))
        return hub
    server = GrpcServer(address, url=url, credentials=credentials, grace=grace,
                        on_listening=on_listening)
    app.state.service.add_binding(server)
    return server
