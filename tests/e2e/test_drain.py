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

import grpc
import httpx
import pytest

from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc1
from tests.live import draining

from .replicas import GrpcReplica, Replica, call, send, state_of
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


#: what each caller in flight is answered with when its turn is ended by the stop
STOPPED = ("TASK_STATE_FAILED", "The server stopped while the task was running.")
#: a blocking send and a stream on each binding
CALLERS = ("jsonrpc", "rest", "grpc", "jsonrpc stream", "rest stream", "grpc stream")


def _last_status(results: list[dict[str, Any]]) -> tuple[str, str]:
    """The state and status text of a stream's last event (an error's text, for one
    that did not end with a status)."""
    last = results[-1] if results else {}
    status = (last.get("statusUpdate") or last.get("task") or {}).get("status")
    if status is None:
        return "no final status", str(last)[:200]
    return status["state"], status.get("message", {}).get("parts", [{}])[0].get("text", "")


def _grpc_status(status: pb.TaskStatus) -> tuple[str, str]:
    return pb.TaskState.Name(status.state), status.message.parts[0].text \
        if status.message.parts else ""


def _callers(server: GrpcReplica, tmp_path: Path) -> dict[str, Callable[[], tuple[str, str]]]:
    """A blocking send and a stream on each binding, each of a turn that works until
    it is stopped: what each caller is answered with at the end."""
    url, target = server.url, f"127.0.0.1:{server.grpc_port}"

    def text(name: str) -> str:
        return f"wait {tmp_path / name.replace(' ', '-')}"

    def answered(r: httpx.Response) -> tuple[str, str]:
        if r.status_code != 200:
            return f"HTTP {r.status_code}", r.text[:200]
        body = r.json()
        return _last_status([body.get("result", body)])

    def jsonrpc() -> tuple[str, str]:
        return answered(httpx.post(url + "/", headers=V1, timeout=30, json=rpc(
            "SendMessage", {"message": v1_message(text("jsonrpc"))})))

    def rest() -> tuple[str, str]:
        return answered(httpx.post(url + "/message:send", headers=V1, timeout=30, json={
            "message": v1_message(text("rest"))}))

    def streamed(path: str, body: dict[str, Any]) -> tuple[str, str]:
        with httpx.Client(timeout=30) as c:
            got = [data.get("result", data) for _, _, data in events(c, url + path, body, V1)]
        return _last_status(got)

    def message(name: str) -> pb.SendMessageRequest:
        return pb.SendMessageRequest(message=pb.Message(
            message_id=name + str(time.monotonic()), role=pb.ROLE_USER,
            parts=[pb.Part(text=text(name))]))

    def on_grpc() -> tuple[str, str]:
        with grpc.insecure_channel(target) as channel:
            answer = rpc1.A2AServiceStub(channel).SendMessage(message("grpc"), timeout=30)
        return _grpc_status(answer.task.status)

    def grpc_stream() -> tuple[str, str]:
        with grpc.insecure_channel(target) as channel:
            got = list(rpc1.A2AServiceStub(channel).SendStreamingMessage(
                message("grpc stream"), timeout=30))
        last = got[-1]
        return _grpc_status(last.status_update.status if last.HasField("status_update")
                            else last.task.status)

    return {"jsonrpc": jsonrpc, "rest": rest, "grpc": on_grpc,
            "jsonrpc stream": lambda: streamed("/", rpc("SendStreamingMessage", {
                "message": v1_message(text("jsonrpc stream"))})),
            "rest stream": lambda: streamed("/message:stream", {
                "message": v1_message(text("rest stream"))}),
            "grpc stream": grpc_stream}


def _started(callers: dict[str, Callable[[], tuple[str, str]]],
             answers: dict[str, tuple[str, str]]) -> list[threading.Thread]:
    """Each of ``callers`` called in a thread of its own, its answer filled in as it
    comes: the threads."""

    def run(name: str, caller: Callable[[], tuple[str, str]]) -> None:
        try:
            answers[name] = caller()
        except Exception as exc:  # the caller was cut: said as what it raised
            answers[name] = (type(exc).__name__, str(exc)[:200])

    threads = [threading.Thread(target=run, args=item, daemon=True) for item in callers.items()]
    for thread in threads:
        thread.start()
    return threads


def _in_flight(server: GrpcReplica, tmp_path: Path
               ) -> tuple[dict[str, tuple[str, str]], list[threading.Thread]]:
    """Every one of ``CALLERS`` waiting on its running turn: the answers (filled in as
    they come, or with what each caller raised) and the callers' threads."""
    answers: dict[str, tuple[str, str]] = {}
    threads = _started(_callers(server, tmp_path), answers)
    for _ in range(400):  # until every turn runs
        listed = call(server.url, "ListTasks", {})["result"]["tasks"]
        if sum(t["status"]["state"] == "TASK_STATE_WORKING" for t in listed) == len(CALLERS):
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"the turns did not all start: {listed}")
    return answers, threads


@pytest.mark.parametrize("stop", [("0", 1), ("30", 2)],
                         ids=["no drain window", "a second signal during the drain"])
def test_a_stop_without_a_drain_answers_every_caller_in_flight_at_once(
        tmp_path: Path, alone: Callable[[], AbstractContextManager[None]],
        stop: tuple[str, int]) -> None:
    # (the callers were cut by the listeners' shutdown before the turns were ended:
    # HTTP callers a 500 in plain text, gRPC ones UNAVAILABLE, streams no end, a
    # CancelledError's traceback in the log, and 5 s, 10 s with gRPC, to stop; long
    # polls, which no turn answers, were held until then too)
    drain, signals = stop
    log = tmp_path / "server.log"
    with log.open("wb") as err:
        server = GrpcReplica(f"sqlite:///{tmp_path}/tasks.db", "local://", extra=(
            "--drain-seconds", drain, "--offer-1.1", "--long-poll-max-wait", "30",
        )).start(stderr=err)
        try:
            answers, callers = _in_flight(server, tmp_path)
            callers += _long_polls(server, answers)
            assert server.proc is not None
            with alone():  # a time bound
                began = time.monotonic()
                server.proc.send_signal(signal.SIGTERM)
                if signals == 2:
                    assert draining(server.url + "/healthz").status_code == 503
                    server.proc.send_signal(signal.SIGTERM)
                server.proc.wait(15)
                took = time.monotonic() - began
            for caller in callers:
                caller.join(10)
        finally:
            server.kill()
    assert answers == {**dict.fromkeys(CALLERS, STOPPED), **dict.fromkeys(LONG_POLLS, ASKED)}
    logged = log.read_text()
    assert "Traceback" not in logged and "CancelledError" not in logged, logged[-3000:]
    assert took < 4, took


#: a long poll held on each binding (A2A 1.1's ``GetTask`` with ``currentGeneration``)
LONG_POLLS = ("jsonrpc long poll", "rest long poll", "grpc long poll")
#: what each is answered with as the server stops: the task as it is, asking for input
ASKED = ("TASK_STATE_INPUT_REQUIRED", "and then?")


def _long_polls(server: GrpcReplica, answers: dict[str, tuple[str, str]]
                ) -> list[threading.Thread]:
    """Each of ``LONG_POLLS`` held on a task that waits for input, a call no turn
    answers: its answer filled in (or what it raised) as ``_in_flight``'s callers'."""
    v11 = {"A2A-Version": "1.1"}
    asked = httpx.post(server.url + "/", headers=v11, timeout=30, json=rpc(
        "SendMessage", {"message": v1_message("ask")})).json()["result"]["task"]
    task_id, generation = asked["id"], asked["generation"]

    def over_http(r: httpx.Response) -> tuple[str, str]:
        if r.status_code != 200:
            return f"HTTP {r.status_code}", r.text[:200]
        return _last_status([{"task": r.json().get("result", r.json())}])

    def on_grpc() -> tuple[str, str]:
        request = pb.GetTaskRequest(id=task_id, current_generation=int(generation))
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            return _grpc_status(rpc1.A2AServiceStub(channel).GetTask(
                request, metadata=[("a2a-version", "1.1")], timeout=30).status)

    threads = _started({
        "jsonrpc long poll": lambda: over_http(httpx.post(
            server.url + "/", headers=v11, timeout=30, json=rpc(
                "GetTask", {"id": task_id, "currentGeneration": generation}))),
        "rest long poll": lambda: over_http(httpx.get(
            f"{server.url}/tasks/{task_id}?currentGeneration={generation}",
            headers=v11, timeout=30)),
        "grpc long poll": on_grpc}, answers)
    time.sleep(0.5)  # held
    return threads


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["Ctrl-C", "SIGTERM"])
def test_ctrl_c_again_and_again_stops_at_once_and_cleanly(
        tmp_path: Path, alone: Callable[[], AbstractContextManager[None]],
        sig: signal.Signals) -> None:
    # The first drains, the second stops, the third forces: the app's own
    # shutdown still runs then (its store closed, its turns ended, their callers
    # answered), and nothing is cancelled mid-way with a traceback. SIGTERM as
    # Ctrl-C (uvicorn forces on SIGINT alone: three SIGTERMs waited out the gRPC
    # port's grace, the turns ended by the next start). Calls in flight that no
    # turn answers (long polls) are answered too: held, the gRPC one held the
    # port's close for its grace (an equal grace was cut half-way), the HTTP ones
    # were cut.
    server = GrpcReplica(f"sqlite:///{tmp_path}/tasks.db", "local://", extra=(
        "--drain-seconds", "30", "--offer-1.1", "--long-poll-max-wait", "30",
    )).start(stderr=subprocess.PIPE)
    try:
        answers, callers = _in_flight(server, tmp_path)
        callers += _long_polls(server, answers)
        task = send(server.url, f"wait {tmp_path / 'observed'}")
        assert server.proc is not None
        with alone():  # a time bound, and the signals' spacing
            began = time.monotonic()
            server.proc.send_signal(sig)
            assert draining(server.url + "/healthz").status_code == 503
            server.proc.send_signal(sig)
            time.sleep(0.02)
            server.proc.send_signal(sig)
            _, err = server.proc.communicate(timeout=15)
            took = time.monotonic() - began
        for caller in callers:
            caller.join(10)
    finally:
        server.kill()
    said = err.decode()
    assert "draining" in said
    assert "Traceback" not in said and "CancelledError" not in said, said
    assert answers == {**dict.fromkeys(CALLERS, STOPPED), **dict.fromkeys(LONG_POLLS, ASKED)}
    assert took < 4.5, took  # (short of the forced exit's own bound, 5 s)
    assert_ended_by_the_stop(server.store, task["id"])
