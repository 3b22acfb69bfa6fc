"""``interlingua serve``: load an agent from a file or module and serve it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import logging
import os
import re
import socket
import sqlite3
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, Any

from ..mesh import MeshSettings, attach, mesh_name
from ..server.agent import Agent
from ..server.auth import AuthConfig, CardSigning, Limits
from ..server.connections import ConnectionLimits, uvicorn_connection_options
from ..server.engine import Engine, EngineConfig
from ..server.idempotency import message_id_mode
from ..server.push import PushSettings
from ..server.service import Service
from ..server.settings import ServiceSettings
from .stores import store_problem

if TYPE_CHECKING:
    from ..bindings.grpc.serving import GrpcServer

__all__ = [
    "BINDINGS",
    "ListenError",
    "ServeSettings",
    "StoreError",
    "bind",
    "default_store_for",
    "load_agent",
    "public_url_for",
    "reserve",
    "serve",
]

#: the bindings ``serve`` can serve; JSON-RPC is always among them (every card names it,
#: and v0.3 cards' main ``url`` is its endpoint)
BINDINGS = ("jsonrpc", "rest", "grpc")
#: seconds the app's own shutdown may take after a forced exit (a third signal)
FORCED_SHUTDOWN_S = 5.0
#: seconds the gRPC port lets calls in flight finish as it closes: the turns have
#: ended by then (their callers answered), what is left is a read or a long poll
#: (cut: its caller asks again); well under ``FORCED_SHUTDOWN_S``, which the
#: engine's stop after it (lease, store) must fit in as well
GRPC_GRACE_S = 1.0

log = logging.getLogger("interlingua.serve")

#: ``--log-level`` names that are not Python's
_PY_LEVELS = {"trace": "DEBUG"}


#: a name its file name says well enough (up to case and which separator): ASCII letters
#: and digits in words joined by single spaces, hyphens, underscores or dots
_PLAIN_NAME = re.compile(r"[A-Za-z0-9]+(?:[ ._-][A-Za-z0-9]+)*")
#: the ``meta`` key under which a default store records the agent it was made for
_MADE_FOR = "agent"


def default_store_for(agent: Agent) -> str:
    """The store ``serve`` uses when none is named: one SQLite file per agent
    under ``./.interlingua/``, so two agents started from one folder never share
    tasks by accident.

    The file is named by the agent's name lower-cased, each run of characters other
    than ``a-z`` and ``0-9`` made ``-`` (``Flight_booker``: ``flight-booker.db``), for
    a plain name: words of ASCII letters and digits joined by single spaces, hyphens,
    underscores or dots, at most 64 characters. Any other name, whose file name would
    be another's too (``C++ helper`` and ``C helper``, ``翻訳`` and ``要約``: ``agent``),
    gets 8 hex digits of its SHA-256 after it (``c-helper-3f1a…``); so does a plain name
    whose file was made for another (``echo`` after ``Echo``). Serving records the
    agent's name in its default store, and refuses one made for another agent
    (``check_services``). A file an earlier version made records no name: the first
    agent served whose file name it is takes it, with the tasks kept there."""
    name = agent.name
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent"
    named = Path(".interlingua", f"{slug[:64]}.db")
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    own = Path(".interlingua", f"{slug[:55]}-{digest}.db")
    if own.exists():
        chosen = own
    elif named.exists():  # its own, from this version or an earlier one, or another's
        chosen = named if _made_for(named) in (None, name) else own
    else:
        chosen = named if len(name) <= 64 and _PLAIN_NAME.fullmatch(name) else own
    return f"sqlite:///{chosen.as_posix()}"


def _made_for(path: Path | str) -> str | None:
    """The agent the SQLite store at ``path`` was made for as its default store; None
    when it records none (made by an earlier version, or given with ``--store``) or
    cannot be read (its own problem is said where it is opened)."""
    if not Path(path).is_file():  # (connecting would make one)
        return None
    try:
        conn = sqlite3.connect(path)
        try:
            return _recorded(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def _recorded(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_MADE_FOR,)).fetchone()
    return None if row is None else str(row[0])


def _not_made_for(path: str, other: str, name: str) -> str:
    return (f"the default store {path} was made for the agent {other!r}, not {name!r}: "
            f"give {name!r} a store of its own with --store URL")


def _claim(store: str, name: str) -> None:
    """Record in the default store ``store`` (opened, so its schema is current) that it
    is ``name``'s, when it records no agent yet; ``StoreError`` when it is another's."""
    from ..stores import shown_url
    from ..stores.sqlite import parse_sqlite_url

    path = parse_sqlite_url(store).path
    try:
        conn = sqlite3.connect(path, timeout=5)
        try:
            other = _recorded(conn)
            if other is None:  # (of two agents started at once on it, the first's)
                with conn:
                    conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                                 (_MADE_FOR, name))
                other = _recorded(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreUnwritable(f"cannot write to the store {shown_url(store)}: {exc}") from None
    if other not in (None, name):
        raise StoreError(_not_made_for(path, str(other), name))


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``; ``OSError`` when it cannot be had.

    ``serve`` binds before it builds the app or opens the store, so a process
    that cannot listen (the port is taken) never touches the store.
    """
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                               flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


class StoreError(Exception):
    """The store cannot be used as it is (a schema that is newer, or behind with
    migrations turned off); the message says why."""


def reserve(host: str, port: int) -> socket.socket:
    """Hold ``host:port`` (0: a free port) for the gRPC server, which can only
    bind inside the event loop: a bound, not listening socket, so that a port that
    is taken (by any server: none shares it) fails here, before the store is opened,
    like the HTTP socket's; let go just before grpc binds it (``before_binding``).
    ``SO_REUSEADDR``, as the HTTP socket and grpc's own: a port whose last
    connections wait out TIME-WAIT (a server just stopped) is free to take."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                               flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except BaseException:
        sock.close()
        raise
    return sock


def grpc_address(host: str, port: int) -> str:
    """``host:port`` as grpc reads an address (IPv6 in brackets, all interfaces for "")."""
    host = host or "0.0.0.0"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def check_services(store: str, bus: str, auth: AuthConfig | None = None,
                   mesh: MeshSettings | None = None, *, default_of: str | None = None) -> None:
    """Reach the store's database and the bus before serving: a wrong URL, a
    service that is down, or a store the configured authentication cannot use
    (owners from before they were keyed by scheme, with several schemes and no
    ``legacy_owner_scheme``) is then one clear error (``ConnectionError``,
    ``StoreError``), not a failed start-up. ``default_of``: the agent whose
    default store ``store`` is (``default_store_for``), recorded in it; one made
    for another agent is a ``StoreError``."""
    from ..stores import open_store

    async def check() -> None:
        kind = store.partition("://")[0]
        # (an SQLite path that cannot be opened is said by store_problem, where it is read)
        if kind in ("postgresql", "postgres") or (kind == "sqlite"
                                                  and store_problem(store) is None):
            # opened as the server would open it: a schema it cannot read is one line
            opened = open_store(store)
            try:
                await opened.open()  # migrates, as the server would
            except RuntimeError as exc:
                raise StoreError(str(exc)) from None
            try:
                if auth is not None and not await opened.owners_namespaced():
                    auth.legacy_owner_of()  # RuntimeError when it cannot be told
                await _written(opened, store)
            except RuntimeError as exc:
                raise StoreError(str(exc)) from None
            finally:
                await opened.close()
            if default_of is not None:
                _claim(store, default_of)
        if bus.partition("://")[0] in ("redis", "rediss", "unix"):
            from ..bus.redis import ping

            await ping(bus)
        if mesh is not None:
            from ..mesh.broker import ping as ping_broker

            await ping_broker(mesh.broker_url())

    asyncio.run(check())


class StoreUnwritable(ConnectionError):
    """The store opens but takes no write (a role that may only read, a file or a
    database made read-only): the server could not take its lease."""


async def _written(store: Any, url: str) -> None:
    """Write ``store`` as the server first does (a lease, taken and let go):
    ``StoreUnwritable`` naming the store (its password masked) and what its
    database said, when it cannot be."""
    import time

    from ..stores import shown_url
    from ..stores.holders import holder_name

    try:
        lease = await store.acquire_lease(holder_name(), time.time())
        await store.release_lease(lease.epoch)
    except Exception as exc:
        # (the store's own words for an outage name its host, not the cause)
        cause = exc.__cause__ if isinstance(exc, ConnectionError) and exc.__cause__ else exc
        said = str(cause) or type(cause).__name__
        raise StoreUnwritable(f"cannot write to the store {shown_url(url)}: {said}") from None


class LoadError(Exception):
    """The agent could not be found or loaded; the message says why."""


def load_agent(spec: str) -> Agent:
    """``path/to/file.py[:attr]`` or ``package.module[:attr]`` -> the Agent in it.

    Without ``:attr``: the module's ``agent`` attribute, or its only Agent.
    """
    target, _, attr = spec.partition(":")
    module = load_module(target)
    if attr:
        obj = getattr(module, attr, None)
        if obj is None:
            raise LoadError(f"{target} has no attribute {attr!r}")
    else:
        obj = getattr(module, "agent", None)
        if not isinstance(obj, Agent):
            found = [v for v in vars(module).values() if isinstance(v, Agent)]
            if len(found) != 1:
                raise LoadError(
                    f"{target} defines {len(found)} agents; name one as {target}:NAME"
                    if found else f"{target} defines no interlingua.Agent"
                )
            obj = found[0]
    if callable(obj) and not isinstance(obj, Agent):
        obj = built(obj, spec)
    if not isinstance(obj, Agent):
        raise LoadError(f"{spec} is a {type(obj).__name__}, not an interlingua.Agent")
    return obj


def load_module(target: str) -> ModuleType:
    """The module ``target`` names, a Python file's path or a module's dotted name;
    ``LoadError`` saying why not (its import raised: the error's words)."""
    if target.endswith(".py") or "/" in target or Path(target).is_file():
        path = Path(target)
        if path.is_dir():
            raise LoadError(f"{target} is a folder, not a Python file")
        if not path.is_file():
            raise LoadError(f"no such file: {target}")
        return _load_file(path)
    if not target or target.startswith("."):
        # (importlib takes no empty or relative name without a package to start from)
        raise LoadError(f"{target!r} is neither a Python file nor a module's name")
    # a module of the working directory's, as ``python -m`` and uvicorn find one (the
    # console script's own path holds only its folder); after what is installed, which
    # a file here of the same name does not hide
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)
    try:
        return importlib.import_module(target)
    except ImportError as exc:
        raise LoadError(f"cannot import {target}: {exc}") from None
    except Exception as exc:  # raised by the module's own code as it was imported
        raise LoadError(f"{target} failed to load: {type(exc).__name__}: {exc}") from None


def built(factory: Any, spec: str) -> Any:
    """What the function ``spec`` names returns; ``LoadError`` with what it raised."""
    try:
        return factory()
    except (Exception, SystemExit) as exc:
        why = f"it called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) \
            else f"{type(exc).__name__}: {exc}"
        raise LoadError(f"{spec} failed: {why}") from None


#: modules imported from an agent file's folder (its neighbours), by name: the
#: folder and the file that imported them (several files are loaded in one process)
_NEIGHBOURS: dict[str, tuple[Path, Path]] = {}


def _load_file(path: Path) -> ModuleType:
    folder = path.resolve().parent
    name = "_interlingua_agent_" + path.stem
    if name in sys.modules:  # another file of that name (a/agent.py, b/agent.py)
        name += "_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # Let the agent file import its neighbours: a neighbour of an earlier file's
    # folder of the same name is set aside, so that an import of it is seen
    hidden = {n: sys.modules.pop(n) for n, (where, _) in _NEIGHBOURS.items()
              if where != folder and n in sys.modules}
    before = set(sys.modules)
    sys.path.insert(0, str(folder))
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.update(hidden)
        why = f"it called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) \
            else f"{type(exc).__name__}: {exc}"
        raise LoadError(f"{path} failed to load: {why}") from None
    for n in set(sys.modules) - before:
        found = getattr(sys.modules[n], "__file__", None)
        if found is not None and Path(found).resolve().is_relative_to(folder) \
                and "." not in n:
            earlier = _NEIGHBOURS.get(n)
            if n in hidden and earlier is not None:
                # one name, two modules: either file's code could get the other's
                raise LoadError(
                    f"{path} and {earlier[1]} each import a module named {n!r} from "
                    "their own folders, and a process keeps one module of a name: "
                    "rename one of them, or serve the agents from separate processes")
            _NEIGHBOURS[n] = (folder, path)
    for n, hidden_module in hidden.items():
        sys.modules.setdefault(n, hidden_module)
    return module


def host_port(host: str, port: int) -> str:
    """``host:port`` as a URL writes it: an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def public_url_for(host: str, port: int, scheme: str = "http") -> str:
    """The URL to put in the card for a server bound to ``host``: never 0.0.0.0."""
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "localhost"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


@dataclass(frozen=True, kw_only=True)
class ServeSettings:
    """What ``serve`` runs: the process's listeners and signals, and the fields
    its service is built from (``service_settings``). ``serve``'s keywords are its
    fields; the CLI's ``serve`` command fills it from its options.

    Slow or idle clients are bounded: idle keep-alive connections close after
    ``timeout_keep_alive`` s, ``connections`` bounds heads, read deadlines and
    connections per address (default ``ConnectionLimits(max_head_bytes=
    max_incomplete_event_bytes)``), and connections beyond ``limit_concurrency``
    are answered 503. ``http``: uvicorn's parser, ``auto``, ``httptools`` or ``h11``.
    HTTPS with ``certfile``/``keyfile``, and client certificates checked against
    ``client_ca`` (docs/security.md).

    ``store`` defaults to ``default_store_for(agent)``; ``bus`` is ``local://``
    (one process) or ``redis://…`` (replicas sharing a PostgreSQL store). ``lease_timeout``:
    seconds of silence after which another process on the same store ends
    this one's running tasks (docs/architecture.md, "Ownership"). ``submit_grace``:
    seconds a new task's executor has to say something before the task is
    written ``submitted`` without it (default ``EngineConfig.submit_grace``).
    ``message_ids``: ``"content"`` or ``"strict"``, what a message id names
    (default ``EngineConfig.message_ids``; docs/lifecycle.md, "Message ids").
    ``drain_seconds``: on SIGTERM, how long new sends are refused (503) while
    the running turns finish, before the process stops; a second signal stops
    it at once, a third forces the exit (the app's shutdown still runs, for up
    to ``FORCED_SHUTDOWN_S``); docs/deployment.md, "Draining".
    ``on_listening(store, port)`` is called once the socket is bound.

    ``bindings``: which of ``BINDINGS`` to serve (default: JSON-RPC and HTTP+JSON).
    A binding left out is neither served nor named in the card; JSON-RPC is
    always served. gRPC, when listed, needs ``grpc_port`` (0: a free port): no
    port is taken that was not asked for. It is reserved before anything else
    happens, as the HTTP socket is; ``on_grpc_listening(port)`` is called once it
    is reserved, before ``on_listening``. A port that is taken raises
    ``ListenError`` (an ``OSError``) naming the binding.

    ``mesh`` puts the agent on an MQTT 5 broker as well (docs/mesh.md), under
    ``mesh_agent_name`` (default: its name as a topic level); ``no_http``
    serves it there only (no HTTP app is built), and ``on_listening`` is then
    called with port 0.

    ``metrics`` serves ``/metrics``; ``log_format="json"`` logs one JSON object a
    line (docs/observability.md). ``max_batch_items``, ``max_answer_bytes``,
    ``long_poll_max_wait``, ``offer_1_1`` (A2A 1.1, draft), ``allowed_origins``,
    ``allowed_hosts``: as ``create_app``'s.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    store: str | None = None
    bus: str = "local://"
    public_url: str | None = None
    rpc_path: str = "/"
    log_level: str = "info"
    certfile: str | None = None
    keyfile: str | None = None
    client_ca: str | None = None
    auth: AuthConfig | None = None
    limits: Limits | None = None
    card_signing: CardSigning | None = None
    push: PushSettings | None = None
    timeout_keep_alive: int = 5
    max_incomplete_event_bytes: int = 64 * 1024
    limit_concurrency: int | None = 2048
    connections: ConnectionLimits | None = None
    http: str = "auto"
    lease_timeout: float | None = None
    submit_grace: float | None = None
    message_ids: str | None = None
    drain_seconds: float = 30.0
    on_listening: Callable[[str, int], None] | None = None
    bindings: Sequence[str] | None = None
    grpc_port: int | None = None
    on_grpc_listening: Callable[[int], None] | None = None
    mesh: MeshSettings | None = None
    mesh_agent_name: str | None = None
    no_http: bool = False
    metrics: bool = False
    log_format: str = "text"
    max_batch_items: int = 100
    max_answer_bytes: int = 16 * 1024 * 1024
    long_poll_max_wait: float | None = None
    offer_1_1: bool = False
    allowed_origins: Sequence[str] = ()
    allowed_hosts: Sequence[str] | None = None

    def replace(self, **overrides: Any) -> ServeSettings:
        """These settings with ``overrides``; ``TypeError`` naming an unknown one."""
        unknown = sorted(overrides.keys() - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"serve() got an unexpected keyword argument {unknown[0]!r}")
        return dataclasses.replace(self, **overrides) if overrides else self

    def service_settings(self, store: str, public_url: str | None) -> ServiceSettings:
        """The settings of the service served, on ``store`` at ``public_url``."""
        return ServiceSettings(
            store=store, bus=self.bus, public_url=public_url, rpc_path=self.rpc_path,
            engine_config=_engine_config(self.lease_timeout, self.submit_grace,
                                         self.message_ids),
            auth=self.auth, limits=self.limits, card_signing=self.card_signing,
            push=self.push, metrics=self.metrics, max_batch_items=self.max_batch_items,
            max_answer_bytes=self.max_answer_bytes, long_poll_max_wait=self.long_poll_max_wait,
            offer_1_1=self.offer_1_1, allowed_origins=self.allowed_origins,
            allowed_hosts=self.allowed_hosts)


def serve(spec: str | Agent | Sequence[str | Agent], settings: ServeSettings | None = None,
          **options: Any) -> None:
    """Serve an agent with uvicorn, as ``settings`` (``ServeSettings``) with
    ``options`` (its fields as keywords: ``port``, ``store``, ``auth`` ...) say.

    Several agents (a list) are served together, each at ``/agents/{name}/`` with its
    own card, store (``default_store_for`` each, or derived from ``store``:
    ``host/agents.py``) and, with gRPC, the one gRPC port by its tenant; a listing at
    ``/`` and ``/agents``. ``ValueError`` for two with one name, or with the mesh.

    The socket is bound first: ``OSError`` when it cannot be (nothing else has
    happened then)."""
    from ..server.auth.tls import uvicorn_tls_options

    s = (settings or ServeSettings()).replace(**options)
    if s.log_format == "json":
        from ..observability import logs

        logs.configure("json", _PY_LEVELS.get(s.log_level, s.log_level.upper()))
    agents = [spec] if isinstance(spec, (str, Agent)) else list(spec)
    loaded = [a if isinstance(a, Agent) else load_agent(a) for a in agents]
    if not loaded:
        raise ValueError("no agent to serve")
    if len(loaded) > 1 and (s.mesh is not None or s.no_http):
        raise ValueError("several agents on one server are served over HTTP and gRPC; on a "
                         "mesh, not yet: serve each in a process of its own")
    agent = loaded[0]
    store = s.store or default_store_for(agent)
    if s.no_http:
        if s.mesh is None:
            raise ValueError("serving without HTTP needs a mesh to serve on")
        _serve_mesh_only(agent, store, s)
        return
    tls = uvicorn_tls_options(s.certfile, s.keyfile, s.client_ca)
    guard = uvicorn_connection_options(
        s.connections or ConnectionLimits(max_head_bytes=s.max_incomplete_event_bytes),
        base=tls.pop("http", None), http=s.http)
    with_rest, with_grpc = _wanted(s.bindings, s.grpc_port)
    why = s.auth.grpc_refusal() if with_grpc and s.auth is not None else None
    if why is not None:  # refused before a port is opened, not a port refusing every call
        raise ValueError(why)
    sock = _listen(bind, s.host, s.port, "http")
    held: list[socket.socket] = [sock]
    try:
        grpc: GrpcServer | None = None
        if with_grpc:
            assert s.grpc_port is not None
            grpc_sock = _listen(reserve, s.host, s.grpc_port, "grpc")
            held.append(grpc_sock)


            reserved = grpc_sock.getsockname()[1]
            from ..bindings.grpc.serving import GrpcServer

            kind = GrpcServer
            if len(loaded) > 1:  # all on the one port, each by its tenant
                from ..bindings.grpc.tenants import GrpcTenants as kind  # type: ignore[assignment]
            grpc = kind(grpc_address(s.host, reserved),
                        credentials=_grpc_credentials(s.certfile, s.keyfile, s.client_ca),
                        grace=GRPC_GRACE_S, before_binding=grpc_sock.close)
            if s.on_grpc_listening is not None:
                s.on_grpc_listening(reserved)
        if len(loaded) > 1:
            _serve_several(sock, loaded, s, tls, grpc, with_rest, guard)
        else:
            _serve_on(sock, agent, store, s, tls, grpc, with_rest, guard)
    finally:
        for held_sock in held:
            held_sock.close()


def _wanted(bindings: Sequence[str] | None, grpc_port: int | None) -> tuple[bool, bool]:
    """(serve HTTP+JSON, serve gRPC) for ``bindings``; ``ValueError`` when impossible.
    gRPC is served only when asked for, with a port of its own: a default port
    beside the HTTP one would take a port nobody chose."""
    from ..bindings.grpc import INSTALL, available

    if bindings is None:
        return True, False
    unknown = [b for b in bindings if b not in BINDINGS]
    if unknown:
        raise ValueError(f"unknown binding {unknown[0]!r}; known: {', '.join(BINDINGS)}")
    if "jsonrpc" not in bindings:
        raise ValueError("JSON-RPC is always served (the card names it): list jsonrpc too")
    if "grpc" in bindings and not available():
        raise ValueError(f"the gRPC binding needs the grpc extra: {INSTALL}")
    if "grpc" in bindings and grpc_port is None:
        raise ValueError("serving gRPC needs a port of its own: grpc_port (0: any free port)")
    return "rest" in bindings, "grpc" in bindings


class ListenError(OSError):
    """A binding's port cannot be listened on; ``binding`` says which (``http``,
    ``grpc``), so that the message can name the option that chose the port."""

    def __init__(self, binding: str, host: str, port: int, cause: OSError) -> None:
        reason = cause.strerror or str(cause)
        super().__init__(f"cannot listen on {host or '0.0.0.0'}:{port}: {reason}")
        self.binding, self.host, self.port, self.reason = binding, host, port, reason
        #: what the socket said (``cli.errors.cannot_listen`` reads which option is at fault)
        self.cause = cause


def _listen(how: Callable[[str, int], socket.socket], host: str, port: int,
            binding: str) -> socket.socket:
    try:
        return how(host, port)
    except OSError as exc:
        raise ListenError(binding, host, port, exc) from None


def _grpc_credentials(certfile: str | None, keyfile: str | None,
                      client_ca: str | None) -> Any:
    """TLS for gRPC from the HTTPS files (None: plain text). Client certificates
    are asked for but not required, as over HTTPS."""
    if not certfile:
        return None
    import grpc

    cert = Path(certfile).read_bytes()
    key = Path(keyfile).read_bytes() if keyfile else cert
    roots = Path(client_ca).read_bytes() if client_ca else None
    return grpc.ssl_server_credentials([(key, cert)], root_certificates=roots,
                                       require_client_auth=False)


def _serve_on(sock: socket.socket, agent: Agent, store: str, s: ServeSettings,
              tls: dict[str, Any], grpc: GrpcServer | None, rest: bool,
              uvicorn_options: dict[str, Any]) -> None:
    import uvicorn

    from ..host.app import host_app

    port = sock.getsockname()[1]
    check_services(store, s.bus, s.auth, s.mesh,
                   default_of=agent.name if s.store is None else None)
    service = Service(agent, s.service_settings(
        store, s.public_url or public_url_for(s.host, port, "https" if tls else "http")))
    app = host_app(service, rest=rest)
    if grpc is not None:
        service.add_binding(grpc)
    if s.mesh is not None:
        attach(app, s.mesh, name=s.mesh_agent_name or mesh_name(agent.name))
    if s.log_format == "json":  # uvicorn's own logging set-up would replace the JSON handler
        uvicorn_options["log_config"] = None
    config = uvicorn.Config(app, host=s.host, port=port, log_level=s.log_level,
                            access_log=False, timeout_graceful_shutdown=5,
                            timeout_keep_alive=s.timeout_keep_alive,
                            limit_concurrency=s.limit_concurrency,
                            **uvicorn_options, **tls)
    if s.on_listening is not None:
        s.on_listening(store, port)
    _make_server(config, service.engine, s.drain_seconds).run(sockets=[sock])


def _serve_several(sock: socket.socket, agents: Sequence[Agent], s: ServeSettings,
                   tls: dict[str, Any], grpc: Any, rest: bool,
                   uvicorn_options: dict[str, Any]) -> None:
    """``agents`` together (``host/agents.py``), on ``sock`` and, with ``grpc`` (a
    ``GrpcTenants``), its one port."""
    import uvicorn

    from ..host.agents import host_agents, path_name, services_for, store_url_for
    from ..host.app import host_app

    port = sock.getsockname()[1]
    public = s.public_url or public_url_for(s.host, port, "https" if tls else "http")
    stores = [store_url_for(s.store, path_name(a.name)) if s.store else default_store_for(a)
              for a in agents]
    services = services_for(agents, s.service_settings(s.store or "memory://", public),
                            stores=stores)
    for store, agent in zip(stores, agents, strict=True):
        check_services(store, s.bus, s.auth, None,
                       default_of=agent.name if s.store is None else None)
    app = host_agents(services, host_app, rest=rest)
    if grpc is not None:
        for name, service in app.state.services.items():
            service.add_binding(grpc.member(name))
    if s.log_format == "json":
        uvicorn_options["log_config"] = None
    config = uvicorn.Config(app, host=s.host, port=port, log_level=s.log_level,
                            access_log=False, timeout_graceful_shutdown=5,
                            timeout_keep_alive=s.timeout_keep_alive,
                            limit_concurrency=s.limit_concurrency,
                            **uvicorn_options, **tls)
    if s.on_listening is not None:
        s.on_listening(", ".join(stores), port)
    engines = _Engines([service.engine for service in services])
    _make_server(config, engines, s.drain_seconds).run(sockets=[sock])


class _Engines:
    """Several engines as the server's drain and shutdown see one."""

    def __init__(self, engines: Sequence[Engine]) -> None:
        self.engines = engines

    @property
    def closing(self) -> bool:
        return all(e.closing for e in self.engines)

    @property
    def running_turns(self) -> int:
        return sum(e.running_turns for e in self.engines)

    async def begin_shutdown(self) -> None:
        await asyncio.gather(*(e.begin_shutdown() for e in self.engines))

    async def drain(self, seconds: float) -> int:
        return sum(await asyncio.gather(*(e.drain(seconds) for e in self.engines)))

    def cut_drain(self) -> None:
        for e in self.engines:
            e.cut_drain()


def _engine_config(lease_timeout: float | None, submit_grace: float | None,
                   message_ids: str | None = None) -> EngineConfig | None:
    if lease_timeout is None and submit_grace is None and message_ids is None:
        return None
    config = EngineConfig()
    if message_ids is not None:
        config.message_ids = message_id_mode(message_ids)
    if lease_timeout is not None:
        config.lease_timeout = lease_timeout
        config.lease_interval = min(2.0, lease_timeout / 4)
    if submit_grace is not None:
        config.submit_grace = submit_grace
    return config


def _serve_mesh_only(agent: Agent, store: str, s: ServeSettings) -> None:
    """The agent on the mesh alone, until SIGINT or SIGTERM (then its running turns
    get ``drain_seconds`` to finish)."""
    import signal

    from ..mesh.binding import MeshBinding

    mesh = s.mesh
    assert mesh is not None
    check_services(store, s.bus, s.auth, mesh,
                   default_of=agent.name if s.store is None else None)
    # no HTTP app: the service and its one binding, the mesh
    service = Service(agent, s.service_settings(store, s.public_url))
    on_mesh = service.add_binding(MeshBinding(service, mesh, name=s.mesh_agent_name))
    on_listening, drain_seconds = s.on_listening, s.drain_seconds
    engine = service.engine

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with service:
            if on_listening is not None:
                on_listening(store, 0)
            await stop.wait()
            # no new requests while the turns finish, and the answers of those running
            # relayed as they end, for as long as the drain lets them (they were cut
            # after 5 s, the broker closed under them: a gateway's task waited for ever)
            await on_mesh.agent.stop(grace=drain_seconds if drain_seconds > 0 else 5.0)
            if drain_seconds > 0 and engine.running_turns:
                await engine.drain(drain_seconds)

    asyncio.run(run())


def _server_class() -> type:
    import uvicorn

    from .prompt_server import PromptServer

    class Server(PromptServer):
        """uvicorn, plus: a drain before it stops (new sends refused, running
        turns given ``drain_seconds`` to finish), and the turns still running
        ended before the listeners close, while their callers are there (a
        blocking caller answered with its task, a stream given its end). The
        first signal drains; a second one (or the first, without a window)
        stops at once; one more forces the exit, SIGTERM as SIGINT."""

        def __init__(self, config: uvicorn.Config, engine: Engine | _Engines,
                     drain_seconds: float = 0.0) -> None:
            super().__init__(config)
            self._engine = engine
            self._drain_seconds = drain_seconds
            self._drain: asyncio.Task[None] | None = None
            #: told to stop at once (no drain left to wait out): a signal more forces
            self._at_once = False

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            try:
                self._handle_exit(sig, frame)
            finally:
                self.wake()

        def _handle_exit(self, sig: int, frame: FrameType | None) -> None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is None:
                super().handle_exit(sig, frame)
                return
            self._captured_signals.append(sig)  # (raised again once it has stopped)
            if self._drain is None:
                self._at_once = self._drain_seconds <= 0
                self._drain = loop.create_task(self._drain_then_exit())
            elif not self._at_once:
                # the turns still running end now, as at the window's close: by
                # the listeners' shutdown instead, their callers were cut (a 500,
                # UNAVAILABLE, a stream without its end) after its 5 s
                self._at_once = True
                self._engine.cut_drain()
            else:
                # uvicorn forces on SIGINT alone; an orchestrator sends SIGTERM
                self.should_exit = self.force_exit = True

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            await self.close_connections(sockets)
            if not self.force_exit:
                await self.lifespan.shutdown()
            else:
                # A forced exit (a third signal) skips the app's shutdown in
                # uvicorn; it runs here all the same, bounded, once the turns
                # have ended (their callers answered): the store and the
                # listeners close, and nothing is left for the closing loop to
                # cancel half-way (with a traceback).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(FORCED_SHUTDOWN_S):
                        if self._drain is not None:
                            await asyncio.wait([self._drain])
                        await self.lifespan.shutdown()

        async def _drain_then_exit(self) -> None:
            seconds = self._drain_seconds
            if seconds > 0:
                log.warning("draining: new sends are refused; waiting up to %gs for %d "
                            "running turn(s)", seconds, self._engine.running_turns)
            try:
                left = await self._engine.drain(max(seconds, 0.0))
                if left:
                    log.warning("stopping at once: %d running turn(s) end now" if self._at_once
                                else "drain window over: %d turn(s) still running end now", left)
                if not self._engine.closing:
                    await self._engine.begin_shutdown()
            finally:
                self._at_once = True
                self.should_exit = True
                self.wake()

    return Server


def _make_server(config: Any, engine: Engine | _Engines, drain_seconds: float = 0.0) -> Any:
    return _server_class()(config, engine, drain_seconds)
