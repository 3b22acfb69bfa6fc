"""The same scenarios over every binding and dialect, on a real server on loopback:
JSON-RPC, HTTP+JSON and gRPC, each in v1.0 and v0.3. Each scenario's canonical outcome
(ids and timestamps left out) must be the one JSON-RPC v1.0 gives; errors must carry
each binding's own status (DIALECTS.md §f.2). The drivers are in ``drivers.py``.

Hostile input is met on the mesh too (``mqtt-sam``: the same agent on the machine's
Mosquitto, in a namespace of the module's own).
"""

from __future__ import annotations

import contextlib
import re
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
from interlingua.server.engine import EngineConfig
from interlingua.server.push.settings import PushSettings
from tests.live import bind_loopback, live_grpc_agent, live_server, url_of
from tests.mesh.helpers import BROKER, namespace, need_broker

from .chunks_agent import write_chunks
from .drivers import DRIVERS, DRIVERS_11, JSONRPC, MQTT, Driver, Refused, token

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


@pytest.fixture(scope="module")
def small_answers() -> Iterator[str]:
    with live_grpc_agent(AGENT, max_answer_bytes=4096) as (url, _):
        yield url


@contextlib.contextmanager
def on_every_binding(**create_app_kwargs: Any) -> Iterator[tuple[str, str]]:
    """The agent on every binding, the mesh too (in a namespace of its own), made with
    ``create_app_kwargs``: (its base URL, its mesh address)."""
    from interlingua import create_app
    from interlingua.bindings.grpc import add_grpc
    from interlingua.mesh import MeshSettings, attach

    need_broker()
    ns = namespace()
    sock = bind_loopback()
    app = create_app(AGENT, public_url=url_of(sock), store="memory://", freeze_gc=False,
                     **create_app_kwargs)
    add_grpc(app, "127.0.0.1:0")
    attach(app, MeshSettings(url=BROKER, namespace=ns, card_interval=0.5, session_expiry=30),
           name="Worker")
    with live_server(app, sock=sock) as url:
        yield url, f"{BROKER}/{ns}/Worker"


@pytest.fixture(scope="module")
def everywhere() -> Iterator[tuple[str, str]]:
    """The agent on every binding, the mesh too: (its base URL, its mesh address)."""
    with on_every_binding() as where:
        yield where


@pytest.fixture(scope="module")
def together() -> Iterator[str]:
    """The agent served with another (``create_app([a, b])``), their gRPC on one port
    that hands each request to the agent its tenant names: the agent's base URL."""
    from interlingua import create_app
    from interlingua.bindings.grpc import add_grpc

    sock = bind_loopback()
    app = create_app([AGENT, Agent("Other", "Writes in chunks too.", write_chunks)],
                     public_url=url_of(sock), store="memory://", freeze_gc=False)
    add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url:
        yield f"{url}/agents/{AGENT.name}"


HOSTILE: dict[str, type[Driver]] = {**DRIVERS, MQTT.name: MQTT}
#: a ``binding`` asked for by name (indirectly): the agent of ``together`` on the v1.0
#: gRPC port it shares, reached by its tenant
SHARED = "grpc-1.0 together"


@pytest.fixture(params=list(HOSTILE))
def binding(request: pytest.FixtureRequest, everywhere: tuple[str, str],
            client: httpx.Client) -> Iterator[Driver]:
    """A driver of each binding (the mesh's too) for the agent of ``everywhere``; or
    ``SHARED``'s."""
    if request.param == SHARED:
        yield DRIVERS["grpc-1.0"](client, request.getfixturevalue("together"),
                                  tenant=AGENT.name)
        return
    kind = HOSTILE[request.param]
    url, mesh = everywhere
    d = kind(client, mesh if kind is MQTT else url)
    yield d
    if isinstance(d, MQTT):
        d.close()


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


def test_a_streamed_send_keeps_to_its_history_length(kind: type[Driver], server: str,
                                                      client: httpx.Client) -> None:
    """``configuration.historyLength`` holds the stream's task snapshot as it holds a
    unary send's answer (the snapshot carried the whole history on every binding)."""
    call = c.SendMessage(message=message("2"), config=c.SendConfig(history_length=0),
                         streaming=True)
    tasks = [e for _, e in kind(client, server).stream(call) if isinstance(e, m.Task)]
    assert tasks
    # (v0.3's proto cannot say 0: its int32 field reads 0 as unset, all of it)
    assert len(tasks[0].history) == (1 if kind.name == "grpc-0.3" else 0), tasks[0]


def test_get(kind: type[Driver], server: str, client: httpx.Client) -> None:
    d = kind(client, server)
    task = send_task(d, "2")
    got = d.call(c.GetTask(id=task.id, history_length=1))
    assert isinstance(got, m.Task)
    assert len(got.history) == 1
    assert shape(got) == shape(reference(client, server).call(
        c.GetTask(id=task.id, history_length=1)))


@pytest.fixture(scope="module")
def one_by_default() -> Iterator[str]:
    """The agent answering with the last message of a task's history unless another
    length is asked for."""
    with live_grpc_agent(AGENT, engine_config=EngineConfig(default_history_length=1)) as (
            url, _):
        yield url


@pytest.mark.parametrize("asked", [0, 1, 2, None])
def test_get_keeps_to_its_history_length(kind: type[Driver], one_by_default: str,
                                         client: httpx.Client, asked: int | None) -> None:
    """``historyLength``: 0 none, N the last N, unset the agent's default, on every
    binding. v0.3's gRPC request cannot say 0 (its int32 is not optional, and its
    proto reads 0 as no length asked for): there 0 is the default, which the client
    then leaves out (tests/cli, tests/client)."""
    d = kind(client, one_by_default)
    task = send_task(d, "2")
    whole = reference(client, one_by_default).call(c.GetTask(id=task.id, history_length=10))
    assert isinstance(whole, m.Task) and len(whole.history) > 2, whole
    got = d.call(c.GetTask(id=task.id, history_length=asked))
    assert isinstance(got, m.Task)
    if asked is None or (asked == 0 and kind.name == "grpc-0.3"):
        asked = 1
    ids = [h.message_id for h in whole.history]
    assert [h.message_id for h in got.history] == ids[len(ids) - asked:]


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
    # pageSize is the page size used for the answer (spec §6.5), not the count
    assert (page.page_size, page.total_size) == (5, 1)
    assert shape(page) == shape(reference(client, server).call(call))
    whole = d.call(c.ListTasks(context_id=task.context_id))
    assert isinstance(whole, c.ListTasksResult) and (whole.page_size, whole.total_size) == (50, 1)


@pytest.mark.parametrize("kind", [n for n, d in DRIVERS.items() if d.lists_tasks],
                         indirect=True)
def test_list_after_an_instant_finer_than_a_millisecond(
        kind: type[Driver], server: str, client: httpx.Client) -> None:
    """statusTimestampAfter is "at or after": an instant inside a task's millisecond
    does not admit it (it was rounded down to that millisecond, which did)."""
    d = kind(client, server)
    task = send_task(d, "1")
    stamp = task.status.timestamp
    assert stamp is not None and stamp.endswith("Z") and len(stamp) == 24

    def listed(after: str) -> list[str]:
        page = d.call(c.ListTasks(context_id=task.context_id, status_timestamp_after=after))
        assert isinstance(page, c.ListTasksResult)
        return [t.id for t in page.tasks]

    assert listed(stamp) == [task.id]
    assert listed(stamp[:-1] + "000Z") == [task.id]  # the same instant, finer written
    assert listed(stamp[:-1] + "400Z") == []
    assert listed(stamp[:-1] + "000001Z") == []  # past the microsecond too


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


def test_a_push_config_id_is_held_to_the_rule_of_every_id(
        kind: type[Driver], server: str, client: httpx.Client) -> None:
    """The rule of core/ids.py: at most 256 bytes of UTF-8, no control character. A
    config id was held to 256 characters and to C0 controls only: 129 "é" (258 bytes)
    and DEL were taken where every other id refuses them."""
    d = kind(client, server)
    task = send_task(d, "slow", blocking=False)
    try:
        refused_ids = {"é" * 129: "is longer than 256 bytes",
                       "c\x7f": "holds a control character (U+007F)",
                       "c\x85": "holds a control character (U+0085)",
                       "c\n": "holds a control character (U+000A)"}
        for config_id, said in refused_ids.items():
            with pytest.raises(Refused) as refused:
                d.call(c.SetPushConfig(task_id=task.id, config=m.PushConfig(
                    url="http://127.0.0.1:9/hook", id=config_id)))
            assert f"the push notification config id {said}" in refused.value.message, \
                (config_id, refused.value)
        for config_id in ("é" * 128, "x" * 256):
            made = d.call(c.SetPushConfig(task_id=task.id, config=m.PushConfig(
                url="http://127.0.0.1:9/hook", id=config_id)))
            assert isinstance(made, m.PushConfig) and made.id == config_id
    finally:
        d.call(c.CancelTask(id=task.id))


@pytest.mark.parametrize("kind", [n for n, d in DRIVERS.items() if d.version == "1.0"],
                         indirect=True)
def test_a_tasks_push_configs_come_in_the_pages_asked_for(
        kind: type[Driver], server: str, client: httpx.Client) -> None:
    """v1.0's pageSize and pageToken (the other versions have none): pages by config
    id, each with the token of the next, the last with none; a token not of this
    server is refused, as ListTasks refuses one. Before, pageSize was passed over (every
    config in one page) and every pageToken refused."""
    d = kind(client, server)
    task = send_task(d, "slow", blocking=False)
    try:
        for i in (2, 0, 1):
            d.call(c.SetPushConfig(task_id=task.id, config=m.PushConfig(
                url=f"http://127.0.0.1:9/h{i}", id=f"c{i}")))
        first = d.call(c.ListPushConfigs(task_id=task.id, page_size=2))
        assert isinstance(first, c.PushConfigsPage)
        assert [p.id for p in first.configs] == ["c0", "c1"] and first.next_page_token
        last = d.call(c.ListPushConfigs(task_id=task.id, page_size=2,
                                        page_token=first.next_page_token))
        assert isinstance(last, c.PushConfigsPage)
        assert ([p.id for p in last.configs], last.next_page_token) == (["c2"], "")
        whole = d.call(c.ListPushConfigs(task_id=task.id, page_size=5))
        assert isinstance(whole, c.PushConfigsPage)
        assert ([p.id for p in whole.configs], whole.next_page_token) == (
            ["c0", "c1", "c2"], "")
        # unpaged, as every version lists: all, in the order they were set
        listed = d.call(c.ListPushConfigs(task_id=task.id))
        assert isinstance(listed, list) and [p.id for p in listed] == ["c2", "c0", "c1"]
        for token in ("YzE=", "not a token", "cGMxOv8="):  # the last: not UTF-8 after it
            with pytest.raises(Refused) as refused:
                d.call(c.ListPushConfigs(task_id=task.id, page_token=token))
            # named as the caller sent it (gRPC: the proto field)
            named = AS_SENT[kind.name]["pageToken"]
            assert f"Invalid params: {named} is not a token from a previous" \
                in refused.value.message, refused.value.message
    finally:
        d.call(c.CancelTask(id=task.id))


#: each binding's invalid-params refusal (status, reason or code)
INVALID_PARAMS = {"jsonrpc-1.0": (200, "-32602"), "jsonrpc-0.3": (200, "-32602"),
                  "rest-1.0": (400, "INVALID_PARAMS"), "rest-0.3": (422, "InvalidParamsError"),
                  "grpc-1.0": ("INVALID_ARGUMENT", "INVALID_PARAMS"),
                  "grpc-0.3": ("INVALID_ARGUMENT", "INVALID_PARAMS")}


def test_an_empty_push_config_id_is_invalid_params_on_every_binding(
        kind: type[Driver], server: str, client: httpx.Client) -> None:
    """A get or a delete naming the config by an empty id (HTTP+JSON: the path
    ``.../pushNotificationConfigs/``) is the binding's invalid-params refusal. Before,
    HTTP+JSON's get answered the list (the trailing slash dropped) and its delete 405,
    JSON-RPC and gRPC v1.0 answered the task's first config, v0.3's gRPC refused."""
    d = kind(client, server)
    task = send_task(d, "slow", blocking=False)
    try:
        d.call(c.SetPushConfig(task_id=task.id, config=m.PushConfig(
            url="http://127.0.0.1:9/hook", id="cfg-1")))
        for call in (c.GetPushConfig(task_id=task.id, config_id=""),
                     c.DeletePushConfig(task_id=task.id, config_id="")):
            with pytest.raises(Refused) as refused:
                d.call(call)
            assert (refused.value.status, refused.value.reason) == INVALID_PARAMS[kind.name], \
                (call, refused.value)
            said = "name must be tasks/{id}/pushNotificationConfigs/{configId}" \
                if kind.name == "grpc-0.3" else "must not be empty"
            assert said in refused.value.message, refused.value
        listed = d.call(c.ListPushConfigs(task_id=task.id))
        assert isinstance(listed, list) and [p.id for p in listed] == ["cfg-1"]
    finally:
        d.call(c.CancelTask(id=task.id))


#: each binding's not-found refusal (status, reason or code)
NOT_FOUND = {"jsonrpc-1.0": (200, "-32001"), "jsonrpc-0.3": (200, "-32001"),
             "rest-1.0": (404, "TASK_NOT_FOUND"), "rest-0.3": (404, "TaskNotFoundError"),
             "grpc-1.0": ("NOT_FOUND", "TASK_NOT_FOUND"),
             "grpc-0.3": ("NOT_FOUND", "TASK_NOT_FOUND")}


def test_an_unknown_push_config_of_a_task_is_not_found_on_every_binding(
        kind: type[Driver], server: str, client: httpx.Client) -> None:
    """A get of a config the task does not have: TaskNotFoundError, as v1.0 §3.1.8
    says ("The push notification configuration does not exist") and §3.3.2's resource
    errors ("configuration not found"), naming the id (before: invalid params)."""
    d = kind(client, server)
    task = send_task(d, "slow", blocking=False)
    try:
        with pytest.raises(Refused) as refused:
            d.call(c.GetPushConfig(task_id=task.id, config_id="nocfg"))
        assert (refused.value.status, refused.value.reason) == NOT_FOUND[kind.name], \
            refused.value
        assert f"task {task.id} has no push notification config with id 'nocfg'" in \
            refused.value.message, refused.value
    finally:
        d.call(c.CancelTask(id=task.id))


def _config_member(name: str, value: str) -> Any:
    """An edit of a v1.0 send's params: ``value`` as its push config's ``name``."""
    def edit(doc: dict[str, Any]) -> None:
        doc["configuration"]["taskPushNotificationConfig"][name] = value

    return edit


def _send_with_config(task_id: str | None = None, text: str = "1") -> c.SendMessage:
    msg = m.Message(message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text=text)],
                    task_id=task_id, context_id=new_id() if task_id is None else None)
    return c.SendMessage(message=msg, config=c.SendConfig(push_config=m.PushConfig(
        url="http://127.0.0.1:9/hook", id="in-send")))


V10 = [n for n, d in DRIVERS.items() if d.version == "1.0"]


@pytest.mark.parametrize("kind", V10, indirect=True)
def test_a_push_config_in_a_send_naming_another_task_is_refused(
        kind: type[Driver], server: str, client: httpx.Client) -> None:
    """A send's ``taskPushNotificationConfig`` whose ``taskId`` is not the send's task
    is the binding's invalid-params refusal, as a create naming two tasks is, and
    nothing is made (before: its taskId was dropped and the config kept on the
    send's task). One naming the send's own task is taken."""
    # named as the caller sent it: gRPC's by its proto fields
    named = "task_push_notification_config.task_id" if kind.name.startswith("grpc") \
        else "taskPushNotificationConfig.taskId"
    new = _send_with_config()
    with pytest.raises(Refused) as refused:
        kind(client, server, edit=_config_member("taskId", "other")).call(new)
    assert (refused.value.status, refused.value.reason) == INVALID_PARAMS[kind.name]
    assert f"{named} 'other' is not the send's task (it starts a " \
        "new one)" in refused.value.message, refused.value
    assert _ran_in(client, server, new.message.context_id or "") == 0
    task = send_task(kind(client, server), "ask")
    assert task.status.state is m.TaskState.INPUT_REQUIRED
    try:
        with pytest.raises(Refused) as refused:
            kind(client, server, edit=_config_member("taskId", "other")).call(
                _send_with_config(task.id, "ask"))
        assert (refused.value.status, refused.value.reason) == INVALID_PARAMS[kind.name]
        assert f"{named} 'other' is not the send's task " \
            f"{task.id!r}" in refused.value.message, refused.value
        assert kind(client, server).call(c.ListPushConfigs(task_id=task.id)) == []
        again = kind(client, server, edit=_config_member("taskId", task.id)).call(
            _send_with_config(task.id, "ask"))
        assert isinstance(again, m.Task) and again.id == task.id
        listed = kind(client, server).call(c.ListPushConfigs(task_id=task.id))
        assert isinstance(listed, list) and [p.id for p in listed] == ["in-send"]
    finally:
        kind(client, server).call(c.CancelTask(id=task.id))


@pytest.mark.parametrize("kind", V10, indirect=True)
def test_a_push_config_in_a_send_naming_another_tenant_is_refused(
        kind: type[Driver], server: str, client: httpx.Client) -> None:
    """A send's ``taskPushNotificationConfig`` whose ``tenant`` is not the send's (its
    ``tenant`` member, HTTP+JSON's path) is the binding's invalid-params refusal, and
    nothing is made (before: the tenant was dropped). The send's own tenant is taken;
    named only there it is the send's tenant, as a create's ``tenant`` is."""
    new = _send_with_config()
    with pytest.raises(Refused) as refused:
        kind(client, server, tenant="acme", edit=_config_member("tenant", "zzz")).call(new)
    assert (refused.value.status, refused.value.reason) == INVALID_PARAMS[kind.name]
    assert "'zzz'" in refused.value.message and "'acme'" in refused.value.message, \
        refused.value
    for tenant in ("acme", None):
        assert _ran_in(client, server, new.message.context_id or "", tenant) == 0
    made = kind(client, server, tenant="acme", edit=_config_member("tenant", "acme")).call(
        _send_with_config())
    assert isinstance(made, m.Task)
    assert isinstance(reference(client, server, tenant="acme").call(c.GetTask(id=made.id)),
                      m.Task)
    alone = _send_with_config()  # the config's tenant alone: the send's
    made = kind(client, server, edit=_config_member("tenant", "globex")).call(alone)
    assert isinstance(made, m.Task)
    assert isinstance(reference(client, server, tenant="globex").call(c.GetTask(id=made.id)),
                      m.Task)
    with pytest.raises(Refused):
        reference(client, server).call(c.GetTask(id=made.id))


def test_api_key_credentials_that_cannot_be_read_are_refused(
        kind: type[Driver], server: str, client: httpx.Client) -> None:
    """An ApiKey config's credentials that are JSON but no key (one nested deeper than
    a decoder goes, too): the binding's invalid-params refusal, never an internal error."""
    d = kind(client, server)
    task = send_task(d, "slow", blocking=False)
    status = {"jsonrpc-1.0": (200, "-32602"), "jsonrpc-0.3": (200, "-32602"),
              "rest-1.0": 400, "rest-0.3": 422, "grpc-1.0": "INVALID_ARGUMENT",
              "grpc-0.3": "INVALID_ARGUMENT"}[kind.name]
    try:
        for credentials in ('{"name": 5}', '{"x": ' + "[" * 3000 + "]" * 3000 + "}"):
            config = m.PushConfig(url="http://127.0.0.1:9/hook", id="key", authentication=(
                m.AuthInfo(schemes=["ApiKey"], credentials=credentials)))
            with pytest.raises(Refused) as refused:
                d.call(c.SetPushConfig(task_id=task.id, config=config))
            got = (refused.value.status, refused.value.reason) if isinstance(status, tuple) \
                else refused.value.status
            assert got == status, refused.value
            assert "credentials for ApiKey must be" in refused.value.message
    finally:
        d.call(c.CancelTask(id=task.id))


#: ApiKey header names a config may not take (the server sets them, or they frame or
#: route the request), as a config names them, and what the refusal says of each
RESERVED_KEY_HEADERS = {
    "Transfer-Encoding": "frames or routes the request",
    "content-length": "frames or routes the request",
    "HOST": "frames or routes the request",
    "Connection": "frames or routes the request",
    "Proxy-Authorization": "frames or routes the request",
    "X-A2A-Notification-Id": "the server sets it",
    "x-a2a-signature": "the server sets it",
    "A2A-Version": "the server sets it",
    "Content-Type": "the server sets it",
}


def test_api_key_headers_the_server_sets_or_that_frame_the_request_are_refused(
        kind: type[Driver], server: str, client: httpx.Client) -> None:
    """An ApiKey config's header was sent after the server's own: a Transfer-Encoding
    beside the Content-Length (a smuggling shape), a Host or Content-Length that made
    every delivery fail, a second notification id that a receiver deduped on. Refused
    at creation, in any case, with the binding's invalid-params refusal naming it; a
    header of the key's own is taken."""
    d = kind(client, server)
    task = send_task(d, "slow", blocking=False)
    status = {"jsonrpc-1.0": (200, "-32602"), "jsonrpc-0.3": (200, "-32602"),
              "rest-1.0": 400, "rest-0.3": 422, "grpc-1.0": "INVALID_ARGUMENT",
              "grpc-0.3": "INVALID_ARGUMENT"}[kind.name]
    try:
        for name, why in RESERVED_KEY_HEADERS.items():
            config = m.PushConfig(url="http://127.0.0.1:9/hook", id="key", authentication=(
                m.AuthInfo(schemes=["ApiKey"], credentials=msgspec.json.encode(
                    {"in": "header", "name": name, "value": "v"}).decode())))
            with pytest.raises(Refused) as refused:
                d.call(c.SetPushConfig(task_id=task.id, config=config))
            got = (refused.value.status, refused.value.reason) if isinstance(status, tuple) \
                else refused.value.status
            assert got == status, refused.value
            assert f"ApiKey header {name!r}" in refused.value.message, refused.value
            assert why in refused.value.message, refused.value
        assert d.call(c.ListPushConfigs(task_id=task.id)) == []
        for name in ("X-API-Key", "Authorization"):  # Authorization: ApiKey sets no other
            config = m.PushConfig(url="http://127.0.0.1:9/hook", id="key", authentication=(
                m.AuthInfo(schemes=["ApiKey"], credentials=msgspec.json.encode(
                    {"in": "header", "name": name, "value": "v"}).decode())))
            assert isinstance(d.call(c.SetPushConfig(task_id=task.id, config=config)),
                              m.PushConfig)
    finally:
        d.call(c.CancelTask(id=task.id))


def test_task_not_found(kind: type[Driver], server: str, client: httpx.Client) -> None:
    with pytest.raises(Refused) as refused:
        kind(client, server).call(c.GetTask(id="no-such-task"))
    status, code = NOT_FOUND[kind.name]
    assert (refused.value.status, refused.value.reason) == (status, code)


@pytest.mark.parametrize("name", [*DRIVERS, *DRIVERS_11])
def test_the_extended_card_of_an_agent_whose_card_offers_none(
        name: str, server: str, client: httpx.Client) -> None:
    """GetExtendedAgentCard of an agent whose card says ``extendedAgentCard`` false:
    UnsupportedOperationError in v1.0 and 1.1 (§3.3.4: NotConfigured is for an agent
    that offers one and has none), on every binding. v0.3 answers what its schema has
    for it (-32007, as the official v0.3 SDK does), and its HTTP+JSON ``GET /v1/card``
    and gRPC ``GetAgentCard`` the public card."""
    d = {**DRIVERS, **DRIVERS_11}[name](client, server)
    expected = {"jsonrpc-1.0": (200, "-32004"), "jsonrpc-1.1": (200, "-32004"),
                "rest-1.0": (400, "UNSUPPORTED_OPERATION"),
                "rest-1.1": (400, "UNSUPPORTED_OPERATION"),
                "grpc-1.0": ("FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"),
                "grpc-1.1": ("FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"),
                "jsonrpc-0.3": (200, "-32007")}.get(name)
    if expected is None:  # the caller's card: the public one, as none other is
        card = d.call(c.GetExtendedCard())
        assert isinstance(card, m.AgentCard) and card.name == "Worker"
        assert not card.capabilities.extended_card
        return
    with pytest.raises(Refused) as refused:
        d.call(c.GetExtendedCard())
    assert (refused.value.status, refused.value.reason) == expected, refused.value
    if name.endswith(("1.0", "1.1")):
        assert "extended" in refused.value.message.lower(), refused.value


#: task ids a v0.1 client may choose that a URL must escape: a "/" (which split the id
#: in two on HTTP+JSON), an escape-like "%41" (decoded twice into "A"), a ":" before a
#: verb's name, a "%", a space, a letter past ASCII
ESCAPED_IDS = ["v01/a/b", "v01-%41", "v01:cancel", "v01-100%", "v01 space", "v01-\u00e9t\u00e9"]


@pytest.mark.parametrize("task_id", ESCAPED_IDS)
@pytest.mark.parametrize("kind", [n for n in DRIVERS if n != "jsonrpc-0.3"], indirect=True)
def test_a_task_whose_id_a_url_escapes_is_reached_on_every_binding(
        kind: type[Driver], server: str, client: httpx.Client, task_id: str) -> None:
    """A URL's path (HTTP+JSON) or a resource name (v0.3's gRPC) carries the id in
    full. (JSON-RPC v0.3 is left out: its ``tasks/get`` of a task a v0.1 client made
    is answered in v0.1, the dialect that made it, DIALECTS.md §h.3; its ids are JSON
    strings, escaped by nothing.)"""
    task_id = f"{new_id()}-{kind.name}-{task_id}"  # what the URL escapes, last
    made = client.post(server + "/", json={
        "jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {
            "id": task_id, "message": {"role": "user", "parts": [{"type": "text", "text": "1"}]}}})
    assert made.json()["result"]["id"] == task_id, made.text
    d = kind(client, server)
    got = d.call(c.GetTask(id=task_id))
    assert isinstance(got, m.Task) and got.id == task_id
    assert got.status.state is m.TaskState.COMPLETED
    with pytest.raises(Refused) as refused:  # found, and finished: not "no such task"
        d.call(c.CancelTask(id=task_id))
    assert "can no longer be canceled" in refused.value.message, refused.value
    assert d.call(c.ListPushConfigs(task_id=task_id)) == []
    with pytest.raises(Refused) as missing:  # a config id escaped as the task's is
        d.call(c.GetPushConfig(task_id=task_id, config_id="cfg/1:%41"))
    assert "has no push notification config with id 'cfg/1:%41'" in missing.value.message, \
        missing.value


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


def test_a_fresh_subscribe_to_a_task_waiting_for_input(kind: type[Driver], server: str,
                                                       client: httpx.Client) -> None:
    """v0.3 ends the subscription at the interruption with the status (``final: true``)
    after the task, as it ends one at a terminal state; v1.0 follows the task on, the
    task first (with an id of its own)."""
    d = kind(client, server)
    task = send_task(d, "ask")
    assert task.status.state is m.TaskState.INPUT_REQUIRED
    if kind.version == "1.0":  # the stream stays open for the next turns
        (held, first), = d.stream(c.SubscribeToTask(id=task.id), limit=1)
        assert isinstance(first, m.Task) and first.status.state is m.TaskState.INPUT_REQUIRED
        assert held is not None
        return
    events = d.stream(c.SubscribeToTask(id=task.id))
    assert [type(e) for _, e in events] == [m.Task, m.StatusUpdate], events
    # one snapshot, under one id, named by its status alone (the reader has none before)
    assert events[0][0] is None and events[1][0] is not None, events
    last = events[-1][1]
    assert isinstance(last, m.StatusUpdate) and last.status.state is m.TaskState.INPUT_REQUIRED


@pytest.mark.parametrize("name", [n for n, d in DRIVERS.items() if d.version == "0.3"])
def test_a_resume_after_the_first_event_of_a_snapshot_still_ends_with_its_final_status(
        name: str, server: str, client: httpx.Client) -> None:
    """A reader of a snapshot that ends a stream (the task, then its ``final`` status)
    that is cut off after the task resumes from the last event id it holds (none:
    it subscribes afresh), and still hears the final status: the task's frame names
    no id the status would be sent after."""
    d = DRIVERS[name](client, server)
    task = send_task(d, "ask")
    (held, first), = d.stream(c.SubscribeToTask(id=task.id), limit=1)
    assert isinstance(first, m.Task)
    rest = d.stream(c.SubscribeToTask(id=task.id), last_event_id=held)
    assert rest, f"nothing after event {held}: the final status was lost"
    last = rest[-1][1]
    assert isinstance(last, m.StatusUpdate) and last.status.state is m.TaskState.INPUT_REQUIRED
    # resumed from the id the whole snapshot left: nothing more to hear
    assert d.stream(c.SubscribeToTask(id=task.id), last_event_id=rest[-1][0]) == []


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


def _extended(base: m.AgentCard, principal: Any) -> m.AgentCard:
    return msgspec.structs.replace(base, description=f"Extended for {principal.id}.")


async def _no_extended_card_for_bob(principal: Any, operation: str, task: Any,
                                    skill: str | None) -> bool:
    return not (operation == "extended-card" and principal.id == "bob")


@pytest.fixture(scope="module")
def carded() -> Iterator[str]:
    """The agent with an extended card, behind API keys, its policy refusing bob that card."""
    agent = Agent("Worker", "Writes in chunks.", write_chunks, extended_card=_extended)
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE["X-API-Key"],
                                                  "bob": BOB["X-API-Key"]})},
                      authorize=_no_extended_card_for_bob)
    with live_grpc_agent(agent, auth=auth) as (url, _):
        yield url


def test_a_caller_refused_the_extended_card(kind: type[Driver], carded: str,
                                            client: httpx.Client) -> None:
    """A caller the policy refuses the extended card: refused where the call is the
    extended card alone (JSON-RPC, v1.0's HTTP+JSON and gRPC), the public card where it
    is the caller's card (v0.3's HTTP+JSON ``GET /v1/card`` and gRPC ``GetAgentCard``),
    as a caller with no credentials is shown it there."""
    own = kind(client, carded, headers=ALICE).call(c.GetExtendedCard())
    assert isinstance(own, m.AgentCard) and own.description == "Extended for alice."
    bob = kind(client, carded, headers=BOB)
    if kind.name in ("rest-0.3", "grpc-0.3"):
        public = bob.call(c.GetExtendedCard())
        assert isinstance(public, m.AgentCard) and public.description == "Writes in chunks."
        return
    with pytest.raises(Refused) as refused:
        bob.call(c.GetExtendedCard())
    assert refused.value.status == (403 if not kind.name.startswith("grpc")
                                    else "PERMISSION_DENIED"), refused.value
    assert "bob is not allowed to extended-card" in refused.value.message, refused.value


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


#: the burst of ``rate_limited``: what a caller may ask at once (the rate refills none
#: within a test)
BURST = 4
#: one more request than the burst, and another
ASKED = BURST + 2


@pytest.fixture
def rate_limited() -> Iterator[str]:
    limits = Limits(rate_limit=RateLimit(rate=0.001, burst=BURST))
    with live_grpc_agent(AGENT, limits=limits) as (url, _):
        yield url


def _rate_limited(refused: Refused) -> bool:
    """A refusal of the rate limit, in any binding's status."""
    return refused.status in (429, "RESOURCE_EXHAUSTED")


@pytest.mark.parametrize("way", [*DRIVERS, "jsonrpc-1.0 batch", "jsonrpc-0.3 batch"])
def test_the_rate_limit_admits_as_many_requests_on_every_binding(
        way: str, rate_limited: str, client: httpx.Client) -> None:
    """A burst of four per client address (a server of its own for each way of asking):
    of six requests, four are admitted, whether each is a request of its own over
    JSON-RPC, HTTP+JSON or gRPC, or all six come in one JSON-RPC batch (which paid one
    token for up to 100 requests). A request refused for its rate is told when to come
    back, in the batch as alone."""
    name, _, batched = way.partition(" ")
    d = DRIVERS[name](client, rate_limited)
    asked = [c.GetTask(id=f"none-{i}") for i in range(ASKED)]
    admitted: list[str] = []
    limited: list[str] = []
    if not batched:
        for call in asked:
            with pytest.raises(Refused) as refused:
                d.call(call)
            (limited if _rate_limited(refused.value) else admitted).append(refused.value.message)
    else:
        assert isinstance(d, JSONRPC)
        items = [d._body(call).replace(b'"id":1,', b'"id":%d,' % i, 1)
                 for i, call in enumerate(asked)]
        r = client.post(rate_limited + "/", content=b"[" + b",".join(items) + b"]",
                        headers={**d.headers, "Content-Type": "application/json"})
        assert r.status_code == 200, r.text
        answers = r.json()
        assert [a["id"] for a in answers] == list(range(ASKED))
        for a in answers:
            error = a["error"]
            (limited if "Rate limit" in error["message"] else admitted).append(error["message"])
            if "Rate limit" in error["message"]:
                assert error["code"] == -32603, error
    assert len(admitted) == BURST and len(limited) == ASKED - BURST, (admitted, limited)
    assert all("not found" in m.lower() for m in admitted), admitted
    assert all(re.search(r"retry in \d+ s", m) for m in limited), limited
    # the tokens are spent, by lone requests as by a batch's: the next request is refused
    with pytest.raises(Refused) as after:
        d.call(c.GetTask(id="none"))
    assert _rate_limited(after.value), after.value


# ------------------------------------------------------------------ hostile input


def marked_send() -> c.SendMessage:
    """A send with a marked string (``token``) in every string position its model has."""
    t = token
    msg = m.Message(
        message_id=t(1), role=m.Role.USER, context_id=t(2),
        parts=[m.TextPart(text=t(3), metadata={t(4): t(5)}),
               m.DataPart(data={t(6): [t(7), {t(8): t(9)}]}),
               m.FilePart(uri="https://files.example.com/" + t(10), filename=t(11),
                          media_type="text/plain")],
        metadata={t(12): t(13)}, extensions=["https://example.com/ext/" + t(14)],
        reference_task_ids=[t(15)])
    return c.SendMessage(message=msg, config=c.SendConfig(accepted_output_modes=[t(16)]),
                         metadata={t(17): t(18)})


#: each binding's own parse error (status, reason or code)
PARSE_ERROR = {"jsonrpc-1.0": (200, "-32700"), "jsonrpc-0.3": (200, "-32700"),
               "rest-1.0": (400, "PARSE_ERROR"), "rest-0.3": (400, "JSONParseError"),
               "grpc-1.0": ("INVALID_ARGUMENT", "PARSE_ERROR"),
               "grpc-0.3": ("INVALID_ARGUMENT", "PARSE_ERROR"),
               "mqtt-sam": ("reply", "-32700")}


@pytest.mark.parametrize("binding", [*HOSTILE, SHARED], indirect=True)
def test_invalid_utf8_in_any_string_is_a_parse_error(binding: Driver) -> None:
    """Every string of a request (member names, values, ids in a path or query, the
    strings of a protobuf message), one at a time made bytes that are not UTF-8: the
    binding's own parse error each time, never a 500, an internal error or a result;
    on the gRPC port several agents share too, which reads the request's tenant first."""
    calls: list[c.Call] = [marked_send(), c.GetTask(id=token(20))]
    if not isinstance(binding, MQTT):
        calls.append(c.SetPushConfig(task_id=token(21), config=m.PushConfig(
            url="http://127.0.0.1:9/" + token(22), id=token(23), token=token(24))))
    if binding.lists_tasks:
        calls.append(c.ListTasks(context_id=token(25), page_token=token(26)))
    seen = {}
    for call in calls:
        answers = list(binding.corrupted(call))
        assert answers, call
        seen.update({f"{type(call).__name__} {where}": answer for where, answer in answers})
    expected = PARSE_ERROR[binding.name]
    wrong = {where: (answer.status, answer.reason, answer.message) if answer else "taken"
             for where, answer in seen.items()
             if answer is None or (answer.status, answer.reason) != expected}
    assert not wrong, wrong
    assert len(seen) >= 15, sorted(seen)
    for answer in seen.values():
        assert answer is not None and "UTF-8" in answer.message, answer.message
        if binding.name == "rest-1.0":  # google.rpc.Status: the code's name
            assert answer.body["error"]["status"] == "INVALID_ARGUMENT", answer.body


def nested(levels: int) -> Any:
    """A JSON value ``levels`` levels deep (``[[[1]]]`` is 3)."""
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


#: what each binding answers a send whose metadata nests past ``Limits.max_nesting``
TOO_DEEP = {"jsonrpc-1.0": (200, "-32602"), "jsonrpc-0.3": (200, "-32602"),
            "rest-1.0": (400, "INVALID_PARAMS"), "rest-0.3": (422, "InvalidParamsError"),
            "grpc-1.0": ("INVALID_ARGUMENT", "INVALID_PARAMS"),
            "grpc-0.3": ("INVALID_ARGUMENT", "INVALID_PARAMS"), "mqtt-sam": ("reply", "-32602")}


def test_a_send_nested_deeper_than_every_binding_carries_is_refused(
        binding: Driver, everywhere: tuple[str, str], client: httpx.Client) -> None:
    """Metadata and data 33 levels deep (past the default ``max_nesting``, 32): the
    binding's invalid-params answer naming the member, and no task; 32 levels are
    taken, and the task made is read back, over gRPC too (protobuf reads no deeper
    than 100 levels, two a level of JSON)."""
    url, _ = everywhere
    deep = m.Message(message_id=new_id(), role=m.Role.USER, parts=[
        m.TextPart(text="1"), m.DataPart(data={"x": nested(32)})])  # 33 with its object
    shallow = m.Message(message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text="1")],
                        metadata={"x": nested(31)})
    for call, where in (
            (c.SendMessage(message=deep), "message.parts[1].data"),
            (c.SendMessage(message=shallow, metadata={"x": nested(32)}), "metadata")):
        with pytest.raises(Refused) as refused:
            binding.call(call)
        assert (refused.value.status, refused.value.reason) == TOO_DEEP[binding.name], \
            refused.value
        assert f"{where} nests more than 32 levels deep" in refused.value.message
    task = binding.call(c.SendMessage(message=shallow))
    assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED
    # read in 1.0, whose calls name their dialect (a v0.3 tasks/get of a task made in
    # SAM's dialect is answered in that dialect, the task's)
    for kind in (DRIVERS["jsonrpc-1.0"], DRIVERS["rest-1.0"], DRIVERS["grpc-1.0"]):
        read = kind(client, url).call(c.GetTask(id=task.id))
        assert isinstance(read, m.Task) and read.history[0].metadata is not None, kind
        assert read.history[0].metadata["x"] == nested(31), kind


def test_an_id_no_store_can_keep_is_refused(binding: Driver) -> None:
    """A message id past 256 bytes (PostgreSQL's indexes cannot hold one much longer), or
    holding a control character: the binding's invalid-params answer
    (tests/server/test_ids_every_store.py: on every store), and an id at the limit is
    taken."""
    for length, taken in ((257, False), (256, True)):
        msg = m.Message(message_id=new_id().ljust(length, "x"), role=m.Role.USER,
                        parts=[m.TextPart(text="1")])
        if taken:
            task = binding.call(c.SendMessage(message=msg))
            assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED
            continue
        with pytest.raises(Refused) as refused:
            binding.call(c.SendMessage(message=msg))
        assert (refused.value.status, refused.value.reason) == TOO_DEEP[binding.name], \
            refused.value
        assert f"{_message_id(binding.name)} is longer than 256 bytes" in refused.value.message
    # a control character, which logs and terminals would act on
    msg = m.Message(message_id=new_id() + "\x1b[2J", role=m.Role.USER,
                    parts=[m.TextPart(text="1")])
    with pytest.raises(Refused) as refused:
        binding.call(c.SendMessage(message=msg))
    assert f"{_message_id(binding.name)} holds a control character (U+001B)" \
        in refused.value.message


def _message_id(binding: str) -> str:
    """How a refusal of ``binding`` names a send's message id."""
    return f"Invalid params: {AS_SENT[binding]['message.messageId']}"


#: how each binding names a member in a refusal of a call it has read (an id no store
#: can keep, a page token not of this server): as its caller sent it, JSON-RPC as a
#: path in its params, HTTP+JSON as the body's member or the query parameter, gRPC as
#: the proto field (v0.3's message is the request's ``request``)
AS_SENT: dict[str, dict[str, str]] = {
    "jsonrpc-1.0": {k: f"params.{k}" for k in (
        "message.messageId", "message.contextId", "message.taskId",
        "message.referenceTaskIds[1]", "pageToken", "contextId")},
    "rest-1.0": {"message.messageId": "message.messageId",
                 "message.contextId": "message.contextId", "message.taskId": "message.taskId",
                 "message.referenceTaskIds[1]": "message.referenceTaskIds[1]",
                 "pageToken": "query parameter pageToken",
                 "contextId": "query parameter contextId"},
    "grpc-1.0": {"message.messageId": "message.message_id",
                 "message.contextId": "message.context_id", "message.taskId": "message.task_id",
                 "message.referenceTaskIds[1]": "message.reference_task_ids[1]",
                 "pageToken": "page_token", "contextId": "context_id"},
    "grpc-0.3": {"message.messageId": "request.message_id",
                 "message.contextId": "request.context_id",
                 "message.taskId": "request.task_id"},
}
AS_SENT["jsonrpc-0.3"] = {k: v for k, v in AS_SENT["jsonrpc-1.0"].items()
                          if k.startswith("message.")}
AS_SENT["rest-0.3"] = {k: v for k, v in AS_SENT["rest-1.0"].items()
                       if k.startswith("message.") and "reference" not in k}
# the mesh's SAM: its params' snake case
AS_SENT["mqtt-sam"] = {"message.messageId": "params.message.message_id",
                       "message.contextId": "params.message.context_id",
                       "message.taskId": "params.message.task_id"}


def test_a_refusal_of_a_call_read_names_its_members_as_the_caller_sent_them(
        kind: type[Driver], server: str, client: httpx.Client) -> None:
    """Ids no store can keep and a page token not of this server are refused once the
    call is read, naming the member in the caller's own terms: a gRPC caller its proto
    fields (``message.context_id``, ``page_token``), not the camelCase of JSON. Before,
    every binding said ``message.contextId``, ``pageToken``."""
    d = kind(client, server)
    named = AS_SENT[kind.name]
    bad = "c\x1b"  # (a control character: no store keeps it)
    refusals: list[tuple[c.Call, str, str]] = [
        (c.SendMessage(message=m.Message(message_id=new_id(), role=m.Role.USER, context_id=bad,
                                         parts=[m.TextPart(text="1")])),
         "message.contextId", "holds a control character (U+001B)"),
        (c.SendMessage(message=m.Message(message_id=new_id(), role=m.Role.USER, task_id=bad,
                                         parts=[m.TextPart(text="1")])),
         "message.taskId", "holds a control character (U+001B)")]
    if "message.referenceTaskIds[1]" in named:  # (v0.3's proto has none)
        refusals.append((c.SendMessage(message=m.Message(
            message_id=new_id(), role=m.Role.USER, reference_task_ids=["ok", bad],
            parts=[m.TextPart(text="1")])), "message.referenceTaskIds[1]",
            "holds a control character (U+001B)"))
    if kind.lists_tasks:
        refusals += [
            (c.ListTasks(page_token="nope"), "pageToken",
             "is not a token from a previous ListTasks response"),
            (c.ListTasks(context_id=bad), "contextId", "holds a control character (U+001B)")]
    for call, member, fault in refusals:
        with pytest.raises(Refused) as refused:
            d.call(call)
        assert (refused.value.status, refused.value.reason) == INVALID_PARAMS[kind.name], \
            refused.value
        assert f"Invalid params: {named[member]} {fault}" in refused.value.message, \
            (member, refused.value.message)


def test_an_http_json_refusal_names_a_member_in_the_spelling_it_was_sent_in(
        server: str, client: httpx.Client) -> None:
    """ProtoJSON readers take the proto's names too: an HTTP+JSON caller that spelt a
    member so (a body's ``message_id``, a query's ``page_token``) is told of it so."""
    v1 = {"A2A-Version": "1.0"}
    resp = client.post(f"{server}/message:send", headers=v1, json={"message": {
        "message_id": "m" * 300, "role": "ROLE_USER", "parts": [{"text": "1"}]}})
    assert resp.status_code == 400, resp.text
    assert "Invalid params: message.message_id is longer than 256 bytes" in \
        resp.json()["error"]["message"], resp.text
    resp = client.get(f"{server}/tasks?page_token=nope&context_id=c", headers=v1)
    assert resp.status_code == 400, resp.text
    assert "Invalid params: query parameter page_token is not a token" in \
        resp.json()["error"]["message"], resp.text


#: an answer over max_answer_bytes, on each binding: the spec's internal error (§3.3.2),
#: not RESOURCE_EXHAUSTED, which tells a caller to back off and ask the same again
TOO_LARGE = {"jsonrpc-1.0": (200, "-32603"), "jsonrpc-0.3": (200, "-32603"),
             "rest-1.0": (500, "INTERNAL_ERROR"), "rest-0.3": (500, "InternalError"),
             "grpc-1.0": ("INTERNAL", "INTERNAL_ERROR"),
             "grpc-0.3": ("INTERNAL", "INTERNAL_ERROR")}


def test_an_answer_over_the_budget_is_refused_naming_it(kind: type[Driver], small_answers: str,
                                                        client: httpx.Client) -> None:
    """A server whose answers may hold 4 KiB: a task whose history holds a 6 KB message
    is refused with the binding's error naming the limit; a small one is answered."""
    d = kind(client, small_answers)
    # made over JSON-RPC v1.0, whose send can leave the history out of its answer
    big = c.SendMessage(message=message("1 0 " + "x" * 6000),
                        config=c.SendConfig(history_length=0))
    task = reference(client, small_answers).call(big)
    assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED
    calls: list[c.Call] = [c.GetTask(id=task.id)]
    if kind.lists_tasks:
        calls.append(c.ListTasks(context_id=task.context_id, history_length=10))
    for call in calls:
        with pytest.raises(Refused) as over:
            d.call(call)
        assert (over.value.status, over.value.reason) == TOO_LARGE[kind.name], over.value
        assert "limit of 4096 bytes" in over.value.message, over.value.message
        if kind.name == "rest-1.0":  # the google.rpc.Status's code: the HTTP status's
            assert over.value.body["error"]["status"] == "INTERNAL", over.value.body
    small = send_task(d, "1")
    assert isinstance(d.call(c.GetTask(id=small.id)), m.Task)


def test_an_answer_over_the_budget_is_refused_on_the_mesh_too(client: httpx.Client) -> None:
    """The mesh (SAM's layout) holds its answers to ``max_answer_bytes`` as the other
    bindings do: a GetTask of a task past it is its JSON-RPC internal error naming the
    limit, where the whole task was published."""
    with on_every_binding(max_answer_bytes=4096) as (url, mesh):
        big = c.SendMessage(message=message("1 0 " + "x" * 6000),
                            config=c.SendConfig(history_length=0))
        task = reference(client, url).call(big)
        assert isinstance(task, m.Task)
        d = MQTT(client, mesh)
        try:
            with pytest.raises(Refused) as over:
                d.call(c.GetTask(id=task.id))
            assert over.value.reason == "-32603", over.value
            assert "limit of 4096 bytes" in over.value.message, over.value.message
            small = send_task(d, "1")
            assert isinstance(d.call(c.GetTask(id=small.id)), m.Task)
        finally:
            d.close()


@pytest.fixture(scope="module")
def small_batches() -> Iterator[str]:
    with live_grpc_agent(AGENT, max_batch_items=3) as (url, _):
        yield url


def _sends_in(ctx: str, n: int) -> list[c.SendMessage]:
    return [c.SendMessage(message=m.Message(message_id=new_id(), role=m.Role.USER,
                                            parts=[m.TextPart(text="1")], context_id=ctx))
            for _ in range(n)]


def _ran_in(client: httpx.Client, url: str, ctx: str, tenant: str | None = None) -> int:
    """How many tasks were made in context ``ctx`` (in ``tenant``)."""
    page = reference(client, url, tenant=tenant).call(c.ListTasks(context_id=ctx))
    assert isinstance(page, c.ListTasksResult)
    return len(page.tasks)


@pytest.mark.parametrize("name", ["jsonrpc-1.0", "jsonrpc-0.3"])
def test_a_batch_over_the_item_limit_is_one_error_and_nothing_runs(
        name: str, small_batches: str, client: httpx.Client) -> None:
    """A server whose batches may hold three requests, in each dialect of the one binding
    that has batches: four are one -32600 naming the limit, with id null, and none of
    them runs; three are three answers."""
    d = DRIVERS[name](client, small_batches)
    assert isinstance(d, JSONRPC)

    def batch(calls: list[c.SendMessage]) -> httpx.Response:
        items = [d._body(call).replace(b'"id":1,', b'"id":%d,' % i, 1)
                 for i, call in enumerate(calls)]
        return client.post(small_batches + "/", content=b"[" + b",".join(items) + b"]",
                           headers={**d.headers, "Content-Type": "application/json"})

    over, at = new_id(), new_id()
    answer = batch(_sends_in(over, 4)).json()
    assert answer == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600,
        "message": "Invalid Request: a batch of 4 requests is over the limit of 3"}}, answer
    assert _ran_in(client, small_batches, over) == 0
    answers = batch(_sends_in(at, 3)).json()
    assert [a["id"] for a in answers] == [0, 1, 2] and all("result" in a for a in answers)
    assert _ran_in(client, small_batches, at) == 3


@pytest.mark.parametrize("name", ["rest-1.0", "rest-0.3"])
def test_http_json_takes_no_batches(name: str, small_batches: str,
                                    client: httpx.Client) -> None:
    """HTTP+JSON has no batches: an array of sends is refused as the binding's bad
    params, and none of them runs (gRPC's requests are one message by their type)."""
    ctx = new_id()
    d = DRIVERS[name](client, small_batches)
    path = "/message:send" if name == "rest-1.0" else "/v1/message:send"
    docs = [msgspec.json.decode(d.codec.encode_call(call)[1]) for call in _sends_in(ctx, 2)]
    r = client.post(small_batches + path, json=docs, headers=d.headers)
    assert r.status_code == (400 if name == "rest-1.0" else 422), r.text
    assert "must be a JSON object" in r.text
    assert _ran_in(client, small_batches, ctx) == 0


def test_the_mesh_takes_no_batches(everywhere: tuple[str, str], client: httpx.Client) -> None:
    """Only JSON-RPC over HTTP has batches: on the mesh a batch is one -32600 on the
    reply topic, and none of its requests runs."""
    url, mesh = everywhere
    d = MQTT(client, mesh)
    try:
        ids = [new_id() for _ in range(3)]
        batch = b"[" + b",".join(d._body(c.SendMessage(message=m.Message(
            message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text="1")],
            task_id=None, context_id=ctx))) for ctx in ids) + b"]"
        answer = d.exchange(batch)
        assert answer["id"] is None and answer["error"]["code"] == -32600, answer
        assert "batches are not taken on the mesh" in answer["error"]["message"]
    finally:
        d.close()
    ref = reference(client, url)
    for ctx in ids:  # nothing of the batch ran
        page = ref.call(c.ListTasks(context_id=ctx))
        assert isinstance(page, c.ListTasksResult) and page.tasks == []


@pytest.mark.parametrize("name", [n for n in HOSTILE if not n.startswith("rest")])
def test_an_empty_task_id_is_invalid_params(name: str, everywhere: tuple[str, str],
                                            client: httpx.Client) -> None:
    """An empty task id names no task: the binding's invalid-params answer to a read, a
    cancel and a subscription (v0.3's JSON-RPC and the mesh said "task not found", their
    siblings invalid params). HTTP+JSON has no path with an empty id (``/tasks/`` is the
    list)."""
    kind = HOSTILE[name]
    url, mesh = everywhere
    binding = kind(client, mesh if kind is MQTT else url)
    for call in (c.GetTask(id=""), c.CancelTask(id=""), c.SubscribeToTask(id="")):
        with pytest.raises(Refused) as refused:
            binding.call(call)
        got = (refused.value.status, refused.value.reason)
        assert got == TOO_DEEP[name], (call, refused.value)
