"""A turn that asks for input without reading the messages sent to it meanwhile,
with two ``interlingua serve`` processes on one store (an SQLite file; PostgreSQL
with a Redis bus): the message is sent to B while A runs the turn, and once the turn
has asked, the task goes on at A with that message as its answer (it was left
waiting for an answer it already had)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .replicas import call, pair_urls, send, wait_state

pytestmark = pytest.mark.timeout(90)

AGENT = "tests/e2e/asking_listener_agent.py"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def pair(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    yield from pair_urls(request, tmp_path_factory, "unread", settle=True, agent=AGENT)


def _message(text: str, task_id: str) -> dict[str, object]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
            "parts": [{"text": text}], "taskId": task_id}


def test_a_message_sent_to_the_other_replica_answers_the_question_it_preceded(
        pair: tuple[str, str], tmp_path: Path) -> None:
    a, b = pair
    signal = tmp_path / "ask"
    task = send(a, f"ask {signal}")  # its turn runs on A
    assert wait_state(a, task["id"], {"TASK_STATE_WORKING"}, 10) == "TASK_STATE_WORKING"
    sent = call(b, "SendMessage", {"message": _message("blue", task["id"]),
                                   "configuration": {"returnImmediately": True}})
    assert sent["result"]["task"]["status"]["state"] == "TASK_STATE_WORKING", sent
    time.sleep(0.3)  # A has heard of it (or reads it at its next write)
    signal.touch()
    ended = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"}
    assert wait_state(b, task["id"], ended, 20) == "TASK_STATE_COMPLETED"
    got = call(b, "GetTask", {"id": task["id"]})["result"]
    assert got["status"]["message"]["parts"][0]["text"] == "answered: blue", got
    texts = [m["parts"][0]["text"] for m in got["history"] if m["role"] == "ROLE_USER"]
    assert texts == [f"ask {signal}", "blue"]
