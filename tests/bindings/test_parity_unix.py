"""The parity suite's core scenarios over a binding that lives in the test suite
(``unix_binding.py``: line-delimited JSON on a Unix socket), registered with one
call (``create_app(..., bindings=[UnixBinding()])``): send, stream, replay after a
``Last-Event-ID``, get, cancel, a task made here and continued over JSON-RPC, the
errors (task not found, invalid params, invalid UTF-8 in any string, an oversized
line), the auth refusal and owners, the drain refusal. The scenarios without a
table of statuses are ``test_parity.py``'s own, run here with its driver
(``unix_driver.py``); the others compare with what JSON-RPC v1.0 answers."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.server.auth import APIKeyAuth, AuthConfig
from tests.live import live_agent

from .drivers import Driver, Refused, token
from .test_parity import (  # the test_* are the scenarios themselves, run here
    AGENT,
    ALICE,
    BOB,
    PUSH,
    marked_send,
    reference,
    send,
    send_task,
    test_a_repeated_message_id_answers_the_same_task,
    test_a_task_made_here_is_continued_there,
    test_get,
    test_push_config_crud,
    test_resubscribe_replays_after_last_event_id,
    test_send,
    test_stream,
)
from .unix_binding import UnixBinding
from .unix_driver import UnixDriver

__all__ = [
    "test_a_repeated_message_id_answers_the_same_task",
    "test_a_task_made_here_is_continued_there",
    "test_get",
    "test_push_config_crud",
    "test_resubscribe_replays_after_last_event_id",
    "test_send",
    "test_stream",
]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with live_agent(AGENT, push=PUSH, bindings=[UnixBinding()]) as url:
        yield url


@pytest.fixture(scope="module")
def secured() -> Iterator[str]:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE["X-API-Key"],
                                                  "bob": BOB["X-API-Key"]})})
    with live_agent(AGENT, auth=auth, bindings=[UnixBinding()]) as url:
        yield url


@pytest.fixture
def kind() -> type[Driver]:
    return UnixDriver


def test_the_card_names_the_socket(server: str, client: httpx.Client) -> None:
    card = client.get(server + "/.well-known/agent-card.json").json()
    (unix,) = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "JSONL+UNIX"]
    assert unix["url"].startswith("unix:///") and unix["protocolVersion"] == "1.0", unix


def _refused(call: c.Call, d: Driver) -> Refused:
    with pytest.raises(Refused) as refused:
        d.call(call)
    return refused.value


def test_cancel(server: str, client: httpx.Client) -> None:
    d = UnixDriver(client, server)
    task = send_task(d, "slow", blocking=False)
    canceled = d.call(c.CancelTask(id=task.id))
    assert isinstance(canceled, m.Task) and canceled.status.state is m.TaskState.CANCELED
    again = _refused(c.CancelTask(id=task.id), d)
    assert (again.status, again.reason) == (400, "-32002")
    # the code and message JSON-RPC gives
    ref = _refused(c.CancelTask(id=task.id), reference(client, server))
    assert (ref.reason, ref.message) == (again.reason, again.message)


def test_task_not_found(server: str, client: httpx.Client) -> None:
    refused = _refused(c.GetTask(id="no-such-task"), UnixDriver(client, server))
    assert (refused.status, refused.reason) == (404, "-32001")


def test_invalid_params(server: str, client: httpx.Client) -> None:
    d = UnixDriver(client, server)
    (doc,) = d.exchange(b'{"id":"x","method":"SendMessage","params":{"message":7}}\n')
    refused = d.refused(doc)
    assert refused is not None and doc["id"] == "x"
    assert (refused.status, refused.reason) == (400, "-32602")
    (doc,) = d.exchange(b'{"id":2,"method":"NoSuchMethod","params":{}}\n')
    refused = d.refused(doc)
    assert refused is not None and refused.reason == "-32601"


def test_invalid_utf8_in_any_string_is_a_parse_error(server: str,
                                                     client: httpx.Client) -> None:
    """Every string of a request line, one at a time made bytes that are not UTF-8:
    a parse error each time."""
    d = UnixDriver(client, server)
    seen = {}
    for call in (marked_send(), c.GetTask(id=token(20)),
                 c.ListTasks(context_id=token(25), page_token=token(26))):
        seen.update({f"{type(call).__name__} {where}": answer
                     for where, answer in d.corrupted(call)})
    assert len(seen) >= 15, sorted(seen)
    wrong = {where: answer for where, answer in seen.items()
             if answer is None or answer.reason != "-32700" or "UTF-8" not in answer.message}
    assert not wrong, wrong


def test_an_oversized_line_is_refused(server: str, client: httpx.Client) -> None:
    from interlingua.server.settings import ServiceSettings

    d = UnixDriver(client, server)
    huge = d.line(send("x" * ServiceSettings().max_body_bytes))
    (doc,) = d.exchange(huge)
    refused = d.refused(doc)
    assert refused is not None, "the oversized line was taken"
    assert refused.reason == "-32600" and "larger than the limit" in refused.message, doc


def test_a_version_this_server_does_not_speak_is_refused(server: str,
                                                         client: httpx.Client) -> None:
    d = UnixDriver(client, server, headers={"A2A-Version": "7.0"})
    refused = _refused(c.GetTask(id="whatever"), d)
    assert refused.reason == "-32009", refused


def test_authentication_and_owners(secured: str, client: httpx.Client) -> None:
    anonymous = _refused(c.GetTask(id="whatever"), UnixDriver(client, secured))
    assert anonymous.status == 401
    wrong = _refused(c.GetTask(id="whatever"),
                     UnixDriver(client, secured, headers={"X-API-Key": "nobody-" + "n" * 20}))
    assert wrong.status == 401
    alice = UnixDriver(client, secured, headers=ALICE)
    bob = UnixDriver(client, secured, headers=BOB)
    task = send_task(alice, "1")
    assert isinstance(alice.call(c.GetTask(id=task.id)), m.Task)
    foreign = _refused(c.GetTask(id=task.id), bob)  # another owner's task: not bob's
    assert (foreign.status, foreign.reason) == (404, "-32001")
    # what alice made here, she reads over JSON-RPC too
    got = reference(client, secured, headers=ALICE).call(c.GetTask(id=task.id))
    assert isinstance(got, m.Task) and got.id == task.id


@pytest.fixture
def draining() -> Iterator[str]:
    from interlingua.host import create_app
    from tests.live import bind_loopback, live_server, url_of

    sock = bind_loopback()
    app = create_app(AGENT, public_url=url_of(sock), store="memory://",
                     bindings=[UnixBinding()])
    with live_server(app, sock=sock) as url:
        app.state.engine.draining = True
        yield url


@pytest.mark.parametrize("streaming", [True, False], ids=["streaming", "blocking"])
def test_a_send_during_a_drain_is_refused(streaming: bool, draining: str,
                                          client: httpx.Client) -> None:
    d = UnixDriver(client, draining)
    call = send("1", streaming=streaming)
    with pytest.raises(Refused) as refused:
        d.stream(call) if streaming else d.call(call)
    assert (refused.value.status, refused.value.reason) == (503, "-32603")
    assert "shutting down" in refused.value.message
    page = d.call(c.ListTasks(page_size=10))
    assert isinstance(page, c.ListTasksResult) and page.tasks == []


def test_its_requests_are_counted_under_its_name(client: httpx.Client) -> None:
    """The front door labels what it counts with the binding's name, for any binding."""
    from tests.observability.test_metrics import _scrape, _value

    with live_agent(AGENT, metrics=True, bindings=[UnixBinding()]) as url:
        d = UnixDriver(client, url)
        send_task(d, "1")
        _refused(c.GetTask(id="no-such-task"), d)
        samples = _scrape(url)
    assert _value(samples, "interlingua_requests_total", method="SendMessage", dialect="1.0",
                  binding="unix", outcome="ok") == 1
    assert _value(samples, "interlingua_requests_total", method="GetTask", dialect="1.0",
                  binding="unix", outcome="TaskNotFound") == 1
