"""``interlingua serve``: load an agent from a file or module and serve it."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import sys
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

from ..server.agent import Agent
from ..server.auth import AuthConfig, CardSigning, Limits
from ..server.connections import ConnectionLimits, uvicorn_connection_options
from ..server.engine import Engine
from ..server.push import PushSettings

__all__ = ["DEFAULT_STORE", "load_agent", "public_url_for", "serve"]

DEFAULT_STORE = "sqlite:///.interlingua/tasks.db"


class LoadError(Exception):
    """The agent could not be found or loaded; the message says why."""


def load_agent(spec: str) -> Agent:
    """``path/to/file.py[:attr]`` or ``package.module[:attr]`` -> the Agent in it.

    Without ``:attr``: the module's ``agent`` attribute, or its only Agent.
    """
    target, _, attr = spec.partition(":")
    if target.endswith(".py") or "/" in target or Path(target).is_file():
        path = Path(target)
        if not path.is_file():
            raise LoadError(f"no such file: {target}")
        module = _load_file(path)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise LoadError(f"cannot import {target}: {exc}") from None
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
        obj = obj()
    if not isinstance(obj, Agent):
        raise LoadError(f"{spec} is a {type(obj).__name__}, not an interlingua.Agent")
    return obj


def _load_file(path: Path) -> ModuleType:
    name = "_interlingua_agent_" + path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # Let the agent file import its neighbours.
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise LoadError(f"{path} failed to load: {type(exc).__name__}: {exc}") from exc
    return module


def public_url_for(host: str, port: int, scheme: str = "http") -> str:
    """The URL to put in the card for a server bound to ``host``: never 0.0.0.0."""
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "localhost"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def serve(
    spec: str | Agent,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    store: str = DEFAULT_STORE,
    public_url: str | None = None,
    rpc_path: str = "/",
    log_level: str = "info",
    certfile: str | None = None,
    keyfile: str | None = None,
    client_ca: str | None = None,
    auth: AuthConfig | None = None,
    limits: Limits | None = None,
    card_signing: CardSigning | None = None,
    push: PushSettings | None = None,
    timeout_keep_alive: int = 5,
    max_incomplete_event_bytes: int = 64 * 1024,
    limit_concurrency: int | None = 2048,
    connections: ConnectionLimits | None = None,
    http: str = "auto",
) -> None:
    """Serve an agent with uvicorn; HTTPS with ``certfile``/``keyfile``, and client
    certificates checked against ``client_ca`` (docs/security.md). Slow or idle
    clients are bounded: idle keep-alive connections close after
    ``timeout_keep_alive`` s, ``connections`` bounds heads, read deadlines and
    connections per address (default ``ConnectionLimits(max_head_bytes=
    max_incomplete_event_bytes)``), and connections beyond ``limit_concurrency``
    are answered 503. ``http``: uvicorn's parser, ``auto``, ``httptools`` or ``h11``."""
    import uvicorn

    from ..server.app import create_app
    from ..server.auth.tls import uvicorn_tls_options

    agent = spec if isinstance(spec, Agent) else load_agent(spec)
    tls = uvicorn_tls_options(certfile, keyfile, client_ca)
    app = create_app(
        agent,
        store=store,
        public_url=public_url or public_url_for(host, port, "https" if tls else "http"),
        rpc_path=rpc_path,
        auth=auth,
        limits=limits,
        card_signing=card_signing,
        push=push,
    )
    guard = uvicorn_connection_options(
        connections or ConnectionLimits(max_head_bytes=max_incomplete_event_bytes),
        base=tls.pop("http", None), http=http)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level,
                            access_log=False, timeout_graceful_shutdown=5,
                            timeout_keep_alive=timeout_keep_alive,
                            limit_concurrency=limit_concurrency, **tls, **guard)
    _make_server(config, app.state.engine).run()


def _server_class() -> type:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn, plus: open streams are told to end as soon as shutdown begins
        (uvicorn would otherwise wait for them before running the app's shutdown)."""

        def __init__(self, config: uvicorn.Config, engine: Engine) -> None:
            super().__init__(config)
            self._engine = engine

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is not None and not self._engine.closing:
                loop.create_task(self._engine.begin_shutdown())
            super().handle_exit(sig, frame)

    return Server


def _make_server(config: Any, engine: Engine) -> Any:
    return _server_class()(config, engine)
