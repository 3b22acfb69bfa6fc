"""A streaming send retried with the same messageId follows the task the first one made.

A client whose stream broke cannot know whether its message arrived; it sends
it again. The retry must not start a second turn or a second task: it gets the
first one's task as a subscriber would (its state so far, then the rest live),
over real HTTP on SQLite.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from tests.live import live_agent

from .sse_client import V1, events, rpc

pytestmark = pytest.mark.timeout(30)


class Counted:
    """Counts its turns; a turn that is sent "wait" holds until ``go`` is set."""

    def __init__(self) -> None:
        self.turns = 0
        self.go = threading.Event()

    async def __call__(self, ctx: Context) -> None:
        self.turns += 1
        await ctx.update("working")
        if ctx.text == "wait":
            await asyncio.to_thread(self.go.wait, 20)
        await ctx.artifact(f"answer to {ctx.text}", name="answer")
        await ctx.complete("done")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Counted]]:
    agent = Counted()
    with live_agent(Agent("Counted", "Counts.", agent),
                    store=f"sqlite:///{tmp_path}/tasks.db") as url:
        yield url + "/", agent


def send(text: str, message_id: str) -> dict[str, Any]:
    return rpc("SendStreamingMessage", {"message": {
        "messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}})


def task_of(data: dict[str, Any]) -> tuple[str, str | None]:
    """(task id, state or None) of one v1.0 stream item."""
    result = data["result"]
    if "task" in result:
        return result["task"]["id"], result["task"]["status"]["state"]
    if "statusUpdate" in result:
        return result["statusUpdate"]["taskId"], result["statusUpdate"]["status"]["state"]
    (kind,) = result
    return result[kind]["taskId"], None


def listed(c: httpx.Client, url: str) -> int:
    doc = c.post(url, json=rpc("ListTasks", {}), headers=V1).json()
    return int(doc["result"]["totalSize"])


def test_a_retry_of_a_finished_stream_replays_its_task(served: tuple[str, Counted]) -> None:
    url, agent = served
    mid = str(uuid.uuid4())
    with httpx.Client(timeout=10) as c:
        first = [data for _, _, data in events(c, url, send("hello", mid), V1)]
        again = [data for _, _, data in events(c, url, send("hello", mid), V1)]
        tasks = listed(c, url)
    (task_id,) = {task_of(d)[0] for d in first}
    assert {task_of(d)[0] for d in again} == {task_id}
    assert task_of(again[0]) == (task_id, "TASK_STATE_COMPLETED")
    assert again[0]["result"]["task"]["artifacts"][0]["parts"][0]["text"] == "answer to hello"
    assert agent.turns == 1 and tasks == 1


def test_a_retry_while_the_turn_runs_follows_it_live(served: tuple[str, Counted]) -> None:
    url, agent = served
    mid = str(uuid.uuid4())
    with httpx.Client(timeout=10) as c:
        # the first stream breaks off after the task and its "working"
        first = [data for _, _, data in events(c, url, send("wait", mid), V1, limit=2)]
        (task_id,) = {task_of(d)[0] for d in first}
        retry = events(c, url, send("wait", mid), V1)
        _, _, snapshot = next(retry)
        assert task_of(snapshot) == (task_id, "TASK_STATE_WORKING")
        agent.go.set()
        rest = [data for _, _, data in retry]
        tasks = listed(c, url)
    assert {task_of(d)[0] for d in rest} == {task_id}
    assert task_of(rest[-1]) == (task_id, "TASK_STATE_COMPLETED")
    assert any("artifactUpdate" in d["result"] for d in rest)
    assert agent.turns == 1 and tasks == 1
