"""Several agents on replicas: two ``interlingua serve a.py b.py`` processes serving
the same two agents on one PostgreSQL database and one Redis. A task sent to agent A
through one process is read, streamed (and resumed) and canceled through the other;
agent B's tasks never show under A, through either process."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..services import REDIS_HOST, REDIS_PORT, missing, new_name, reachable, with_option
from .procs import Process
from .replicas import call, send, wait_state
from .sse_client import V1
from .test_replicas import chunk_numbers, stream

AGENT = "tests/e2e/replica_agent.py"
FINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"}


class Together(Process):
    """``interlingua serve`` of agents ``Replica`` and ``Other`` in one process;
    ``url`` is Replica's base URL (so ``/healthz`` below it says it is ready)."""

    grace = 40.0
    ready_timeout = 40.0

    def __init__(self, store: str, bus: str) -> None:
        super().__init__()
        self.base = self.url
        self.url = self.agent("Replica")
        self.store, self.bus = store, bus

    def agent(self, name: str) -> str:
        return f"{self.base}/agents/{name}"

    def start(self) -> Together:
        self.launch([sys.executable, "-m", "interlingua.cli.main", "serve", AGENT,
                     f"{AGENT}:other", "--port", str(self.port), "--store", self.store,
                     "--bus", self.bus, "--lease-timeout", "2", "--log-level", "warning"],
                    env=None, stdout=subprocess.DEVNULL)
        return self


@pytest.fixture(scope="module")
def pair(pg_database: str) -> Iterator[tuple[Together, Together]]:
    if not reachable(REDIS_HOST, REDIS_PORT):
        missing("Redis on 127.0.0.1:6379")
    store = with_option(pg_database, f"schema={new_name('together')}")
    bus = f"redis://{REDIS_HOST}:{REDIS_PORT}/0?prefix={new_name('together')}"
    both = [Together(store, bus).start() for _ in range(2)]
    try:
        for p in both:
            p.wait_ready()
        yield both[0], both[1]
    finally:
        for p in both:
            p.stop()


def _not_found(url: str, method: str, task_id: str) -> None:
    body = call(url, method, {"id": task_id})
    assert body.get("error", {}).get("code") == -32001, body  # TaskNotFound


def test_a_task_sent_through_one_process_is_read_and_canceled_through_the_other(
        pair: tuple[Together, Together], tmp_path: Path) -> None:
    one, two = pair
    flag = tmp_path / "canceled"
    task = send(one.agent("Replica"), f"wait {flag}")
    assert wait_state(two.agent("Replica"), task["id"], {"TASK_STATE_WORKING"}, 20) == \
        "TASK_STATE_WORKING"
    for p in pair:  # never through the other agent, in either process
        _not_found(p.agent("Other"), "GetTask", task["id"])
        _not_found(p.agent("Other"), "CancelTask", task["id"])
    canceled = call(two.agent("Replica"), "CancelTask", {"id": task["id"]})
    assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED", canceled
    # at once, in the process that runs the turn too: it reads the store, where the other
    # wrote the cancel, not the turn it runs
    got = call(one.agent("Replica"), "GetTask", {"id": task["id"]})
    assert got["result"]["status"]["state"] == "TASK_STATE_CANCELED", got
    deadline = time.monotonic() + 20  # the turn running in process one was stopped
    while not flag.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert flag.read_text() == "canceled"


def test_a_stream_follows_a_turn_in_the_other_process_and_resumes(
        pair: tuple[Together, Together]) -> None:
    one, two = pair
    task = send(one.agent("Replica"), "story 60 0.02")
    seen = stream(two.agent("Replica"), "SubscribeToTask", {"id": task["id"]}, limit=15)
    rest = stream(two.agent("Replica"), "SubscribeToTask", {"id": task["id"]},
                  last_event_id=str(seen[-1][0]))
    ids = [i for i, _ in seen] + [i for i, _ in rest]
    assert ids == list(range(ids[0], ids[0] + len(ids))), ids
    assert rest[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    first = seen[0][1]["task"]
    before = len(first["artifacts"][0]["parts"]) if first.get("artifacts") else 0
    assert chunk_numbers([r for _, r in seen[1:]] + [r for _, r in rest]) == \
        list(range(before, 60))
    _not_found(one.agent("Other"), "GetTask", task["id"])


def test_each_agents_tasks_are_listed_under_it_only(pair: tuple[Together, Together]) -> None:
    one, two = pair
    mine = send(one.agent("Replica"), "for Replica", wait=True)
    theirs = send(two.agent("Other"), "for Other", wait=True)
    for p in pair:
        listed = {t["id"] for t in call(p.agent("Replica"), "ListTasks", {})["result"]["tasks"]}
        assert mine["id"] in listed and theirs["id"] not in listed
        listed = {t["id"] for t in call(p.agent("Other"), "ListTasks", {})["result"]["tasks"]}
        assert theirs["id"] in listed and mine["id"] not in listed
        _not_found(p.agent("Replica"), "GetTask", theirs["id"])
        assert wait_state(p.agent("Other"), theirs["id"], FINAL, 10) == "TASK_STATE_COMPLETED"
        # and over HTTP+JSON the same
        got = httpx.get(f"{p.agent('Other')}/tasks/{theirs['id']}", headers=V1, timeout=10)
        assert got.status_code == 200 and got.json()["id"] == theirs["id"], got.text
        got = httpx.get(f"{p.agent('Replica')}/tasks/{theirs['id']}", headers=V1, timeout=10)
        assert got.status_code == 404, got.text
