"""The ASGI application: JSON-RPC at the agent URL, the card, health.

``create_app(agent, store=..., public_url=...)`` returns a Starlette app that
works under uvicorn and can be mounted into FastAPI or any Starlette app.
"""

from __future__ import annotations

import gc
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
from ..stores import open_store, shown_url
from ..stores.base import Store
from .agent import Agent
from .auth.card_signer import CardSigner, CardSigning, jwks_endpoint
from .auth.config import AuthConfig
from .auth.limits import Limits
from .auth.routes import EXTENDED_CARD_PATH, card_gate, extended_card_endpoint
from .auth.runtime import Security
from .card import card_document
from .engine import Engine, EngineConfig
from .jsonrpc_endpoint import JSONRPCEndpoint
from .push.service import JWKS_PATH
from .push.settings import PushSettings
from .settings import ServerSettings
from .sse_writer import write_sse

__all__ = ["A2AApp", "A2AServer", "create_app"]

log = logging.getLogger("interlingua.server")


class A2AServer:
    """The pieces of a running agent server, shared by its endpoints."""

    def __init__(self, agent: Agent, engine: Engine, settings: ServerSettings,
                 security: Security | None = None) -> None:
        self.agent = agent
        self.security = security or Security()
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
        self.card = engine.push.card_with_extension(agent.card(interfaces), base)
        # declared from the same config that enforces, then signed as served
        self.card = self.security.declare(self.card)
        if self.security.signer is not None:
            self.card = self.security.signer.sign(self.card)
        self.card_bytes = card_document(self.card, jsonrpc_url=self.rpc_url)
        self.security.check_card(self.card_bytes)


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
                answer = await self._rpc.respond(scope, receive, send)
                if answer is not None:
                    await write_sse(send, receive, answer.stream, answer.codec, answer.rid)
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
    strict_dialects: bool = False,
    engine_config: EngineConfig | None = None,
    push: PushSettings | None = None,
    auth: AuthConfig | None = None,
    limits: Limits | None = None,
    card_signing: CardSigning | None = None,
    freeze_gc: bool = True,
    debug: bool = False,
) -> Starlette:
    """Build the ASGI app serving ``agent``.

    ``store`` is a URL (``memory://``, ``sqlite:///path.db``) or a Store;
    ``public_url`` is the base URL clients reach this server at, used in the
    card (never ``0.0.0.0``).
    ``auth`` says which credentials are accepted (the card declares the
    same), ``limits`` bounds what callers may ask for, ``card_signing``
    signs the card (docs/security.md).
    ``freeze_gc``: once started, the objects the process holds so far (modules,
    classes, the agent) are moved out of the cycle collector's view
    (``gc.freeze``) until shutdown; see docs/architecture.md, "Performance".
    """
    settings = ServerSettings(
        public_url=public_url,
        rpc_path=rpc_path,
        max_body_bytes=max_body_bytes,
        strict_versions=strict_versions,
        strict_dialects=strict_dialects,
    )
    store_obj = open_store(store) if isinstance(store, str) else store
    bus_obj = open_bus(bus) if isinstance(bus, str) else bus
    server_ref: dict[str, A2AServer] = {}
    engine = Engine(agent, store_obj, bus_obj, config=engine_config, push=push,
                    card=lambda: server_ref["server"].card)
    signer = CardSigner(card_signing, public_url) if card_signing is not None else None
    engine.security = security = Security(auth, limits, signer)
    redis_url = getattr(bus_obj, "redis_url", None)
    if redis_url is not None:
        # replicas sharing a Redis bus count rate limits together
        security.share_limits(redis_url, getattr(bus_obj, "prefix", "interlingua"))
    server = A2AServer(agent, engine, settings, security=security)
    server_ref["server"] = server

    async def card(request: Request) -> Response:
        denied = await card_gate(security, request)
        if denied is not None:
            return denied
        # a card behind credentials must not be kept by shared caches
        cache = "public" if auth is None or auth.public_card else "private"
        return Response(server.card_bytes, media_type="application/json",
                        headers={"Cache-Control": f"{cache}, max-age=300"})

    async def health(request: Request) -> Response:
        # draining: the load balancer's health check fails, so it sends elsewhere
        info: dict[str, Any] = {"status": "draining" if engine.draining else "ok",
                                "agent": agent.name, "store": shown_url(store_obj.url)}
        # what the store reads back from its database (SQLite: its pragmas)
        settings_info = getattr(store_obj, "effective", None)
        if settings_info:
            info["store_settings"] = settings_info
        return Response(msgspec.json.encode(info), media_type="application/json",
                        status_code=503 if engine.draining else 200)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await engine.start()
        if freeze_gc:
            # A full collection visits every tracked object; most of a server's
            # are its imported code, which never becomes garbage. Measured: at
            # 64 concurrent sends, full collections took 6-9% of the CPU (0.7-1.0 s
            # in 11 s); with the heap frozen a request cost 15% less CPU.
            gc.collect()
            gc.freeze()
        try:
            yield
        finally:
            if freeze_gc:
                gc.unfreeze()
            await engine.stop()
            await security.aclose()

    rpc = JSONRPCEndpoint(server)
    path = settings.rpc_path if settings.rpc_path.startswith("/") else "/" + settings.rpc_path
    routes = [
        Route("/.well-known/agent-card.json", card, methods=["GET"]),
        Route("/.well-known/agent.json", card, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
        Route(JWKS_PATH, jwks_endpoint(signer, engine.push), methods=["GET"]),
        Route(EXTENDED_CARD_PATH, extended_card_endpoint(server), methods=["GET"]),
        Route(path, rpc, methods=["POST"]),
    ]
    app = A2AApp(routes=routes, lifespan=lifespan, debug=debug)
    app.rpc_route(path, rpc)
    app.state.a2a = server
    app.state.engine = engine
    return app
