"""Three replicas behind the load balancer of docs/deployment.md: streams through
it, and a rolling restart under load that loses no event and fails no task."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from interlingua.core.sse import SSEDecoder

from ..services import REDIS_HOST, REDIS_PORT, missing, new_name, reachable, with_option
from .balancer import Balancer, haproxy
from .replicas import Replica, call, tally
from .sse_client import V1, events, rpc, v1_message


@pytest.fixture
def behind_balancer(pg_database: str, tmp_path: Path,
                    ) -> Iterator[tuple[Balancer, list[Replica]]]:
    if not reachable(REDIS_HOST, REDIS_PORT):
        missing("Redis on 127.0.0.1:6379")
    haproxy()  # looked for before three replicas are started for nothing
    store = with_option(pg_database, f"schema={new_name('lb')}")
    bus = f"redis://{REDIS_HOST}:{REDIS_PORT}/0?prefix={new_name('lb')}"
    group = [Replica(store, bus, extra=("--drain-seconds", "15")) for _ in range(3)]
    balancer = Balancer([r.port for r in group], tmp_path)
    try:
        for r in group:
            r.start()
        balancer.start()
        yield balancer, group
    finally:
        balancer.stop()
        for r in group:
            r.stop()


def one_stream(url: str, text: str) -> list[tuple[int, dict[str, Any]]]:
    """A streaming send through ``url``; a 503 (no replica free) is tried again."""
    for _ in range(50):
        got: list[tuple[int, dict[str, Any]]] = []
        try:
            with httpx.Client(timeout=60) as c:
                for i, _, data in events(c, url + "/", rpc(
                        "SendStreamingMessage", {"message": v1_message(text)}), V1):
                    got.append((int(i or 0), data["result"]))
            return got
        except AssertionError as exc:  # the reader asserts a 200 event stream
            if "503" not in str(exc):
                raise
            time.sleep(0.2)
    raise AssertionError("no replica took the send")


def test_a_rolling_restart_under_load_loses_nothing(
        behind_balancer: tuple[Balancer, list[Replica]]) -> None:
    balancer, group = behind_balancer
    results: list[list[tuple[int, dict[str, Any]]]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def client() -> None:
        try:
            while not stop.is_set():
                results.append(one_stream(balancer.url, "story 20 0.05"))
        except BaseException as exc:
            errors.append(exc)

    clients = [threading.Thread(target=client, daemon=True) for _ in range(4)]
    for t in clients:
        t.start()
    time.sleep(1.5)
    for replica in group:  # one at a time, as a deploy would
        assert replica.proc is not None
        replica.stop()  # SIGTERM: drains, then exits
        replica.start()
        time.sleep(1.0)  # the balancer's check sees it up again
    stop.set()
    for t in clients:
        t.join(60)
    assert not errors, errors
    assert len(results) >= 12
    tally(f"rolling restart, {len(results)} streams of 20 chunks",
          [n * 100 + k for n in range(len(results)) for k in range(20)],
          [n * 100 + int(r["artifactUpdate"]["artifact"]["parts"][0]["text"].split()[1]
                         .rstrip(";"))
           for n, got in enumerate(results) for _, r in got if "artifactUpdate" in r])
    for got in results:
        ids = [i for i, _ in got]
        assert ids == list(range(ids[0], ids[0] + len(ids))), ids
        assert got[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert sum("artifactUpdate" in r for _, r in got) == 20
    # and every task the clients made is complete in the store
    listed = call(balancer.url, "ListTasks", {"pageSize": 100})["result"]
    assert listed["totalSize"] == len(results)
    assert all(t["status"]["state"] == "TASK_STATE_COMPLETED" for t in listed["tasks"])


def test_a_stream_cut_by_a_killed_replica_resumes_through_the_balancer(
        behind_balancer: tuple[Balancer, list[Replica]]) -> None:
    balancer, group = behind_balancer
    got: list[tuple[int, dict[str, Any]]] = []
    served_by = ""
    with httpx.Client(timeout=60) as c, c.stream(
            "POST", balancer.url + "/", headers=V1,
            json=rpc("SendStreamingMessage", {"message": v1_message("story 400 0.02")})) as resp:
        served_by = resp.headers["x-served-by"]
        decoder = SSEDecoder()
        for chunk in resp.iter_raw():
            for ev in decoder.feed(chunk):
                got.append((int(ev.id or 0), msgspec.json.decode(ev.data)["result"]))
            if len(got) >= 30:
                break
    doomed = group["abc".index(served_by)]
    doomed.kill()
    task_id = got[0][1]["task"]["id"]
    # the client resumes where it was, through the balancer, on a live replica
    rest: list[tuple[int, dict[str, Any]]] = []
    with httpx.Client(timeout=60) as c:
        for i, _, data in events(c, balancer.url + "/",
                                 rpc("SubscribeToTask", {"id": task_id}),
                                 {**V1, "Last-Event-ID": str(got[-1][0])}):
            rest.append((int(i or 0), data["result"]))
    ids = [i for i, _ in got] + [i for i, _ in rest]
    assert ids == list(range(ids[0], ids[0] + len(ids))), ids
    final = rest[-1][1]["statusUpdate"]["status"]
    assert final["state"] == "TASK_STATE_FAILED"
    assert "stopped" in final["message"]["parts"][0]["text"]
