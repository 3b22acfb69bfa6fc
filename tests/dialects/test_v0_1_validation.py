"""What the v0.1 codec refuses (InvalidParams naming the field) and what it lets through."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest

from interlingua.core import errors
from interlingua.core.calls import (
    CancelTask,
    DeletePushConfig,
    GetExtendedCard,
    GetPushConfig,
    GetTask,
    ListPushConfigs,
    ListTasks,
    ListTasksResult,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.v0_1 import V01Codec
from interlingua.core.model import (
    ArtifactUpdate,
    AuthInfo,
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
from tests.reference import extract

codec = V01Codec()


def msg(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"role": "user", "parts": [{"type": "text", "text": "hi"}]}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def send(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "task-1", "message": msg()}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def part(p: dict[str, Any]) -> dict[str, Any]:
    return send(message=msg(parts=[p]))


def decode(method: str, params: Any) -> Any:
    raw = None if params is None else msgspec.json.encode(params)
    return codec.decode_call(method, raw)


INVALID = [
    # (case id, method, params, text the error message must contain)
    ("missing id", "tasks/send", send(id=...), "`id`"),
    ("empty id", "tasks/send", send(id=""), "params.id"),
    ("id not a string", "tasks/send", send(id=5), "params.id"),
    ("missing message", "tasks/send", send(message=...), "`message`"),
    ("no params", "tasks/sendSubscribe", None, "`id`"),
    ("params an array", "tasks/send", [send()], "object"),
    ("message not an object", "tasks/send", send(message="hi"), "params.message"),
    ("empty parts", "tasks/send", send(message=msg(parts=[])), "params.message.parts"),
    ("missing parts", "tasks/send", send(message=msg(parts=...)), "`parts`"),
    ("missing role", "tasks/send", send(message=msg(role=...)), "`role`"),
    ("bad role", "tasks/send", send(message=msg(role="bot")), "params.message.role"),
    ("role system", "tasks/sendSubscribe", send(message=msg(role="system")), "params.message.role"),
    (
        "unknown part type",
        "tasks/send",
        part({"type": "video", "url": "x"}),
        "params.message.parts[0].type",
    ),
    # without a type, a part holding one member is read as that member (fasta2a's parts);
    # one holding two cannot be told
    ("part without type, two members", "tasks/send", part({"text": "hi", "data": {"a": 1}}),
     "params.message.parts[0]"),
    ("text part without text", "tasks/send", part({"type": "text"}), "`text`"),
    (
        "file with both bytes and uri",
        "tasks/send",
        part({"type": "file", "file": {"bytes": "aGk=", "uri": "https://x/y"}}),
        "params.message.parts[0].file",
    ),
    (
        "invalid base64",
        "tasks/send",
        part({"type": "file", "file": {"bytes": "not base64!"}}),
        "params.message.parts[0].file.bytes",
    ),
    ("file part without file", "tasks/send", part({"type": "file"}), "`file`"),
    (
        "data a string",
        "tasks/send",
        part({"type": "data", "data": "text"}),
        "params.message.parts[0].data",
    ),
    (
        "data a number",
        "tasks/send",
        part({"type": "data", "data": 3}),
        "params.message.parts[0].data",
    ),
    (
        "second part bad",
        "tasks/sendSubscribe",
        send(
            message=msg(parts=[{"type": "text", "text": "a"}, {"type": "file", "file": {"uri": 1}}])
        ),
        "params.message.parts[1].file.uri",
    ),
    (
        "negative historyLength on send",
        "tasks/send",
        send(historyLength=-1),
        "params.historyLength",
    ),
    ("historyLength a string", "tasks/send", send(historyLength="3"), "params.historyLength"),
    ("historyLength a float", "tasks/send", send(historyLength=1.5), "params.historyLength"),
    ("sessionId not a string", "tasks/send", send(sessionId=7), "params.sessionId"),
    ("metadata not an object", "tasks/send", send(metadata=[1]), "params.metadata"),
    (
        "message metadata not an object",
        "tasks/send",
        send(message=msg(metadata="x")),
        "params.message.metadata",
    ),
    (
        "pushNotification without url",
        "tasks/send",
        send(pushNotification={"token": "t"}),
        "`url`",
    ),
    (
        "pushNotification auth without schemes",
        "tasks/send",
        send(pushNotification={"url": "u", "authentication": {"credentials": "c"}}),
        "`schemes`",
    ),
    (
        "negative historyLength on get",
        "tasks/get",
        {"id": "t", "historyLength": -5},
        "params.historyLength",
    ),
    ("get without id", "tasks/get", {}, "`id`"),
    ("get with empty id", "tasks/get", {"id": ""}, "params.id"),
    ("cancel without id", "tasks/cancel", None, "`id`"),
    ("cancel id not a string", "tasks/cancel", {"id": 7}, "params.id"),
    ("resubscribe without id", "tasks/resubscribe", {"taskId": "t"}, "`id`"),
    (
        "negative historyLength on resubscribe",
        "tasks/resubscribe",
        {"id": "t", "historyLength": -1},
        "params.historyLength",
    ),
    (
        "push set without config",
        "tasks/pushNotification/set",
        {"id": "t"},
        "`pushNotificationConfig`",
    ),
    (
        "push set without url",
        "tasks/pushNotification/set",
        {"id": "t", "pushNotificationConfig": {"token": "x"}},
        "`url`",
    ),
    (
        "push set auth without schemes",
        "tasks/pushNotification/set",
        {"id": "t", "pushNotificationConfig": {"url": "u", "authentication": {}}},
        "`schemes`",
    ),
    (
        "push set with empty id",
        "tasks/pushNotification/set",
        {"id": "", "pushNotificationConfig": {"url": "u"}},
        "params.id",
    ),
    (
        "push set, the v0.2 spelling",
        "tasks/pushNotification/set",
        {"taskId": "t", "pushNotificationConfig": {"url": "u"}},
        "`id`",
    ),
    ("push get without id", "tasks/pushNotification/get", {}, "`id`"),
]


@pytest.mark.parametrize(
    ("method", "params", "field"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_params_name_the_field(method: str, params: Any, field: str) -> None:
    with pytest.raises(errors.InvalidParams) as info:
        decode(method, params)
    assert get_codec("0.1").code_of(info.value) == -32602
    assert field in info.value.message
    assert method in info.value.message


def test_malformed_json_params() -> None:
    with pytest.raises(errors.InvalidParams):
        codec.decode_call("tasks/send", b'{"id": "t", "message": {')


def test_deep_nesting_is_invalid_params() -> None:
    deep = b'{"id":"t","metadata":' + b"[" * 5000 + b"]" * 5000 + b"}"
    for method in ("tasks/cancel", "tasks/send"):
        with pytest.raises(errors.InvalidParams):
            codec.decode_call(method, deep)


def test_clearing_a_push_config_is_not_supported() -> None:
    # spec §6.10: null "might indicate clearing (server-dependent)"; we keep configs
    with pytest.raises(errors.UnsupportedOperation) as info:
        decode("tasks/pushNotification/set", {"id": "t", "pushNotificationConfig": None})
    assert "pushNotificationConfig" in info.value.message
    assert get_codec("0.1").code_of(info.value) == -32004


@pytest.mark.parametrize(
    "method",
    [
        "message/send",
        "message/stream",
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/list",
        "agent/getAuthenticatedExtendedCard",
        "tasks/list",
        "SendMessage",
        "GetTask",
        "tasks/send-streaming",
        "",
    ],
)
def test_methods_of_other_dialects_are_not_found(method: str) -> None:
    with pytest.raises(errors.MethodNotFound) as info:
        codec.decode_call(method, b"{}")
    assert get_codec("0.1").code_of(info.value) == -32601


def test_methods() -> None:
    assert codec.name == "0.1"
    assert codec.methods == {
        "tasks/send",
        "tasks/sendSubscribe",
        "tasks/get",
        "tasks/cancel",
        "tasks/resubscribe",
        "tasks/pushNotification/set",
        "tasks/pushNotification/get",
    }
    assert codec.streaming_methods == {"tasks/sendSubscribe", "tasks/resubscribe"}


# ------------------------------------------------------------------------- accepted


def test_send_maps_to_the_canonical_call() -> None:
    call = decode(
        "tasks/sendSubscribe",
        send(
            id="task-7",
            sessionId="s-1",
            message=msg(metadata={"m": 1}),
            pushNotification={
                "url": "https://hook",
                "token": "tok",
                "authentication": {"schemes": ["Bearer"], "credentials": "c"},
            },
            historyLength=0,
            metadata={"r": True},
        ),
    )
    assert isinstance(call, SendMessage)
    assert call.client_task_id == "task-7"
    # the task id is not put on the message: the engine creates unknown v0.1 tasks
    assert call.message.task_id is None
    assert call.message.context_id == "s-1"
    assert call.message.metadata == {"m": 1}
    assert re.fullmatch(r"[0-9a-f-]{36}", call.message.message_id)
    assert call.metadata == {"r": True}
    assert call.streaming is True
    assert call.config.blocking is True
    assert call.config.history_length == 0
    assert call.config.push_config == PushConfig(
        url="https://hook",
        token="tok",
        authentication=AuthInfo(schemes=["Bearer"], credentials="c"),
    )


def test_each_send_gets_a_new_message_id() -> None:
    a, b = (decode("tasks/send", send()) for _ in range(2))
    assert a.message.message_id != b.message.message_id


def test_a_message_id_a_newer_peer_sends_is_kept() -> None:
    call = decode("tasks/send", send(message=msg(messageId="m-42", kind="message")))
    assert call.message.message_id == "m-42"
    assert codec.encode_call(call)[1].find(b"m-42") == -1  # never written in v0.1


def test_parts_v01_allows() -> None:
    parts = [
        {"type": "text", "text": "hi", "metadata": {"lang": "en"}},
        {"type": "file", "file": {"name": "a.png", "mimeType": "image/png", "bytes": "aGk="}},
        {"type": "file", "file": {"uri": "https://x/f"}},
        {"type": "file", "file": {"name": "ref-only.txt"}},  # both absent: a bare reference
        {"type": "file", "file": {}},
        {"type": "data", "data": {"k": 1}},
        {"type": "data", "data": [1, {"a": 2}]},  # the spec's prose allows arrays
        {"kind": "text", "text": "v0.2-style tag"},
    ]
    call = decode("tasks/send", send(message=msg(parts=parts)))
    assert call.message.parts == [
        TextPart(text="hi", metadata={"lang": "en"}),
        FilePart(raw=b"hi", media_type="image/png", filename="a.png"),
        FilePart(uri="https://x/f"),
        FilePart(filename="ref-only.txt"),
        FilePart(),
        DataPart(data={"k": 1}),
        DataPart(data=[1, {"a": 2}]),
        TextPart(text="v0.2-style tag"),
    ]


def test_wrapped_non_object_data_is_unwrapped() -> None:
    p = {"type": "data", "data": {"value": "x"}, "metadata": {"data_part_compat": True, "y": 1}}
    assert decode("tasks/send", part(p)).message.parts == [DataPart(data="x", metadata={"y": 1})]
    # without the flag an object with a "value" key is just that object
    p = {"type": "data", "data": {"value": "x"}}
    assert decode("tasks/send", part(p)).message.parts == [DataPart(data={"value": "x"})]
    # the flag is reserved: dropped wherever it appears, so what is read writes back the same
    p = {"type": "data", "data": [], "metadata": {"data_part_compat": True}}
    assert decode("tasks/send", part(p)).message.parts == [DataPart(data=[])]
    p = {"type": "data", "data": {"a": 1}, "metadata": {"data_part_compat": "x", "k": 2}}
    assert decode("tasks/send", part(p)).message.parts == [
        DataPart(data={"a": 1}, metadata={"k": 2})
    ]


def test_unknown_members_are_ignored() -> None:
    call = decode("tasks/send", send(extra=1, configuration={"blocking": False}))
    assert isinstance(call, SendMessage)
    assert call.config.blocking is True


def test_lookups() -> None:
    assert decode("tasks/get", {"id": "t", "historyLength": 3, "metadata": {}}) == GetTask(
        id="t", history_length=3
    )
    assert decode("tasks/cancel", {"id": "t", "metadata": {"a": 1}}) == CancelTask(
        id="t", metadata={"a": 1}
    )
    assert decode("tasks/resubscribe", {"id": "t", "historyLength": 2}) == SubscribeToTask(
        id="t", history_length=2
    )
    assert decode("tasks/pushNotification/get", {"id": "t", "metadata": {}}) == GetPushConfig(
        task_id="t"
    )
    assert decode(
        "tasks/pushNotification/set",
        {"id": "t", "pushNotificationConfig": {"url": "https://h", "token": "k"}},
    ) == SetPushConfig(task_id="t", config=PushConfig(url="https://h", token="k", task_id="t"))


# ---------------------------------------------------------------------- server side


def test_results_that_cannot_answer_a_call_are_internal_errors() -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    with pytest.raises(errors.InternalError):
        codec.encode_result(GetPushConfig(task_id="t"), task)
    with pytest.raises(errors.InternalError):
        codec.encode_result(
            ListTasks(), ListTasksResult(tasks=[], next_page_token="", page_size=0, total_size=0)
        )
    with pytest.raises(errors.InternalError):
        codec.encode_result(GetTask(id="t"), None)


# ---------------------------------------------------------------------- client side


@pytest.mark.parametrize(
    "call",
    [
        ListTasks(),
        ListPushConfigs(task_id="t"),
        DeletePushConfig(task_id="t", config_id="c"),
        GetExtendedCard(),
    ],
    ids=lambda c: type(c).__name__,
)
def test_calls_v01_lacks(call: Any) -> None:
    with pytest.raises(errors.UnsupportedOperation):
        codec.encode_call(call)
    with pytest.raises(errors.UnsupportedOperation):
        codec.decode_result(call, b"{}")


def test_bad_results_are_invalid_agent_responses_naming_the_field() -> None:
    task: dict[str, Any] = {
        "id": "t",
        "status": {"state": "working"},
        "history": [msg(), msg(parts=[{"type": "file", "file": {"bytes": "aGk=", "uri": "u"}}])],
    }
    with pytest.raises(errors.InvalidAgentResponse) as info:
        codec.decode_result(GetTask(id="t"), msgspec.json.encode(task))
    assert "result.history[1].parts[0].file" in info.value.message
    task["history"] = []
    for state in ("done", "rejected", "auth-required"):  # not v0.1 states
        task["status"] = {"state": state}
        with pytest.raises(errors.InvalidAgentResponse) as info:
            codec.decode_result(GetTask(id="t"), msgspec.json.encode(task))
        assert "result.status.state" in info.value.message
    for bad in ("yesterday", "9999-12-31T23:59:59-23:59", "2024-13-01T00:00:00Z"):
        task["status"] = {"state": "working", "timestamp": bad}
        with pytest.raises(errors.InvalidAgentResponse) as info:
            codec.decode_result(GetTask(id="t"), msgspec.json.encode(task))
        assert "result.status.timestamp" in info.value.message
    task["status"] = {"state": "working"}
    task["artifacts"] = [{"parts": [], "index": -1}]
    with pytest.raises(errors.InvalidAgentResponse) as info:
        codec.decode_result(GetTask(id="t"), msgspec.json.encode(task))
    assert "result.artifacts[0].index" in info.value.message
    with pytest.raises(errors.InvalidAgentResponse):
        codec.decode_result(GetTask(id="t"), b"not json")
    with pytest.raises(errors.InvalidAgentResponse):
        codec.decode_result(GetTask(id="t"), b'{"id": 1, broken')


def test_stream_events_are_told_apart_by_their_members() -> None:
    status = {"id": "t", "status": {"state": "working"}}
    item = codec.decode_stream_item(msgspec.json.encode(status))
    assert item == StatusUpdate(
        task_id="t", context_id="", status=TaskStatus(state=TaskState.WORKING)
    )
    artifact = {"id": "t", "artifact": {"parts": [{"type": "text", "text": "x"}], "append": True}}
    item = codec.decode_stream_item(msgspec.json.encode(artifact))
    assert isinstance(item, ArtifactUpdate)
    assert item.artifact.artifact_id == "artifact-0" and item.artifact.index == 0
    assert item.append is True and item.last_chunk is False
    for bad in ({"id": "t"}, {**status, **artifact}, {"status": {"state": "working"}}):
        with pytest.raises(errors.InvalidAgentResponse):
            codec.decode_stream_item(msgspec.json.encode(bad))


def test_results_with_kind_tagged_parts_are_read() -> None:
    doc = {
        "id": "t",
        "status": {
            "state": "completed",
            "message": {"role": "agent", "parts": [{"kind": "text", "text": "hi"}]},
        },
    }
    task = codec.decode_result(GetTask(id="t"), msgspec.json.encode(doc))
    assert isinstance(task, Task)
    assert task.status.message is not None
    assert task.status.message.parts == [TextPart(text="hi")]


# -------------------------------------------------------------------------- errors


def _spec_error_codes() -> dict[str, int]:
    """Error name -> code, from the tables of seed 004 §8 (the v0.1.0 spec), as
    ``tests/reference/extracted/`` keeps them."""
    return {name: int(code) for name, code in extract.load("seed-004-error-codes.json").items()}


# Canonical class -> its name in the v0.1 spec's tables.
V01_NAMES: dict[type[errors.A2AError], str] = {
    errors.ParseError: "Parse error",
    errors.InvalidRequest: "Invalid Request",
    errors.MethodNotFound: "Method not found",
    errors.InvalidParams: "Invalid params",
    errors.InternalError: "Internal error",
    errors.TaskNotFound: "TaskNotFoundError",
    errors.TaskNotCancelable: "TaskNotCancelableError",
    errors.PushNotSupported: "PushNotificationNotSupportedError",
    errors.UnsupportedOperation: "OperationNotSupportedError",
    errors.ContentTypeNotSupported: "ContentTypeNotSupportedError",
    errors.StreamingNotSupported: "StreamingNotSupportedError",
    errors.AuthenticationRequired: "AuthenticationRequiredError",
    errors.AuthorizationFailed: "AuthorizationFailedError",
    errors.InvalidTaskState: "InvalidTaskStateError",
    errors.RateLimitExceeded: "RateLimitExceededError",
    errors.ResourceUnavailable: "ResourceUnavailableError",
}
# Classes v0.1 has no code for, and the generic code each must fall back to
# (never one of -32006...-32011, which mean other things in v0.1).
NO_V01_CODE: dict[type[errors.A2AError], int] = {
    errors.A2AError: -32603,
    errors.JSONRPCError: -32603,
    errors.InvalidAgentResponse: -32603,
    errors.ExtendedCardNotConfigured: -32004,
    errors.ExtendedCardNotSupported: -32004,
    errors.ExtensionSupportRequired: -32600,
    errors.VersionNotSupported: -32600,
    # A2A 1.1's -32010 is v0.1's rate limit: never written as that
    errors.TaskGenerationMismatch: -32600,
}


def test_spec_error_table_was_read() -> None:
    codes = _spec_error_codes()
    assert len(codes) == 16
    assert set(codes) == set(V01_NAMES.values())


def test_every_error_class_is_checked() -> None:
    classes = {
        cls
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.A2AError)
    }
    # StoreDown is ResourceUnavailable on every wire, with its Retry-After
    assert classes - {errors.RemoteError, errors.StoreDown} == set(V01_NAMES) | set(NO_V01_CODE)
    v01 = get_codec("0.1")
    assert v01.code_of(errors.StoreDown()) == v01.code_of(errors.ResourceUnavailable())


@pytest.mark.parametrize("cls", list(V01_NAMES), ids=lambda c: c.__name__)
def test_error_codes_of_the_v01_spec(cls: type[errors.A2AError]) -> None:
    code = _spec_error_codes()[V01_NAMES[cls]]
    err = cls("m", data={"k": 1})
    assert get_codec("0.1").code_of(err) == code
    assert msgspec.json.decode(codec.encode_error(err)) == {
        "code": code,
        "message": "m",
        "data": {"k": 1},
    }
    back = codec.decode_error({"code": code, "message": "m", "data": [1]})
    assert type(back) is cls
    assert (back.message, back.data) == ("m", [1])


@pytest.mark.parametrize("cls", list(NO_V01_CODE), ids=lambda c: c.__name__)
def test_errors_without_a_v01_code(cls: type[errors.A2AError]) -> None:
    assert get_codec("0.1").code_of(cls()) == NO_V01_CODE[cls]


def test_unknown_error_codes_stay_remote() -> None:
    err = codec.decode_error({"code": -32042, "message": "odd"})
    assert isinstance(err, errors.RemoteError)
    assert get_codec("0.1").code_of(err) == -32042
    assert msgspec.json.decode(codec.encode_error(err)) == {"code": -32042, "message": "odd"}
    assert isinstance(codec.decode_error("nonsense"), errors.InvalidAgentResponse)
    assert isinstance(codec.decode_error({"message": "no code"}), errors.InvalidAgentResponse)
    assert isinstance(
        codec.decode_error({"code": True, "message": "x"}), errors.InvalidAgentResponse
    )
    # a message that is not a string falls back to the class's own
    assert codec.decode_error({"code": -32001, "message": 5}).message == "Task not found"


def test_message_answer_keeps_its_own_task_id() -> None:
    reply = Message(message_id="r", role=Role.AGENT, parts=[TextPart(text="x")], task_id="t-own")
    doc = msgspec.json.decode(
        codec.encode_result(SendMessage(message=reply, client_task_id="t-call"), reply)
    )
    assert doc["id"] == "t-own"
