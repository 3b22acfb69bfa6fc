"""What the Solace Agent Mesh codec refuses (naming the field), and the leniencies it allows."""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pytest

from interlingua.core import errors
from interlingua.core.calls import (
    CancelTask,
    GetTask,
    ListTasks,
    ListTasksResult,
    SendMessage,
    SubscribeToTask,
)
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.sam import SAMCodec
from interlingua.core.model import (
    AgentCard,
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    PushConfig,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)

codec = SAMCodec()
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))


def msg(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"role": "user", "parts": [{"text": "hi"}], "message_id": "m-1"}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def part(p: Any) -> dict[str, Any]:
    return {"message": msg(parts=[p])}


def decode(method: str, params: Any) -> Any:
    raw = None if params is None else msgspec.json.encode(params)
    return codec.decode_call(method, raw)


INVALID = [
    # (case id, method, params, text the error message must contain)
    ("missing message", "tasks/send", {}, "`message`"),
    ("no params", "tasks/send-streaming", None, "`message`"),
    ("message not an object", "tasks/send", {"message": "hi"}, "params.message"),
    ("params an array", "tasks/send", [msg()], "object"),
    ("empty parts", "tasks/send", {"message": msg(parts=[])}, "params.message.parts"),
    ("missing parts", "tasks/send", {"message": msg(parts=...)}, "`parts`"),
    ("missing role", "tasks/send", {"message": msg(role=...)}, "`role`"),
    ("bad role", "tasks/send", {"message": msg(role="bot")}, "params.message.role"),
    ("message kind", "tasks/send", {"message": msg(kind="task")}, "params.message.kind"),
    ("message_id a number", "tasks/send", {"message": msg(message_id=5)}, "message_id"),
    ("part without member", "tasks/send", part({"metadata": {}}), "params.message.parts[0]"),
    (
        "part with two members",
        "tasks/send",
        part({"text": "a", "data": {}}),
        "params.message.parts[0] must have exactly one",
    ),
    (
        "part tagged for another member",
        "tasks/send",
        part({"kind": "data", "text": "a"}),
        "params.message.parts[0].kind",
    ),
    (
        "v0.1 tag for another member",
        "tasks/send",
        part({"type": "file", "text": "a"}),
        "params.message.parts[0].type",
    ),
    ("text not a string", "tasks/send", part({"text": 5}), "params.message.parts[0].text"),
    ("data not an object", "tasks/send", part({"data": [1]}), "params.message.parts[0].data"),
    (
        "file with neither",
        "tasks/send",
        part({"file": {"name": "a.txt"}}),
        "params.message.parts[0].file",
    ),
    (
        "bad base64",
        "tasks/send",
        part({"file": {"bytes": "###"}}),
        "params.message.parts[0].file.bytes",
    ),
    (
        "mime_type not a string",
        "tasks/send",
        part({"file": {"uri": "u", "mime_type": 1}}),
        "params.message.parts[0].file.mime_type",
    ),
    (
        "negative history length",
        "tasks/send",
        {"message": msg(), "configuration": {"history_length": -1}},
        "params.configuration.history_length",
    ),
    (
        "blocking not a bool",
        "tasks/send",
        {"message": msg(), "configuration": {"blocking": "yes"}},
        "params.configuration.blocking",
    ),
    ("cancel without id", "tasks/cancel", {}, "params.id"),
    ("cancel with no params", "tasks/cancel", None, "params.id"),
    ("cancel id a number", "tasks/cancel", {"id": 7}, "params.id"),
    ("cancel params an array", "tasks/cancel", ["t"], "Expected `object`"),
]


@pytest.mark.parametrize(
    ("method", "params", "needle"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_params_name_the_field(method: str, params: Any, needle: str) -> None:
    with pytest.raises(errors.InvalidParams) as info:
        decode(method, params)
    assert needle in info.value.message
    assert get_codec("sam").code_of(info.value) == -32602


@pytest.mark.parametrize("raw", [b"", b"{", b"nul", b'{"message":'])
def test_broken_json_is_invalid_params(raw: bytes) -> None:
    with pytest.raises(errors.InvalidParams):
        codec.decode_call("tasks/send", raw)


@pytest.mark.parametrize("method", ["tasks/get", "message/send", "tasks/sendSubscribe", ""])
def test_other_methods_are_not_found(method: str) -> None:
    with pytest.raises(errors.MethodNotFound):
        decode(method, {"id": "t"})


# ------------------------------------------------------------------------ leniencies


def test_camel_case_message_and_continuation() -> None:
    call = decode(
        "tasks/send",
        {
            "message": {
                "role": "user",
                "parts": [{"text": "more"}, {"file": {"bytes": "aGk=", "mimeType": "text/plain"}}],
                "messageId": "m-2",
                "taskId": "t-1",
                "contextId": "c-1",
            }
        },
    )
    assert isinstance(call, SendMessage)
    assert call.client_task_id is None  # SAM continues a task through message.task_id
    assert (call.message.message_id, call.message.task_id, call.message.context_id) == (
        "m-2",
        "t-1",
        "c-1",
    )
    assert call.message.parts[1] == FilePart(raw=b"hi", media_type="text/plain")


def test_snake_case_wins_over_camel_case() -> None:
    call = decode("tasks/send", {"message": msg(message_id="snake", messageId="camel")})
    assert call.message.message_id == "snake"


def test_missing_message_id_is_made_up() -> None:
    first = decode("tasks/send", {"message": msg(message_id=...)})
    second = decode("tasks/send", {"message": msg(message_id=...)})
    assert first.message.message_id and second.message.message_id
    assert first.message.message_id != second.message.message_id


def test_tagged_parts_are_read() -> None:
    parts = [
        {"kind": "text", "text": "a"},
        {"type": "data", "data": {"k": 1}},
        {"kind": "file", "type": "file", "file": {"uri": "u", "name": "n"}},
    ]
    call = decode("tasks/send", {"message": msg(parts=parts, kind="message")})
    assert call.message.parts == [
        TextPart(text="a"),
        DataPart(data={"k": 1}),
        FilePart(uri="u", filename="n"),
    ]


def test_bare_message_as_params() -> None:
    call = decode("tasks/send-streaming", msg())
    assert isinstance(call, SendMessage) and call.streaming
    assert call.message.parts == [TextPart(text="hi")]


def test_configuration_in_either_spelling() -> None:
    for config in (
        {"blocking": False, "history_length": 3, "accepted_output_modes": ["text/plain"]},
        {"blocking": False, "historyLength": 3, "acceptedOutputModes": ["text/plain"]},
    ):
        call = decode("tasks/send", {"message": msg(), "configuration": config})
        assert call.config.blocking is False
        assert call.config.history_length == 3
        assert call.config.accepted_output_modes == ["text/plain"]
    call = decode(
        "tasks/send",
        {"message": msg(), "configuration": {"pushNotificationConfig": {"url": "https://h"}}},
    )
    assert call.config.push_config == PushConfig(url="https://h")
    assert call.config.blocking is True  # absent means blocking


@pytest.mark.parametrize("params", [{"id": "t"}, {"task_id": "t"}, {"taskId": "t"}])
def test_cancel_id_spellings(params: dict[str, str]) -> None:
    assert decode("tasks/cancel", params) == CancelTask(id="t")


def test_cancel_writes_id() -> None:
    method, params = codec.encode_call(CancelTask(id="t", metadata={"why": "done"}))
    assert method == "tasks/cancel"
    assert msgspec.json.decode(params) == {"id": "t", "metadata": {"why": "done"}}


# ------------------------------------------------------------------------- results


def _task_doc(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "kind": "task",
        "id": "t",
        "context_id": "c",
        "status": {"state": "working", "timestamp": "2024-03-04T12:00:00Z"},
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


BAD_RESULTS = [
    ("task without context", _task_doc(context_id=...), "result.context_id"),
    ("bad state", _task_doc(status={"state": "paused"}), "result.status.state"),
    ("bad timestamp", _task_doc(status={"state": "working", "timestamp": "noon"}), "timestamp"),
    (
        "artifact without id or name",
        _task_doc(artifacts=[{"uri": "u"}]),
        "result.artifacts[0].id",
    ),
    (
        "artifact with bad inline data",
        _task_doc(artifacts=[{"id": "a", "inline_data": {"data": "%%"}}]),
        "result.artifacts[0].inline_data.data",
    ),
    (
        "status message part without member",
        _task_doc(status={"state": "working", "message": {"role": "agent", "parts": [{}]}}),
        "result.status.message.parts[0]",
    ),
    (
        "status update without task",
        {"kind": "status-update", "context_id": "c", "status": {"state": "working"}},
        "result.task_id",
    ),
    ("not an object", [1, 2], "result"),
]


@pytest.mark.parametrize(
    ("doc", "needle"), [c[1:] for c in BAD_RESULTS], ids=[c[0] for c in BAD_RESULTS]
)
def test_bad_results_name_the_field(doc: Any, needle: str) -> None:
    with pytest.raises(errors.InvalidAgentResponse) as info:
        codec.decode_result(SEND, msgspec.json.encode(doc))
    assert needle in info.value.message


def test_result_without_kind() -> None:
    doc = _task_doc()
    del doc["kind"]
    task = codec.decode_result(SEND, msgspec.json.encode(doc))
    assert isinstance(task, Task) and task.status.state is TaskState.WORKING


def test_status_event_answers_send_as_a_task() -> None:
    doc = {
        "kind": "status-update",
        "task_id": "t",
        "context_id": "c",
        "status": {"state": "completed"},
        "final": True,
    }
    task = codec.decode_result(SEND, msgspec.json.encode(doc))
    assert task == Task(id="t", context_id="c", status=TaskStatus(state=TaskState.COMPLETED))


def test_artifact_update_does_not_answer_send() -> None:
    doc = {"kind": "artifact-update", "task_id": "t", "context_id": "c", "artifact": {"id": "a"}}
    with pytest.raises(errors.InvalidAgentResponse, match="artifact update"):
        codec.decode_result(SEND, msgspec.json.encode(doc))


def test_flat_artifact_forms() -> None:
    raw = b"\x00\x01binary"
    data = base64.b64encode(raw).decode()
    cases = [
        (
            {"id": "a", "name": "n.bin", "inline_data": {"data": data}},
            [FilePart(raw=raw, filename="n.bin")],
        ),
        (
            {"artifactId": "a", "inlineData": {"data": data}, "mimeType": "x/y"},
            [FilePart(raw=raw, media_type="x/y")],
        ),
        ({"artifact_id": "a", "uri": "u"}, [FilePart(uri="u")]),
        ({"id": "a", "name": "empty"}, []),
        # parts win over the flat members
        ({"id": "a", "uri": "ignored", "parts": [{"text": "t"}]}, [TextPart(text="t")]),
    ]
    for artifact, parts in cases:
        doc = {"kind": "artifact-update", "task_id": "t", "context_id": "c", "artifact": artifact}
        update = codec.decode_stream_item(msgspec.json.encode(doc))
        assert isinstance(update, ArtifactUpdate)
        assert update.artifact.artifact_id == "a"
        assert update.artifact.parts == parts
    # no id: the name identifies it (seed 002 makes ``name`` the required member)
    doc = {
        "kind": "artifact-update",
        "task_id": "t",
        "context_id": "c",
        "artifact": {"name": "r.json", "uri": "u"},
    }
    update = codec.decode_stream_item(msgspec.json.encode(doc))
    assert isinstance(update, ArtifactUpdate) and update.artifact.artifact_id == "r.json"


def test_single_file_artifacts_also_go_out_flat() -> None:
    inline = Artifact(
        artifact_id="a", name="n", parts=[FilePart(raw=b"hi", media_type="text/plain")]
    )
    by_uri = Artifact(artifact_id="b", parts=[FilePart(uri="artifact://x")])
    two = Artifact(artifact_id="c", parts=[FilePart(uri="u"), TextPart(text="t")])
    task = Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.COMPLETED),
        artifacts=[inline, by_uri, two],
    )
    a, b, c = msgspec.json.decode(codec.encode_result(SEND, task))["artifacts"]
    assert a == {
        "id": "a",
        "name": "n",
        "parts": [{"file": {"bytes": "aGk=", "mime_type": "text/plain"}}],
        "mime_type": "text/plain",
        "inline_data": {"data": "aGk="},
    }
    assert b == {"id": "b", "parts": [{"file": {"uri": "artifact://x"}}], "uri": "artifact://x"}
    assert set(c) == {"id", "parts"}


def test_status_without_timestamp_goes_out_without_one() -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.INPUT_REQUIRED))
    doc = msgspec.json.decode(codec.encode_result(SEND, task))
    assert doc["status"] == {"state": "input-required"}
    assert doc["kind"] == "task"


def test_file_with_neither_goes_out_as_empty_bytes() -> None:
    message = Message(message_id="m", role=Role.AGENT, parts=[FilePart(filename="f")])
    doc = msgspec.json.decode(codec.encode_result(SEND, message))
    assert doc["parts"] == [{"file": {"bytes": "", "name": "f"}}]


def test_non_object_data_is_wrapped() -> None:
    message = Message(message_id="m", role=Role.AGENT, parts=[DataPart(data=[1, 2])])
    wire = codec.encode_result(SEND, message)
    assert msgspec.json.decode(wire)["parts"] == [
        {"data": {"value": [1, 2]}, "metadata": {"data_part_compat": True}}
    ]
    assert codec.decode_result(SEND, wire) == message


# -------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (errors.ParseError(), -32700),
        (errors.InvalidRequest(), -32600),
        (errors.MethodNotFound(), -32601),
        (errors.InvalidParams(), -32602),
        (errors.InternalError(), -32603),
        (errors.TaskNotFound(), -32001),
        (errors.TaskNotCancelable(), -32002),
        (errors.UnsupportedOperation(), -32004),
        (errors.InvalidTaskState(), -32004),
        (errors.StreamingNotSupported(), -32004),
        (errors.InvalidAgentResponse(), -32006),
        # v1.0's -32008/-32009 mean something else to v0.x peers
        (errors.VersionNotSupported(), -32600),
        (errors.ExtensionSupportRequired(), -32600),
        (errors.AuthenticationRequired(), -32600),
        (errors.RateLimitExceeded(), -32603),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, errors.A2AError) else str(v),
)
def test_error_codes(error: errors.A2AError, code: int) -> None:
    doc = msgspec.json.decode(codec.encode_error(error))
    assert doc == {"code": code, "message": error.message}


def test_error_data_and_unencodable_data() -> None:
    doc = msgspec.json.decode(codec.encode_error(errors.InternalError("x", data={"details": "d"})))
    assert doc == {"code": -32603, "message": "x", "data": {"details": "d"}}
    doc = msgspec.json.decode(codec.encode_error(errors.InternalError("boom", data=object())))
    assert doc == {"code": -32603, "message": "boom"}


def test_decode_error_members() -> None:
    assert type(codec.decode_error({"code": -32001, "message": "gone"})) is errors.TaskNotFound
    remote = codec.decode_error({"code": -32099, "message": "upstream"})
    assert isinstance(remote, errors.RemoteError) and remote.remote_code == -32099
    assert isinstance(codec.decode_error("oops"), errors.InvalidAgentResponse)
    assert isinstance(codec.decode_error({"code": True}), errors.InvalidAgentResponse)


# ----------------------------------------------------------- what SAM cannot carry


@pytest.mark.parametrize("call", [GetTask(id="t"), SubscribeToTask(id="t"), ListTasks()])
def test_calls_outside_the_dialect(call: Any) -> None:
    with pytest.raises(errors.UnsupportedOperation):
        codec.encode_call(call)
    with pytest.raises(errors.UnsupportedOperation):
        codec.decode_result(call, b"{}")


@pytest.mark.parametrize(
    "result",
    [
        PushConfig(url="u"),
        [PushConfig(url="u")],
        ListTasksResult(tasks=[], next_page_token="", page_size=0, total_size=0),
        AgentCard(name="n", description="d", version="1", interfaces=[]),
    ],
    ids=["push", "push list", "task page", "card"],
)
def test_results_outside_the_dialect(result: Any) -> None:
    with pytest.raises(errors.UnsupportedOperation):
        codec.encode_result(SEND, result)
    assert codec.encode_result(SEND, None) == b"null"
