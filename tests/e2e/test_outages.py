"""PostgreSQL or Redis restarted under running replicas. These use servers of
their own (initdb/pg_ctl, redis-server on free ports), never the shared ones."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ..services import PrivatePostgres, PrivateRedis, new_name, with_option
from .replicas import Replica, call, send, tally
from .sse_client import V1, events, rpc, v1_message


@pytest.fixture
def private_pg() -> Iterator[PrivatePostgres]:
    pg = PrivatePostgres().init()
    try:
        yield pg
    finally:
        pg.remove()


def test_requests_fail_clearly_while_postgres_restarts_and_work_after(
        private_pg: PrivatePostgres, redis_url: str) -> None:
    replica = Replica(private_pg.url, redis_url).start()
    try:
        done = send(replica.url, "hello", wait=True)
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        private_pg.stop()
        for method, params in [("SendMessage", {"message": v1_message("hello")}),
                               ("GetTask", {"id": done["id"]})]:
            r = httpx.post(replica.url + "/", headers=V1, timeout=30, json=rpc(method, params))
            assert r.status_code == 503, r.text
            assert r.headers["retry-after"] == "1"
            assert r.json()["error"]["message"] == \
                "The task store is unavailable; try again shortly"
        private_pg.start()
        deadline = time.monotonic() + 15
        while True:
            r = httpx.post(replica.url + "/", headers=V1, timeout=30, json=rpc(
                "SendMessage", {"message": v1_message("again")}))
            if r.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert r.status_code == 200, r.text
        assert r.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert call(replica.url, "GetTask", {"id": done["id"]})["result"]["id"] == done["id"]
        assert replica.proc is not None and replica.proc.poll() is None
    finally:
        replica.stop()


def test_a_stream_across_replicas_loses_nothing_while_redis_restarts(
        pg_database: str) -> None:
    redis = PrivateRedis().start()
    store = with_option(pg_database, f"schema={new_name('outage')}")
    a = Replica(store, redis.url)
    b = Replica(store, redis.url)
    try:
        a.start()
        b.start()
        task = send(b.url, "story 200 0.02")
        got: list[tuple[int, dict[str, Any]]] = []

        def follow() -> None:
            with httpx.Client(timeout=60) as c:
                for i, _, data in events(c, a.url + "/",
                                         rpc("SubscribeToTask", {"id": task["id"]}), V1):
                    got.append((int(i or 0), data["result"]))

        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        deadline = time.monotonic() + 20
        while len(got) < 20:
            assert time.monotonic() < deadline, "the stream did not follow"
            time.sleep(0.01)
        redis.stop()
        time.sleep(1.0)  # events keep being committed on B meanwhile
        redis.start()
        reader.join(30)
        assert not reader.is_alive(), f"the stream stalled after {len(got)} events"
    finally:
        a.stop()
        b.stop()
        redis.stop()
    ids = [i for i, _ in got]
    assert ids == list(range(ids[0], ids[0] + len(ids))), ids
    assert got[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    first = got[0][1]["task"]
    before = len(first["artifacts"][0]["parts"]) if first.get("artifacts") else 0
    numbers = [int(r["artifactUpdate"]["artifact"]["parts"][0]["text"].split()[1].rstrip(";"))
               for _, r in got[1:] if "artifactUpdate" in r]
    tally("stream on A across a Redis restart", list(range(before, 200)), numbers)
    assert numbers == list(range(before, 200))
