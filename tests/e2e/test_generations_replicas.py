"""A2A 1.1 (draft) across two ``interlingua serve`` processes on one PostgreSQL store and
one Redis bus: one task's generation is the same on both, a long poll held by one is
answered when the other commits (JSON-RPC, HTTP+JSON, gRPC), and of two follow-ups sent
for one generation, one to each process at once, exactly one is taken. That last one
needs the store-level check (``Writer._write``): with it switched off, it fails; the
same race in one process is kept apart before it is reached."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua.core import calls as c
from interlingua.core import model as m
from tests.bindings.drivers import GRPC11

from .replicas import GrpcReplica, Replica, replica_pair

AGENT = "tests/bindings/generations_agent.py:AGENT"
V11 = {"A2A-Version": "1.1"}


@pytest.fixture(scope="module")
def pair(pg_database: str) -> Iterator[tuple[Replica, Replica]]:
    yield from replica_pair(pg_database, "gen", GrpcReplica, agent=AGENT,
                            extra=("--long-poll-max-wait", "20"))


def _rpc(url: str, method: str, params: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
    body: dict[str, Any] = httpx.post(url + "/", headers=V11, timeout=timeout, json={
        "jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
    return body


def _send(url: str, text: str, task_id: str | None = None,
          if_match: int | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                               "parts": [{"text": text}]}
    params: dict[str, Any] = {"message": message}
    if task_id:
        message["taskId"] = task_id
    if if_match is not None:
        params["configuration"] = {"ifGenerationMatch": str(if_match)}
    return _rpc(url, "SendMessage", params)


def _race(urls: list[str], task_id: str, expected: int) -> list[dict[str, Any]]:
    """A follow-up for generation ``expected`` sent to each of ``urls`` at once: the
    answers, in the order they came."""
    outcomes: list[dict[str, Any]] = []
    barrier = threading.Barrier(len(urls))

    def follow_up(url: str) -> None:
        barrier.wait()
        outcomes.append(_send(url, "ask", task_id, if_match=expected))

    threads = [threading.Thread(target=follow_up, args=(url,)) for url in urls]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return outcomes


def _generation(url: str, task_id: str) -> int:
    return int(_rpc(url, "GetTask", {"id": task_id})["result"]["generation"])


def test_two_processes_agree_wake_each_other_and_take_one_follow_up(
        pair: tuple[Replica, Replica]) -> None:
    a, b = pair
    task = _send(a.url, "chunks 3")["result"]["task"]
    generation = int(task["generation"])
    assert generation == 6  # created, working, three chunks, input-required
    assert _generation(b.url, task["id"]) == generation
    rest = f"{b.url}/tasks/{task['id']}"
    assert int(httpx.get(rest, headers=V11, timeout=30).json()["generation"]) == generation

    got: list[dict[str, Any]] = []
    poll = threading.Thread(target=lambda: got.append(_rpc(
        b.url, "GetTask", {"id": task["id"], "currentGeneration": str(generation)})))
    poll.start()
    time.sleep(0.5)  # held by B
    began = time.monotonic()
    _send(a.url, "ask", task["id"])
    poll.join(25)
    assert got and int(got[0]["result"]["generation"]) > generation, got
    assert time.monotonic() - began < 5.0  # woken through the bus, not at the maximum wait
    # the same over HTTP+JSON: a GET held by B, answered when A commits
    generation = _generation(a.url, task["id"])
    held: list[httpx.Response] = []
    poll = threading.Thread(target=lambda: held.append(httpx.get(
        f"{rest}?currentGeneration={generation}", headers=V11, timeout=30)))
    poll.start()
    time.sleep(0.5)  # held by B
    began = time.monotonic()
    _send(a.url, "ask", task["id"])
    poll.join(25)
    assert held and int(held[0].json()["generation"]) > generation, held
    assert time.monotonic() - began < 5.0
    # and over gRPC: a GetTask held by B, answered when A commits
    generation = _generation(a.url, task["id"])
    with httpx.Client(timeout=30) as client:
        d = GRPC11(client, b.url)
        polled: list[m.Task] = []
        poll = threading.Thread(target=lambda: polled.append(d.call(c.GetTask(  # type: ignore[arg-type]
            id=task["id"], current_generation=generation))))
        poll.start()
        time.sleep(0.5)  # held by B
        began = time.monotonic()
        _send(a.url, "ask", task["id"])
        poll.join(25)
        assert polled and polled[0].generation > generation, polled
        assert time.monotonic() - began < 5.0  # woken through the bus (maximum wait: 20 s)

    for _ in range(5):
        task = _send(a.url, "ask")["result"]["task"]
        expected = int(task["generation"])
        outcomes = _race([a.url, b.url], task["id"], expected)
        taken = [o for o in outcomes if "result" in o]
        refused = [o["error"]["code"] for o in outcomes if "error" in o]
        assert len(taken) == 1 and refused == [-32010], outcomes
        assert _generation(a.url, task["id"]) == _generation(b.url, task["id"]) == expected + 2


def test_every_loser_of_a_race_for_one_generation_is_told_of_the_mismatch(
        pair: tuple[Replica, Replica]) -> None:
    """Six follow-ups for one generation at once, three to each replica: one is taken,
    and every other is refused with TaskGenerationMismatch (-32010), the error a caller
    that sent ``ifGenerationMatch`` asked to be told. On PostgreSQL some losers were
    told InvalidTaskState (-32004) instead: their write lost the store's own check."""
    a, b = pair
    for _ in range(3):
        task = _send(a.url, "ask")["result"]["task"]
        expected = int(task["generation"])
        outcomes = _race([a.url, b.url] * 3, task["id"], expected)
        taken = [o for o in outcomes if "result" in o]
        refused = [o["error"] for o in outcomes if "error" in o]
        assert len(taken) == 1, outcomes
        assert [e["code"] for e in refused] == [-32010] * 5, refused
        assert all(int(e["data"][0]["metadata"]["expectedGeneration"]) == expected
                   for e in refused if e.get("data")), refused
