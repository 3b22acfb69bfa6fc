"""Servers on loopback ports, in this process, for end-to-end tests over real HTTP.

    with live_server(app) as base_url:        # any ASGI app
        ...
    with live_agent(agent) as base_url:       # an Agent; its card names base_url
        ...

uvicorn runs in a background thread with its own event loop, serving a socket
bound before it starts (no port race). On exit the server shuts down cleanly:
open streams are told to end, the app's lifespan shutdown runs, and the thread
is joined. Tests may be sync or async: the server's loop is not theirs.

A server is not trusted to have worked because its answers looked right: an
exception it raised or logged (uvicorn logs the app's, asyncio a task's lost
one) after it started fails the test when it stops, as does a server thread
that is still running after the shutdown timeout.

A card names the URL its server was built with (``public_url``), so an app
whose card must be right is built for a bound socket: ``live_agent`` does that,
or ``bind_loopback()`` + ``create_app(..., public_url=url_of(sock))`` +
``live_server(app, sock=sock)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import uvicorn

from interlingua.cli.prompt_server import PromptServer

__all__ = ["asgi_body", "bind_loopback", "grpc_address_of", "live_agent", "live_grpc_agent",
           "live_server", "raw_server", "url_of"]


async def asgi_body(receive: Any) -> bytes:
    """The whole body of an ASGI request, for a test's own peer app."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


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


class _Failures(logging.Handler):
    """Errors the server's thread logs while it serves (uvicorn logs an exception
    raised by the app instead of raising it; asyncio logs a task's lost one)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.thread: int | None = None
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread and not _another_loops_grpc_call(record):
            self.records.append(self.format(record))


def _another_loops_grpc_call(record: logging.LogRecord) -> bool:
    """grpc's one completion queue of a process hands each call's last events to the
    call's loop from whichever loop polls it: a test's client, run in an event loop of its
    own (the CLI's ``asyncio.run``) and closed as a call it cut still finished, has them
    handed on from the server's loop, which logs that the client's loop is closed. Not
    the server's error; a process with one loop (a real command) never sees it."""
    exc = record.exc_info[1] if record.exc_info else None
    return (isinstance(exc, RuntimeError) and str(exc) == "Event loop is closed"
            and "PollerCompletionQueue._handle_events" in record.getMessage())


_WATCHED_LOGGERS = ("uvicorn.error", "asyncio")


class _Server(PromptServer):
    """uvicorn's server, stopped as soon as it is told to (``stop()``, from any thread)
    rather than at its next look, as ``interlingua serve`` stops on a signal: the suite
    starts hundreds of servers, and uvicorn's 0.1 s looks were most of each one's stop."""

    def stop(self) -> None:
        self.should_exit = True
        self.wake()


@contextlib.contextmanager
def live_server(
    app: Any,
    *,
    sock: socket.socket | None = None,
    startup_timeout: float = 10.0,
    shutdown_timeout: float = 10.0,
    allow_errors: bool = False,
    **uvicorn_options: Any,
) -> Iterator[str]:
    """Serve ``app`` on a loopback port; yields its base URL (no trailing slash).

    An exception the server raised or logged after it started fails the test
    when the server stops (``allow_errors=True`` for a test that provokes them),
    and so does a server thread that does not stop. ``uvicorn_options`` go to
    ``uvicorn.Config`` (TLS: the URL is then https).
    """
    sock = sock or bind_loopback()
    base_url = url_of(sock)
    if uvicorn_options.get("ssl_certfile"):
        base_url = "https" + base_url.removeprefix("http")
    uvicorn_options.setdefault("timeout_graceful_shutdown", 2)
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", access_log=False,
        # No logging config of uvicorn's own: it would replace the handlers of its
        # loggers, including the one that collects this server's errors.
        log_config=None, **uvicorn_options,
    )
    server = _Server(config)
    loops: list[asyncio.AbstractEventLoop] = []
    failures: list[BaseException] = []
    logged = _Failures()

    async def main() -> None:
        loops.append(asyncio.get_running_loop())
        await server.serve(sockets=[sock])

    def run() -> None:
        logged.thread = threading.get_ident()
        try:
            asyncio.run(main())
        except BaseException as exc:  # reported to the test thread below
            failures.append(exc)

    for name in _WATCHED_LOGGERS:
        logging.getLogger(name).addHandler(logged)
    thread = threading.Thread(target=run, name=f"live-server {base_url}", daemon=True)
    try:
        thread.start()
        deadline = time.monotonic() + startup_timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.stop()
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
            server.stop()
            thread.join(shutdown_timeout)
            sock.close()
        if thread.is_alive():
            raise RuntimeError(f"server at {base_url} did not stop in {shutdown_timeout} s")
        if failures:
            raise RuntimeError(f"server at {base_url} failed") from failures[0]
        if logged.records and not allow_errors:
            raise RuntimeError(
                f"server at {base_url} logged {len(logged.records)} error(s):\n"
                + "\n".join(logged.records)
            )
    finally:
        for name in _WATCHED_LOGGERS:
            logging.getLogger(name).removeHandler(logged)


@contextlib.contextmanager
def live_agent(agent: Any, **create_app_kwargs: Any) -> Iterator[str]:
    """Serve ``agent`` (default: memory store) on a loopback port whose URL its card names."""
    from interlingua.host import create_app

    sock = bind_loopback()
    base_url = url_of(sock)
    create_app_kwargs.setdefault("store", "memory://")
    app = create_app(agent, public_url=base_url, **create_app_kwargs)
    with live_server(app, sock=sock) as url:
        yield url


@contextlib.contextmanager
def live_grpc_agent(agent: Any, **create_app_kwargs: Any) -> Iterator[tuple[str, str]]:
    """As ``live_agent``, with the gRPC binding too: yields (base URL, gRPC ``host:port``),
    and the card names both."""
    from interlingua.bindings.grpc import add_grpc
    from interlingua.host import create_app

    sock = bind_loopback()
    base_url = url_of(sock)
    create_app_kwargs.setdefault("store", "memory://")
    app = create_app(agent, public_url=base_url, **create_app_kwargs)
    server = add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url:
        assert server.port
        yield url, f"127.0.0.1:{server.port}"


def grpc_address_of(base_url: str) -> str:
    """The gRPC address (``grpc://host:port``) the card at ``base_url`` names (as
    ``dns:///host:port``)."""
    import httpx

    from interlingua.grpc_wire.address import dns_target

    card = httpx.get(base_url + "/.well-known/agent-card.json", timeout=10).json()
    (target,) = {i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"}
    return "grpc://" + dns_target(target)


def draining(healthz: str, timeout: float = 10) -> Any:
    """The answer of ``healthz`` (a server's /healthz URL) once it no longer says 200:
    the server's drain has begun (it answers while it drains); or the last answer when
    ``timeout`` seconds have passed."""
    import httpx

    deadline = time.monotonic() + timeout
    while True:
        health = httpx.get(healthz, timeout=5)
        if health.status_code != 200 or time.monotonic() > deadline:
            return health
        time.sleep(0.01)


@contextlib.asynccontextmanager
async def raw_server(
        handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
) -> AsyncIterator[str]:
    """A TCP server on a loopback port of this event loop, each connection given to
    ``handle`` (a peer that misbehaves as no HTTP server lets one: an answer dripped, a
    stream in CR line ends); yields ``http://127.0.0.1:PORT``. On the way out, the
    handlers still running are cancelled and the connections closed."""
    handlers: set[asyncio.Task[Any]] = set()

    async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            handlers.add(task)
        try:
            await handle(reader, writer)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(tracked, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)


async def working(client: Any, text: str) -> Any:
    """A task begun with a non-blocking send of ``text`` (``client``: an
    ``interlingua.Client``), once its executor has made it working (3 s at most)."""
    from interlingua import Task, TaskState

    task = await client.send(text, blocking=False)
    assert isinstance(task, Task)
    for _ in range(300):
        got = await client.get_task(task.id)
        if got.status.state is TaskState.WORKING:
            return got
        await asyncio.sleep(0.01)
    raise AssertionError("the task never worked")
