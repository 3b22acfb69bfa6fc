"""An agent served on a store that keeps no push notifications: every task call
works, and a send that asks for a webhook is refused as push not supported."""

from __future__ import annotations

import uuid

import httpx

from interlingua import Agent
from tests.live import live_agent
from tests.stores.task_only import TaskOnlyStore

V1 = {"A2A-Version": "1.0"}


async def _echo(text: str) -> str:
    return text


def _rpc(method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _message(text: str) -> dict[str, object]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def test_every_task_call_works_without_push() -> None:
    with live_agent(Agent("Echo", "Echoes.", _echo), store=TaskOnlyStore()) as url, \
            httpx.Client(timeout=10) as c:
        sent = c.post(url + "/", headers=V1, json=_rpc("SendMessage", {"message": _message("hi")}))
        task = sent.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        got = c.post(url + "/", headers=V1, json=_rpc("GetTask", {"id": task["id"]}))
        assert got.json()["result"] == task
        listed = c.post(url + "/", headers=V1, json=_rpc("ListTasks", {}))
        assert [t["id"] for t in listed.json()["result"]["tasks"]] == [task["id"]]
        with c.stream("POST", url + "/", headers=V1, json=_rpc(
                "SendStreamingMessage", {"message": _message("streamed")})) as r:
            body = r.read()
        assert b"TASK_STATE_COMPLETED" in body
        refused = c.post(url + "/", headers=V1, json=_rpc("SendMessage", {
            "message": _message("hook"),
            "configuration": {"taskPushNotificationConfig": {"url": "https://example.com/h"}}}))
        assert refused.json()["error"]["code"] == -32003  # push notifications not supported
