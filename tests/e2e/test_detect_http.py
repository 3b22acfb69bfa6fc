"""Dialect detection over real HTTP: what user content holds (message and part
metadata, a data part's data) never changes the dialect a request is read and
answered in, leniently or strictly; SAM's cancel by ``task_id`` / ``taskId``."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from tests.live import live_agent

from .sse_client import rpc


async def _agent(ctx: Context) -> None:
    if ctx.text == "slow":
        await ctx.update("working")
        await asyncio.sleep(30)
    else:
        await ctx.complete(f"Done: {ctx.text}")


def _serve(**kwargs: Any) -> Iterator[str]:
    with live_agent(Agent("Any", "Speaks every dialect", _agent), **kwargs) as base:
        yield base + "/"


@pytest.fixture(scope="module")
def lenient() -> Iterator[str]:
    yield from _serve()


@pytest.fixture(scope="module")
def strict() -> Iterator[str]:
    yield from _serve(strict_dialects=True)


@pytest.fixture(params=["lenient", "strict"])
def url(request: pytest.FixtureRequest, lenient: str, strict: str) -> str:
    return lenient if request.param == "lenient" else strict


def call(url: str, method: str, params: Any) -> Any:
    r = httpx.post(url, json=rpc(method, params, "r1"), timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def mid() -> str:
    return str(uuid.uuid4())


def _asked(answer: Any) -> Any:
    assert "result" in answer, answer
    return answer["result"]["history"][0]


@pytest.mark.parametrize("metadata", [{"kind": "greeting"}, {"x": 1}])
def test_tutorial_message_with_metadata_is_answered_as_the_tutorial(
        url: str, metadata: dict[str, Any]) -> None:
    msg = {"messageId": mid(), "role": "user", "parts": [{"type": "text", "text": "hi"}],
           "metadata": metadata}
    asked = _asked(call(url, "message/send", {"message": msg}))
    assert asked["parts"][0]["type"] == "text" and asked["message_id"] == asked["messageId"]


def test_tutorial_part_metadata_and_data_leave_it_the_tutorial(url: str) -> None:
    msg = {"messageId": mid(), "role": "user", "parts": [
        {"type": "text", "text": "hi", "metadata": {"kind": "x", "messageId": "m"}},
        {"type": "data", "data": {"kind": "order"}}]}
    asked = _asked(call(url, "message/send", {"message": msg}))
    assert [p["type"] for p in asked["parts"]] == ["text", "data"]


@pytest.mark.parametrize("where", ["message", "part", "data"])
def test_kindless_v03_message_with_a_type_key_in_content_is_v03(url: str, where: str) -> None:
    """fasta2a's parts carry no ``kind``: a ``type`` key in its metadata or data is
    content, not the tutorial's discriminator."""
    text: dict[str, Any] = {"text": "hi"}
    data: dict[str, Any] = {"data": {"n": 1}}
    msg: dict[str, Any] = {"messageId": mid(), "role": "user", "parts": [text, data]}
    if where == "message":
        msg["metadata"] = {"type": "x"}
    elif where == "part":
        text["metadata"] = {"type": "x"}
    else:
        data["data"] = {"type": "order"}
    asked = _asked(call(url, "message/send", {"message": msg}))
    assert "message_id" not in asked and all("type" not in p for p in asked["parts"])
    assert [p["kind"] for p in asked["parts"]] == ["text", "data"]


def test_v03_message_without_message_id_beside_one_in_metadata_is_the_tutorial(
        url: str) -> None:
    msg = {"kind": "message", "role": "user", "parts": [{"kind": "text", "text": "hi"}],
           "metadata": {"messageId": "not-the-message's"}}
    asked = _asked(call(url, "message/send", {"message": msg}))
    assert asked["message_id"] == asked["messageId"] != "not-the-message's"


def test_v03_message_whose_data_holds_a_type_key(url: str) -> None:
    msg = {"kind": "message", "messageId": mid(), "role": "user",
           "parts": [{"kind": "data", "data": {"type": "order", "id": 7}}],
           "metadata": {"type": "x"}}
    asked = _asked(call(url, "message/send", {"message": msg}))
    assert asked["parts"][0] == {"kind": "data", "data": {"type": "order", "id": 7}}
    assert "message_id" not in asked


def test_strict_still_refuses_a_message_mixing_discriminators(strict: str) -> None:
    msg = {"messageId": mid(), "role": "user",
           "parts": [{"kind": "text", "text": "x"}, {"type": "text", "text": "y"}]}
    answer = call(strict, "message/send", {"message": msg})
    assert answer["error"]["code"] == -32600 and "kind" in answer["error"]["message"]


def test_v01_send_whose_content_holds_snake_case_keys_is_v01(url: str) -> None:
    tid = f"task-{uuid.uuid4()}"
    params = {"id": tid, "message": {
        "role": "user", "metadata": {"context_id": "c"},
        "parts": [{"type": "data", "data": {"task_id": "T-1", "mime_type": "x"}}]}}
    answer = call(url, "tasks/send", params)
    assert "result" in answer, answer
    task = answer["result"]
    assert task["id"] == tid and "sessionId" in task and "kind" not in task


def test_strict_still_refuses_a_v01_id_beside_sam_fields(strict: str) -> None:
    params = {"id": f"task-{uuid.uuid4()}", "message": {
        "role": "user", "message_id": mid(), "parts": [{"text": "x"}]}}
    answer = call(strict, "tasks/send", params)
    assert answer["error"]["code"] == -32600 and "snake_case" in answer["error"]["message"]


def test_v01_send_without_its_task_id_is_refused_not_read_as_sam(url: str) -> None:
    """A wrapped message with v0.1 "type" parts and no SAM marker is v0.1 missing
    its required ``id``, as the same message sent as bare params is."""
    msg = {"role": "user", "parts": [{"type": "text", "text": "hi"}]}
    for params in ({"message": msg}, msg):
        answer = call(url, "tasks/send", params)
        assert answer["error"]["code"] == -32602, answer
        assert "`id`" in answer["error"]["message"], answer


def test_tutorial_parts_beside_a_message_kind_are_the_tutorial(url: str) -> None:
    """The message's own ``"kind": "message"`` is no part discriminator: parts tagged
    ``type`` make it the tutorial variant, in strict mode too."""
    msg = {"kind": "message", "messageId": mid(), "role": "user",
           "parts": [{"type": "text", "text": "hi"}]}
    asked = _asked(call(url, "message/send", {"message": msg}))
    assert asked["parts"][0]["type"] == "text" and asked["message_id"] == asked["messageId"]


def _sam_slow(url: str) -> str:
    made = call(url, "tasks/send", {"message": {"message_id": mid(), "role": "user",
                                                 "parts": [{"text": "slow"}]},
                                     "configuration": {"blocking": False}})
    assert made["result"]["kind"] == "task", made
    return str(made["result"]["id"])


@pytest.mark.parametrize("key", ["id", "task_id", "taskId"])
def test_sam_cancel_by_any_of_its_id_members(url: str, key: str) -> None:
    task_id = _sam_slow(url)
    answer = call(url, "tasks/cancel", {key: task_id})
    assert "result" in answer, answer
    task = answer["result"]
    assert task["id"] == task_id and task["status"]["state"] == "canceled"
    assert "context_id" in task and "contextId" not in task  # SAM's shape


@pytest.mark.parametrize("key", ["task_id", "taskId"])
def test_sam_cancel_of_an_unknown_task_by_task_id(lenient: str, key: str) -> None:
    answer = call(lenient, "tasks/cancel", {key: "no-such-task"})
    assert answer["error"]["code"] == -32001, answer


@pytest.mark.parametrize("method", ["tasks/get", "tasks/resubscribe"])
def test_v03_methods_still_take_the_task_by_id(lenient: str, method: str) -> None:
    """SAM has no ``tasks/get`` or ``tasks/resubscribe``: its tasks are read with
    v0.3's, which names the task ``id``."""
    task_id = _sam_slow(lenient)
    try:
        answer = call(lenient, method, {"task_id": task_id})
        assert answer["error"]["code"] == -32602 and "`id`" in answer["error"]["message"]
    finally:
        call(lenient, "tasks/cancel", {"id": task_id})


@pytest.mark.parametrize(("params", "field"), [
    ({"task_id": None}, "params.task_id"), ({"task_id": ""}, "params.task_id"),
    ({"taskId": None}, "params.taskId"), ({"taskId": ""}, "params.taskId"),
    ({"id": ""}, "params.id"),
])
def test_sam_cancel_without_a_task_names_the_member_sent(
        lenient: str, params: dict[str, Any], field: str) -> None:
    """An empty or null task id is invalid params naming the member the caller used,
    as the sibling dialects answer; it never reaches the store as a task id."""
    answer = call(lenient, "tasks/cancel", params)
    assert answer["error"]["code"] == -32602, answer
    assert field in answer["error"]["message"], answer


@pytest.mark.parametrize("where", ["configuration", "other"])
@pytest.mark.parametrize("keys", [{"messageId": "1"}, {"messageId": "1", "type": "text"}])
def test_keys_nested_beside_the_message_are_no_markers(
        url: str, where: str, keys: dict[str, str]) -> None:
    """Only the members of the params, the message and its parts count
    (docs/versions.md): a ``messageId`` or ``kind`` nested under another member
    leaves a tutorial send the tutorial's."""
    nested = {"x": keys}
    extra = ({"configuration": {"acceptedOutputModes": ["text/plain"], **nested}}
             if where == "configuration" else {"other": nested})
    for tag in ("type", "kind"):  # (a tutorial message with "kind" parts has no messageId)
        msg = {"role": "user", "parts": [{tag: "text", "text": "hi"}]}
        asked = _asked(call(url, "message/send", {"message": msg, **extra}))
        assert asked["parts"][0]["type"] == "text" and "message_id" in asked


def test_snake_case_keys_nested_beside_the_message_are_no_sam_markers(url: str) -> None:
    nested = {"other": {"message_id": "1", "task_id": "t"}}
    tid = f"task-{uuid.uuid4()}"
    msg = {"role": "user", "parts": [{"type": "text", "text": "hi"}]}
    answer = call(url, "tasks/send", {"id": tid, "message": msg, **nested})
    assert "result" in answer, answer
    assert answer["result"]["id"] == tid and "sessionId" in answer["result"]
    # without its id, it is v0.1's missing id, not SAM's send
    missing = call(url, "tasks/send", {"message": msg, **nested})
    assert missing["error"]["code"] == -32602 and "`id`" in missing["error"]["message"], missing
