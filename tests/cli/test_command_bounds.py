"""Every HTTP server the command line starts bounds what one connection may cost, as
``serve`` does (server/connections.py): ``gateway``, ``listen``, ``inspect`` and
``mcp --http`` ran
uvicorn's own protocol, which reads a request head of any size (httptools) and waits for
a slow head without a deadline. Shown here by the head cap, over a real socket."""

from __future__ import annotations

import contextlib
import socket
import sys
import time

import httpx
import pytest

from interlingua.cli.serve import load_agent
from tests.e2e.procs import Process
from tests.live import live_agent
from tests.mesh.helpers import BROKER, namespace, need_broker

pytestmark = pytest.mark.timeout(60)

COMMANDS = {
    "listen": ["listen"],
    "gateway": ["gateway", "--mesh", BROKER, "--namespace", "bounds"],
    "inspect": ["inspect"],
    "mcp": ["mcp", "{agent}", "--http"],
}


def _ready(url: str, proc: Process) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.proc is not None and proc.proc.poll() is None, "the command exited"
        try:
            httpx.get(url, timeout=0.5)
            return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing answered at {url}")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_request_head_past_the_bound_is_431(command: str) -> None:
    if command == "gateway":
        need_broker()
    args = [a if a != "bounds" else namespace() for a in COMMANDS[command]]
    with contextlib.ExitStack() as stack:
        if command == "mcp":  # (it reads the card of the agent it bridges first)
            agent = stack.enter_context(live_agent(load_agent("examples/echo.py")))
            args = [a.format(agent=agent) for a in args]
        _head_past_the_bound(args, "/mcp" if command == "mcp" else "/")


def _head_past_the_bound(args: list[str], path: str) -> None:
    proc = Process()
    proc.launch([sys.executable, "-m", "interlingua.cli.main", *args,
                 "--port", str(proc.port)])
    try:
        _ready(proc.url + "/", proc)
        with httpx.Client(timeout=10) as http:
            # within the bound (64 KiB): answered as the command answers it
            small = http.get(proc.url + path, headers={"X-Pad": "a" * 8000})
            assert small.status_code != 431
        with socket.create_connection(("127.0.0.1", proc.port), timeout=10) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ".encode()
                      + b"a" * 70_000 + b"\r\n\r\n")
            answer = s.recv(65536)
        assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    finally:
        proc.stop()
