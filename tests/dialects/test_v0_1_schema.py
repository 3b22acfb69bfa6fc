"""Everything the v0.1 codec writes validates against the v0.1.0 JSON schema.

Results, stream events, errors and requests are drawn from canonical objects of
every shape the server may hold (``any_*`` strategies: all nine states,
artifacts without index, media types, files with both bytes and uri, …), so
the checks also cover what v0.1 has to down-convert.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings

from interlingua.core import errors
from interlingua.core.calls import (
    CancelTask,
    GetPushConfig,
    GetTask,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.v0_1 import V01Codec
from interlingua.core.model import (
    ArtifactUpdate,
    Message,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TextPart,
)
from tests.dialects.v0_1_strategies import (
    any_messages,
    any_push_configs,
    any_stream_items,
    any_tasks,
    assert_valid,
    calls,
    json_values,
    response,
    schema,
)
from tests.hypothesis_budget import examples

codec = V01Codec()
SEND = SendMessage(
    message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]),
    client_task_id="t-1",
)


@settings(max_examples=examples(120), deadline=None)
@given(any_tasks)
def test_tasks_validate(task: Task) -> None:
    for call, definition in (
        (SEND, "SendTaskResponse"),
        (GetTask(id=task.id), "GetTaskResponse"),
        (CancelTask(id=task.id), "CancelTaskResponse"),
    ):
        wire = codec.encode_result(call, task)
        assert_valid(msgspec.json.decode(wire), "Task")
        assert_valid(response(wire, "req-1"), definition)


@settings(max_examples=examples(80), deadline=None)
@given(any_messages)
def test_a_message_answering_a_send_is_a_task(message: Message) -> None:
    wire = codec.encode_result(SEND, message)
    doc = msgspec.json.decode(wire)
    assert_valid(doc, "Task")
    assert_valid(response(wire), "SendTaskResponse")
    assert doc["status"]["state"] == "completed"
    assert doc["id"] == (message.task_id or "t-1")


_EVENTS = {
    StatusUpdate: "TaskStatusUpdateEvent",
    ArtifactUpdate: "TaskArtifactUpdateEvent",
    Task: "TaskStatusUpdateEvent",  # a stream's snapshot goes out as its status
    Message: "TaskStatusUpdateEvent",  # a bare answer goes out as a completed status
}


@settings(max_examples=examples(200), deadline=None)
@given(any_stream_items)
def test_stream_items_validate(item: Task | Message | StatusUpdate | ArtifactUpdate) -> None:
    wire = codec.encode_stream_item(item)
    doc = msgspec.json.decode(wire)
    assert_valid(doc, _EVENTS[type(item)])
    assert_valid(response(wire, 7), "SendTaskStreamingResponse")
    # v0.1 has no discriminator: exactly one of the telling members is there
    assert ("status" in doc) != ("artifact" in doc)


@settings(max_examples=examples(80), deadline=None)
@given(any_push_configs)
def test_push_config_results_validate(config: PushConfig) -> None:
    for call, definition in (
        (SetPushConfig(task_id="t", config=config), "SetTaskPushNotificationResponse"),
        (GetPushConfig(task_id="t"), "GetTaskPushNotificationResponse"),
    ):
        wire = codec.encode_result(call, config)
        doc = msgspec.json.decode(wire)
        assert_valid(doc, "TaskPushNotificationConfig")
        assert_valid(response(wire), definition)
        assert doc["id"] == (config.task_id or "t")


_REQUESTS = {
    "tasks/send": "SendTaskRequest",
    "tasks/sendSubscribe": "SendTaskStreamingRequest",
    "tasks/get": "GetTaskRequest",
    "tasks/cancel": "CancelTaskRequest",
    "tasks/resubscribe": "TaskResubscriptionRequest",
    "tasks/pushNotification/set": "SetTaskPushNotificationRequest",
    "tasks/pushNotification/get": "GetTaskPushNotificationRequest",
}


def test_every_request_of_the_schema_is_covered() -> None:
    definitions = schema()["$defs"]
    methods = {
        d["properties"]["method"]["const"]
        for name, d in definitions.items()
        if name.endswith("Request") and "const" in d.get("properties", {}).get("method", {})
    }
    assert methods == set(codec.methods) == set(_REQUESTS)


@settings(max_examples=examples(150), deadline=None)
@given(calls)
def test_requests_validate(call: Any) -> None:
    method, params = codec.encode_call(call)
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": msgspec.json.decode(params)}
    assert_valid(request, _REQUESTS[method])
    if method != "tasks/sendSubscribe":  # the schema's A2ARequest leaves it out
        assert_valid(request, "A2ARequest")


@settings(max_examples=examples(60), deadline=None)
@given(any_messages)
def test_sends_of_any_message_validate(message: Message) -> None:
    # A message carrying v0.2+ fields (ids, extensions, media types) still makes a v0.1 request.
    for call in (SendMessage(message=message), SendMessage(message=message, streaming=True)):
        method, params = codec.encode_call(call)
        request = {
            "jsonrpc": "2.0",
            "id": "r",
            "method": method,
            "params": msgspec.json.decode(params),
        }
        assert_valid(request, _REQUESTS[method])


def test_subscribe_and_cancel_requests_validate() -> None:
    for call in (SubscribeToTask(id="t", history_length=3), CancelTask(id="t", metadata={"a": 1})):
        method, params = codec.encode_call(call)
        assert_valid(
            {"jsonrpc": "2.0", "id": 1, "method": method, "params": msgspec.json.decode(params)},
            _REQUESTS[method],
        )


_ERROR_CLASSES = [
    cls
    for cls in vars(errors).values()
    if isinstance(cls, type) and issubclass(cls, errors.A2AError) and cls is not errors.RemoteError
]


@pytest.mark.parametrize("cls", _ERROR_CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("data", [None, {"field": "params.id"}, ["a", 1], "text", 3])
def test_errors_validate(cls: type[errors.A2AError], data: Any) -> None:
    wire = codec.encode_error(cls("something went wrong", data=data))
    doc = msgspec.json.decode(wire)
    assert doc["message"] == "something went wrong"
    assert doc["code"] == get_codec("0.1").code_of(cls())
    if data is None:
        assert "data" not in doc
    elif isinstance(data, dict):
        assert doc["data"] == data
    else:  # the schema's JSONRPCError.data is an object
        assert doc["data"] == {"value": data}
    assert_valid(doc, "JSONRPCError")
    # (the schema has no null id, which the spec prose allows for parse errors)
    assert_valid({"jsonrpc": "2.0", "id": 1, "error": doc}, "JSONRPCResponse")


@settings(max_examples=examples(60), deadline=None)
@given(json_values)
def test_any_error_data_validates(data: Any) -> None:
    doc = msgspec.json.decode(codec.encode_error(errors.InternalError("boom", data=data)))
    assert_valid(doc, "JSONRPCError")


def test_unencodable_error_data_is_left_out() -> None:
    doc = msgspec.json.decode(codec.encode_error(errors.InternalError("boom", data=object())))
    assert doc == {"code": -32603, "message": "boom"}


def test_the_schema_check_can_fail() -> None:
    with pytest.raises(AssertionError):  # no "rejected" in v0.1
        assert_valid({"id": "t", "status": {"state": "rejected"}}, "Task")
    with pytest.raises(AssertionError):  # the schema types data as an object
        assert_valid({"type": "data", "data": [1]}, "DataPart")
    with pytest.raises(AssertionError):  # parts are tagged "type", not "kind"
        assert_valid({"role": "user", "parts": [{"kind": "text", "text": "x"}]}, "Message")
    with pytest.raises(AssertionError):  # timestamps are RFC 3339 date-times
        assert_valid({"state": "working", "timestamp": "yesterday"}, "TaskStatus")
    with pytest.raises(AssertionError):  # error data is an object
        assert_valid({"code": 1, "message": "m", "data": [1]}, "JSONRPCError")
