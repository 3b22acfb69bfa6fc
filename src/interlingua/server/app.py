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

__all__ = ["A2AServer", "create_app"]

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
    app = Starlette(routes=routes, lifespan=lifespan, debug=debug)
    app.state.a2a = server
    app.state.engine = engine
    return app
