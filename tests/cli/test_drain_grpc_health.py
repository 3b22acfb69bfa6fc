"""``interlingua serve --grpc-port``: from the moment SIGTERM starts the drain, gRPC
health checking says ``NOT_SERVING``, as ``/healthz`` answers 503, on the port of one
agent and on the port several agents share. The CLI runs as a subprocess; health is
asked over real gRPC on loopback with the package's own client stub."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import httpx
import msgspec
import pytest

from tests.ci import unavailable
from tests.live import draining

try:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
except ImportError:  # the grpc extra of an older install
    health_pb2 = health_pb2_grpc = None

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ["", "lf.a2a.v1.A2AService", "a2a.v1.A2AService"]
SERVING, NOT_SERVING = 1, 2  # HealthCheckResponse's


def _health(target: str, services: list[str]) -> dict[str, int]:
    with grpc.insecure_channel(target) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)  # listening once started
        stub = health_pb2_grpc.HealthStub(channel)
        return {s: stub.Check(health_pb2.HealthCheckRequest(service=s), timeout=10).status
                for s in services}


def _unknown_to_health(target: str, service: str) -> bool:
    with grpc.insecure_channel(target) as channel:
        try:
            health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=10)
        except grpc.RpcError as exc:
            return exc.code() is grpc.StatusCode.NOT_FOUND
    return False


@pytest.mark.parametrize("agents", [["tests/client/agents.py"],
                                    ["tests/client/agents.py", "examples/echo.py"]],
                         ids=["one agent", "several agents"])
def test_grpc_health_says_not_serving_from_the_drain_on(tmp_path: Path, agents: list[str]) -> None:
    if health_pb2 is None:
        unavailable("grpcio-health-checking (the grpc extra: pip install -e '.[dev]')")
    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", *agents, "--store",
         f"sqlite:///{tmp_path}/" + ("" if len(agents) > 1 else "tasks.db"), "--json",
         "--log-level", "warning", "--port", "0", "--grpc-port", "0", "--drain-seconds", "30"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        info: dict[str, Any] = msgspec.json.decode(proc.stdout.readline())
        url = info["served"]["Test_assistant"]["url"] if len(agents) > 1 else info["jsonrpc"]
        url = url.rstrip("/") + "/"
        # a port several agents share serves v1.0's service alone (v0.3's requests name
        # no tenant: it refuses every call), and says so
        services = SERVICES if len(agents) == 1 else SERVICES[:2]
        assert _health(info["grpc"], services) == dict.fromkeys(services, SERVING)
        assert _unknown_to_health(info["grpc"], SERVICES[2]) is (len(agents) > 1)
        # a turn that runs until the file ``go`` is there: the drain waits for it
        started = httpx.post(url, headers={"A2A-Version": "1.0"}, timeout=10, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": "m-slow", "role": "ROLE_USER",
                            "parts": [{"text": f"until {tmp_path / 'go'}"}]},
                "configuration": {"returnImmediately": True}}}).json()
        assert "result" in started, started
        proc.send_signal(signal.SIGTERM)
        assert draining(url + "healthz").status_code == 503
        assert _health(info["grpc"], services) == dict.fromkeys(services, NOT_SERVING)
        assert proc.poll() is None  # the turn still runs: so does the process
        (tmp_path / "go").touch()
        proc.wait(30)  # the turn finished, then the process stopped
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=20)
    assert b"Traceback" not in err, err
