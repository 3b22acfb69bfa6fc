"""One conversation per dialect over real HTTP, and tasks read across dialects."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import msgspec
import pytest

from interlingua import Agent, Context
from tests.live import live_agent
from tests.reference import SPEC

from .sse_client import V1, events, rpc, v1_message


def schema_check(version: str, doc: Any, definition: str) -> None:
    schema = msgspec.json.decode((SPEC / version / "a2a.json").read_bytes())
    section = "$defs" if "$defs" in schema else "definitions"
    jsonschema.validate(doc, {**schema, "$ref": f"#/{section}/{definition}"})


async def _agent(ctx: Context) -> None:
    if ctx.text == "slow":
        await ctx.update("working")
        import asyncio

        await asyncio.sleep(30)
    elif ctx.text == "just reply":
        await ctx.reply("re: just reply")
    elif len(ctx.task.history) == 1 and "flight" in ctx.text:
        await ctx.require_input("Where to?")
    else:
        aid = await ctx.artifact("part one, ", name="Answer")
        await ctx.artifact("part two", artifact_id=aid, append=True, last_chunk=True)
        await ctx.complete(f"Done: {ctx.text}")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_agent(Agent("Any", "Speaks every dialect", _agent)) as base:
        yield base


@pytest.fixture
def c() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


def call(c: httpx.Client, url: str, method: str, params: Any,
         headers: dict[str, str] | None = None) -> Any:
    r = c.post(url + "/", json=rpc(method, params, "r1"), headers=headers or {})
    assert r.status_code == 200, r.text
    return r.json()


def v01_send(task_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": task_id, "message": {"role": "user", "parts": [{"type": "text", "text": text}]},
            **extra}


def test_v01_conversation(c: httpx.Client, url: str) -> None:
    tid = f"task-{uuid.uuid4()}"
    first = call(c, url, "tasks/send", v01_send(tid, "I'd like to book a flight.",
                                                 sessionId="session-xyz-789"))
    schema_check("v0.1.0", first, "SendTaskResponse")
    task = first["result"]
    assert task["id"] == tid and task["sessionId"] == "session-xyz-789"
    assert task["status"]["state"] == "input-required" and "kind" not in task
    second = call(c, url, "tasks/send", v01_send(tid, "From JFK to LHR"))
    schema_check("v0.1.0", second, "SendTaskResponse")
    done = second["result"]
    assert done["status"]["state"] == "completed"
    art = done["artifacts"][0]
    assert art["index"] == 0 and [p["text"] for p in art["parts"]] == ["part one, ", "part two"]
    got = call(c, url, "tasks/get", {"id": tid, "historyLength": 1})
    schema_check("v0.1.0", got, "GetTaskResponse")
    assert len(got["result"]["history"]) == 1
    # a finished task takes no more messages: v0.1's InvalidTaskState code
    again = call(c, url, "tasks/send", v01_send(tid, "again"))
    assert again["error"]["code"] == -32009
    # cancel a running one
    slow = f"task-{uuid.uuid4()}"
    stream = events(c, url + "/", rpc("tasks/sendSubscribe", v01_send(slow, "slow")), limit=2)
    got_events = list(stream)
    assert got_events[0][2]["result"]["id"] == slow
    canceled = call(c, url, "tasks/cancel", {"id": slow})
    schema_check("v0.1.0", canceled, "CancelTaskResponse")
    assert canceled["result"]["status"]["state"] == "canceled"
    missing = call(c, url, "tasks/get", {"id": "no-such-task"})
    assert missing["error"]["code"] == -32001


def test_v01_streaming_and_resubscribe(c: httpx.Client, url: str) -> None:
    tid = f"task-{uuid.uuid4()}"
    got = list(events(c, url + "/", rpc("tasks/sendSubscribe", v01_send(tid, "write"))))
    results = [d["result"] for _, _, d in got]
    for r in results:
        schema_check("v0.1.0", {"jsonrpc": "2.0", "id": "r1", "result": r},
                     "SendTaskStreamingResponse")
    arts = [r for r in results if "artifact" in r]
    assert [a["artifact"].get("append", False) for a in arts] == [False, True]
    assert arts[-1]["artifact"]["lastChunk"] is True
    assert results[-1]["final"] is True and results[-1]["status"]["state"] == "completed"
    # resume from the middle
    mid = got[1][0]
    rest = list(events(c, url + "/", rpc("tasks/resubscribe", {"id": tid}),
                       {"Last-Event-ID": mid}))
    assert [i for i, _, _ in rest] == [i for i, _, _ in got[2:]]


def test_a_bare_reply_is_a_message_but_to_a_v01_caller_who_named_the_task(
        c: httpx.Client, url: str) -> None:
    msg = {"kind": "message", "messageId": str(uuid.uuid4()), "role": "user",
           "parts": [{"kind": "text", "text": "just reply"}]}
    bare = call(c, url, "message/send", {"message": msg})["result"]
    assert bare["kind"] == "message" and bare["parts"][0]["text"] == "re: just reply"
    tid = f"task-{uuid.uuid4()}"
    named = call(c, url, "tasks/send", v01_send(tid, "just reply"))
    schema_check("v0.1.0", named, "SendTaskResponse")
    task = named["result"]
    assert task["id"] == tid and task["status"]["state"] == "completed"
    assert task["status"]["message"]["parts"][0]["text"] == "re: just reply"
    # and it is a task the caller can read again
    got = call(c, url, "tasks/get", {"id": tid})["result"]
    assert got["id"] == tid and got["status"]["state"] == "completed"


def test_sam_conversation(c: httpx.Client, url: str) -> None:
    msg = {"role": "user", "parts": [{"text": "Validate this order"},
                                     {"data": {"order_id": "ORD-123"}}],
           "message_id": f"msg-{uuid.uuid4()}", "context_id": "session_456", "kind": "message"}
    r = call(c, url, "tasks/send", {"message": msg})
    task = r["result"]
    assert task["kind"] == "task" and task["context_id"] == "session_456"
    assert task["status"]["state"] == "completed"
    assert task["status"]["message"]["parts"][0]["text"].startswith("Done: Validate")
    streamed = list(events(c, url + "/", rpc("tasks/send-streaming", {"message": {
        **msg, "message_id": f"msg-{uuid.uuid4()}"}})))
    kinds = [d["result"].get("kind") for _, _, d in streamed]
    assert kinds[0] == "task" and kinds[-1] == "status-update"
    assert streamed[-1][2]["result"]["final"] is True
    # cancel in SAM's shape
    slow = {**msg, "message_id": f"msg-{uuid.uuid4()}", "parts": [{"text": "slow"}]}
    first = list(events(c, url + "/", rpc("tasks/send-streaming", {"message": slow}), limit=2))
    sam_task_id = first[0][2]["result"]["id"]
    canceled = call(c, url, "tasks/cancel", {"id": sam_task_id})
    assert canceled["result"]["status"]["state"] == "canceled"
    assert "context_id" in canceled["result"]  # answered in the dialect the task was made in


def test_tutorial_conversation(c: httpx.Client, url: str) -> None:
    r = call(c, url, "message/send", {"message": {"role": "user",
                                                  "parts": [{"type": "text", "text": "ping"}]}})
    result = r["result"]
    schema_check("v0.3.0", r, "SendMessageSuccessResponse")
    assert result["kind"] == "task"
    msg = result["status"]["message"]
    assert msg["message_id"] == msg["messageId"]
    assert msg["parts"][0]["type"] == msg["parts"][0]["kind"] == "text"
    # the tutorial's task, polled by a v0.3 client
    got = call(c, url, "tasks/get", {"id": result["id"]})
    assert got["result"]["status"]["state"] == "completed"


def test_v03_multi_turn_stream_and_resubscribe(c: httpx.Client, url: str) -> None:
    msg = {"kind": "message", "messageId": str(uuid.uuid4()), "role": "user",
           "parts": [{"kind": "text", "text": "book a flight"}]}
    first = call(c, url, "message/send", {"message": msg})["result"]
    assert first["status"]["state"] == "input-required"
    cont = {**msg, "messageId": str(uuid.uuid4()), "taskId": first["id"],
            "parts": [{"kind": "text", "text": "Paris"}]}
    streamed = list(events(c, url + "/", rpc("message/stream", {"message": cont})))
    assert streamed[0][2]["result"]["kind"] == "task"
    assert streamed[-1][2]["result"]["final"] is True
    again = list(events(c, url + "/", rpc("tasks/resubscribe", {"id": first["id"]}),
                        {"Last-Event-ID": streamed[0][0]}))
    assert [i for i, _, _ in again] == [i for i, _, _ in streamed[1:]]


def test_same_task_across_dialects(c: httpx.Client, url: str) -> None:
    # made by a v0.1 client, read by a v1.0 client
    tid = f"task-{uuid.uuid4()}"
    made = call(c, url, "tasks/send", v01_send(tid, "hello", sessionId="s-1"))["result"]
    v1 = call(c, url, "GetTask", {"id": tid}, V1)["result"]
    assert v1["id"] == made["id"] and v1["contextId"] == made["sessionId"] == "s-1"
    assert v1["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [p["text"] for p in v1["artifacts"][0]["parts"]] == \
        [p["text"] for p in made["artifacts"][0]["parts"]]
    assert v1["history"][0]["parts"] == [{"text": "hello"}]
    # made by a v1.0 client, read by a v0.1 client (the header names the dialect)
    t = call(c, url, "SendMessage", {"message": v1_message("hi there")}, V1)["result"]["task"]
    v01 = call(c, url, "tasks/get", {"id": t["id"]}, {"A2A-Version": "0.1"})["result"]
    schema_check("v0.1.0", {"jsonrpc": "2.0", "id": 1, "result": v01}, "GetTaskResponse")
    assert v01["sessionId"] == t["contextId"] and v01["status"]["state"] == "completed"
    assert v01["history"][0]["parts"] == [{"type": "text", "text": "hi there"}]
    # without a header, a shared method answers in the dialect the task was made in
    plain = call(c, url, "tasks/get", {"id": tid})["result"]
    assert "sessionId" in plain and "kind" not in plain


def test_sam_multi_turn(c: httpx.Client, url: str) -> None:
    msg = {"role": "user", "parts": [{"text": "book a flight"}],
           "message_id": f"msg-{uuid.uuid4()}", "kind": "message"}
    first = call(c, url, "tasks/send", {"message": msg})["result"]
    assert first["status"]["state"] == "input-required"
    more = {"role": "user", "parts": [{"text": "to Oslo"}], "message_id": f"msg-{uuid.uuid4()}",
            "task_id": first["id"], "context_id": first["context_id"], "kind": "message"}
    done = call(c, url, "tasks/send", {"message": more})["result"]
    assert done["id"] == first["id"] and done["status"]["state"] == "completed"


@pytest.mark.parametrize("dialect", ["0.1", "sam", "0.3"])
def test_a_reply_in_another_context_names_the_field_as_its_dialect_does(
        c: httpx.Client, url: str, dialect: str) -> None:
    """A reply to a task that names another context is refused naming the member the
    caller sent: v0.1's ``sessionId``, SAM's ``message.context_id``, v0.3's
    ``message.contextId`` (every dialect was told ``message.contextId``)."""
    if dialect == "0.1":
        tid = f"task-{uuid.uuid4()}"
        call(c, url, "tasks/send", v01_send(tid, "book a flight", sessionId="one"))
        answer = call(c, url, "tasks/send", v01_send(tid, "to Oslo", sessionId="other"))
        field = "sessionId"
    elif dialect == "sam":
        msg = {"role": "user", "parts": [{"text": "book a flight"}],
               "message_id": f"msg-{uuid.uuid4()}", "kind": "message"}
        first = call(c, url, "tasks/send", {"message": msg})["result"]
        answer = call(c, url, "tasks/send", {"message": {
            **msg, "message_id": f"msg-{uuid.uuid4()}", "task_id": first["id"],
            "context_id": "other"}})
        field = "message.context_id"
    else:
        msg = {"kind": "message", "role": "user", "parts": [{"kind": "text", "text": "book"}],
               "messageId": str(uuid.uuid4())}
        first = call(c, url, "message/send", {"message": msg})["result"]
        answer = call(c, url, "message/send", {"message": {
            **msg, "messageId": str(uuid.uuid4()), "taskId": first["id"],
            "contextId": "other"}})
        field = "message.contextId"
    assert answer["error"]["code"] == -32602, answer
    assert answer["error"]["message"].startswith(f"Invalid params: {field} 'other' does not "
                                                 "match the context"), answer


def test_tutorial_multi_turn_naming_the_task_in_snake_case(c: httpx.Client, url: str) -> None:
    """The tutorial names a message's task ``task_id`` / ``context_id`` (DIALECTS.md
    §b.2), as it names its id ``message_id``: the reply continues that task."""
    first = call(c, url, "message/send", {"message": {
        "role": "user", "parts": [{"type": "text", "text": "book a flight"}]}})["result"]
    assert first["status"]["state"] == "input-required"
    done = call(c, url, "message/send", {"message": {
        "role": "user", "task_id": first["id"], "context_id": first["contextId"],
        "parts": [{"type": "text", "text": "to Oslo"}]}})["result"]
    assert done["id"] == first["id"] and done["status"]["state"] == "completed", done
    assert "task_id" not in done["status"]["message"]


def test_tutorial_subscribe(c: httpx.Client, url: str) -> None:
    made = call(c, url, "message/send", {"message": {
        "role": "user", "parts": [{"type": "text", "text": "book a flight"}]}})["result"]
    assert made["status"]["state"] == "input-required"
    got = list(events(c, url + "/", rpc("task/subscribe", {"id": made["id"]})))
    # a fresh subscription to a task waiting for input: the task, its status marked
    # final, then the end
    assert len(got) == 2
    task, status = (d["result"] for _, _, d in got)
    assert task["id"] == made["id"] and task["status"]["state"] == "input-required"
    assert status["taskId"] == made["id"] and status["status"]["state"] == "input-required"
    assert status["final"] is True


def test_sam_task_read_and_resubscribed_without_a_header_answers_in_sam(
        c: httpx.Client, url: str) -> None:
    msg = {"role": "user", "parts": [{"text": "hello"}], "message_id": f"msg-{uuid.uuid4()}",
           "context_id": "ctx-sam", "kind": "message"}
    made = call(c, url, "tasks/send", {"message": msg})["result"]
    got = call(c, url, "tasks/get", {"id": made["id"]})["result"]
    assert got["kind"] == "task" and got["context_id"] == "ctx-sam" and "contextId" not in got
    assert got["status"]["message"]["parts"] == [{"text": "Done: hello"}]  # no discriminator
    streamed = list(events(c, url + "/", rpc("tasks/resubscribe", {"id": made["id"]})))
    assert streamed and all("context_id" in d["result"] for _, _, d in streamed)
    assert all("contextId" not in d["result"] for _, _, d in streamed)


def test_tutorial_task_read_and_resubscribed_without_a_header_answers_in_tutorial(
        c: httpx.Client, url: str) -> None:
    made = call(c, url, "message/send", {"message": {
        "role": "user", "parts": [{"type": "text", "text": "hello"}]}})["result"]
    msg = call(c, url, "tasks/get", {"id": made["id"]})["result"]["status"]["message"]
    assert msg["message_id"] == msg["messageId"]
    assert msg["parts"][0]["type"] == msg["parts"][0]["kind"] == "text"
    slow = call(c, url, "message/send", {"configuration": {"blocking": False}, "message": {
        "role": "user", "parts": [{"type": "text", "text": "slow"}]}})["result"]
    canceled = call(c, url, "tasks/cancel", {"id": slow["id"]})["result"]
    assert canceled["status"]["state"] == "canceled"
    asked = canceled["history"][0]
    assert asked["message_id"] == asked["messageId"] and asked["parts"][0]["type"] == "text"
    streamed = list(events(c, url + "/", rpc("tasks/resubscribe", {"id": made["id"]})))
    assert streamed
    for _, _, d in streamed:
        status = d["result"]["status"]
        assert status["message"]["parts"][0]["type"] == "text"


def test_tutorial_stream_without_message_id(c: httpx.Client, url: str) -> None:
    streamed = list(events(c, url + "/", rpc("message/stream", {"message": {
        "role": "user", "parts": [{"type": "text", "text": "ping"}]}})))
    assert streamed[0][2]["result"]["kind"] == "task"
    last = streamed[-1][2]["result"]
    assert last["final"] is True and last["status"]["state"] == "completed"
    assert last["status"]["message"]["parts"][0]["type"] == "text"
    # the same without the "type" discriminator, only the message id missing
    streamed = list(events(c, url + "/", rpc("message/stream", {"message": {
        "role": "user", "kind": "message", "parts": [{"kind": "text", "text": "pong"}]}})))
    assert streamed[-1][2]["result"]["status"]["state"] == "completed"
