"""Several services on one gRPC port, each reached by the ``tenant`` its requests name.

The A2A v1.0 requests carry a ``tenant`` field, and a card's ``AgentInterface``
says which tenant to put there (``tenant``). So agents served together
(``host/agents.py``) share one listener: each one's card names the port with
``tenant`` set to its path name, and a request is handed to the service whose
name it carries, which serves it in the tenant the tenant header names, else in its
default tenant (the same tasks its HTTP routes at ``/agents/{name}/`` serve). The v0.3 requests have no such field: on
such a port they are refused, saying to use v1.0 (the cards name no v0.3 gRPC).

``GrpcTenants`` is the listener; each service gets a binding of it
(``member(name)``, a ``TenantGrpc``), which joins it as the service prepares and
leaves it as the service stops. The listener opens with the first to join and
closes with the last to leave; its health checking says ``NOT_SERVING`` from the
first to leave on (the server is stopping), or from the moment a drain begins.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf.message import DecodeError

from ...core.errors import InvalidParams, MethodNotFound, UnsupportedOperation, quoted
from ...core.model import AgentCard, AgentInterface
from ...grpc_wire.resume import grpc_interfaces, resume_extension
from ...server.auth.runtime import Security, shown_agents
from ..base import BaseBinding
from ..http.request_headers import RequestHeaders
from .address import _card_host, _split
from .listener import Listener
from .servable import check_servable
from .server import (
    RPCS,
    V03_SERVICE,
    GrpcBinding,
    _abort,
    _Rpc,
    _scope_of,
    _unreadable,
    generic_handlers,
    server_options,
)
from .standard import Followed, StandardServices

if TYPE_CHECKING:
    from ...server.service import Service

__all__ = ["GrpcTenants", "TenantGrpc"]


class _NoTenants(UnsupportedOperation):
    """A v0.3 call on a port of several agents: its requests name no tenant, so no
    agent here serves that service (gRPC's own status for a service not served)."""

    grpc_status = "UNIMPLEMENTED"


class GrpcTenants(Listener):
    """One gRPC listener on ``address`` (``host:port``) for several services, each
    known by its tenant. ``url``, ``credentials``, ``grace``, ``max_message_bytes``
    and ``on_listening(port)`` as ``GrpcServer``'s; ``port`` once listening."""

    def __init__(self, address: str = "127.0.0.1:50051", *, url: str | None = None,
                 max_message_bytes: int | None = None,
                 credentials: grpc.ServerCredentials | None = None, grace: float = 5.0,
                 on_listening: Callable[[int], None] | None = None,
                 before_binding: Callable[[], None] | None = None) -> None:
        super().__init__(address, url=url, max_message_bytes=max_message_bytes,
                         credentials=credentials, grace=grace, on_listening=on_listening,
                         before_binding=before_binding)
        #: tenant -> service name -> RPC name -> its handling function
        self._members: dict[str, dict[str, dict[str, Any]]] = {}
        #: tenant -> the security of the agent it names: who its name is told to
        self._security: dict[str, Security] = {}

    def member(self, tenant: str) -> TenantGrpc:
        """The binding that serves a service here under ``tenant``."""
        return TenantGrpc(self, tenant)

    @property
    def tenants(self) -> list[str]:
        return list(self._members)

    async def join(self, tenant: str, binding: GrpcBinding, max_message_bytes: int,
                   public_url: str | None, engine: Followed | None = None) -> str:
        """Serve ``binding``'s calls named ``tenant``; the address cards name (``host:port``).
        Health says ``NOT_SERVING`` while ``engine`` (its agent's) is not ``ok``: the
        agents served together drain together, and the port is down while any of
        their stores is out of reach, as the root ``/healthz`` is."""
        if tenant in self._members:
            raise ValueError(f"two services would be reached by the gRPC tenant {tenant!r}")
        if self._server is None:
            await self._listen(self.max_message_bytes or max_message_bytes)
        self._members[tenant] = {service: {rpc.name: handle for rpc, handle in rpcs}
                                 for service, rpcs in binding.methods().items()}
        self._security[tenant] = binding.door.security
        if engine is not None and self._standard is not None:
            self._standard.follow(engine)
        host, _ = _split(self.address)
        return self.url or f"{_card_host(public_url or '', host)}:{self.port}"

    async def leave(self, tenant: str) -> None:
        self._members.pop(tenant, None)
        self._security.pop(tenant, None)
        server = self._server
        if server is None:
            return
        if self._standard is not None:
            # the first to leave: the agents served together are stopping, each
            # ending its turns in turn; probes see the port go before the first
            # does, as on a port of one agent, not once the last has left
            await self._standard.stopping()
        if not self._members:
            self._server = None
            await server.stop(self.grace)

    async def _listen(self, max_message_bytes: int) -> None:
        methods = {service: [(rpc, self._route_stream(service, rpc) if rpc.streaming
                              else self._route_unary(service, rpc)) for rpc in rpcs]
                   for service, rpcs in RPCS.items()}
        server = grpc.aio.server(options=server_options(max_message_bytes))
        server.add_generic_rpc_handlers(generic_handlers(methods))
        # health and reflection as on a port of one agent (they name no tenant), of the
        # v1.0 service alone: v0.3's, whose requests name no tenant, refuses every call
        port = await self._open(server, StandardServices(
            server, [name for name in RPCS if name != V03_SERVICE]))
        if self.on_listening is not None:
            self.on_listening(port)

    # --------------------------------------------------------------- routing

    def _route_unary(self, service: str, rpc: _Rpc) -> Any:
        async def route(data: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
            handle = await self._handler(service, rpc, data, context)
            return await handle(data, context)  # type: ignore[no-any-return]

        return route

    def _route_stream(self, service: str, rpc: _Rpc) -> Any:
        async def route(data: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[bytes]:
            handle = await self._handler(service, rpc, data, context)
            async for out in handle(data, context):
                yield out

        return route

    async def _handler(self, service: str, rpc: _Rpc, data: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        """The handling function of the service the request's tenant names (or an abort
        that says what is wrong, naming the agents this caller may know of)."""
        if service == V03_SERVICE:
            names = await self._shown(context)
            await _abort(context, None, _NoTenants(
                "this port serves several agents, each by the tenant its v1.0 requests "
                f"name (lf.a2a.v1.A2AService{', tenant one of: ' + names if names else ''}); "
                "v0.3 requests name no tenant"))
        try:
            tenant = rpc.request.FromString(data).tenant
        except DecodeError as exc:  # refused as the agent's own port refuses it
            await _abort(context, None, _unreadable(rpc, exc))
        if not tenant:
            names = await self._shown(context)
            await _abort(context, None, InvalidParams(
                "this port serves several agents: set the request's tenant to the agent's "
                f"name{' (one of: ' + names + ')' if names else ''}, as its card's gRPC "
                "interface says"))
        member = self._members.get(tenant)
        if member is None:
            names = await self._shown(context)
            await _abort(context, None, MethodNotFound(
                f"no agent {quoted(tenant)} is served here "
                f"({'tenant one of: ' + names if names else 'the tenant names the agent'})"))
            raise AssertionError("abort returns by raising")
        return member[service][rpc.name]

    async def _shown(self, context: grpc.aio.ServicerContext[Any, Any]) -> str:
        """The agents named to this caller, as HTTP's listing names them: those whose card
        it may read (a private card's agent only to a caller it is shown to)."""
        scope = _scope_of(context)
        headers = RequestHeaders(scope["headers"])
        return ", ".join(await shown_agents(self._security, scope, headers))


class TenantGrpc(BaseBinding):
    """One service's part of a ``GrpcTenants`` listener: its calls are those whose
    ``tenant`` is ``tenant``; its card names the listener with that tenant."""

    name = "grpc"

    def __init__(self, hub: GrpcTenants, tenant: str) -> None:
        self.hub = hub
        self.tenant = tenant
        self._listening_at: str | None = None

    def interfaces(self, base_url: str) -> Sequence[AgentInterface]:
        return grpc_interfaces(self._listening_at, tenant=self.tenant) \
            if self._listening_at else ()

    def extend_card(self, card: AgentCard) -> AgentCard:
        return resume_extension(card) if self._listening_at else card

    async def prepare(self, service: Service) -> None:
        check_servable(service)  # (add_grpc and serve said so already)
        card = service.card
        # the request's tenant named the agent: it acts in the tenant header's tenant,
        # else the agent's default one, as at the agent's HTTP routes
        binding = GrpcBinding(service.door, lambda: (card.card, card.rpc_url),
                              agent_tenant=True)
        self._listening_at = await self.hub.join(
            self.tenant, binding, service.settings.max_body_bytes, service.settings.public_url,
            service.engine)
        card.render_again()

    async def stop(self) -> None:
        if self._listening_at is not None:
            self._listening_at = None
            await self.hub.leave(self.tenant)

