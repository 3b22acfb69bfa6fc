"""Peers as processes: their environments, the client drivers and the SDK agents.

``ensure_env(name)`` makes sure ``.interop/<name>`` exists (running
``scripts/interop-setup``), or skips the test with the reason, a package
registry that cannot be reached named (under CI: fails it instead);
``prepare_envs`` sets them up ahead of the tests (``tests/conftest.py``).

``Driver`` runs an official client in its own process and sends it one
command at a time (the protocol is in ``peers/pydriver.py``); ``PeerClient`` runs
another framework's client script (``peers/*_client.py``) the same way, one run per
command; ``AgentProcess`` runs an official agent on a loopback port until stopped;
``InterlinguaProcess`` serves an agent of ``agent.py``; ``running`` holds either
from ready to stopped; ``Receiver`` is the webhook push configs point at.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol, TypeVar

import httpx
import pytest

from tests.ci import unavailable

ROOT = Path(__file__).resolve().parents[2]
INTEROP_DIR = ROOT / ".interop"
PEERS_DIR = Path(__file__).resolve().parent / "peers"
SETUP = ROOT / "scripts" / "interop-setup"
LOGS = INTEROP_DIR / "logs"
PREFIX = "@@interop "

@dataclass(frozen=True)
class _EnvStatus:
    #: why the environment cannot be had (None: it is ready)
    reason: str | None = None
    #: the setup failed for another reason than an unreachable registry or a missing tool
    broken: bool = False


_env_status: dict[str, _EnvStatus] = {}
_env_lock = threading.Lock()


def prepare_envs(names: Iterable[str]) -> None:
    """Set up the environments ``names`` now (before the tests that use them,
    so their time limits do not have to cover an install)."""
    for name in names:
        with _env_lock:
            if name not in _env_status:
                _env_status[name] = _setup(name)


def ensure_env(name: str) -> Path:
    """The peer environment ``.interop/<name>``, created when missing.

    When it cannot be made the test is skipped, or failed under CI (a broken
    setup always fails).
    """
    prepare_envs([name])
    status = _env_status[name]
    if status.broken:
        pytest.fail(status.reason or name, pytrace=False)
    if status.reason is not None:
        unavailable(status.reason)
    return INTEROP_DIR / name


def _setup(name: str) -> _EnvStatus:
    if name.startswith("js-") and shutil.which("node") is None:
        return _EnvStatus(f"{name}: node is not installed (apt-get install nodejs npm; "
                          "scripts/test does)")
    INTEROP_DIR.mkdir(exist_ok=True)
    try:
        # one install at a time across test processes (xdist workers) and anyone else:
        # the script takes its own lock, and is idempotent, so the ones that waited
        # find the work done
        proc = subprocess.run(["bash", str(SETUP), name], cwd=ROOT, capture_output=True,
                              text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return _EnvStatus(f"{name}: scripts/interop-setup took longer than 15 minutes")
    if proc.returncode == 0:
        return _EnvStatus()
    last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
    if proc.returncode == 2:
        # e.g. "interop-setup: js-1.3.0: the npm registry could not be reached"
        return _EnvStatus(last)
    return _EnvStatus(f"scripts/interop-setup {name} failed:\n{proc.stderr[-3000:]}",
                      broken=True)


def peer_env(**extra: str) -> dict[str, str]:
    """The environment of another framework's process: this one's, without the bytecode
    folder that scripts/test gives our own processes (``PYTHONPYCACHEPREFIX``). Under it
    a peer would not see the bytecode its environment's install wrote beside each module,
    and would compile every module it imports again at each start (crewai's imports:
    6.4 s instead of 4.1 s); it writes none (the environments are shared)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    env.update(PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def _log_file(name: str) -> Path:
    LOGS.mkdir(parents=True, exist_ok=True)
    return LOGS / f"{name}.log"


def _tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def _stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@dataclass
class Reply:
    ok: bool
    result: Any = None
    error: dict[str, Any] | None = None

    def value(self) -> Any:
        """The result; a refusal fails the test with the peer's error."""
        if not self.ok:
            raise AssertionError(f"the peer's call failed: {self.error}")
        return self.result


class PeerError(AssertionError):
    """The peer process died or did not answer."""


class Driver:
    """An official client in its own process, answering one command at a time."""

    def __init__(self, name: str, argv: list[str]) -> None:
        self.name = name
        self.log = _log_file(f"client-{name}")
        self._ids = 0
        self._answers: queue.Queue[dict[str, Any] | None] = queue.Queue()
        with self.log.open("w") as err:
            self.proc = subprocess.Popen(
                argv, cwd=PEERS_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                text=True, encoding="utf-8", bufsize=1,
                env=peer_env(),
            )
        self._reader = threading.Thread(target=self._read, name=f"driver {name}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(PREFIX):
                self._answers.put(json.loads(line[len(PREFIX):]))
        self._answers.put(None)

    def _next(self, timeout: float) -> dict[str, Any]:
        try:
            answer = self._answers.get(timeout=timeout)
        except queue.Empty:
            raise PeerError(f"{self.name}: no answer in {timeout} s\n{_tail(self.log)}") from None
        if answer is None:
            raise PeerError(f"{self.name}: the driver exited ({self.proc.poll()})\n"
                            f"{_tail(self.log)}")
        return answer

    def wait_ready(self, timeout: float = 60) -> None:
        answer = self._next(timeout)
        if not answer.get("ready"):
            raise PeerError(f"{self.name}: unexpected first line {answer}")

    def call(self, op: str, timeout: float = 60, **args: Any) -> Reply:
        self._ids += 1
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps({"id": self._ids, "op": op, "args": args}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise PeerError(f"{self.name}: the driver is gone\n{_tail(self.log)}") from None
        deadline = time.monotonic() + timeout
        while True:
            answer = self._next(max(0.1, deadline - time.monotonic()))
            # A late answer to a command that timed out earlier is dropped.
            if answer.get("id") == self._ids:
                return Reply(bool(answer["ok"]), answer.get("result"), answer.get("error"))

    def close(self) -> None:
        # Closing stdin is the driver's cue to exit.
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            _stop(self.proc)
        self._reader.join(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class PeerClient:
    """A peer's client script serving many runs in one process (its ``--serve``,
    ``pydriver.script``), so its imports are paid once, not once a run.

    ``run(*argv)`` is one run as by hand (``script argv...``): the JSON lines it gave.
    The process starts at once (its imports overlap the other setup) and starts anew
    when it died or left a run unanswered, so no run waits behind another's leftovers.
    """

    def __init__(self, name: str, argv: list[str], ready_timeout: float = 120) -> None:
        self.name = name
        self._argv = [*argv, "--serve"]
        self._ready_timeout = ready_timeout
        self._driver: Driver | None = Driver(name, self._argv)
        self._ready = False

    def call(self, *argv: str, timeout: float = 60) -> Reply:
        """One run: its reply, ``{"lines": [...]}`` or the error it ended with."""
        if self._driver is None or self._driver.proc.poll() is not None:
            self.close()
            self._driver, self._ready = Driver(self.name, self._argv), False
        try:
            if not self._ready:
                self._driver.wait_ready(self._ready_timeout)
                self._ready = True
            return self._driver.call("run", timeout=timeout, argv=list(argv))
        except PeerError:
            self.close()
            raise

    def run(self, *argv: str, timeout: float = 60) -> list[Any]:
        """One run that must succeed: the lines it gave."""
        lines: list[Any] = self.call(*argv, timeout=timeout).value()["lines"]
        return lines

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None


class AgentProcess:
    """An official agent on ``127.0.0.1:port``; its card answers once it is up.
    ``grpc_port``: where it also serves gRPC, when it does."""

    def __init__(self, name: str, argv: list[str], port: int,
                 grpc_port: int | None = None) -> None:
        self.name = name
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.grpc_port = grpc_port
        self.log = _log_file(f"agent-{name}")
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                argv, cwd=PEERS_DIR, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT,
                env=peer_env(),
            )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PeerError(f"{self.name}: the agent exited ({self.proc.returncode})\n"
                                f"{_tail(self.log)}")
            try:
                r = httpx.get(self.url + "/.well-known/agent-card.json", timeout=1)
                if r.status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise PeerError(f"{self.name}: the agent did not start in {timeout} s\n"
                        f"{_tail(self.log)}")

    def stop(self) -> None:
        _stop(self.proc)


def state_name(state: str | None) -> str:
    """A task state as any SDK names it -> the v0.3 spelling ("TASK_STATE_INPUT_REQUIRED",
    "input-required", "input_required" -> "input-required")."""
    s = (state or "").lower()
    s = s.removeprefix("task_state_")
    return s.replace("_", "-")


class InterlinguaProcess:
    """An agent of ``agent.py`` served by ``serve_agent.py`` in its own process."""

    def __init__(self, spec: str, port: int, extra: Sequence[str] = ()) -> None:
        self.spec = spec
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = _log_file("interlingua-" + spec.rsplit(":", 1)[-1] + "".join(extra))
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("serve_agent.py")), spec,
                 "--port", str(port), *extra],
                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PeerError(f"{self.spec}: the server exited ({self.proc.returncode})\n"
                                f"{_tail(self.log)}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise PeerError(f"{self.spec}: the server did not start\n{_tail(self.log)}")

    def stop(self) -> None:
        _stop(self.proc)


class _Served(Protocol):
    def wait_ready(self) -> None: ...

    def stop(self) -> None: ...


_P = TypeVar("_P", bound=_Served)


@contextmanager
def running(proc: _P) -> Iterator[_P]:
    """``proc`` once it answers, stopped when the block ends, however it ends (one
    that never came up is stopped too)."""
    try:
        proc.wait_ready()
        yield proc
    finally:
        proc.stop()


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """A webhook on loopback that answers 204 and keeps what it was sent."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        self._cond = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver._cond:
                    receiver.deliveries.append(Delivery(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    receiver._cond.notify_all()
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="webhook receiver")
        self._thread.start()

    def wait_for(self, predicate: Any, timeout: float = 10) -> list[Delivery]:
        """The deliveries so far, once one of them satisfies ``predicate`` (or the timeout)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not any(predicate(d) for d in self.deliveries):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return list(self.deliveries)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
