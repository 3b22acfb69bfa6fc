"""A2A 1.1's long poll on two ``interlingua serve`` processes sharing one SQLite file and
no bus: a ``GetTask`` held by the process that does not run the turn is answered when
the other commits, found in the store as an idle stream finds such writes (it was held
to the maximum wait, then answered with the task as it was)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from .replicas import Replica

AGENT = "tests/bindings/generations_agent.py:AGENT"
V11 = {"A2A-Version": "1.1"}

pytestmark = pytest.mark.timeout(90)


def _rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = httpx.post(url + "/", headers=V11, timeout=60, json={
        "jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
    return answer["result"]


def test_a_long_poll_on_the_other_process_is_woken_by_the_store(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/tasks.db"
    a, b = (Replica(store, "local://", agent=AGENT,
                    extra=("--long-poll-max-wait", "30")) for _ in range(2))
    a.start(wait=False)
    b.start(wait=False)
    try:
        a.wait_ready()
        b.wait_ready()
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                   "parts": [{"text": "chunks 3 2"}]}  # chunks two seconds apart, then asks
        time.sleep(2.5)  # each has seen the other's lease: they share the store
        task = _rpc(a.url, "SendMessage", {"message": message,
                                           "configuration": {"returnImmediately": True}})["task"]
        now = int(_rpc(b.url, "GetTask", {"id": task["id"]})["generation"])
        started = time.monotonic()
        held = _rpc(b.url, "GetTask", {"id": task["id"], "currentGeneration": str(now)})
        waited = time.monotonic() - started
        assert int(held["generation"]) > now, held
        assert waited < 10, waited  # the next chunk's commit, not the 30 s maximum
    finally:
        a.stop()
        b.stop()
