"""What the tutorial codec refuses (naming the field), and the leniencies it allows."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from interlingua.core import errors
from interlingua.core.calls import (
    CancelTask,
    GetTask,
    SendConfig,
    SendMessage,
    SubscribeToTask,
)
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.tutorial import TutorialCodec
from interlingua.core.model import (
    DataPart,
    FilePart,
    Message,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)

codec = TutorialCodec()
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))


def msg(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"role": "user", "parts": [{"type": "text", "text": "hi"}]}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def part(p: Any) -> dict[str, Any]:
    return {"message": msg(parts=[p])}


def decode(method: str, params: Any) -> Any:
    raw = None if params is None else msgspec.json.encode(params)
    return codec.decode_call(method, raw)


INVALID = [
    ("missing message", "message/send", {}, "`message`"),
    ("no params", "message/send", None, "`message`"),
    ("message not an object", "message/send", {"message": "hi"}, "params.message"),
    ("params an array", "message/send", [msg()], "object"),
    ("empty parts", "message/send", {"message": msg(parts=[])}, "params.message.parts"),
    ("missing parts", "message/send", {"message": msg(parts=...)}, "`parts`"),
    ("bad role", "message/send", {"message": msg(role="bot")}, "params.message.role"),
    ("message kind", "message/send", {"message": msg(kind="task")}, "params.message.kind"),
    (
        "messageId a number",
        "message/send",
        {"message": msg(messageId=5)},
        "params.message.messageId",
    ),
    # an untagged part holding one member is read as that member (fasta2a's parts);
    # one holding two cannot be told
    ("untagged part of two kinds", "message/send", part({"text": "hi", "data": {"a": 1}}),
     "params.message.parts[0]"),
    (
        "unknown part type",
        "message/send",
        part({"type": "image", "text": "x"}),
        "params.message.parts[0]",
    ),
    (
        "text not a string",
        "message/send",
        part({"type": "text", "text": 1}),
        "params.message.parts[0].text",
    ),
    (
        "file with both",
        "message/send",
        part({"type": "file", "file": {"bytes": "aGk=", "uri": "u"}}),
        "params.message.parts[0].file",
    ),
    (
        "bad base64",
        "message/send",
        part({"type": "file", "file": {"bytes": "%%"}}),
        "params.message.parts[0].file.bytes",
    ),
    (
        "data not an object",
        "message/send",
        part({"type": "data", "data": [1]}),
        "params.message.parts[0].data",
    ),
    (
        "negative history length",
        "message/send",
        {"message": msg(), "configuration": {"historyLength": -2}},
        "params.configuration.historyLength",
    ),
    ("subscribe without id", "task/subscribe", {}, "`id`"),
    ("subscribe with no params", "task/subscribe", None, "`id`"),
    ("subscribe id a number", "task/subscribe", {"id": 3}, "params.id"),
    (
        "subscribe bad history",
        "task/subscribe",
        {"id": "t", "historyLength": -1},
        "params.historyLength",
    ),
]


@pytest.mark.parametrize(
    ("method", "params", "needle"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_params_name_the_field(method: str, params: Any, needle: str) -> None:
    with pytest.raises(errors.InvalidParams) as info:
        decode(method, params)
    assert needle in info.value.message


@pytest.mark.parametrize(
    "method", ["tasks/get", "tasks/resubscribe", "tasks/send", "SendStreamingMessage"]
)
def test_other_methods_are_not_found(method: str) -> None:
    with pytest.raises(errors.MethodNotFound):
        decode(method, {"id": "t"})


# ------------------------------------------------------------------------ leniencies


def test_message_id_spellings() -> None:
    assert decode("message/send", {"message": msg(messageId="a")}).message.message_id == "a"
    assert decode("message/send", {"message": msg(message_id="b")}).message.message_id == "b"
    made_up = decode("message/send", {"message": msg(messageId="")}).message.message_id
    assert made_up and made_up != ""


def test_kind_and_mixed_tags() -> None:
    parts = [
        {"kind": "text", "text": "a"},
        {"type": "data", "data": {"k": 1}},
        {"type": "file", "file": {"uri": "https://x/f", "mimeType": "text/plain", "name": "f"}},
    ]
    call = decode("message/send", {"message": msg(parts=parts, taskId="t", contextId="c")})
    assert call.message.parts == [
        TextPart(text="a"),
        DataPart(data={"k": 1}),
        FilePart(uri="https://x/f", media_type="text/plain", filename="f"),
    ]
    assert (call.message.task_id, call.message.context_id) == ("t", "c")
    assert call.message.message_id


def test_all_type_tagged_parts_take_the_fast_path() -> None:
    parts = [
        {"type": "text", "text": "a", "metadata": {"m": 1}},
        {"type": "data", "data": {"value": 3}, "metadata": {"data_part_compat": True}},
        {"type": "file", "file": {"bytes": "aGk="}},
    ]
    call = decode("message/send", {"message": msg(parts=parts)})
    assert call.message.parts == [
        TextPart(text="a", metadata={"m": 1}),
        DataPart(data=3),
        FilePart(raw=b"hi"),
    ]


def test_bare_message_and_configuration() -> None:
    call = decode("message/send", msg())
    assert call.message.parts == [TextPart(text="hi")]
    call = decode(
        "message/send",
        {
            "message": msg(),
            "configuration": {"blocking": False, "pushNotificationConfig": {"url": "u"}},
        },
    )
    assert call.config == SendConfig(blocking=False, push_config=PushConfig(url="u"))


def test_subscribe() -> None:
    assert decode("task/subscribe", {"id": "t"}) == SubscribeToTask(id="t")
    assert decode("task/subscribe", {"id": "t", "historyLength": 2}) == SubscribeToTask(
        id="t", history_length=2
    )
    assert codec.encode_call(SubscribeToTask(id="t")) == ("task/subscribe", b'{"id":"t"}')


# ------------------------------------------------------------------------- results


def test_status_event_answers_with_final_and_echoes() -> None:
    status = TaskStatus(
        state=TaskState.INPUT_REQUIRED,
        message=Message(message_id="s", role=Role.AGENT, parts=[TextPart(text="more?")]),
    )
    doc = msgspec.json.decode(
        codec.encode_stream_item(StatusUpdate(task_id="t", context_id="c", status=status))
    )
    assert doc["kind"] == "status-update" and doc["final"] is True
    assert doc["status"]["message"]["message_id"] == "s"
    assert doc["status"]["message"]["parts"] == [{"kind": "text", "type": "text", "text": "more?"}]


def test_bad_results_name_the_field() -> None:
    task: dict[str, Any] = {"kind": "task", "id": "t", "status": {"state": "working"}}
    with pytest.raises(errors.InvalidAgentResponse, match="contextId"):
        codec.decode_result(SEND, msgspec.json.encode(task))
    message: dict[str, Any] = {
        "kind": "message",
        "role": "agent",
        "parts": [{"type": "text", "text": 1}],
    }
    with pytest.raises(errors.InvalidAgentResponse, match=r"result\.parts\[0\]\.text"):
        codec.decode_result(SEND, msgspec.json.encode(message))
    with pytest.raises(errors.InvalidAgentResponse):
        codec.decode_result(SEND, b"not json")


def test_result_without_any_id_gets_one() -> None:
    doc = {"role": "agent", "parts": [{"type": "text", "text": "pong"}]}
    message = codec.decode_result(SEND, msgspec.json.encode(doc))
    assert isinstance(message, Message) and message.message_id


def test_results_that_are_not_messages_use_v03_shapes() -> None:
    assert codec.encode_result(SEND, None) == b"null"
    wire = codec.encode_result(
        SEND, Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    )
    assert msgspec.json.decode(wire) == {
        "kind": "task",
        "id": "t",
        "contextId": "c",
        "status": {"state": "working"},
    }


# -------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (errors.InvalidRequest(), -32600),
        (errors.MethodNotFound(), -32601),
        (errors.InvalidParams(), -32602),
        (errors.TaskNotFound(), -32001),
        (errors.UnsupportedOperation(), -32004),
        (errors.VersionNotSupported(), -32600),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, errors.A2AError) else str(v),
)
def test_error_codes_are_v03(error: errors.A2AError, code: int) -> None:
    assert msgspec.json.decode(codec.encode_error(error)) == {
        "code": code,
        "message": error.message,
    }
    assert get_codec("0.3").code_of(codec.decode_error({"code": code, "message": "m"})) == code


def test_streaming_send_is_message_stream() -> None:
    method, params = codec.encode_call(SendMessage(message=SEND.message, streaming=True))
    assert method == "message/stream"
    assert codec.decode_call(method, params) == SendMessage(message=SEND.message, streaming=True)


def test_calls_outside_the_dialect() -> None:
    for call in (GetTask(id="t"), CancelTask(id="t")):
        with pytest.raises(errors.UnsupportedOperation):
            codec.encode_call(call)
        with pytest.raises(errors.UnsupportedOperation):
            codec.decode_result(call, b"{}")
