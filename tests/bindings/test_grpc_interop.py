"""The official Python SDKs' gRPC clients against an interlingua agent:
a2a-sdk 1.3.0 over the v1.0 service and, through its v0.3 compatibility
transport, over the v0.3 service; a2a-sdk 0.3.26 over the v0.3 service. Each
client finds the gRPC interface in the agent's card, as it would in the wild.
The peers' environments (with the SDKs' grpc extra) are made by
scripts/interop-setup."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bindings.test_grpc import served
from tests.interop.harness import ensure_env

PEERS = Path(__file__).resolve().parent / "peers"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.interop(envs=["py-a2a-1.3.0", "py-a2a-0.3.26"])


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    with served() as (url, _):
        yield url


def _run(env: str, script: str, *args: str) -> dict[str, Any]:
    python = ensure_env(env) / "bin" / "python"
    done = subprocess.run([str(python), str(PEERS / script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("dialect,transport,missing", [
    ("1.0", "GrpcTransport", "TaskNotFoundError"),
    ("0.3", "CompatGrpcTransport", "A2AClientError"),
])
def test_a2a_sdk_1_3_grpc_client(agent_url: str, dialect: str, transport: str,
                                 missing: str) -> None:
    out = _run("py-a2a-1.3.0", "grpc_client_v1.py", agent_url, "--dialect", dialect)
    assert out["transport"] == transport
    assert out["send"] == {"state": "TASK_STATE_COMPLETED", "text": "HELLO"}
    assert out["get"] == {"id": True, "state": "TASK_STATE_COMPLETED"}
    assert out["stream"][0] == "task" and out["streamEnd"] == "TASK_STATE_COMPLETED"
    assert "artifact_update" in out["stream"]
    assert out["cancel"] == "TASK_STATE_CANCELED"
    assert out["subscribe"][0] == "task"
    assert out["push"] == {"made": ["c1", "http://127.0.0.1:9/hook"],
                           "got": ["c1", "http://127.0.0.1:9/hook", "tok"]}
    assert out["missing"] == missing  # the SDK read the status (and, 1.0, its ErrorInfo)


def test_a2a_sdk_0_3_grpc_client(agent_url: str) -> None:
    out = _run("py-a2a-0.3.26", "grpc_client_v03.py", agent_url)
    assert out["transport"] == "GrpcTransport"
    assert out["send"] == {"state": "completed", "text": "HELLO"}
    assert out["get"] == {"id": True, "state": "completed"}
    assert out["stream"][0] == "task" and "artifact-update" in out["stream"]
    assert out["streamEnd"] == ["completed", True]
    assert out["cancel"] == "canceled"
    assert out["subscribe"][0] == "task"
    assert out["push"] == {"made": [out["askId"], "c1"], "got": ["http://127.0.0.1:9/hook", "tok"]}
