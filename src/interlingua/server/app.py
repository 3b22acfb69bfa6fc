"""The ASGI application: JSON-RPC at the agent URL, the card, health.

``create_app(agent, store=..., public_url=...)`` returns a Starlette app that
works under uvicorn and can be mounted into FastAPI or any Starlette app.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..bus import open_bus
from ..bus.base import Bus
from ..core.model import AgentInterface
from ..stores import open_store
from ..stores.base import Store
from .agent import Agent
from .card import card_document
from .engine import Engine, EngineConfig
from .jsonrpc_endpoint import JSONRPCEndpoint
from .settings import ServerSettings

__all__ = ["A2AApp", "A2AServer", "create_app"]

log = logging.getLogger("interlingua.server")


class A2AServer:
    """The pieces of a running agent server, shared by its endpoints."""

    def __init__(self, agent: Agent, engine: Engine, settings: ServerSettings) -> None:
        self.agent = agent
        self.engine = engine
        self.settings = settings
        base = settings.public_url.rstrip("/")
        path = settings.rpc_path if settings.rpc_path.startswith("/") else "/" + settings.rpc_path
        self.rpc_url = base + ("" if path == "/" else path)
        if path == "/":
            self.rpc_url = base + "/"
        interfaces = [
            AgentInterface(url=self.rpc_url, binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=self.rpc_url, binding="JSONRPC", protocol_version="0.3"),
        ]
        self.card = agent.card(interfaces)
        self.card_bytes = card_document(self.card, jsonrpc_url=self.rpc_url)


class A2AApp(Starlette):
    """A Starlette app whose JSON-RPC route skips the middleware stack.

    The JSON-RPC endpoint handles all of its own errors, so the router and
    the exception middlewares would only add cost to every request; other
    routes (cards, health) go through Starlette as usual.
    """

    _rpc_path: str | None = None
    _rpc: JSONRPCEndpoint | None = None

    def rpc_route(self, path: str, endpoint: JSONRPCEndpoint) -> None:
        self._rpc_path = path
        self._rpc = endpoint

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and self._rpc is not None:
            path = scope["path"]
            root = scope.get("root_path", "")
            if root and path.startswith(root):
                path = path[len(root):] or "/"
            if path == self._rpc_path:
                scope["app"] = self
                await self._rpc(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def create_app(
    agent: Agent,
    *,
    store: str | Store = "memory://",
    bus: str | Bus = "local://",
    public_url: str = "http://localhost:8000",
    rpc_path: str = "/",
    max_body_bytes: int = 10 * 1024 * 1024,
    strict_versions: bool = False,
    engine_config: EngineConfig | None = None,
    debug: bool = False,
) -> Starlette:
    """Build the ASGI app serving ``agent``.

    ``store`` is a URL (``memory://``, ``sqlite:///path.db``) or a Store;
    ``public_url`` is the base URL clients reach this server at, used in the
    card (never ``0.0.0.0``).
    """
    settings = ServerSettings(
        public_url=public_url,
        rpc_path=rpc_path,
        max_body_bytes=max_body_bytes,
        strict_versions=strict_versions,
    )
    store_obj = open_store(store) if isinstance(store, str) else store
    bus_obj = open_bus(bus) if isinstance(bus, str) else bus
    server_ref: dict[str, A2AServer] = {}
    engine = Engine(agent, store_obj, bus_obj, config=engine_config,
                    card=lambda: server_ref["server"].card)
    server = A2AServer(agent, engine, settings)
    server_ref["server"] = server

    async def card(request: Request) -> Response:
        return Response(server.card_bytes, media_type="application/json",
                        headers={"Cache-Control": "public, max-age=300"})

    async def health(request: Request) -> Response:
        info: dict[str, Any] = {"status": "ok", "agent": agent.name, "store": store_obj.url}
        settings_info = getattr(store_obj, "settings", None)
        if settings_info:
            info["store_settings"] = settings_info
        return Response(msgspec.json.encode(info), media_type="application/json")

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await engine.start()
        try:
            yield
        finally:
            await engine.stop()

    rpc = JSONRPCEndpoint(server)
    path = settings.rpc_path if settings.rpc_path.startswith("/") else "/" + settings.rpc_path
    routes = [
        Route("/.well-known/agent-card.json", card, methods=["GET"]),
        Route("/.well-known/agent.json", card, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
        Route(path, rpc, methods=["POST"]),
    ]
    app = A2AApp(routes=routes, lifespan=lifespan, debug=debug)
    app.rpc_route(path, rpc)
    app.state.a2a = server
    app.state.engine = engine
    return app
