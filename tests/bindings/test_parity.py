"""The same scenarios over every binding and dialect, on a real server on loopback:
JSON-RPC, HTTP+JSON and gRPC, each in v1.0 and v0.3. Each scenario's canonical outcome
(ids and timestamps left out) must be the one JSON-RPC v1.0 gives; errors must carry
each binding's own status (DIALECTS.md §f.2). The drivers are in ``drivers.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest

from interlingua import Agent
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from interlingua.server.auth import APIKeyAuth, AuthConfig
from interlingua.server.auth.limits import Limits, RateLimit
from interlingua.server.push.settings import PushSettings
from tests.live import live_grpc_agent

from .chunks_agent import write_chunks
from .drivers import DRIVERS, Driver, Refused

ALICE = {"X-API-Key": "alice-" + "a" * 20}
BOB = {"X-API-Key": "bob-" + "b" * 20}




AGENT = Agent("Worker", "Writes in chunks.", write_chunks, push_notifications=True)
PUSH = PushSettings(allow_http=True, allow_private_networks=True)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with live_grpc_agent(AGENT, push=PUSH) as (url, _):
        yield url


@pytest.fixture(scope="module")
def secured() -> Iterator[str]:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE["X-API-Key"],
                                                  "bob": BOB["X-API-Key"]})})
    with live_grpc_agent(AGENT, auth=auth) as (url, _):
        yield url


@pytest.fixture(scope="module")
def strict() -> Iterator[str]:
    with live_grpc_agent(AGENT, message_ids="strict") as (url, _):
        yield url


@pytest.fixture
def limited() -> Iterator[str]:
    limits = Limits(max_parts=2, rate_limit=RateLimit(rate=0.001, burst=4))
    with live_grpc_agent(AGENT, limits=limits) as (url, _):
        yield url


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as cl:
        yield cl


@pytest.fixture(params=list(DRIVERS))
def kind(request: pytest.FixtureRequest) -> type[Driver]:
    return DRIVERS[request.param]


def reference(client: httpx.Client, url: str, **kw: Any) -> Driver:
    return DRIVERS["jsonrpc-1.0"](client, url, **kw)


# ------------------------------------------------------------------------ helpers

_VOLATILE = {"id", "task_id", "context_id", "message_id", "artifact_id", "timestamp"}


def shape(value: Any) -> Any:
    """A canonical object without what differs run to run (ids, timestamps)."""
    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in _VOLATILE}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip(msgspec.to_builtins(value))


def message(text: str) -> m.Message:
    return m.Message(message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text=text)])


def send(text: str, *, blocking: bool = True, streaming: bool = False) -> c.SendMessage:
    return c.SendMessage(message=message(text), config=c.SendConfig(blocking=blocking),
                         streaming=streaming)


def send_task(d: Driver, text: str, **kw: Any) -> m.Task:
    result = d.call(send(text, **kw))
    assert isinstance(result, m.Task)
    return result


# ---------------------------------------------------------------------- scenarios


def test_send(kind: type[Driver], server: str, client: httpx.Client) -> None:
    task = send_task(kind(client, server), "3")
    assert task.status.state is m.TaskState.COMPLETED
    assert shape(task) == shape(send_task(reference(client, server), "3"))


def test_stream(kind: type[Driver], server: str, client: httpx.Client) -> None:
    events = kind(client, server).stream(send("3", streaming=True))
    ids = [i for i, _ in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    expected = reference(client, server).stream(send("3", streaming=True))
    assert [shape(e) for _, e in events] == [shape(e) for _, e in expected]
    last = events[-1][1]
    assert isinstance(last, m.StatusUpdate) and last.status.state is m.TaskState.COMPLETED


def test_resubscribe_replays_after_last_event_id(kind: type[Driver], server: str,
                                                 client: httpx.Client) -> None:
    d = kind(client, server)
    first = d.stream(send("6 0.05", streaming=True), limit=3)
    task = first[0][1]
    assert isinstance(task, m.Task)
    rest = d.stream(c.SubscribeToTask(id=task.id), last_event_id=first[-1][0])
    ids = [i for i, _ in first + rest]
    assert ids == list(range(ids[0], ids[0] + len(ids))), ids  # nothing lost, nothing twice
    items = [e for _, e in first + rest]
    assert sum(isinstance(e, m.ArtifactUpdate) for e in items) == 6
    final = items[-1]
    assert isinstance(final, m.StatusUpdate) and final.status.state is m.TaskState.COMPLETED
    # the same replay over another binding gives the same events
    again = reference(client, server).stream(c.SubscribeToTask(id=task.id),
                                             last_event_id=first[-1][0])
    assert [(i, shape(e)) for i, e in again] == [(i, shape(e)) for i, e in rest]


def test_get(kind: type[Driver], server: str, client: httpx.Client) -> None:
    d = kind(client, server)
    task = send_task(d, "2")
    got = d.call(c.GetTask(id=task.id, history_length=1))
    assert isinstance(got, m.Task)
    assert len(got.history) == 1
    assert shape(got) == shape(reference(client, server).call(
        c.GetTask(id=task.id, history_length=1)))


@pytest.mark.parametrize("kind", [n for n, d in DRIVERS.items() if d.lists_tasks],
                         indirect=True)
def test_list(kind: type[Driver], server: str, client: httpx.Client) -> None:
    d = kind(client, server)
    task = send_task(d, "1")
    call = c.ListTasks(context_id=task.context_id, page_size=5, include_artifacts=True,
                       status=m.TaskState.COMPLETED)
    page = d.call(call)
    assert isinstance(page, c.ListTasksResult)
    assert [t.id for t in page.tasks] == [task.id]
    assert page.tasks[0].artifacts
    assert shape(page) == shape(reference(client, server).call(call))


def test_cancel(kind: type[Driver], server: str, client: httpx.Client) -> None:
    d = kind(client, server)
    task = send_task(d, "slow", blocking=False)
    canceled = d.call(c.CancelTask(id=task.id))
    assert isinstance(canceled, m.Task) and canceled.status.state is m.TaskState.CANCELED
    with pytest.raises(Refused) as again:
        d.call(c.CancelTask(id=task.id))
    status, code = {"jsonrpc-1.0": (200, "-32002"), "jsonrpc-0.3": (200, "-32002"),
                    "rest-1.0": (400, "TASK_NOT_CANCELABLE"),
                    "rest-0.3": (409, "TaskNotCancelableError"),
                    "grpc-1.0": ("FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
                    "grpc-0.3": ("FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")}[kind.name]
    assert (again.value.status, again.value.reason) == (status, code)


def test_push_config_crud(kind: type[Driver], server: str, client: httpx.Client) -> None:
    d = kind(client, server)
    task = send_task(d, "slow", blocking=False)
    try:
        config = m.PushConfig(url="http://127.0.0.1:9/hook", id="cfg-1", token="tok")
        made = d.call(c.SetPushConfig(task_id=task.id, config=config))
        assert isinstance(made, m.PushConfig)
        assert (made.id, made.url, made.token) == ("cfg-1", config.url, "tok")
        got = d.call(c.GetPushConfig(task_id=task.id, config_id="cfg-1"))
        assert isinstance(got, m.PushConfig) and got.url == config.url
        listed = d.call(c.ListPushConfigs(task_id=task.id))
        assert isinstance(listed, list) and [p.id for p in listed] == ["cfg-1"]
        # the config set over this binding is the one every binding sees
        seen = reference(client, server).call(c.ListPushConfigs(task_id=task.id))
        assert isinstance(seen, list) and [p.id for p in seen] == ["cfg-1"]
        assert d.call(c.DeletePushConfig(task_id=task.id, config_id="cfg-1")) is None
        assert d.call(c.ListPushConfigs(task_id=task.id)) == []
    finally:
        d.call(c.CancelTask(id=task.id))


def test_task_not_found(kind: type[Driver], server: str, client: httpx.Client) -> None:
    with pytest.raises(Refused) as refused:
        kind(client, server).call(c.GetTask(id="no-such-task"))
    status, code = {"jsonrpc-1.0": (200, "-32001"), "jsonrpc-0.3": (200, "-32001"),
                    "rest-1.0": (404, "TASK_NOT_FOUND"), "rest-0.3": (404, "TaskNotFoundError"),
                    "grpc-1.0": ("NOT_FOUND", "TASK_NOT_FOUND"),
                    "grpc-0.3": ("NOT_FOUND", "TASK_NOT_FOUND")}[kind.name]
    assert (refused.value.status, refused.value.reason) == (status, code)


def test_subscribe_to_a_finished_task(kind: type[Driver], server: str,
                                                 client: httpx.Client) -> None:
    d = kind(client, server)
    task = send_task(d, "1")
    if kind.version == "0.3":  # v0.3 answers with the task as it ended
        events = d.stream(c.SubscribeToTask(id=task.id))
        last = events[-1][1]
        assert isinstance(last, m.Task | m.StatusUpdate)
        assert (last.status.state is m.TaskState.COMPLETED)
        return
    with pytest.raises(Refused) as refused:
        d.stream(c.SubscribeToTask(id=task.id))
    status = {"jsonrpc-1.0": (200, "-32004"), "rest-1.0": (400, "UNSUPPORTED_OPERATION"),
              "grpc-1.0": ("FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")}
    assert (refused.value.status, refused.value.reason) == status[kind.name]


def test_authentication_and_owners(kind: type[Driver], secured: str,
                                   client: httpx.Client) -> None:
    with pytest.raises(Refused) as anonymous:
        kind(client, secured).call(c.GetTask(id="whatever"))
    assert anonymous.value.status == (401 if not kind.name.startswith("grpc")
                                      else "UNAUTHENTICATED")
    alice, bob = kind(client, secured, headers=ALICE), kind(client, secured, headers=BOB)
    task = send_task(alice, "1")
    assert isinstance(alice.call(c.GetTask(id=task.id)), m.Task)
    with pytest.raises(Refused) as foreign:  # another owner's task does not exist for bob
        bob.call(c.GetTask(id=task.id))
    assert foreign.value.status == {"jsonrpc": 200, "rest": 404,
                                    "grpc": "NOT_FOUND"}[kind.name.partition("-")[0]]


@pytest.mark.parametrize("kind", [n for n, d in DRIVERS.items() if d.has_tenants],
                         indirect=True)
def test_tenants(kind: type[Driver], server: str, client: httpx.Client) -> None:
    acme = kind(client, server, tenant="acme")
    task = send_task(acme, "1")
    assert isinstance(acme.call(c.GetTask(id=task.id)), m.Task)
    # the same task over the other binding, in the same tenant
    other = DRIVERS["rest-1.0" if kind.name == "jsonrpc-1.0" else "jsonrpc-1.0"]
    assert isinstance(other(client, server, tenant="acme").call(c.GetTask(id=task.id)), m.Task)
    for elsewhere in (kind(client, server), kind(client, server, tenant="globex")):
        with pytest.raises(Refused):
            elsewhere.call(c.GetTask(id=task.id))


def test_a_repeated_message_id_answers_the_same_task(kind: type[Driver], server: str,
                                                    client: httpx.Client) -> None:
    d = kind(client, server)
    call = send("2")
    first = d.call(call)
    again = d.call(call)
    assert isinstance(first, m.Task) and isinstance(again, m.Task)
    assert again.id == first.id
    # the same message id over another binding: the same task too
    assert isinstance(other := reference(client, server).call(call), m.Task)
    assert other.id == first.id


def test_idempotent_retry(kind: type[Driver], server: str, strict: str,
                          client: httpx.Client) -> None:
    """A message id sent again with other content is a new message, and each
    message's exact retry (blocking or not) gets the task that message made; in
    strict mode the other content is refused, with the binding's invalid-argument
    status."""
    d = kind(client, server)
    call = send("2")
    changed = c.SendMessage(message=msgspec.structs.replace(
        call.message, parts=[m.TextPart(text="1")]))
    first, other = d.call(call), d.call(changed)
    assert isinstance(first, m.Task) and isinstance(other, m.Task)
    assert first.id != other.id
    assert shape(other) == shape(send_task(reference(client, server), "1"))
    for sent, task in ((call, first), (changed, other)):
        for blocking in (True, False):
            retry = msgspec.structs.replace(sent, config=c.SendConfig(blocking=blocking))
            again = d.call(retry)
            assert isinstance(again, m.Task) and again.id == task.id
    d = kind(client, strict)
    first = d.call(call)
    assert isinstance(first, m.Task)
    with pytest.raises(Refused) as refused:
        d.call(changed)
    status = {"jsonrpc-1.0": (200, "-32602"), "jsonrpc-0.3": (200, "-32602"),
              "rest-1.0": 400, "rest-0.3": 422, "grpc-1.0": "INVALID_ARGUMENT",
              "grpc-0.3": "INVALID_ARGUMENT"}[kind.name]
    got = (refused.value.status, refused.value.reason) if isinstance(status, tuple) \
        else refused.value.status
    assert got == status, refused.value
    assert "already used for a different message" in refused.value.message
    again = d.call(call)
    assert isinstance(again, m.Task) and again.id == first.id


def test_a_task_made_here_is_continued_there(kind: type[Driver], server: str,
                                            client: httpx.Client) -> None:
    """A task made over one binding is read and canceled over another."""
    d = kind(client, server)
    task = send_task(d, "slow", blocking=False)
    ref = reference(client, server)
    got = ref.call(c.GetTask(id=task.id))
    assert isinstance(got, m.Task) and got.context_id == task.context_id
    canceled = ref.call(c.CancelTask(id=task.id))
    assert isinstance(canceled, m.Task) and canceled.status.state is m.TaskState.CANCELED
    seen = d.call(c.GetTask(id=task.id))
    assert isinstance(seen, m.Task) and seen.status.state is m.TaskState.CANCELED


def test_limits(kind: type[Driver], limited: str, client: httpx.Client) -> None:
    """A message over the part limit is refused; then the rate limit (a burst of four
    per client address; a server of its own for each binding) refuses with 429."""
    d = kind(client, limited)
    many = c.SendMessage(message=m.Message(
        message_id=new_id(), role=m.Role.USER,
        parts=[m.TextPart(text="1"), m.TextPart(text="2"), m.TextPart(text="3")]))
    with pytest.raises(Refused) as over:
        d.call(many)
    status = {"jsonrpc-1.0": 200, "jsonrpc-0.3": 200, "rest-1.0": 400, "rest-0.3": 422,
              "grpc-1.0": "INVALID_ARGUMENT", "grpc-0.3": "INVALID_ARGUMENT"}
    assert over.value.status == status[kind.name]
    statuses = []
    for _ in range(6):
        try:
            d.call(c.GetTask(id="none"))
        except Refused as exc:
            statuses.append(exc.status)
    assert (429 if not kind.name.startswith("grpc") else "RESOURCE_EXHAUSTED") in statuses
