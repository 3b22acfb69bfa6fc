"""Two ``interlingua serve`` processes on one store and no bus (a SQLite file, a
PostgreSQL schema), an agent that answers messages while it works: a message sent to
the process that does not run the turn, then one sent at once to the process that
does. What the executor emits for each is written (GetTask, a subscriber) as soon as
it yields, not left queued until something else writes the task."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .replicas import Replica, call, send, sqlite_pair, wait_state
from .sse_client import V1, events, rpc, v1_message

AGENT = "tests/e2e/answering_listener.py"
#: rounds of the two sends: each one's order of writes is left to the race
ROUNDS = 4

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(params=["sqlite", "postgresql"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Replica, Replica]]:
    if request.param == "sqlite":
        store = f"sqlite:///{tmp_path}/tasks.db"
    else:
        from ..services import new_name, with_option

        store = with_option(request.getfixturevalue("pg_database"),
                            f"schema={new_name('unbussed')}")
    with sqlite_pair(store, settle=True, agent=AGENT) as replicas:
        yield replicas


def _send(url: str, text: str, task_id: str) -> None:
    answer = call(url, "SendMessage", {"message": v1_message(text, taskId=task_id),
                                       "configuration": {"returnImmediately": True}})
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_WORKING", answer


def _artifacts(url: str, task_id: str) -> list[str]:
    task = call(url, "GetTask", {"id": task_id})["result"]
    return [p["text"] for a in task.get("artifacts", []) for p in a["parts"]]


def _follow(url: str, task_id: str, seen: list[str]) -> None:
    with httpx.Client(timeout=60) as client:
        for _, _, data in events(client, url + "/", rpc("SubscribeToTask", {"id": task_id}),
                                 headers=V1, deadline=100):
            update: Any = data.get("result", {}).get("artifactUpdate")
            if update is not None:
                seen.extend(p["text"] for p in update["artifact"]["parts"])


def _until(found: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not found():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_answers_to_messages_sent_to_both_processes_are_written(
        pair: tuple[Replica, Replica]) -> None:
    a, b = pair
    task = send(a.url, "go")  # its turn runs on A
    assert wait_state(a.url, task["id"], {"TASK_STATE_WORKING"}, 10) == "TASK_STATE_WORKING"
    seen: list[str] = []
    follower = threading.Thread(target=_follow, args=(a.url, task["id"], seen), daemon=True)
    follower.start()
    time.sleep(0.3)  # (the subscription is open)
    for n in range(ROUNDS):
        _send(b.url, f"one {n}", task["id"])
        _send(a.url, f"two {n}", task["id"])
        wanted = {f"ONE {n}", f"TWO {n}"}
        # within a couple of seconds, and with nothing else writing the task meanwhile
        assert _until(lambda w=wanted: w <= set(_artifacts(a.url, task["id"])), 3), \
            (n, _artifacts(a.url, task["id"]))
        assert _until(lambda w=wanted: w <= set(seen), 2), (n, seen)
    done = call(a.url, "SendMessage", {"message": v1_message("done", taskId=task["id"])})
    assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", done
    follower.join(10)
    assert sorted(seen) == sorted(f"{w} {n}" for n in range(ROUNDS) for w in ("ONE", "TWO"))
