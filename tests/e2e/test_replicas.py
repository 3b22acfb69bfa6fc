"""Three ``interlingua serve`` replicas on one PostgreSQL database and one Redis:
any replica serves any request about any task, and a killed one loses nothing."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..services import new_name, with_option
from .procs import turns_over
from .replicas import Replica, call, send, state_of, tally, wait_state
from .sse_client import V1, events, rpc

FINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"}


@pytest.fixture(scope="module")
def cluster(pg_database: str) -> Iterator[tuple[Replica, Replica, Replica]]:
    from ..conftest import REDIS_HOST, REDIS_PORT, missing, reachable

    if not reachable(REDIS_HOST, REDIS_PORT):
        missing("Redis on 127.0.0.1:6379")
    store = with_option(pg_database, f"schema={new_name('replicas')}")
    bus = f"redis://{REDIS_HOST}:{REDIS_PORT}/0?prefix={new_name('replicas')}"
    replicas = [Replica(store, bus) for _ in range(3)]
    # started at once: they migrate the new schema under one lock
    for r in replicas:
        r.start(wait=False)
    try:
        for r in replicas:
            r.wait_ready()
        yield replicas[0], replicas[1], replicas[2]
    finally:
        for r in replicas:
            r.stop()


def stream(url: str, method: str, params: dict[str, Any], *,
           last_event_id: str | None = None, limit: int | None = None,
           within: float = 30) -> list[tuple[int, dict[str, Any]]]:
    """(event id, result) of each SSE event of a stream, which must end ``within`` s
    (heartbeats keep a stalled stream open, so a read timeout would not end it)."""
    headers = dict(V1)
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    got: list[tuple[int, dict[str, Any]]] = []

    def read() -> None:
        with httpx.Client(timeout=60) as c:
            for i, _, data in events(c, url + "/", rpc(method, params), headers, limit):
                got.append((int(i or 0), data["result"]))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(within)
    assert not reader.is_alive(), f"the stream stalled after {len(got)} events"
    return list(got)


def chunk_numbers(results: list[dict[str, Any]]) -> list[int]:
    out = []
    for r in results:
        update = r.get("artifactUpdate")
        if update is not None:
            text = update["artifact"]["parts"][0]["text"]
            out.append(int(text.split()[1].rstrip(";")))
    return out


def test_a_stream_on_one_replica_follows_a_turn_on_another_and_resumes_on_a_third(
        cluster: tuple[Replica, Replica, Replica]) -> None:
    a, b, c = cluster
    task = send(b.url, "story 150 0.01")
    seen = stream(a.url, "SubscribeToTask", {"id": task["id"]}, limit=40)
    assert state_of(b.url, task["id"]) == "TASK_STATE_WORKING"  # A followed it live
    rest = stream(c.url, "SubscribeToTask", {"id": task["id"]},
                  last_event_id=str(seen[-1][0]))
    ids = [i for i, _ in seen] + [i for i, _ in rest]
    # the first is the task as it was; each event after it exactly once, in order
    assert ids == list(range(ids[0], ids[0] + len(ids))), ids
    assert rest[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    first = seen[0][1]["task"]
    before = len(first.get("artifacts", [{}])[0].get("parts", [])) if first.get("artifacts") \
        else 0
    chunks = chunk_numbers([r for _, r in seen[1:]] + [r for _, r in rest])
    assert tally("stream on A, turn on B, resumed on C", list(range(before, 150)),
                 chunks)[1:] == (0, 0)
    assert chunks == list(range(before, 150))


def _post_together(url: str, message: dict[str, Any], barrier: threading.Barrier,
                   answers: list[dict[str, Any]]) -> None:
    barrier.wait()
    answers.append(call(url, "SendMessage", {"message": message}))


def test_the_same_message_sent_to_two_replicas_at_once_makes_one_task(
        cluster: tuple[Replica, Replica, Replica]) -> None:
    a, b, c = cluster
    for _ in range(5):
        context = str(uuid.uuid4())
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "contextId": context,
                   "parts": [{"text": "story 3 0.05"}]}
        answers: list[dict[str, Any]] = []
        barrier = threading.Barrier(2)
        threads = [threading.Thread(target=_post_together,
                                    args=(u, message, barrier, answers))
                   for u in (a.url, b.url)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        ids = {ans["result"]["task"]["id"] for ans in answers}
        assert len(answers) == 2 and len(ids) == 1, answers
        listed = call(c.url, "ListTasks", {"contextId": context})["result"]
        assert listed["totalSize"] == 1, listed
        assert wait_state(c.url, ids.pop(), FINAL, 10) == "TASK_STATE_COMPLETED"


def test_a_v01_send_of_a_client_task_id_to_three_replicas_at_once_gets_the_task_on_each(
        cluster: tuple[Replica, Replica, Replica]) -> None:
    """v0.1 ``tasks/send`` names its task (``params.id``): the same send at once to every
    replica is answered with that task by each, not with -32009 "already exists" by
    those whose write of the task came after the first."""
    for n in range(5):
        task_id = str(uuid.uuid4())
        body = rpc("tasks/send", {"id": task_id, "message": {
            "messageId": str(uuid.uuid4()), "role": "user",
            "parts": [{"type": "text", "text": f"hello {n}"}]}})
        answers: list[dict[str, Any]] = []
        barrier = threading.Barrier(3)

        def post(url: str, barrier: threading.Barrier = barrier,
                 answers: list[dict[str, Any]] = answers, body: dict[str, Any] = body) -> None:
            barrier.wait()
            answers.append(httpx.post(url + "/", json=body, timeout=30).json())

        threads = [threading.Thread(target=post, args=(r.url,)) for r in cluster]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(answers) == 3, answers
        for answer in answers:
            assert answer.get("result", {}).get("id") == task_id, answers
            assert answer["result"]["status"]["state"] == "completed", answers


def test_cancel_on_one_replica_stops_the_executor_on_another(
        cluster: tuple[Replica, Replica, Replica], tmp_path: Path) -> None:
    a, b, c = cluster
    marker = tmp_path / "observed"
    task = send(b.url, f"wait {marker}")
    assert wait_state(a.url, task["id"], {"TASK_STATE_WORKING"}, 10) == "TASK_STATE_WORKING"
    answer = call(c.url, "CancelTask", {"id": task["id"]})
    assert answer["result"]["status"]["state"] == "TASK_STATE_CANCELED", answer
    deadline = time.monotonic() + 5
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert marker.read_text() == "canceled"  # the executor on B saw its cancellation
    for url in (a.url, b.url, c.url):
        assert state_of(url, task["id"]) == "TASK_STATE_CANCELED"


def test_a_replica_killed_mid_stream_loses_nothing(
        cluster: tuple[Replica, Replica, Replica],
        alone: Callable[[], AbstractContextManager[None]]) -> None:
    a, _, c = cluster
    doomed = Replica(a.store, a.bus).start()
    try:
        # a time bound, and a story that must still be running at the kill
        with alone():
            task = send(doomed.url, "story 1000 0.01")
            got: list[tuple[int, dict[str, Any]]] = []
            ended = threading.Event()

            def follow() -> None:
                with httpx.Client(timeout=60) as client:
                    for i, _, data in events(client, a.url + "/",
                                             rpc("SubscribeToTask", {"id": task["id"]}), V1):
                        got.append((int(i or 0), data["result"]))
                ended.set()

            reader = threading.Thread(target=follow, daemon=True)
            reader.start()
            deadline = time.monotonic() + 20
            while len(got) < 30:
                assert time.monotonic() < deadline, "the stream on A did not follow"
                time.sleep(0.01)
            doomed.kill()
            killed_at = time.monotonic()
            assert ended.wait(doomed.lease_timeout + 8), "the stream did not end"
            took = time.monotonic() - killed_at
            reader.join()
    finally:
        doomed.kill()
    final = got[-1][1]["statusUpdate"]["status"]
    assert final["state"] == "TASK_STATE_FAILED" and "stopped" in \
        final["message"]["parts"][0]["text"]
    assert took < doomed.lease_timeout + 4
    ids = [i for i, _ in got]
    assert ids == list(range(ids[0], ids[0] + len(ids))), ids
    # every event the killed replica committed: in the log, once, and in the stream
    record = call(c.url, "GetTask", {"id": task["id"]})["result"]
    parts = record["artifacts"][0]["parts"]
    first = got[0][1]["task"]
    before = len(first["artifacts"][0]["parts"]) if first.get("artifacts") else 0
    assert tally("stream on A, B killed mid-stream", list(range(before, len(parts))),
                 chunk_numbers([r for _, r in got[1:]]))[1:] == (0, 0)
    assert chunk_numbers([r for _, r in got[1:]]) == list(range(before, len(parts)))
    # and a client resuming on another replica from the middle gets the rest once
    middle = ids[len(ids) // 2]
    rest = stream(c.url, "SubscribeToTask", {"id": task["id"]}, last_event_id=str(middle))
    tally("resumed on C from the middle after the kill", [i for i in ids if i > middle],
          [i for i, _ in rest])
    assert [i for i, _ in rest] == [i for i in ids if i > middle]


def test_a_paused_replica_loses_its_turns_and_its_late_writes_are_refused(
        cluster: tuple[Replica, Replica, Replica]) -> None:
    import os
    import signal

    a, _, _ = cluster
    paused = Replica(a.store, a.bus, extra=("--metrics",)).start()
    try:
        task = send(paused.url, "story 20 0.1")
        assert paused.proc is not None
        os.kill(paused.proc.pid, signal.SIGSTOP)  # alive, but no heartbeats
        try:
            # the bound is generous: on a loaded machine the live replicas' heartbeats
            # (which revoke the silent lease) come late; the promise is the outcome
            state = wait_state(a.url, task["id"], FINAL, paused.lease_timeout + 30)
            assert state == "TASK_STATE_FAILED"
        finally:
            os.kill(paused.proc.pid, signal.SIGCONT)
        # its executor wakes up and goes on writing: refused, the task stays failed
        turns_over(paused.url)
        assert state_of(a.url, task["id"]) == "TASK_STATE_FAILED"
        assert state_of(paused.url, task["id"]) == "TASK_STATE_FAILED"
        # and it serves new tasks under a new lease
        fresh = send(paused.url, "story 2 0", wait=True)
        assert fresh["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        paused.stop()


def test_a_replica_with_a_shorter_lease_timeout_leaves_a_longer_ones_turns_alone(
        pg_database: str) -> None:
    """Each replica is judged by its own ``--lease-timeout``: one that beats every 2 s
    (timeout 10) is not taken for dead by one that would count 1.5 s of silence as
    death."""
    from ..conftest import REDIS_HOST, REDIS_PORT, missing, reachable

    if not reachable(REDIS_HOST, REDIS_PORT):
        missing("Redis on 127.0.0.1:6379")
    store = with_option(pg_database, f"schema={new_name('timeouts')}")
    bus = f"redis://{REDIS_HOST}:{REDIS_PORT}/0?prefix={new_name('timeouts')}"
    short = Replica(store, bus, lease_timeout=1.5).start()
    try:
        long = Replica(store, bus, lease_timeout=10.0).start()
        try:
            task = send(long.url, "story 6 0.5")
            state = wait_state(short.url, task["id"], FINAL, 30)
            assert state == "TASK_STATE_COMPLETED"
        finally:
            long.stop()
    finally:
        short.stop()
