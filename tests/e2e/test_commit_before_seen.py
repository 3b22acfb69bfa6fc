"""No one sees an event before it is stored, over real HTTP on SQLite.

The store is made to refuse one batch of a turn (a trigger refuses event rows
that carry the word the agent uses for it). The batch is then never stored,
so no reader may see any of it: not a stream, not a blocking send's answer,
not a push notification, not a later read. The turn itself ends failed.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.host import create_app
from interlingua.server.push import PushSettings
from tests.live import bind_loopback, live_server, url_of
from tests.push.helpers import Hook, LoopbackOnly, serve_hook

from .sse_client import V1, events, rpc

pytestmark = pytest.mark.timeout(30)

#: the word the refused batch carries (and nothing else does)
MARK = "unstorable"


async def _turn(ctx: Context) -> None:
    await ctx.update("working")
    await ctx.artifact("a first part, ", name="answer")
    await ctx.artifact(f"then the {MARK} one", name="answer-2")
    await ctx.complete("done")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, Hook]]:
    db = tmp_path / "tasks.db"
    hook = Hook()
    sock = bind_loopback()
    push = PushSettings(allow_http=True, allow_hosts=["127.0.0.1"], backoff_base=0.05,
                        poll_interval=0.2, network_backend=LoopbackOnly())
    app = create_app(Agent("Refused", "Its second batch cannot be stored.", _turn,
                           push_notifications=True),
                     store=f"sqlite:///{db}", public_url=url_of(sock), push=push)
    with serve_hook(hook) as hook_url, live_server(app, sock=sock) as url:
        with sqlite3.connect(db) as conn:
            conn.execute(f"""
                CREATE TRIGGER refuse_marked BEFORE INSERT ON events
                WHEN CAST(NEW.payload AS TEXT) LIKE '%{MARK}%'
                BEGIN SELECT RAISE(ABORT, 'the store refused this batch'); END""")
        conn.close()
        yield url + "/", hook_url, hook


def send(method: str, hook_url: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                                          "parts": [{"text": "go"}]}}
    if hook_url is not None:
        params["configuration"] = {"taskPushNotificationConfig": {"url": hook_url}}
    return rpc(method, params)


def get_task(c: httpx.Client, url: str, task_id: str) -> dict[str, Any]:
    doc = c.post(url, json=rpc("GetTask", {"id": task_id}), headers=V1).json()
    task: dict[str, Any] = doc["result"]
    return task


def test_a_stream_never_shows_a_batch_the_store_refused(
        served: tuple[str, str, Hook]) -> None:
    url, _, _ = served
    with httpx.Client(timeout=10) as c:
        seen = [data for _, _, data in events(c, url, send("SendStreamingMessage"), V1)]
        task_id = seen[0]["result"]["task"]["id"]
        stored = get_task(c, url, task_id)
    assert MARK not in repr(seen)
    assert not any("artifactUpdate" in d["result"] for d in seen)  # the whole batch
    assert seen[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
    assert stored["status"]["state"] == "TASK_STATE_FAILED" and not stored.get("artifacts")


def test_a_blocking_send_never_answers_with_a_batch_the_store_refused(
        served: tuple[str, str, Hook]) -> None:
    url, _, _ = served
    with httpx.Client(timeout=10) as c:
        answer = c.post(url, json=send("SendMessage"), headers=V1).json()
        task = answer["result"]["task"]
        stored = get_task(c, url, task["id"])
    assert MARK not in repr(answer)
    assert task["status"]["state"] == "TASK_STATE_FAILED" and not task.get("artifacts")
    assert task == stored


def test_push_never_notifies_a_batch_the_store_refused(
        served: tuple[str, str, Hook]) -> None:
    url, hook_url, hook = served
    with httpx.Client(timeout=10) as c:
        answer = c.post(url, json=send("SendMessage", hook_url + "/hook"), headers=V1).json()
        task_id = answer["result"]["task"]["id"]
    # the last notification is the failure; wait for it, then look at all of them
    deadline = time.monotonic() + 10
    while not any(b"TASK_STATE_FAILED" in r.body for r in hook.delivered()):
        assert time.monotonic() < deadline, [r.body[:200] for r in hook.requests]
        time.sleep(0.02)
    bodies = [r.body for r in hook.delivered()]
    assert all(task_id.encode() in b for b in bodies)
    assert not any(MARK.encode() in b for b in bodies)
