"""SIGTERM drains: new sends are refused (503, Retry-After) and /healthz says
so, while running turns finish and their streams get their last events; turns
still running when the window closes end by the restart policy. Signals that
follow cut it short, and the server still stops cleanly."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx

from tests.live import draining

from .replicas import Replica, call, send, state_of
from .sse_client import V1, events, rpc, v1_message


def test_sigterm_during_a_stream_lets_it_complete(tmp_path: Path) -> None:
    server = Replica(f"sqlite:///{tmp_path}/tasks.db", "local://",
                     extra=("--drain-seconds", "30")).start()
    gate = tmp_path / "gate"  # the stream's last chunk waits for it
    try:
        got: list[dict[str, Any]] = []

        def follow() -> None:
            with httpx.Client(timeout=60) as c:
                for _, _, data in events(c, server.url + "/", rpc(
                        "SendStreamingMessage", {"message": v1_message(f"gate 20 {gate}")}),
                        V1):
                    got.append(data["result"])

        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        while len(got) < 5:
            time.sleep(0.01)
        assert server.proc is not None
        server.proc.send_signal(signal.SIGTERM)
        # draining: the health check fails and new sends go elsewhere
        health = draining(server.url + "/healthz")
        assert health.status_code == 503 and health.json()["status"] == "draining"
        refused = httpx.post(server.url + "/", headers=V1, timeout=5, json=rpc(
            "SendMessage", {"message": v1_message("hello")}))
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert "shutting down" in refused.json()["error"]["message"]
        # a streaming send too: an error answer, not an event stream
        streamed = httpx.post(server.url + "/", headers=V1, timeout=5, json=rpc(
            "SendStreamingMessage", {"message": v1_message("hello")}))
        assert streamed.status_code == 503 and streamed.headers["retry-after"] == "1"
        assert "shutting down" in streamed.json()["error"]["message"]
        task_id = got[0]["task"]["id"]
        assert state_of(server.url, task_id) == "TASK_STATE_WORKING"  # reads still served
        assert not any("statusUpdate" in r and r["statusUpdate"]["status"]["state"]
                       == "TASK_STATE_COMPLETED" for r in got)
        gate.touch()  # the turn goes on, and its stream gets the rest
        reader.join(30)
        assert not reader.is_alive()
        assert got[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert sum("artifactUpdate" in r for r in got) == 20
        server.proc.wait(15)  # and then it stops by itself
    finally:
        server.kill()
    again = Replica(server.store, "local://").start()
    try:
        assert state_of(again.url, task_id) == "TASK_STATE_COMPLETED"
    finally:
        again.stop()


def assert_ended_by_the_stop(store: str, task_id: str) -> None:
    """A replica started again on ``store`` finds the task failed by the stop."""
    again = Replica(store, "local://").start()
    try:
        record = call(again.url, "GetTask", {"id": task_id})["result"]
        assert record["status"]["state"] == "TASK_STATE_FAILED"
        assert "stopped" in record["status"]["message"]["parts"][0]["text"]
    finally:
        again.stop()


def test_turns_still_running_when_the_window_closes_end(
        tmp_path: Path, alone: Callable[[], AbstractContextManager[None]]) -> None:
    server = Replica(f"sqlite:///{tmp_path}/tasks.db", "local://",
                     extra=("--drain-seconds", "1")).start()
    try:
        task = send(server.url, f"wait {tmp_path / 'observed'}")
        assert server.proc is not None
        with alone():  # a time bound
            began = time.monotonic()
            server.proc.send_signal(signal.SIGTERM)
            server.proc.wait(15)
            assert 1 <= time.monotonic() - began < 10
    finally:
        server.kill()
    assert_ended_by_the_stop(server.store, task["id"])


def test_a_blocking_caller_whose_turn_outlives_the_window_is_answered_failed(
        tmp_path: Path) -> None:
    # (uvicorn cut the request at its own shutdown, before the turn was ended: a
    # 500 in plain text, and a CancelledError's traceback in the log)
    log = tmp_path / "server.log"
    with log.open("wb") as err:
        server = Replica(f"sqlite:///{tmp_path}/tasks.db", "local://",
                         extra=("--drain-seconds", "1")).start(stderr=err)
        answer: list[httpx.Response] = []
        try:
            caller = threading.Thread(target=lambda: answer.append(httpx.post(
                server.url + "/", headers=V1, timeout=60, json={
                    "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {"message": v1_message(f"wait {tmp_path / 'seen'}")}})))
            caller.start()
            for _ in range(200):  # until the turn runs
                listed = call(server.url, "ListTasks", {})["result"]["tasks"]
                if listed and listed[0]["status"]["state"] == "TASK_STATE_WORKING":
                    break
                time.sleep(0.05)
            assert server.proc is not None
            server.proc.send_signal(signal.SIGTERM)
            caller.join(30)
            server.proc.wait(15)
        finally:
            server.kill()
    assert answer and answer[0].status_code == 200, answer and answer[0].text
    task = answer[0].json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED", task["status"]
    assert "stopped" in task["status"]["message"]["parts"][0]["text"]
    logged = log.read_text()
    assert "Traceback" not in logged and "CancelledError" not in logged, logged[-2000:]


def test_ctrl_c_again_and_again_stops_at_once_and_cleanly(
        tmp_path: Path, alone: Callable[[], AbstractContextManager[None]]) -> None:
    # The first drains, the second stops, the third forces: the app's own
    # shutdown still runs then (its store closed, its turns ended), and nothing
    # is cancelled mid-way with a traceback.
    server = Replica(f"sqlite:///{tmp_path}/tasks.db", "local://",
                     extra=("--drain-seconds", "30")).start(stderr=subprocess.PIPE)
    try:
        task = send(server.url, f"wait {tmp_path / 'observed'}")
        assert server.proc is not None
        with alone():  # a time bound, and the signals' spacing
            began = time.monotonic()
            server.proc.send_signal(signal.SIGINT)
            assert draining(server.url + "/healthz").status_code == 503
            server.proc.send_signal(signal.SIGINT)
            time.sleep(0.02)
            server.proc.send_signal(signal.SIGINT)
            _, err = server.proc.communicate(timeout=15)
            assert time.monotonic() - began < 10
    finally:
        server.kill()
    said = err.decode()
    assert "draining" in said
    assert "Traceback" not in said and "CancelledError" not in said, said
    assert_ended_by_the_stop(server.store, task["id"])
