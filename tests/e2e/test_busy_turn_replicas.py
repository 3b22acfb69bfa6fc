"""Writes served by the process that does not run a busy turn, with two ``interlingua
serve`` processes on one store (an SQLite file; PostgreSQL with a Redis bus): the turn
on A writes an artifact chunk every few milliseconds, and B takes a cancel, or
follow-up messages, for it. Each is written whatever version the turn has reached
meanwhile: the cancel ends the task canceled and stops the executor (it was refused,
"could not be canceled; try again", on every binding), and every follow-up is taken,
and handed to the executor, once (some were answered -32603, and not recorded)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua.core import calls as c
from interlingua.core import model as m
from tests.bindings.drivers import GRPC10, JSONRPC10, REST10, Driver

from .replicas import GrpcReplica, pair_urls, send, wait_state
from .sse_client import V1, events, rpc, v1_message

pytestmark = pytest.mark.timeout(90)

AGENT = "tests/e2e/busy_listener_agent.py"
FOLLOW_UPS = 20


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def pair(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    yield from pair_urls(request, tmp_path_factory, "busy", GrpcReplica, settle=True,
                         agent=AGENT)


def _streaming(url: str, log: Path) -> str:
    """A busy turn begun on ``url``: its task's id, once it streams."""
    task = send(url, f"stream {log}")
    assert wait_state(url, task["id"], {"TASK_STATE_WORKING"}, 10) == "TASK_STATE_WORKING"
    time.sleep(0.5)  # its chunks are being written
    return str(task["id"])


def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _ended(log: Path, within: float) -> bool:
    deadline = time.monotonic() + within
    while "ended" not in _lines(log):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _leave_no_turn(url: str, task_id: str, log: Path) -> None:
    """A test that failed leaves no turn running behind it (its process's stop would
    wait for it)."""
    if "ended" not in _lines(log):
        httpx.post(url + "/", headers=V1, timeout=30, json=rpc("CancelTask", {"id": task_id}))
        _ended(log, 10)


@pytest.mark.parametrize("kind", [JSONRPC10, REST10, GRPC10], ids=lambda k: k.name)
def test_a_cancel_on_the_other_process_stops_a_busy_turn(
        pair: tuple[str, str], kind: type[Driver], tmp_path: Path) -> None:
    a, b = pair
    log = tmp_path / "turn.log"
    task_id = _streaming(a, log)
    ends: list[dict[str, Any]] = []

    def follow() -> None:  # a subscription on the process that runs the turn
        with httpx.Client(timeout=30) as client:
            for _, _, data in events(client, a + "/", rpc("SubscribeToTask", {"id": task_id}),
                                     V1, deadline=20):
                ends.append(data)

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    time.sleep(0.3)
    try:
        with httpx.Client(timeout=30) as client:
            canceled = kind(client, b).call(c.CancelTask(id=task_id))
        assert isinstance(canceled, m.Task), canceled
        assert canceled.status.state is m.TaskState.CANCELED, canceled
        assert _ended(log, 10), _lines(log)  # the executor was stopped
    finally:
        _leave_no_turn(a, task_id, log)
    reader.join(15)
    assert not reader.is_alive(), "the subscription on the turn's process did not end"
    assert ends[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED", \
        ends[-1]
    for url in pair:
        assert wait_state(url, task_id, set(), 0) == "TASK_STATE_CANCELED"


async def _follow_up(client: httpx.AsyncClient, url: str, message: dict[str, Any],
                     rest: bool) -> tuple[int, Any]:
    body = {"message": message, "configuration": {"returnImmediately": True}}
    if rest:
        resp = await client.post(url + "/message:send", headers=V1, json=body)
    else:
        resp = await client.post(url + "/", headers=V1, json=rpc("SendMessage", body))
    return resp.status_code, resp.json()


def test_follow_ups_on_the_other_process_reach_a_busy_turn_once(
        pair: tuple[str, str], tmp_path: Path) -> None:
    a, b = pair
    log = tmp_path / "turn.log"
    task_id = _streaming(a, log)
    texts = [f"m{n}" for n in range(FOLLOW_UPS)]
    messages = [v1_message(text, taskId=task_id) for text in texts]

    async def follow_ups() -> list[tuple[int, Any]]:
        answers = []
        async with httpx.AsyncClient(timeout=30) as client:
            # one at a time (JSON-RPC and HTTP+JSON in turn), then four at once
            for n, message in enumerate(messages[:8]):
                answers.append(await _follow_up(client, b, message, n % 2 == 1))
            for k in range(8, FOLLOW_UPS, 4):
                answers += await asyncio.gather(*(
                    _follow_up(client, b, message, n % 2 == 1)
                    for n, message in enumerate(messages[k:k + 4])))
            # and retries of a few, to either process: taken once all the same
            answers += await asyncio.gather(*(
                _follow_up(client, (a, b)[n % 2], message, False)
                for n, message in enumerate(messages[6:10])))
        return answers

    try:
        answers = asyncio.run(follow_ups())
        bad = [(status, doc) for status, doc in answers if status != 200 or "error" in doc]
        assert not bad, bad
        done = httpx.post(b + "/", headers=V1, timeout=30, json=rpc("SendMessage", {
            "message": v1_message("done", taskId=task_id)})).json()
        assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", done
    finally:
        _leave_no_turn(a, task_id, log)
    assert _ended(log, 10)
    handed = _lines(log)[:-1]  # what the executor was handed, in order
    assert sorted(handed) == sorted([*texts, "done"]), handed
    task = httpx.post(a + "/", headers=V1, timeout=30,
                      json=rpc("GetTask", {"id": task_id})).json()["result"]
    users = [msg["parts"][0]["text"] for msg in task["history"] if msg["role"] == "ROLE_USER"]
    assert sorted(users) == sorted([f"stream {log}", *texts, "done"]), users
