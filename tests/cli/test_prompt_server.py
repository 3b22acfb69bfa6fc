"""The server of ``serve``, ``listen``, ``inspect`` and ``gateway`` (PromptServer): a
signal stops it at once, not at uvicorn's next look, and a response under way is
still finished before it stops."""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import uvicorn
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from interlingua.cli.main import main
from interlingua.cli.prompt_server import PromptServer
from tests.live import bind_loopback
from tests.mesh.helpers import BROKER, need_broker


class _Slow(PromptServer):
    tick = 30.0  # a stop that waited for the next look would take this long


async def _echo_body(request: Request) -> Response:
    _called.set()
    return Response(b"got " + await request.body())


_called = threading.Event()


@contextmanager
def _serving(sock: socket.socket) -> Iterator[tuple[_Slow, threading.Thread]]:
    app = Starlette(routes=[Route("/", _echo_body, methods=["POST"])])
    server = _Slow(uvicorn.Config(app, log_level="warning", lifespan="on", log_config=None))
    # in a thread: uvicorn takes no signal handlers there, so handle_exit is called
    # here as the handler would call it
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])),
                              daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive()
            threading.Event().wait(0.005)
        yield server, thread
    finally:
        server.should_exit = server.force_exit = True
        server.wake()
        thread.join(10)


def test_a_signal_stops_the_server_at_once_and_a_response_under_way_is_finished() -> None:
    _called.clear()
    sock = bind_loopback()
    port = sock.getsockname()[1]
    with _serving(sock) as (server, thread):
        under_way = socket.create_connection(("127.0.0.1", port), timeout=10)
        under_way.sendall(b"POST / HTTP/1.1\r\nHost: x\r\ncontent-length: 9\r\n\r\nhello")
        assert _called.wait(10)  # the app reads the body
        server.handle_exit(signal.SIGTERM, None)
        # no new connections long before the next look (30 s) would have stopped it
        refused = threading.Event()
        for _ in range(1000):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                refused.set()
                break
            threading.Event().wait(0.005)
        assert refused.is_set(), "the server still takes connections"
        under_way.sendall(b" you")
        answer = b""
        while chunk := under_way.recv(4096):
            answer += chunk
        under_way.close()
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"\r\n\r\ngot hello you")
        thread.join(5)
        assert not thread.is_alive()


def _runs(monkeypatch: pytest.MonkeyPatch) -> list[PromptServer]:
    """The servers started (their run recorded, not run)."""
    started: list[PromptServer] = []

    def run(self: PromptServer, sockets: list[socket.socket] | None = None) -> None:
        started.append(self)
        for sock in sockets or []:
            sock.close()

    monkeypatch.setattr(PromptServer, "run", run)
    monkeypatch.setattr(uvicorn.Server, "run", lambda *_, **__: pytest.fail("uvicorn's server"))
    return started


@pytest.mark.parametrize("command", [["listen", "--port", "{port}"],
                                     ["inspect", "--port", "0"],
                                     ["gateway", "--mesh", BROKER, "--namespace", "prompt",
                                      "--port", "0"]], ids=["listen", "inspect", "gateway"])
def test_listen_inspect_and_the_gateway_stop_at_once_too(
        command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    if command[0] == "gateway":
        need_broker()
    free = bind_loopback()
    port = str(free.getsockname()[1])
    free.close()
    started = _runs(monkeypatch)
    result = CliRunner().invoke(main, [arg.replace("{port}", port) for arg in command])
    assert result.exit_code == 0, result.output
    assert len(started) == 1


async def test_a_cancel_that_comes_as_the_loop_is_woken_ends_it() -> None:
    """The tick's wait keeps a cancel that comes in the loop turn a wake does (Python
    3.11's wait_for returned then, and the loop went on)."""
    server = _Slow(uvicorn.Config(Starlette(), log_config=None))

    async def never_done(counter: int) -> bool:
        return False

    server.on_tick = never_done  # type: ignore[method-assign]
    loop_task = asyncio.create_task(server.main_loop())
    await asyncio.sleep(0)  # waiting for its tick (30 s) or a wake
    assert server._told is not None
    server._told.set()
    loop_task.cancel()
    done, _ = await asyncio.wait({loop_task}, timeout=5)
    assert done and loop_task.cancelled()


def test_the_stopping_signal_is_raised_again_once_not_once_per_signal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three Ctrl-Cs (drain, stop, force) are raised again after the server as one: each
    raised again went to asyncio's runner while it closed the loop, and a third, landing
    in that close, left the loop half closed with a traceback."""
    raised: list[int] = []
    monkeypatch.setattr(signal, "raise_signal", raised.append)
    before = signal.getsignal(signal.SIGINT)
    try:
        server = PromptServer(uvicorn.Config(Starlette()))
        with server.capture_signals():
            for _ in range(3):
                server.handle_exit(signal.SIGINT, None)
        assert raised == [signal.SIGINT]
        assert server.force_exit  # the third still forced the stop
        # more Ctrl-Cs while the process ends change nothing (one landing as the
        # interpreter exited printed a traceback)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signal.signal(signal.SIGINT, before)
        quiet = PromptServer(uvicorn.Config(Starlette()))
        with quiet.capture_signals():
            pass
        assert raised == [signal.SIGINT]  # nothing raised for a stop no signal asked for
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        signal.signal(signal.SIGINT, before)
