"""Several agents on one server: each a ``Service`` of its own, hosted at
``/agents/{name}/`` (the paths the mesh gateway serves its agents at), with a
listing of them at ``/`` and ``/agents``.

Each agent keeps everything a lone agent has: its own card (whose URLs name
``/agents/{name}/``), its own HTTP bindings (JSON-RPC at ``/agents/{name}/``,
HTTP+JSON below it, with the routes' own ``/{tenant}/…`` form) and its own store
and bus, derived from the URLs given (``store_url_for``, ``bus_url_for``): a task
of one agent can never be read, listed or continued through another, and one
agent's recovery never takes up another's tasks. ``{name}`` is the agent's name
as a path segment (``path_name``); two agents with the same one are refused when
the app is built. A request no agent takes is refused naming them, in the shape of
the binding asked: a JSON-RPC call (``is_jsonrpc_call``) with a JSON-RPC error, at
the root too.

A request under ``/agents/{name}/`` is handed to that agent's own app (its
``host_app``, which ``create_app`` passes in) with ``root_path`` extended by the prefix, as an app mounted there
would get it, so that the card's URLs come out right without ``public_url``; with
``public_url`` each card names ``{public_url}/agents/{name}``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..bindings.http.request_headers import RequestHeaders
from ..bindings.jsonrpc import rpc_aliases
from ..core.asgi_json import send_json, send_json_body
from ..core.dialects import get_codec
from ..core.errors import MethodNotFound, quoted
from ..core.names import safe_name
from ..server.agent import Agent
from ..server.auth.runtime import Security, shown_agents
from ..server.service import Service
from ..server.settings import ServiceSettings
from ..stores import shown_url
from ..stores.sqlite import parse_sqlite_url
from .cors import cors_layer, first_sight
from .hosts import HostNotAllowed, HostPolicy
from .refusals import host_refusal, is_jsonrpc_call, these

__all__ = ["PREFIX", "AgentsApp", "bus_url_for", "host_agents", "path_name", "services_for",
           "store_url_for"]

#: where each agent is served: ``/agents/{name}/``
PREFIX = "/agents/"

def path_name(name: str) -> str:
    """An agent's name as one path segment (``core.names.safe_name``: the rule of the
    gateway's ``/agents/{name}/``)."""
    return safe_name(name)


def store_url_for(url: str, name: str) -> str:
    """The store of agent ``name`` (a path name) among several served from ``url``:

    - ``memory://``, ``sqlite:///:memory:``: the same (each service opens its own);
    - ``sqlite:///DIR/`` (a folder): ``DIR/{name}.db``; ``sqlite:///x.db``:
      ``x.{name}.db`` beside it; the query's options are kept; the path is read by the
      store's own parser (``stores.sqlite.parse_sqlite_url``: ``ValueError`` for a URL
      it refuses);
    - ``postgresql://…``: the same database, in schema ``{schema}_{name}``
      (``schema`` default ``interlingua``; the name lower-cased, other characters ``_``).
    """
    scheme, sep, _ = url.partition("://")
    if sep and scheme == "sqlite":
        return _sqlite_url_for(url, name)
    if sep and scheme in ("postgresql", "postgres"):
        own = re.sub(r"[^a-z0-9_]", "_", name.lower())
        return _with_option(url, "schema", lambda schema: f"{schema or 'interlingua'}_{own}"[:63])
    return url


def _sqlite_url_for(url: str, name: str) -> str:
    # the store's own parser reads the path (and refuses what the store would refuse),
    # so that the file derived here is the one the store opens
    path = parse_sqlite_url(url).path
    if path == ":memory:":
        return url
    if path.endswith("/"):
        path = f"{path}{name}.db"
    else:
        file = PurePosixPath(path)
        path = str(file.with_name(f"{file.stem}.{name}{file.suffix}" if file.suffix
                                  else f"{file.name}.{name}"))
    query = urlsplit(url).query
    return f"sqlite:///{quote(path, safe='/:')}{'?' if query else ''}{query}"


def bus_url_for(url: str, name: str) -> str:
    """The bus of agent ``name`` among several: ``local://`` as it is (each service has
    its own), a Redis bus with the key prefix ``{prefix}.{name}``."""
    if url.partition("://")[0] in ("redis", "rediss", "unix"):
        return _with_option(url, "prefix", lambda prefix: f"{prefix or 'interlingua'}.{name}")
    return url


def _with_option(url: str, key: str, make: Any) -> str:
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    old = next((v for k, v in query if k == key), "")
    query = [(k, v) for k, v in query if k != key] + [(key, make(old))]
    return urlunsplit(parts._replace(query=urlencode(query)))


def services_for(agents: Sequence[Agent], settings: ServiceSettings,
                 stores: Sequence[str] | None = None) -> list[Service]:
    """A ``Service`` for each agent, from ``settings`` with each its own store and bus
    (``store_url_for``, ``bus_url_for``; ``stores``: each agent's store URL instead)
    and, with ``public_url``, its own base URL under ``/agents/{name}``. ``ValueError``
    for two agents with one path name, or a store or bus given as an object (it
    cannot be split between the agents)."""
    if not isinstance(settings.store, str) or not isinstance(settings.bus, str):
        raise ValueError("several agents need a store and a bus each: give them as URLs "
                         "(each agent's is derived from it), not as objects")
    seen: dict[str, Agent] = {}
    for agent in agents:
        name = path_name(agent.name)
        other = seen.get(name)
        if other is not None:
            raise ValueError(
                f"two agents would be served at {PREFIX}{name}/ ({other.name!r} and "
                f"{agent.name!r}): give each agent served on one server a name of its own")
        seen[name] = agent
    taken: dict[str, str] = {}
    services = []
    for i, (name, agent) in enumerate(seen.items()):
        store = stores[i] if stores is not None else store_url_for(settings.store, name)
        if store in taken and not store.startswith(("memory:", "sqlite:///:memory:")):
            raise ValueError(f"agents {taken[store]!r} and {name!r} would share the store "
                             f"{shown_url(store)}: rename one of them")
        taken[store] = name
        public = settings.public_url
        services.append(Service(agent, settings.replace(
            store=store, bus=bus_url_for(settings.bus, name),
            public_url=f"{public.rstrip('/')}{PREFIX}{name}" if public else None)))
    return services


class AgentsApp(Starlette):
    """The ASGI app of several services: each one's own app (``host_app``) under
    ``/agents/{name}/``, and the listing at ``/`` and ``/agents``. Its lifespan
    starts every service (in order) and stops them (in reverse).

    ``app.state.services`` maps each path name to its service; ``app.state.apps``
    to its app."""

    _apps: dict[str, Starlette]
    #: each agent's security, by path name: whom its name is shown to (``shown_agents``)
    _securities: dict[str, Security]
    #: the Host header rule, the listing's and each agent's
    _hosts: HostPolicy
    #: the CORS layer in front of every agent and the listing (``host/cors.py``)
    _cors: Any = None
    #: the paths of the agents' JSON-RPC URL below a base URL (``_jsonrpc_paths``)
    _rpc_paths: frozenset[str] = frozenset({"/"})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self._cors is not None and first_sight(scope):
            await self._cors(scope, receive, send)
            return
        if scope["type"] == "http":
            root = scope.get("root_path", "")
            path: str = scope["path"]
            if root and path.startswith(root):
                path = path[len(root):]
            if path.startswith(PREFIX) and path != PREFIX:
                name, slash, _ = path[len(PREFIX):].partition("/")
                app = self._apps.get(name)
                if app is None:
                    await self._no_agent(scope, receive, send, path[len(PREFIX) + len(name):],
                                         f"no agent {quoted(name)} is served here")
                    return
                child = dict(scope)
                child["root_path"] = f"{root}{PREFIX}{name}"
                if not slash:  # /agents/a: the agent's base URL, as /agents/a/
                    child["path"] = scope["path"] + "/"
                await app(child, receive, send)
                return
            if is_jsonrpc_call(scope["method"], path, self._rpc_paths):
                # the URL a caller of a server of one agent posts to: told in JSON-RPC
                # where the agents are (the listing's route would answer an HTTP 405)
                await self._no_agent(scope, receive, send, path,
                                     f"no agent is served at {quoted(path or '/')}: this "
                                     f"server hosts several agents, each under {PREFIX}{{name}}/")
                return
        await super().__call__(scope, receive, send)

    async def _no_agent(self, scope: Any, receive: Any, send: Any, below: str,
                        what: str) -> None:
        """``what`` (no agent there) refused, naming the agents the caller is shown
        (400 for a Host the listing refuses)."""
        try:
            named = await self.named(scope)
        except HostNotAllowed as exc:
            await send_json(send, 400, {"error": {"code": 400, "message": str(exc)}})
            return
        await _no_agent(scope, receive, send, below, self._rpc_paths,
                        MethodNotFound(f"{what}{these(named)} (GET {PREFIX})"))

    async def named(self, scope: Any) -> list[str]:
        """The agents a refusal names to this caller, as the listing lists them to it;
        ``HostNotAllowed`` for a Host the listing refuses (nothing is named then)."""
        headers = RequestHeaders(scope["headers"])
        self._hosts.check(self._hosts.host_of(scope, headers))
        return await shown_agents(self._securities, scope, headers)


#: the most of a request's body read for its JSON-RPC id when no agent is there to take it
_ID_READ = 65536


async def _no_agent(scope: Any, receive: Any, send: Any, below: str,
                    rpc_paths: frozenset[str], error: MethodNotFound) -> None:
    """A 404 for a path under no agent, in the shape of the binding the rest of the path
    (``below``) names, as each agent's own routes answer theirs: a JSON-RPC error to a
    JSON-RPC call (``is_jsonrpc_call``; the caller's id echoed), v0.3's HTTP+JSON error
    below ``/v1/``, v1.0's elsewhere (its cards, its routes)."""
    if is_jsonrpc_call(scope["method"], below, rpc_paths):
        ids = await _request_ids(receive)
        answers = [{"jsonrpc": "2.0", "id": rid,
                    "error": {"code": error.code, "message": error.message}}
                   for rid in (ids if isinstance(ids, list) else [ids])]
        if not answers:  # notifications alone: no answer, as an agent gives them none
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await send_json(send, 404, answers if isinstance(ids, list) else answers[0])
        return
    codec = get_codec("0.3-pj" if below.startswith("/v1/") else "1.0")
    await send_json_body(send, 404, codec.encode_http_error(error, 404))


async def _request_ids(receive: Any) -> Any:
    """The id of the JSON-RPC request in the body, or None (no JSON, no id, larger than
    ``_ID_READ``: JSON-RPC's null id for a request whose id cannot be read); of a batch,
    the list of its members' ids, its notifications left out (they get no answer)."""
    body = b""
    while len(body) <= _ID_READ:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if not message.get("more_body", False):
            try:
                doc = msgspec.json.decode(body)
            except msgspec.DecodeError:
                return None
            if isinstance(doc, list) and doc:
                return [_id_of(m) for m in doc if not (isinstance(m, dict) and "id" not in m)]
            return _id_of(doc)
    return None


def _id_of(request: Any) -> Any:
    rid = request.get("id") if isinstance(request, dict) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def _jsonrpc_paths(services: Sequence[Service]) -> frozenset[str]:
    """The paths below a base URL that name the JSON-RPC URL of any of ``services``: its
    ``rpc_path`` (as ``JSONRPCBinding`` reads it) and the other names an agent answers it
    by (``rpc_aliases``)."""
    paths: set[str] = set()
    for service in services:
        path = service.settings.rpc_path
        path = path if path.startswith("/") else "/" + path
        paths |= {path, *rpc_aliases(path)}
    return frozenset(paths)


def host_agents(services: Sequence[Service], host: Callable[..., Starlette], *,
                rest: bool = True, debug: bool = False, inspector: bool = False) -> AgentsApp:
    """The app serving ``services`` together (see the module's docstring): each one's
    HTTP bindings by ``host`` (``host_app``; ``rest``, ``inspector`` as there) at
    ``/agents/{name}/``. ``ValueError`` for two with one path name."""
    apps: dict[str, Starlette] = {}
    by_name: dict[str, Service] = {}
    for service in services:
        name = path_name(service.agent.name)
        if name in apps:
            raise ValueError(f"two agents would be served at {PREFIX}{name}/ "
                             f"({by_name[name].agent.name!r} and {service.agent.name!r})")
        apps[name] = host(service, rest=rest, debug=debug, inspector=inspector)
        by_name[name] = service
    if not apps:
        raise ValueError("no agent to serve")
    securities = {n: s.security for n, s in by_name.items()}
    first = next(iter(by_name.values())).settings
    hosts = HostPolicy(first.allowed_hosts, first.trust_forwarded)
    fixed = first.public_url.rstrip("/").removesuffix(PREFIX + next(iter(apps))) \
        if first.public_url else None

    async def listing(request: Request) -> Response:
        """Every agent served: its name, description, base URL and card URL."""
        # the Host checked as each agent's routes check it (a page on another
        # origin, through DNS rebinding, reads no listing), with a public URL too
        headers = RequestHeaders(request.scope["headers"])
        try:
            if fixed is None:
                base = hosts.base_url(request.scope, headers)
            else:
                hosts.check(hosts.host_of(request.scope, headers))
                base = fixed
        except HostNotAllowed as exc:
            return Response(msgspec.json.encode({"error": {"code": 400, "message": str(exc)}}),
                            status_code=400, media_type="application/json")
        # an agent whose card is private is listed to the callers it shows its card to
        shown = await shown_agents(securities, request.scope, headers)
        rows = [{"name": s.agent.name, "path": n, "description": s.agent.description,
                 "url": f"{base}{PREFIX}{n}/",
                 "card": f"{base}{PREFIX}{n}/.well-known/agent-card.json"}
                for n, s in ((n, by_name[n]) for n in shown)]
        return Response(msgspec.json.encode({"agents": rows}), media_type="application/json")

    async def health(request: Request) -> Response:
        """The server's health, as a load balancer asks it: each agent's as its own
        ``/healthz`` says it; 200 when all are ``ok``, else 503 with the worst."""
        headers = RequestHeaders(request.scope["headers"])
        if hosts.allowed is not None:  # as each agent's routes check it
            try:
                hosts.check(hosts.host_of(request.scope, headers))
            except HostNotAllowed as exc:
                return Response(msgspec.json.encode({"error": {"code": 400,
                                                               "message": str(exc)}}),
                                status_code=400, media_type="application/json")
        states = {n: s.engine.health() for n, s in by_name.items()}
        status = next((worst for worst in ("draining", "store_unreachable")
                       if any(state == worst for state, _ in states.values())), "ok")
        # (an agent whose card is private counts, unnamed to a caller it is not shown to)
        rows = []
        for n in await shown_agents(securities, request.scope, headers):
            service = by_name[n]
            state, error = states[n]
            row = {"name": service.agent.name, "path": n, "status": state,
                   "store": shown_url(service.store.url)}
            if error is not None:
                row["error"] = error
            rows.append(row)
        return Response(msgspec.json.encode({"status": status, "agents": rows}),
                        media_type="application/json",
                        status_code=200 if status == "ok" else 503)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for child in apps.values():
                await stack.enter_async_context(child.router.lifespan_context(child))
            yield

    routes = [Route(path, listing, methods=["GET"]) for path in ("/", PREFIX, PREFIX.rstrip("/"))]
    routes.append(Route("/healthz", health, methods=["GET"]))
    app = AgentsApp(routes=routes,
                    lifespan=lifespan, debug=debug,
                    exception_handlers={HTTPException: host_refusal(PREFIX)})
    app._apps = apps
    app._securities = securities
    app._hosts = hosts
    app._rpc_paths = _jsonrpc_paths(services)
    if first.allowed_origins:
        app._cors = cors_layer(app, first.allowed_origins)
    app.state.services = by_name
    app.state.apps = apps
    return app

