"""Servers on loopback ports, in this process, for end-to-end tests over real HTTP.

    with live_server(app) as base_url:        # any ASGI app
        ...
    with live_agent(agent) as base_url:       # an Agent; its card names base_url
        ...

uvicorn runs in a background thread with its own event loop, serving a socket
bound before it starts (no port race). On exit the server shuts down cleanly:
open streams are told to end, the app's lifespan shutdown runs, and the thread
is joined. Tests may be sync or async: the server's loop is not theirs.

A card names the URL its server was built with (``public_url``), so an app
whose card must be right is built for a bound socket: ``live_agent`` does that,
or ``bind_loopback()`` + ``create_app(..., public_url=url_of(sock))`` +
``live_server(app, sock=sock)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

__all__ = ["bind_loopback", "live_agent", "live_server", "url_of"]


def bind_loopback(host: str = "127.0.0.1") -> socket.socket:
    """A TCP socket bound to a free port on the loopback interface."""
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so,
    # and without it every keep-alive request waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{host}:{port}"


@contextlib.contextmanager
def live_server(
    app: Any,
    *,
    sock: socket.socket | None = None,
    startup_timeout: float = 10.0,
    shutdown_timeout: float = 10.0,
    **options: Any,
) -> Iterator[str]:
    """Serve ``app`` on a loopback port; yields its base URL (no trailing slash).
    ``options``: more ``uvicorn.Config`` arguments."""
    sock = sock or bind_loopback()
    base_url = url_of(sock)
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", access_log=False, timeout_graceful_shutdown=2,
        **options,
    )
    server = uvicorn.Server(config)
    loops: list[asyncio.AbstractEventLoop] = []
    failures: list[BaseException] = []

    async def main() -> None:
        loops.append(asyncio.get_running_loop())
        await server.serve(sockets=[sock])

    def run() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # reported to the test thread below
            failures.append(exc)

    thread = threading.Thread(target=run, name=f"live-server {base_url}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(shutdown_timeout)
            sock.close()
            if failures:
                raise RuntimeError(f"server at {base_url} failed to start") from failures[0]
            raise RuntimeError(f"server at {base_url} did not start in {startup_timeout} s")
        time.sleep(0.005)
    try:
        yield base_url
    finally:
        engine = getattr(getattr(app, "state", None), "engine", None)
        begin = getattr(engine, "begin_shutdown", None)
        if begin is not None and loops and thread.is_alive():
            # Streams end now, instead of holding uvicorn's graceful shutdown open.
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(begin(), loops[0]).result(shutdown_timeout)
        server.should_exit = True
        thread.join(shutdown_timeout)
        sock.close()
        if thread.is_alive():
            raise RuntimeError(f"server at {base_url} did not stop in {shutdown_timeout} s")
        if failures:
            raise RuntimeError(f"server at {base_url} failed") from failures[0]


@contextlib.contextmanager
def live_agent(agent: Any, **create_app_kwargs: Any) -> Iterator[str]:
    """Serve ``agent`` (default: memory store) on a loopback port whose URL its card names."""
    from interlingua.server import create_app

    sock = bind_loopback()
    base_url = url_of(sock)
    create_app_kwargs.setdefault("store", "memory://")
    app = create_app(agent, public_url=base_url, **create_app_kwargs)
    with live_server(app, sock=sock) as url:
        yield url
