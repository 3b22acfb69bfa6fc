"""The official SDK clients (Python and JavaScript, 1.x and 0.3) call an interlingua agent.

Each test sends commands to a client driver (``peers/*_client_*``), which makes
the calls with the SDK's own client and answers with what the SDK parsed, in
the shape ``peers/pydriver.py`` describes. The agent is ``agent.py``, served
by ``interlingua.cli.serve.serve`` in its own process.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import CLIENT_ROWS, Peers
from .content import (
    DATA,
    DOUBLES_NOTE,
    FILE_ARG,
    STREAM_CHUNKS,
    TEXT,
    check_echo_parts,
    check_stream_events,
    has_doubles,
    scheme_kind,
)
from .harness import Delivery, Driver, Receiver, Reply, state_name
from .matrix import Row

DIRECTION = "client"
pytestmark = pytest.mark.interop

Note = Callable[..., None]


@pytest.fixture(params=CLIENT_ROWS, ids=[r.id for r in CLIENT_ROWS])
def peer(request: pytest.FixtureRequest) -> Row:
    row: Row = request.param
    return row


@pytest.fixture
def driver(peer: Row, peers: Peers) -> Driver:
    return peers.client(peer)


def _task(reply: Reply) -> dict[str, Any]:
    result = reply.value()
    assert result["kind"] == "task", result
    return dict(result)


# ---------------------------------------------------------------------------- card


def test_card(peer: Row, driver: Driver, interlingua_agents: dict[str, str]) -> None:
    # The client the driver built from the card speaks the row's dialect.
    transport = driver.call("info").value()["transport"]
    compat = re.search("Compat|Legacy", transport) is not None
    native_03 = peer.env.rsplit("-", 1)[1].startswith("0.")
    assert compat == (peer.dialect == "0.3" and not native_03), transport

    url = interlingua_agents["card"]
    card = driver.call("card", url=url).value()
    parsed = [card]
    if "protoParsed" in card:
        parsed.append(card.pop("protoParsed"))
    for c in parsed:
        assert c["name"] == "Interop card"
        assert c["version"] == "2.5.1"
        assert c["streaming"] is True and c["pushNotifications"] is True
        assert c["inputModes"] == ["text/plain", "application/json"]
        assert [(s["id"], s["tags"]) for s in c["skills"]] == [
            ("echo", ["echo", "test"]), ("book", ["multi-turn"])]
        assert c["provider"] == "Interop Tests"
        assert c["documentationUrl"] == "https://example.org/interop/docs"
        assert c["iconUrl"] == "https://example.org/interop/icon.png"
        assert "https://example.org/ext/trace/v1" in c["extensions"]
        assert {k: scheme_kind(v) for k, v in c["securitySchemes"].items()} == {
            "apiKey": "apikey", "bearer": "http", "oauth": "oauth2", "oidc": "openidconnect"}
        assert c["security"] == [["bearer"], ["oauth"]]
        interfaces = {(i["url"], i["binding"], i["version"]) for i in c["interfaces"]}
        if native_03:
            assert (url + "/", "JSONRPC", "0.3.0") in interfaces, interfaces
        else:
            assert {(url + "/", "JSONRPC", "1.0"), (url + "/", "JSONRPC", "0.3")} <= interfaces


# ------------------------------------------------------------------------- calls


def test_send(peer: Row, driver: Driver, note: Note) -> None:
    task = _task(driver.call("send", text=TEXT, data=DATA, file=FILE_ARG))
    assert state_name(task["state"]) == "completed"
    assert [a["name"] for a in task["artifacts"]] == ["echo"]
    check_echo_parts(task["artifacts"][0]["parts"])
    user = [m for m in task["history"] if state_name(m["role"]).endswith("user")]
    assert user, task["history"]
    check_echo_parts(user[0]["parts"])
    if has_doubles(task["artifacts"][0]["parts"][1]["data"]):
        note(DOUBLES_NOTE)


def test_stream(peer: Row, driver: Driver) -> None:
    events = driver.call("stream", text=f"stream {STREAM_CHUNKS}").value()["events"]
    task_id = check_stream_events(events)
    # What the agent kept: one artifact, the chunks in order.
    task = _task(driver.call("get", taskId=task_id))
    assert state_name(task["state"]) == "completed"
    assert len(task["artifacts"]) == 1
    text = "".join(p["text"] for p in task["artifacts"][0]["parts"])
    assert text == "".join(f"chunk {i};" for i in range(STREAM_CHUNKS))


def test_get(peer: Row, driver: Driver) -> None:
    sent = _task(driver.call("send", text=TEXT, data=DATA, file=FILE_ARG))
    got = _task(driver.call("get", taskId=sent["id"]))
    assert (got["id"], got["contextId"], got["state"]) == (
        sent["id"], sent["contextId"], sent["state"])
    assert got["artifacts"] == sent["artifacts"]
    check_echo_parts(got["artifacts"][0]["parts"])
    # historyLength: the task asking for input has the user's message and the question.
    asked = _task(driver.call("send", text="book a flight"))
    full = _task(driver.call("get", taskId=asked["id"]))
    assert len(full["history"]) >= 2, full["history"]
    last = _task(driver.call("get", taskId=asked["id"], historyLength=1))
    assert last["history"] == full["history"][-1:]


def test_cancel(peer: Row, driver: Driver) -> None:
    started = _task(driver.call("send", text="slow", returnImmediately=True))
    assert state_name(started["state"]) in ("submitted", "working"), started["state"]
    cancelled = _task(driver.call("cancel", taskId=started["id"]))
    assert cancelled["id"] == started["id"]
    assert state_name(cancelled["state"]) == "canceled"
    got = _task(driver.call("get", taskId=started["id"]))
    assert state_name(got["state"]) == "canceled"


def test_multi_turn(peer: Row, driver: Driver) -> None:
    asked = _task(driver.call("send", text="book a flight"))
    assert state_name(asked["state"]) == "input-required"
    assert asked["statusMessage"] == [{"text": "Where to?"}]
    done = _task(driver.call("send", text="to LHR", taskId=asked["id"],
                             contextId=asked["contextId"]))
    assert (done["id"], done["contextId"]) == (asked["id"], asked["contextId"])
    assert state_name(done["state"]) == "completed"
    assert [(a["name"], a["parts"]) for a in done["artifacts"]] == [
        ("booking", [{"text": "book a flight -> to LHR"}])]


def test_reply(peer: Row, driver: Driver) -> None:
    reply = driver.call("send", text="reply hi").value()
    assert reply["kind"] == "message", reply
    assert state_name(reply["role"]).endswith("agent")
    assert reply["parts"] == [{"text": "re: reply hi"}]
    events = driver.call("stream", text="reply there").value()["events"]
    assert [(e["kind"], e["parts"]) for e in events] == [
        ("message", [{"text": "re: reply there"}])], events


def test_subscribe(peer: Row, driver: Driver) -> None:
    started = _task(driver.call("send", text="slow", returnImmediately=True))
    result = driver.call("subscribe", timeout=30, taskId=started["id"],
                         cancelAfterFirst=True).value()
    events = result["events"]
    assert events, "the subscription brought nothing"
    first = events[0]
    assert (first.get("id") or first.get("taskId")) == started["id"]
    assert state_name(first.get("state")) in ("submitted", "working"), first
    last = events[-1]
    assert last["kind"] in ("status", "task") and state_name(last["state"]) == "canceled", last
    assert state_name(result["cancel"]["state"]) == "canceled"


def _refused(reply: Reply, name: str, code: int, http: int | None = None) -> None:
    """The call was refused with the protocol error ``name`` (by SDK type name or code),
    or, from a client that reports only the HTTP status (``http``), with that status."""
    assert not reply.ok, reply.result
    assert reply.error is not None
    if http is not None and reply.error.get("type") == "A2AClientHTTPError":
        assert f"HTTP Error {http}" in reply.error.get("message", ""), reply.error
        return
    assert name in (reply.error.get("type") or "") or reply.error.get("code") == code, reply.error


#: the 0.3 SDK's REST client raises a bare HTTP error: the v0.3 statuses tell the errors
_V03_REST_STATUS = {"TaskNotFound": 404, "TaskNotCancelable": 409}


def test_errors(peer: Row, driver: Driver, note: Note) -> None:
    rest = peer.binding == "HTTP+JSON" and peer.dialect == "0.3"

    def http(name: str) -> int | None:
        return _V03_REST_STATUS[name] if rest else None

    missing = driver.call("get", taskId="no-such-task")
    _refused(missing, "TaskNotFound", -32001, http("TaskNotFound"))
    done = _task(driver.call("send", text="echo finished"))
    assert state_name(done["state"]) == "completed"
    _refused(driver.call("cancel", taskId=done["id"]), "TaskNotCancelable", -32002,
             http("TaskNotCancelable"))
    if missing.error and missing.error.get("type") == "A2AClientHTTPError":
        note("The SDK's REST client reports errors only as HTTP statuses (404, 409), not "
             "as A2A errors.")


# ------------------------------------------------------------------------- push


def test_push(peer: Row, driver: Driver, receiver: Receiver) -> None:
    asked = _task(driver.call("send", text="book a flight"))
    config = {"taskId": asked["id"], "id": "cfg-1", "url": f"{receiver.url}/hook/{peer.id}",
              "token": f"tok-{peer.id}"}
    reply = driver.call("push_set", **config)
    assert reply.value() == config  # a refusal fails here, with the peer's error
    reply = driver.call("push_get", taskId=asked["id"], id="cfg-1")
    assert reply.value() == config
    # The config works: finishing the task notifies the webhook, with the token.
    _task(driver.call("send", text="to LHR", taskId=asked["id"], contextId=asked["contextId"]))

    def completed(d: Delivery) -> bool:
        return (d.path == f"/hook/{peer.id}" and asked["id"].encode() in d.body
                and b"completed" in d.body.lower())

    deliveries = [d for d in receiver.wait_for(completed) if d.path == f"/hook/{peer.id}"]
    assert any(completed(d) for d in deliveries), [d.body[:300] for d in deliveries]
    assert {d.headers.get("x-a2a-notification-token") for d in deliveries} == {config["token"]}
