"""Running the gRPC binding beside an app made by ``create_app``.

``add_grpc(app, "0.0.0.0:50051")`` attaches a gRPC server to the app
(``app.state.attachments``): it listens before the app's engine starts (port 0: an ephemeral port, known
once it listens), the card lists it (``supportedInterfaces`` with
``protocolBinding: GRPC``, and v0.3's ``additionalInterfaces``), and it stops,
letting open calls finish for a few seconds, before the app shuts down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import grpc

from ...server.attachments import Attachment
from ...server.cards.serving import A2AServer
from .server import GrpcBinding, server_options

__all__ = ["GrpcServer", "add_grpc"]

_WILDCARDS = {"", "0.0.0.0", "::", "[::]"}


def _split(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{address!r} is not host:port")
    return host, int(port)


class GrpcServer:
    """A ``grpc.aio`` server with both A2A services of one app.

    ``credentials``: ``grpc.ssl_server_credentials(...)`` to serve TLS; plain
    text otherwise. ``port`` is the port it listens on, once started.
    """

    def __init__(self, binding: GrpcBinding, address: str, *, max_message_bytes: int,
                 credentials: grpc.ServerCredentials | None = None) -> None:
        self.binding = binding
        self.address = address
        self.max_message_bytes = max_message_bytes
        self.credentials = credentials
        self.port: int | None = None
        self._server: grpc.aio.Server | None = None

    async def start(self) -> int:
        server = grpc.aio.server(options=server_options(self.max_message_bytes))
        server.add_generic_rpc_handlers(self.binding.handlers())
        port: int
        try:
            if self.credentials is not None:
                port = server.add_secure_port(self.address, self.credentials)
            else:
                port = server.add_insecure_port(self.address)
        except RuntimeError as exc:  # grpc's way of saying the address is taken
            raise OSError(f"gRPC cannot listen on {self.address}: {exc}") from None
        if not port:
            raise OSError(f"gRPC cannot listen on {self.address}")
        await server.start()
        self._server = server
        self.port = port
        return port

    async def stop(self, grace: float | None = 5.0) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.stop(grace)


def add_grpc(app: Any, address: str = "127.0.0.1:50051", *, url: str | None = None,
             credentials: grpc.ServerCredentials | None = None,
             grace: float = 5.0,
             on_listening: Callable[[int], None] | None = None) -> GrpcServer:
    """Serve the gRPC binding of ``app`` (made by ``create_app``) on ``address``
    (``host:port``) for as long as the app runs; ``url`` is what the card
    names (default: the host of the app's public URL, else the address's host,
    with the port it listens on). ``on_listening(port)`` is called once it
    listens. Returns the server (``.port`` once started)."""
    a2a: A2AServer = app.state.a2a
    settings = a2a.settings
    binding = GrpcBinding(app.state.door, lambda: (a2a.card, a2a.rpc_url))
    grpc_server = GrpcServer(binding, address, max_message_bytes=settings.max_body_bytes,
                             credentials=credentials)
    host, _ = _split(address)

    async def listen() -> None:
        port = await grpc_server.start()
        if on_listening is not None:
            on_listening(port)
        settings.grpc_url = url or f"{_card_host(settings.public_url, host)}:{port}"
        a2a.render_again()

    # listening before the engine starts (the card names the port); calls in
    # flight end before the engine under them stops
    app.state.attachments.add(Attachment(
        "the gRPC server", prepare=listen, stop=lambda: grpc_server.stop(grace)))
    return grpc_server


def _card_host(public_url: str, bound: str) -> str:
    if public_url:
        name = urlsplit(public_url).hostname
        if name:
            return f"[{name}]" if ":" in name else name
    return "localhost" if bound in _WILDCARDS else bound
