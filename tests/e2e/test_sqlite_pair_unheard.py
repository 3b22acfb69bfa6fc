"""Two ``interlingua serve`` processes sharing one SQLite file and no bus: what one
commits reaches what the other holds, found in the store at each tick or heartbeat: a
long poll (A2A 1.1) held by the process that does not run the turn, and a blocking send
whose task the other process canceled, and the turn of a task the other process
canceled, however that process learns of it."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from .procs import turns_over
from .replicas import cancel_answers_the_other, sqlite_pair

AGENT = "tests/bindings/generations_agent.py:AGENT"
V11 = {"A2A-Version": "1.1"}

pytestmark = pytest.mark.timeout(90)


def _rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = httpx.post(url + "/", headers=V11, timeout=60, json={
        "jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
    return answer["result"]


def test_a_long_poll_on_the_other_process_is_woken_by_the_store(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/tasks.db"
    with sqlite_pair(store, settle=True, agent=AGENT,
                     extra=("--long-poll-max-wait", "30")) as (a, b):
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                   "parts": [{"text": "chunks 3 1"}]}  # chunks a second apart, then asks
        task = _rpc(a.url, "SendMessage", {"message": message,
                                           "configuration": {"returnImmediately": True}})["task"]
        for _ in range(100):  # (written once its turn says something: then B reads it)
            found = httpx.post(b.url + "/", headers=V11, timeout=60, json={
                "jsonrpc": "2.0", "id": 1, "method": "GetTask",
                "params": {"id": task["id"]}}).json()
            if "result" in found:
                break
            time.sleep(0.05)
        now = int(found["result"]["generation"])
        started = time.monotonic()
        held = _rpc(b.url, "GetTask", {"id": task["id"], "currentGeneration": str(now)})
        waited = time.monotonic() - started
        assert int(held["generation"]) > now, held
        assert waited < 10, waited  # the next chunk's commit, not the 30 s maximum


def test_a_cancel_on_the_other_process_answers_the_blocking_caller(tmp_path: Path) -> None:
    """A blocking send on A whose task B cancels: answered canceled within a heartbeat
    or two, as with a shared bus (it waited until the executor next wrote, which a
    turn that works on without writing never does)."""
    store = f"sqlite:///{tmp_path}/tasks.db"
    with sqlite_pair(store, settle=True, agent=AGENT) as (a, b):
        cancel_answers_the_other(a.url, b.url, _rpc, within=10)


def test_a_turn_whose_own_write_finds_the_cancel_stops(tmp_path: Path) -> None:
    """A turn that writes on while B cancels its task: A's next write finds the task
    canceled, before any heartbeat looks; the turn stops then too (it ran on, waiting
    for a message, until the process stopped)."""
    store = f"sqlite:///{tmp_path}/tasks.db"
    with sqlite_pair(store, settle=True, agent="tests/e2e/streaming_listener.py",
                     extra=("--metrics",)) as (a, b):
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                   "parts": [{"text": "go"}]}
        task = _rpc(a.url, "SendMessage", {"message": message,
                                           "configuration": {"returnImmediately": True}})["task"]
        for _ in range(100):
            if _rpc(a.url, "GetTask", {"id": task["id"]})["status"]["state"] == \
                    "TASK_STATE_WORKING":
                break
            time.sleep(0.05)
        canceled = _rpc(b.url, "CancelTask", {"id": task["id"]})
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED", canceled
        turns_over(a.url, timeout=10)
