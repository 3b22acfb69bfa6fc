"""Two replies at once to a task waiting for input, a reply racing a cancel, a
subscription and a blocking retry on the process a turn does not run on, with
two ``interlingua serve`` processes on one store (an SQLite file; PostgreSQL with a
Redis bus), each request to another process: one reply continues the task, the other
is refused (-32004), and a cancel and a reply settle it one way or the other; never an
internal error (the losing reply was -32603: the store's conflict, unhandled)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from .replicas import pair_urls
from .sse_client import V1, rpc, v1_message

ROUNDS = 10


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def pair(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    yield from pair_urls(request, tmp_path_factory, "replies")


async def _call(c: httpx.AsyncClient, url: str, method: str, params: dict[str, Any]) -> Any:
    return (await c.post(url + "/", headers=V1, json=rpc(method, params))).json()


async def _asked(c: httpx.AsyncClient, url: str) -> str:
    asked = await _call(c, url, "SendMessage", {"message": v1_message("ask")})
    task = asked["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", asked
    return str(task["id"])


def _reply(task_id: str) -> dict[str, Any]:
    return {"message": v1_message("go on", messageId=str(uuid.uuid4()), taskId=task_id)}


async def test_two_replies_on_two_processes_continue_the_task_once(
        pair: tuple[str, str]) -> None:
    async with httpx.AsyncClient(timeout=30) as c:
        for _ in range(ROUNDS):
            task_id = await _asked(c, pair[0])
            answers = await asyncio.gather(*(_call(c, url, "SendMessage", _reply(task_id))
                                             for url in pair))
            taken = [a for a in answers if "result" in a]
            refused = [a["error"] for a in answers if "error" in a]
            assert len(taken) == 1 and [e["code"] for e in refused] == [-32004], answers
            assert taken[0]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            final = (await _call(c, pair[0], "GetTask", {"id": task_id}))["result"]
            replies = [m for m in final["history"] if m["role"] == "ROLE_USER"]
            assert len(replies) == 2, final  # the question's message and one reply


async def test_a_cancel_and_a_reply_on_two_processes_are_never_an_internal_error(
        pair: tuple[str, str]) -> None:
    async with httpx.AsyncClient(timeout=30) as c:
        for n in range(ROUNDS):
            task_id = await _asked(c, pair[0])
            replying, canceling = pair if n % 2 else pair[::-1]
            sent, canceled = await asyncio.gather(
                _call(c, replying, "SendMessage", _reply(task_id)),
                _call(c, canceling, "CancelTask", {"id": task_id}))
            codes = {a["error"]["code"] for a in (sent, canceled) if "error" in a}
            assert codes <= {-32004, -32002}, (sent, canceled)
            final = (await _call(c, pair[0], "GetTask", {"id": task_id}))["result"]
            state = final["status"]["state"]
            if "result" in canceled:
                assert state == "TASK_STATE_CANCELED", (sent, canceled, final)
            else:  # the reply's turn ended first
                assert state == "TASK_STATE_COMPLETED", (sent, canceled, final)


def test_a_subscription_on_the_other_process_follows_the_task_to_its_end(
        pair: tuple[str, str]) -> None:
    # (with no shared bus, as two servers on one SQLite file run by default, the other
    # process's reader heard of nothing after the snapshot, and never ended)
    import time

    from .sse_client import events

    with httpx.Client(timeout=30) as c:
        sent = c.post(pair[0] + "/", headers=V1, json=rpc("SendMessage", {
            "message": v1_message("story 3 0.3"),
            "configuration": {"returnImmediately": True}})).json()
        task_id = sent["result"]["task"]["id"]
        started = time.monotonic()
        seen = [data["result"] for _, _, data in events(
            c, pair[1] + "/", rpc("SubscribeToTask", {"id": task_id}), V1, deadline=20)]
    assert time.monotonic() - started < 10
    # (the snapshot first, holding what was written before the subscription)
    chunks = [r["artifactUpdate"] for r in seen if "artifactUpdate" in r]
    assert chunks and chunks[-1]["artifact"]["parts"][0]["text"] == "chunk 2;", seen
    assert seen[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", seen


async def test_a_blocking_retry_on_the_other_process_waits_for_the_task_to_settle(
        pair: tuple[str, str]) -> None:
    # (it was answered at once with the task still working)
    message = v1_message("story 3 0.3")
    async with httpx.AsyncClient(timeout=30) as c:
        first = asyncio.create_task(_call(c, pair[0], "SendMessage", {"message": message}))
        await asyncio.sleep(0.3)  # its turn has begun there
        retried = await _call(c, pair[1], "SendMessage", {"message": message})
        answered = await first
    task = retried["result"]["task"]
    assert task["id"] == answered["result"]["task"]["id"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", retried
