"""Agent servers as real processes on loopback ports (for kill -9 and restarts)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """``interlingua.cli.serve.serve(spec, ...)`` in a child process."""

    def __init__(self, spec: str, store: str, port: int | None = None,
                 **serve_options: object) -> None:
        self.spec = spec
        self.store = store
        # SIGTERM stops at once, as these tests expect, unless a test asks for a drain
        serve_options.setdefault("drain_seconds", 0)
        self.options = "".join(f", {k}={v!r}" for k, v in serve_options.items())
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ServerProcess:
        code = (
            "from interlingua.cli.serve import serve; "
            f"serve({self.spec!r}, host='127.0.0.1', port={self.port}, "
            f"store={self.store!r}, log_level='warning'{self.options})"
        )
        self.proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}")
            try:
                if httpx.get(self.url + "/healthz", timeout=0.5).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("server did not start")

    def kill(self) -> None:
        """Die at once, as in a crash: no shutdown code runs."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
