"""Agents that listen while they work, on two replicas: a message sent to one
replica for a turn running on the other reaches that turn's executor, once."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from .replicas import Replica, call, replica_pair, send, wait_state

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def pair(pg_database: str) -> Iterator[tuple[Replica, Replica]]:
    yield from replica_pair(pg_database, "listen", agent="tests/e2e/listening_agent.py")


def _message(text: str, task_id: str, message_id: str | None = None) -> dict[str, object]:
    return {"messageId": message_id or str(uuid.uuid4()), "role": "ROLE_USER",
            "parts": [{"text": text}], "taskId": task_id}


def test_a_message_sent_to_another_replica_reaches_the_running_turn(
        pair: tuple[Replica, Replica]) -> None:
    a, b = pair
    task = send(a.url, "collect 2")  # runs on A
    wait_state(a.url, task["id"], {"TASK_STATE_WORKING"}, 10)
    first = call(b.url, "SendMessage", {"message": _message("one", task["id"]),
                                        "configuration": {"returnImmediately": True}})
    assert first["result"]["task"]["status"]["state"] == "TASK_STATE_WORKING", first
    again = _message("two", task["id"])
    done = call(b.url, "SendMessage", {"message": again})  # blocking: answered settled
    result = done["result"]["task"]
    assert result["status"]["state"] == "TASK_STATE_COMPLETED", done
    assert result["status"]["message"]["parts"][0]["text"] == "one + two"
    # a retry of the same message is answered with the task, and delivers nothing more
    retried = call(b.url, "SendMessage", {"message": again})
    assert retried["result"]["task"]["id"] == task["id"]
    history = call(a.url, "GetTask", {"id": task["id"]})["result"]["history"]
    texts = [m["parts"][0]["text"] for m in history if m["role"] == "ROLE_USER"]
    assert texts == ["collect 2", "one", "two"]
