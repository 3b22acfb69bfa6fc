"""What a gRPC listener is told and how it opens its port: shared by the port of one
agent (``GrpcServer``) and the port several agents share (``GrpcTenants``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import grpc

from .address import _split

if TYPE_CHECKING:
    from .standard import StandardServices

__all__ = ["Listener"]


class Listener:
    """A listener's settings on ``address`` (``host:port``, checked now, not at start-up),
    the server once it listens, and ``port`` then."""

    def __init__(self, address: str = "127.0.0.1:50051", *, url: str | None = None,
                 max_message_bytes: int | None = None,
                 credentials: grpc.ServerCredentials | None = None, grace: float = 5.0,
                 on_listening: Callable[[int], None] | None = None,
                 before_binding: Callable[[], None] | None = None) -> None:
        _split(address)  # ValueError now, not at start-up
        self.address = address
        self.url = url
        self.max_message_bytes = max_message_bytes
        self.credentials = credentials
        self.grace = grace
        self.on_listening = on_listening
        #: called just before the port is bound (what held it for us lets go)
        self.before_binding = before_binding
        self.port: int | None = None
        self._server: grpc.aio.Server | None = None
        self._standard: StandardServices | None = None

    async def _open(self, server: grpc.aio.Server, standard: StandardServices,
                    unknown: Callable[[str, Mapping[str, str]], None] | None = None) -> int:
        """``server`` listening on the address (plain text or TLS), started, and its
        standard services serving: the port it listens on. ``unknown(method, metadata)``
        is told of each call of a method no service here has (after every other
        handler: it answers ``UNIMPLEMENTED`` as grpc would)."""
        if unknown is not None:
            server.add_generic_rpc_handlers([_Unknown(unknown)])
        port: int
        if self.before_binding is not None:
            self.before_binding()
        try:
            port = server.add_secure_port(self.address, self.credentials) \
                if self.credentials is not None else server.add_insecure_port(self.address)
        except RuntimeError as exc:  # grpc's way of saying the address is taken
            raise OSError(f"gRPC cannot listen on {self.address}: {exc}") from None
        if not port:
            raise OSError(f"gRPC cannot listen on {self.address}")
        await server.start()
        await standard.serving()
        self._server, self._standard = server, standard
        self.port = port
        return port


class _Unknown(grpc.GenericRpcHandler):  # type: ignore[misc]  # (grpc has no types)
    """Any method the handlers before it do not have: told, then ``UNIMPLEMENTED``."""

    def __init__(self, told: Callable[[str, Mapping[str, str]], None]) -> None:
        self._told = told

    def service(self, details: Any) -> Any:
        method = details.method
        metadata = {k.lower(): v for k, v in details.invocation_metadata if isinstance(v, str)}

        async def refuse(request: bytes, context: Any) -> bytes:
            self._told(method, metadata)
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, f"Method not found: {method}")
            return b""  # (abort raises)

        return grpc.unary_unary_rpc_method_handler(refuse)
