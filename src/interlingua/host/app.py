"""The ASGI application: JSON-RPC at the agent URL, the card, health.

``create_app(agent, store=..., public_url=...)`` returns a Starlette app that
works under uvicorn and can be mounted into FastAPI or any Starlette app.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Unpack, overload

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route

from ..bindings.http.request_headers import RequestHeaders
from ..bindings.http.sse_writer import write_sse
from ..bindings.jsonrpc import JSONRPCBinding, JSONRPCEndpoint, jsonrpc_envelope, rpc_aliases
from ..bindings.rest import RESTBinding, RESTEndpoint
from ..bindings.rest.endpoint import refuse_verb
from ..bindings.rest.routes import NoRoute, match
from ..core.asgi_json import send_json
from ..core.errors import InvalidRequest
from ..observability.install import gauges
from ..observability.metrics import CONTENT_TYPE
from ..server.agent import Agent
from ..server.cards.serving import A2AServer, CardVariant
from ..server.dispatch import parse_version
from ..server.jwks import JWKS_PATH, jwks_endpoint
from ..server.service import Binding, Service
from ..server.settings import YOUNG_GC_THRESHOLD, ServiceOptions, ServiceSettings
from ..stores import shown_url
from .card_routes import EXTENDED_CARD_PATH, card_gate, extended_card_endpoint
from .cors import cors_layer, first_sight
from .hosts import HostNotAllowed, HostPolicy
from .refusals import http_refusal

if TYPE_CHECKING:
    from .agents import AgentsApp

__all__ = ["YOUNG_GC_THRESHOLD", "A2AApp", "A2AServer", "CardVariant", "create_app", "host_app",
           "lifespans"]

log = logging.getLogger("interlingua.server")

class A2AApp(Starlette):
    """A Starlette app whose JSON-RPC route skips the middleware stack.

    The JSON-RPC endpoint handles all of its own errors, so the router and
    the exception middlewares would only add cost to every request; other
    routes (cards, health) go through Starlette as usual.
    """

    _rpc_path: str | None = None
    _rpc: JSONRPCEndpoint | None = None
    _rest: RESTEndpoint | None = None
    _own_paths: frozenset[str] = frozenset()
    # the prefixes of mounted apps (the inspector), each ending in "/"
    _own_prefixes: tuple[str, ...] = ()
    _hosts: HostPolicy | None = None
    # the JSON-RPC endpoint under other names: python-a2a's client posts v0.1 calls
    # to {endpoint}/tasks/send (and its streams to .../tasks/sendSubscribe)
    _rpc_aliases: frozenset[str] = frozenset()

    def rpc_route(self, path: str, endpoint: JSONRPCEndpoint) -> None:
        self._rpc_path = path
        self._rpc = endpoint
        self._rpc_aliases = rpc_aliases(path)

    def rest_routes(self, endpoint: RESTEndpoint, own_paths: Sequence[str],
                    own_prefixes: Sequence[str] = ()) -> None:
        """HTTP+JSON answers every path but ``own_paths`` (cards, health, JSON-RPC ...)
        and those under ``own_prefixes`` (mounted apps)."""
        self._rest = endpoint
        self._own_paths = frozenset(own_paths)
        self._own_prefixes = tuple(p.rstrip("/") + "/" for p in own_prefixes)

    #: the CORS layer in front of everything, when pages of other origins are allowed
    _cors: Any = None

    def allow_pages_of(self, origins: Sequence[str]) -> None:
        """Answer the CORS requests of the pages ``origins`` names (``host/cors.py``), in
        front of the whole app: the JSON-RPC and HTTP+JSON routes skip the middleware
        stack."""
        self._cors = cors_layer(self, origins)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        cors = self._cors
        if cors is not None and first_sight(scope):
            # through the CORS layer, which calls this app again (the apps inside,
            # an agent's under /agents/, let a request it has seen through)
            await cors(scope, receive, send)
            return
        hosts = self._hosts
        if hosts is not None and hosts.allowed is not None and scope["type"] == "http":
            try:
                hosts.check(hosts.host_of(scope, RequestHeaders(scope.get("headers", ()))))
            except HostNotAllowed as exc:
                await _refuse_host(send, scope, str(exc))
                return
        if scope["type"] == "http":
            path = scope["path"]
            root = scope.get("root_path", "")
            if root and path.startswith(root):
                path = path[len(root):] or "/"
            if (path == self._rpc_path or path in self._rpc_aliases) and self._rpc is not None:
                if scope["method"] != "POST":  # with or without HTTP+JSON: its 405
                    # (named as the caller sent it, a mount's prefix too)
                    await refuse_verb(send, scope["method"], scope["path"], ("POST",))
                    return
                scope["app"] = self
                answer = await self._rpc.respond(scope, receive, send)
                if answer is not None:
                    await write_sse(send, receive, answer.stream, answer.codec,
                                    jsonrpc_envelope(answer.rid))
                return
            if self._rest is not None and path not in self._own_paths and not (
                    self._own_prefixes and (path + "/").startswith(self._own_prefixes)):
                scope["app"] = self
                await self._rest(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


#: the paths the server answers itself, whatever else it serves
_OWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json", "/healthz",
              JWKS_PATH, EXTENDED_CARD_PATH, "/metrics")


def _check_rpc_path(path: str, rest: bool) -> None:
    """A ValueError for a JSON-RPC path that would hide one of the server's own (the
    card at it would answer 405) or, with HTTP+JSON, one of its routes."""
    if path in _OWN_PATHS or path == "/inspector" or path.startswith("/inspector/"):
        raise ValueError(f"rpc_path {path!r} is a path the server answers itself "
                         f"({', '.join(_OWN_PATHS)}, /inspector): choose another")
    if rest:
        for method in ("GET", "POST", "DELETE"):
            try:
                match(method, path)
            except NoRoute:
                continue
            raise ValueError(f"rpc_path {path!r} is an HTTP+JSON route ({method} {path}): "
                             "choose another, or serve without HTTP+JSON")


async def _refuse_host(send: Any, scope: Any, message: str) -> None:
    """400 for a Host this server does not answer for: a JSON-RPC error on the
    JSON-RPC URL (a POST), a plain JSON error elsewhere."""
    if scope.get("method") == "POST":
        error: dict[str, Any] = {"code": -32600, "message": f"Invalid Request: {message}"}
        await send_json(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})
    else:
        await send_json(send, 400, {"error": {"code": 400, "message": message}})


def lifespans(*apps: Starlette) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    """A lifespan for a host app (FastAPI, Starlette) that runs the start-up and
    shutdown of the agent apps mounted in it: ``FastAPI(lifespan=lifespans(agent_app))``.

    A mounted app gets no lifespan events of its own; without this it starts on
    its first request and its shutdown (store closed, dispatchers stopped,
    running turns ended) never runs."""

    @asynccontextmanager
    async def lifespan(host: Any) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for app in apps:
                await stack.enter_async_context(app.router.lifespan_context(app))
            yield

    return lifespan


def _not_modified(request: Request, etag: str, last_modified: str) -> bool:
    """RFC 9110 §13.1: If-None-Match (weak comparison) decides; else If-Modified-Since."""
    tags = request.headers.get("if-none-match")
    if tags is not None:
        wanted = {t.strip().removeprefix("W/") for t in tags.split(",")}
        return "*" in wanted or etag in wanted
    since = request.headers.get("if-modified-since")
    if since is None:
        return False
    try:
        return parsedate_to_datetime(since) >= parsedate_to_datetime(last_modified)
    except (TypeError, ValueError, IndexError):
        return False  # not an HTTP date: ignored, as the RFC says


@overload
def create_app(agent: Agent, settings: ServiceSettings | None = None, *, rest: bool = True,
               debug: bool = False, inspector: bool = False, bindings: Sequence[Binding] = (),
               **overrides: Unpack[ServiceOptions]) -> A2AApp: ...


@overload
def create_app(agent: Sequence[Agent], settings: ServiceSettings | None = None, *,
               rest: bool = True, debug: bool = False, inspector: bool = False,
               bindings: Sequence[Binding] = (),
               **overrides: Unpack[ServiceOptions]) -> AgentsApp: ...


def create_app(agent: Agent | Sequence[Agent], settings: ServiceSettings | None = None, *,
               rest: bool = True, debug: bool = False, inspector: bool = False,
               bindings: Sequence[Binding] = (),
               **overrides: Unpack[ServiceOptions]) -> A2AApp | AgentsApp:
    """Build the ASGI app serving ``agent``: a ``Service`` made from ``settings``
    (``ServiceSettings``) with ``overrides`` (its fields as keywords: ``store``,
    ``public_url``, ``auth`` ...; ``TypeError`` for a keyword that is none), behind
    this host (``host_app``).

    ``store`` is a URL (``memory://``, ``sqlite:///path.db``) or a Store;
    ``public_url`` is the base URL clients reach this server at, used in the
    card (never ``0.0.0.0``). Without it the card's URLs come from each
    request (scheme, ``Host``, the path the app is mounted at; the
    ``X-Forwarded-*`` headers too with ``trust_forwarded``), and
    ``allowed_hosts`` (names, ``*.example.com``) refuses other hosts with 400.
    ``auth`` says which credentials are accepted (the card declares the
    same), ``limits`` bounds what callers may ask for, ``card_signing``
    signs the card (docs/security.md).
    ``freeze_gc``: once started, the objects the process holds so far (modules,
    classes, the agent) are moved out of the cycle collector's view
    (``gc.freeze``) until shutdown; see docs/architecture.md, "Performance".
    ``young_gc_threshold``: while serving, the cycle collector looks at the young
    objects only once this many have been made (the first of ``gc.get_threshold()``,
    when it is lower; None leaves it as it is), ibid.
    ``metrics`` serves ``/metrics`` (Prometheus); ``tracing`` makes OpenTelemetry
    spans (None: when an SDK is set up at this call; or a ``TracerProvider`` to take
    them from); docs/observability.md.
    ``rest=False`` serves no HTTP+JSON routes, and the card names none.
    ``message_ids``: ``"content"`` or ``"strict"``, what a message id names
    (``EngineConfig.message_ids``, which it overrides; docs/lifecycle.md).
    ``inspector``: serve the web inspector at ``/inspector`` (docs/inspector.md).
    ``max_batch_items``: requests one JSON-RPC batch may hold (more: one -32600, and
    none of them runs); ``max_answer_bytes``: the largest answer written, a batch's
    answers together (what would pass it is an error naming the limit).
    ``bindings``: more bindings to serve beside the HTTP ones (docs/architecture.md,
    "How to add a binding").

    A list of agents is served together (``host/agents.py``): each at
    ``/agents/{name}/`` with its own card, store and bus (derived from ``store`` and
    ``bus``, which are then URLs), and a listing at ``/`` and ``/agents``;
    ``ValueError`` for two agents with one name. ``add_grpc(app, …)`` then serves
    them all on one port, each by the ``tenant`` its card names.
    """
    try:
        settings = (settings or ServiceSettings()).replace(**overrides)
    except TypeError as exc:
        raise TypeError(f"create_app() got an {exc}") from None
    if not isinstance(agent, Agent):
        from .agents import host_agents, services_for

        if bindings:
            raise ValueError("bindings= serves one agent's binding; with several agents, "
                             "add each to its service (app.state.services)")
        return host_agents(services_for(list(agent), settings), host_app, rest=rest,
                           debug=debug, inspector=inspector)
    service = Service(agent, settings)
    app = host_app(service, rest=rest, debug=debug, inspector=inspector)
    for binding in bindings:  # after the HTTP ones: the card names JSON-RPC first
        service.add_binding(binding)
    return app


def host_app(service: Service, *, rest: bool = True, debug: bool = False,
             inspector: bool = False) -> A2AApp:
    """The ASGI app hosting ``service``'s HTTP bindings (JSON-RPC; HTTP+JSON unless
    ``rest`` is False), with its card, JWKS, health, extended card and metrics
    routes, and the inspector with ``inspector``. Its lifespan is
    ``async with service:``; the service's other bindings (gRPC, the mesh) start
    and stop with it."""
    agent = service.agent
    settings = service.settings
    engine = service.engine
    security = service.security
    server = service.card
    push_service = service.push
    store_obj = service.store
    auth = settings.auth
    hosts = HostPolicy(settings.allowed_hosts, settings.trust_forwarded)
    fixed = settings.public_url or ""

    def variant_of(scope: Any, headers: Any) -> CardVariant:
        """The card for this request; raises ``HostNotAllowed`` for a host not answered."""
        if fixed:
            if hosts.allowed is not None:
                hosts.check(hosts.host_of(scope, headers))
            return server.variant_for(fixed)
        return server.variant_for(hosts.base_url(scope, headers))
    # a card behind credentials must not be kept by shared caches
    card_cache = "public" if auth is None or auth.public_card else "private"
    card_headers = {"Cache-Control": f"{card_cache}, max-age=300",
                    "Last-Modified": server.last_modified}
    # a request with A2A-Version: 1.x gets the card with v1.0's members only
    card_headers["Vary"] = "A2A-Version"
    if server.per_request:
        card_headers["Vary"] = ("Host, X-Forwarded-Host, X-Forwarded-Proto, X-Forwarded-Prefix, "
                                if settings.trust_forwarded else "Host, ") + "A2A-Version"

    async def card(request: Request) -> Response:
        try:
            variant = variant_of(request.scope, request.headers)
        except HostNotAllowed as exc:
            return Response(msgspec.json.encode({"error": {"code": 400, "message": str(exc)}}),
                            status_code=400, media_type="application/json")
        denied = await card_gate(security, request)
        if denied is not None:
            return denied
        raw = request.headers.get("a2a-version") or request.query_params.get("A2A-Version")
        body, etag = variant.for_version(parse_version(raw) if raw else None)
        headers = {**card_headers, "ETag": etag}
        if _not_modified(request, etag, server.last_modified):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    async def health(request: Request) -> Response:
        # draining, or the store out of reach: the load balancer's health check
        # fails, so it sends elsewhere
        status, error = engine.health()
        info: dict[str, Any] = {"status": status, "agent": agent.name,
                                "store": shown_url(store_obj.url)}
        if error is not None:
            info["error"] = error
        # what the store reads back from its database (SQLite: its pragmas)
        settings_info = store_obj.describe()
        if settings_info:
            info["store_settings"] = settings_info
        return Response(msgspec.json.encode(info), media_type="application/json",
                        status_code=200 if status == "ok" else 503)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with service:
            yield

    jsonrpc = JSONRPCBinding(service)
    rpc = jsonrpc.endpoint
    path = jsonrpc.path
    _check_rpc_path(path, rest)
    signer = security.signer
    routes: list[BaseRoute] = [
        Route("/.well-known/agent-card.json", card, methods=["GET"]),
        Route("/.well-known/agent.json", card, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
        Route(JWKS_PATH, jwks_endpoint(signer.ring if signer is not None else None,
                                       push_service.keys if push_service.enabled else None),
              methods=["GET"]),
        Route(EXTENDED_CARD_PATH, extended_card_endpoint(server, security, service.door, variant_of), methods=["GET"]),
        Route(path, rpc, methods=["POST"]),
    ]
    observer = service.observer
    if observer is not None:
        counted = observer.metrics
        if counted is not None:
            counted.gauges = gauges(engine, push_service)

            async def metrics_endpoint(request: Request) -> Response:
                assert counted is not None
                return Response(await counted.render(), media_type=CONTENT_TYPE)

            routes.append(Route("/metrics", metrics_endpoint, methods=["GET"]))
    if inspector:
        from ..core.origins import Origins
        from ..inspector import inspector_app

        # its page is the agent's origin: behind a proxy, the agent's public URL
        own = Origins(public_urls=[settings.public_url], trust_forwarded=settings.trust_forwarded)
        routes.append(Mount("/inspector", app=inspector_app(on_agent=True, own_origins=own)))
    app = A2AApp(routes=routes, lifespan=lifespan, debug=debug,
                 exception_handlers={HTTPException: http_refusal})
    http_bindings: list[Binding] = [jsonrpc]
    app.rpc_route(path, rpc)

    def card_of(scope: Any, headers: Any) -> tuple[Any, str]:
        try:
            variant = variant_of(scope, headers)
        except HostNotAllowed as exc:  # the 400 the well-known card answers
            raise InvalidRequest(str(exc)) from None
        return variant.card, variant.rpc_url

    if rest:
        rest_binding = RESTBinding(service, card_of=card_of, other_paths={
            p: ("POST",) for p in (path, *rpc_aliases(path))})
        http_bindings.append(rest_binding)
        app.rest_routes(rest_binding.endpoint, [r.path for r in routes if isinstance(r, Route)],
                        [r.path for r in routes if isinstance(r, Mount)])
    for binding in http_bindings:
        service.add_binding(binding)
    app._hosts = hosts
    if settings.allowed_origins:
        app.allow_pages_of(settings.allowed_origins)
    app.state.service = service
    app.state.a2a = server
    app.state.engine = engine
    app.state.door = service.door
    app.state.hooks = service.hooks
    return app
