"""v0.3-ProtoJSON (the bodies of v0.3 HTTP+JSON): golden documents in the shapes of the
v0.3.0 proto (``a2a.v1``, seed 001) and of what the v0.3 SDK's REST client posts
(``MessageToDict`` of its request messages: camelCase JSON names), read into
canonical calls; and answers written in the proto's shapes."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.dialects.v0_3_protojson import V03ProtoJSONCodec
from interlingua.core.errors import InvalidParams, ParseError

PJ = V03ProtoJSONCodec()
enc = msgspec.json.encode


def decode(method: str, doc: Any) -> c.Call:
    return PJ.decode_call(method, enc(doc))


# what SendMessageRequest looks like from the v0.3 SDK client: the proto field
# ``request`` under its json_name ``message``, parts under ``content``
SEND = {
    "message": {
        "messageId": "m-1", "contextId": "ctx-1", "role": "ROLE_USER",
        "content": [
            {"text": "hello"},
            {"file": {"fileWithUri": "https://x.example/a.png", "mimeType": "image/png",
                      "name": "a.png"}},
            {"file": {"fileWithBytes": "aGk=", "mimeType": "text/plain"}},
            {"data": {"data": {"k": 1}}},
        ],
        "metadata": {"a": 1},
    },
    "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 2,
                      "blocking": True,
                      "pushNotification": {"id": "p1", "url": "https://hook.example/x",
                                           "token": "t",
                                           "authentication": {"schemes": ["Bearer"],
                                                              "credentials": "s"}}},
    "metadata": {"m": True},
}


def test_send_request_golden() -> None:
    call = decode("message/send", SEND)
    assert isinstance(call, c.SendMessage) and not call.streaming
    msg = call.message
    assert (msg.message_id, msg.context_id, msg.role) == ("m-1", "ctx-1", m.Role.USER)
    text, url_file, raw_file, data = msg.parts
    assert isinstance(text, m.TextPart) and text.text == "hello"
    assert isinstance(url_file, m.FilePart)
    assert (url_file.uri, url_file.media_type, url_file.filename) == (
        "https://x.example/a.png", "image/png", "a.png")
    assert isinstance(raw_file, m.FilePart) and raw_file.raw == b"hi"
    assert isinstance(data, m.DataPart) and data.data == {"k": 1}
    assert call.config.blocking is True and call.config.history_length == 2
    push = call.config.push_config
    assert push is not None and (push.id, push.url, push.token) == (
        "p1", "https://hook.example/x", "t")
    assert call.metadata == {"m": True}
    assert isinstance(decode("message/stream", SEND), c.SendMessage)


def test_send_reads_proto_names_and_proto3_defaults() -> None:
    # the proto field names (SDK compat clients), parts under ``parts`` too
    call = decode("message/send", {
        "request": {"message_id": "m-2", "role": 1, "parts": [{"text": "x"}]},
        "configuration": {"accepted_output_modes": ["text/plain"]}})
    assert isinstance(call, c.SendMessage)
    assert call.message.message_id == "m-2" and call.message.role is m.Role.USER
    # proto3: a configuration without ``blocking`` says false
    assert call.config.blocking is False
    # no configuration: the send blocks
    plain = decode("message/send", {"message": {"messageId": "m", "role": "ROLE_USER",
                                                "content": [{"text": "x"}]}})
    assert isinstance(plain, c.SendMessage) and plain.config.blocking is True
    # ProtoJSON writes an int32 as a number or as its string, as v1.0's reader takes it
    for written, read in (("2", 2), (2, 2), ("0", 0)):
        quoted = decode("message/send", {
            "message": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]},
            "configuration": {"historyLength": written}})
        assert isinstance(quoted, c.SendMessage) and quoted.config.history_length == read
    for wrong in ("two", "1.5", "--1", ""):
        with pytest.raises(InvalidParams, match="historyLength"):
            decode("message/send", {
                "message": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]},
                "configuration": {"historyLength": wrong}})


@pytest.mark.parametrize("body", [
    # TaskPushNotificationConfig, the route's body in the proto
    {"name": "tasks/t-1/pushNotificationConfigs/cfg",
     "pushNotificationConfig": {"url": "https://hook.example/x", "token": "t"}},
    # CreateTaskPushNotificationConfigRequest, what the v0.3 SDK client posts
    {"parent": "tasks/t-1", "configId": "cfg",
     "config": {"name": "tasks/t-1/pushNotificationConfigs/cfg",
                "pushNotificationConfig": {"url": "https://hook.example/x", "token": "t"}}},
    {"parent": "tasks/t-1", "configId": "cfg",
     "config": {"pushNotificationConfig": {"url": "https://hook.example/x", "token": "t"}}},
])
def test_push_config_create_bodies(body: dict[str, Any]) -> None:
    call = decode("tasks/pushNotificationConfig/set", {**body, "taskId": "t-1"})
    assert isinstance(call, c.SetPushConfig) and call.task_id == "t-1"
    assert (call.config.id, call.config.url, call.config.token) == (
        "cfg", "https://hook.example/x", "t")


@pytest.mark.parametrize(("body", "member"), [
    ({"parent": "tasks/other", "config": {"pushNotificationConfig": {"url": "https://h/x"}}},
     "parent"),
    ({"name": "tasks/other/pushNotificationConfigs/cfg",
      "pushNotificationConfig": {"url": "https://h/x"}}, "name"),
    ({"parent": "tasks/t-1", "config": {"name": "tasks/other/pushNotificationConfigs/c",
                                        "pushNotificationConfig": {"url": "https://h/x"}}},
     "name"),
])
def test_a_push_config_naming_two_tasks_is_refused(body: dict[str, Any], member: str) -> None:
    """The route's task (``taskId``), the request's ``parent`` and the config's
    ``name`` must name one task: the route's was taken, the others passed over."""
    with pytest.raises(InvalidParams, match=f"the request's {member} names task 'other'"):
        decode("tasks/pushNotificationConfig/set", {**body, "taskId": "t-1"})


@pytest.mark.parametrize(("body", "member"), [
    ({"configId": "asked", "config": {"pushNotificationConfig": {"url": "https://h/x",
                                                                 "id": "other"}}},
     "configId"),
    ({"configId": "asked", "config": {"name": "tasks/t-1/pushNotificationConfigs/other",
                                      "pushNotificationConfig": {"url": "https://h/x"}}},
     "name"),
    ({"name": "tasks/t-1/pushNotificationConfigs/other",
      "pushNotificationConfig": {"url": "https://h/x", "id": "asked"}}, "name"),
])
def test_a_push_config_named_two_ways_is_refused(body: dict[str, Any], member: str) -> None:
    """The request's ``configId``, the config's ``name`` and its ``id`` must name one
    config: one was taken and the others passed over, so that the id the caller then
    asked for was not there."""
    with pytest.raises(InvalidParams, match=f"the request's {member} names push "
                                            "notification config"):
        decode("tasks/pushNotificationConfig/set", {**body, "taskId": "t-1"})


def test_bad_bodies() -> None:
    with pytest.raises(ParseError):
        PJ.decode_call("message/send", b"{nope")
    with pytest.raises(InvalidParams):
        PJ.decode_call("message/send", b"[]")
    with pytest.raises(InvalidParams):  # a message without content
        decode("message/send", {"message": {"messageId": "m", "role": "ROLE_USER"}})


def _task() -> m.Task:
    agent = m.Message(message_id="a-1", role=m.Role.AGENT, parts=[m.TextPart(text="bye")],
                      context_id="ctx", task_id="t", reference_task_ids=["other"])
    return m.Task(
        id="t", context_id="ctx",
        status=m.TaskStatus(state=m.TaskState.CANCELED, message=agent,
                            timestamp="2025-01-01T00:00:00.000Z"),
        artifacts=[m.Artifact(artifact_id="art", name="out", parts=[
            m.FilePart(uri="https://x.example/f", media_type="text/plain", filename="f"),
            m.DataPart(data={"v": 1})])],
        history=[agent])


def test_task_answer_golden() -> None:
    doc = msgspec.json.decode(PJ.encode_result(c.GetTask(id="t"), _task()))
    message = {"messageId": "a-1", "contextId": "ctx", "taskId": "t", "role": "ROLE_AGENT",
               "content": [{"text": "bye"}]}  # no referenceTaskIds: not in the v0.3 proto
    assert doc == {
        "id": "t", "contextId": "ctx",
        "status": {"state": "TASK_STATE_CANCELLED", "message": message,
                   "timestamp": "2025-01-01T00:00:00.000Z"},
        "artifacts": [{"artifactId": "art", "name": "out", "parts": [
            {"file": {"fileWithUri": "https://x.example/f", "mimeType": "text/plain",
                      "name": "f"}},
            {"data": {"data": {"v": 1}}}]}],
        "history": [message],
    }
    sent = msgspec.json.decode(PJ.encode_result(c.SendMessage(message=_task().history[0]),
                                                _task()))
    assert set(sent) == {"task"}


def test_stream_items_golden() -> None:
    status = m.StatusUpdate(task_id="t", context_id="ctx",
                            status=m.TaskStatus(state=m.TaskState.COMPLETED))
    assert msgspec.json.decode(PJ.encode_stream_item(status)) == {"statusUpdate": {
        "taskId": "t", "contextId": "ctx", "status": {"state": "TASK_STATE_COMPLETED"},
        "final": True}}
    chunk = m.ArtifactUpdate(task_id="t", context_id="ctx", append=True, last_chunk=True,
                             artifact=m.Artifact(artifact_id="a", parts=[m.TextPart(text="x")]))
    assert msgspec.json.decode(PJ.encode_stream_item(chunk)) == {"artifactUpdate": {
        "taskId": "t", "contextId": "ctx", "append": True, "lastChunk": True,
        "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}}


def test_push_answers_golden() -> None:
    config = m.PushConfig(url="https://hook.example/x", id="cfg", token="t")
    call = c.GetPushConfig(task_id="t-1", config_id="cfg")
    assert msgspec.json.decode(PJ.encode_result(call, config)) == {
        "name": "tasks/t-1/pushNotificationConfigs/cfg",
        "pushNotificationConfig": {"url": "https://hook.example/x", "id": "cfg", "token": "t"}}
    listed = msgspec.json.decode(PJ.encode_result(c.ListPushConfigs(task_id="t-1"), [config]))
    assert listed["nextPageToken"] == "" and len(listed["configs"]) == 1
    assert PJ.encode_result(c.DeletePushConfig(task_id="t-1", config_id="cfg"), None) == b"{}"


def test_round_trips() -> None:
    task = _task()
    for call in (c.GetTask(id="t"), c.CancelTask(id="t")):
        back = PJ.decode_result(call, PJ.encode_result(call, task))
        assert isinstance(back, m.Task)
        assert back.status.state is m.TaskState.CANCELED
        assert back.artifacts == task.artifacts
    send = c.SendMessage(message=task.history[0], config=c.SendConfig(blocking=False))
    method, body = PJ.encode_call(send)
    again = PJ.decode_call(method, body)
    assert isinstance(again, c.SendMessage) and again.config.blocking is False
    assert again.message.parts == send.message.parts
    # referenceTaskIds aside (the v0.3 proto has no such member), items come back whole
    plain = msgspec.structs.replace(task.history[0], reference_task_ids=None)
    whole = msgspec.structs.replace(task, history=[plain], status=m.TaskStatus(
        state=m.TaskState.CANCELED, message=plain, timestamp="2025-01-01T00:00:00.000Z"))
    for item in (whole, plain):
        assert PJ.decode_stream_item(PJ.encode_stream_item(item)) == item
        assert PJ.decode_stream_item(PJ.encode_stream_item(item)) == (
            PJ.inner.decode_stream_item(PJ.inner.encode_stream_item(item)))


@pytest.mark.parametrize("name", ["1.0", "0.3-pj"])
def test_an_http_error_carries_its_data_both_ways(name: str) -> None:
    """A lagging stream's error event on HTTP+JSON says where to resume, as the JSON-RPC
    binding's does: v0.3's body dropped the error's data (and the client read none)."""
    from interlingua.core.dialects import get_codec
    from interlingua.core.errors import ResourceUnavailable

    codec = get_codec(name)
    data = {"lastEventId": 226, "resumable": True}
    error = ResourceUnavailable("This stream fell too far behind", data=data)
    status = codec.http_status(error)
    body = codec.encode_http_error(error, status)
    # as a stream's error event is read (no status: a 503 alone is a proxy's too)
    read = codec.decode_http_error(msgspec.json.decode(body))
    assert type(read) is ResourceUnavailable, body
    if name == "0.3-pj":
        assert read.data == msgspec.json.decode(body)["data"] == data
    else:  # in an ErrorInfo's metadata, whose values are strings
        assert read.data == {"lastEventId": "226", "resumable": "true"}
