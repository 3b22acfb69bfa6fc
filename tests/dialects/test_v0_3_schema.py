"""Everything the v0.2/v0.3 codec writes validates against the published JSON schemas.

v0.3.0 is checked for every object; v0.2.6 (the last of the v0.2 family) for
every object it also defines (not the v0.3-only extended-card call, the
mutualTLS scheme or -32007).
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlingua.core import errors
from interlingua.core.calls import (
    DeletePushConfig,
    GetPushConfig,
    GetTask,
    ListPushConfigs,
    SendMessage,
    SetPushConfig,
)
from interlingua.core.dialects.v0_3 import V03Codec, encode_card_v03
from interlingua.core.model import (
    AgentCard,
    ArtifactUpdate,
    Message,
    MutualTLSScheme,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TextPart,
)
from tests.dialects.v0_3_strategies import (
    assert_valid,
    calls,
    cards,
    ids,
    messages,
    push_configs,
    stream_items,
    tasks,
)
from tests.hypothesis_budget import examples

codec = V03Codec()
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))
BOTH = ("v0.3.0", "v0.2.6")


def response(result: bytes) -> Any:
    return msgspec.json.decode(b'{"jsonrpc":"2.0","id":1,"result":' + result + b"}")


@settings(max_examples=examples(100), deadline=None)
@given(tasks)
def test_tasks_validate(task: Task) -> None:
    wire = codec.encode_result(GetTask(id=task.id), task)
    for version in BOTH:
        assert_valid(msgspec.json.decode(wire), "Task", version)
        assert_valid(response(wire), "GetTaskSuccessResponse", version)
        assert_valid(response(wire), "SendMessageSuccessResponse", version)
        assert_valid(response(wire), "CancelTaskSuccessResponse", version)


@settings(max_examples=examples(100), deadline=None)
@given(messages)
def test_messages_validate(message: Message) -> None:
    wire = codec.encode_result(SEND, message)
    for version in BOTH:
        assert_valid(msgspec.json.decode(wire), "Message", version)
        assert_valid(response(wire), "SendMessageSuccessResponse", version)


_EVENT_DEFINITIONS = {
    Task: "Task",
    Message: "Message",
    StatusUpdate: "TaskStatusUpdateEvent",
    ArtifactUpdate: "TaskArtifactUpdateEvent",
}


@settings(max_examples=examples(150), deadline=None)
@given(stream_items)
def test_stream_items_validate(item: Task | Message | StatusUpdate | ArtifactUpdate) -> None:
    wire = codec.encode_stream_item(item)
    for version in BOTH:
        assert_valid(msgspec.json.decode(wire), _EVENT_DEFINITIONS[type(item)], version)
        assert_valid(response(wire), "SendStreamingMessageSuccessResponse", version)


@settings(max_examples=examples(80), deadline=None)
@given(push_configs(ids))
def test_push_config_results_validate(config: PushConfig) -> None:
    assert config.task_id is not None
    for call in (SetPushConfig(task_id=config.task_id, config=config), GetPushConfig(task_id="t")):
        wire = codec.encode_result(call, config)
        for version in BOTH:
            assert_valid(msgspec.json.decode(wire), "TaskPushNotificationConfig", version)
            assert_valid(response(wire), "SetTaskPushNotificationConfigSuccessResponse", version)
            assert_valid(response(wire), "GetTaskPushNotificationConfigSuccessResponse", version)


@settings(max_examples=examples(50), deadline=None)
@given(st.lists(push_configs(), max_size=3))
def test_push_config_list_and_delete_validate(configs: list[PushConfig]) -> None:
    listed = codec.encode_result(ListPushConfigs(task_id="t"), configs)
    deleted = codec.encode_result(DeletePushConfig(task_id="t", config_id="c"), None)
    for version in BOTH:
        assert_valid(response(listed), "ListTaskPushNotificationConfigSuccessResponse", version)
        assert_valid(response(deleted), "DeleteTaskPushNotificationConfigSuccessResponse", version)


_REQUEST_DEFINITIONS = {
    "message/send": "SendMessageRequest",
    "message/stream": "SendStreamingMessageRequest",
    "tasks/get": "GetTaskRequest",
    "tasks/cancel": "CancelTaskRequest",
    "tasks/resubscribe": "TaskResubscriptionRequest",
    "tasks/pushNotificationConfig/set": "SetTaskPushNotificationConfigRequest",
    "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfigRequest",
    "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigRequest",
    "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfigRequest",
    "agent/getAuthenticatedExtendedCard": "GetAuthenticatedExtendedCardRequest",
}


@settings(max_examples=examples(150), deadline=None)
@given(calls)
def test_requests_validate(call: Any) -> None:
    method, params = codec.encode_call(call)
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": msgspec.json.decode(params)}
    assert_valid(request, _REQUEST_DEFINITIONS[method])
    assert_valid(request, "A2ARequest")
    if method != "agent/getAuthenticatedExtendedCard":  # v0.3.0 only
        assert_valid(request, _REQUEST_DEFINITIONS[method], "v0.2.6")


@settings(max_examples=examples(100), deadline=None)
@given(cards)
def test_cards_validate(card: AgentCard) -> None:
    doc = encode_card_v03(card, jsonrpc_url=card.interfaces[0].url)
    assert_valid(doc, "AgentCard")
    wire = codec.encode_result(SEND, card)  # the extended-card call answers the same shape
    assert_valid(response(wire), "GetAuthenticatedExtendedCardSuccessResponse")
    if not any(isinstance(s, MutualTLSScheme) for s in card.security_schemes.values()):
        assert_valid(doc, "AgentCard", "v0.2.6")


# Canonical error -> the schema definition that pins its v0.3 code.
_ERROR_DEFINITIONS: dict[type[errors.A2AError], str] = {
    errors.ParseError: "JSONParseError",
    errors.InvalidRequest: "InvalidRequestError",
    errors.MethodNotFound: "MethodNotFoundError",
    errors.InvalidParams: "InvalidParamsError",
    errors.InternalError: "InternalError",
    errors.TaskNotFound: "TaskNotFoundError",
    errors.TaskNotCancelable: "TaskNotCancelableError",
    errors.PushNotSupported: "PushNotificationNotSupportedError",
    errors.UnsupportedOperation: "UnsupportedOperationError",
    errors.InvalidTaskState: "UnsupportedOperationError",
    errors.StreamingNotSupported: "UnsupportedOperationError",
    errors.ContentTypeNotSupported: "ContentTypeNotSupportedError",
    errors.InvalidAgentResponse: "InvalidAgentResponseError",
    errors.ExtendedCardNotConfigured: "AuthenticatedExtendedCardNotConfiguredError",
    # (v0.3 has no other error for a card that offers no extended card)
    errors.ExtendedCardNotSupported: "AuthenticatedExtendedCardNotConfiguredError",
    errors.ExtensionSupportRequired: "InvalidRequestError",
    errors.VersionNotSupported: "InvalidRequestError",
    errors.AuthenticationRequired: "InvalidRequestError",
    errors.AuthorizationFailed: "InvalidRequestError",
    errors.RateLimitExceeded: "InternalError",
    errors.ResourceUnavailable: "InternalError",
}


@pytest.mark.parametrize("cls", list(_ERROR_DEFINITIONS), ids=lambda c: c.__name__)
@pytest.mark.parametrize("data", [None, {"field": "params.id"}, ["a", 1]])
def test_errors_validate(cls: type[errors.A2AError], data: Any) -> None:
    wire = codec.encode_error(cls("something went wrong", data=data))
    doc = msgspec.json.decode(wire)
    assert doc["message"] == "something went wrong"
    assert ("data" in doc) is (data is not None)
    definition = _ERROR_DEFINITIONS[cls]
    assert_valid(doc, definition)
    whole = msgspec.json.decode(b'{"jsonrpc":"2.0","id":1,"error":' + wire + b"}")
    assert_valid(whole, "JSONRPCErrorResponse")
    if definition != "AuthenticatedExtendedCardNotConfiguredError":
        assert_valid(doc, definition, "v0.2.6")
        assert_valid(whole, "JSONRPCErrorResponse", "v0.2.6")


def test_the_schema_check_can_fail() -> None:
    status = {"state": "working"}
    with pytest.raises(AssertionError):  # status events must say "final"
        assert_valid(
            {"kind": "status-update", "taskId": "t", "contextId": "c", "status": status},
            "TaskStatusUpdateEvent",
        )
    with pytest.raises(AssertionError):  # contextId is required
        assert_valid({"kind": "task", "id": "t", "status": status}, "Task")
    with pytest.raises(AssertionError):  # data must be an object in v0.3
        assert_valid({"kind": "data", "data": [1]}, "DataPart")
    with pytest.raises(AssertionError):  # no mutualTLS before v0.3
        assert_valid({"type": "mutualTLS"}, "SecurityScheme", "v0.2.6")


def test_remote_error_keeps_its_code_and_validates() -> None:
    doc = msgspec.json.decode(codec.encode_error(errors.RemoteError(-32099, "upstream")))
    assert doc == {"code": -32099, "message": "upstream"}
    assert_valid({"jsonrpc": "2.0", "id": None, "error": doc}, "JSONRPCErrorResponse")


def test_unencodable_error_data_is_left_out() -> None:
    doc = msgspec.json.decode(codec.encode_error(errors.InternalError("boom", data=object())))
    assert doc == {"code": -32603, "message": "boom"}
