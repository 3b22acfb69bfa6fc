"""``interlingua serve`` replicas as real processes sharing a store and a bus."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import httpx

from tests.ports import free_port

from .procs import Process
from .sse_client import V1, rpc, v1_message

AGENT = "tests/e2e/replica_agent.py"


class Replica(Process):
    grace = 40.0
    ready_timeout = 30.0

    def __init__(self, store: str, bus: str, *, lease_timeout: float = 2.0,
                 extra: tuple[str, ...] = (), agent: str = AGENT) -> None:
        super().__init__()
        self.agent = agent
        self.store, self.bus = store, bus
        self.lease_timeout = lease_timeout
        self.extra = extra

    def start(self, wait: bool = True, **popen: Any) -> Replica:
        popen.setdefault("stdout", subprocess.DEVNULL)
        self.launch(
            [sys.executable, "-m", "interlingua.cli.main", "serve", self.agent,
             "--port", str(self.port), "--store", self.store, "--bus", self.bus,
             "--lease-timeout", str(self.lease_timeout), "--log-level", "warning",
             *self.extra],
            env=None, **popen)
        if wait:
            self.wait_ready()
        return self


class GrpcReplica(Replica):
    """A replica serving gRPC too, on a port of its own (``grpc_port``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.grpc_port = free_port()
        self.extra = (*self.extra, "--grpc-port", str(self.grpc_port))


def replica_pair(pg_database: str, name: str, kind: type[Replica] = Replica,
                 **replica: Any) -> Iterator[tuple[Replica, Replica]]:
    """Two replicas (of ``kind``) on a schema of their own in ``pg_database`` and a Redis
    bus prefix of their own (both named after ``name``), started together, stopped at
    the end."""
    from ..conftest import REDIS_HOST, REDIS_PORT, missing, reachable
    from ..services import new_name, with_option

    if not reachable(REDIS_HOST, REDIS_PORT):
        missing("Redis on 127.0.0.1:6379")
    store = with_option(pg_database, f"schema={new_name(name)}")
    bus = f"redis://{REDIS_HOST}:{REDIS_PORT}/0?prefix={new_name(name)}"
    replicas = [kind(store, bus, **replica) for _ in range(2)]
    for r in replicas:
        r.start(wait=False)
    try:
        for r in replicas:
            r.wait_ready()
        yield replicas[0], replicas[1]
    finally:
        for r in replicas:
            r.stop()


@contextlib.contextmanager
def sqlite_pair(store: str, kind: type[Replica] = Replica, *, settle: bool = False,
                **replica: Any) -> Iterator[tuple[Replica, Replica]]:
    """Two replicas (of ``kind``) on the store ``store`` (a SQLite file; a PostgreSQL
    schema too) with no bus: the first started alone (it migrates the store), then the
    second; with ``settle``, until each has seen the other's lease (heartbeats 0.5 s
    apart). Stopped at the end."""
    first = kind(store, "local://", **replica).start()
    second = kind(store, "local://", **replica)
    try:
        second.start()
        if settle:
            time.sleep(1.2)
        yield first, second
    finally:
        second.stop()
        first.stop()


def pair_urls(request: Any, tmp_path_factory: Any, name: str, kind: type[Replica] = Replica,
              *, settle: bool = False, **replica: Any) -> Iterator[tuple[str, str]]:
    """For a fixture parametrized ``["sqlite", "postgresql"]``: the URLs of two
    replicas on one SQLite file (``sqlite_pair``), or on a PostgreSQL schema with a
    Redis bus (``replica_pair``), both named after ``name``."""
    if request.param == "postgresql":
        for first, second in replica_pair(request.getfixturevalue("pg_database"), name, kind,
                                          **replica):
            yield first.url, second.url
        return
    store = f"sqlite:///{tmp_path_factory.mktemp(name)}/tasks.db"
    with sqlite_pair(store, kind, settle=settle, **replica) as (first, second):
        yield first.url, second.url


def call(url: str, method: str, params: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
    r = httpx.post(url + "/", headers=V1, timeout=timeout, json=rpc(method, params))
    body: dict[str, Any] = r.json()
    return body


def send(url: str, text: str, *, wait: bool = False, **message: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"message": v1_message(text, **message)}
    if not wait:
        params["configuration"] = {"returnImmediately": True}
    body = call(url, "SendMessage", params)
    assert "result" in body, body
    task: dict[str, Any] = body["result"]["task"]
    return task


def state_of(url: str, task_id: str) -> str:
    return str(call(url, "GetTask", {"id": task_id})["result"]["status"]["state"])


def wait_state(url: str, task_id: str, states: set[str], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while True:
        state = state_of(url, task_id)
        if state in states or time.monotonic() > deadline:
            return state
        time.sleep(0.05)


def tally(name: str, expected: Sequence[Hashable], got: Sequence[Hashable]
          ) -> tuple[int, int, int]:
    """(delivered, lost, duplicated) of the events a client got against those it
    should have, printed for the record (``pytest -rP`` shows it)."""
    lost = len(set(expected) - set(got))
    duplicated = len(got) - len(set(got))
    print(f"tally: {name}: delivered {len(got)}, expected {len(expected)}, "
          f"lost {lost}, duplicated {duplicated}")
    return len(got), lost, duplicated


def cancel_answers_the_other(a: str, b: str, rpc_of: Any, within: float) -> None:
    """A blocking send to replica ``a`` of a turn that works, writing nothing, for 60 s
    ("hold"), canceled on replica ``b``: ``a``'s caller is answered with the task
    canceled within ``within`` s of the cancel (``rpc_of(url, method, params)``: the
    JSON-RPC result, as the test speaks it)."""
    import threading
    import uuid

    answered: list[tuple[float, dict[str, Any]]] = []

    def blocking_send() -> None:
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                   "parts": [{"text": "hold"}]}
        answered.append((time.monotonic(), rpc_of(a, "SendMessage", {"message": message})["task"]))

    sender = threading.Thread(target=blocking_send, daemon=True)
    sender.start()
    tasks: list[dict[str, Any]] = []
    for _ in range(100):
        tasks = rpc_of(b, "ListTasks", {})["tasks"]
        if tasks and tasks[0]["status"]["state"] == "TASK_STATE_WORKING":
            break
        time.sleep(0.1)
    canceled_at = time.monotonic()
    assert rpc_of(b, "CancelTask", {"id": tasks[0]["id"]})["status"]["state"] == \
        "TASK_STATE_CANCELED"
    sender.join(within + 20)
    assert answered, "the blocking caller was not answered"
    at, task = answered[0]
    assert task["status"]["state"] == "TASK_STATE_CANCELED", task
    assert at - canceled_at < within, at - canceled_at
