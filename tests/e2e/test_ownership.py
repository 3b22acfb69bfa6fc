"""Two real processes on one SQLite file: neither ends the other's running
tasks; a killed or silent one's tasks end in the survivor by the restart
policy, without any restart; a paused one's late writes are refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx

from .procs import ROOT, ServerProcess, free_port, turns_over
from .sse_client import V1, rpc, v1_message

SLOW = "tests/e2e/agents.py:slow"


def _send(url: str, seconds: float) -> str:
    """A non-blocking send to the slow agent; the task's id."""
    r = httpx.post(url + "/", headers=V1, timeout=10, json=rpc("SendMessage", {
        "message": v1_message(str(seconds)), "configuration": {"returnImmediately": True}}))
    return str(r.json()["result"]["task"]["id"])


def _task(url: str, task_id: str) -> dict[str, Any]:
    r = httpx.post(url + "/", headers=V1, timeout=10, json=rpc("GetTask", {"id": task_id}))
    result: dict[str, Any] = r.json()["result"]
    return result


def _wait_state(url: str, task_id: str, states: set[str], timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        task = _task(url, task_id)
        if task["status"]["state"] in states or time.monotonic() > deadline:
            return task
        time.sleep(0.05)


def test_a_second_process_that_cannot_bind_leaves_the_first_alone(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/tasks.db"
    with ServerProcess(SLOW, store) as first:
        task_id = _send(first.url, 2)
        cli = subprocess.run(
            [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
             "--port", str(first.port), "--store", store],
            cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert cli.returncode != 0
        lines = cli.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot listen" in lines[0], cli.stderr
        assert "Serving" not in cli.stdout
        task = _wait_state(first.url, task_id, {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED"}, 20)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task


def test_a_second_process_on_the_same_store_leaves_running_tasks_alone(
        tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/tasks.db"
    with ServerProcess(SLOW, store, lease_timeout=1.0) as first:
        task_id = _send(first.url, 3)
        with ServerProcess("tests/e2e/agents.py:echo", store, lease_timeout=1.0) as second:
            # the second one starts, heartbeats and sweeps for a while
            task = _wait_state(second.url, task_id, {"TASK_STATE_COMPLETED",
                                                     "TASK_STATE_FAILED"}, 20)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task


def test_a_process_with_a_shorter_lease_timeout_leaves_a_longer_ones_tasks_alone(
        tmp_path: Path) -> None:
    """Each process is judged by its own ``--lease-timeout``: one that beats every 2 s
    (timeout 10) is not taken for dead by one that would count 1.5 s of silence as
    death (it beats every 0.375 s)."""
    store = f"sqlite:///{tmp_path}/tasks.db"
    with ServerProcess("tests/e2e/agents.py:echo", store, lease_timeout=1.5) as short, \
            ServerProcess(SLOW, store, lease_timeout=10.0) as long:
        task_id = _send(long.url, 3)
        task = _wait_state(short.url, task_id, {"TASK_STATE_COMPLETED",
                                                "TASK_STATE_FAILED"}, 20)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task


def test_a_killed_process_tasks_end_in_the_survivor_without_a_restart(
        tmp_path: Path, alone: Callable[[], AbstractContextManager[None]]) -> None:
    store = f"sqlite:///{tmp_path}/tasks.db"
    with ServerProcess("tests/e2e/agents.py:echo", store, lease_timeout=1.0) as survivor:
        doomed = ServerProcess(SLOW, store, lease_timeout=1.0).start()
        try:
            # still running however long the wait for the other tests to end
            task_id = _send(doomed.url, 600)
            # the send answers before the turn's first event ("working on it") is written
            working = _wait_state(doomed.url, task_id, {"TASK_STATE_WORKING"}, 10)
            assert working["status"]["state"] == "TASK_STATE_WORKING", working
            with alone():  # a time bound
                doomed.kill()
                began = time.monotonic()
                task = _wait_state(survivor.url, task_id, {"TASK_STATE_FAILED"}, 10)
                took = time.monotonic() - began
        finally:
            doomed.kill()  # not left running when the test fails before its kill
        assert task["status"]["state"] == "TASK_STATE_FAILED", task
        assert "stopped" in task["status"]["message"]["parts"][0]["text"]
        assert took < 5


def test_a_silent_process_loses_its_tasks_and_its_late_writes_are_refused(
        tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/tasks.db"
    with ServerProcess("tests/e2e/agents.py:echo", store, lease_timeout=1.0) as survivor, \
            ServerProcess(SLOW, store, lease_timeout=1.0, metrics=True) as paused:
        task_id = _send(paused.url, 2)
        assert paused.proc is not None
        # Stopped once its executor's first write is in: a process stopped inside a
        # SQLite write holds the file's write lock until it runs again (docs/
        # architecture.md, "Fencing"), which is not what this test is about.
        working = _wait_state(paused.url, task_id, {"TASK_STATE_WORKING"}, 10)
        assert working["status"]["state"] == "TASK_STATE_WORKING", working
        os.kill(paused.proc.pid, signal.SIGSTOP)  # alive, but no heartbeats
        try:
            task = _wait_state(survivor.url, task_id, {"TASK_STATE_FAILED"}, 10)
            assert task["status"]["state"] == "TASK_STATE_FAILED", task
        finally:
            os.kill(paused.proc.pid, signal.SIGCONT)
        # its executor wakes up, finishes and tries to complete: refused
        turns_over(paused.url)
        for url in (survivor.url, paused.url):
            assert _task(url, task_id)["status"]["state"] == "TASK_STATE_FAILED"
        # and it serves new tasks under a new lease
        new_id = _send(paused.url, 0.1)
        task = _wait_state(paused.url, new_id, {"TASK_STATE_COMPLETED"}, 10)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"


def test_serve_says_serving_only_once_bound_and_uses_a_store_per_agent(
        tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", str(ROOT / "examples/echo.py"),
         "--port", str(port)], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("Serving") and f":{port}" in line, line
        assert "sqlite:///.interlingua/echo.db" in line
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        assert (tmp_path / ".interlingua" / "echo.db").exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
        if proc.stdout is not None:
            proc.stdout.close()


REPLICA = "tests/e2e/replica_agent.py:agent"


def _leases(path: Path) -> int:
    """How many leases the SQLite store at ``path`` holds (read beside its servers)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        return int(conn.execute("SELECT count(*) FROM leases").fetchone()[0])
    finally:
        conn.close()


def test_a_paused_process_answers_what_it_was_sent_under_its_new_lease(
        tmp_path: Path) -> None:
    """Requests a paused process takes up on waking, before its heartbeat finds its
    lease revoked, are written under the new lease it then takes: answered as ever,
    on every binding, not with an internal error."""
    import threading

    import grpc

    from interlingua.core.parts import new_id
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc1

    from .sse_client import events

    path = tmp_path / "tasks.db"
    store = f"sqlite:///{path}"
    grpc_port = free_port()
    with ServerProcess(REPLICA, store, lease_timeout=1.0) as other, \
            ServerProcess(REPLICA, store, lease_timeout=1.0, grpc_port=grpc_port,
                          bindings=("jsonrpc", "rest", "grpc")) as paused:
        assert paused.proc is not None and other.url != paused.url
        url = paused.url
        waiting = []
        for _ in range(3):  # to continue, and to cancel on each binding
            r = httpx.post(url + "/", headers=V1, timeout=10, json=rpc(
                "SendMessage", {"message": v1_message("ask")}))
            task = r.json()["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
            waiting.append(task)
        cont, cancel_rpc, cancel_rest = waiting
        got: dict[str, Any] = {}

        def post(name: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> None:
            r = httpx.post(url + path, headers=headers, timeout=30, json=body)
            got[name] = (r.status_code, r.json())

        def stream() -> None:
            with httpx.Client(timeout=30) as c:
                got["stream"] = [data for _, _, data in events(c, url + "/", rpc(
                    "SendStreamingMessage", {"message": v1_message("streamed")}), V1)]

        def over_grpc() -> None:
            with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
                try:
                    got["grpc"] = rpc1.A2AServiceStub(channel).SendMessage(
                        pb1.SendMessageRequest(message=pb1.Message(
                            message_id=new_id(), role=pb1.ROLE_USER,
                            parts=[pb1.Part(text="over grpc")])), timeout=30,
                        wait_for_ready=True)
                except grpc.RpcError as exc:
                    got["grpc"] = exc

        calls = [
            lambda: post("jsonrpc", "/", rpc("SendMessage", {"message": v1_message("a")}), V1),
            lambda: post("rest", "/message:send", {"message": v1_message("b")}, V1),
            lambda: post("continue", "/", rpc("SendMessage", {"message": v1_message(
                "c", taskId=cont["id"], contextId=cont["contextId"])}), V1),
            lambda: post("cancel", "/", rpc("CancelTask", {"id": cancel_rpc["id"]}), V1),
            lambda: post("rest cancel", f"/tasks/{cancel_rest['id']}:cancel", {}, V1),
            stream, over_grpc,
        ]
        os.kill(paused.proc.pid, signal.SIGSTOP)  # alive, but no heartbeats
        try:
            deadline = time.monotonic() + 10
            while _leases(path) > 1:  # until the other process revoked its lease
                assert time.monotonic() < deadline, "the paused process's lease stands"
                time.sleep(0.05)
            threads = [threading.Thread(target=call, daemon=True) for call in calls]
            for thread in threads:
                thread.start()
            time.sleep(0.5)  # the requests wait in the paused process's sockets
        finally:
            os.kill(paused.proc.pid, signal.SIGCONT)
        for thread in threads:
            thread.join(30)
        said = {name: _said(answer) for name, answer in got.items()}
        assert said == {"jsonrpc": "TASK_STATE_COMPLETED", "rest": "TASK_STATE_COMPLETED",
                        "continue": "TASK_STATE_COMPLETED", "cancel": "TASK_STATE_CANCELED",
                        "rest cancel": "TASK_STATE_CANCELED", "stream": "TASK_STATE_COMPLETED",
                        "grpc": "TASK_STATE_COMPLETED"}, got


def _said(answer: Any) -> str:
    """The state an answer gives its task, or the error it is (a compact form)."""
    import grpc

    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1

    if isinstance(answer, grpc.RpcError):
        return f"gRPC {answer.code()}"
    if isinstance(answer, list):  # a stream's results: its last one
        answer = (200, answer[-1] if answer else {})
    if not isinstance(answer, tuple):
        return str(pb1.TaskState.Name(answer.task.status.state))
    status, body = answer
    body = body.get("result", body) if status == 200 else body
    if "error" in body:
        return f"HTTP {status} {body['error']}"
    task = body.get("task") or body.get("statusUpdate") or body
    return str(task["status"]["state"])
