"""A file part written in one dialect and read in the others, on a real server on
loopback (JSON-RPC, HTTP+JSON and gRPC): each answer is one its own dialect allows,
interlingua's client reads it in that dialect, the server takes it back as it wrote
it, and every reader gets the same file.

Two parts only some dialects accept are the cases: v0.1's file with neither ``bytes``
nor ``uri`` (a bare reference), which the v0.3 family and v1.0 get as empty bytes, and
SAM's file with both, which every other dialect gets as its bytes alone.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import msgspec
import pytest

from interlingua import Agent
from interlingua.client import Client
from interlingua.core import model as m
from interlingua.core.calls import SendMessage
from interlingua.core.dialects.sam import SAMCodec
from interlingua.core.dialects.tutorial import TutorialCodec
from interlingua.core.parts import new_id
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2 as pb03
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2_grpc as rpc03
from interlingua.server.context import Context
from tests.live import live_grpc_agent

#: v0.1's file without content or address, and SAM's with both
NEITHER = {"name": "x.txt", "mimeType": "text/plain"}
BOTH = {"bytes": "YQ==", "uri": "https://files.example/a", "name": "a"}
#: what a reader that must have one member gets of each
AS_EMPTY = m.FilePart(raw=b"", media_type="text/plain", filename="x.txt")
AS_BYTES = m.FilePart(raw=b"a", filename="a")


async def _echo(ctx: Context) -> None:
    """Completes with the parts it was sent as its artifact."""
    await ctx.complete("ok", artifact=list(ctx.task.history[-1].parts), name="echo")


AGENT = Agent("Echo", "Echoes the parts it is sent.", _echo, streaming=True)


@pytest.fixture(scope="module")
def where() -> Iterator[tuple[str, str]]:
    """(HTTP base URL, gRPC host:port) of the agent."""
    with live_grpc_agent(AGENT) as served:
        yield served


def _rpc(url: str, method: str, params: dict[str, Any],
         headers: dict[str, str] | None = None) -> Any:
    resp = httpx.post(url + "/", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                       "params": params}, headers=headers or {}, timeout=10)
    doc = resp.json()
    assert "result" in doc, doc
    return doc["result"]


def _send(url: str, sender: str) -> str:
    """The id of a completed task made by a v0.1 send of ``NEITHER`` or a SAM send of
    ``BOTH``."""
    if sender == "v0.1":
        params: dict[str, Any] = {"id": new_id(), "message": {
            "role": "user", "parts": [{"type": "file", "file": NEITHER}]}}
    else:
        params = {"message": {"message_id": new_id(), "role": "user",
                              "parts": [{"file": BOTH}]}}
    task = _rpc(url, "tasks/send", params)
    assert task["status"]["state"] == "completed", task
    return str(task["id"])


def _client(where: tuple[str, str], reader: str) -> Client:
    binding, dialect = reader.split("-")
    if binding == "grpc":
        return Client("grpc://" + where[1], dialect=dialect)
    return Client(where[0] + "/", dialect=dialect, binding=binding)


def _files(task: m.Task) -> list[m.Part]:
    """The file of the user's message and of the artifact that echoes it."""
    return [task.history[0].parts[0], task.artifacts[0].parts[0]]


#: who sends the file, and what a reader that must have one member gets of it
CASES = [("v0.1", AS_EMPTY), ("sam", AS_BYTES)]
CLIENTS = ["jsonrpc-0.3", "rest-0.3", "grpc-0.3", "jsonrpc-1.0", "rest-1.0", "grpc-1.0"]


async def _read_back(where: tuple[str, str], sender: str, reader: str) -> list[m.Part]:
    """The files of a task ``sender`` made, as the client of ``reader`` reads them."""
    task_id = _send(where[0], sender)
    async with _client(where, reader) as client:
        return _files(await client.get_task(task_id))


@pytest.mark.parametrize("reader", CLIENTS)
async def test_a_v01_file_with_neither_member_is_read_as_empty_bytes(
        where: tuple[str, str], reader: str) -> None:
    assert await _read_back(where, "v0.1", reader) == [AS_EMPTY, AS_EMPTY]


async def test_v01_reads_its_bare_reference_as_it_was_sent(where: tuple[str, str]) -> None:
    bare = m.FilePart(media_type="text/plain", filename="x.txt")
    assert await _read_back(where, "v0.1", "jsonrpc-0.1") == [bare, bare]


@pytest.mark.parametrize("reader", [*CLIENTS, "jsonrpc-0.1"])
async def test_a_sam_file_with_both_members_is_its_bytes_everywhere(
        where: tuple[str, str], reader: str) -> None:
    assert await _read_back(where, "sam", reader) == [AS_BYTES, AS_BYTES]


def test_sam_reads_its_file_with_both_back_as_it_was_sent(where: tuple[str, str]) -> None:
    """SAM, which allows both, keeps them (seed 002 gives a file both ways): the same bytes
    as every other reader, and the address besides."""
    task_id = _send(where[0], "sam")
    doc = _rpc(where[0], "tasks/get", {"id": task_id})  # in the dialect it was made in
    assert doc["history"][0]["parts"][0] == {"file": BOTH}
    # SAM has no tasks/get of its own: the task is read as a send's answer is
    send = SendMessage(message=m.Message(message_id="m", role=m.Role.USER, parts=[]))
    task = SAMCodec().decode_result(send, msgspec.json.encode(doc))
    assert isinstance(task, m.Task)
    both = m.FilePart(raw=b"a", uri=BOTH["uri"], filename="a")
    assert _files(task) == [both, both]


# ------------------------------------------------ what the v0.3 family writes, taken back


def _tutorial_task(url: str, task_id: str) -> tuple[list[Any], m.Task]:
    """The task's file parts as the tutorial's ``task/subscribe`` replays them from the
    start of its log, and the task that replay reads as."""
    codec = TutorialCodec()
    body = {"jsonrpc": "2.0", "id": 1, "method": "task/subscribe", "params": {"id": task_id}}
    events = []
    with httpx.stream("POST", url + "/", json=body, headers={"Last-Event-ID": "0"},
                      timeout=10) as resp:
        for line in resp.iter_lines():
            if line.startswith("data: "):
                events.append(msgspec.json.decode(line[6:])["result"])
    first, artifact = events[0], events[1]
    assert first["kind"] == "task" and artifact["kind"] == "artifact-update", events
    task = codec.decode_stream_item(msgspec.json.encode(first))
    update = codec.decode_stream_item(msgspec.json.encode(artifact))
    assert isinstance(task, m.Task) and isinstance(update, m.ArtifactUpdate)
    task.artifacts = [update.artifact]
    return [first["history"][0]["parts"][0], artifact["artifact"]["parts"][0]], task


def _one_of(file: dict[str, Any], content: str, address: str) -> None:
    assert (content in file) + (address in file) == 1, file


def _jsonrpc_taken_back(url: str, task_id: str) -> m.Part:
    task = _rpc(url, "tasks/get", {"id": task_id}, {"A2A-Version": "0.3"})
    parts = [task["history"][0]["parts"][0], task["artifacts"][0]["parts"][0]]
    for part in parts:
        _one_of(part["file"], "bytes", "uri")
    answer = _rpc(url, "message/send", {"message": {
        "kind": "message", "messageId": new_id(), "role": "user", "parts": parts}})
    return _first_artifact_file(answer)


def _rest_taken_back(url: str, task_id: str) -> m.Part:
    task = httpx.get(f"{url}/v1/tasks/{task_id}", timeout=10).json()
    parts = [task["history"][0]["content"][0], task["artifacts"][0]["parts"][0]]
    for part in parts:
        _one_of(part["file"], "fileWithBytes", "fileWithUri")
    resp = httpx.post(url + "/v1/message:send", timeout=10, json={"message": {
        "messageId": new_id(), "role": "ROLE_USER", "content": parts}})
    assert resp.status_code == 200, resp.text
    (part, _) = resp.json()["task"]["artifacts"][0]["parts"]
    assert "fileWithBytes" in part["file"], part
    return _rest_file(part["file"])


def _rest_file(file: dict[str, Any]) -> m.Part:
    return m.FilePart(raw=base64.b64decode(file["fileWithBytes"]),
                      media_type=file.get("mimeType"), filename=file.get("name"))


def _grpc_taken_back(target: str, task_id: str) -> m.Part:
    with grpc.insecure_channel(target) as channel:
        stub = rpc03.A2AServiceStub(channel)
        task = stub.GetTask(pb03.GetTaskRequest(name="tasks/" + task_id), timeout=10)
        parts = [task.history[0].content[0], task.artifacts[0].parts[0]]
        for part in parts:
            assert part.file.WhichOneof("file") == "file_with_bytes", part
        answer = stub.SendMessage(pb03.SendMessageRequest(request=pb03.Message(
            message_id=new_id(), role=pb03.ROLE_USER, content=parts)), timeout=10)
    file = answer.task.artifacts[0].parts[0].file
    return m.FilePart(raw=file.file_with_bytes, media_type=file.mime_type or None,
                      filename=file.name or None)


def _tutorial_taken_back(url: str, task_id: str) -> m.Part:
    parts, task = _tutorial_task(url, task_id)
    for part in parts:
        _one_of(part["file"], "bytes", "uri")
    assert _files(task)[0] == _files(task)[1]
    # no messageId, parts tagged ``type``: the tutorial's own send
    answer = _rpc(url, "message/send", {"message": {"role": "user", "parts": parts}})
    return _first_artifact_file(answer)


def _first_artifact_file(task: Any) -> m.Part:
    file = task["artifacts"][0]["parts"][0]["file"]
    assert "uri" not in file, file
    return m.FilePart(raw=base64.b64decode(file["bytes"]), uri=None,
                      media_type=file.get("mimeType"), filename=file.get("name"))


@pytest.mark.parametrize(("sender", "expected"), CASES)
@pytest.mark.parametrize("binding", ["jsonrpc-0.3", "rest-0.3", "grpc-0.3", "tutorial"])
def test_what_the_v03_family_writes_is_taken_back(
        where: tuple[str, str], binding: str, sender: str, expected: m.FilePart) -> None:
    url, target = where
    task_id = _send(url, sender)
    if binding == "grpc-0.3":
        got = _grpc_taken_back(target, task_id)
    elif binding == "rest-0.3":
        got = _rest_taken_back(url, task_id)
    elif binding == "tutorial":
        got = _tutorial_taken_back(url, task_id)
    else:
        got = _jsonrpc_taken_back(url, task_id)
    assert got == expected


@pytest.mark.parametrize(("sender", "expected"), CASES)
def test_the_tutorial_reads_the_file_every_other_reader_does(
        where: tuple[str, str], sender: str, expected: m.FilePart) -> None:
    _, task = _tutorial_task(where[0], _send(where[0], sender))
    assert _files(task) == [expected, expected]
