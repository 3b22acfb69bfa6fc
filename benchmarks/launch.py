"""Start a server under test as a real process on a loopback port, and stop it again.

Every server runs as ``taskset -c <cpu> <venv python> -m uvicorn <app> --loop uvloop
--http httptools --no-access-log --workers 1`` (taskset execs, so the process id is the
server's own). A server is ready once ``GET /healthz`` gets any HTTP answer; a 200 JSON
answer is kept, since it may describe the store.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from payloads import Dialect
from targets import ROOT, SERVERS_DIR, Target

HOST = "127.0.0.1"
STARTUP_LIMIT_S = 60.0


class LaunchError(Exception):
    """A server did not start, died, or answered wrongly; carries its log tail."""


@dataclass(slots=True)
class Running:
    target: Target
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path
    store_url: str | None
    health: dict[str, Any] | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def uvicorn_command(target: Target, port: int) -> list[str]:
    cmd = [
        str(target.python),
        "-m",
        "uvicorn",
        target.app_ref,
        "--app-dir",
        str(SERVERS_DIR),
        "--host",
        HOST,
        "--port",
        str(port),
        "--loop",
        "uvloop",
        "--http",
        "httptools",
        "--no-access-log",
        "--workers",
        "1",
        "--log-level",
        "warning",
        "--timeout-graceful-shutdown",
        "2",
    ]
    if target.factory:
        cmd.append("--factory")
    return cmd


def start(target: Target, cpu: int | None, workdir: Path) -> Running:
    """Start ``target`` and wait until it answers HTTP; ``workdir`` holds its log and data."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    store_url = target.store_url.format(workdir=workdir) if target.store_url else None
    env = dict(os.environ)
    env.update(target.env)
    env.update(
        PYTHONUNBUFFERED="1",
        BENCH_PUBLIC_URL=f"http://{HOST}:{port}/",
    )
    if store_url is not None:
        env["BENCH_STORE_URL"] = store_url
    cmd = uvicorn_command(target, port)
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu), *cmd]
    log_path = workdir / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )
    running = Running(target=target, proc=proc, port=port, log_path=log_path, store_url=store_url)
    try:
        running.health = _wait_ready(running)
    except BaseException:
        stop(running)
        raise
    return running


def _wait_ready(running: Running) -> dict[str, Any] | None:
    limit = time.monotonic() + STARTUP_LIMIT_S
    while True:
        if running.proc.poll() is not None:
            raise LaunchError(
                f"{running.target.name} exited with {running.proc.returncode} while starting:\n"
                f"{running.log_tail()}"
            )
        try:
            status, body = get(running, "/healthz")
        except OSError:
            if time.monotonic() > limit:
                raise LaunchError(
                    f"{running.target.name} did not answer within {STARTUP_LIMIT_S:.0f} s:\n"
                    f"{running.log_tail()}"
                ) from None
            time.sleep(0.1)
            continue
        if status == 200:
            try:
                health = json.loads(body)
            except ValueError:
                return None
            return health if isinstance(health, dict) else None
        return None


def stop(running: Running) -> None:
    """SIGTERM the server's process group, then SIGKILL it if it lingers."""
    if running.proc.poll() is None:
        _signal_group(running.proc.pid, signal.SIGTERM)
        try:
            running.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _signal_group(running.proc.pid, signal.SIGKILL)
            running.proc.wait(timeout=10)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    # The server was started in its own session, so its group id is its pid.
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def _connection(running: Running) -> http.client.HTTPConnection:
    return http.client.HTTPConnection(HOST, running.port, timeout=10)


def get(running: Running, path: str) -> tuple[int, bytes]:
    conn = _connection(running)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def post(running: Running, path: str, body: bytes, dialect: Dialect) -> tuple[int, bytes]:
    conn = _connection(running)
    try:
        conn.request("POST", path, body=body, headers=dialect.headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()
