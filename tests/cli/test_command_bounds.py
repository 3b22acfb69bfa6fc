"""Every HTTP server the command line starts bounds what one connection may cost, as
``serve`` does (server/connections.py): ``gateway``, ``listen`` and ``inspect`` ran
uvicorn's own protocol, which reads a request head of any size (httptools) and waits for
a slow head without a deadline. Shown here by the head cap, over a real socket."""

from __future__ import annotations

import socket
import sys
import time

import httpx
import pytest

from tests.e2e.procs import Process
from tests.mesh.helpers import BROKER, namespace, need_broker

pytestmark = pytest.mark.timeout(60)

COMMANDS = {
    "listen": ["listen"],
    "gateway": ["gateway", "--mesh", BROKER, "--namespace", "bounds"],
    "inspect": ["inspect"],
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
    proc = Process()
    proc.launch([sys.executable, "-m", "interlingua.cli.main", *args,
                 "--port", str(proc.port)])
    try:
        _ready(proc.url + "/", proc)
        with httpx.Client(timeout=10) as http:
            # within the bound (64 KiB): answered as the command answers it
            small = http.get(proc.url + "/", headers={"X-Pad": "a" * 8000})
            assert small.status_code != 431
        with socket.create_connection(("127.0.0.1", proc.port), timeout=10) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 70_000
                      + b"\r\n\r\n")
            answer = s.recv(65536)
        assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    finally:
        proc.stop()
