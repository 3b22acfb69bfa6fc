"""Agent servers as real processes on loopback ports (for kill -9 and restarts)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]




class Process:
    """A server in a child process on a port of its own, ready once ``/healthz``
    answers 200; ``kill`` is a crash, ``stop`` a SIGTERM with ``grace`` seconds."""

    grace = 15.0
    ready_timeout = 20.0

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def launch(self, cmd: list[str], **popen: Any) -> None:
        popen.setdefault("env", {**os.environ, "PYTHONUNBUFFERED": "1"})
        self.proc = subprocess.Popen(cmd, cwd=ROOT, **popen)

    def wait_ready(self, path: str = "/healthz") -> None:
        """Until ``path`` answers 200 (several agents have no ``/healthz`` of the
        host's: their listing, ``/agents``)."""
        assert self.proc is not None
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}")
            try:
                if httpx.get(self.url + path, timeout=0.5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError("server did not start")

    def kill(self) -> None:
        """Die at once, as in a crash: no shutdown code runs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(self.grace)
            except subprocess.TimeoutExpired:
                self.kill()


class ServerProcess(Process):
    """``interlingua.cli.serve.serve(spec, ...)`` in a child process."""

    def __init__(self, spec: str, store: str, port: int | None = None,
                 **serve_options: object) -> None:
        super().__init__(port)
        self.spec = spec
        self.store = store
        # SIGTERM stops at once, as these tests expect, unless a test asks for a drain
        serve_options.setdefault("drain_seconds", 0)
        self.options = "".join(f", {k}={v!r}" for k, v in serve_options.items())

    def start(self) -> ServerProcess:
        code = (
            "from interlingua.cli.serve import serve; "
            f"serve({self.spec!r}, host='127.0.0.1', port={self.port}, "
            f"store={self.store!r}, log_level='warning'{self.options})"
        )
        self.launch([sys.executable, "-c", code])
        self.wait_ready()
        return self

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def turns_over(url: str, timeout: float = 30) -> None:
    """Until the server at ``url`` (serving ``/metrics``) runs no turn: whatever its
    turns were to write has been written, or refused."""
    deadline = time.monotonic() + timeout
    while True:
        text = httpx.get(url + "/metrics", timeout=5).text
        running = [line for line in text.splitlines()
                   if line.startswith("interlingua_turns_running ")]
        assert running, "no interlingua_turns_running in /metrics"
        if float(running[0].split()[1]) == 0:
            return
        assert time.monotonic() < deadline, "a turn still runs"
        time.sleep(0.02)
