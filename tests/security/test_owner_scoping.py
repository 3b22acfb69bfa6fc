"""Two principals on one server: each sees only its own tasks, in every dialect.

Another principal's task is *not found* (-32001) for every operation that
names it — get, cancel, subscribe, continue, push-config calls — so its
existence is not revealed; a listing shows the caller's own tasks only.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.server.auth import APIKeyAuth, AuthConfig
from interlingua.server.push.settings import PushSettings

from .helpers import serve_agent

ALICE = {"X-API-Key": "alice-" + "a" * 20}
BOB = {"X-API-Key": "bob-" + "b" * 20}
V1 = {"A2A-Version": "1.0"}
HOOK = "http://127.0.0.1:9/hook"


async def _asks(ctx: Context) -> None:
    if len(ctx.task.history) == 1:
        await ctx.require_input("Which one?")
    else:
        await ctx.complete(f"done for {ctx.principal}")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    auth = AuthConfig(schemes={"key": APIKeyAuth({
        "alice": ALICE["X-API-Key"], "bob": BOB["X-API-Key"]})})
    agent = Agent("Owned", "Keeps tasks apart.", _asks, push_notifications=True)
    push = PushSettings(allow_http=True, allow_private_networks=True, dispatch=False)
    with serve_agent(agent, auth=auth, push=push) as base:
        yield base


@pytest.fixture
def c() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=20) as client:
        yield client


def rpc(c: httpx.Client, url: str, who: dict[str, str], method: str, params: Any,
        headers: dict[str, str] | None = None) -> dict[str, Any]:
    with c.stream("POST", url + "/",
                  json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params},
                  headers={**who, **(headers or {})}) as r:
        # Checked before the body is read: a stream would not end by itself.
        if r.headers["content-type"].startswith("text/event-stream"):
            raise AssertionError(f"{method} opened a stream for another principal's task")
        r.read()
    assert r.status_code == 200, r.text
    doc: dict[str, Any] = r.json()
    return doc


def mid() -> str:
    return str(uuid.uuid4())


def create_v1(c: httpx.Client, url: str, who: dict[str, str]) -> str:
    doc = rpc(c, url, who, "SendMessage", {"message": {
        "messageId": mid(), "role": "ROLE_USER", "parts": [{"text": "start"}]}}, V1)
    task = doc["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    return str(task["id"])


def create_v03(c: httpx.Client, url: str, who: dict[str, str]) -> str:
    doc = rpc(c, url, who, "message/send", {"message": {
        "kind": "message", "messageId": mid(), "role": "user",
        "parts": [{"kind": "text", "text": "start"}]}})
    assert doc["result"]["status"]["state"] == "input-required"
    return str(doc["result"]["id"])


def create_v01(c: httpx.Client, url: str, who: dict[str, str]) -> str:
    tid = f"task-{mid()}"
    doc = rpc(c, url, who, "tasks/send", {"id": tid, "message": {
        "role": "user", "parts": [{"type": "text", "text": "start"}]}})
    assert doc["result"]["status"]["state"] == "input-required"
    return tid


def v1_calls(tid: str) -> list[tuple[str, Any, dict[str, str]]]:
    msg = {"messageId": mid(), "role": "ROLE_USER", "parts": [{"text": "go"}], "taskId": tid}
    return [
        ("GetTask", {"id": tid}, V1),
        ("CancelTask", {"id": tid}, V1),
        ("SubscribeToTask", {"id": tid}, V1),
        ("SendMessage", {"message": msg}, V1),
        ("SendStreamingMessage", {"message": {**msg, "messageId": mid()}}, V1),
        ("CreateTaskPushNotificationConfig", {"taskId": tid, "url": HOOK}, V1),
        ("GetTaskPushNotificationConfig", {"taskId": tid, "id": "c1"}, V1),
        ("ListTaskPushNotificationConfigs", {"taskId": tid}, V1),
        ("DeleteTaskPushNotificationConfig", {"taskId": tid, "id": "c1"}, V1),
    ]


def v03_calls(tid: str) -> list[tuple[str, Any, dict[str, str]]]:
    msg = {"kind": "message", "messageId": mid(), "role": "user",
           "parts": [{"kind": "text", "text": "go"}], "taskId": tid}
    return [
        ("tasks/get", {"id": tid}, {}),
        ("tasks/cancel", {"id": tid}, {}),
        ("tasks/resubscribe", {"id": tid}, {}),
        ("message/send", {"message": msg}, {}),
        ("message/stream", {"message": {**msg, "messageId": mid()}}, {}),
        ("tasks/pushNotificationConfig/set",
         {"taskId": tid, "pushNotificationConfig": {"url": HOOK}}, {}),
        ("tasks/pushNotificationConfig/get", {"id": tid}, {}),
        ("tasks/pushNotificationConfig/list", {"id": tid}, {}),
        ("tasks/pushNotificationConfig/delete", {"id": tid, "pushNotificationConfigId": "c1"}, {}),
    ]


def v01_calls(tid: str) -> list[tuple[str, Any, dict[str, str]]]:
    return [
        ("tasks/get", {"id": tid}, {}),
        ("tasks/cancel", {"id": tid}, {}),
        ("tasks/resubscribe", {"id": tid}, {}),
        ("tasks/pushNotification/set", {"id": tid, "pushNotificationConfig": {"url": HOOK}}, {}),
        ("tasks/pushNotification/get", {"id": tid}, {}),
    ]


CASES = {"1.0": (create_v1, v1_calls), "0.3": (create_v03, v03_calls),
         "0.1": (create_v01, v01_calls)}


@pytest.mark.parametrize("dialect", list(CASES))
def test_another_principals_task_is_not_found(c: httpx.Client, url: str, dialect: str) -> None:
    create, calls = CASES[dialect]
    tid = create(c, url, ALICE)
    for method, params, headers in calls(tid):
        doc = rpc(c, url, BOB, method, params, headers)
        assert doc.get("error", {}).get("code") == -32001, (method, doc)
        assert "result" not in doc
    # the owner still has it, untouched by bob's attempts
    get = "GetTask" if dialect == "1.0" else "tasks/get"
    own = rpc(c, url, ALICE, get, {"id": tid}, V1 if dialect == "1.0" else {})
    state = own["result"]["status"]["state"]
    assert state in ("input-required", "TASK_STATE_INPUT_REQUIRED")


def test_v01_send_to_another_principals_task_id_reveals_nothing(
        c: httpx.Client, url: str) -> None:
    tid = create_v01(c, url, ALICE)
    alice_session = rpc(c, url, ALICE, "tasks/get", {"id": tid})["result"]["sessionId"]
    doc = rpc(c, url, BOB, "tasks/send", {"id": tid, "message": {
        "role": "user", "parts": [{"type": "text", "text": "mine now?"}]}})
    # bob's tasks/send names a task bob does not have: it is bob's own new task,
    # and alice's task is neither seen nor changed
    assert doc["result"]["id"] == tid
    assert doc["result"]["sessionId"] != alice_session
    texts = [m["parts"][0]["text"] for m in doc["result"]["history"]]
    assert texts == ["mine now?", "Which one?"]
    own = rpc(c, url, ALICE, "tasks/get", {"id": tid, "historyLength": 10})
    assert own["result"]["sessionId"] == alice_session
    assert [m["parts"][0]["text"] for m in own["result"]["history"]] == ["start", "Which one?"]

def test_list_shows_only_own_tasks(c: httpx.Client, url: str) -> None:
    mine = {create_v1(c, url, ALICE) for _ in range(3)}
    theirs = {create_v1(c, url, BOB) for _ in range(2)}
    for who, expected, other in ((ALICE, mine, theirs), (BOB, theirs, mine)):
        doc = rpc(c, url, who, "ListTasks", {"pageSize": 100}, V1)
        ids = {t["id"] for t in doc["result"]["tasks"]}
        assert expected <= ids and not (ids & other)


def test_owner_continues_and_gets_its_task(c: httpx.Client, url: str) -> None:
    tid = create_v1(c, url, ALICE)
    doc = rpc(c, url, ALICE, "SendMessage", {"message": {
        "messageId": mid(), "role": "ROLE_USER", "parts": [{"text": "that one"}],
        "taskId": tid}}, V1)
    task = doc["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"][0]["text"] == "done for alice"
