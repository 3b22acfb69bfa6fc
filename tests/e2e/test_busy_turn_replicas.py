"""Writes served by the process that does not run a busy turn, with two ``interlingua
serve`` processes on one store (an SQLite file; PostgreSQL with a Redis bus): the turn
on A writes an artifact chunk every few milliseconds, and B takes a cancel for it. It
is written whatever version the turn has reached meanwhile: the task ends canceled and
the executor stops (it was refused, "could not be canceled; try again", on every
binding)."""

from __future__ import annotations

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

from .replicas import GrpcReplica, replica_pair, send, wait_state
from .sse_client import V1, events, rpc

pytestmark = pytest.mark.timeout(90)

AGENT = "tests/e2e/busy_listener_agent.py"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def pair(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    if request.param == "postgresql":
        database: str = request.getfixturevalue("pg_database")
        for first, second in replica_pair(database, "busy", GrpcReplica, agent=AGENT):
            yield first.url, second.url
        return
    store = f"sqlite:///{tmp_path_factory.mktemp('busy')}/tasks.db"
    first = GrpcReplica(store, "local://", agent=AGENT).start()  # migrates the store alone
    second = GrpcReplica(store, "local://", agent=AGENT)
    try:
        second.start()
        time.sleep(1.2)  # each has seen the other's lease (heartbeats 0.5 s apart)
        yield first.url, second.url
    finally:
        second.stop()
        first.stop()


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
