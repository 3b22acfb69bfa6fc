"""A turn that asks for input without reading the messages sent to it meanwhile,
with two ``interlingua serve`` processes on one store (an SQLite file; PostgreSQL
with a Redis bus): the message is sent to B while A runs the turn, and once the turn
has asked, the task goes on at A with that message as its answer (it was left
waiting for an answer it already had). A message whose write reaches the store only
after the turn asked (held by ``late_answer_agent.py`` until then) is a follow-up:
it starts the new turn where it was sent, once, and its caller gets that turn's end."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .replicas import call, pair_urls, send, wait_state

pytestmark = pytest.mark.timeout(90)

#: asking_listener_agent.py's agent, whose messages ``late PATH`` are held (see there)
AGENT = "tests/e2e/late_answer_agent.py"
ENDED = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"}


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


def _held_send(url: str, message: dict[str, object], late: Path) -> list[dict[str, object]]:
    """A blocking send of ``message`` (``late PATH``) to ``url`` in a thread, once its
    write is held there: what it is answered with, when it is."""
    answered: list[dict[str, object]] = []
    threading.Thread(target=lambda: answered.append(call(url, "SendMessage",
                                                         {"message": message}, 60)),
                     daemon=True).start()
    held = Path(f"{late}.held")
    deadline = time.monotonic() + 10
    while not held.exists():
        assert time.monotonic() < deadline, "the message's write was not held"
        time.sleep(0.02)
    return answered


def _answer(answered: list[dict[str, object]]) -> dict[str, object]:
    deadline = time.monotonic() + 30
    while not answered:
        assert time.monotonic() < deadline, "the blocking send was not answered"
        time.sleep(0.05)
    body = answered[0]
    assert "result" in body, body
    task = body["result"]["task"]  # type: ignore[index]
    assert isinstance(task, dict)
    return task


def _asked(url: str, tmp_path: Path) -> tuple[str, Path, Path]:
    """A task working on ``url`` until the file ``ask`` exists, then asking; the files."""
    ask, late = tmp_path / "ask", tmp_path / "late"
    task = send(url, f"ask {ask}")
    assert wait_state(url, task["id"], {"TASK_STATE_WORKING"}, 10) == "TASK_STATE_WORKING"
    return task["id"], ask, late


def _said_once(url: str, task_id: str, ask: Path, late: Path) -> None:
    """The task completed by one turn that answered the late message, written once."""
    got = call(url, "GetTask", {"id": task_id})["result"]
    assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
    assert got["status"]["message"]["parts"][0]["text"] == f"answered: late {late}", got
    texts = [(m["role"], m["parts"][0]["text"]) for m in got["history"]]
    assert [t for role, t in texts if role == "ROLE_USER"] == [f"ask {ask}", f"late {late}"]
    assert len(texts) == len(set(texts)), texts


def test_a_message_written_after_the_question_starts_the_next_turn(
        pair: tuple[str, str], tmp_path: Path) -> None:
    a, b = pair
    task_id, ask, late = _asked(a, tmp_path)
    # B finds the task working, and its write of the message waits ...
    answered = _held_send(b, _message(f"late {late}", task_id), late)
    ask.touch()  # ... until A's turn has asked and ended
    assert wait_state(a, task_id, {"TASK_STATE_INPUT_REQUIRED"}, 10) == \
        "TASK_STATE_INPUT_REQUIRED"
    time.sleep(0.3)  # (A's turn is over: nothing of it is left to read a message)
    late.touch()
    task = _answer(answered)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    assert wait_state(a, task_id, ENDED, 10) == "TASK_STATE_COMPLETED"
    _said_once(a, task_id, ask, late)


def test_a_late_message_also_sent_as_a_follow_up_is_answered_once(
        pair: tuple[str, str], tmp_path: Path) -> None:
    a, b = pair
    task_id, ask, late = _asked(a, tmp_path)
    message = _message(f"late {late}", task_id)
    answered = _held_send(b, message, late)
    ask.touch()
    assert wait_state(a, task_id, {"TASK_STATE_INPUT_REQUIRED"}, 10) == \
        "TASK_STATE_INPUT_REQUIRED"
    # the same message sent again, to A, answers the question first ...
    again = call(a, "SendMessage", {"message": message})
    assert again["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", again
    late.touch()  # ... and the held send is answered as a retry of it
    task = _answer(answered)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    _said_once(b, task_id, ask, late)


def test_a_late_message_sent_to_both_replicas_at_once_is_answered_once(
        pair: tuple[str, str], tmp_path: Path) -> None:
    a, b = pair
    task_id, ask, late = _asked(a, tmp_path)
    message = _message(f"late {late}", task_id)
    answered = _held_send(b, message, late)
    ask.touch()
    assert wait_state(a, task_id, {"TASK_STATE_INPUT_REQUIRED"}, 10) == \
        "TASK_STATE_INPUT_REQUIRED"
    # B's write and the same message sent to A race for the task (whichever wins,
    # the other is answered as a retry of it)
    late.touch()
    again = call(a, "SendMessage", {"message": message})
    assert again["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", again
    task = _answer(answered)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    _said_once(a, task_id, ask, late)
