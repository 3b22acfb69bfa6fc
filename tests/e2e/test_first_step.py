"""A slow first step does not hide the task, over real HTTP (and gRPC) on loopback.

An executor that takes a while before its first event (a model's first token)
used to leave a streaming caller with nothing at all until it spoke. Now the
task is written ``submitted`` once the server's grace has passed
(``EngineConfig.submit_grace``), and streamed at once in the caller's dialect;
an agent that answers with bare messages (``replies_with_messages=True``)
keeps the old way, so that its bare answer stays possible.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from interlingua import Agent
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from interlingua.server import EngineConfig
from tests.bindings.drivers import DRIVERS
from tests.live import live_agent, live_grpc_agent

from .slow_agent import FIRST_STEP, Slow
from .sse_client import V1, events, rpc

pytestmark = pytest.mark.timeout(60)

#: an upper time bound: run while no other test runs (a lower bound needs no such care)
SERIAL = pytest.mark.serial

#: "at once", with room for a shared, busy machine: well under FIRST_STEP
SOON = 0.5


def message(text: str, message_id: str | None = None) -> m.Message:
    return m.Message(message_id=message_id or new_id(), role=m.Role.USER,
                     parts=[m.TextPart(text=text)])


def v1_send(text: str, message_id: str | None = None, **config: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"message": {"messageId": message_id or str(uuid.uuid4()),
                                          "role": "ROLE_USER", "parts": [{"text": text}]}}
    if config:
        params["configuration"] = config
    return params


def v01_send(task_id: str, text: str) -> dict[str, Any]:
    return {"id": task_id, "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


def call(client: httpx.Client, url: str, method: str, params: dict[str, Any]) -> Any:
    r = client.post(url + "/", json=rpc(method, params), headers=V1)
    assert r.status_code == 200, r.text
    return r.json()


def state_of(data: dict[str, Any]) -> str | None:
    result = data["result"]
    for kind in ("task", "statusUpdate"):
        if kind in result:
            return str(result[kind]["status"]["state"])
    return None


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, Slow]]:
    """The slow agent at the default grace, on every binding."""
    slow = Slow()
    with live_grpc_agent(Agent("Slow", "Slow to start.", slow)) as (url, _):
        yield url, slow


def timed_first(client: httpx.Client, url: str, method: str, params: dict[str, Any],
                slow: Slow | None = None) -> tuple[float, list[dict[str, Any]]]:
    """(seconds until the first SSE event, every event's data) of one stream; with
    ``slow``, its first step ends once the first event is in (the rest of the
    stream need not wait for it)."""
    start = time.monotonic()
    took = None
    got: list[dict[str, Any]] = []
    for _, _, data in events(client, url + "/", rpc(method, params), V1):
        if took is None:
            took = time.monotonic() - start
            if slow is not None:
                slow.release()
        got.append(data)
    assert took is not None
    return took, got


# ------------------------------------------------------------ the default grace

@SERIAL
@pytest.mark.parametrize("kind", list(DRIVERS))
def test_every_binding_streams_the_submitted_task_before_the_first_step(
        served: tuple[str, Slow], kind: str) -> None:
    url, _ = served
    with httpx.Client(timeout=30) as client:
        driver = DRIVERS[kind](client, url)
        start = time.monotonic()
        got = driver.stream(c.SendMessage(message=message("hello"), streaming=True), limit=1)
        took = time.monotonic() - start
    ((seq, item),) = got
    assert isinstance(item, m.Task), item
    assert item.status.state is m.TaskState.SUBMITTED and seq == 1
    assert took < SOON, f"the first event took {took:.3f} s"


@SERIAL
def test_the_turn_goes_on_in_the_same_stream(served: tuple[str, Slow]) -> None:
    url, slow = served
    with httpx.Client(timeout=30) as client:
        took, got = timed_first(client, url, "SendStreamingMessage", v1_send("hello"), slow)
        tid = got[0]["result"]["task"]["id"]
        # visible to readers while the executor is still in its first step
        later = call(client, url, "GetTask", {"id": tid})
    assert took < SOON
    assert [state_of(d) for d in got] == ["TASK_STATE_SUBMITTED", None, "TASK_STATE_COMPLETED"]
    assert "artifactUpdate" in got[1]["result"]
    assert later["result"]["status"]["state"] == "TASK_STATE_COMPLETED"


@SERIAL
def test_v01_send_subscribe_streams_the_submitted_task_at_once(
        served: tuple[str, Slow]) -> None:
    url, slow = served
    tid = f"task-{uuid.uuid4()}"
    with httpx.Client(timeout=30) as client:
        took, got = timed_first(client, url, "tasks/sendSubscribe", v01_send(tid, "hello"),
                                slow)
    first = got[0]["result"]
    assert first["id"] == tid and first["status"]["state"] == "submitted"
    assert took < SOON
    assert got[-1]["result"]["status"]["state"] == "completed" and got[-1]["result"]["final"]


@SERIAL
def test_v03_message_stream_streams_the_submitted_task_at_once(
        served: tuple[str, Slow]) -> None:
    url, slow = served
    params = {"message": {"kind": "message", "messageId": str(uuid.uuid4()), "role": "user",
                          "parts": [{"kind": "text", "text": "hello"}]}}
    with httpx.Client(timeout=30) as client:
        took, got = timed_first(client, url, "message/stream", params, slow)
    first = got[0]["result"]
    assert first["kind"] == "task" and first["status"]["state"] == "submitted"
    assert took < SOON


def test_a_blocking_send_still_answers_with_the_finished_task(
        served: tuple[str, Slow]) -> None:
    url, _ = served
    with httpx.Client(timeout=30) as client:
        start = time.monotonic()
        done = call(client, url, "SendMessage", v1_send("hello"))
        took = time.monotonic() - start
    task = done["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED" and took >= FIRST_STEP
    assert task["artifacts"][0]["parts"][0]["text"] == "answer to hello"


@SERIAL
def test_a_non_blocking_send_answers_at_once(served: tuple[str, Slow]) -> None:
    url, _ = served
    with httpx.Client(timeout=30) as client:
        start = time.monotonic()
        sent = call(client, url, "SendMessage", v1_send("hello", returnImmediately=True))
        took = time.monotonic() - start
    assert sent["result"]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert took < SOON


def test_a_bare_message_after_the_grace_completes_the_task(served: tuple[str, Slow]) -> None:
    url, _ = served
    with httpx.Client(timeout=30) as client:
        _, streamed = timed_first(client, url, "SendStreamingMessage", v1_send("reply"))
        sent = call(client, url, "SendMessage", v1_send("reply"))
    assert [state_of(d) for d in streamed] == ["TASK_STATE_SUBMITTED", "TASK_STATE_COMPLETED"]
    status = streamed[1]["result"]["statusUpdate"]["status"]
    assert status["message"]["parts"][0]["text"] == "pong: reply"
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"][0]["text"] == "pong: reply"


@SERIAL
def test_cancel_in_the_first_step_ends_the_stream_canceled(served: tuple[str, Slow]) -> None:
    url, slow = served
    with httpx.Client(timeout=30) as client, httpx.Client(timeout=30) as other:
        steps = slow.steps_done
        start = time.monotonic()
        got: list[dict[str, Any]] = []
        for _, _, data in events(client, url + "/", rpc("SendStreamingMessage",
                                                        v1_send("hello")), V1):
            got.append(data)
            if len(got) == 1:
                canceled = call(other, url, "CancelTask", {"id": data["result"]["task"]["id"]})
        took = time.monotonic() - start
    assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert [state_of(d) for d in got] == ["TASK_STATE_SUBMITTED", "TASK_STATE_CANCELED"]
    assert took < FIRST_STEP and slow.steps_done == steps  # the executor was stopped


# ------------------------------------------------------------- idempotent sends

@pytest.fixture(scope="module")
def graced() -> Iterator[tuple[str, Slow]]:
    """The slow agent with a grace long enough to send during it."""
    slow = Slow()
    with live_agent(Agent("Slow", "Slow to start.", slow),
               engine_config=EngineConfig(submit_grace=0.3)) as url:
        yield url, slow


@SERIAL
def test_a_repeat_during_the_grace_gets_the_same_task_by_grace_time(
        graced: tuple[str, Slow]) -> None:
    url, slow = graced
    turns = slow.turns
    mid = str(uuid.uuid4())
    streamed: list[dict[str, Any]] = []

    def stream() -> None:
        with httpx.Client(timeout=30) as client:
            streamed.extend(d for _, _, d in events(client, url + "/", rpc(
                "SendStreamingMessage", v1_send("hello", mid)), V1))

    reader = threading.Thread(target=stream)
    with httpx.Client(timeout=30) as client:
        start = time.monotonic()
        reader.start()
        while slow.turns == turns:  # until the stream's send has started the turn
            time.sleep(0.005)
        again = call(client, url, "SendMessage", v1_send("hello", mid, returnImmediately=True))
        took = time.monotonic() - start
        slow.release()  # the repeat was answered in the first step; the rest need not wait
        # and once more after the grace wrote it, waiting for the end this time
        last = call(client, url, "SendMessage", v1_send("hello", mid))
        reader.join(30)
        listed = call(client, url, "ListTasks", {})
    assert took < 0.3 + SOON, f"the repeat took {took:.3f} s"
    tid = again["result"]["task"]["id"]
    assert last["result"]["task"]["id"] == tid
    assert last["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert streamed[0]["result"]["task"]["id"] == tid
    assert slow.turns == turns + 1
    assert [t["id"] for t in listed["result"]["tasks"]].count(tid) == 1


@SERIAL
def test_a_graced_first_event_comes_after_the_grace(graced: tuple[str, Slow]) -> None:
    url, slow = graced
    with httpx.Client(timeout=30) as client:
        took, got = timed_first(client, url, "SendStreamingMessage", v1_send("hello"), slow)
    assert state_of(got[0]) == "TASK_STATE_SUBMITTED"
    assert 0.3 <= took < 0.3 + SOON


@SERIAL
def test_v01_cancel_during_the_grace_cancels_the_task() -> None:
    """A v0.1 caller names its task, so it can cancel before the grace wrote it."""
    slow = Slow()
    with live_agent(Agent("Slow", "Slow to start.", slow),
               engine_config=EngineConfig(submit_grace=30.0)) as url:
        tid = f"task-{uuid.uuid4()}"
        streamed: list[dict[str, Any]] = []

        def stream() -> None:
            with httpx.Client(timeout=30) as client:
                streamed.extend(d for _, _, d in events(client, url + "/", rpc(
                    "tasks/sendSubscribe", v01_send(tid, "hello"))))

        reader = threading.Thread(target=stream)
        with httpx.Client(timeout=30) as client:
            start = time.monotonic()
            reader.start()
            while True:  # until the send has reached the server
                r = client.post(url + "/", json=rpc("tasks/cancel", {"id": tid})).json()
                if "result" in r or time.monotonic() - start > FIRST_STEP * 2:
                    break
                time.sleep(0.01)
            took = time.monotonic() - start
            reader.join(30)
    assert r["result"]["status"]["state"] == "canceled", r
    assert took < FIRST_STEP * 0.8, f"canceled after {took:.3f} s"
    assert [d["result"]["status"]["state"] for d in streamed] == ["submitted", "canceled"]
    assert slow.steps_done == 0


# ------------------------------------------------------------ the old way, kept

def test_an_agent_that_replies_with_messages_keeps_its_bare_answer() -> None:
    slow = Slow()
    with live_agent(Agent("Replies", "Answers with messages.", slow,
                     replies_with_messages=True)) as url, httpx.Client(timeout=30) as client:
        took, streamed = timed_first(client, url, "SendStreamingMessage", v1_send("reply"))
        sent = call(client, url, "SendMessage", v1_send("reply"))
        listed = call(client, url, "ListTasks", {})
    assert took >= FIRST_STEP / 2
    assert [list(d["result"]) for d in streamed] == [["message"]]
    assert get_text_of(streamed[0]["result"]["message"]) == "pong: reply"
    assert get_text_of(sent["result"]["message"]) == "pong: reply"
    assert listed["result"]["tasks"] == []


def get_text_of(doc: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in doc["parts"])


@pytest.mark.parametrize(("grace", "at_once"), [(None, False),
                                               pytest.param(0, True, marks=SERIAL)])
def test_the_grace_is_configurable(grace: float | None, at_once: bool) -> None:
    """None: the task waits for the executor's first event; 0: written before it runs."""
    slow = Slow()
    with live_agent(Agent("Slow", "Slow to start.", slow),
               engine_config=EngineConfig(submit_grace=grace)) as url, \
            httpx.Client(timeout=30) as client:
        took, got = timed_first(client, url, "SendStreamingMessage", v1_send("hello"),
                                slow if at_once else None)
    assert state_of(got[0]) == "TASK_STATE_SUBMITTED"
    if at_once:
        assert took < SOON
    else:
        assert took >= FIRST_STEP


def test_serve_takes_the_grace_from_the_command_line(
        alone: Callable[[], AbstractContextManager[None]]) -> None:
    from tests.cli.test_console_script import serving

    with serving("--submit-grace", "0.3", spec="tests/e2e/slow_agent.py") as (url, _), \
            httpx.Client(timeout=30) as client:
        with alone():  # the process's start-up is not timed
            start = time.monotonic()
            stream = events(client, url + "/", rpc("SendStreamingMessage", v1_send("hello")), V1)
            _, _, first = next(stream)
            took = time.monotonic() - start
            stream.close()  # the rest is the first step's (1 s) and the answer's
    assert state_of(first) == "TASK_STATE_SUBMITTED"
    assert 0.3 <= took < 0.3 + SOON, f"the first event took {took:.3f} s"
