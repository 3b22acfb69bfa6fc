"""Servers started as real processes (CLI commands and examples), for the adapters' tests."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx

__all__ = ["ROOT", "serving", "stop"]

ROOT = Path(__file__).resolve().parents[2]


def serving(args: list[str], port: int) -> subprocess.Popen[bytes]:
    """A real process; returns once its health check answers."""
    proc = subprocess.Popen(args, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 40  # (a busy machine's process start takes seconds)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited {proc.returncode}: {proc.stdout.read()!r}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
