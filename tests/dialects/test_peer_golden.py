"""Golden tests from peers' real bytes: lenient reading, strict writing.

The fixtures under ``fixtures/peers/`` were captured on loopback from fasta2a
2.1.1, python-a2a 0.5.10 and langgraph-api 0.16.7 (see their README). Each case
feeds them through the codecs (what the detector picks, what the codec reads),
through a served agent (real HTTP: the peer's request bytes as it sent them) or
through the client (real HTTP: a server that answers with the peer's bytes).
What we write is checked to stay our own dialect's, whatever we read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua import Agent, Client, Context
from interlingua.core.calls import GetTask, SendMessage
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.detect import detect
from interlingua.core.model import (
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TextPart,
)
from interlingua.core.parts import get_text
from interlingua.core.sse import SSEDecoder
from tests.dialects.peer_replay import Replay, exchange
from tests.live import live_agent, live_server

SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))
STREAM = SendMessage(message=SEND.message, streaming=True)


def request_of(name: str) -> tuple[str, bytes]:
    body = json.loads(exchange(name)["request"])
    return body["method"], json.dumps(body["params"]).encode()


def result_of(name: str) -> bytes:
    return json.dumps(json.loads(exchange(name)["response"])["result"]).encode()


def events_of(name: str) -> list[bytes]:
    """The data of each SSE event of a captured stream, as sent."""
    return [ev.data.encode() for ev in SSEDecoder().feed(exchange(name)["response"].encode())]


def results_of_stream(name: str) -> list[bytes]:
    return [json.dumps(json.loads(data)["result"]).encode() for data in events_of(name)]


# ------------------------------------------------------------------ codecs: requests


@pytest.mark.parametrize("name", ["fasta2a-2.1.1/client-message-send.json",
                                  "fasta2a-2.1.1/client-message-stream.json"])
def test_fasta2a_untagged_parts_stay_v03(name: str) -> None:
    """fasta2a's client: v0.3 methods, v1.0-style parts without ``kind``. Read as
    v0.3 (a v0.3 method is answered in v0.3), each part by the member it holds."""
    method, params = request_of(name)
    dialect = detect(method, params).dialect
    assert dialect == "0.3"
    call = get_codec(dialect).decode_call(method, params)
    assert isinstance(call, SendMessage)
    assert call.streaming == (method == "message/stream")
    assert [type(p) for p in call.message.parts] == [TextPart]
    assert get_text(call.message) in ("echo hello", "stream 2")


def test_untagged_file_and_data_parts() -> None:
    """fasta2a's other part kinds as its schema (``fasta2a.schema.Part``) spells them
    (not captured: its client was driven with text only): a v1.0 file part
    (``raw`` / ``url`` with ``mediaType``, ``filename``) and a data part."""
    params = json.dumps({"message": {"role": "user", "messageId": "m", "parts": [
        {"raw": "AAEC", "mediaType": "application/octet-stream", "filename": "b.bin"},
        {"url": "https://example.com/a.pdf", "mediaType": "application/pdf"},
        {"data": {"k": [1, 2]}},
    ]}}).encode()
    assert detect("message/send", params).dialect == "0.3"
    call = get_codec("0.3").decode_call("message/send", params)
    assert isinstance(call, SendMessage)
    raw, url, data = call.message.parts
    assert isinstance(raw, FilePart) and raw.raw == b"\x00\x01\x02"
    assert (raw.media_type, raw.filename) == ("application/octet-stream", "b.bin")
    assert isinstance(url, FilePart) and url.uri == "https://example.com/a.pdf"
    assert isinstance(data, DataPart) and data.data == {"k": [1, 2]}


def test_python_a2a_content_message_is_v01() -> None:
    """python-a2a's client: ``tasks/send`` with a task id (v0.1's), its message's one
    part under ``content``, a snake_case ``message_id`` and a ``status`` beside."""
    method, params = request_of("python-a2a-0.5.10/client-tasks-send.json")
    dialect = detect(method, params).dialect
    assert dialect == "0.1"
    call = get_codec(dialect).decode_call(method, params)
    assert isinstance(call, SendMessage)
    assert get_text(call.message) == "echo hi"
    assert call.client_task_id == json.loads(params)["id"]


# ------------------------------------------------------------------- codecs: results


def test_fasta2a_wrapped_v03_send_result() -> None:
    """fasta2a answers ``message/send`` with ``{"task": …}``, nothing tagged."""
    task = get_codec("0.3").decode_result(SEND, result_of("fasta2a-2.1.1/server-message-send.json"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.SUBMITTED
    assert get_text(task.history[0]) == "hello"


def test_fasta2a_untagged_task() -> None:
    task = get_codec("0.3").decode_result(GetTask(id="t"),
                                          result_of("fasta2a-2.1.1/server-tasks-get.json"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert get_text(task.artifacts[0]) == "echo: hello"


def test_fasta2a_v03_stream_of_v1_members() -> None:
    """fasta2a's ``message/stream``: v1.0's ``task`` / ``statusUpdate`` /
    ``artifactUpdate`` members with v0.3's lowercase states."""
    codec = get_codec("0.3")
    items = [codec.decode_stream_item(r)
             for r in results_of_stream("fasta2a-2.1.1/server-message-stream.json")]
    assert [type(i) for i in items] == [Task, StatusUpdate, ArtifactUpdate, StatusUpdate]
    assert isinstance(items[2], ArtifactUpdate)
    assert get_text(items[2].artifact) == "echo: stream please"
    assert isinstance(items[3], StatusUpdate)
    assert items[3].status.state is TaskState.COMPLETED


def test_fasta2a_v1_answer_reads_as_before() -> None:
    task = get_codec("1.0").decode_result(SEND, result_of("fasta2a-2.1.1/server-SendMessage.json"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.SUBMITTED


def test_langgraph_v1_stream_with_v03_shaped_events() -> None:
    """langgraph-api's ``SendStreamingMessage``: ``{"task": …}`` first, then bare
    ``kind``-tagged events (v1.0 enums inside)."""
    codec = get_codec("1.0")
    results = results_of_stream("langgraph-api-0.16.7/server-SendStreamingMessage.json")
    first = codec.decode_result(STREAM, results[0])
    assert isinstance(first, Task)
    items = [codec.decode_stream_item(r) for r in results[1:]]
    assert [type(i) for i in items] == [StatusUpdate, ArtifactUpdate, StatusUpdate]
    assert isinstance(items[0], StatusUpdate) and items[0].status.message is not None
    assert get_text(items[0].status.message) == "echo: hello stream"
    assert isinstance(items[2], StatusUpdate)
    assert items[2].status.state is TaskState.COMPLETED


def test_python_a2a_task_answer_and_bare_task_events() -> None:
    codec = get_codec("0.1")
    task = codec.decode_result(SEND, result_of("python-a2a-0.5.10/server-tasks-send.json"))
    assert isinstance(task, Task)
    assert get_text(task.artifacts[0]) == "echo: hello"
    events = [codec.decode_stream_item(d)
              for d in events_of("python-a2a-0.5.10/server-tasks-stream.json")]
    assert [type(e) for e in events] == [Task, Task]
    last = events[1]
    assert isinstance(last, Task)
    assert last.status.state is TaskState.COMPLETED
    assert get_text(last.artifacts[0]) == "echo: hello"


# --------------------------------------------------------------- served: real HTTP


async def _echo(ctx: Context) -> None:
    await ctx.complete(artifact=f"got {ctx.text}")


ECHO = Agent(name="Echo", description="Echoes", executor=_echo)


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    with live_agent(ECHO) as url:
        yield url


def _post(url: str, name: str, path: str = "/") -> httpx.Response:
    ex = exchange(name)
    return httpx.post(url + path, content=ex["request"].encode(),
                      headers={"Content-Type": "application/json"}, timeout=10)


def test_fasta2a_send_is_answered_in_v03(agent_url: str) -> None:
    """Strict writing: the answer is v0.3's (bare, ``kind`` tags), not the v1.0
    shape fasta2a's own server uses."""
    resp = _post(agent_url, "fasta2a-2.1.1/client-message-send.json")
    result = resp.json()["result"]
    assert result["kind"] == "task"
    assert result["status"]["state"] == "completed"
    assert result["artifacts"][0]["parts"] == [{"kind": "text", "text": "got echo hello"}]
    assert "task" not in result


def test_fasta2a_stream_is_answered_in_v03(agent_url: str) -> None:
    ex = exchange("fasta2a-2.1.1/client-message-stream.json")
    with httpx.stream("POST", agent_url + "/", content=ex["request"].encode(), timeout=10,
                      headers={"Content-Type": "application/json"}) as resp:
        body = resp.read()
    assert resp.headers["content-type"].startswith("text/event-stream")
    kinds = [json.loads(ev.data)["result"]["kind"] for ev in SSEDecoder().feed(body)]
    assert kinds[0] == "task" and kinds[-1] == "status-update"


def test_python_a2a_posts_to_tasks_send(agent_url: str) -> None:
    """python-a2a's client posts to ``{endpoint}/tasks/send``: answered there as
    v0.1 (its client reads the artifacts' ``type: text`` parts)."""
    resp = _post(agent_url, "python-a2a-0.5.10/client-tasks-send.json", "/tasks/send")
    assert resp.status_code == 200
    result = resp.json()["result"]
    assert result["status"]["state"] == "completed"
    assert result["artifacts"][0]["parts"] == [{"type": "text", "text": "got echo hi"}]
    # the JSON-RPC URL takes POST alone there too: a GET is no GetTask of a task "send"
    got = httpx.get(agent_url + "/tasks/send", timeout=10)
    assert got.status_code == 405 and got.headers["allow"] == "POST"


# ----------------------------------------------------------------- client: real HTTP


def test_client_reads_fasta2a_wrapped_result_and_follows_it() -> None:
    """fasta2a never blocks: its ``{"task": …}`` answer is ``submitted``. A
    blocking send polls the task (``tasks/get``) until it settles. What we send
    stays v0.3: a ``message/send`` with ``kind`` tags."""
    replay = Replay(["fasta2a-2.1.1/server-message-send.json",
                     "fasta2a-2.1.1/server-tasks-get.json"])

    async def go(url: str) -> Task | Message:
        async with Client(url, dialect="0.3") as client:
            return await client.send("hello")

    with live_server(replay) as url:
        task = asyncio.run(go(url))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert [p["method"] for p in replay.posts] == ["message/send", "tasks/get"]
    sent = replay.posts[0]["params"]["message"]
    assert sent["kind"] == "message" and sent["parts"][0]["kind"] == "text"


def test_client_not_blocking_returns_early_task() -> None:
    replay = Replay(["fasta2a-2.1.1/server-message-send.json"])

    async def go(url: str) -> Task | Message:
        async with Client(url, dialect="0.3") as client:
            return await client.send("hello", blocking=False)

    with live_server(replay) as url:
        task = asyncio.run(go(url))
    assert isinstance(task, Task) and task.status.state is TaskState.SUBMITTED
    assert len(replay.posts) == 1


def test_client_follow_gives_up_at_the_timeout() -> None:
    """A task that stays ``submitted`` ends the blocking send at the client's
    timeout with ``TaskNotSettled``, naming the task."""
    from interlingua.client import TaskNotSettled

    replay = Replay(["fasta2a-2.1.1/server-message-send.json"])

    async def go(url: str) -> None:
        async with Client(url, dialect="0.3", timeout=0.5) as client:
            await client.send("hello")

    with live_server(replay) as url, pytest.raises(TaskNotSettled) as info:
        asyncio.run(go(url))
    assert isinstance(info.value.task, Task)
    assert info.value.task.id in str(info.value)
    assert len(replay.posts) > 2  # it polled


def test_client_streams_langgraph() -> None:
    replay = Replay(["langgraph-api-0.16.7/server-SendStreamingMessage.json"])

    async def go(url: str) -> list[Any]:
        async with Client(url, dialect="1.0") as client:
            return [ev async for ev in client.stream("hello")]

    with live_server(replay) as url:
        events = asyncio.run(go(url))
    kinds = [type(ev.item) for ev in events]
    assert kinds == [Task, StatusUpdate, ArtifactUpdate, StatusUpdate]
    assert replay.posts[0]["method"] == "SendStreamingMessage"


def test_client_streams_python_a2a_bare_tasks() -> None:
    replay = Replay(["python-a2a-0.5.10/server-tasks-stream.json"])

    async def go(url: str) -> list[Any]:
        async with Client(url, dialect="0.1") as client:
            return [ev async for ev in client.stream("hello")]

    with live_server(replay) as url:
        events = asyncio.run(go(url))
    assert [type(ev.item) for ev in events] == [Task, Task]
    assert events[-1].item.status.state is TaskState.COMPLETED
    assert replay.posts[0]["method"] == "tasks/sendSubscribe"
