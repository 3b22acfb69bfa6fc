"""What the v0.2/v0.3 codec refuses (InvalidParams naming the field) and what it lets through."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from interlingua.core import errors
from interlingua.core.calls import (
    GetExtendedCard,
    GetPushConfig,
    GetTask,
    ListTasks,
    ListTasksResult,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.v0_3 import V03Codec
from interlingua.core.model import DataPart, FilePart, Message, PushConfig, Role, Task, TextPart

codec = V03Codec()


def msg(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def part(p: dict[str, Any]) -> dict[str, Any]:
    return {"message": msg(parts=[p])}


def decode(method: str, params: Any) -> Any:
    raw = None if params is None else msgspec.json.encode(params)
    return codec.decode_call(method, raw)


INVALID = [
    # (case id, method, params, text the error message must contain)
    ("missing message", "message/send", {}, "`message`"),
    ("no params", "message/send", None, "`message`"),
    ("message not an object", "message/send", {"message": "hi"}, "params.message"),
    ("params an array", "message/send", [msg()], "object"),
    ("empty parts", "message/send", {"message": msg(parts=[])}, "params.message.parts"),
    ("missing parts", "message/send", {"message": msg(parts=...)}, "`parts`"),
    ("empty messageId", "message/send", {"message": msg(messageId="")}, "params.message.messageId"),
    ("missing messageId", "message/send", {"message": msg(messageId=...)}, "`messageId`"),
    (
        "tutorial message without messageId",
        "message/send",
        {"message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]}},
        "`messageId`",
    ),
    ("bad role", "message/send", {"message": msg(role="bot")}, "params.message.role"),
    ("bare message, bad role", "message/send", msg(role="system"), "params.message.role"),
    ("message kind", "message/send", {"message": msg(kind="task")}, "params.message.kind"),
    (
        "file with bytes and uri",
        "message/send",
        part({"kind": "file", "file": {"bytes": "aGk=", "uri": "https://x/y"}}),
        "params.message.parts[0].file",
    ),
    (
        "file with neither",
        "message/send",
        part({"kind": "file", "file": {"name": "a.txt"}}),
        "params.message.parts[0].file",
    ),
    (
        "data not an object",
        "message/send",
        part({"kind": "data", "data": [1, 2]}),
        "params.message.parts[0].data",
    ),
    (
        "data a string",
        "message/send",
        part({"kind": "data", "data": "text"}),
        "params.message.parts[0].data",
    ),
    (
        "invalid base64",
        "message/send",
        part({"kind": "file", "file": {"bytes": "not base64!"}}),
        "params.message.parts[0].file.bytes",
    ),
    (
        "unknown kind",
        "message/send",
        part({"kind": "video", "url": "x"}),
        "params.message.parts[0].kind",
    ),
    # without a kind, a part holding one member is read as that member (fasta2a's parts);
    # one holding two cannot be told
    ("part without kind, two members", "message/send", part({"text": "hi", "data": {"a": 1}}),
     "params.message.parts[0]"),
    (
        "second part bad",
        "message/stream",
        {"message": msg(parts=[{"kind": "text", "text": "a"}, {"kind": "file", "file": {}}])},
        "params.message.parts[1].file",
    ),
    (
        "negative historyLength on send",
        "message/send",
        {"message": msg(), "configuration": {"historyLength": -1}},
        "params.configuration.historyLength",
    ),
    (
        "negative historyLength on get",
        "tasks/get",
        {"id": "t", "historyLength": -5},
        "params.historyLength",
    ),
    (
        "historyLength not an int",
        "tasks/get",
        {"id": "t", "historyLength": "3"},
        "params.historyLength",
    ),
    ("get without id", "tasks/get", {}, "`id`"),
    ("cancel without id", "tasks/cancel", None, "`id`"),
    ("id not a string", "tasks/cancel", {"id": 7}, "params.id"),
    ("resubscribe without id", "tasks/resubscribe", {"taskId": "t"}, "`id`"),
    (
        "push set without url",
        "tasks/pushNotificationConfig/set",
        {"taskId": "t", "pushNotificationConfig": {"token": "x"}},
        "`url`",
    ),
    (
        "push set without config",
        "tasks/pushNotificationConfig/set",
        {"taskId": "t"},
        "`pushNotificationConfig`",
    ),
    (
        "push auth without schemes",
        "tasks/pushNotificationConfig/set",
        {"taskId": "t", "pushNotificationConfig": {"url": "u", "authentication": {}}},
        "`schemes`",
    ),
    (
        "push delete without config id",
        "tasks/pushNotificationConfig/delete",
        {"id": "t"},
        "`pushNotificationConfigId`",
    ),
    ("push list without id", "tasks/pushNotificationConfig/list", {}, "`id`"),
    (
        "blocking not a bool",
        "message/send",
        {"message": msg(), "configuration": {"blocking": "yes"}},
        "params.configuration.blocking",
    ),
]


@pytest.mark.parametrize(
    ("method", "params", "field"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_params_name_the_field(method: str, params: Any, field: str) -> None:
    with pytest.raises(errors.InvalidParams) as info:
        decode(method, params)
    assert get_codec("0.3").code_of(info.value) == -32602
    assert field in info.value.message
    assert method in info.value.message


def test_malformed_json_params() -> None:
    with pytest.raises(errors.InvalidParams):
        codec.decode_call("message/send", b'{"message": {')


def test_deep_nesting_is_invalid_params() -> None:
    deep = b'{"id":"t","metadata":' + b"[" * 5000 + b"]" * 5000 + b"}"
    with pytest.raises(errors.InvalidParams):
        codec.decode_call("tasks/cancel", deep)


@pytest.mark.parametrize(
    "method",
    [
        "tasks/list",
        "SendMessage",
        "GetTask",
        "tasks/send",
        "tasks/sendSubscribe",
        "message/sendx",
        "",
    ],
)
def test_methods_of_other_dialects_are_not_found(method: str) -> None:
    with pytest.raises(errors.MethodNotFound) as info:
        codec.decode_call(method, b"{}")
    assert get_codec("0.3").code_of(info.value) == -32601


# ------------------------------------------------------------------------- leniency


def test_bare_message_as_params() -> None:
    # seed 000: "params: Message" (DIALECTS §i.3)
    call = decode("message/send", msg(taskId="t-1", contextId="c-1", metadata={"a": 1}))
    assert isinstance(call, SendMessage)
    assert call.message == Message(
        message_id="m-1",
        role=Role.USER,
        parts=[TextPart(text="hi")],
        task_id="t-1",
        context_id="c-1",
        metadata={"a": 1},
    )
    assert call.metadata is None


def test_parts_tagged_with_type() -> None:
    parts = [
        {"type": "text", "text": "hi"},
        {"type": "file", "file": {"uri": "https://x/f", "mimeType": "image/png"}},
        {"type": "data", "data": {"k": 1}},
        {"kind": "text", "text": "mixed"},
    ]
    for params in ({"message": msg(parts=parts)}, msg(kind=..., parts=parts)):
        call = decode("message/send", params)
        assert call.message.parts == [
            TextPart(text="hi"),
            FilePart(uri="https://x/f", media_type="image/png"),
            DataPart(data={"k": 1}),
            TextPart(text="mixed"),
        ]


def test_message_kind_may_be_absent_and_unknown_fields_are_ignored() -> None:
    call = decode("message/send", {"message": msg(kind=..., extra=1), "tenant": "x"})
    assert call.message.message_id == "m-1"


def test_wrapped_non_object_data_is_unwrapped() -> None:
    p = {"kind": "data", "data": {"value": [1, 2]}, "metadata": {"data_part_compat": True, "x": 1}}
    call = decode("message/send", part(p))
    assert call.message.parts == [DataPart(data=[1, 2], metadata={"x": 1})]
    # without the flag an object with a "value" key is just that object
    p = {"kind": "data", "data": {"value": [1, 2]}}
    assert decode("message/send", part(p)).message.parts == [DataPart(data={"value": [1, 2]})]


def test_base64_variants() -> None:
    for text in ("aGk=", "aGk", "-_8=", " aGk= "):
        call = decode("message/send", part({"kind": "file", "file": {"bytes": text}}))
        assert isinstance(call.message.parts[0], FilePart)
    assert decode("message/send", part({"kind": "file", "file": {"bytes": "-_8"}})).message.parts[
        0
    ].raw == bytes([0xFB, 0xFF])


def test_send_configuration() -> None:
    call = decode("message/send", {"message": msg()})
    assert call.config.blocking is True and call.streaming is False
    call = decode("message/send", {"message": msg(), "configuration": {}})
    assert call.config.blocking is True  # absent means blocking (DIALECTS §i.31)
    call = decode(
        "message/stream",
        {
            "message": msg(),
            "configuration": {
                "acceptedOutputModes": ["text/plain"],
                "historyLength": 0,
                "blocking": False,
                "pushNotificationConfig": {
                    "url": "https://hook",
                    "token": "tok",
                    "authentication": {"schemes": ["Bearer"], "credentials": "c"},
                },
            },
            "metadata": {"m": True},
        },
    )
    assert call.streaming is True
    assert call.metadata == {"m": True}
    assert call.config.accepted_output_modes == ["text/plain"]
    assert call.config.history_length == 0
    assert call.config.blocking is False
    assert call.config.push_config is not None
    assert call.config.push_config.url == "https://hook"
    assert call.config.push_config.authentication is not None
    assert call.config.push_config.authentication.schemes == ["Bearer"]


def test_push_config_calls() -> None:
    assert decode("tasks/pushNotificationConfig/get", {"id": "t"}) == GetPushConfig(task_id="t")
    assert decode(
        "tasks/pushNotificationConfig/get", {"id": "t", "pushNotificationConfigId": "c"}
    ) == GetPushConfig(task_id="t", config_id="c")
    call = decode(
        "tasks/pushNotificationConfig/set",
        {"taskId": "t", "pushNotificationConfig": {"id": "c", "url": "https://hook"}},
    )
    assert call == SetPushConfig(
        task_id="t", config=PushConfig(url="https://hook", id="c", task_id="t")
    )


def test_lookups() -> None:
    assert decode("tasks/get", {"id": "t", "historyLength": 3, "metadata": {}}) == GetTask(
        id="t", history_length=3
    )
    # v0.1 sent TaskQueryParams on this shared method name; the length is kept.
    assert decode("tasks/resubscribe", {"id": "t", "historyLength": 2}) == SubscribeToTask(
        id="t", history_length=2
    )
    assert decode("agent/getAuthenticatedExtendedCard", None) == GetExtendedCard()
    assert decode("agent/getAuthenticatedExtendedCard", {}) == GetExtendedCard()


def test_list_tasks_is_not_in_this_dialect() -> None:
    with pytest.raises(errors.UnsupportedOperation):
        codec.encode_call(ListTasks())
    with pytest.raises(errors.UnsupportedOperation):
        codec.encode_result(
            ListTasks(), ListTasksResult(tasks=[], next_page_token="", page_size=0, total_size=0)
        )


# ---------------------------------------------------------------------- client side

SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))


def test_bad_results_are_invalid_agent_responses_naming_the_field() -> None:
    task = {
        "kind": "task",
        "id": "t",
        "contextId": "c",
        "status": {"state": "working"},
        "history": [msg(), msg(parts=[{"kind": "file", "file": {}}])],
    }
    with pytest.raises(errors.InvalidAgentResponse) as info:
        codec.decode_result(GetTask(id="t"), msgspec.json.encode(task))
    assert "result.history[1].parts[0].file" in info.value.message
    task["history"] = []
    task["status"] = {"state": "done"}
    with pytest.raises(errors.InvalidAgentResponse) as info:
        codec.decode_result(GetTask(id="t"), msgspec.json.encode(task))
    assert "result.status.state" in info.value.message
    for bad in ("yesterday", "9999-12-31T23:59:59-23:59", "2024-13-01T00:00:00Z"):
        task["status"] = {"state": "working", "timestamp": bad}
        with pytest.raises(errors.InvalidAgentResponse) as info:
            codec.decode_stream_item(msgspec.json.encode(task))
        assert "result.status.timestamp" in info.value.message
    with pytest.raises(errors.InvalidAgentResponse):
        codec.decode_result(SEND, b"not json")
    with pytest.raises(errors.InvalidAgentResponse):
        codec.decode_stream_item(b'{"kind":"status-update","taskId":"t","contextId":"c"}')


def test_results_without_kind_are_recognised() -> None:
    doc = {"id": "t", "contextId": "c", "status": {"state": "completed"}}
    assert isinstance(codec.decode_result(SEND, msgspec.json.encode(doc)), Task)
    doc = {"messageId": "m", "role": "agent", "parts": [{"type": "text", "text": "hi"}]}
    result = codec.decode_result(SEND, msgspec.json.encode(doc))
    assert result == Message(message_id="m", role=Role.AGENT, parts=[TextPart(text="hi")])
    event = {"taskId": "t", "contextId": "c", "status": {"state": "working"}, "final": False}
    assert codec.decode_stream_item(msgspec.json.encode(event)).task_id == "t"
