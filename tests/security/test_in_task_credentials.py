"""The message that answers auth-required reaches the executor whole and is kept
redacted: the credential is in no answer, no push body, no log and not in the
SQLite file."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import httpx
import pytest

from interlingua import Agent
from tests.push.helpers import Hook, dev_settings, serve_hook

from .helpers import serve_agent
from .test_secure_agent import KEY, _example

SECRET = "cal-alice-demo-token"


def _rpc(method: str, params: dict[str, object], rid: int = 1) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def test_a_credential_sent_mid_task_is_kept_nowhere(tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    ex = _example()
    agent = Agent(ex.agent.name, "Reads calendars.", ex.calendar, push_notifications=True)
    hook = Hook()
    db = tmp_path / "tasks.db"
    headers = {"X-API-Key": KEY, "A2A-Version": "1.0"}
    with serve_hook(hook) as hook_url, \
            serve_agent(agent, auth=ex.auth(), store=f"sqlite:///{db}",
                        push=dev_settings()) as url, httpx.Client(timeout=10) as c:
        first = c.post(url + "/", headers=headers, json=_rpc("SendMessage", {
            "message": {"messageId": "m-1", "role": "ROLE_USER",
                        "parts": [{"text": "show my calendar"}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook_url + "/hook"}},
        })).json()["result"]["task"]
        assert first["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
        answer = {"messageId": "m-2", "role": "ROLE_USER", "taskId": first["id"],
                  "parts": [{"data": {"credential": {"type": "calendar-token",
                                                     "token": SECRET}}}]}
        done = c.post(url + "/", headers=headers,
                      json=_rpc("SendMessage", {"message": answer})).json()["result"]["task"]
        # the executor read the token: it accepted it and completed
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        # a retry of the same answer is the same task, not a new turn
        again = c.post(url + "/", headers=headers,
                       json=_rpc("SendMessage", {"message": answer})).json()["result"]["task"]
        assert again["id"] == first["id"]
        got = c.post(url + "/", headers=headers, json=_rpc("GetTask", {"id": first["id"]}))
        listed = c.post(url + "/", headers=headers, json=_rpc("ListTasks", {
            "includeArtifacts": True, "historyLength": 10}))
        v03 = c.post(url + "/", headers={"X-API-Key": KEY}, json={
            "jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"id": first["id"]}})
        deadline = time.monotonic() + 10
        while not any(b'"TASK_STATE_COMPLETED"' in r.body for r in hook.delivered()):
            assert time.monotonic() < deadline, "the push of the completion never came"
            time.sleep(0.02)
        history = got.json()["result"]["history"]
        assert [m["messageId"] for m in history if m["role"] == "ROLE_USER"] == ["m-1", "m-2"]
    places = {
        "GetTask": got.text,
        "ListTasks": listed.text,
        "v0.3 tasks/get": v03.text,
        "push bodies": "".join(r.body.decode() for r in hook.requests),
        "logs": caplog.text,
        "SQLite file": b"".join(p.read_bytes() for p in tmp_path.glob("tasks.db*")
                                ).decode("latin-1"),
    }
    for where, text in places.items():
        assert SECRET not in text, f"the credential is in {where}"
    # what the log keeps instead: a note, in the message's place
    kept = next(m for m in history if m["messageId"] == "m-2")
    assert len(kept["parts"]) == 1 and "redacted" in kept["parts"][0]["text"]
